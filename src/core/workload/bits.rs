//! A set of param indices as bits: which params changed from one scenario to the next. A
//! sweep keeps one per evaluation and compares it with the sets its graph's reaches were
//! found for (see `reach`): a few words rather than a flag per param.

/// A set of indices below a fixed bound, as bits in 64-bit words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Bits(Vec<u64>);

impl Bits {
    /// An empty set of indices below `len`.
    pub(super) fn empty(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    /// Every index below `len`.
    pub(super) fn full(len: usize) -> Bits {
        let mut bits = Bits::empty(len);
        (0..len).for_each(|i| bits.insert(i));
        bits
    }

    pub(super) fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    pub(super) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Empties the set.
    pub(super) fn clear(&mut self) {
        self.0.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::Bits;

    #[test]
    fn sets_past_one_word_keep_each_index_apart() {
        let mut a = Bits::empty(130);
        [0, 63, 64, 129].iter().for_each(|&i| a.insert(i));
        assert!([0, 63, 64, 129].iter().all(|&i| a.contains(i)));
        assert!(![1, 62, 65, 128].iter().any(|&i| a.contains(i)));
        assert!((0..130).all(|i| Bits::full(130).contains(i)));
        a.clear();
        assert!(!(0..130).any(|i| a.contains(i)));
    }
}
