//! A simulated serving run: one row (CSV, JSON) or a table of its figures for the terminal.

use std::io::{self, Write};

use super::rows::{Row, Shape, Value};
use super::table::{align_right, new_table};
use super::{write_list, Format};
use crate::base::units::{human, three_significant};
use crate::study::simulate::SimReport;

/// The run as one row: units in the column names, raw SI values.
struct SimRow<'a> {
    workload: &'a str,
    chip: &'a str,
    r: &'a SimReport,
}

impl Row for SimRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let r = self.r;
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(self.chip));
        f("instances", Value::Int(r.instances as u64));
        f("router", Value::Text(r.router.name()));
        f("chips_per_instance", Value::Int(r.chips_per_instance));
        f("prefill_instances", Value::Int(r.prefill_instances as u64));
        f(
            "prefill_chips_per_instance",
            Value::Int(r.prefill_chips_per_instance),
        );
        f("chips", Value::Int(r.chips));
        f("max_seqs", Value::Int(r.max_seqs));
        f("max_batched_tokens", Value::Int(r.max_batched_tokens));
        f("kv_blocks", Value::Int(r.kv_blocks));
        f("requests", Value::Int(r.requests));
        f("finished", Value::Int(r.finished));
        for (name, p) in [("ttft", &r.ttft), ("tpot", &r.tpot), ("e2e", &r.e2e)] {
            f(&format!("{name}_mean_s"), Value::Num(p.mean_s));
            f(&format!("{name}_p50_s"), Value::Num(p.p50_s));
            f(&format!("{name}_p90_s"), Value::Num(p.p90_s));
            f(&format!("{name}_p99_s"), Value::Num(p.p99_s));
        }
        f("output_tokens_per_s", Value::Num(r.output_tokens_per_s));
        f(
            "output_tokens_per_s_per_chip",
            Value::Num(r.output_tokens_per_s_per_chip),
        );
        f("requests_per_s", Value::Num(r.requests_per_s));
        f("max_ttft_s", r.slo.max_ttft_s.into());
        f("max_tpot_s", r.slo.max_tpot_s.into());
        f("goodput_requests_per_s", r.goodput_requests_per_s.into());
        f("goodput_share", r.goodput_share.into());
        f("mean_batch", Value::Num(r.mean_batch));
        f("preemptions", Value::Int(r.preemptions));
        f("iterations", Value::Int(r.iterations));
        f("prefill_iterations", Value::Int(r.prefill_iterations));
        f("simulated_s", Value::Num(r.simulated_s));
        f("arrival_window_s", Value::Num(r.arrival_window_s));
        f("stable", Value::Bool(r.stable));
        f("capped", Value::Bool(r.capped));
        f("exact", Value::Bool(r.exact));
        f("steps_priced", Value::Int(r.steps_priced));
    }
}

/// Writes a simulated run of `workload` on `chip`; `title` is the table's first line.
pub fn write_simulate(
    out: &mut dyn Write,
    workload: &str,
    chip: &str,
    title: &str,
    report: &SimReport,
    format: Format,
    shape: &Shape,
) -> io::Result<()> {
    let rows = [SimRow {
        workload,
        chip,
        r: report,
    }];
    write_list(out, &rows, format, shape, |t| write_table(t, title, report))
}

fn write_table(out: &mut dyn Write, title: &str, r: &SimReport) -> io::Result<()> {
    writeln!(out, "{title}")?;
    writeln!(
        out,
        "assumes: {} instance(s) of {} chip(s), {}; max_seqs={} max_batched_tokens={}; KV {} blocks of 16 tokens per instance{}; {}",
        r.instances,
        r.chips_per_instance,
        r.router.name(),
        r.max_seqs,
        r.max_batched_tokens,
        r.kv_blocks,
        match r.state_blocks_per_seq {
            0 => String::new(),
            n => format!(", {n} of them a sequence's recurrent state"),
        },
        if r.exact { "every iteration priced exactly" } else { "iterations priced from a cache (exact in context within a kernel's bound regime)" }
    )?;
    if r.prefill_instances > 0 {
        writeln!(
            out,
            "prefill apart: {} prefill instance(s) of {} chip(s) ({}:{} chips prefill:decode), each prompt's KV cache sent over the network; TTFT to its arrival at the decode instance",
            r.prefill_instances,
            r.prefill_chips_per_instance,
            r.prefill_instances as u64 * r.prefill_chips_per_instance,
            r.chips - r.prefill_instances as u64 * r.prefill_chips_per_instance,
        )?;
    }
    let ms = |s: f64| human(s, "s");
    let pct = |p: &crate::study::simulate::Percentiles| {
        format!("{} / {} / {}", ms(p.p50_s), ms(p.p90_s), ms(p.p99_s))
    };
    let mut table = new_table(&[]);
    let mut add = |k: &str, v: String| {
        table.add_row(vec![k.to_owned(), v]);
    };
    add(
        "requests finished",
        format!("{} of {}", r.finished, r.requests),
    );
    add("TTFT p50 / p90 / p99", pct(&r.ttft));
    add("TPOT p50 / p90 / p99", pct(&r.tpot));
    add("e2e p50 / p90 / p99", pct(&r.e2e));
    add("output tokens/s", three_significant(r.output_tokens_per_s));
    add(
        "output tokens/s per chip",
        three_significant(r.output_tokens_per_s_per_chip),
    );
    add("requests/s", three_significant(r.requests_per_s));
    if let (Some(g), Some(share)) = (r.goodput_requests_per_s, r.goodput_share) {
        add(
            "goodput (meets the SLOs)",
            format!(
                "{} requests/s ({:.1}%)",
                three_significant(g),
                share * 100.0
            ),
        );
    }
    add("mean batch", three_significant(r.mean_batch));
    add("preemptions", r.preemptions.to_string());
    add("iterations", r.iterations.to_string());
    add("simulated", ms(r.simulated_s));
    let queue = match (r.stable, r.capped) {
        (true, _) => "stable",
        (false, true) => "unstable (stopped at the time or iteration cap)",
        (false, false) => "unstable (arrivals outpace completions, the queue grows)",
    };
    add("queue", queue.to_owned());
    align_right(&mut table, 1);
    writeln!(out, "{table}")
}
