//! What a chip-hour costs: the cloud view (a price per hour on one provider's price basis) or
//! the total cost of ownership of one system per accelerator, in four parts ([`tco`]).
//!
//! TCO per served chip-hour = (capex + network + power + colo) / TCO utilisation, where capex
//! and network are annuities over the years at the rate of capital, power is system power x
//! PUE x USD per kWh and colo is system power x USD per kW-month.

pub(crate) mod book;
pub(crate) mod books;
pub(crate) mod settings;
pub(crate) mod tco;

pub use tco::{TcoParts, HOST_USD, HOST_W};

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};

use crate::base::error::Error;
use crate::base::ranges::{self, Range};
use crate::core::chip::Chip;

/// Hours in a year of service (365 days, as amortisation schedules count them).
pub(crate) const HOURS_PER_YEAR: f64 = 8760.0;

/// Which cost a chip-hour is priced at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CostView {
    /// The chip file's cloud price per hour, on its price basis.
    #[default]
    Cloud,
    /// Total cost of ownership of the system per accelerator: capex, network, power and
    /// colo ([`TcoParts`]), over the fraction of hours served.
    Tco,
}

impl CostView {
    /// `cloud` or `tco`, as the `cost_basis` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            CostView::Cloud => "cloud",
            CostView::Tco => "tco",
        }
    }
}

impl fmt::Display for CostView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a chip-hour is costed: the view and the TCO's assumptions. Every value is inside its
/// range (`base::ranges`), checked by [`CostModel::new`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostModel {
    view: CostView,
    years: f64,
    pue: f64,
    usd_per_kwh: f64,
    rate_of_capital: f64,
    usd_per_kw_month: f64,
    tco_utilization: f64,
    network_usd_per_gbps: f64,
}

/// The TCO's terms beyond years, PUE and electricity: the rate of capital, the facility's
/// rent, the fraction of hours served and the scale-out network's price per Gb/s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TcoTerms {
    /// Yearly cost of capital, as a fraction (0.10 = 10 % a year).
    pub rate_of_capital: f64,
    /// Facility rent per kW of provisioned power and month, in USD.
    pub usd_per_kw_month: f64,
    /// Fraction of hours the fleet serves (TCO only).
    pub tco_utilization: f64,
    /// Leaf and spine share of the scale-out network per Gb/s of a chip's network, in USD.
    pub network_usd_per_gbps: f64,
}

impl Default for TcoTerms {
    /// 10 % a year (GPU financing's low end, T1), 195.94 USD per kW-month (CBRE's 2025 North
    /// American average, T2), every hour served, 10.62 USD per Gb/s (a 400 Gb/s InfiniBand
    /// fabric's switches, cables and optics per GPU, T5): docs/sources.md, "Total cost of
    /// ownership".
    fn default() -> TcoTerms {
        TcoTerms {
            rate_of_capital: 0.10,
            usd_per_kw_month: 195.94,
            tco_utilization: 1.0,
            // (1,728,000 USD of switches + 2,621,440 of cables) / 1,024 GPUs / 400 Gb/s (T5)
            network_usd_per_gbps: (1_728_000.0 + 2_621_440.0) / 1024.0 / 400.0,
        }
    }
}

impl Default for CostModel {
    /// Cloud view; for TCO 4 years (a depreciation period GPU clouds use, T1), PUE 1.3 and
    /// 0.10 USD per kWh (a modern air-cooled facility, an industrial electricity price), and
    /// [`TcoTerms::default`].
    fn default() -> CostModel {
        let t = TcoTerms::default();
        CostModel {
            view: CostView::Cloud,
            years: 4.0,
            pue: 1.3,
            usd_per_kwh: 0.10,
            rate_of_capital: t.rate_of_capital,
            usd_per_kw_month: t.usd_per_kw_month,
            tco_utilization: t.tco_utilization,
            network_usd_per_gbps: t.network_usd_per_gbps,
        }
    }
}

/// Why a chip-hour has no cost in a view: the figure that is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CostGap {
    /// The chip has no cloud price on its basis (`None`: the chip file names no basis).
    CloudPrice(Option<Arc<str>>),
    /// The TCO view needs a purchase price the chip file does not give.
    PurchasePrice,
    /// The TCO view needs the chip's power, which the chip file does not give.
    Power,
}

impl fmt::Display for CostGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CostGap::CloudPrice(Some(basis)) => write!(f, "no price on basis {basis}"),
            CostGap::CloudPrice(None) => f.write_str("no cloud price in the chip file"),
            CostGap::PurchasePrice => f.write_str("no purchase price for tco"),
            CostGap::Power => f.write_str("no power figure for tco"),
        }
    }
}

