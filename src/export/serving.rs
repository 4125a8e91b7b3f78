//! A serving survey as a table, CSV or JSON: what was asked and assumed, one row per chip,
//! types, layout and concurrency, and what was left out and why.

use std::io::{self, Write};

use super::rows::{ServingCsvRow, Shape};
use super::table::{align_right, new_table, number};
use super::{write_list, Format};
use crate::base::units::{human, three_significant};
use crate::study::serving::{RequestShape, ServingOptions, Survey};

/// What a survey's reader needs beside its rows.
pub struct ServingHeader<'a> {
    pub workload: &'a str,
    pub shape: RequestShape,
    pub options: ServingOptions,
    /// The params that shape an iteration and were not asked for (`max_batched_tokens=8192`).
    pub assumed: &'a [(String, f64)],
    /// Whether the rows are each chip's frontier.
    pub frontier: bool,
}

/// Writes `survey` in `format`.
pub fn write_serving(
    out: &mut dyn Write,
    header: &ServingHeader,
    survey: &Survey,
    format: Format,
    shape: &Shape,
) -> io::Result<()> {
    let rows: Vec<ServingCsvRow> = (survey.rows.iter())
        .map(|row| ServingCsvRow {
            workload: header.workload,
            shape: header.shape,
            options: header.options,
            row,
        })
        .collect();
    write_list(out, &rows, format, shape, |t| {
        write_table(t, header, survey)
    })
}

fn write_table(out: &mut dyn Write, h: &ServingHeader, survey: &Survey) -> io::Result<()> {
    write!(
        out,
        "{}: continuous batching in steady state, requests of {} input and {} output tokens",
        h.workload, h.shape.input_tokens, h.shape.output_tokens
    )?;
    if h.options.prefix_hit > 0.0 {
        write!(
            out,
            ", {}% of each prompt cached",
            h.options.prefix_hit * 100.0
        )?;
    }
    if let Some(s) = h.options.speculation {
        write!(
            out,
            ", speculating {} tokens accepted at {} ({} kept per verify step)",
            s.draft_tokens(),
            s.acceptance(),
            three_significant(s.tokens_per_verify())
        )?;
    }
    writeln!(out)?;
    let assumed: Vec<String> = h.assumed.iter().map(|(n, v)| format!("{n}={v}")).collect();
    if !assumed.is_empty() {
        writeln!(out, "assumes: {}", assumed.join(" "))?;
    }
    if h.frontier {
        writeln!(
            out,
            "each chip's frontier: no other point of its layouts, types and concurrencies gives more tokens/s per user and per chip"
        )?;
    }
    let mut table = new_table(&[
        "chip",
        "weight/act/kv",
        "layout",
        "conc",
        "TTFT",
        "TPOT",
        "e2e",
        "tok/s/user",
        "tok/s/chip",
        "req/s",
        "$/M cloud",
        "$/M tco",
        "memory",
        "headroom",
    ]);
    let mut capped = Vec::new();
    for r in &survey.rows {
        let p = &r.point;
        let conc = match r.capped_from {
            Some(asked) => {
                capped.push(format!(
                    "{} {} {}: {asked} in flight do not fit; priced at {}",
                    r.chip,
                    r.dtypes.brief(),
                    layout(&r.layout),
                    p.concurrency
                ));
                format!("{}*", p.concurrency)
            }
            None => p.concurrency.to_string(),
        };
        let usd = |u: Option<f64>| u.map_or("-".into(), |u| format!("{u:.3}"));
        table.add_row(vec![
            r.chip.clone(),
            r.dtypes.brief(),
            layout(&r.layout),
            conc,
            human(p.ttft_s, "s"),
            human(p.tpot_s, "s"),
            human(p.e2e_s, "s"),
            three_significant(p.tokens_per_s_per_user),
            number(p.output_tokens_per_s_per_chip),
            three_significant(p.requests_per_s),
            usd(p.cloud_usd_per_million_tokens),
            usd(p.tco_usd_per_million_tokens),
            human(p.footprint_bytes, "B"),
            human(p.usable_bytes - p.footprint_bytes, "B"),
        ]);
    }
    align_right(&mut table, 3);
    writeln!(out, "{table}")?;
    for note in capped {
        writeln!(out, "* {note}")?;
    }
    if !survey.skipped.is_empty() {
        writeln!(out, "not served:")?;
        for s in &survey.skipped {
            writeln!(
                out,
                "  {} {} {}: {}",
                s.chip,
                s.dtypes.brief(),
                layout(&s.layout),
                s.why
            )?;
        }
    }
    Ok(())
}

fn layout(name: &str) -> String {
    if name.is_empty() {
        "1 chip".into()
    } else {
        name.into()
    }
}
