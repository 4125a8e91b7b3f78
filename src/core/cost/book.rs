//! A buyer's own prices: a YAML price book (`--prices FILE`) and quotes given one at a time
//! (`--price CHIP=USD/h`). A quote replaces the chip file's figure for that chip only; the
//! others keep their file's prices.
//!
//! ```yaml
//! h200: 3.10 USD/h                                  # a cloud quote per chip-hour
//! b200: {cloud: 5.20 USD/h, purchase: 38000 USD, power: 1000 W}
//! ```

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::base::builtin;
use crate::base::diagnostic::{did_you_mean, Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::ranges::{self, Range};
use crate::base::source::{is_name, Source};
use crate::base::units::{parse_quantity, QuantityKind};
use crate::core::chip::Chip;

/// The basis a buyer's cloud quote is named by in every output.
pub(crate) const QUOTE_BASIS: &str = "own quote";

/// One chip's entry in a price book: a cloud price alone, or any of the three figures.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum EntryFile {
    Cloud(Spanned<String>),
    Figures(FiguresFile),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FiguresFile {
    cloud: Option<Spanned<String>>,
    purchase: Option<Spanned<String>>,
    power: Option<Spanned<String>>,
}

/// The problem of a file that does not read as a price book, which quotes none of it.
const NOT_A_BOOK: &str = "does not parse as a price book (a YAML mapping of chip ids to \
     prices: `h200: 3.10 USD/h`); none of its text is shown, as it may be another file \
     (a price book's text is quoted where its name ends in `.yaml` or `.yml`)";

/// The problem of a top-level key that is not a chip id.
const NOT_A_CHIP_NAME: &str = "expected a chip id (letters, digits, `_`, `-`, `.`) as a key: \
     this file does not read as a price book, and its text is not shown";

/// Why a bad figure's value is not shown: the book may not be one.
const NOT_SHOWN: &str = "; the value is not shown, as the file does not read as a price book \
     (its name does not end in `.yaml` or `.yml`, and the key is no built-in chip)";

/// The parser's word for an entry of neither shape, told as what a price book expects. A
/// problem not quoted (the file does not read as a price book up to it), or in a file whose
/// name is not a YAML file's, is told with no word of the file.
fn entry_expected(mut problems: Diagnostics, yaml_name: bool) -> Diagnostics {
    for d in &mut problems.0 {
        if d.source_line.is_none() || !yaml_name {
            d.source_line = None;
            d.field.clear();
            d.message = NOT_A_BOOK.to_owned();
        } else if d.message.contains("untagged enum EntryFile") {
            d.message = "expected a cloud price per chip-hour (`3.10 USD/h`) or a mapping of \
                 `cloud`, `purchase` and `power`"
                .to_owned();
        }
    }
    problems
}

/// A buyer's figures for one chip; absent ones keep the chip file's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Quote {
    /// Cloud price per chip-hour, in USD.
    pub cloud_usd_per_hour: Option<f64>,
    /// Purchase price per chip, in USD.
    pub purchase_usd: Option<f64>,
    /// The chip's power, in W: the energy the TCO view prices.
    pub power_w: Option<f64>,
}

/// Quotes by chip id, in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceBook {
    quotes: IndexMap<String, Quote>,
}

impl PriceBook {
    /// Reads a price book; every bad figure is reported with its line and field.
    pub fn load(source: &Source) -> Result<PriceBook, Error> {
        let yaml_name = [".yaml", ".yml"].iter().any(|e| source.name.ends_with(e));
        let file: IndexMap<String, Spanned<EntryFile>> = source
            .parse()
            .map_err(|d| Error::Invalid(entry_expected(d, yaml_name)))?;
        let mut problems = Vec::new();
        let mut book = PriceBook::default();
        for (chip, entry) in &file {
            if !is_name(chip) {
                // Not a price book (a password file's line reads as a key): name nothing.
                let origin = Origin::of("", entry);
                problems.push(source.unquoted_problem(&origin, NOT_A_CHIP_NAME));
                continue;
            }
            // A figure's line and value are quoted only where the file reads as a price book
            // (the rule of `base::diagnostic`).
            let quoted = yaml_name || builtin::CHIPS.iter().any(|(id, _)| id == chip);
            // An untagged entry keeps no places inside it: a problem is placed at its start.
            let mut figure = |name: &str, range: &Range, v: Option<&Spanned<String>>, kind| {
                let text = v?.value.trim();
                let parsed = parse_quantity(text, kind)
                    .map_err(|e| e.to_string())
                    .and_then(|x| {
                        range
                            .check(x)
                            .map(|()| x)
                            .map_err(|e| format!("`{text}` is {e}"))
                    });
                let origin = Origin::of(format!("{chip}.{name}"), entry);
                parsed
                    .map_err(|e| {
                        problems.push(match quoted {
                            true => source.problem(&origin, e),
                            false => source.unquoted_problem(
                                &origin,
                                format!("expected {}{NOT_SHOWN}", kind.examples()),
                            ),
                        })
                    })
                    .ok()
            };
            let (cloud, purchase, power) = match &entry.value {
                EntryFile::Cloud(cloud) => (Some(cloud), None, None),
                EntryFile::Figures(f) => (f.cloud.as_ref(), f.purchase.as_ref(), f.power.as_ref()),
            };
            let quote = Quote {
                cloud_usd_per_hour: figure(
                    "cloud",
                    &ranges::PRICE_CLOUD,
                    cloud,
                    QuantityKind::Price,
                ),
                purchase_usd: figure(
                    "purchase",
                    &ranges::PRICE_PURCHASE,
                    purchase,
                    QuantityKind::Money,
                ),
                power_w: figure("power", &ranges::POWER, power, QuantityKind::Power),
            };
            book.quotes.insert(chip.clone(), quote);
        }
        if problems.is_empty() {
            Ok(book)
        } else {
            Err(Error::Invalid(Diagnostics(problems)))
        }
    }

    /// Adds a cloud quote for `chip`, replacing the book's for that chip.
    pub fn quote_cloud(&mut self, chip: &str, usd_per_hour: f64) {
        self.quotes
            .entry(chip.to_owned())
            .or_default()
            .cloud_usd_per_hour = Some(usd_per_hour);
    }

    /// `chips` at the book's figures. A quote for a chip that is neither among `chips` nor
    /// built in is an error (a misspelt name would otherwise leave the file's price in place
    /// unnoticed); one for a built-in chip not asked about is passed over.
    pub fn apply(&self, chips: Vec<Chip>) -> Result<Vec<Chip>, Error> {
        for name in self.quotes.keys() {
            let known = chips.iter().any(|c| c.id() == name)
                || builtin::CHIPS.iter().any(|(id, _)| id == name);
            if !known {
                let ids = chips
                    .iter()
                    .map(|c| c.id())
                    .chain(builtin::CHIPS.iter().map(|(id, _)| *id));
                return Err(Error::value(format!(
                    "a price is given for chip `{name}`, which is neither a built-in chip nor one of this command's{}",
                    did_you_mean(name, ids)
                )));
            }
        }
        Ok(chips
            .into_iter()
            .map(|chip| match self.quotes.get(chip.id()).cloned() {
                None => chip,
                Some(q) => {
                    let mut chip = chip;
                    if let Some(usd) = q.cloud_usd_per_hour {
                        chip = chip.with_cloud_price(usd, QUOTE_BASIS);
                    }
                    if let Some(usd) = q.purchase_usd {
                        chip = chip.with_purchase_price(usd);
                    }
                    if let Some(w) = q.power_w {
                        chip = chip.with_power(w);
                    }
                    chip
                }
            })
            .collect())
    }
}
