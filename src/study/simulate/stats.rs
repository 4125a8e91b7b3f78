//! The run's figures: latency percentiles, rates, goodput and the queue's stability.

use serde::Serialize;

/// The mean and the 50th, 90th and 99th percentiles of a latency, in seconds, interpolated linearly
/// between the closest ranks (numpy's default, which vLLM's benchmark reports).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Percentiles {
    /// The mean, seconds.
    pub mean_s: f64,
    /// The median, seconds.
    pub p50_s: f64,
    /// The 90th percentile, seconds.
    pub p90_s: f64,
    /// The 99th percentile, seconds.
    pub p99_s: f64,
}

impl Percentiles {
    /// Of `values` (sorted here); zeros when there are none.
    pub fn of(values: &mut [f64]) -> Percentiles {
        values.sort_by(f64::total_cmp);
        let sum: f64 = values.iter().sum();
        Percentiles {
            mean_s: sum / values.len().max(1) as f64,
            p50_s: percentile(values, 50.0),
            p90_s: percentile(values, 90.0),
            p99_s: percentile(values, 99.0),
        }
    }
}

/// The `q`th percentile of sorted `values`: rank `q / 100 (n - 1)`, interpolated.
pub(super) fn percentile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n => {
            let rank = q / 100.0 * (n - 1) as f64;
            let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
        }
    }
}

/// Counts over the arrival window's second half, for the stability rule.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct SecondHalf {
    /// Requests that arrived in it.
    pub arrived: u64,
    /// Requests that finished in it.
    pub finished: u64,
    /// Requests in the system (queued or running) at its start and at its end.
    pub in_system_start: u64,
    pub in_system_end: u64,
}

impl SecondHalf {
    /// The queue is unstable when, over the second half of the arrival window, requests
    /// arrived faster than they finished and the requests in the system grew by more than a
    /// tenth of that half's arrivals: a queue in steady state holds its level, one past
    /// capacity grows in proportion to the excess arrivals.
    pub(super) fn grows(&self) -> bool {
        let grew = self.in_system_end.saturating_sub(self.in_system_start);
        self.arrived > self.finished && grew as f64 > 0.1 * self.arrived as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_between_ranks_as_numpy_does() {
        // numpy.percentile([1, 2, 3, 4], 50) = 2.5; at 90: rank 2.7, 3 + 0.7 = 3.7.
        let mut v = [4.0, 1.0, 3.0, 2.0];
        let p = Percentiles::of(&mut v);
        assert_eq!(p.p50_s, 2.5);
        assert!((p.p90_s - 3.7).abs() < 1e-12);
        assert!((p.p99_s - 3.97).abs() < 1e-12);
    }

    #[test]
    fn a_queue_that_holds_its_level_is_stable_and_one_that_grows_is_not() {
        let half = |start, end, finished| SecondHalf {
            arrived: 100,
            finished,
            in_system_start: start,
            in_system_end: end,
        };
        assert!(!half(20, 22, 98).grows());
        assert!(half(20, 60, 60).grows());
        // Growth without arrivals outpacing completions is a burst, not instability.
        assert!(!half(20, 60, 100).grows());
    }
}
