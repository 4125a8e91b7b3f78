//! Nested coverage: each source's rows checked against the band calibrated on the other
//! sources' residuals alone, so that no row's band has seen the row or its source.

use super::{BandKind, Calibration, Residual};

/// How many held-out rows of a group fell inside their band.
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    /// `None`: every kind together.
    pub kind: Option<BandKind>,
    /// Held-out rows that had a band to be checked against.
    pub rows: usize,
    /// Of those, the rows whose residual fell inside the band, ends included.
    pub inside: usize,
    /// Of the rows outside, those whose measured time was above the band (predicted too fast).
    pub above: usize,
}

impl Coverage {
    /// The share of rows inside their band, `inside / rows` (NaN with no rows); 0.8 for a
    /// well-calibrated band.
    pub fn share(&self) -> f64 {
        self.inside as f64 / self.rows as f64
    }
}

/// The coverage of every row, overall and then per kind (the kinds with rows), each row's band
/// calibrated without its source's residuals.
pub fn nested_coverage(residuals: &[Residual]) -> Vec<Coverage> {
    let mut sources: Vec<&str> = residuals.iter().map(Residual::source).collect();
    sources.sort_unstable();
    sources.dedup();
    // (kind, inside, above) per row
    let mut verdicts: Vec<(BandKind, bool, bool)> = Vec::with_capacity(residuals.len());
    for source in sources {
        let others: Vec<Residual> = (residuals.iter())
            .filter(|r| r.source() != source)
            .cloned()
            .collect();
        let calibration = Calibration::of(&others);
        for r in residuals.iter().filter(|r| r.source() == source) {
            let Some(band) = calibration.band(r.kind, Some(&r.family)) else {
                continue; // the only source: nothing to calibrate on
            };
            let (low, high) = (band.low.ln(), band.high.ln());
            let v = r.ln_time_ratio;
            verdicts.push((r.kind, v >= low && v <= high, v > high));
        }
    }
    let count = |kind: Option<BandKind>| {
        let of = verdicts.iter().filter(|v| kind.is_none_or(|k| v.0 == k));
        let (mut rows, mut inside, mut above) = (0, 0, 0);
        for v in of {
            rows += 1;
            inside += usize::from(v.1);
            above += usize::from(v.2);
        }
        Coverage {
            kind,
            rows,
            inside,
            above,
        }
    };
    let mut all = vec![count(None)];
    all.extend(
        (BandKind::ALL.into_iter())
            .map(|k| count(Some(k)))
            .filter(|c| c.rows > 0),
    );
    all
}
