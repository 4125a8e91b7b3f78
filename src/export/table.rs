//! Tables for a terminal: human-scaled units, numbers right-aligned.

use std::io::{self, Write};

use comfy_table::{presets, CellAlignment, Table};

use super::band::{banded_rate, banded_rate_ends, banded_time, banded_time_ends};
use super::costs::{cost_line, cost_notes, cost_rows};
use super::table_dtypes;
use crate::base::dtype::DType;
use crate::base::units::{human, percent, signed_percent, three_significant};
use crate::core::chip::{Chip, ChipStatus};
use crate::core::timing::{Price, RequestSummary, StepReport};
use crate::study::serving::ServingBand;
use crate::study::validate::{ErrorStats, Outcome};

pub(crate) fn new_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    if !header.is_empty() {
        table.set_header(header.to_vec());
    }
    table
}

pub(crate) fn align_right(table: &mut Table, from: usize) {
    let columns = table.column_count();
    for i in from..columns {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
}

pub(super) fn number(x: f64) -> String {
    if x >= 1e4 {
        human(x, "").trim_end().to_owned()
    } else if x.fract() == 0.0 {
        format!("{x}")
    } else {
        three_significant(x)
    }
}

/// The lines that say what was priced: title, mode and plan, params, data types (and for one
/// chip, how its weights are multiplied), and the cost assumptions of `reports` (the report
/// itself and the chips beside it).
fn write_scenario(
    out: &mut dyn Write,
    title: &str,
    report: &StepReport,
    reports: &[StepReport],
) -> io::Result<()> {
    writeln!(
        out,
        "{title} ({} mode, fusion `{}`)",
        report.mode, report.fusion
    )?;
    writeln!(out, "assumes: {}", assumptions(report))?;
    let params: Vec<String> = report
        .params
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    if !params.is_empty() {
        writeln!(out, "params: {}", params.join(" "))?;
    }
    let scheme = match report.summary.scheme.filter(|_| reports.len() == 1) {
        Some(s) if s.weight_only() => format!(" ({s}: weights widened to {})", s.compute),
        Some(s) => format!(" ({s})"),
        None => String::new(),
    };
    writeln!(out, "dtypes: {}{scheme}", report.dtypes)?;
    let bases = reports.iter().map(|r| r.costing.price_basis.as_deref());
    writeln!(out, "{}", cost_line(&report.costing.model, bases))
}

/// The choices a reader must know to read the numbers, which the command line need not have
/// named: the step (decode or a prefill of how many tokens), the context held, the engine's
/// batched tokens, the share of memory it uses, the request priced.
fn assumptions(report: &StepReport) -> String {
    let param = |name: &str| {
        (report.params.iter())
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    };
    let mut parts = Vec::new();
    match param("tokens") {
        Some(1.0) => parts.push("decode (tokens=1)".to_owned()),
        Some(t) => parts.push(format!("prefill of tokens={t} per sequence")),
        None => {}
    }
    for name in ["batch", "context"] {
        if let Some(v) = param(name) {
            parts.push(format!("{name}={v}"));
        }
    }
    // A mixed step: prompt tokens of other sequences beside the batch's.
    if let Some(p) = param("prefill_tokens").filter(|p| *p > 0.0) {
        let mut text = format!("beside prefill_tokens={p}");
        if let Some(s) = param("prefill_seqs") {
            text += &format!(" of prefill_seqs={s}");
        }
        if let Some(c) = param("prefill_context") {
            text += &format!(" at prefill_context={c}");
        }
        parts.push(text);
    }
    if let Some(v) = param("max_batched_tokens") {
        parts.push(format!("max_batched_tokens={v}"));
    }
    let s = &report.summary;
    parts.push(format!(
        "memory utilisation {}",
        three_significant(s.usable_bytes / report.capacity_bytes)
    ));
    if let Some(r) = &report.request {
        parts.push(format!(
            "request in={} out={}",
            r.input_tokens, r.output_tokens
        ));
    }
    parts.join(", ")
}

pub fn write_run(out: &mut dyn Write, report: &StepReport, per_op: bool) -> io::Result<()> {
    let title = format!("{} on {}", report.workload_name, report.chip_name);
    write_scenario(out, &title, report, std::slice::from_ref(report))?;
    writeln!(out, "{}", run_summary(report))?;
    if per_op {
        writeln!(out, "{}", run_kernels(report))?;
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

/// The step's time (and against the roofline in expected mode), its token rate, and the
/// request's latencies when one was priced.
fn time_rows(row: &mut dyn FnMut(&str, String), report: &StepReport) {
    let s = &report.summary;
    let band = super::band_of(report);
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
        request_rows(row, r, super::request_band_of(report));
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
    row(
        "memory at the request's end",
        super::advice::request_memory(r),
    );
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

/// The cells every kernel table starts with, human-scaled: kernel, block, kind, count, FLOPs,
/// bytes, FLOP/B, dtype, bound, time.
pub(super) fn kernel_cells(p: &Price) -> Vec<String> {
    vec![
        p.name.clone(),
        p.block.clone(),
        p.kind.name().to_owned(),
        format!("x{}", p.cost.count),
        human(p.cost.flops, "FLOP"),
        human(p.cost.bytes, "B"),
        three_significant(p.intensity_flop_per_byte),
        p.cost.compute_dtype.to_string(),
        p.cost.bound.name().to_owned(),
        human(p.cost.time_s, "s"),
    ]
}

pub fn write_chips(out: &mut dyn Write, chips: &[Chip]) -> io::Result<()> {
    // The types planners compare; `--format csv` lists every type.
    let dtypes: Vec<DType> = table_dtypes(chips)
        .into_iter()
        .filter(|d| matches!(d, DType::Bf16 | DType::Fp8 | DType::Fp4))
        .collect();
    let mut header = ["chip", "HBM", "basis", "reserve", "bandwidth"]
        .map(String::from)
        .to_vec();
    for d in &dtypes {
        header.push(format!("{d} peak"));
        header.push(format!("{d} ridge"));
    }
    header.push("fabric".to_owned());
    header.push("SKU".to_owned());
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    table.set_header(header);
    for chip in chips {
        let announced = chip.status() == ChipStatus::Announced;
        let mut row = vec![
            if announced {
                format!("{} (announced)", chip.id)
            } else {
                chip.id.clone()
            },
            human(chip.capacity_bytes, "B"),
            chip.capacity_basis.name().to_owned(),
            human(chip.reserve_bytes, "B"),
            human(chip.bandwidth_bytes_per_s, "B/s"),
        ];
        for d in &dtypes {
            match chip.matrix.peaks().find(|(x, _)| x == d) {
                Some((_, peak)) => {
                    row.push(human(peak, "FLOPS"));
                    row.push(format!("{:.0}", peak / chip.bandwidth_bytes_per_s));
                }
                None => row.extend(["-".to_owned(), "-".to_owned()]),
            }
        }
        row.push(fabric_cell(chip));
        row.push(chip.sku.clone());
        table.add_row(row);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "peaks are dense matrix-unit FLOP/s; ridge = peak / bandwidth in FLOP per byte of HBM traffic;\n\
         HBM is what the device reports to software where `basis` is `reported`, the vendor's GiB\n\
         (`vendor_gib`) or the marketed figure (`marketed`); reserve is the runtime's share of it;\n\
         fabric: the scale-up fabric, its rate per direction and chips per domain; (announced):\n\
         a roadmap part, left out of `--chip all` unless `--include-announced`;\n\
         `--format csv` lists every data type, prices and power"
    )
}

/// The scale-up fabric in a few characters: `switch 450 GB/s x8`.
fn fabric_cell(chip: &Chip) -> String {
    chip.interconnect().map_or("-".to_owned(), |link| {
        let domain = link.domain.map_or(String::new(), |d| format!(" x{d}"));
        let rate = human(link.bandwidth_bytes_per_s, "B/s");
        format!("{} {rate}{domain}", link.fabric.name())
    })
}

pub fn write_compare(out: &mut dyn Write, reports: &[StepReport]) -> io::Result<()> {
    let Some(first) = reports.first() else {
        return Ok(());
    };
    write_scenario(out, &first.workload_name, first, reports)?;
    let mut table = new_table(&[
        "chip",
        "scheme",
        "step time",
        "tokens/s",
        "MFU",
        "MBU",
        "compute-bound",
        "$/M tokens",
        "fits",
        "speed vs first",
    ]);
    let t0 = first.summary.step_time_s;
    for r in reports {
        let s = &r.summary;
        table.add_row(vec![
            r.chip.clone(),
            s.scheme.map_or("-".into(), |s| s.to_string()),
            banded_time(s.step_time_s, super::band_of(r)),
            (s.tokens_per_s).map_or("-".into(), |t| banded_rate(t, number(t), super::band_of(r))),
            percent(s.mfu),
            percent(s.mbu),
            percent(s.compute_bound_share),
            s.cost
                .usd_per_million_tokens
                .map_or("-".into(), |usd| format!("{usd:.3}")),
            if r.fits() { "yes" } else { "no" }.to_owned(),
            format!("{:.2}x", t0 / s.step_time_s),
        ]);
    }
    align_right(&mut table, 2);
    writeln!(out, "{table}")?;
    for note in cost_notes(reports.iter().map(|r| (r.chip.as_str(), &r.summary))) {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

pub fn write_validation(
    out: &mut dyn Write,
    outcomes: &[Outcome],
    stats: &[ErrorStats],
) -> io::Result<()> {
    let mut table = new_table(&[
        "id",
        "chip",
        "workload",
        "kind",
        "dtype",
        "metric",
        "measured",
        "predicted",
        "error",
    ]);
    let mut skipped = Vec::new();
    for o in outcomes {
        let c = &o.case;
        match (&o.predicted, o.error()) {
            (Ok(p), Some(e)) => {
                table.add_row(vec![
                    c.id.clone(),
                    c.chip.clone(),
                    c.workload.clone(),
                    c.kind.clone(),
                    o.dtype.to_string(),
                    c.metric.name().to_owned(),
                    three_significant(c.measured),
                    three_significant(*p),
                    signed_percent(e),
                ]);
            }
            (Err(why), _) => skipped.push(format!("{}: {why}", c.id)),
            (Ok(_), None) => {}
        }
    }
    align_right(&mut table, 6);
    writeln!(out, "{table}")?;
    let mut summary = new_table(&["group", "cases", "median |error|", "90th pct |error|"]);
    for s in stats {
        summary.add_row(vec![
            s.group.clone(),
            s.cases.to_string(),
            percent(s.median_abs),
            percent(s.p90_abs),
        ]);
    }
    align_right(&mut summary, 1);
    writeln!(out, "{summary}")?;
    if !skipped.is_empty() {
        writeln!(out, "skipped ({}):", skipped.len())?;
        for s in skipped {
            writeln!(out, "  {s}")?;
        }
    }
    Ok(())
}
