//! A serving survey as a table, CSV or JSON: what was asked and assumed, one row per chip,
//! types, layout and concurrency, and what was left out and why.

use std::io::{self, Write};

use super::format::OutputFormat;
use super::launch::{write_launch, Launch, LaunchLayout};
use super::list::write_list;
use super::numbers::{banded_rate, banded_time, ends, number};
use super::rows::{FleetCsvRow, ServingCsvRow, Shape};
use super::style::{align_right, new_table};

use crate::base::units::{human, three_significant};
use crate::study::band::Band;
use crate::study::serving::{
    FleetEntry, RequestShape, ServingBand, ServingOptions, ServingPoint, Slo, Survey,
    CHECK_REQUESTS,
};

/// What a survey's reader needs beside its rows.
pub(crate) struct ServingHeader<'a> {
    pub workload: &'a str,
    pub shape: RequestShape,
    pub options: ServingOptions,
    /// The params that shape an iteration and were not asked for (`max_batched_tokens=8192`).
    pub assumed: &'a [(String, f64)],
    /// Whether the rows are each chip's frontier.
    pub frontier: bool,
}

/// Writes `survey` in `format`.
pub(crate) fn write_serving(
    out: &mut dyn Write,
    header: &ServingHeader,
    survey: &Survey,
    format: OutputFormat,
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
    let engines = distinct(survey.rows.iter().map(|r| r.engine.as_str()));
    write_survey_header(out, h, &engines)?;
    if survey.rows.iter().any(|r| r.band.is_some()) {
        writeln!(out, "{BAND_NOTE}")?;
    }
    let mut table = new_table(&SURVEY_COLUMNS);
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
        let cells = BandedCells::of(p, r.band, h.shape.output_tokens);
        table.add_row(vec![
            r.chip.clone(),
            r.engine.clone(),
            r.dtypes.brief(),
            layout(&r.layout),
            prefill_cell(r),
            conc,
            cells.ttft,
            cells.tpot,
            cells.e2e,
            cells.per_user,
            cells.per_chip,
            banded_rate(
                p.requests_per_s,
                three_significant(p.requests_per_s),
                cells.whole,
            ),
            usd(p.cloud_usd_per_million_tokens, cells.whole),
            usd(p.tco_usd_per_million_tokens, cells.whole),
            human(p.footprint_bytes, "B"),
            human(p.usable_bytes - p.footprint_bytes, "B"),
        ]);
    }
    align_right(&mut table, 5);
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

/// Where a point prefills: together, or apart on instances of a layout, so many per decode
/// instance, and the split of chips (prefill:decode).
fn prefill_cell(r: &crate::study::serving::ServingRow) -> String {
    let p = &r.point;
    p.disaggregated.map_or("together".into(), |d| {
        format!(
            "{} x{}, {}:{} chips",
            layout(r.prefill_layout.as_deref().unwrap_or_default()),
            three_significant(d.prefill_instances),
            three_significant(d.prefill_chips),
            p.chips
        )
    })
}

/// Where a fleet prefills: together, or on so many instances of a layout, and the split of
/// its chips (prefill:decode).
fn fleet_prefill(f: &crate::study::serving::Fleet) -> String {
    match f.prefill_instances {
        0 => "together".into(),
        n => format!(
            "{n} x {}, {}:{} chips",
            layout(&f.prefill_layout),
            n * f.prefill_chips_per_instance,
            f.instances * f.point.chips
        ),
    }
}

/// The simulation's 90th percentiles, and the instances it added.
fn simulated(f: &crate::study::serving::Fleet) -> String {
    let Some(s) = f.simulated else {
        return "-".into();
    };
    let added = f.instances + f.prefill_instances - s.steady_instances - s.steady_prefill_instances;
    let verdict = match (s.met, added) {
        (false, _) => format!(" missed at +{added}"),
        (true, 0) => " met".into(),
        (true, n) => format!(" met at +{n}"),
    };
    format!(
        "{} / {}{verdict}",
        human(s.ttft_p90_s, "s"),
        human(s.tpot_p90_s, "s")
    )
}

/// What a survey asked and assumed.
fn write_survey_header(out: &mut dyn Write, h: &ServingHeader, engines: &str) -> io::Result<()> {
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
    let mut assumed: Vec<String> = h.assumed.iter().map(|(n, v)| format!("{n}={v}")).collect();
    assumed.push(format!("engine {engines}"));
    writeln!(out, "assumes: {}", assumed.join(" "))?;
    if h.frontier {
        writeln!(
            out,
            "each chip's frontier: no other point of its layouts, types and concurrencies gives more tokens/s per user and per chip"
        )?;
    }
    Ok(())
}

