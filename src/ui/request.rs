//! A request's scenario as JSON: the command line's flags as fields, each value in the text
//! its flag takes (`"set": ["batch=32"]`, `"dtype": ["weight=fp8"]`), read by the same
//! parsers so that a bad value gets the command line's message. Workloads and chips are
//! built-in names or pasted text, never paths.

use std::sync::Arc;

use serde::Deserialize;

use super::error::ApiError;
use crate::base::format::Format as DataFormat;
use crate::base::parse::{
    number_in, parse_axis, parse_dtype_axis, parse_quote, parse_set, AxisValues,
};
use crate::base::ranges;
use crate::base::types::{parse_type, TypeKey};
use crate::core::cost::settings::CostSettings;
use crate::core::cost::{CostView, TcoTerms};
use crate::core::engine::{self, Engine};
use crate::core::scenario::{Mode, ScenarioSpec};

/// The name a pasted workload's errors give its file.
pub(crate) const PASTED_YAML: &str = "pasted.yaml";
/// The name a pasted Hugging Face config's errors give its file.
pub(crate) const PASTED_CONFIG: &str = "config.json";

/// One scenario on one or more chips, and what to do with it (every endpoint but the lists).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioRequest {
    /// A built-in workload's name.
    pub(crate) workload: Option<String>,
    /// A workload file's text; it may name only a built-in template.
    pub(crate) workload_yaml: Option<String>,
    /// A Hugging Face config.json's text, imported as `stepcost import` does.
    pub(crate) hf_config: Option<String>,
    /// Built-in chips: a list, or one string comma-separated as `--chip` takes it.
    #[serde(default)]
    pub(crate) chips: ChipList,
    #[serde(default)]
    pub(crate) set: Vec<String>,
    #[serde(default)]
    pub(crate) dtype: Vec<String>,
    pub(crate) fusion: Option<String>,
    #[serde(default)]
    pub(crate) mode: ModeName,
    #[serde(default)]
    pub(crate) overlap_comm: bool,
    pub(crate) memory_utilization: Option<f64>,
    /// A built-in engine's id (`vllm`, `vllm@0.7`), as `--engine` takes it; none: each
    /// chip's default.
    pub(crate) engine: Option<String>,
    #[serde(default)]
    pub(crate) cost: CostName,
    pub(crate) years: Option<f64>,
    pub(crate) pue: Option<f64>,
    pub(crate) usd_per_kwh: Option<f64>,
    pub(crate) rate_of_capital: Option<f64>,
    pub(crate) usd_per_kw_month: Option<f64>,
    pub(crate) tco_utilization: Option<f64>,
    pub(crate) network_usd_per_gbps: Option<f64>,
    /// A buyer's quotes, `CHIP=USD/h` as `--price` takes them.
    #[serde(default)]
    pub(crate) price: Vec<String>,
    /// `json` (default) or `csv`; a sweep takes `csv` (default), `json` (JSON Lines) or
    /// `parquet`.
    pub(crate) format: Option<FormatName>,
    /// A sweep's axes (`sweep` and `plot/sweep`).
    #[serde(default)]
    pub(crate) sweep: SweepAxes,
    /// A sweep chart's columns and axes (`plot/sweep`).
    #[serde(default)]
    pub(crate) chart: ChartRequest,
}

/// Chips as a list or as `--chip` writes them.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ChipList {
    Text(String),
    List(Vec<String>),
}

impl Default for ChipList {
    fn default() -> Self {
        ChipList::List(Vec::new())
    }
}

