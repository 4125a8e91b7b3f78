//! What `compare` writes: one scenario priced on several chips, each with its speed against
//! the first's, as a table, CSV or JSON.

use std::io::{self, Write};

use super::costs::{cost_notes, main_basis};
use super::format::OutputFormat;
use super::list::write_list;
use super::numbers::{banded_rate, banded_time, number};
use super::rows::{band_of, compare_rows, ParamCells, Shape};
use super::step::write_scenario;
use super::style::{align_right, new_table};
use crate::base::units::percent;
use crate::core::timing::StepReport;

/// Writes one scenario priced on several chips, with each chip's speed relative to the
/// first's.
pub fn write_compare(
    out: &mut dyn Write,
    reports: &[StepReport],
    format: OutputFormat,
) -> io::Result<()> {
    write_compare_shaped(out, reports, format, &Shape::default())
}

/// [`write_compare`] with the rows cut to `shape`.
pub(crate) fn write_compare_shaped(
    out: &mut dyn Write,
    reports: &[StepReport],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let cells: Vec<ParamCells> = reports.iter().map(ParamCells::of).collect();
    let rows = compare_rows(reports, &cells);
    write_list(out, &rows, format, shape, |t| table(t, reports))
}

/// The table of a comparison: what was priced, then a row per chip.
fn table(out: &mut dyn Write, reports: &[StepReport]) -> io::Result<()> {
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
    // In the cloud view, a chip priced on another basis than most is marked.
    fn cloud_basis(r: &StepReport) -> Option<&str> {
        let cloud = r.summary.cost.basis == crate::core::cost::CostView::Cloud;
        let priced = cloud && r.summary.cost.usd_per_million_tokens.is_some();
        priced.then_some(r.costing.price_basis.as_deref()?)
    }
    let main = main_basis(reports.iter().filter_map(cloud_basis));
    let mut marked = false;
    for r in reports {
        let s = &r.summary;
        let other = cloud_basis(r).is_some_and(|b| Some(b) != main);
        marked |= other;
        table.add_row(vec![
            r.chip.clone(),
            s.scheme.map_or("-".into(), |s| s.to_string()),
            banded_time(s.step_time_s, band_of(r)),
            (s.tokens_per_s).map_or("-".into(), |t| banded_rate(t, number(t), band_of(r))),
            percent(s.mfu),
            percent(s.mbu),
            percent(s.compute_bound_share),
            s.cost
                .usd_per_million_tokens
                .map_or("-".into(), |usd| match other {
                    true => format!("{usd:.3} *"),
                    false => format!("{usd:.3}"),
                }),
            if r.fits() { "yes" } else { "no" }.to_owned(),
            format!("{:.2}x", t0 / s.step_time_s),
        ]);
    }
    align_right(&mut table, 2);
    writeln!(out, "{table}")?;
    if let (true, Some(main)) = (marked, main) {
        writeln!(
            out,
            "* priced on another cloud basis than {main} (the header names each; `stepcost prices` lists them)"
        )?;
    }
    for note in cost_notes(reports.iter().map(|r| (r.chip.as_str(), &r.summary))) {
        writeln!(out, "{note}")?;
    }
    Ok(())
}
