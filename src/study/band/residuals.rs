//! The residuals a band is taken from: each cross-validated row's `ln(measured time /
//! predicted time)`, and the text of `validation/band.csv` that keeps them.

use super::{BandKind, Residual};
use crate::study::fit::cross::CrossValidation;

/// The held-out residual of every row of `cv` priced both in sample and held out, in the case
/// file's order. A rate's ratio (TFLOP/s, TB/s, tokens/s) is inverted into a time's, so that
/// every residual reads the same way: positive where the prediction was too fast.
pub fn residuals_of(cv: &CrossValidation) -> Vec<Residual> {
    (cv.in_sample.iter().zip(&cv.held_out).zip(&cv.families))
        .filter(|((inside, _), _)| inside.predicted.is_ok())
        .filter_map(|((_, held), family)| {
            let predicted = *held.predicted.as_ref().ok()?;
            let kind = BandKind::parse(&held.case.kind)?;
            let ratio = held.case.measured / predicted;
            let ln_time_ratio = match held.case.metric.is_rate() {
                false => ratio.ln(),
                true => -ratio.ln(),
            };
            Some(Residual {
                id: held.case.id.clone(),
                kind,
                family: family.clone(),
                ln_time_ratio,
            })
        })
        .collect()
}

/// Reads residuals from `id,kind,family,ln_time_ratio` lines (after a header; lines starting
/// with `#` are comments). An error names the line.
pub fn parse_residuals(text: &str) -> Result<Vec<Residual>, String> {
    let mut rows = Vec::new();
    let lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    let mut lines = lines.filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, "id,kind,family,ln_time_ratio")) => {}
        other => {
            let line = other.map_or(0, |(n, _)| n);
            return Err(format!(
                "line {line}: expected the header `id,kind,family,ln_time_ratio`"
            ));
        }
    }
    for (n, line) in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let [id, kind, family, value] = fields[..] else {
            return Err(format!(
                "line {n}: expected 4 fields, found {}",
                fields.len()
            ));
        };
        let kind = BandKind::parse(kind).ok_or_else(|| {
            format!("line {n}: unknown kind `{kind}` (kernel, decode, prefill, request)")
        })?;
        let ln_time_ratio = value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("line {n}: `{value}` is not a finite number"))?;
        rows.push(Residual {
            id: id.to_owned(),
            kind,
            family: family.to_owned(),
            ln_time_ratio,
        });
    }
    Ok(rows)
}