impl ChipList {
    pub(crate) fn names(&self) -> Vec<String> {
        match self {
            ChipList::Text(text) => text.split(',').map(|c| c.trim().to_owned()).collect(),
            ChipList::List(list) => list.clone(),
        }
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ModeName {
    #[default]
    Expected,
    Roofline,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum CostName {
    #[default]
    Cloud,
    Tco,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FormatName {
    Json,
    Csv,
    Parquet,
}

/// A sweep's axes, as `stepcost sweep` takes them; a param or type the scenario sets and an
/// axis also names takes the axis's values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SweepAxes {
    /// `NAME=LIST` (`batch=1..=256:x2`).
    #[serde(default)]
    pub(crate) set: Vec<String>,
    /// `KEY=LIST` (`weight=bf16,fp8`).
    #[serde(default)]
    pub(crate) dtype: Vec<String>,
    /// Fusion plans, or `all`.
    #[serde(default)]
    pub(crate) fusion: Vec<String>,
    /// Built-in engines, or `all`: an axis after the chips, as `sweep --engine` takes it.
    #[serde(default)]
    pub(crate) engine: Vec<String>,
    /// A lower cap on the scenarios than the server's.
    pub(crate) max_scenarios: Option<u64>,
}

/// The columns of a sweep chart (as `stepcost plot sweep` takes them).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChartRequest {
    pub(crate) x: Option<String>,
    pub(crate) y: Option<String>,
    pub(crate) series: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) log_x: bool,
    #[serde(default)]
    pub(crate) log_y: bool,
}

/// Reads a flag's value with its command-line parser.
fn flag<T>(
    name: &str,
    value_name: &str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T, ApiError> {
    parse(text).map_err(|why| ApiError::flag(name, value_name, text, &why))
}

/// A number given as JSON, checked as its flag's text would be.
fn number(name: &str, value: f64, range: &ranges::Range) -> Result<f64, ApiError> {
    let text = value.to_string();
    flag(name, "F", &text, |t| number_in(t, range))
}

impl ScenarioRequest {
    /// The scenario as the library names it, every value checked by its flag's parser.
    pub(crate) fn spec(&self) -> Result<ScenarioSpec, ApiError> {
        let sets = (self.set.iter())
            .map(|t| flag("set", "NAME=VALUE", t, parse_set))
            .collect::<Result<_, _>>()?;
        let dtypes = (self.dtype.iter())
            .map(|t| flag("dtype", "KEY=TYPE", t, parse_type))
            .collect::<Result<_, _>>()?;
        let memory_utilization = match self.memory_utilization {
            Some(u) => Some(number(
                "memory-utilization",
                u,
                &ranges::MEMORY_UTILIZATION,
            )?),
            None => None,
        };
        // Built-in engines only: the page takes no path from a request.
        let engine = self.engine.as_deref().map(engine::builtin).transpose()?;
        Ok(ScenarioSpec {
            sets,
            dtypes,
            fusion: self.fusion.clone(),
            mode: self.mode(),
            overlap_comm: self.overlap_comm,
            memory_utilization,
            engine,
        })
    }

    /// The sweep's engine axis: built-in engines, or every one for `all`; without one, the
    /// scenario's own engine where it names one.
    pub(crate) fn sweep_engines(&self) -> Result<Vec<Arc<Engine>>, ApiError> {
        let engines: Result<Vec<_>, _> = match (self.sweep.engine.as_slice(), &self.engine) {
            ([all], _) if all == "all" => engine::builtin_ids().map(engine::builtin).collect(),
            ([], Some(one)) => engine::builtin(one.trim()).map(|e| vec![e]),
            (names, _) => names.iter().map(|n| engine::builtin(n.trim())).collect(),
        };
        Ok(engines?)
    }

    pub(crate) fn mode(&self) -> Mode {
        match self.mode {
            ModeName::Expected => Mode::Expected,
            ModeName::Roofline => Mode::Roofline,
        }
    }

    /// The cost settings, as `--cost`, `--years`, `--pue`, `--usd-per-kwh`, the TCO's other
    /// terms and `--price` give them (no price book: that is a file); a field left out takes
    /// the settings' default.
    pub(crate) fn cost(&self) -> Result<CostSettings, ApiError> {
        let defaults = CostSettings::default();
        let or = |value: Option<f64>, name: &str, default: f64, range| match value {
            Some(v) => number(name, v, range),
            None => Ok(default),
        };
        Ok(CostSettings {
            view: match self.cost {
                CostName::Cloud => CostView::Cloud,
                CostName::Tco => CostView::Tco,
            },
            years: or(self.years, "years", defaults.years, &ranges::COST_YEARS)?,
            pue: or(self.pue, "pue", defaults.pue, &ranges::COST_PUE)?,
            usd_per_kwh: or(
                self.usd_per_kwh,
                "usd-per-kwh",
                defaults.usd_per_kwh,
                &ranges::COST_USD_PER_KWH,
            )?,
            terms: TcoTerms {
                rate_of_capital: or(
                    self.rate_of_capital,
                    "rate-of-capital",
                    defaults.terms.rate_of_capital,
                    &ranges::COST_RATE_OF_CAPITAL,
                )?,
                usd_per_kw_month: or(
                    self.usd_per_kw_month,
                    "usd-per-kw-month",
                    defaults.terms.usd_per_kw_month,
                    &ranges::COST_USD_PER_KW_MONTH,
                )?,
                tco_utilization: or(
                    self.tco_utilization,
                    "tco-utilization",
                    defaults.terms.tco_utilization,
                    &ranges::COST_TCO_UTILIZATION,
                )?,
                network_usd_per_gbps: or(
                    self.network_usd_per_gbps,
                    "network-usd-per-gbps",
                    defaults.terms.network_usd_per_gbps,
                    &ranges::COST_NETWORK_USD_PER_GBPS,
                )?,
            },
            quotes: (self.price.iter())
                .map(|t| flag("price", "CHIP=USD/h", t, parse_quote))
                .collect::<Result<_, _>>()?,
        })
    }

    /// The `--set` values of the sweep: the scenario's own where no axis names the param,
    /// then the axes, in that order (the sweep's product order).
    pub(crate) fn sweep_sets(&self) -> Vec<String> {
        let axis_names: Vec<&str> = (self.sweep.set.iter())
            .filter_map(|t| t.split_once('=').map(|(n, _)| n.trim()))
            .collect();
        let fixed = self.set.iter().filter(|t| {
            let name = t.split_once('=').map_or(t.as_str(), |(n, _)| n).trim();
            !axis_names.contains(&name)
        });
        fixed.chain(&self.sweep.set).cloned().collect()
    }

    /// The `--dtype` values of the sweep, as [`Self::sweep_sets`] orders them.
    pub(crate) fn sweep_dtypes(&self) -> Vec<String> {
        let key = |t: &str| t.split_once('=').map_or(t, |(k, _)| k).trim().to_owned();
        let axis_keys: Vec<String> = self.sweep.dtype.iter().map(|t| key(t)).collect();
        let fixed = (self.dtype.iter()).filter(|t| !axis_keys.contains(&key(t)));
        fixed.chain(&self.sweep.dtype).cloned().collect()
    }

    /// The sweep's fusion plans: the axis's, else the scenario's one.
    pub(crate) fn sweep_fusions(&self) -> Vec<String> {
        match (&self.fusion, self.sweep.fusion.is_empty()) {
            (Some(plan), true) => vec![plan.clone()],
            _ => self.sweep.fusion.clone(),
        }
    }

    /// The sweep's param axes, read by `--set`'s sweep parser.
    pub(crate) fn sweep_params(&self) -> Result<Vec<(String, AxisValues)>, ApiError> {
        (self.sweep_sets().iter())
            .map(|t| flag("set", "NAME=LIST", t, parse_axis))
            .collect()
    }

    /// The sweep's type axes, read by `--dtype`'s sweep parser.
    pub(crate) fn sweep_types(&self) -> Result<Vec<(TypeKey, Vec<DataFormat>)>, ApiError> {
        (self.sweep_dtypes().iter())
            .map(|t| flag("dtype", "KEY=LIST", t, parse_dtype_axis))
            .collect()
    }
}
