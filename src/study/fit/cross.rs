//! Leave-one-source-out cross-validation: for each source of measurements (a publication or a
//! repository), the constants of the chips its rows were measured on are fitted again on the
//! other sources' rows alone, and its rows predicted with them. A row's source is its id's
//! prefix up to the first `-` (`MAMF-7` is `MAMF`'s, `AZ-M10` Azure's benchmarking guide's):
//! ids name their source in `validation/measured.csv` and docs/sources.md. The held-out
//! predictions' residuals ([`residuals_of`]) are what the 80 % band (`study::band`) is
//! calibrated from.

use std::path::Path;

use rayon::prelude::*;

use crate::base::error::Error;
use crate::core::chip::{Achievable, Chip};
use crate::study::band::{BandKind, Residual};
use crate::study::validate::{self, stats_of, Case, ErrorStats, Loads, Outcome, RowError};

use super::{fit_pooled, fit_rows, fit_shared, source_of, Constant, Fitted, Row, OWN_SOURCES};

/// One source held out.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    /// The source held out: its rows' id prefix up to the first `-` (`MAMF`).
    pub source: String,
    /// Its rows that priced.
    pub rows: usize,
    /// Chips fitted on the other sources' rows of the chip alone (as the shipped files are
    /// where a chip's rows come from two sources or more).
    pub refit: Vec<String>,
    /// Chips fitted on the other sources' rows of their family, with the family's name.
    pub family: Vec<(String, String)>,
    /// Chips whose family no other source measured: predicted with every chip's fit on the
    /// other sources' rows (a constant that fit did not reach at the value every fit starts
    /// from, never the file's, which may hold a fit to the held-out rows).
    pub unfitted: Vec<String>,
}

/// Every case predicted in sample (the chip files' constants) and held out.
pub struct CrossValidation {
    /// Each case predicted with its chip file's constants, in the case file's order.
    pub in_sample: Vec<Outcome>,
    /// Each case predicted with constants fitted without its source, in the same order (a
    /// case that did not price in sample keeps that outcome).
    pub held_out: Vec<Outcome>,
    /// The family of each case's chip (its id where the file names no family).
    pub families: Vec<String>,
    /// One fold per source, in the order the sources first appear in the case file.
    pub folds: Vec<Fold>,
}

/// Holds out each source of `cases` in turn. A case that cannot be priced is an outcome with
/// the reason, in both predictions.
pub fn cross_validate(cases: Vec<Case>, cases_file: &Path) -> Result<CrossValidation, Error> {
    let mut loads = Loads::default();
    let rows: Vec<Result<Row, Box<Outcome>>> = cases
        .into_iter()
        .map(|case| {
            Row::new(case.clone(), cases_file, None, &mut loads)
                .map_err(|e| Box::new(validate::outcome(case, Err(e))))
        })
        .collect();
    let in_sample: Vec<Outcome> = rows
        .iter()
        .map(|r| {
            r.as_ref()
                .map_or_else(|o| (**o).clone(), |r| r.outcome(None))
        })
        .collect();
    // The rows that price with their chip file's constants: those a fold fits and predicts.
    let priced: Vec<Option<&Row>> = (rows.iter().zip(&in_sample))
        .map(|(r, o)| r.as_ref().ok().filter(|_| o.predicted.is_ok()))
        .collect();
    let mut held_out = in_sample.clone();
    let mut sources: Vec<&str> = Vec::new();
    for o in &in_sample {
        if !sources.contains(&source_of(&o.case.id)) {
            sources.push(source_of(&o.case.id));
        }
    }
    // Folds are independent: fitted in parallel, their predictions written in source order.
    let folds = (sources.into_par_iter())
        .map(|source| hold_out(source, &priced))
        .collect::<Result<Vec<(Fold, Vec<(usize, Outcome)>)>, Error>>()?;
    let folds = (folds.into_iter())
        .map(|(fold, predicted)| {
            for (i, outcome) in predicted {
                held_out[i] = outcome;
            }
            fold
        })
        .collect();
    let families = rows
        .iter()
        .zip(&in_sample)
        .map(|(r, o)| match r {
            Ok(r) => r.chip.family().unwrap_or(r.chip.id()).to_owned(),
            Err(_) => o.case.chip.clone(),
        })
        .collect();
    Ok(CrossValidation {
        in_sample,
        held_out,
        families,
        folds,
    })
}

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

