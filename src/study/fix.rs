//! When a scenario does not fit its chip's memory: the changes that make it fit, each priced
//! against the scenario, cheapest per token first, so a warning can say what to do.

use serde::Serialize;

use crate::base::dtype::Role;
use crate::base::format::Format;
use crate::base::param::ScenarioParam;
use crate::base::types::TypeKey;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::{price, StepReport};
use crate::core::workload::Workload;

/// One change that makes a scenario fit, and what it does to the step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Fix {
    /// As a person writes it: `tp=2`, `weight=fp8`, `batch=7`.
    pub change: String,
    /// Chips per replica with the change.
    pub chips: u64,
    /// Step time with the change over the step time without.
    pub time_ratio: f64,
    /// $/M tokens with the change over without, where both are priced.
    pub usd_ratio: Option<f64>,
}

/// Tensor-parallel degrees tried, within the chip's interconnect domain.
const TP: [f64; 3] = [2.0, 4.0, 8.0];

/// The changes that make `scenario` fit on `chip` (none when it fits already): more chips
/// (tensor parallel, within the chip's domain), fp8 weights or KV cache, or the largest batch
/// that fits; each alone, cheapest per token first, then fastest. A change the workload cannot make
/// (no `tp` param, heads that do not split) is left out.
pub(crate) fn fixes(
    workload: &Workload,
    chip: &Chip,
    scenario: &Scenario,
    base: &StepReport,
) -> Vec<Fix> {
    if base.summary.fits {
        return Vec::new();
    }
    let mut candidates: Vec<(String, Scenario)> = Vec::new();
    let link = chip.interconnect.as_ref();
    if let Some((tp, link)) = workload.param(ScenarioParam::Tp).zip(link) {
        let now = base.params[tp].1;
        let domain = link.domain.unwrap_or(8) as f64;
        for degree in TP.into_iter().filter(|d| *d > now && *d <= domain) {
            let mut s = scenario.clone();
            if s.set_param(tp, degree).is_ok() {
                candidates.push((format!("tp={degree}"), s));
            }
        }
    }
    for (role, narrower) in [(Role::Weight, Format::Fp8), (Role::Kv, Format::Fp8)] {
        if scenario.dtypes().role(role).bytes() > narrower.bytes() {
            let mut s = scenario.clone();
            s.set_type(TypeKey::Role(role), narrower);
            candidates.push((format!("{role}={narrower}"), s));
        }
    }
    if let (Some(b), Some(most)) = (workload.param(ScenarioParam::Batch), base.summary.max_batch) {
        if most >= 1 && (most as f64) < base.params[b].1 {
            let mut s = scenario.clone();
            if s.set_param(b, most as f64).is_ok() {
                candidates.push((format!("batch={most}"), s));
            }
        }
    }
    let mut found = Vec::new();
    for (change, s) in candidates {
        // A change that makes no graph here (heads that do not split) is no fix.
        let Ok(report) = price(workload, chip, &s) else {
            continue;
        };
        let (a, b) = (&base.summary, &report.summary);
        if b.fits {
            found.push(Fix {
                change,
                chips: b.chips,
                time_ratio: b.step_time_s / a.step_time_s,
                usd_ratio: (a.cost.usd_per_million_tokens)
                    .zip(b.cost.usd_per_million_tokens)
                    .map(|(x, y)| y / x),
            });
        }
    }
    // Cheapest per token first (unpriced last), then fastest.
    let usd = |f: &Fix| f.usd_ratio.unwrap_or(f64::INFINITY);
    found.sort_by(|x, y| {
        usd(x)
            .total_cmp(&usd(y))
            .then(x.time_ratio.total_cmp(&y.time_ratio))
    });
    found
}
