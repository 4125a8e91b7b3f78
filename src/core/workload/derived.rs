//! Settling the params a scenario changes: its overrides, and of the params whose defaults
//! read params, only those an override reaches. A sweep overrides the same few params from
//! one scenario to the next, so the derived params each such set reaches are found once and
//! kept, as `reach` keeps what a change reaches in the graph.

use super::bits::Bits;
use super::eval::Evaluation;
use super::Workload;
use crate::base::error::Error;

/// The derived params reached from the last few sets of params seen, in evaluation order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DerivedReaches {
    kept: Vec<(Bits, Vec<usize>)>,
    /// The next to be replaced when a new one is kept and there is no room.
    next: usize,
}

/// Sets kept per evaluation: a sweep overrides one set of params, changing in one or two of
/// them at a time.
const KEPT: usize = 4;

impl DerivedReaches {
    /// The derived params whose defaults read a param of `seed`, or read a param so
    /// reached, in `workload`'s evaluation order.
    fn of(&mut self, workload: &Workload, seed: &Bits) -> &[usize] {
        if let Some(i) = self.kept.iter().position(|(s, _)| s == seed) {
            return &self.kept[i].1;
        }
        let mut reached = seed.clone();
        let params = (workload.derived_order.iter().copied())
            .filter(|&i| {
                let reads = &workload.params[i].default.params();
                let hit = reached.contains(i) || reads.iter().any(|&d| reached.contains(d));
                if hit {
                    reached.insert(i);
                }
                hit
            })
            .collect();
        let i = if self.kept.len() < KEPT {
            self.kept.push((seed.clone(), params));
            self.kept.len() - 1
        } else {
            let i = self.next;
            self.next = (self.next + 1) % KEPT;
            self.kept[i] = (seed.clone(), params);
            i
        };
        &self.kept[i].1
    }
}

impl Workload {
    /// After a successful evaluation: settles the params overridden now or the last time,
    /// then the derived params those reach, each kept unless what it reads changed. A param
    /// whose default is a number changes only when its override comes or goes.
    pub(super) fn settle_changed(
        &self,
        overrides: &[(usize, f64)],
        ev: &mut Evaluation,
    ) -> Result<(), Error> {
        let last = std::mem::take(&mut ev.last_overrides);
        let overridden = (last.iter().copied()).chain(overrides.iter().map(|&(i, _)| i));
        let mut constants =
            (overridden.clone()).filter(|&i| self.params[i].default.params().is_empty());
        let settled = constants.try_for_each(|i| self.settle(i, ev, true));
        // The derived params to visit follow from which params were overridden, changed or
        // not: a set that repeats from one scenario of a sweep to the next.
        let mut seed = std::mem::take(&mut ev.seed);
        seed.clone_from(&ev.changed);
        overridden.for_each(|i| seed.insert(i));
        let mut derived = std::mem::take(&mut ev.derived);
        let result = settled.and_then(|()| {
            (derived.of(self, &seed).iter()).try_for_each(|&i| {
                match ev.given[i].is_none() && self.kept(i, ev) {
                    true => Ok(()),
                    false => self.settle(i, ev, true),
                }
            })
        });
        (ev.derived, ev.seed, ev.last_overrides) = (derived, seed, last);
        result
    }
}
