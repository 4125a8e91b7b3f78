//! A pool of instances behind one router, made as requests reach them, with what the event
//! loop asks of it in O(log instances): the busy instance whose iteration ends first, and
//! where the router sends the next request.
//!
//! Instances are made in index order (a round robin reaches them in turn; a least-loaded
//! router takes an idle made one before a new one, as the lowest index among equals), so the
//! pool holds a prefix of them: a run of a million instances and forty requests makes forty.
//! Ties break as a scan over every instance would: the lowest index first.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::Router;

/// What the pool needs of an instance.
pub(super) trait Member {
    /// Requests queued or in flight: what a least-loaded router compares.
    fn load(&self) -> usize;
}

/// `total` instances, the first `made.len()` of them made.
pub(super) struct Pool<T> {
    made: Vec<T>,
    total: usize,
    router: Router,
    /// The round robin's next instance.
    turn: usize,
    /// Each busy instance's iteration end (a time at least 0, whose bits order as it does):
    /// one entry per busy instance.
    busy: BinaryHeap<Reverse<(u64, usize)>>,
    /// Each made instance's load and index, for a least-loaded router (empty otherwise).
    loads: BTreeSet<(usize, usize)>,
}

impl<T: Member> Pool<T> {
    /// `total` instances behind `router`, none made yet.
    pub(super) fn new(total: usize, router: Router) -> Pool<T> {
        Pool {
            made: Vec::new(),
            total,
            router,
            turn: 0,
            busy: BinaryHeap::new(),
            loads: BTreeSet::new(),
        }
    }

    /// The instance the next request goes to (made with `make` if it is new): the round
    /// robin's turn (advanced), or the one of least load, the lowest index on a tie.
    pub(super) fn route(&mut self, make: impl FnOnce() -> T) -> usize {
        let k = match self.router {
            Router::RoundRobin => {
                let k = self.turn;
                self.turn = (self.turn + 1) % self.total;
                k
            }
            Router::LeastLoaded => {
                let fresh = (self.made.len() < self.total).then_some((0, self.made.len()));
                match (self.loads.first().copied(), fresh) {
                    (Some(a), Some(b)) => a.min(b).1,
                    (Some(a), None) => a.1,
                    (None, Some(b)) => b.1,
                    (None, None) => 0,
                }
            }
        };
        if k == self.made.len() {
            let instance = make();
            if self.router == Router::LeastLoaded {
                self.loads.insert((instance.load(), k));
            }
            self.made.push(instance);
        }
        k
    }

    /// Instance `k` changed with `change`, its load kept in step.
    pub(super) fn update<R>(&mut self, k: usize, change: impl FnOnce(&mut T) -> R) -> R {
        let before = self.made[k].load();
        let out = change(&mut self.made[k]);
        let after = self.made[k].load();
        if self.router == Router::LeastLoaded && after != before {
            self.loads.remove(&(before, k));
            self.loads.insert((after, k));
        }
        out
    }

    /// Instance `k` (made).
    pub(super) fn get(&self, k: usize) -> &T {
        &self.made[k]
    }

    /// Instance `k` is busy until `at_s`.
    pub(super) fn busy_until(&mut self, k: usize, at_s: f64) {
        self.busy.push(Reverse((at_s.max(0.0).to_bits(), k)));
    }

    /// The busy instance whose iteration ends first, and when.
    pub(super) fn next(&self) -> Option<(usize, f64)> {
        (self.busy.peek()).map(|Reverse((t, k))| (*k, f64::from_bits(*t)))
    }

    /// Takes that instance off the busy list: its iteration ends now.
    pub(super) fn pop(&mut self) -> Option<usize> {
        self.busy.pop().map(|Reverse((_, k))| k)
    }

    /// The instances made (those that were given a request).
    pub(super) fn made(&self) -> &[T] {
        &self.made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Queue(usize);

    impl Member for Queue {
        fn load(&self) -> usize {
            self.0
        }
    }

    /// What a scan over every instance picks: the least load, the lowest index on a tie.
    fn scan(loads: &[usize]) -> usize {
        (0..loads.len()).min_by_key(|&k| loads[k]).unwrap()
    }

    #[test]
    fn least_loaded_routing_matches_a_scan_and_makes_a_prefix() {
        let total = 6;
        let mut pool: Pool<Queue> = Pool::new(total, Router::LeastLoaded);
        let mut loads = vec![0; total];
        // Arrivals, with some instances finishing requests in between.
        for step in 0..40 {
            if step % 3 == 2 {
                let k = step % total;
                if k < pool.made().len() && loads[k] > 0 {
                    pool.update(k, |q| q.0 -= 1);
                    loads[k] -= 1;
                }
            }
            let k = pool.route(|| Queue(0));
            assert_eq!(k, scan(&loads), "step {step}");
            pool.update(k, |q| q.0 += 1);
            loads[k] += 1;
        }
        assert_eq!(pool.made().len(), total);
        let mut few: Pool<Queue> = Pool::new(1_000_000, Router::LeastLoaded);
        for _ in 0..3 {
            let k = few.route(|| Queue(0));
            few.update(k, |q| q.0 += 1);
        }
        assert_eq!(few.made().len(), 3);
    }

    #[test]
    fn a_round_robin_takes_each_in_turn_and_makes_only_those_reached() {
        let mut pool: Pool<Queue> = Pool::new(3, Router::RoundRobin);
        let picks: Vec<usize> = (0..7).map(|_| pool.route(|| Queue(0))).collect();
        assert_eq!(picks, vec![0, 1, 2, 0, 1, 2, 0]);
        let mut big: Pool<Queue> = Pool::new(1_000_000, Router::RoundRobin);
        (0..5).for_each(|_| {
            big.route(|| Queue(0));
        });
        assert_eq!(big.made().len(), 5);
    }

    #[test]
    fn the_earliest_end_comes_first_and_the_lowest_index_on_a_tie() {
        let mut pool: Pool<Queue> = Pool::new(4, Router::RoundRobin);
        (0..4).for_each(|_| {
            pool.route(|| Queue(0));
        });
        pool.busy_until(2, 1.5);
        pool.busy_until(3, 0.5);
        pool.busy_until(1, 1.5);
        assert_eq!(pool.next(), Some((3, 0.5)));
        assert_eq!(pool.pop(), Some(3));
        assert_eq!(pool.next(), Some((1, 1.5)));
        assert_eq!(pool.pop(), Some(1));
        assert_eq!(pool.pop(), Some(2));
        assert_eq!(pool.next(), None);
    }
}
