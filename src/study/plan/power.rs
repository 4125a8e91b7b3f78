//! A power budget at the wall (`plan --power-budget-mw X`): for each planned point, the most
//! whole replicas whose system power times the PUE fits in X MW, the tokens per second they
//! serve and what a million of them cost; with a target, whether the planned fleet fits. Any
//! latency bound the plan was given already chose the point's batch, so it holds here too.

use super::PlanPoint;
use crate::core::chip::Chip;

/// What a plan's point comes to within a power budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerFit {
    /// The budget, in MW at the wall.
    pub budget_mw: f64,
    /// One chip's power at the wall: its system's power per chip x the PUE, in kW.
    pub kw_per_chip: f64,
    /// The most chips within the budget, in whole replicas.
    pub chips: u64,
    /// What those chips serve, in tokens per second.
    pub tokens_per_s: f64,
    /// A million tokens on those chips in the chip's cost view, where it has a cost.
    pub usd_per_million_tokens: Option<f64>,
    /// With a target: the planned fleet's power at the wall, in MW, and whether it fits.
    pub fleet_mw: Option<f64>,
}

impl PowerFit {
    /// Whether the planned fleet (a target's chips) fits the budget; `None` without a target.
    pub fn fits(&self) -> Option<bool> {
        self.fleet_mw.map(|mw| mw <= self.budget_mw)
    }
}

/// `point` of `chip` within `budget_mw` at the wall, or why there is no answer (no power
/// figure, no throughput). `target` says whether the point's `chips` answer a target.
pub fn power_fit(
    point: &PlanPoint,
    chip: &Chip,
    budget_mw: f64,
    target: bool,
) -> Result<PowerFit, String> {
    let model = chip.cost_model();
    let kw_per_chip = model
        .kwh_per_hour(chip)
        .ok_or_else(|| "no power figure: the chip file gives no `power`".to_owned())?;
    let per_replica = point
        .summary
        .tokens_per_s
        .ok_or_else(|| "no throughput to fill the budget with".to_owned())?;
    let replica_kw = kw_per_chip * point.tp as f64;
    // The budget in kW over one replica's, rounded down: whole replicas only.
    let replicas = (budget_mw * 1e3 / replica_kw).floor() as u64;
    let chips = replicas * point.tp;
    let tokens_per_s = per_replica * replicas as f64;
    let usd_per_million_tokens = (replicas > 0)
        .then(|| chip.usd_per_hour().ok())
        .flatten()
        .map(|usd| usd * chips as f64 / 3600.0 / tokens_per_s * 1e6);
    Ok(PowerFit {
        budget_mw,
        kw_per_chip,
        chips,
        tokens_per_s,
        usd_per_million_tokens,
        fleet_mw: target.then(|| point.chips as f64 * kw_per_chip / 1e3),
    })
}
