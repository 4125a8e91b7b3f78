//! Shards: slice `i` of `n` contiguous slices of a grid's product order, so that a job runner
//! (a Slurm array, a Kubernetes Indexed Job) runs one sweep as `n` independent tasks whose
//! outputs, concatenated in index order, are the whole sweep.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use crate::base::error::Error;

/// Slice `index` of `count` (`index` from 0 to `count - 1`); the whole grid is `0/1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u64,
    count: u64,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

impl Shard {
    /// The whole grid, one slice.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Slice `index` of `count`: `count` at least 1, `index` below it.
    pub fn new(index: u64, count: u64) -> Result<Shard, Error> {
        if count == 0 {
            return Err(Error::value("a sweep is cut into at least 1 shard: N >= 1"));
        }
        if index >= count {
            return Err(Error::value(format!(
                "shard {index} of {count} does not exist: I goes from 0 to {} (as a job array's index)",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// Which slice this is, from 0 (a job array's index).
    pub fn index(self) -> u64 {
        self.index
    }

    /// How many slices the grid is cut into.
    pub fn count(self) -> u64 {
        self.count
    }

    /// The scenarios of this slice of a grid of `total`: from `index * total / count` to
    /// `(index + 1) * total / count`, computed in 128 bits so that no product overflows. The
    /// slices of `0..count` cover `0..total` in order, each scenario once; they differ in
    /// length by at most one.
    pub fn range(self, total: u64) -> Range<u64> {
        let bound = |i: u64| (u128::from(i) * u128::from(total) / u128::from(self.count)) as u64;
        bound(self.index)..bound(self.index + 1)
    }
}

impl FromStr for Shard {
    type Err = Error;

    /// `I/N`, two whole numbers: `3/100` is the fourth of 100 slices.
    fn from_str(text: &str) -> Result<Shard, Error> {
        let expected = || {
            Error::value(format!(
                "expected I/N, two whole numbers with I from 0 to N-1 (e.g. 0/100), found `{text}`"
            ))
        };
        let (i, n) = text.split_once('/').ok_or_else(expected)?;
        let whole = |t: &str| t.trim().parse::<u64>().map_err(|_| expected());
        Shard::new(whole(i)?, whole(n)?)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_grid_in_order() {
        for total in [0, 1, 2, 7, 100, 101] {
            for count in 1..=9 {
                let mut next = 0;
                for index in 0..count {
                    let r = Shard::new(index, count).unwrap().range(total);
                    assert_eq!(r.start, next);
                    assert!(r.end - r.start <= total / count + 1);
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
        // 128-bit products: the last slice of the largest grid ends at its end.
        let last = Shard::new(u64::MAX - 1, u64::MAX).unwrap();
        assert_eq!(last.range(u64::MAX), u64::MAX - 1..u64::MAX);
        assert_eq!(Shard::new(1, 3).unwrap().range(10), 3..6);
    }

    #[test]
    fn text_reads_or_says_what_was_expected() {
        assert_eq!(
            "3/100".parse::<Shard>().unwrap(),
            Shard::new(3, 100).unwrap()
        );
        assert_eq!(Shard::new(3, 100).unwrap().to_string(), "3/100");
        for bad in ["3", "a/2", "1/b", "-1/2", "1.5/4", "", "/"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("expected I/N"), "{bad}: {e}");
        }
        assert!("0/0"
            .parse::<Shard>()
            .unwrap_err()
            .to_string()
            .contains("at least 1"));
        let e = "4/4".parse::<Shard>().unwrap_err().to_string();
        assert!(e.contains("from 0 to 3"), "{e}");
    }
}