impl Serialize for CostGap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A step's cost in its chip's cost model, for the replica's chips.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCost {
    /// What the replica's chips cost per hour.
    pub usd_per_hour: Option<f64>,
    /// A million tokens at that price.
    pub usd_per_million_tokens: Option<f64>,
    /// The view `usd_per_hour` follows.
    pub basis: CostView,
    /// Why there is no cost in that view.
    pub note: Option<CostGap>,
    /// The cloud price basis the chip's price is on (`runpod-secure-on-demand-2026-02-26`),
    /// whatever the view, so that rows priced on different bases can be told apart.
    #[serde(skip)]
    pub price_basis: Option<Arc<str>>,
    /// Tokens per kWh the replica's chips draw, the facility's PUE included.
    pub tokens_per_kwh: Option<f64>,
    /// Tokens per second per MW at the wall (system power x PUE).
    pub tokens_per_s_per_mw: Option<f64>,
    /// The replica's TCO parts per hour, whatever the view (`None`: a figure is missing).
    pub parts: Option<TcoParts>,
    /// A TCO figure whose basis the chip file does not name.
    pub caveat: Option<String>,
}

impl StepCost {
    /// The cost of `chips` chips making `tokens_per_s`.
    pub fn of(chip: &Chip, chips: u64, tokens_per_s: Option<f64>) -> StepCost {
        let model = chip.cost_model();
        let usd_per_hour = chip.usd_per_hour().map(|usd| usd * chips as f64);
        let kwh_per_hour = model.kwh_per_hour(chip).map(|kwh| kwh * chips as f64);
        let per_million = tokens_per_s
            .zip(usd_per_hour.as_ref().ok())
            .map(|(rate, usd)| usd / 3600.0 / rate * 1e6);
        StepCost {
            usd_per_million_tokens: per_million,
            basis: model.view(),
            note: usd_per_hour.as_ref().err().cloned(),
            price_basis: chip.cloud_basis_shared(),
            usd_per_hour: usd_per_hour.ok(),
            tokens_per_kwh: tokens_per_s
                .zip(kwh_per_hour)
                .map(|(rate, kwh)| rate * 3600.0 / kwh),
            // kWh per hour is kW: tokens/s per kW x 1,000 = per MW.
            tokens_per_s_per_mw: tokens_per_s
                .zip(kwh_per_hour)
                .map(|(rate, kw)| rate / kw * 1e3),
            parts: model.tco_parts(chip).ok().map(|p| p.times(chips as f64)),
            caveat: (model.view() == CostView::Tco)
                .then(|| model.tco_caveat(chip))
                .flatten(),
        }
    }
}

/// How a report's chip is costed: the model and the cloud price basis its file names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Costing {
    /// The cost model the chip is priced in.
    pub model: CostModel,
    /// The basis the chip's cloud price is on (`runpod-secure-on-demand-2026-02-26`), if any.
    pub price_basis: Option<String>,
}

impl Costing {
    /// How `chip` is costed: its cost model and cloud price basis.
    pub fn of(chip: &Chip) -> Costing {
        Costing {
            model: chip.cost_model(),
            price_basis: chip.cloud_basis().map(str::to_owned),
        }
    }
}

impl CostModel {
    /// A cost model whose numbers are inside their ranges, or the first that is not.
    pub fn new(view: CostView, years: f64, pue: f64, usd_per_kwh: f64) -> Result<CostModel, Error> {
        let check = |range: &Range, v: f64| {
            range
                .check(v)
                .map_err(|e| Error::value(format!("{} {v}: {e}", range.field)))
        };
        check(&ranges::COST_YEARS, years)?;
        check(&ranges::COST_PUE, pue)?;
        check(&ranges::COST_USD_PER_KWH, usd_per_kwh)?;
        Ok(CostModel {
            view,
            years,
            pue,
            usd_per_kwh,
            ..CostModel::default()
        })
    }

    /// Which cost a chip-hour is priced at.
    pub fn view(&self) -> CostView {
        self.view
    }

    /// Years of service the TCO amortises the purchase over.
    pub fn years(&self) -> f64 {
        self.years
    }

    /// The facility's power usage effectiveness: power drawn from the grid over the chips' own.
    pub fn pue(&self) -> f64 {
        self.pue
    }

    /// Electricity price, in USD per kWh.
    pub fn usd_per_kwh(&self) -> f64 {
        self.usd_per_kwh
    }

    /// The model with the TCO's other terms, each inside its range, or the first that is not.
    pub fn with_terms(self, terms: TcoTerms) -> Result<CostModel, Error> {
        let check = |range: &Range, v: f64| {
            range
                .check(v)
                .map_err(|e| Error::value(format!("{} {v}: {e}", range.field)))
        };
        check(&ranges::COST_RATE_OF_CAPITAL, terms.rate_of_capital)?;
        check(&ranges::COST_USD_PER_KW_MONTH, terms.usd_per_kw_month)?;
        check(&ranges::COST_TCO_UTILIZATION, terms.tco_utilization)?;
        check(
            &ranges::COST_NETWORK_USD_PER_GBPS,
            terms.network_usd_per_gbps,
        )?;
        Ok(CostModel {
            rate_of_capital: terms.rate_of_capital,
            usd_per_kw_month: terms.usd_per_kw_month,
            tco_utilization: terms.tco_utilization,
            network_usd_per_gbps: terms.network_usd_per_gbps,
            ..self
        })
    }