/// What a fleet plan asked and assumed.
fn write_fleet_header(out: &mut dyn Write, h: &FleetHeader, engines: &str) -> io::Result<()> {
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
    if slo.conservative {
        writeln!(
            out,
            "conservative: TTFT and TPOT within their bounds at the high end of their 80% bands, each instance's requests/s at the low end of its band (the simulation at the rate and bounds that asks of the predicted steps)"
        )?;
    }
    writeln!(
        out,
        "per chip and types the cheapest layout, within one node or over 2 to 16 ({} view), each instance in steady state (continuous batching) at the fewest requests in flight that serve its share",
        h.view
    )?;
    let mut assumed: Vec<String> = h.assumed.iter().map(|(n, v)| format!("{n}={v}")).collect();
    assumed.push(format!("engine {engines}"));
    writeln!(out, "assumes: {}", assumed.join(" "))?;
    Ok(())
}

/// Each engine once, in order, comma-separated; `none` for none.
fn distinct<'a>(engines: impl Iterator<Item = &'a str>) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for e in engines {
        if !ids.contains(&e) {
            ids.push(e);
        }
    }
    match ids.is_empty() {
        true => "none".to_owned(),
        false => ids.join(", "),
    }
}

fn layout(name: &str) -> String {
    if name.is_empty() {
        "1 chip".into()
    } else {
        name.into()
    }
}

/// What a fleet plan's reader needs beside its entries.
pub(crate) struct FleetHeader<'a> {
    pub workload: &'a str,
    pub shape: RequestShape,
    pub slo: &'a Slo,
    pub assumed: &'a [(String, f64)],
    /// The view that ranks the entries (`cloud` or `tco`).
    pub view: &'a str,
    /// The first entry's layout as serving engines' launch settings: one, or with prefill
    /// apart each pool's under its name.
    pub launch: &'a [(Option<&'a str>, LaunchLayout, Launch)],
    /// The power budget at the wall, in MW, where one was given.
    pub power_budget_mw: Option<f64>,
}

/// Writes a fleet plan in `format`: the table ends with the first entry's launch settings.
pub(crate) fn write_fleet(
    out: &mut dyn Write,
    header: &FleetHeader,
    entries: &[FleetEntry],
    format: OutputFormat,
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
    write_fleet_header(out, h, &distinct(entries.iter().map(|e| e.engine.as_str())))?;
    if entries
        .iter()
        .any(|e| e.outcome.as_ref().is_ok_and(|f| f.band.is_some()))
    {
        writeln!(out, "{BAND_NOTE}")?;
    }
    let mut columns = FLEET_COLUMNS.to_vec();
    if h.power_budget_mw.is_some() {
        columns.extend(["fleet power", "req/s in budget", "tok/s in budget"]);
    }
    let mut table = new_table(&columns);
    let usd = |u: Option<f64>, digits: usize| u.map_or("-".into(), |u| format!("{u:.digits$}"));
    let mut infeasible = Vec::new();
    for e in entries {
        let Ok(f) = &e.outcome else {
            infeasible.push(e);
            continue;
        };
        let p = &f.point;
        let cells = BandedCells::of(p, f.band, f.output_tokens);
        let mut row = vec![
            e.chip.clone(),
            e.engine.clone(),
            e.dtypes.brief(),
            layout(&f.layout),
            f.instances.to_string(),
            fleet_prefill(f),
            f.chips.to_string(),
            format!("{} of {}", p.concurrency, f.max_concurrency),
            cells.ttft,
            cells.tpot,
            cells.per_chip,
            simulated(f),
            usd(f.cloud_usd_per_hour, 2),
            usd(f.tco_usd_per_hour, 2),
            usd(f.cloud_usd_per_million_tokens, 3),
            usd(f.tco_usd_per_million_tokens, 3),
        ];
        row.extend(fleet_budget_cells(f));
        table.add_row(row);
    }
    align_right(&mut table, 4);
    writeln!(out, "{table}")?;
    write_budget_note(out, h.power_budget_mw)?;
    writeln!(
        out,
        "conc: requests in flight per instance, of the most within the bounds; prefill: together, or instances of their own (layout, prefill:decode chips); simulated: one instance served its share as Poisson arrivals ({CHECK_REQUESTS} requests; prefill apart, the whole fleet, {CHECK_REQUESTS} per decode instance), instances added (+n) until both 90th percentiles meet the bounds"
    )?;
    if !infeasible.is_empty() {
        writeln!(out, "cannot meet the targets:")?;
        for e in infeasible {
            let why = e.outcome.as_ref().err().map_or("", String::as_str);
            writeln!(out, "  {} {}: {why}", e.chip, e.dtypes.brief())?;
        }
    }
    if h.launch.len() > 1 {
        writeln!(out)?;
        writeln!(
            out,
            "Prefill apart: each pool is launched on its own with its engine's prefill/decode disaggregation enabled (its KV connector and roles are not written here)"
        )?;
    }
    for (pool, layout, launch) in h.launch {
        writeln!(out)?;
        if let Some(pool) = pool {
            writeln!(out, "{pool}:")?;
        }
        write_launch(out, layout, launch)?;
    }
    Ok(())
}

