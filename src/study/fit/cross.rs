//! Leave-one-source-out cross-validation: for each source of measurements (a publication or a
//! repository), the constants of the chips its rows were measured on are fitted again on the
//! other sources' rows alone, and its rows predicted with them. A row's source is its id's
//! prefix up to the first `-` (`MAMF-7` is `MAMF`'s, `AZ-M10` Azure's benchmarking guide's):
//! ids name their source in `validation/measured.csv` and docs/sources.md.

use std::path::Path;

use crate::base::error::Error;
use crate::study::validate::{self, stats_of, Case, ErrorStats, Outcome};

use super::{fit_rows, Row};

/// The source a case's id names: its prefix up to the first `-` (the whole id without one).
pub fn source_of(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

/// One source held out.
#[derive(Debug, Clone, PartialEq)]
pub struct Fold {
    pub source: String,
    /// Its rows that priced.
    pub rows: usize,
    /// Chips whose constants were fitted on the other sources' rows.
    pub refit: Vec<String>,
    /// Chips whose rows all come from this source: they keep their file's constants.
    pub kept: Vec<String>,
}

/// Every case predicted in sample (the chip files' constants) and held out.
pub struct CrossValidation {
    pub in_sample: Vec<Outcome>,
    pub held_out: Vec<Outcome>,
    /// The family of each case's chip (its id where the file names no family).
    pub families: Vec<String>,
    pub folds: Vec<Fold>,
}

/// Holds out each source of `cases` in turn. A case that cannot be priced is an outcome with
/// the reason, in both predictions.
pub fn cross_validate(cases: Vec<Case>, cases_file: &Path) -> Result<CrossValidation, Error> {
    let rows: Vec<Result<Row, Outcome>> = cases
        .into_iter()
        .map(|case| {
            Row::new(case.clone(), cases_file, None).map_err(|e| validate::outcome(case, Err(e)))
        })
        .collect();
    let in_sample: Vec<Outcome> = rows
        .iter()
        .map(|r| r.as_ref().map_or_else(Clone::clone, |r| r.outcome(None)))
        .collect();
    let priced = |i: usize| {
        rows[i]
            .as_ref()
            .ok()
            .filter(|_| in_sample[i].predicted.is_ok())
    };
    let mut held_out = in_sample.clone();
    let mut sources: Vec<&str> = Vec::new();
    for o in &in_sample {
        if !sources.contains(&source_of(&o.case.id)) {
            sources.push(source_of(&o.case.id));
        }
    }
    let mut folds = Vec::new();
    for source in sources {
        let held: Vec<usize> = (0..rows.len())
            .filter(|&i| priced(i).is_some() && source_of(&in_sample[i].case.id) == source)
            .collect();
        let mut fold = Fold {
            source: source.to_owned(),
            rows: held.len(),
            refit: Vec::new(),
            kept: Vec::new(),
        };
        let mut chips: Vec<&str> = Vec::new();
        for &i in &held {
            let id = priced(i).map_or("", |r| r.chip.id());
            if !chips.contains(&id) {
                chips.push(id);
            }
        }
        for chip in chips {
            let on_chip = |i: &usize| priced(*i).is_some_and(|r| r.chip.id() == chip);
            let train: Vec<&Row> = (0..rows.len())
                .filter(|i| on_chip(i) && source_of(&in_sample[*i].case.id) != source)
                .filter_map(priced)
                .collect();
            let start = train.first().and_then(|r| r.chip.expected().cloned());
            let Some(start) = start else {
                fold.kept.push(chip.to_owned());
                continue; // in-sample outcomes stand: the file's constants
            };
            let fitted = fit_rows(&start, &train)?;
            for &i in held.iter().filter(|i| on_chip(i)) {
                if let Some(row) = priced(i) {
                    held_out[i] = row.outcome(Some(&fitted.constants));
                }
            }
            fold.refit.push(chip.to_owned());
        }
        folds.push(fold);
    }
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

/// A group's errors in sample and held out.
pub struct GroupStats {
    pub in_sample: ErrorStats,
    pub held_out: ErrorStats,
}

/// Families with fewer rows than this are not reported on their own: a median of fewer says
/// little.
pub const MIN_FAMILY_ROWS: usize = 5;

/// The errors overall, per kind (kernel, decode, prefill, request) and per chip family with at
/// least [`MIN_FAMILY_ROWS`] priced rows.
pub fn group_stats(cv: &CrossValidation) -> Vec<GroupStats> {
    let mut groups: Vec<String> = vec!["all".into()];
    for kind in ["kernel", "decode", "prefill", "request"] {
        groups.push(format!("kind {kind}"));
    }
    let mut families: Vec<&String> = cv.families.iter().collect();
    families.sort();
    families.dedup();
    groups.extend(families.into_iter().map(|f| format!("family {f}")));
    let member = |group: &str, i: usize| match group.split_once(' ') {
        None => true,
        Some(("kind", k)) => cv.in_sample[i].case.kind == k,
        Some((_, f)) => cv.families[i] == f,
    };
    groups
        .into_iter()
        .filter_map(|group| {
            let errors = |outcomes: &[Outcome]| -> Vec<f64> {
                (0..outcomes.len())
                    .filter(|&i| member(&group, i) && cv.in_sample[i].predicted.is_ok())
                    .filter_map(|i| outcomes[i].error())
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
