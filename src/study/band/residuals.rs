//! The text of `validation/band.csv`, which keeps the residuals a band is taken from (each
//! cross-validated row's `ln(measured time / predicted time)`, worked out by
//! `fit::cross::residuals_of`).

use super::{BandKind, Residual};

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
