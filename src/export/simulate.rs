//! A simulated serving run: one row (CSV, JSON) or a table of its figures for the terminal.

use std::io::{self, Write};

use super::format::OutputFormat;
use super::list::write_list;
use super::numbers::{banded_time_ends, ends};
use super::rows::{Row, Shape, Value};
use super::style::{align_right, new_table};
use crate::base::units::{human, three_significant};
use crate::study::simulate::{Percentiles, SimBand, SimReport};

/// The run as one row: units in the column names, raw SI values.
struct SimRow<'a> {
    workload: &'a str,
    chip: &'a str,
    engine: &'a str,
    r: &'a SimReport,
    band: Option<&'a SimBand>,
}

impl SimRow<'_> {
    /// A figure, then its band's ends (`ttft_p90_low_s`): a time's low end is the fast run's,
    /// a rate's the slow run's.
    fn banded(
        &self,
        f: &mut dyn FnMut(&str, Value<'_>),
        name: &str,
        unit: &str,
        get: Get,
        rate: bool,
    ) {
        f(&format!("{name}{unit}"), get(self.r).into());
        let (low, high) = match self.band {
            Some(b) if rate => (Some(&b.slow), Some(&b.fast)),
            Some(b) => (Some(&b.fast), Some(&b.slow)),
            None => (None, None),
        };
        f(&format!("{name}_low{unit}"), low.and_then(get).into());
        f(&format!("{name}_high{unit}"), high.and_then(get).into());
    }
}

impl Row for SimRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let r = self.r;
        f("workload", Value::Text(self.workload));
        f("chip", Value::Text(self.chip));
        f("engine", Value::Text(self.engine));
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
        for (name, p) in PERCENTILES {
            for (stat, q) in STATISTICS {
                let name = format!("{name}_{stat}");
                self.banded(f, &name, "_s", &|r| Some(q(p(r))), false);
            }
        }
        let rate = |get: Figure| move |r: &SimReport| Some(get(r));
        let rates: [(&str, Figure); 3] = [
            ("output_tokens_per_s", |r| r.output_tokens_per_s),
            ("output_tokens_per_s_per_chip", |r| {
                r.output_tokens_per_s_per_chip
            }),
            ("requests_per_s", |r| r.requests_per_s),
        ];
        for (name, get) in rates {
            self.banded(f, name, "", &rate(get), true);
        }
        f("max_ttft_s", r.slo.max_ttft_s.into());
        f("max_tpot_s", r.slo.max_tpot_s.into());
        // Goodput is a rate and its share goes with it: the slow run's is the low end.
        let goodput = |r: &SimReport| r.goodput_requests_per_s;
        self.banded(f, "goodput_requests_per_s", "", &goodput, true);
        self.banded(f, "goodput_share", "", &|r| r.goodput_share, true);
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

/// A figure of a run, where it has one.
type Get<'a> = &'a dyn Fn(&SimReport) -> Option<f64>;

/// A figure every run has.
type Figure = fn(&SimReport) -> f64;

/// A statistic of a latency's distribution.
type Statistic = fn(&Percentiles) -> f64;

/// The statistics of each latency, in their columns' order.
const STATISTICS: [(&str, Statistic); 4] = [
    ("mean", |p| p.mean_s),
    ("p50", |p| p.p50_s),
    ("p90", |p| p.p90_s),
    ("p99", |p| p.p99_s),
];

/// The latencies a run reports percentiles of.
type Latency = fn(&SimReport) -> &Percentiles;
const PERCENTILES: [(&str, Latency); 3] = [
    ("ttft", |r| &r.ttft),
    ("tpot", |r| &r.tpot),
    ("e2e", |r| &r.e2e),
];

/// Writes a simulated run of `workload` on `chip` under `engine` (`none` in roofline mode)
/// and its band (expected mode); `title` is the table's first line.
pub(crate) fn write_simulate(
    out: &mut dyn Write,
    workload: &str,
    (chip, engine): (&str, &str),
    title: &str,
    (report, band): (&SimReport, Option<&SimBand>),
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows = [SimRow {
        workload,
        chip,
        engine,
        r: report,
        band,
    }];
    write_list(out, &rows, format, shape, |t| {
        write_table(t, (title, engine), report, band)
    })
}

