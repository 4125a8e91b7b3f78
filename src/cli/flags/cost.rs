//! `--cost`, `--years`, `--pue`, `--usd-per-kwh`, `--rate-of-capital`, `--usd-per-kw-month`,
//! `--tco-utilization`, `--network-usd-per-gbps`, `--price` and `--prices`: the flags of
//! [`CostSettings`] (their defaults its own) and a buyer's price book, put on the chips a
//! command loaded; and `--power-cap`, which holds those chips to a board power limit.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::base::parse::{number_in, parse_quote};
use crate::base::ranges;
use crate::base::source::Source;
use crate::base::units::{parse_quantity, QuantityKind};
use crate::core::chip::Chip;
use crate::core::cost::book::PriceBook;
use crate::core::cost::settings::CostSettings;
use crate::core::cost::{CostView, TcoTerms};

/// How a chip-hour is costed, and a buyer's own prices.
#[derive(Args, Clone)]
pub(crate) struct CostArgs {
    /// Cost view of the $ columns: `cloud` (the chip file's on-demand price on its basis) or
    /// `tco` (capex + network + power + colo of the system per accelerator, over
    /// --tco-utilization)
    #[arg(long = "cost", value_enum, default_value_t = CostSettings::default().view.into())]
    pub(crate) view: CostArg,
    /// TCO: years the purchase is amortised over
    #[arg(long, value_name = "Y", default_value_t = CostSettings::default().years,
          value_parser = |t: &str| number_in(t, &ranges::COST_YEARS))]
    pub(crate) years: f64,
    /// TCO: the facility's power usage effectiveness
    #[arg(long, default_value_t = CostSettings::default().pue,
          value_parser = |t: &str| number_in(t, &ranges::COST_PUE))]
    pub(crate) pue: f64,
    /// TCO: electricity price
    #[arg(long, value_name = "USD", default_value_t = CostSettings::default().usd_per_kwh,
          value_parser = |t: &str| number_in(t, &ranges::COST_USD_PER_KWH))]
    pub(crate) usd_per_kwh: f64,
    /// TCO: yearly cost of capital; capex and network are annuities at this rate over --years
    #[arg(long, value_name = "F", default_value_t = TcoTerms::default().rate_of_capital,
          value_parser = |t: &str| number_in(t, &ranges::COST_RATE_OF_CAPITAL))]
    pub(crate) rate_of_capital: f64,
    /// TCO: the facility's rent per kW of provisioned (system) power and month
    #[arg(long, value_name = "USD", default_value_t = TcoTerms::default().usd_per_kw_month,
          value_parser = |t: &str| number_in(t, &ranges::COST_USD_PER_KW_MONTH))]
    pub(crate) usd_per_kw_month: f64,
    /// TCO: fraction of hours the fleet serves (a served hour pays for 1/F calendar hours);
    /// not the cloud view, and apart from --memory-utilization
    #[arg(long, value_name = "F", default_value_t = TcoTerms::default().tco_utilization,
          value_parser = |t: &str| number_in(t, &ranges::COST_TCO_UTILIZATION))]
    pub(crate) tco_utilization: f64,
    /// TCO: the scale-out network's leaf and spine share per Gb/s of a chip's network
    #[arg(long, value_name = "USD", default_value_t = TcoTerms::default().network_usd_per_gbps,
          value_parser = |t: &str| number_in(t, &ranges::COST_NETWORK_USD_PER_GBPS))]
    pub(crate) network_usd_per_gbps: f64,
    /// Hold each accelerator to a board power limit, as `nvidia-smi -pl` does (`500W`):
    /// compute clocks fall along the chip's measured perf-vs-power curve while HBM bandwidth
    /// stays, and its power (so tokens per kWh and the TCO's power and colo) falls by what the
    /// cap takes off its TDP; a chip without a public curve refuses it, naming why
    #[arg(long, value_name = "W", value_parser = parse_power_cap)]
    pub(crate) power_cap: Option<f64>,
    /// A buyer's own cloud quote per chip-hour, replacing the chip file's (repeatable; refused
    /// with --cost tco, which costs purchase and power: give those in --prices)
    #[arg(long = "price", value_name = "CHIP=USD/h", value_parser = parse_quote)]
    pub(crate) quotes: Vec<(String, f64)>,
    /// YAML price book: `CHIP: USD/h`, or `CHIP: {cloud: USD/h, purchase: USD, power: W}`
    /// (purchase per GPU); replaces the chip files' figures it gives
    #[arg(long = "prices", value_name = "FILE")]
    pub(crate) book: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum CostArg {
    /// On-demand price per chip-hour on the chip file's price basis
    Cloud,
    /// Total cost of ownership per accelerator: capex, network, power and colo, over the hours
    /// served
    Tco,
}

impl From<CostArg> for CostView {
    fn from(view: CostArg) -> CostView {
        match view {
            CostArg::Cloud => CostView::Cloud,
            CostArg::Tco => CostView::Tco,
        }
    }
}

impl From<CostView> for CostArg {
    fn from(view: CostView) -> CostArg {
        match view {
            CostView::Cloud => CostArg::Cloud,
            CostView::Tco => CostArg::Tco,
        }
    }
}

impl CostArgs {
    /// The price book's file, one of the command's inputs (no output may overwrite it).
    pub(crate) fn book(&self) -> Option<&Path> {
        self.book.as_deref()
    }

    /// The settings the flags give (the price book aside: it is a file).
    pub(crate) fn settings(&self) -> CostSettings {
        CostSettings {
            view: self.view.into(),
            years: self.years,
            pue: self.pue,
            usd_per_kwh: self.usd_per_kwh,
            terms: TcoTerms {
                rate_of_capital: self.rate_of_capital,
                usd_per_kw_month: self.usd_per_kw_month,
                tco_utilization: self.tco_utilization,
                network_usd_per_gbps: self.network_usd_per_gbps,
            },
            quotes: self.quotes.clone(),
        }
    }

    /// `chips` at the buyer's prices (the book, then each `--price`), costed in the model the
    /// flags describe.
    pub(crate) fn apply(&self, chips: Vec<Chip>) -> Result<Vec<Chip>> {
        let read_book = || match &self.book {
            Some(path) => PriceBook::load(&Source::read(path)?),
            None => Ok(PriceBook::default()),
        };
        let chips = self.settings().apply(chips, read_book)?;
        let Some(w) = self.power_cap else {
            return Ok(chips);
        };
        let mut capped = Vec::with_capacity(chips.len());
        for chip in chips {
            let curve = chip.power_curve().cloned();
            let chip = chip.with_power_cap(w)?;
            if let Some(c) = curve {
                let clock = c.clock_at(w).unwrap_or(1.0);
                eprintln!(
                    "note: --power-cap {w} W: `{}` computes at {clock:.3} of its clock at {} W \
                     (power curve {}); HBM bandwidth unchanged",
                    chip.id(),
                    c.tdp_w(),
                    c.source()
                );
            }
            capped.push(chip);
        }
        Ok(capped)
    }
}

/// `--power-cap`: watts, with or without the unit (`500`, `500W`, `0.5 kW`).
pub(crate) fn parse_power_cap(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let w = match trimmed.parse::<f64>() {
        Ok(w) => w,
        Err(_) => parse_quantity(trimmed, QuantityKind::Power).map_err(|e| e.to_string())?,
    };
    number_in(&w.to_string(), &ranges::POWER_CAP).map_err(|e| e.replace(&w.to_string(), trimmed))
}
