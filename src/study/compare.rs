//! One scenario priced on several chips: what `compare`, `plot roofline` and `report` show.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::base::error::Error;
use crate::core::chip::Chip;
use crate::core::scenario::{Scenario, ScenarioSpec};
use crate::core::timing::{price, StepReport};
use crate::core::workload::Workload;

/// A scenario priced on each chip asked for, in the order asked.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The workload priced.
    pub workload: Workload,
    /// The scenario resolved once from the spec, the same on every chip.
    pub scenario: Scenario,
    /// Each chip with its step report, in the order the chips were asked for.
    pub reports: Vec<(Chip, StepReport)>,
}

impl Compared {
    /// `(chip, report)` pairs, as the pictures take them.
    pub fn pairs(&self) -> Vec<(&Chip, &StepReport)> {
        self.reports.iter().map(|(c, r)| (c, r)).collect()
    }

    /// The reports alone.
    pub fn into_reports(self) -> Vec<StepReport> {
        self.reports.into_iter().map(|(_, r)| r).collect()
    }
}

/// Prices the scenario `spec` names on every chip of `chips`.
pub fn compare(
    workload: Workload,
    chips: Vec<Chip>,
    spec: &ScenarioSpec,
) -> Result<Compared, Error> {
    compare_until(workload, chips, spec, &AtomicBool::new(false))
}

/// [`compare`], stopped with [`Error::Cancelled`] once `cancel` is set: it is read before
/// each chip is priced, so a caller that sets it waits at most one chip's pricing.
pub(crate) fn compare_until(
    workload: Workload,
    chips: Vec<Chip>,
    spec: &ScenarioSpec,
    cancel: &AtomicBool,
) -> Result<Compared, Error> {
    let scenario = Scenario::resolve(&workload, spec)?;
    let reports = chips
        .into_iter()
        .map(|chip| {
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
            let report = price(&workload, &chip, &scenario)?;
            Ok((chip, report))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Compared {
        workload,
        scenario,
        reports,
    })
}
