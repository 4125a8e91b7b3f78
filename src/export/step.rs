//! What the tables of `run` and `compare` and the report show of a priced step beside their
//! numbers: the lines that say what was priced (title, mode, params, types, the assumptions
//! a reader must know, the cost model), and the cells every kernel table starts with.

use std::io::{self, Write};

use super::costs::cost_line;
use crate::base::units::{human, three_significant};
use crate::core::timing::{Price, StepReport};

/// The lines that say what was priced: title, mode and plan, params, data types (and for one
/// chip, how its weights are multiplied), and the cost assumptions of `reports` (the report
/// itself and the chips beside it).
pub(super) fn write_scenario(
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
    writeln!(out, "assumes: {}", assumptions(report, reports))?;
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
/// batched tokens, the share of memory it uses, the request priced, the engine priced under
/// (each chip's where the chips beside it in `reports` differ).
fn assumptions(report: &StepReport, reports: &[StepReport]) -> String {
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
    parts.push(engines(report, reports));
    parts.join(", ")
}

/// `engine trtllm`, or `engine trtllm on h200, vllm on mi300x` where the chips' differ
/// (`none` in roofline mode).
fn engines(report: &StepReport, reports: &[StepReport]) -> String {
    if reports.iter().all(|r| r.engine == report.engine) {
        return format!("engine {}", report.engine);
    }
    let each: Vec<String> = (reports.iter())
        .map(|r| format!("{} on {}", r.engine, r.chip))
        .collect();
    format!("engine {}", each.join(", "))
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
