//! The lines of advice beside a run: that it does not fit and what would make it fit, or the
//! lever to try next.

use crate::base::units::{human, three_significant};
use crate::core::timing::{RequestSummary, StepReport};
use crate::study::fix::Fix;
use crate::study::lever::Lever;

/// A priced request's memory at its end, the cache at its longest context, and whether it fits.
pub(super) fn request_memory(r: &RequestSummary) -> String {
    format!(
        "{} (context {}): {}",
        human(r.footprint_bytes, "B"),
        r.end_context(),
        if r.fits { "fits" } else { "DOES NOT FIT" }
    )
}

/// The warning for a report that does not fit ([`StepReport::fits`]): its request's, where
/// only the request outgrows the memory, else the scenario's with `fixes()` priced; `None`
/// when it fits.
pub(crate) fn unfit_warning(
    report: &StepReport,
    fixes: impl FnOnce() -> Vec<Fix>,
) -> Option<String> {
    match &report.request {
        Some(r) if report.summary.fits && !r.fits => Some(request_fit_warning(report, r)),
        _ if report.summary.fits => None,
        _ => Some(fit_warning(report, &fixes())),
    }
}

/// The line for a step that fits but whose request does not: its cache at the request's end.
fn request_fit_warning(report: &StepReport, request: &RequestSummary) -> String {
    format!(
        "warning: on {} the request does not fit: at its end (context {}) it needs {}, and {} \
         is usable; a smaller batch or shorter request would",
        report.chip,
        request.end_context(),
        human(request.footprint_bytes, "B"),
        human(report.summary.usable_bytes, "B"),
    )
}

/// The one line that says a scenario does not fit its chip and what would make it fit, each
/// change with what it does to the step time (and to $/M tokens, where priced).
fn fit_warning(report: &StepReport, fixes: &[Fix]) -> String {
    let s = &report.summary;
    let mut line = format!(
        "warning: on {} this does not fit: it needs {}, and {} is usable ({} of {})",
        report.chip,
        human(s.footprint_bytes, "B"),
        human(s.usable_bytes, "B"),
        three_significant(s.usable_bytes / report.capacity_bytes),
        human(report.capacity_bytes, "B"),
    );
    if fixes.is_empty() {
        line.push_str("; no single change of tp, weight or KV type or batch makes it fit");
        return line;
    }
    let priced: Vec<String> = fixes
        .iter()
        .take(3)
        .map(|f| {
            let usd = f.usd_ratio.map_or(String::new(), |r| {
                format!(", x{} $/M", three_significant(r))
            });
            format!(
                "{} (x{} time{usd})",
                f.change,
                three_significant(f.time_ratio)
            )
        })
        .collect();
    line.push_str("; fits with ");
    line.push_str(&priced.join(" or "));
    line
}

/// The line under a run that names the lever to try next ([`next_step`]).
///
/// [`next_step`]: crate::study::lever::next_step
pub(crate) fn next_step_line(lever: &Lever) -> String {
    let usd = lever.usd_ratio.map_or(String::new(), |r| {
        format!(", x{} $/M", three_significant(r))
    });
    let ms = lever.ms_per_token_ratio.map_or(String::new(), |r| {
        format!(", x{} ms per token", three_significant(r))
    });
    format!(
        "next step: {} gives x{} tokens/s{usd}{ms}, and still fits",
        lever.change,
        three_significant(lever.throughput_ratio)
    )
}
