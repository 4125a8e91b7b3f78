//! A simulated run's 80 % band: the same arrivals simulated again with every iteration at the
//! fast and at the slow end of its step's band (a decode-only iteration the decode band's, one
//! carrying prompt tokens the prefill band's). The queue does not scale with its steps (a
//! slower step lengthens the batch and the wait together), so the run's latencies are not
//! its band multiplied out: each end is a run of its own.

use super::clock::StepScale;
use super::setup::simulate_scaled;
use super::{SimConfig, SimReport};
use crate::base::error::Error;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::workload::Workload;
use crate::study::band;

/// The run at the fast and at the slow end of its steps' bands.
#[derive(Debug, Clone, PartialEq)]
pub struct SimBand {
    /// Every iteration at the fast (low) end of its step's band.
    pub fast: SimReport,
    /// Every iteration at the slow (high) end of its step's band.
    pub slow: SimReport,
}

/// The band of [`super::simulate`]'s run of `config` (none in roofline mode, a ceiling).
pub fn simulate_band(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    config: &SimConfig,
) -> Result<Option<SimBand>, Error> {
    let of = |tokens: f64| band::of_step(scenario.mode(), Some(tokens), chip.family());
    let (Some(decode), Some(prefill)) = (of(1.0), of(2.0)) else {
        return Ok(None);
    };
    let at = |decode: f64, prefill: f64| {
        simulate_scaled(
            workload,
            chip,
            scenario,
            config,
            StepScale { decode, prefill },
        )
    };
    Ok(Some(SimBand {
        fast: at(decode.low, prefill.low)?,
        slow: at(decode.high, prefill.high)?,
    }))
}
