//! A cell's text of at most [`Short::CAPACITY`] bytes, held in place and copied without a
//! call to `memcpy`. A sweep copies a number's text for every cell whose value changed and a
//! kept text for every name and type: at these lengths the call costs more than the copy.

/// Text of at most [`Short::CAPACITY`] bytes.
#[derive(Clone, Copy, Default)]
pub(super) struct Short {
    len: u8,
    bytes: [u8; Short::CAPACITY],
}

impl Short {
    /// Room for every number a row writes: the shortest form of an f64 has at most 17 digits,
    /// a sign, a point and an exponent of `e`, a sign and 3 digits (24 bytes); an integer
    /// below 2^53 has at most 16 digits and a sign.
    pub(super) const CAPACITY: usize = 32;

    /// Holds `text`; when it is longer than [`Short::CAPACITY`], holds nothing and says so.
    #[inline(always)]
    pub(super) fn set(&mut self, text: &[u8]) -> bool {
        let n = text.len();
        let b = &mut self.bytes;
        // Two copies of one fixed length that overlap cover every length from it to twice it.
        match n {
            0 => {}
            1..=3 => (b[0], b[n / 2], b[n - 1]) = (text[0], text[n / 2], text[n - 1]),
            4..=7 => {
                b[..4].copy_from_slice(&text[..4]);
                b[n - 4..n].copy_from_slice(&text[n - 4..]);
            }
            8..=15 => {
                b[..8].copy_from_slice(&text[..8]);
                b[n - 8..n].copy_from_slice(&text[n - 8..]);
            }
            16..=Short::CAPACITY => {
                b[..16].copy_from_slice(&text[..16]);
                b[n - 16..n].copy_from_slice(&text[n - 16..]);
            }
            _ => {
                self.len = 0;
                return false;
            }
        }
        self.len = n as u8;
        true
    }

    /// Appends the comma that ends a CSV cell; when there is no room, holds nothing and says so.
    #[inline(always)]
    pub(super) fn push_comma(&mut self) -> bool {
        let n = self.len as usize;
        if n >= Short::CAPACITY {
            self.len = 0;
            return false;
        }
        self.bytes[n] = b',';
        self.len += 1;
        true
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Puts the text at `at` in `line`, which has room for [`Short::CAPACITY`] bytes there:
    /// every byte held at once, whatever the length; returns where the text ends.
    #[inline(always)]
    pub(super) fn put(&self, line: &mut [u8], at: usize) -> usize {
        line[at..at + Short::CAPACITY].copy_from_slice(&self.bytes);
        at + self.len as usize
    }

    /// Appends the text to `out`: every byte held at once, then the tail cut off.
    #[inline(always)]
    pub(super) fn push_to(&self, out: &mut Vec<u8>) {
        let end = out.len() + self.len as usize;
        out.extend_from_slice(&self.bytes);
        out.truncate(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_up_to_the_capacity_is_held_exactly_and_no_longer() {
        let source: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').collect();
        for n in 0..=Short::CAPACITY {
            let text = &source[..n];
            // Over a longer text held before: nothing of it is left.
            let mut short = Short::default();
            assert!(short.set(&source[10..10 + Short::CAPACITY]));
            assert!(short.set(text));
            assert_eq!(short.as_bytes(), text, "{n}");
            assert_eq!(short.is_empty(), n == 0);
            let mut out = b"ab,".to_vec();
            short.push_to(&mut out);
            assert_eq!(out, [b"ab,", text].concat(), "{n}");
        }
        let mut short = Short::default();
        assert!(!short.set(&source[..Short::CAPACITY + 1]));
        assert!(short.is_empty());
    }

    #[test]
    fn a_comma_is_held_after_a_text_with_room_for_it() {
        let text = [b'x'; Short::CAPACITY];
        for n in [0, 1, Short::CAPACITY - 1, Short::CAPACITY] {
            let mut short = Short::default();
            assert!(short.set(&text[..n]));
            let fits = n < Short::CAPACITY;
            assert_eq!(short.push_comma(), fits, "{n}");
            let expected = if fits {
                [&text[..n], b","].concat()
            } else {
                vec![]
            };
            assert_eq!(short.as_bytes(), expected, "{n}");
        }
    }

    #[test]
    fn the_longest_numbers_fit() {
        for x in [-2.2250738585072014e-308, -f64::MAX, -f64::MIN_POSITIVE] {
            let text = ryu::Buffer::new().format_finite(x).to_string();
            assert!(text.len() <= 24, "{text}");
        }
        assert_eq!((-9_007_199_254_740_991_i64).to_string().len(), 17);
    }
}
