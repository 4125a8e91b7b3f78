//! The total cost of ownership of one accelerator-hour as four parts of one system, none
//! counted twice: `capex` (the system per accelerator, as an annuity over the years of service
//! at the rate of capital), `network` (what the system price leaves out: the leaf and spine
//! share of the scale-out network, by the chip's own network bandwidth), `power` (the system's
//! power at the wall: power x PUE x USD per kWh) and `colo` (the facility's rent on the
//! provisioned power, per kW-month). A chip whose file gives the accelerator alone is put on
//! the system basis by the host shares below (docs/sources.md, "Total cost of ownership").

use serde::Serialize;

use super::{CostGap, CostModel, HOURS_PER_YEAR};
use crate::core::chip::{Chip, PowerBasis, PurchaseBasis};

/// The host share of an 8-GPU server per accelerator, in USD: what a system price adds to an
/// accelerator sold alone (CPUs, memory, storage, chassis, scale-up baseboard and scale-out
/// NICs). Derived (docs/sources.md, T3): an 8 x H100 server with its 8 x 400 Gb/s NICs quoted
/// at 317,000 USD, less 8 H100 at 30,000 (C1), over 8 GPUs: (317,000 - 240,000) / 8.
pub const HOST_USD: f64 = (317_000.0 - 8.0 * 30_000.0) / 8.0;

/// The host's share of a system's power per accelerator, in W: what a system draws beyond its
/// accelerators' TDP. Derived (docs/sources.md, T4): a DGX H100's 10.2 kW maximum (W2) less
/// its 8 x 700 W GPUs (S1), over 8 GPUs: (10,200 - 5,600) / 8 = 575 W.
pub const HOST_W: f64 = (10_200.0 - 8.0 * 700.0) / 8.0;

/// One accelerator's cost per hour of the calendar, by part, in USD.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TcoParts {
    /// The system per accelerator, as an annuity over the years at the rate of capital.
    pub capex_usd_per_hour: f64,
    /// The scale-out network the system price leaves out, as an annuity the same way.
    pub network_usd_per_hour: f64,
    /// Energy at the wall: system power x PUE x USD per kWh.
    pub power_usd_per_hour: f64,
    /// Facility rent on the provisioned (system) power.
    pub colo_usd_per_hour: f64,
}

impl TcoParts {
    /// The four parts together.
    pub fn sum(&self) -> f64 {
        self.capex_usd_per_hour
            + self.network_usd_per_hour
            + self.power_usd_per_hour
            + self.colo_usd_per_hour
    }

    /// The parts of `n` accelerators.
    pub fn times(self, n: f64) -> TcoParts {
        TcoParts {
            capex_usd_per_hour: self.capex_usd_per_hour * n,
            network_usd_per_hour: self.network_usd_per_hour * n,
            power_usd_per_hour: self.power_usd_per_hour * n,
            colo_usd_per_hour: self.colo_usd_per_hour * n,
        }
    }
}

impl CostModel {
    /// The capital recovery factor: the yearly payment that repays one dollar over
    /// `years` at `rate_of_capital` (straight division where the rate is zero).
    pub fn annuity_per_year(&self) -> f64 {
        let (r, n) = (self.rate_of_capital(), self.years());
        if r == 0.0 {
            1.0 / n
        } else {
            r / (1.0 - (1.0 + r).powf(-n))
        }
    }

    /// The system's purchase price per accelerator: the file's price, plus the host share
    /// where it buys the accelerator alone.
    pub fn system_purchase_usd(&self, chip: &Chip) -> Result<f64, CostGap> {
        let usd = chip.purchase_usd().ok_or(CostGap::PurchasePrice)?;
        Ok(match chip.purchase_basis() {
            Some(PurchaseBasis::Accelerator) => usd + HOST_USD,
            _ => usd,
        })
    }

    /// The system's power per accelerator, in W: the file's figure, plus the host share
    /// where it is the accelerator's TDP.
    pub fn system_power_w(&self, chip: &Chip) -> Option<f64> {
        let w = chip.power_w()?;
        Some(match chip.power_basis() {
            Some(PowerBasis::Accelerator) => w + HOST_W,
            _ => w,
        })
    }

    /// The scale-out network per accelerator the system price leaves out, in USD: the leaf
    /// and spine share by the chip's network bandwidth (none for a chip without a network).
    pub fn network_usd(&self, chip: &Chip) -> f64 {
        chip.network_bytes_per_s()
            .map_or(0.0, |b| b * 8.0 / 1e9 * self.network_usd_per_gbps())
    }

    /// One accelerator's TCO parts per hour of the calendar, or the figure that is missing.
    pub fn tco_parts(&self, chip: &Chip) -> Result<TcoParts, CostGap> {
        let purchase = self.system_purchase_usd(chip)?;
        let kw = self.system_power_w(chip).ok_or(CostGap::Power)? / 1e3;
        let per_hour = self.annuity_per_year() / HOURS_PER_YEAR;
        Ok(TcoParts {
            capex_usd_per_hour: purchase * per_hour,
            network_usd_per_hour: self.network_usd(chip) * per_hour,
            power_usd_per_hour: kw * self.pue() * self.usd_per_kwh(),
            colo_usd_per_hour: kw * self.usd_per_kw_month() * 12.0 / HOURS_PER_YEAR,
        })
    }

    /// What a TCO of `chip` leaves uncertain: a basis its file does not name.
    pub fn tco_caveat(&self, chip: &Chip) -> Option<String> {
        let missing: Vec<&str> = [
            (chip.purchase_usd().is_some() && chip.purchase_basis().is_none())
                .then_some("purchase_basis (capex may lack the host share)"),
            (chip.power_w().is_some() && chip.power_basis().is_none())
                .then_some("power_basis (power may lack the host share)"),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!missing.is_empty()).then(|| format!("tco: no {}", missing.join(", no ")))
    }
}
