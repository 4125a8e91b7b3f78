//! A command's rows in the format asked: CSV with a header, a JSON array, the command's own
//! table for a terminal, or, cut to `--columns`/`--digits`, as `shaped` writes them.

use std::io::{self, Write};

use super::format::OutputFormat;
use super::rows::{self, Row, Shape};
use super::shaped;
use super::style::for_terminal;

/// `rows` as CSV or a JSON array, or the human table `table` writes.
pub(super) fn write_list<R: Row>(
    out: &mut dyn Write,
    rows: &[R],
    format: OutputFormat,
    shape: &Shape,
    table: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    if !shape.is_whole() {
        return shaped::write(out, rows, format, shape, true);
    }
    match format {
        OutputFormat::Table => for_terminal(out, table),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, rows.iter().map(|r| r as &dyn Row), format.csv_text())
        }
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = rows.iter().map(|r| rows::json_value(r)).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}
