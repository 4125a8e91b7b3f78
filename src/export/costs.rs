//! The cost assumptions in words, as the tables' headers name them, and the notes that say
//! why a chip has no cost in the view asked for.

use crate::base::units::human;
use crate::core::cost::{CostModel, CostView};
use crate::core::timing::StepSummary;

/// `cost: tco, 4 y, PUE 1.3, 0.10 USD/kWh, 100 % utilisation`, or `cost: cloud, on-demand per
/// chip-hour on basis B` with each distinct basis of the chips shown, in their order.
pub(super) fn cost_line<'a>(
    model: &CostModel,
    bases: impl IntoIterator<Item = Option<&'a str>>,
) -> String {
    match model.view() {
        CostView::Tco => format!(
            "cost: tco, {} y at {} % capital, PUE {}, {:.2} USD/kWh, {:.2} USD/kW-month, {:.2} USD per Gb/s of network, {} % utilisation ((capex + network + power + colo of the system per accelerator) / utilisation)",
            model.years(),
            model.rate_of_capital() * 100.0,
            model.pue(),
            model.usd_per_kwh(),
            model.usd_per_kw_month(),
            model.network_usd_per_gbps(),
            model.tco_utilization() * 100.0,
        ),
        CostView::Cloud => {
            let mut seen: Vec<&str> = Vec::new();
            for basis in bases.into_iter().flatten() {
                if !seen.contains(&basis) {
                    seen.push(basis);
                }
            }
            if seen.is_empty() {
                "cost: cloud (no chip names a price basis)".to_owned()
            } else {
                format!("cost: cloud, on-demand per chip-hour, basis {}", seen.join("; "))
            }
        }
    }
}

/// `chip: no price on basis B`, one line per chip shown without a cost.
pub(super) fn cost_notes<'a>(
    summaries: impl IntoIterator<Item = (&'a str, &'a StepSummary)>,
) -> Vec<String> {
    summaries
        .into_iter()
        .filter_map(|(chip, s)| s.cost.note.as_ref().map(|n| format!("{chip}: {n}")))
        .collect()
}

/// A run's cost lines: per hour, per million tokens, tokens per kWh.
pub(super) fn cost_rows(row: &mut dyn FnMut(&str, String), s: &StepSummary) {
    match (&s.cost.note, s.cost.usd_per_hour) {
        (Some(note), _) => row("cost", note.to_string()),
        (None, Some(usd)) => {
            row("cost per hour", format!("{usd:.2} USD ({})", s.cost.basis));
            if let (crate::core::cost::CostView::Tco, Some(p)) = (s.cost.basis, &s.cost.parts) {
                row(
                    "  of which",
                    format!(
                        "capex {:.3}, network {:.3}, power {:.3}, colo {:.3} USD per calendar hour",
                        p.capex_usd_per_hour,
                        p.network_usd_per_hour,
                        p.power_usd_per_hour,
                        p.colo_usd_per_hour
                    ),
                );
            }
            if let Some(caveat) = &s.cost.caveat {
                row("cost note", caveat.clone());
            }
            if let Some(m) = s.cost.usd_per_million_tokens {
                row("cost per million tokens", format!("{m:.3} USD"));
            }
        }
        (None, None) => {}
    }
    if let Some(t) = s.cost.tokens_per_kwh {
        row("tokens per kWh", human(t, "").trim_end().to_owned());
    }
}

/// The basis most of a table's priced rows share (the first such on a tie): a row priced on
/// another is marked `*` beside its cloud cost.
pub(super) fn main_basis<'a>(priced_bases: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for basis in priced_bases {
        match counts.iter_mut().find(|(b, _)| *b == basis) {
            Some((_, n)) => *n += 1,
            None => counts.push((basis, 1)),
        }
    }
    let most = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == most).map(|(b, _)| b)
}
