//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014): a 64-bit state advanced by a fixed odd increment and mixed by two
//! multiply-xorshift rounds. Written here rather than taken from a crate so that a seed gives
//! the same arrivals whatever a dependency's version.

/// The generator's state.
#[derive(Debug, Clone)]
pub(super) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(super) fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub(super) fn next_u64(&mut self) -> u64 {
        // The increment is the odd integer closest to 2^64 over the golden ratio; the
        // mixing constants are the paper's (its `mix64`, variant 13 of Stafford's).
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1): the top 53 bits, as many as an f64's mantissa holds.
    pub(super) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform over the integers `low..=high` (`low <= high`), without modulo bias: draws
    /// that fall in the incomplete last span are drawn again.
    pub(super) fn between(&mut self, low: u64, high: u64) -> u64 {
        let span = high - low + 1;
        if span == 0 {
            return self.next_u64();
        }
        let zone = u64::MAX - u64::MAX % span;
        loop {
            let x = self.next_u64();
            if x < zone {
                return low + x % span;
            }
        }
    }

    /// An exponential wait of mean `1 / rate` (inversion of the CDF; `1 - u` is never 0).
    pub(super) fn exponential(&mut self, rate: f64) -> f64 {
        -(1.0 - self.next_f64()).ln() / rate
    }

    /// A standard normal draw (Box-Muller; one of the pair is used).
    fn normal(&mut self) -> f64 {
        let u = 1.0 - self.next_f64();
        let v = self.next_f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// A gamma draw of shape `shape > 0` and scale 1: Marsaglia and Tsang, "A simple method
    /// for generating gamma variables" (ACM TOMS 26(3), 2000), with its `U^(1/a)` boost for
    /// shapes below 1.
    pub(super) fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = 1.0 - self.next_f64();
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = 1.0 - self.next_f64();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_first_outputs_for_seed_zero() {
        // SplitMix64 from seed 0, as the reference C code (splitmix64.c, Vigna) prints them.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn gamma_draws_have_the_shapes_mean_and_variance() {
        // Gamma(a, 1) has mean a and variance a.
        for shape in [0.5, 1.0, 4.0, 100.0] {
            let mut r = SplitMix64::new(11);
            let n = 200_000;
            let draws: Vec<f64> = (0..n).map(|_| r.gamma(shape)).collect();
            let mean = draws.iter().sum::<f64>() / n as f64;
            let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            assert!(
                (mean / shape - 1.0).abs() < 0.01,
                "shape {shape}: mean {mean}"
            );
            assert!(
                (var / shape - 1.0).abs() < 0.03,
                "shape {shape}: variance {var}"
            );
            assert!(draws.iter().all(|x| *x > 0.0));
        }
    }

    #[test]
    fn between_stays_within_its_bounds_and_reaches_both() {
        let mut r = SplitMix64::new(7);
        let draws: Vec<u64> = (0..2000).map(|_| r.between(3, 6)).collect();
        assert!(draws.iter().all(|d| (3..=6).contains(d)));
        assert!(draws.contains(&3) && draws.contains(&6));
    }

    #[test]
    fn exponential_waits_average_their_mean() {
        let mut r = SplitMix64::new(1);
        let n = 200_000;
        let mean = (0..n).map(|_| r.exponential(4.0)).sum::<f64>() / n as f64;
        // Standard error of the mean: 0.25 / sqrt(200000) = 5.6e-4; 4 of them.
        assert!((mean - 0.25).abs() < 2.3e-3, "{mean}");
    }
}
