//! A serving survey as a table, CSV or JSON: what was asked and assumed, one row per chip,
//! types, layout and concurrency, and what was left out and why.

use std::io::{self, Write};

use super::launch::{write_launch, Launch, LaunchLayout};
use super::rows::{FleetCsvRow, ServingCsvRow, Shape};
use super::table::{align_right, new_table, number};
use super::{write_list, Format};
use crate::base::units::{human, three_significant};
use crate::study::serving::{FleetEntry, RequestShape, ServingOptions, Slo, Survey};

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

/// What a fleet plan's reader needs beside its entries.
pub struct FleetHeader<'a> {
    pub workload: &'a str,
    pub shape: RequestShape,
    pub slo: &'a Slo,
    pub assumed: &'a [(String, f64)],
    /// The view that ranks the entries (`cloud` or `tco`).
    pub view: &'a str,
    /// The first entry's layout as serving engines' launch settings.
    pub launch: Option<(&'a LaunchLayout, &'a Launch)>,
}

/// Writes a fleet plan in `format`: the table ends with the first entry's launch settings.
pub fn write_fleet(
    out: &mut dyn Write,
    header: &FleetHeader,
    entries: &[FleetEntry],
    format: Format,
    shape: &Shape,
) -> io::Result<()> {
    let rows: Vec<FleetCsvRow> = (entries.iter())
        .map(|entry| FleetCsvRow {
            workload: header.workload,
            shape: header.shape,
            slo: header.slo,
            entry,
        })
        .collect();
    write_list(out, &rows, format, shape, |t| {
        write_fleet_table(t, header, entries)
    })
}

fn write_fleet_table(
    out: &mut dyn Write,
    h: &FleetHeader,
    entries: &[FleetEntry],
) -> io::Result<()> {
    let slo = h.slo;
    write!(
        out,
        "{}: {} requests/s of {} input and {} output tokens",
        h.workload,
        three_significant(slo.rate_per_s),
        h.shape.input_tokens,
        h.shape.output_tokens
    )?;
    if let Some(t) = slo.max_ttft_s {
        write!(out, ", TTFT at most {}", human(t, "s"))?;
    }
    if let Some(t) = slo.max_tpot_s {
        write!(out, ", TPOT at most {}", human(t, "s"))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "per chip and types the cheapest layout within one node ({} view), each instance in steady state (continuous batching) at the fewest requests in flight that serve its share",
        h.view
    )?;
    let assumed: Vec<String> = h.assumed.iter().map(|(n, v)| format!("{n}={v}")).collect();
    if !assumed.is_empty() {
        writeln!(out, "assumes: {}", assumed.join(" "))?;
    }
    let mut table = new_table(&[
        "chip",
        "weight/act/kv",
        "layout",
        "instances",
        "chips",
        "conc",
        "TTFT",
        "TPOT",
        "tok/s/chip",
        "$/hour cloud",
        "$/hour tco",
        "$/M cloud",
        "$/M tco",
    ]);
    let usd = |u: Option<f64>, digits: usize| u.map_or("-".into(), |u| format!("{u:.digits$}"));
    let mut infeasible = Vec::new();
    for e in entries {
        let Ok(f) = &e.outcome else {
            infeasible.push(e);
            continue;
        };
        let p = &f.point;
        table.add_row(vec![
            e.chip.clone(),
            e.dtypes.brief(),
            layout(&f.layout),
            f.instances.to_string(),
            f.chips.to_string(),
            format!("{} of {}", p.concurrency, f.max_concurrency),
            human(p.ttft_s, "s"),
            human(p.tpot_s, "s"),
            number(p.output_tokens_per_s_per_chip),
            usd(f.cloud_usd_per_hour, 2),
            usd(f.tco_usd_per_hour, 2),
            usd(p.cloud_usd_per_million_tokens, 3),
            usd(p.tco_usd_per_million_tokens, 3),
        ]);
    }
    align_right(&mut table, 3);
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "conc: requests in flight per instance, of the most within the bounds"
    )?;
    if !infeasible.is_empty() {
        writeln!(out, "cannot meet the targets:")?;
        for e in infeasible {
            let why = e.outcome.as_ref().err().map_or("", String::as_str);
            writeln!(out, "  {} {}: {why}", e.chip, e.dtypes.brief())?;
        }
    }
    if let Some((layout, launch)) = h.launch {
        writeln!(out)?;
        write_launch(out, layout, launch)?;
    }
    Ok(())
}
