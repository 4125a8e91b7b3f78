//! The 80 % band on a prediction: from the cross-validated residuals of the measured set
//! (each row predicted with constants fitted without its source), the 10th and 90th
//! percentiles of `ln(measured time / predicted time)` per kind of prediction, and per chip
//! family where a kind has rows from at least [`MIN_SOURCES`] sources, each source weighing as
//! one (see `quantile`: the band is for a source it has not seen). A prediction of step time
//! `t` then has the band `[t exp(q10), t exp(q90)]`, a rate the inverse. The residuals are data:
//! `validation/band.csv`, written by `validate --cross-validate --residuals` and embedded at
//! build time; a test reruns the cross-validation and checks the file. Roofline mode is a
//! ceiling, not a prediction: it has no band.

mod coverage;
mod quantile;
mod residuals;

use std::sync::OnceLock;

pub use coverage::{nested_coverage, Coverage};
pub use quantile::{pooled_quantile, source_count};
pub use residuals::parse_residuals;

use crate::core::scenario::Mode;

/// Sources a group needs for a band of its own. The 10th percentile of `k` sources sits at
/// source rank `(k + 1) / 10`: below 9 sources that is under the first, so the band would be
/// the group's range, not its 80 %. Rows do not make up for sources: a group of 19 rows, 16 of
/// them from one source, measures that source's own spread and says nothing of where a new
/// source's offset falls.
pub const MIN_SOURCES: usize = 9;

/// What a prediction is of, as the measured set groups its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandKind {
    /// One kernel (a GEMM, a stream, an attention kernel).
    Kernel,
    /// A model's decode step (one token per sequence).
    Decode,
    /// A model's prefill step (more than one token per sequence).
    Prefill,
    /// A whole request (time to first token, per output token, end to end).
    Request,
}

impl BandKind {
    /// Every kind, in the order bands and coverage list them.
    pub const ALL: [BandKind; 4] = [
        BandKind::Kernel,
        BandKind::Decode,
        BandKind::Prefill,
        BandKind::Request,
    ];

    /// The name a case file's `kind` column gives it.
    pub fn name(self) -> &'static str {
        match self {
            BandKind::Kernel => "kernel",
            BandKind::Decode => "decode",
            BandKind::Prefill => "prefill",
            BandKind::Request => "request",
        }
    }

    /// The kind a case file's `kind` column names (`None`: no such kind).
    pub fn parse(name: &str) -> Option<BandKind> {
        BandKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// A step's kind from its workload's `tokens` param (none: a kernel workload).
    pub fn of_step(tokens: Option<f64>) -> BandKind {
        match tokens {
            None => BandKind::Kernel,
            Some(t) if t > 1.0 => BandKind::Prefill,
            Some(_) => BandKind::Decode,
        }
    }
}

/// One cross-validated row: where it came from and how far off its held-out prediction was,
/// as `ln(measured / predicted)` of a time (a rate's ratio inverted), so that a positive
/// residual is a prediction too fast.
#[derive(Debug, Clone, PartialEq)]
pub struct Residual {
    /// The measured row's id, its source's code before the first `-` (`W-G1`).
    pub id: String,
    /// What the row's prediction is of.
    pub kind: BandKind,
    /// The chip's family (its id where the chip file names none).
    pub family: String,
    /// `ln(measured / predicted)` of the held-out prediction's time: positive when the
    /// prediction was too fast.
    pub ln_time_ratio: f64,
}

impl Residual {
    /// The row's source: its id up to the first `-`.
    pub fn source(&self) -> &str {
        self.id.split('-').next().unwrap_or(&self.id)
    }
}

/// An 80 % band as multipliers of a predicted time: the time lies in `[t low, t high]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The 10th-percentile multiplier, `exp(q10)` of the residuals.
    pub low: f64,
    /// The 90th-percentile multiplier, `exp(q90)` of the residuals.
    pub high: f64,
}

impl Band {
    /// The band of a time `t` (any unit).
    pub fn time(self, t: f64) -> (f64, f64) {
        (t * self.low, t * self.high)
    }