    /// The TCO's terms beyond years, PUE and electricity.
    pub fn terms(&self) -> TcoTerms {
        TcoTerms {
            rate_of_capital: self.rate_of_capital,
            usd_per_kw_month: self.usd_per_kw_month,
            tco_utilization: self.tco_utilization,
            network_usd_per_gbps: self.network_usd_per_gbps,
        }
    }

    /// Yearly cost of capital, as a fraction.
    pub fn rate_of_capital(&self) -> f64 {
        self.rate_of_capital
    }

    /// Facility rent per kW of provisioned power and month, in USD.
    pub fn usd_per_kw_month(&self) -> f64 {
        self.usd_per_kw_month
    }

    /// Fraction of hours the fleet serves: the TCO of a served hour is the calendar hour's
    /// over it.
    pub fn tco_utilization(&self) -> f64 {
        self.tco_utilization
    }

    /// Leaf and spine share of the scale-out network per Gb/s, in USD.
    pub fn network_usd_per_gbps(&self) -> f64 {
        self.network_usd_per_gbps
    }

    /// The same assumptions in another view (`plan` shows both).
    pub fn with_view(self, view: CostView) -> CostModel {
        CostModel { view, ..self }
    }

    /// One chip-hour of `chip` in this model's view.
    pub fn usd_per_hour(&self, chip: &Chip) -> Result<f64, CostGap> {
        match self.view {
            CostView::Cloud => chip
                .price_usd_per_hour()
                .ok_or_else(|| CostGap::CloudPrice(chip.cloud_basis_shared())),
            CostView::Tco => Ok(self.tco_parts(chip)?.sum() / self.tco_utilization),
        }
    }

    /// Energy one chip-hour draws from the grid: the system's power per chip times the PUE,
    /// in kWh.
    pub fn kwh_per_hour(&self, chip: &Chip) -> Option<f64> {
        self.system_power_w(chip).map(|w| w / 1e3 * self.pue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::Source;

    fn chip(price: &str) -> Chip {
        let text = format!(
            "name: t\nmemory: {{capacity: 80 GB, bandwidth: 2 TB/s}}\nmatrix: {{bf16: 1 PFLOPS}}\n\
             power: 1000 W\n{price}"
        );
        Chip::load(&Source::from_text("t.yaml", &text)).unwrap()
    }

    #[test]
    fn tco_is_purchase_over_the_years_plus_power() {
        let c = chip("price: {basis: b 2026-01-01, cloud: 5 USD/h, purchase: 35040 USD}\n");
        let straight = TcoTerms {
            rate_of_capital: 0.0,
            usd_per_kw_month: 0.0,
            ..TcoTerms::default()
        };
        let tco = (CostModel::default().with_view(CostView::Tco))
            .with_terms(straight)
            .unwrap();
        // 35040 / (4 x 8760) = 1.0 USD/h; 1 kW x 1.3 x 0.10 = 0.13 USD/h; no network section
        assert!((tco.usd_per_hour(&c).unwrap() - 1.13).abs() < 1e-12);
        assert_eq!(CostModel::default().usd_per_hour(&c), Ok(5.0));
        // an annuity at 10 % over 4 years pays 0.10 / (1 - 1.1^-4) = 0.315471 a year
        let at_ten = tco.with_terms(TcoTerms {
            rate_of_capital: 0.1,
            ..straight
        });
        let capex = 35040.0 * 0.1 / (1.0 - 1.1f64.powi(-4)) / 8760.0;
        assert!((at_ten.unwrap().usd_per_hour(&c).unwrap() - (capex + 0.13)).abs() < 1e-12);
        // half the hours served: each served hour pays for two
        let half = tco.with_terms(TcoTerms {
            tco_utilization: 0.5,
            ..straight
        });
        assert!((half.unwrap().usd_per_hour(&c).unwrap() - 2.26).abs() < 1e-12);
    }

    #[test]
    fn a_missing_figure_says_which() {
        let c = chip("price: {basis: b 2026-01-01, cloud: none}\n");
        let gap = CostModel::default().usd_per_hour(&c).unwrap_err();
        assert_eq!(gap.to_string(), "no price on basis b 2026-01-01");
        let tco = CostModel::default().with_view(CostView::Tco);
        assert_eq!(tco.usd_per_hour(&c), Err(CostGap::PurchasePrice));
        assert!(CostModel::new(CostView::Tco, 4.0, 0.5, 0.1).is_err());
    }
}
