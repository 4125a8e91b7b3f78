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
/// `--price CHIP=USD/h`: a buyer's own quote per chip-hour.
pub const COST_QUOTE: Range = Range {
    field: "--price",
    why: "a buyer's quote, a tenth of a cent to 10,000 USD per chip-hour",
    ..PRICE_CLOUD
};
