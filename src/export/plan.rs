//! What `plan` writes: one row per chip and choice of types, best first, as a table (what was
//! asked and assumed, the rows, what was left out and why), CSV or JSON.

use std::io::{self, Write};

use super::costs::{cost_line, cost_notes, main_basis};
use super::format::OutputFormat;
use super::list::write_list;
use super::numbers::{ends, number};
use super::rows::{plan_rows, Shape};
use super::style::{align_right, new_table};
use crate::base::units::{human, three_significant};
use crate::core::scenario::Mode;
use crate::study::plan::{PlanEntry, PlanRequest, PlanSort};

/// Writes a plan: one row per chip and choice of types, best first.
pub(crate) fn write_plan(
    out: &mut dyn Write,
    workload: &str,
    request: &PlanRequest,
    entries: &[PlanEntry],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows = plan_rows(workload, request, entries);
    write_list(out, &rows, format, shape, |t| {
        table(t, workload, request, entries)
    })
}

/// The table of a plan: what was asked and assumed, a row per chip and choice of types, and
/// what was left out and why.
fn table(
    out: &mut dyn Write,
    workload: &str,
    request: &PlanRequest,
    entries: &[PlanEntry],
) -> io::Result<()> {
    write_plan_header(out, workload, request, entries)?;
    let mut header = vec![
        "chip",
        "engine",
        "weight/act/kv",
        "scheme",
        "layout",
        "batch",
        "ms/token",
        "tokens/s/chip",
        "chips",
        "$/hour",
        "$/M cloud",
        "$/M tco",
        "memory",
    ];
    let budget = request.power_budget_mw.is_some();
    if budget {
        header.extend(["chips in budget", "tokens/s in budget", "$/M in budget"]);
        if request.target_tokens_per_s.is_some() {
            header.push("fleet MW");
        }
    }
    let mut table = new_table(&header);
    let (mut notes, mut left_out) = (Vec::new(), 0);
    // A row priced on another basis than most rows' is marked, so that no one ranks unlike
    // prices unawares.
    fn cloud_basis(e: &PlanEntry) -> Option<&str> {
        let priced = e
            .outcome
            .as_ref()
            .ok()?
            .cloud_usd_per_million_tokens
            .is_some();
        priced.then_some(e.costing.price_basis.as_deref()?)
    }
    let main = main_basis(entries.iter().filter_map(cloud_basis));
    let mut marked = false;
    for e in entries {
        let other = cloud_basis(e).is_some_and(|b| Some(b) != main);
        marked |= other;
        let types = e.dtypes.brief();
        match &e.outcome {
            Ok(p) => {
                let s = &p.summary;
                let mut cells = vec![
                    e.chip.clone(),
                    e.engine.clone(),
                    types,
                    s.scheme.map_or("-".into(), |x| x.to_string()),
                    if p.layout.is_empty() {
                        "1 chip".to_owned()
                    } else {
                        p.layout.clone()
                    },
                    p.batch.to_string(),
                    s.ms_per_token.map_or("-".into(), |ms| match p.band {
                        Some(b) => format!("{} {}", three_significant(ms), ends(1.0, b.time(ms))),
                        None => three_significant(ms),
                    }),
                    s.tokens_per_s_per_chip.map_or("-".into(), number),
                    p.chips.to_string(),
                    p.usd_per_hour.map_or("-".into(), |u| format!("{u:.2}")),
                    (p.cloud_usd_per_million_tokens).map_or("-".into(), |u| match other {
                        true => format!("{u:.3} *"),
                        false => format!("{u:.3}"),
                    }),
                    (p.tco_usd_per_million_tokens).map_or("-".into(), |u| format!("{u:.3}")),
                    human(s.footprint_bytes, "B"),
                ];
                if budget {
                    cells.extend(budget_cells(p, request.target_tokens_per_s.is_some()));
                }
                table.add_row(cells);
            }
            Err(why) if request.include_unfit => notes.push(format!("{} {types}: {why}", e.chip)),
            Err(_) => left_out += 1,
        }
    }
    align_right(&mut table, 4);
    writeln!(out, "{table}")?;
    if let (true, Some(main)) = (marked, main) {
        writeln!(
            out,
            "* priced on another cloud basis than {main} (the header names each; `stepcost prices` lists them)"
        )?;
    }
    if let Some(mw) = request.power_budget_mw {
        writeln!(
            out,
            "power budget: {mw} MW at the wall (system power per chip x PUE), whole replicas; \
             $/M in budget in the view ranked"
        )?;
    }
    if left_out > 0 {
        writeln!(
            out,
            "{left_out} chip and type choices left out: nothing fits, or too slow (--include-unfit lists them)"
        )?;
    }
    write_plan_notes(out, entries, &notes)
}

