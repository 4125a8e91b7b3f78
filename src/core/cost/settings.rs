//! How a command asks for its costs: the view, the TCO's assumptions and a buyer's own cloud
//! quotes, as one typed value whose defaults are [`CostModel::default`]'s. The command line's
//! cost flags, a scenario file's `cost` and `prices` keys and the web page's fields all become
//! a [`CostSettings`], which puts the prices and the model on the chips a command loaded.

use super::book::PriceBook;
use super::{CostModel, CostView, TcoTerms};
use crate::base::error::Error;
use crate::core::chip::Chip;

/// The cost view, the TCO's assumptions and a buyer's cloud quotes. The figures are checked
/// against their ranges when the model is made ([`CostSettings::model`]), not before.
#[derive(Debug, Clone, PartialEq)]
pub struct CostSettings {
    /// What a chip-hour is priced at: the cloud price or the total cost of ownership.
    pub view: CostView,
    /// TCO: years the purchase is amortised over.
    pub years: f64,
    /// TCO: the facility's power usage effectiveness.
    pub pue: f64,
    /// TCO: the electricity price, in USD per kWh.
    pub usd_per_kwh: f64,
    /// TCO: the rate of capital, the facility's rent, the fraction of hours served and the
    /// network's price per Gb/s.
    pub terms: TcoTerms,
    /// A buyer's cloud prices per chip-hour (`CHIP=USD/h`) in the order given; a later quote
    /// for a chip replaces an earlier one and the price book's.
    pub quotes: Vec<(String, f64)>,
}

impl Default for CostSettings {
    /// [`CostModel::default`]'s view and assumptions, and no quote.
    fn default() -> CostSettings {
        let model = CostModel::default();
        CostSettings {
            view: model.view(),
            years: model.years(),
            pue: model.pue(),
            usd_per_kwh: model.usd_per_kwh(),
            terms: model.terms(),
            quotes: Vec::new(),
        }
    }
}

impl CostSettings {
    /// The cost model, or why there is none: quotes under the TCO view (which does not use a
    /// cloud price, so they would go silently unused), or a figure outside its range.
    pub fn model(&self) -> Result<CostModel, Error> {
        if self.view == CostView::Tco && !self.quotes.is_empty() {
            return Err(Error::value(
                "--price gives a cloud price per chip-hour, which --cost tco does not use (it \
                 costs the purchase and the power): give those in a --prices book (CHIP: \
                 {purchase: USD, power: W}), or leave out --cost tco",
            ));
        }
        CostModel::new(self.view, self.years, self.pue, self.usd_per_kwh)?.with_terms(self.terms)
    }

    /// `chips` at the buyer's prices (the price book `read_book` gives, then each quote),
    /// costed in [`CostSettings::model`]. The book is read only once the settings pass their
    /// checks, so that a refused setting is told before a file's problem.
    pub fn apply(
        &self,
        chips: Vec<Chip>,
        read_book: impl FnOnce() -> Result<PriceBook, Error>,
    ) -> Result<Vec<Chip>, Error> {
        let model = self.model()?;
        let mut book = read_book()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::Source;

    fn chip(id: &str) -> Chip {
        let text =
            "name: t\nmemory: {capacity: 80 GB, bandwidth: 2 TB/s}\nmatrix: {bf16: 1 PFLOPS}\n\
             power: 1000 W\nprice: {basis: b 2026-01-01, cloud: 5 USD/h, purchase: 35040 USD}\n";
        Chip::load(&Source::from_text(&format!("{id}.yaml"), text)).unwrap()
    }

    #[test]
    fn defaults_are_the_models() {
        let settings = CostSettings::default();
        assert_eq!(settings.model().unwrap(), CostModel::default());
        assert_eq!(
            (
                settings.view,
                settings.years,
                settings.pue,
                settings.usd_per_kwh
            ),
            (CostView::Cloud, 4.0, 1.3, 0.10)
        );
        assert!(settings.quotes.is_empty());
    }

    #[test]
    fn quotes_replace_the_book_and_the_file_in_order() {
        let settings = CostSettings {
            quotes: vec![("t".into(), 2.0), ("t".into(), 3.0)],
            ..CostSettings::default()
        };
        let mut book = PriceBook::default();
        book.quote_cloud("t", 9.0);
        let chips = settings.apply(vec![chip("t")], || Ok(book)).unwrap();
        assert_eq!(chips[0].usd_per_hour(), Ok(3.0));
        // Without a quote, the chip file's 5 USD/h.
        let chips = (CostSettings::default())
            .apply(vec![chip("t")], || Ok(PriceBook::default()))
            .unwrap();
        assert_eq!(chips[0].usd_per_hour(), Ok(5.0));
    }

    #[test]
    fn tco_costs_purchase_and_power_in_the_settings_assumptions() {
        let settings = CostSettings {
            view: CostView::Tco,
            years: 2.0,
            pue: 1.5,
            usd_per_kwh: 0.2,
            terms: TcoTerms {
                rate_of_capital: 0.0,
                usd_per_kw_month: 0.0,
                ..TcoTerms::default()
            },
            quotes: Vec::new(),
        };
        let chips = settings
            .apply(vec![chip("t")], || Ok(PriceBook::default()))
            .unwrap();
        // 35040 / (2 x 8760) = 2.0 USD/h; 1 kW x 1.5 x 0.2 = 0.3 USD/h
        assert!((chips[0].usd_per_hour().unwrap() - 2.3).abs() < 1e-12);
    }

    #[test]
    fn quotes_under_tco_are_refused_before_the_book_is_read() {
        let settings = CostSettings {
            view: CostView::Tco,
            quotes: vec![("t".into(), 2.0)],
            ..CostSettings::default()
        };
        let refused = settings
            .apply(vec![chip("t")], || panic!("the book was read"))
            .unwrap_err();
        assert!(refused
            .to_string()
            .starts_with("--price gives a cloud price"));
        let out_of_range = CostSettings {
            pue: 0.5,
            ..CostSettings::default()
        };
        assert!(out_of_range.model().is_err());
    }
}