/// Holds out `source`: the chips of its rows fitted to the other sources' rows as `stepcost
/// fit --family auto` fits them (the chip alone, pulled towards its family's fit, where the
/// other sources' rows of it come from two sources or more; else its family, pulled towards
/// every chip's fit), and its rows predicted with them (with their indices).
fn hold_out(source: &str, priced: &[Option<&Row>]) -> Result<(Fold, Vec<(usize, Outcome)>), Error> {
    let of_source = |r: &&Row| source_of(&r.case.id) == source;
    let held: Vec<usize> = (0..priced.len())
        .filter(|&i| priced[i].is_some_and(|r| of_source(&r)))
        .collect();
    let mut fold = Fold {
        source: source.to_owned(),
        rows: held.len(),
        refit: Vec::new(),
        family: Vec::new(),
        unfitted: Vec::new(),
    };
    let mut predicted = Vec::new();
    let mut chips: Vec<&Chip> = Vec::new();
    for r in held.iter().filter_map(|&i| priced[i]) {
        if !chips.iter().any(|c| c.id() == r.chip.id()) {
            chips.push(r.chip.as_ref());
        }
    }
    let others = || (priced.iter().flatten()).filter(|r| !of_source(r)).copied();
    // Every chip's fit on the other sources: the prior of each family's, and the constants of
    // a chip whose family no other source measured.
    let all: Vec<&Row> = others().collect();
    let pooled = (!all.is_empty()).then(|| fit_pooled(&all)).transpose()?;
    // Each family's fit on the other sources, shared by its chips in this fold.
    let mut families: Vec<(&str, Option<Fitted>)> = Vec::new();
    for chip in chips {
        let Some(start) = chip.expected() else {
            continue; // every priced row's chip has a section: expected mode priced it
        };
        let own: Vec<&Row> = others().filter(|r| r.chip.id() == chip.id()).collect();
        let mut sources: Vec<&str> = own.iter().map(|r| source_of(&r.case.id)).collect();
        sources.sort_unstable();
        sources.dedup();
        if let Some(f) = chip
            .family()
            .filter(|f| !families.iter().any(|(n, _)| n == f))
        {
            let rows: Vec<&Row> = others().filter(|r| r.chip.family() == Some(f)).collect();
            let fit = (!rows.is_empty())
                .then(|| fit_shared(start, &rows, pooled.as_ref()))
                .transpose()?;
            families.push((f, fit));
        }
        let family = (families.iter())
            .find(|(n, _)| Some(*n) == chip.family())
            .and_then(|(_, fit)| fit.as_ref())
            .map(|fit| fit.for_chip(start));
        let constants = if sources.len() >= OWN_SOURCES {
            fold.refit.push(chip.id().to_owned());
            fit_rows(start, &own, family.as_ref().or(pooled.as_ref()))?.constants
        } else if let Some(family) = family {
            let name = chip.family().unwrap_or_default().to_owned();
            fold.family.push((chip.id().to_owned(), name));
            family.constants
        } else {
            fold.unfitted.push(chip.id().to_owned());
            unfitted(start, pooled.as_ref())
        };
        for &i in &held {
            if let Some(row) = priced[i].filter(|r| r.chip.id() == chip.id()) {
                predicted.push((i, row.outcome(Some(&constants))));
            }
        }
    }
    Ok((fold, predicted))
}

/// `start` with every constant a fit moves at every chip's fit (`pooled`) where it has one,
/// else at the value each fit starts from; no kernel path of its own (no row of its family
/// measured one).
fn unfitted(start: &Achievable, pooled: Option<&Fitted>) -> Achievable {
    let mut a = start.clone();
    a.paths.clear();
    for c in Constant::of(start) {
        let value = pooled
            .filter(|p| p.informed.contains(&c))
            .map_or(c.start(), |p| c.get(&p.constants));
        c.set(&mut a, value);
    }
    a
}

/// A group's errors in sample and held out.
pub struct GroupStats {
    /// The group's errors with the chip files' constants.
    pub in_sample: ErrorStats,
    /// The same rows' errors with each source held out of the fit.
    pub held_out: ErrorStats,
}

/// Families with fewer rows than this are not reported on their own: a median of fewer says
/// little.
pub const MIN_FAMILY_ROWS: usize = 5;

/// The errors overall, per kind (kernel, decode, prefill, request), per chip family with at
/// least [`MIN_FAMILY_ROWS`] priced rows, and per stack: each engine the model rows name and
/// each library the kernel rows name.
pub fn group_stats(cv: &CrossValidation) -> Vec<GroupStats> {
    let mut groups: Vec<String> = vec!["all".into()];
    for kind in ["kernel", "decode", "prefill", "request"] {
        groups.push(format!("kind {kind}"));
    }
    let mut families: Vec<&String> = cv.families.iter().collect();
    families.sort();
    families.dedup();
    groups.extend(families.into_iter().map(|f| format!("family {f}")));
    let mut stacks: Vec<String> = (cv.in_sample.iter())
        .filter_map(|o| o.case.stack.group())
        .collect();
    stacks.sort();
    stacks.dedup();
    groups.extend(stacks);
    let member = |group: &str, i: usize| match group.split_once(' ') {
        None => true,
        Some(("kind", k)) => cv.in_sample[i].case.kind == k,
        Some(("family", f)) => cv.families[i] == f,
        Some(_) => cv.in_sample[i].case.stack.group().as_deref() == Some(group),
    };
    groups
        .into_iter()
        .filter_map(|group| {
            let errors = |outcomes: &[Outcome]| -> Vec<RowError> {
                (0..outcomes.len())
                    .filter(|&i| member(&group, i) && cv.in_sample[i].predicted.is_ok())
                    .filter_map(|i| outcomes[i].row_error())
                    .collect()
            };
            let (inside, held) = (errors(&cv.in_sample), errors(&cv.held_out));
            let enough = if group.starts_with("family") {
                MIN_FAMILY_ROWS
            } else {
                1
            };
            (inside.len() >= enough && held.len() == inside.len()).then(|| GroupStats {
                in_sample: stats_of(group.clone(), inside),
                held_out: stats_of(group, held),
            })
        })
        .collect()
}