    /// The band of a rate `r` (tokens/s): a slower step is a lower rate.
    pub fn rate(self, r: f64) -> (f64, f64) {
        (r / self.high, r / self.low)
    }
}

/// Which rows a band was taken from.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// Every kind and family together (a kind with fewer than [`MIN_SOURCES`] sources).
    All,
    /// Every family of one kind together (the band of a family with fewer than
    /// [`MIN_SOURCES`] sources of its own).
    Kind(BandKind),
    /// One kind on one chip family.
    KindFamily(BandKind, String),
}

/// One group's band and the rows and sources it was taken from.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The rows the band was taken from.
    pub scope: Scope,
    /// How many residuals are in the scope.
    pub rows: usize,
    /// How many distinct sources those rows come from, each weighing as one in the band.
    pub sources: usize,
    /// The group's 80 % band.
    pub band: Band,
}

/// The bands of a set of residuals: every kind, and every family within a kind, with rows from
/// at least [`MIN_SOURCES`] sources, and all rows together for the rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The every-row group first, then each kind followed by its families, those with
    /// enough sources only.
    pub groups: Vec<Group>,
}

impl Calibration {
    /// The bands of `residuals` (none when there are none).
    pub fn of(residuals: &[Residual]) -> Calibration {
        let mut groups = Vec::new();
        let mut add = |scope: Scope, member: &dyn Fn(&Residual) -> bool, least: usize| {
            let mut rows: Vec<(f64, &str)> = (residuals.iter())
                .filter(|r| member(r))
                .map(|r| (r.ln_time_ratio, r.source()))
                .collect();
            let sources = source_count(&rows);
            if sources >= least.max(1) {
                rows.sort_by(|a, b| a.0.total_cmp(&b.0));
                let band = Band {
                    low: pooled_quantile(&rows, 0.1).exp(),
                    high: pooled_quantile(&rows, 0.9).exp(),
                };
                groups.push(Group {
                    scope,
                    rows: rows.len(),
                    sources,
                    band,
                });
            }
        };
        add(Scope::All, &|_| true, 1);
        for kind in BandKind::ALL {
            add(Scope::Kind(kind), &|r| r.kind == kind, MIN_SOURCES);
            let mut families: Vec<&str> = (residuals.iter())
                .filter(|r| r.kind == kind)
                .map(|r| r.family.as_str())
                .collect();
            families.sort_unstable();
            families.dedup();
            for family in families {
                let member = |r: &Residual| r.kind == kind && r.family == family;
                add(Scope::KindFamily(kind, family.into()), &member, MIN_SOURCES);
            }
        }
        Calibration { groups }
    }

    /// The band of a prediction of `kind` on a chip of `family`: its kind and family's, else
    /// its kind's, else every row's.
    pub fn band(&self, kind: BandKind, family: Option<&str>) -> Option<Band> {
        let find = |want: &dyn Fn(&Scope) -> bool| self.groups.iter().find(|g| want(&g.scope));
        let family = family
            .and_then(|f| find(&|s| matches!(s, Scope::KindFamily(k, g) if *k == kind && g == f)));
        family
            .or_else(|| find(&|s| *s == Scope::Kind(kind)))
            .or_else(|| find(&|s| *s == Scope::All))
            .map(|g| g.band)
    }
}

/// The shipped bands: those of `validation/band.csv`, the measured set's cross-validated
/// residuals, computed once.
pub fn shipped() -> &'static Calibration {
    static SHIPPED: OnceLock<Calibration> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let residuals = parse_residuals(SHIPPED_RESIDUALS)
            .unwrap_or_else(|e| panic!("validation/band.csv, embedded: {e}"));
        Calibration::of(&residuals)
    })
}

/// `validation/band.csv` as built into the binary.
pub const SHIPPED_RESIDUALS: &str = include_str!("../../../validation/band.csv");

/// The band of a step priced in `mode` (none in roofline mode, a ceiling).
pub fn of_step(mode: Mode, tokens: Option<f64>, family: Option<&str>) -> Option<Band> {
    match mode {
        Mode::Roofline => None,
        Mode::Expected => shipped().band(BandKind::of_step(tokens), family),
    }
}

#[cfg(test)]
mod tests;
