//! The ranges of the numbers that price a chip-hour: a chip file's `price` section and the
//! cost flags.

use super::{range, Range};

/// A chip file's `price.cloud`: USD per chip-hour on the file's cloud price basis.
pub const PRICE_CLOUD: Range = range(
    "price.cloud",
    "USD/h",
    1e-3,
    1e4,
    "a tenth of a cent to 10,000 USD per chip-hour (`none` for no price on the basis)",
);
/// A chip file's `price.purchase`: USD for the whole system its `purchase_gpus` GPUs come in; also
/// a what-if chip's purchase price per GPU.
pub const PRICE_PURCHASE: Range = range(
    "price.purchase",
    "USD",
    1.0,
    1e10,
    "one dollar to 10 billion USD for the system `purchase_gpus` GPUs come in",
);
/// A chip file's `price.purchase_gpus`: the GPUs the purchase price buys, which it is divided over.
pub const PRICE_PURCHASE_GPUS: Range = range(
    "price.purchase_gpus",
    "",
    1.0,
    1e6,
    "one GPU to a million in the system the purchase price buys (72 in an NVL72 rack)",
);
/// `--years`: the purchase price's amortisation period in the TCO view.
pub const COST_YEARS: Range = range(
    "--years",
    "years",
    0.1,
    50.0,
    "a month to half a century of service",
);
/// `--pue`: the facility's power usage effectiveness.
pub const COST_PUE: Range = range(
    "--pue",
    "",
    1.0,
    5.0,
    "1 (every watt reaches the chips) to 5 (an inefficient facility); 1.1-1.6 today",
);
/// `--usd-per-kwh`: the electricity price.
pub const COST_USD_PER_KWH: Range = range(
    "--usd-per-kwh",
    "USD/kWh",
    1e-4,
    10.0,
    "a hundredth of a cent to 10 USD per kWh",
);
/// `--rate-of-capital`: the yearly cost of the money a purchase ties up, as a fraction.
pub const COST_RATE_OF_CAPITAL: Range = range(
    "--rate-of-capital",
    "per year",
    0.0,
    1.0,
    "0 (straight division over the years) to 100 % a year; GPU loans run 0.10-0.17",
);
/// `--usd-per-kw-month`: the facility's rent on provisioned power.
pub const COST_USD_PER_KW_MONTH: Range = range(
    "--usd-per-kw-month",
    "USD/kW-month",
    0.0,
    2000.0,
    "0 (an owned site, its cost elsewhere) to 2,000 USD per kW-month; about 196 in 2025",
);
/// `--tco-utilization`: the fraction of hours a fleet serves.
pub const COST_TCO_UTILIZATION: Range = range(
    "--tco-utilization",
    "",
    0.01,
    1.0,
    "1 % to every hour of the year",
);
/// `--network-usd-per-gbps`: the scale-out network's leaf and spine share per Gb/s of an
/// accelerator's network bandwidth.
pub const COST_NETWORK_USD_PER_GBPS: Range = range(
    "--network-usd-per-gbps",
    "USD per Gb/s",
    0.0,
    1000.0,
    "0 (no scale-out network) to 1,000 USD per Gb/s; about 11 for a 400 Gb/s InfiniBand fabric",
);
/// `--power-budget-mw`: the power at the wall a plan's fleet may draw.
pub const POWER_BUDGET_MW: Range = range(
    "--power-budget-mw",
    "MW",
    1e-4,
    1e4,
    "100 W to 10 GW at the wall",
);
/// `--price CHIP=USD/h`: a buyer's own quote per chip-hour.
pub const COST_QUOTE: Range = Range {
    field: "--price",
    why: "a buyer's quote, a tenth of a cent to 10,000 USD per chip-hour",
    ..PRICE_CLOUD
};
/// `--power-cap W`: the board power limit an accelerator is held to (`nvidia-smi -pl`).
pub const POWER_CAP: Range = range(
    "--power-cap",
    "W",
    1.0,
    1e5,
    "1 W to 100 kW per accelerator, within the chip's measured power curve",
);
/// A chip file's `power_curve.points`: the compute clock at a power limit relative to the
/// clock at the chip's TDP.
pub const POWER_CURVE_CLOCK: Range = range(
    "power_curve.points",
    "",
    0.01,
    1.0,
    "a clock between 1 % and all of the clock at the TDP",
);
