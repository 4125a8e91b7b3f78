//! Rows cut to a [`Shape`] (`--columns`, `--digits`) in every format: CSV and JSON of the
//! chosen columns, or for a terminal a table of them, one line per row, each cell as the CSV
//! writes it (units as the column names say) and numbers to 4 significant digits unless
//! `--digits` says otherwise.

use std::io::{self, Write};

use comfy_table::{presets, CellAlignment, Table};

use super::format::OutputFormat;
use super::rows::{self, Row, Selected, Selection, Shape, StatsRow, Value};
use super::style::for_terminal;
use crate::study::validate::ErrorStats;

/// Digits a table of chosen columns shows unless told: it is read, not computed with.
const TABLE_DIGITS: u8 = 4;

/// `rows` cut to `shape`; JSON is an array, or with `array` false the first row's object.
pub(super) fn write<R: Row>(
    out: &mut dyn Write,
    rows: &[R],
    format: OutputFormat,
    shape: &Shape,
    array: bool,
) -> io::Result<()> {
    let Some(shown) = selected(rows, format, shape)? else {
        return empty(out, format, array);
    };
    let shown: Vec<Selected> = rows.iter().map(|r| shown.of(r)).collect();
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, &shown)),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, shown.iter().map(|r| r as &dyn Row), format.csv_text())
        }
        OutputFormat::Json => {
            let values: Vec<serde_json::Value> =
                shown.iter().map(|r| rows::json_value(r)).collect();
            let value = match array {
                true => serde_json::Value::Array(values),
                false => values.into_iter().next().unwrap_or_default(),
            };
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// A validation's cases cut to `shape`; JSON keeps its error statistics beside them.
pub(super) fn validation<R: Row>(
    out: &mut dyn Write,
    cases: &[R],
    stats: &[ErrorStats],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    if format != OutputFormat::Json {
        return write(out, cases, format, shape, true);
    }
    let shown = selected(cases, format, shape)?;
    let cases: Vec<serde_json::Value> = match &shown {
        Some(shown) => cases
            .iter()
            .map(|r| rows::json_value(&shown.of(r)))
            .collect(),
        None => Vec::new(),
    };
    let value = serde_json::json!({
        "cases": cases,
        "errors": stats.iter().map(|s| rows::json_value(&StatsRow(s))).collect::<Vec<_>>(),
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}

/// The selection for rows like `rows[0]`; `None` when there are no rows.
fn selected<R: Row>(
    rows: &[R],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<Option<Selection>> {
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let mut shape = shape.clone();
    if format == OutputFormat::Table && shape.digits.is_none() {
        shape.digits = Some(TABLE_DIGITS);
    }
    Selection::new(&shape, first)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

fn empty(out: &mut dyn Write, format: OutputFormat, array: bool) -> io::Result<()> {
    match format {
        OutputFormat::Json if array => writeln!(out, "[]"),
        _ => Ok(()),
    }
}

/// One line per row, a column per chosen column, numbers right-aligned.
fn table(out: &mut dyn Write, shown: &[Selected]) -> io::Result<()> {
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    let mut header = Vec::new();
    let mut numeric = Vec::new();
    if let Some(first) = shown.first() {
        first.visit(&mut |name, value| {
            header.push(name.to_owned());
            numeric.push(matches!(value, Value::Num(_) | Value::Int(_)));
        });
    }
    table.set_header(header);
    for row in shown {
        let mut cells = Vec::new();
        row.visit(&mut |_, value| cells.push(text(value)));
        table.add_row(cells);
    }
    for (i, numeric) in numeric.into_iter().enumerate() {
        if let (true, Some(column)) = (numeric, table.column_mut(i)) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{table}")
}

/// A cell as text: numbers as the CSV writes them.
fn text(value: Value<'_>) -> String {
    match value {
        Value::Text(s) => s.to_owned(),
        Value::Num(x) => {
            let mut bytes = Vec::new();
            rows::push_number(&mut bytes, x);
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Value::Int(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Empty => String::new(),
    }
}
