//! `--cost`, `--years`, `--pue`, `--usd-per-kwh`, `--price` and `--prices`: the cost model
//! and a buyer's own prices, put on the chips a command loaded.

use anyhow::Result;

use super::args::{CostArg, CostArgs};
use super::output::Inputs;
use crate::base::source::Source;
use crate::engine::chip::Chip;
use crate::engine::cost::{CostModel, CostView};
use crate::engine::prices::PriceBook;

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
