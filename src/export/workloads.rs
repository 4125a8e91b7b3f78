//! The list of built-in workloads (`stepcost workloads`): a table of the models and one of
//! the kernels for people, or one row per workload in CSV or JSON.

use std::io::{self, Write};

use comfy_table::{presets, CellAlignment, Table};

use super::format::OutputFormat;
use super::rows::{self, Row, Shape, WorkloadRow};
use super::shaped;
use super::style::for_terminal;
use crate::study::models::{WorkloadKind, WorkloadSummary};

/// Writes `workloads` in `format`, cut to `shape`.
pub(crate) fn write_workloads(
    out: &mut dyn Write,
    workloads: &[WorkloadSummary],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows: Vec<WorkloadRow> = workloads.iter().map(WorkloadRow).collect();
    if !shape.is_whole() {
        return shaped::write(out, &rows, format, shape, true);
    }
    let rows = rows.iter().map(|r| r as &dyn Row);
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, workloads)),
        OutputFormat::Csv | OutputFormat::CsvRaw => rows::write_rows(out, rows, format.csv_text()),
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = rows.map(rows::json_value).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// The models' table, then the kernels', then what the counts mean.
fn table(out: &mut dyn Write, workloads: &[WorkloadSummary]) -> io::Result<()> {
    for (kind, title) in [
        (WorkloadKind::Model, "models"),
        (WorkloadKind::Kernel, "kernels"),
    ] {
        let of_kind: Vec<&WorkloadSummary> = workloads.iter().filter(|w| w.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let mut table = Table::new();
        table.load_style(presets::UTF8_BORDERS_ONLY);
        table.set_header(vec![
            title,
            "name",
            "params",
            "active",
            "layers",
            "hidden",
            "types (weight/activation/kv)",
        ]);
        for w in of_kind {
            let dim = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x}"));
            table.add_row(vec![
                w.id.clone(),
                w.name.clone(),
                count(w.total_params),
                count(w.active_params),
                dim(w.layers),
                dim(w.hidden),
                w.types.brief(),
            ]);
        }
        for i in 2..6 {
            if let Some(column) = table.column_mut(i) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        writeln!(out, "{table}")?;
    }
    writeln!(
        out,
        "params: weight elements in all; active: those one sequence's decode step reads (a MoE\n\
         layer's top_k experts, one row of the input embedding); both at the file's defaults\n\
         without parallelism; `--format csv` has every type key.\n\
         `stepcost show workload NAME` prints a file to copy and edit"
    )
}

/// A parameter count for people: `70.55B`, `125.8M`, `4096`.
fn count(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2}B", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else {
        format!("{x}")
    }
}