fn write_table(
    out: &mut dyn Write,
    (title, engine): (&str, &str),
    r: &SimReport,
    band: Option<&SimBand>,
) -> io::Result<()> {
    write_header(out, (title, engine), r, band.is_some())?;
    let ms = |s: f64| human(s, "s");
    // A percentile with its band: each end from the run at that end of the steps' bands.
    let time = |get: &dyn Fn(&SimReport) -> f64| match band {
        Some(b) => banded_time_ends(get(r), (get(&b.fast), get(&b.slow))),
        None => ms(get(r)),
    };
    let pct = |p: Latency| {
        let at = |q: fn(&Percentiles) -> f64| time(&|r: &SimReport| q(p(r)));
        format!(
            "{} / {} / {}",
            at(|p| p.p50_s),
            at(|p| p.p90_s),
            at(|p| p.p99_s)
        )
    };
    let rate = |get: fn(&SimReport) -> f64| {
        let shown = three_significant(get(r));
        match band {
            Some(b) => format!("{shown} {}", ends(1.0, (get(&b.slow), get(&b.fast)))),
            None => shown,
        }
    };
    let mut table = new_table(&[]);
    let mut add = |k: &str, v: String| {
        table.add_row(vec![k.to_owned(), v]);
    };
    add(
        "requests finished",
        format!("{} of {}", r.finished, r.requests),
    );
    add("TTFT p50 / p90 / p99", pct(PERCENTILES[0].1));
    add("TPOT p50 / p90 / p99", pct(PERCENTILES[1].1));
    add("e2e p50 / p90 / p99", pct(PERCENTILES[2].1));
    add("output tokens/s", rate(|r| r.output_tokens_per_s));
    add(
        "output tokens/s per chip",
        rate(|r| r.output_tokens_per_s_per_chip),
    );
    add("requests/s", rate(|r| r.requests_per_s));
    if let Some(goodput) = goodput(r, band) {
        add("goodput (meets the SLOs)", goodput);
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

/// Goodput and its share of the finished requests, where the run has SLOs: `5.66
/// requests/s (93.5%)`, with a band `5.66 (5.2-5.9) requests/s, 93.5% (85-98)`, each low end
/// from the run at the slow end of the steps' bands.
fn goodput(r: &SimReport, band: Option<&SimBand>) -> Option<String> {
    let (g, share) = (r.goodput_requests_per_s?, r.goodput_share?);
    let Some(b) = band else {
        return Some(format!(
            "{} requests/s ({:.1}%)",
            three_significant(g),
            share * 100.0
        ));
    };
    let end = |get: fn(&SimReport) -> Option<f64>| get(&b.slow).zip(get(&b.fast));
    let (rate, shares) = (
        end(|r| r.goodput_requests_per_s)?,
        end(|r| r.goodput_share)?,
    );
    Some(format!(
        "{} {} requests/s, {:.1}% {}",
        three_significant(g),
        ends(1.0, rate),
        share * 100.0,
        ends(0.01, shares)
    ))
}

/// The title, what the run assumes, and what the brackets are where it has a band.
fn write_header(
    out: &mut dyn Write,
    (title, engine): (&str, &str),
    r: &SimReport,
    banded: bool,
) -> io::Result<()> {
    writeln!(out, "{title}")?;
    writeln!(
        out,
        "assumes: {} instance(s) of {} chip(s), {}; max_seqs={} max_batched_tokens={}; KV {} blocks of 16 tokens per instance{}; {}; engine {engine}",
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
    if banded {
        writeln!(
            out,
            "(low-high): the 80% band of expected mode, the same arrivals simulated with every iteration at each end of its step's band (decode or prefill)"
        )?;
    }
    Ok(())
}