/// A point's cells within the power budget: chips, tokens/s and $/M there, and with a
/// target the fleet's MW and whether it fits; why not, where there is no answer.
fn budget_cells(p: &crate::study::plan::PlanPoint, target: bool) -> Vec<String> {
    match &p.power {
        Some(Ok(fit)) => {
            let mut cells = vec![
                fit.chips.to_string(),
                number(fit.tokens_per_s),
                (fit.usd_per_million_tokens).map_or("-".into(), |u| format!("{u:.3}")),
            ];
            if target {
                let mw = fit.fleet_mw.unwrap_or(0.0);
                let fits = if fit.fits() == Some(true) {
                    "fits"
                } else {
                    "over"
                };
                cells.push(format!("{} {fits}", three_significant(mw)));
            }
            cells
        }
        Some(Err(why)) => vec![why.clone()],
        None => Vec::new(),
    }
}

/// The engines the entries were planned under, each once in order (`none` in roofline mode,
/// and where there is no entry).
fn engines_planned(entries: &[PlanEntry]) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for e in entries {
        if !ids.contains(&e.engine.as_str()) {
            ids.push(&e.engine);
        }
    }
    match ids.is_empty() {
        true => "none".to_owned(),
        false => ids.join(", "),
    }
}

/// The scenario a plan decodes: its context and the other params set, as `context=4096
/// tokens=1`.
fn plan_assumptions(request: &PlanRequest) -> String {
    request
        .assumed
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Below a plan: the chips without a cost in the view asked for, once each, then the choices
/// that cannot meet the request and why.
fn write_plan_notes(
    out: &mut dyn Write,
    entries: &[PlanEntry],
    notes: &[String],
) -> io::Result<()> {
    let priced = entries.iter().filter_map(|e| {
        let point = e.outcome.as_ref().ok()?;
        Some((e.chip.as_str(), &point.summary))
    });
    let mut seen = Vec::new();
    for note in cost_notes(priced) {
        if !seen.contains(&note) {
            writeln!(out, "{note}")?;
            seen.push(note);
        }
    }
    if !notes.is_empty() {
        writeln!(out, "not feasible on one chip:")?;
        for note in notes {
            writeln!(out, "  {note}")?;
        }
    }
    Ok(())
}

/// What a plan asked for and assumed, and how its rows are ranked.
fn write_plan_header(
    out: &mut dyn Write,
    workload: &str,
    request: &PlanRequest,
    entries: &[PlanEntry],
) -> io::Result<()> {
    match request.target_tokens_per_s {
        Some(target) => write!(
            out,
            "{workload}: {} output tokens/s (decode steps: prompts unpriced, `plan --rate` with `--request` prices them; $/M at that rate)",
            number(target)
        )?,
        None => write!(out, "{workload}: one replica each")?,
    }
    if let Some(limit) = request.max_ms_per_token {
        write!(out, " at no more than {limit} ms per token")?;
    }
    writeln!(
        out,
        "; per chip and types the cheapest parallel layout within one node (tensor, pipeline, expert), or where none fits, each layout over the fewest nodes that fit and twice as many (tensor within the node, pipeline or expert across), decoding at the largest batch that fits and meets the bound"
    )?;
    writeln!(
        out,
        "assumes: {}; memory utilisation {}; engine {}",
        plan_assumptions(request),
        three_significant(request.scenario.memory_utilization()),
        engines_planned(entries),
    )?;
    if request.conservative && request.scenario.mode() == Mode::Expected {
        writeln!(
            out,
            "conservative: each step as slow as the high end of its 80% band (in brackets after ms/token) for the bound, the replicas, the costs and the ranking"
        )?;
    }
    if let Some(first) = entries.first().map(|e| &e.costing.model) {
        let bases = entries.iter().map(|e| e.costing.price_basis.as_deref());
        let line = cost_line(first, bases);
        match request.sort {
            PlanSort::Cost => writeln!(out, "{line}; ranked by {} cost", first.view())?,
            PlanSort::Chips => writeln!(out, "{line}; ranked by chips needed")?,
            PlanSort::Latency => writeln!(out, "{line}; ranked by ms per token")?,
        }
    }
    Ok(())
}
