//! A power budget at the wall (`plan --power-budget-mw X`): for each planned point, the most
//! whole replicas whose system power times the PUE fits in X MW, the tokens per second they
//! serve and what a million of them cost; with a target, whether the planned fleet fits. Any
//! latency bound the plan was given already chose the point's batch, so it holds here too.
//! With a request rate (`--rate`), whether each planned fleet fits and the most requests per
//! second its instances, at the same load each, serve within X MW ([`fleet_power_fit`]).

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

/// What a fleet that serves a request rate (`plan --rate`) comes to within a power budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetPowerFit {
    /// The budget, in MW at the wall.
    pub budget_mw: f64,
    /// One chip's power at the wall: its system's power per chip x the PUE, in kW.
    pub kw_per_chip: f64,
    /// The planned fleet's power at the wall, in MW.
    pub fleet_mw: f64,
    /// The most whole (decode) instances within the budget, each with its share of the
    /// prefill pool, at the fleet's load per instance.
    pub instances: u64,
    /// The requests per second those instances serve: the fleet's per instance, so that its
    /// latency bounds hold.
    pub requests_per_s: f64,
    /// The output tokens per second those requests make.
    pub tokens_per_s: f64,
}

impl FleetPowerFit {
    /// Whether the planned fleet fits the budget.
    pub fn fits(&self) -> bool {
        self.fleet_mw <= self.budget_mw
    }
}

/// A fleet of `chips` chips of `chip` in `instances` instances serving `rate_per_s` requests
/// of `output_tokens` each, within `budget_mw` at the wall; or why there is no answer (no
/// power figure). Every instance carries the same load as in the planned fleet, so the most
/// it could serve is the fleet's rate per instance times the whole instances that fit.
pub fn fleet_power_fit(
    chip: &Chip,
    (chips, instances): (u64, u64),
    (rate_per_s, output_tokens): (f64, u64),
    budget_mw: f64,
) -> Result<FleetPowerFit, String> {
    let kw_per_chip = (chip.cost_model())
        .kwh_per_hour(chip)
        .ok_or_else(|| "no power figure: the chip file gives no `power`".to_owned())?;
    let fleet_kw = kw_per_chip * chips as f64;
    let instance_kw = fleet_kw / instances.max(1) as f64;
    let in_budget = (budget_mw * 1e3 / instance_kw).floor() as u64;
    let requests_per_s = rate_per_s / instances.max(1) as f64 * in_budget as f64;
    Ok(FleetPowerFit {
        budget_mw,
        kw_per_chip,
        fleet_mw: fleet_kw / 1e3,
        instances: in_budget,
        requests_per_s,
        tokens_per_s: requests_per_s * output_tokens as f64,
    })
}
