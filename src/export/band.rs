//! The 80 % band as `validate --cross-validate` reports it (each group's band and the nested
//! coverage per kind) and the residual file it is calibrated from (`validation/band.csv`).

use std::fmt::Write as _;
use std::io::{self, Write};

use super::style::{align_right, new_table};
use crate::base::units::percent;
use crate::study::band::{Calibration, Coverage, Residual, Scope, MIN_SOURCES};

/// The bands of `calibration`, then how many held-out rows fell inside the band calibrated
/// without their source.
pub(crate) fn write_band_report(
    out: &mut dyn Write,
    calibration: &Calibration,
    coverage: &[Coverage],
) -> io::Result<()> {
    writeln!(
        out,
        "80% band: the 10th and 90th percentiles of the held-out ln(measured / predicted step time), each source weighing as one, per kind, and per family within a kind, with {MIN_SOURCES} sources or more"
    )?;
    let mut bands = new_table(&["band", "sources", "rows", "low", "high"]);
    for g in &calibration.groups {
        let scope = match &g.scope {
            Scope::All => "all".to_owned(),
            Scope::Kind(k) => format!("kind {}", k.name()),
            Scope::KindFamily(k, f) => format!("kind {} family {f}", k.name()),
        };
        bands.add_row(vec![
            scope,
            g.sources.to_string(),
            g.rows.to_string(),
            format!("x{:.3}", g.band.low),
            format!("x{:.3}", g.band.high),
        ]);
    }
    align_right(&mut bands, 1);
    writeln!(out, "{bands}")?;
    let mut table = new_table(&[
        "nested coverage",
        "rows",
        "inside",
        "share",
        "above",
        "below",
    ]);
    for c in coverage {
        table.add_row(vec![
            c.kind
                .map_or("all".to_owned(), |k| format!("kind {}", k.name())),
            c.rows.to_string(),
            c.inside.to_string(),
            percent(c.share()),
            c.above.to_string(),
            (c.rows - c.inside - c.above).to_string(),
        ]);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "each source's rows against the band calibrated on the other sources' residuals; above: measured slower than the band"
    )
}

/// The residual file: a comment saying what it is, the header, a line per row.
pub(crate) fn residuals_csv(residuals: &[Residual], cases_name: &str) -> String {
    let mut text = format!(
        "# Cross-validated residuals of {cases_name}, written by `stepcost validate {cases_name} --cross-validate --residuals FILE`:\n\
         # each row predicted with constants fitted without its source; ln_time_ratio is ln(measured / predicted)\n\
         # of the step's time (a rate's ratio inverted). The 80% band of every expected-mode number is taken from them.\n\
         id,kind,family,ln_time_ratio\n"
    );
    for r in residuals {
        let _ = writeln!(
            text,
            "{},{},{},{}",
            r.id,
            r.kind.name(),
            r.family,
            r.ln_time_ratio
        );
    }
    text
}
