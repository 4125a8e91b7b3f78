//! What `run` writes: a priced scenario's summary, and with `--per-op` every kernel, as a
//! table for people (with the bands and the request's latencies), CSV or JSON.

use std::io::{self, Write};

use comfy_table::Table;

use super::advice::request_memory;
use super::costs::cost_rows;
use super::format::OutputFormat;
use super::numbers::{banded_rate, banded_rate_ends, banded_time, banded_time_ends, number};
use super::rows::{
    self, band_of, constant_value, kernel_rows, request_band_of, summary_row, ParamCells, Row,
    Shape,
};
use super::shaped;
use super::step::{kernel_cells, write_scenario};
use super::style::{align_right, for_terminal, new_table};
use crate::base::units::{human, percent, three_significant};
use crate::core::timing::{Constant, ImagesSummary, RequestSummary, StepReport};
use crate::study::serving::ServingBand;

/// Writes a run: its summary, and with `per_op` every kernel.
pub fn write_run(
    out: &mut dyn Write,
    report: &StepReport,
    per_op: bool,
    format: OutputFormat,
) -> io::Result<()> {
    write_run_shaped(out, report, per_op, format, &Shape::default())
}

/// [`write_run`] with the rows cut to `shape`: the summary's columns, or with `per_op` the
/// kernels' (then JSON is an array of kernel objects, the summary left out).
pub(crate) fn write_run_shaped(
    out: &mut dyn Write,
    report: &StepReport,
    per_op: bool,
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let cells = ParamCells::of(report);
    let summary = summary_row(report, &cells);
    let kernels = kernel_rows(report, &cells);
    if !shape.is_whole() {
        return match per_op {
            true => shaped::write(out, &kernels, format, shape, true),
            false => shaped::write(out, &[summary], format, shape, false),
        };
    }
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, report, per_op)),
        OutputFormat::Csv | OutputFormat::CsvRaw if per_op => rows::write_rows(
            out,
            kernels.iter().map(|r| r as &dyn Row),
            format.csv_text(),
        ),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, [&summary as &dyn Row], format.csv_text())
        }
        OutputFormat::Json => {
            let mut value = rows::json_value(&summary);
            if let (Some(images), serde_json::Value::Object(map)) = (&report.images, &mut value) {
                let images = serde_json::to_value(images).map_err(io::Error::other)?;
                map.insert("vision".into(), images);
            }
            if per_op {
                let ops = kernels.iter().map(|k| rows::json_value(k)).collect();
                if let serde_json::Value::Object(map) = &mut value {
                    map.insert("ops".into(), serde_json::Value::Array(ops));
                }
            }
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// The table of a run: what was priced, its summary, and with `per_op` every kernel.
fn table(out: &mut dyn Write, report: &StepReport, per_op: bool) -> io::Result<()> {
    let title = format!("{} on {}", report.workload_name, report.chip_name);
    write_scenario(out, &title, report, std::slice::from_ref(report))?;
    writeln!(out, "{}", run_summary(report))?;
    if per_op {
        writeln!(out, "{}", run_kernels(report))?;
        if let Some(constants) = run_constants(report) {
            writeln!(out, "{constants}")?;
        }
    }
    Ok(())
}

/// A run's summary, one quantity a line: its time and rates, then its work and memory.
fn run_summary(report: &StepReport) -> Table {
    let mut summary = new_table(&[]);
    let mut row = |name: &str, value: String| {
        summary.add_row(vec![name.to_owned(), value]);
    };
    time_rows(&mut row, report);
    work_rows(&mut row, report);
    align_right(&mut summary, 1);
    summary
}

/// The images in every prompt: the encoder's step that makes their tokens (and the layout it
/// runs at, where not the step's), and the step after it.
fn image_rows(row: &mut dyn FnMut(&str, String), images: &ImagesSummary) {
    let note = (images.encoder_tp_note.as_deref())
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    row(
        "image encoder",
        format!(
            "{} for {} image(s) of {} tokens ({}, tp={}, {} FLOP{note})",
            human(images.encoder_s, "s"),
            number(images.encoded_images as f64),
            number(images.image_tokens as f64),
            images.encoder,
            images.encoder_tp,
            human(images.encoder_flops, ""),
        ),
    );
    row(
        "encoder + step",
        format!(
            "{} ({} image(s) a sequence: {} prompt tokens)",
            human(images.prefill_s, "s"),
            number(images.images as f64),
            number((images.images * images.image_tokens) as f64)
        ),
    );
}

/// The step's time (and against the roofline in expected mode), its token rate, and the
/// request's latencies when one was priced.
fn time_rows(row: &mut dyn FnMut(&str, String), report: &StepReport) {
    let s = &report.summary;
    let band = band_of(report);
    row("step time", banded_time(s.step_time_s, band));
    if report.mode == crate::core::scenario::Mode::Expected {
        row(
            "on the roofline",
            format!(
                "{} ({} of it achieved)",
                human(s.roofline_step_time_s, "s"),
                percent(s.fraction_of_roofline)
            ),
        );
    }
    if let Some(images) = &report.images {
        image_rows(row, images);
    }
    if s.host_time_s > 0.0 {
        row(
            "engine host work",
            format!("{} of it (expected.host_step)", human(s.host_time_s, "s")),
        );
    }
    if s.micro_batches > 1.0 {
        // The step is one micro-batch's pass; the rates below follow all of them.
        row(
            "pipeline",
            format!(
                "{} micro-batches in flight: {} through every stage",
                number(s.micro_batches),
                human(s.pipeline_time_s, "s")
            ),
        );
    }
    if let (Some(n), Some(rate)) = (s.tokens_per_step, s.tokens_per_s) {
        row("tokens per step", number(n));
        row("tokens per second", banded_rate(rate, number(rate), band));
    }
    if let Some(ms) = s.ms_per_token {
        row("ms per output token", three_significant(ms));
    }
    cost_rows(row, s);
    if let Some(r) = &report.request {
        request_rows(row, r, request_band_of(report));
    }
}

/// A priced request's latencies and rate, each with its band (a serving point's rule).
fn request_rows(row: &mut dyn FnMut(&str, String), r: &RequestSummary, band: Option<ServingBand>) {
    row(
        "request",
        format!(
            "{} tokens in, {} out per sequence",
            r.input_tokens, r.output_tokens
        ),
    );
    let ends = band.map(|b| (b.request_at_end(r, false), b.request_at_end(r, true)));
    let time = |get: fn(&RequestSummary) -> f64| match &ends {
        Some((fast, slow)) => banded_time_ends(get(r), (get(fast), get(slow))),
        None => human(get(r), "s"),
    };
    row("time to first token", time(|r| r.ttft_s));
    row("time per output token", time(|r| r.tpot_s));
    row("end to end", time(|r| r.e2e_s));
    let rate = r.output_tokens_per_s;
    let shown = match &ends {
        Some((fast, slow)) => banded_rate_ends(
            rate,
            number(rate),
            (slow.output_tokens_per_s, fast.output_tokens_per_s),
        ),
        None => number(rate),
    };
    row("output tokens per second", shown);
    row("memory at the request's end", request_memory(r));
}

/// The step's work (FLOPs, bytes, how well it uses the chip) and its memory footprint.
fn work_rows(row: &mut dyn FnMut(&str, String), report: &StepReport) {
    let s = &report.summary;
    row("FLOPs", human(s.flops, "FLOP"));
    row("bytes moved", human(s.bytes, "B"));
    row(
        "intensity",
        format!("{} FLOP/B", three_significant(s.intensity_flop_per_byte)),
    );
    row("attained", human(s.attained_flop_per_s, "FLOPS"));
    row("MFU", percent(s.mfu));
    row("MBU", percent(s.mbu));
    let bound = format!(
        "{} / {}",
        percent(s.compute_bound_share),
        percent(s.memory_bound_share)
    );
    match s.host_time_s / s.step_time_s {
        host if host > 0.0 => row(
            "time compute / memory bound / host",
            format!("{bound} / {}", percent(host)),
        ),
        _ => row("time compute / memory bound", bound),
    }
    row("kernels per step", s.kernels.to_string());
    row("weights", human(s.weight_bytes, "B"));
    row("KV cache", human(s.kv_bytes, "B"));
    // Only a state-space model keeps a recurrent state; the others' tables stay as they were.
    if s.state_bytes > 0.0 {
        row("recurrent state", human(s.state_bytes, "B"));
    }
    row("peak activations", human(s.activation_bytes, "B"));
    row("activation workspace", human(s.workspace_bytes, "B"));
    row("runtime reserve", human(s.reserve_bytes, "B"));
    row(
        "memory",
        format!(
            "{} of {} usable: {}",
            human(s.footprint_bytes, "B"),
            human(s.usable_bytes, "B"),
            if s.fits { "fits" } else { "DOES NOT FIT" }
        ),
    );
    if let Some(max) = s.max_batch {
        row("largest batch that fits", max.to_string());
    }
}

/// Every kernel of a run: the common kernel cells, then its roofline time, launch overhead,
/// quantization factor, cache hits, attainable rate and share.
fn run_kernels(report: &StepReport) -> Table {
    let mut ops = new_table(&[
        "op",
        "block",
        "kind",
        "count",
        "FLOPs",
        "bytes",
        "FLOP/B",
        "dtype",
        "bound",
        "time",
        "roofline",
        "of roofline",
        "launch",
        "quant.",
        "cache hit",
        "attainable",
        "share",
    ]);
    for p in &report.prices {
        let mut row = kernel_cells(p);
        row.extend([
            human(p.cost.roofline_time_s, "s"),
            percent(p.cost.roofline_time_s / p.cost.time_s),
            human(p.cost.launch_s, "s"),
            format!("x{:.2}", p.cost.quantization),
            human(p.cost.cache_hit_bytes, "B"),
            human(p.attainable_flop_per_s, "FLOPS"),
            percent(p.share),
        ]);
        ops.add_row(row);
    }
    align_right(&mut ops, 3);
    ops
}

/// The chip-file constants behind the kernels' times, each once with its value and the ops
/// it priced, in the order the kernels first read them (`None` for a step of no kernel).
fn run_constants(report: &StepReport) -> Option<Table> {
    let mut rows: Vec<(Constant, Vec<&str>)> = Vec::new();
    for p in &report.prices {
        for c in &p.priced_by {
            match rows.iter_mut().find(|(seen, _)| seen == c) {
                Some((_, ops)) => ops.push(&p.name),
                None => rows.push((*c, vec![&p.name])),
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut table = new_table(&["chip-file constant", "value", "prices"]);
    for (c, ops) in rows {
        let value = format!("{} {}", constant_value(c.value), c.name.unit());
        let value = value.trim_end().to_owned();
        table.add_row(vec![c.name.to_string(), value, ops.join(", ")]);
    }
    if let Some(column) = table.column_mut(1) {
        column.set_cell_alignment(comfy_table::CellAlignment::Right);
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::typed::{Cell, TypedTable};
    use crate::{price, Chip, Scenario, ScenarioSpec, Workload};

    /// A CSV cell as the typed cell it must be: empty is null, else the column's type.
    fn from_csv(text: &str, cell: Cell<'_>) -> bool {
        match cell {
            Cell::Null => text.is_empty(),
            Cell::Number(x) => text.parse::<f64>().ok() == Some(x),
            Cell::Integer(n) => text.parse::<i64>().ok() == Some(n),
            Cell::Boolean(b) => text == b.to_string(),
            Cell::Text(s) => text == s,
        }
    }

    #[test]
    fn a_run_s_table_is_its_csv_row() {
        let workload = Workload::named("llama-3.1-8b").unwrap();
        let chip = Chip::named("h100-sxm").unwrap();
        let spec = ScenarioSpec {
            sets: vec![("batch".into(), 24.0)],
            ..ScenarioSpec::default()
        };
        let report = price(
            &workload,
            &chip,
            &Scenario::resolve(&workload, &spec).unwrap(),
        )
        .unwrap();
        for per_op in [false, true] {
            let mut csv = Vec::new();
            write_run(&mut csv, &report, per_op, OutputFormat::CsvRaw).unwrap();
            let mut reader = csv::Reader::from_reader(&csv[..]);
            let header: Vec<String> = reader
                .headers()
                .unwrap()
                .iter()
                .map(str::to_owned)
                .collect();
            let table = match per_op {
                true => TypedTable::of_kernels(&report).unwrap(),
                false => TypedTable::of_run(&report).unwrap(),
            };
            let names: Vec<&str> = table.columns().iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, header);
            let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
            assert_eq!(records.len(), table.rows());
            assert_eq!(records.len(), if per_op { report.prices.len() } else { 1 });
            for (i, record) in records.iter().enumerate() {
                let row = table.row(i).unwrap();
                for ((text, cell), name) in record.iter().zip(row).zip(&names) {
                    assert!(from_csv(text, cell), "row {i} `{name}`: {text} vs {cell:?}");
                }
            }
        }
    }
}
