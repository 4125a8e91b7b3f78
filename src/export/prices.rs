//! `stepcost prices`: the cloud price books the chips are priced on, each with its date and
//! the chips it prices or lists without a price, as a table, CSV or JSON (one row per chip).

use std::io::{self, Write};

use comfy_table::{presets, Table};

use super::format::OutputFormat;
use super::rows::{self, Row, Value};
use super::style::for_terminal;
use crate::core::cost::books::CloudBook;

/// One chip on one book.
struct PriceRow<'a> {
    book: &'a CloudBook,
    chip: &'a str,
    usd_per_hour: Option<f64>,
}

impl Row for PriceRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        f("price_basis", Value::Text(&self.book.basis));
        f("date", Value::Text(self.book.date.as_deref().unwrap_or("")));
        f("chip", Value::Text(self.chip));
        f("usd_per_hour", self.usd_per_hour.into());
    }
}

/// Writes the books in `format`.
pub(crate) fn write_prices(
    out: &mut dyn Write,
    books: &[CloudBook],
    format: OutputFormat,
) -> io::Result<()> {
    let rows: Vec<PriceRow> = books
        .iter()
        .flat_map(|book| {
            let priced = (book.priced.iter()).map(move |(chip, usd)| PriceRow {
                book,
                chip,
                usd_per_hour: Some(*usd),
            });
            let unpriced = (book.unpriced.iter()).map(move |chip| PriceRow {
                book,
                chip,
                usd_per_hour: None,
            });
            priced.chain(unpriced)
        })
        .collect();
    let rows = rows.iter().map(|r| r as &dyn Row);
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, books)),
        OutputFormat::Csv | OutputFormat::CsvRaw => rows::write_rows(out, rows, format.csv_text()),
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = rows.map(rows::json_value).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// A row per chip on each book: the basis and its date, the chip, its price or `none`.
fn table(out: &mut dyn Write, books: &[CloudBook]) -> io::Result<()> {
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    table.set_header(vec!["price basis", "date", "chip", "USD per chip-hour"]);
    for book in books {
        let date = book.date.clone().unwrap_or_else(|| "-".to_owned());
        let priced = (book.priced.iter()).map(|(chip, usd)| (chip, format!("{usd}")));
        let unpriced = (book.unpriced.iter()).map(|chip| (chip, "none".to_owned()));
        for (chip, usd) in priced.chain(unpriced) {
            table.add_row(vec![book.basis.clone(), date.clone(), chip.clone(), usd]);
        }
    }
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "each chip is priced on one basis (its file's `price.basis`); a chip with no price on\n\
         any basis says so in its file, with the searches made; sources: docs/sources.md, Prices"
    )
}
