//! `--cost`, `--years`, `--pue`, `--usd-per-kwh`, `--price` and `--prices`: the cost model
//! and a buyer's own prices, put on the chips a command loaded.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::output::Inputs;
use crate::base::parse::{number_in, parse_quote};
use crate::base::ranges;
use crate::base::source::Source;
use crate::core::chip::Chip;
use crate::core::cost::book::PriceBook;
use crate::core::cost::{CostModel, CostView};

/// How a chip-hour is costed, and a buyer's own prices.
#[derive(Args, Clone)]
pub(crate) struct CostArgs {
    /// Cost view of the $ columns: `cloud` (the chip file's on-demand price on its basis) or
    /// `tco` (purchase / (years x 8760 h) + power x PUE x USD per kWh, at 100 % utilisation)
    #[arg(long = "cost", value_enum, default_value_t = CostArg::Cloud)]
    pub(crate) view: CostArg,
    /// TCO: years the purchase is amortised over
    #[arg(long, value_name = "Y", default_value_t = 4.0,
          value_parser = |t: &str| number_in(t, &ranges::COST_YEARS))]
    pub(crate) years: f64,
    /// TCO: the facility's power usage effectiveness
    #[arg(long, default_value_t = 1.3, value_parser = |t: &str| number_in(t, &ranges::COST_PUE))]
    pub(crate) pue: f64,
    /// TCO: electricity price
    #[arg(long, value_name = "USD", default_value_t = 0.10,
          value_parser = |t: &str| number_in(t, &ranges::COST_USD_PER_KWH))]
    pub(crate) usd_per_kwh: f64,
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
    /// Total cost of ownership: purchase amortised plus power
    Tco,
}

impl CostArgs {
    /// The price book is one of the command's inputs: no output may overwrite it.
    pub(crate) fn inputs(&self, inputs: &mut Inputs) {
        if let Some(path) = &self.book {
            inputs.path(path);
        }
    }

    /// `chips` at the buyer's prices (the book, then each `--price`), costed in the model the
    /// flags describe.
    pub(crate) fn apply(&self, chips: Vec<Chip>) -> Result<Vec<Chip>> {
        let view = match self.view {
            CostArg::Cloud => CostView::Cloud,
            CostArg::Tco => CostView::Tco,
        };
        if view == CostView::Tco && !self.quotes.is_empty() {
            // A quote that prices nothing would leave the buyer's figure silently unused.
            anyhow::bail!(
                "--price gives a cloud price per chip-hour, which --cost tco does not use (it \
                 costs the purchase and the power): give those in a --prices book (CHIP: \
                 {{purchase: USD, power: W}}), or leave out --cost tco"
            );
        }
        let model = CostModel::new(view, self.years, self.pue, self.usd_per_kwh)?;
        let mut book = match &self.book {
            Some(path) => PriceBook::load(&Source::read(path)?)?,
            None => PriceBook::default(),
        };
        for (chip, usd) in &self.quotes {
            book.quote_cloud(chip, *usd);
        }
        let chips = book.apply(chips)?;
        Ok(chips
            .into_iter()
            .map(|c| c.with_cost_model(model))
            .collect())
    }
}
