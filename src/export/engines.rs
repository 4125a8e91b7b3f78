//! The list of engines (`stepcost engines`): a table of the serving software stepcost knows
//! for people, or one row per engine in CSV or JSON.

use std::io::{self, Write};

use comfy_table::{presets, Table};

use super::format::OutputFormat;
use super::rows::{self, EngineRow, Row, Shape};
use super::shaped;
use super::style::for_terminal;
use crate::core::engine::Engine;

/// Writes `engines` in `format`, cut to `shape`.
pub(crate) fn write_engines(
    out: &mut dyn Write,
    engines: &[&Engine],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows: Vec<EngineRow> = engines.iter().map(|e| EngineRow(e)).collect();
    if !shape.is_whole() {
        return shaped::write(out, &rows, format, shape, true);
    }
    let dyn_rows = rows.iter().map(|r| r as &dyn Row);
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, &rows)),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, dyn_rows, format.csv_text())
        }
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = dyn_rows.map(rows::json_value).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

fn table(out: &mut dyn Write, rows: &[EngineRow]) -> io::Result<()> {
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    table.set_header(vec![
        "engine",
        "name",
        "host hidden",
        "graphs (batch)",
        "admission",
        "max seqs",
        "max tokens",
        "block",
        "fp8 choice",
    ]);
    for r in rows {
        let t = r.0.terms();
        table.add_row(vec![
            r.0.id().to_owned(),
            r.0.name().to_owned(),
            format!("{}", t.host.map_or(t.host_overlap, |h| h.overlap)),
            r.graphs(),
            r.admission().to_owned(),
            t.limits.max_sequences.to_string(),
            t.limits.max_batched_tokens.to_string(),
            t.limits.block_tokens.to_string(),
            r.fp8().to_owned(),
        ]);
    }
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "host hidden: share of the host work the GPU's previous step hides; graphs: captured batch\n\
         sizes (eager beyond); the terms refine expected mode only, and every number's source is\n\
         in the engine's file (`stepcost show engine NAME`) and docs/sources.md"
    )
}