/// Under a fleet table with a power budget: what the budget is and how it is filled.
fn write_budget_note(out: &mut dyn Write, budget_mw: Option<f64>) -> io::Result<()> {
    match budget_mw {
        Some(mw) => writeln!(
            out,
            "power budget: {mw} MW at the wall (system power per chip x PUE); in budget: whole instances, each at the fleet's load, so the bounds hold"
        ),
        None => Ok(()),
    }
}

/// A fleet's cells within the power budget: its MW and whether it fits, the requests and
/// tokens per second within the budget; why not, where there is no answer.
fn fleet_budget_cells(f: &crate::study::serving::Fleet) -> Vec<String> {
    match &f.power {
        Some(Ok(fit)) => {
            let fits = if fit.fits() { "fits" } else { "over" };
            vec![
                format!("{} {fits}", human(fit.fleet_mw * 1e6, "W")),
                three_significant(fit.requests_per_s),
                three_significant(fit.tokens_per_s),
            ]
        }
        Some(Err(why)) => vec![why.clone()],
        None => Vec::new(),
    }
}

const SURVEY_COLUMNS: [&str; 16] = [
    "chip",
    "engine",
    "weight/act/kv",
    "layout",
    "prefill",
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
];

const FLEET_COLUMNS: [&str; 16] = [
    "chip",
    "engine",
    "weight/act/kv",
    "layout",
    "instances",
    "prefill",
    "chips",
    "conc",
    "TTFT",
    "TPOT",
    "tok/s/chip",
    "simulated p90 TTFT/TPOT",
    "$/hour cloud",
    "$/hour tco",
    "$/M cloud",
    "$/M tco",
];

/// What the brackets after a serving number are.
const BAND_NOTE: &str = "(low-high): the 80% band of expected mode, from the measured set's cross-validated errors: TTFT the prefill band's, TPOT and tok/s/user the decode band's, e2e and the rates and costs that follow from it the request band's";

/// A point's times and rates as a table shows them, each with its 80 % band in brackets
/// (`43.8 ms (41-50)`) where it has one.
struct BandedCells {
    ttft: String,
    tpot: String,
    e2e: String,
    per_user: String,
    per_chip: String,
    /// The band of a whole request (e2e), which its rates and costs follow.
    whole: Option<Band>,
}

impl BandedCells {
    fn of(p: &ServingPoint, band: Option<ServingBand>, output_tokens: u64) -> BandedCells {
        let whole = band.map(|b| b.e2e(p, output_tokens));
        let decode = band.map(|b| b.decode);
        BandedCells {
            ttft: banded_time(p.ttft_s, band.map(|b| b.prefill)),
            tpot: banded_time(p.tpot_s, decode),
            e2e: banded_time(p.e2e_s, whole),
            per_user: banded_rate(
                p.tokens_per_s_per_user,
                three_significant(p.tokens_per_s_per_user),
                decode,
            ),
            per_chip: banded_rate(
                p.output_tokens_per_s_per_chip,
                number(p.output_tokens_per_s_per_chip),
                whole,
            ),
            whole,
        }
    }
}

/// Dollars per million tokens to three decimals, with the band a cost per token has: that
/// of the time the tokens take.
fn usd(usd: Option<f64>, band: Option<Band>) -> String {
    match (usd, band) {
        (None, _) => "-".into(),
        (Some(u), None) => format!("{u:.3}"),
        (Some(u), Some(b)) => format!("{u:.3} {}", ends(1.0, b.time(u))),
    }
}
