//! `stepcost fit`: which cases a fit uses (the chip's, or its family's), and the fit itself
//! with the errors before and after.

use std::path::Path;
use std::sync::Arc;

use crate::base::error::Error;
use crate::base::suggest::did_you_mean;
use crate::core::chip::{Achievable, Chip};
use crate::study::validate::{self, Case, Loads, Outcome};

use super::{fit_engine_hosts, fit_pooled, fit_rows, EngineHost, Fitted, Row};

/// Sources a chip's own rows must come from for it to be fitted on them alone: with fewer,
/// its constants are its family's, fitted to the rows of every chip of the family, since one
/// publication's rows share its setup (clocks, library, inputs) and a fit to them alone would
/// learn that setup rather than the chip.
pub const OWN_SOURCES: usize = 2;

/// The source a case's id names: its prefix up to the first `-` (the whole id without one).
pub fn source_of(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

/// The rows a fit of `chip` uses as `scripts/refit` fits chip files: `None` (its own) where
/// they come from [`OWN_SOURCES`] sources or more, else its family (`None` where it has none).
pub fn shipped_family(cases: &[Case], cases_file: &Path, chip: &Chip) -> Option<String> {
    let mut sources: Vec<&str> = Vec::new();
    // Whether each chip name the cases use is `chip`: each loaded once.
    let mut names: Vec<(&str, bool)> = Vec::new();
    for case in cases {
        let own = match names.iter().find(|(n, _)| *n == case.chip) {
            Some(&(_, own)) => own,
            None => {
                let own = case.chip == chip.id()
                    || validate::case_chip(case, cases_file).is_ok_and(|c| c.id() == chip.id());
                names.push((&case.chip, own));
                own
            }
        };
        if own && !sources.contains(&source_of(&case.id)) {
            sources.push(source_of(&case.id));
        }
    }
    if sources.len() >= OWN_SOURCES {
        return None;
    }
    chip.family().map(str::to_owned)
}

/// A fit of one chip's constants, with every case it used priced before and after.
pub struct ChipFit {
    /// The chip, its `expected` section the fitted one.
    pub chip: Chip,
    /// The family whose chips' cases were used, where one was asked for.
    pub family: Option<String>,
    /// The chip file's section the fit started from.
    pub start: Achievable,
    /// The fit, narrowed to the constants the chip's own section has.
    pub fitted: Fitted,
    /// What the fit was pulled towards ([`super::PRIOR_WEIGHT`]), and the cases that prior
    /// was fitted to.
    pub prior: Prior,
    /// How many cases the prior was fitted to.
    pub prior_cases: usize,
    /// The cases used, priced with each chip's file constants, then with the fitted ones.
    pub before: Vec<Outcome>,
    /// The same cases priced with the fitted constants.
    pub after: Vec<Outcome>,
    /// Each engine's host work, fitted to every chip's model steps and requests naming it.
    pub engines: Vec<EngineHost>,
}

/// The wider fit a chip's or a family's is pulled towards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prior {
    /// The chip's family's fit (itself pulled towards every chip's).
    Family,
    /// Every chip's fit, each chip taking the constants its own section has.
    Pooled,
}

/// Fits `chip`'s constants to its cases in `cases` (or, with `family`, to the cases of every
/// chip of that family, which then share them), pulled towards a wider fit as
/// `validate --cross-validate` fits them: a family's towards every chip's
/// ([`super::fit_pooled`] of every case that prices), a chip's towards its family's where its
/// family has cases, else every chip's. Every case the fit itself uses must price.
pub fn fit_chip(
    cases: Vec<Case>,
    cases_file: &Path,
    chip: Chip,
    family: Option<&str>,
) -> Result<ChipFit, Error> {
    let start = chip.expected().cloned().ok_or_else(|| {
        Error::value(format!(
            "chip `{}` has no `expected` section to start a fit from; copy one from a chip of its kind (`stepcost show chip h100-sxm`)",
            chip.id()
        ))
    })?;
    let (rows, chips) = load_rows(cases, cases_file, &chip, family)?;
    let family_known = family.is_none_or(|f| {
        chips
            .iter()
            .any(|(_, c)| matches!(c, Ok(c) if c.family() == Some(f)))
    });
    let is_used = |(r, own): &Priced| *own || family.is_some_and(|f| r.chip.family() == Some(f));
    let used: Vec<&Row> = rows.iter().filter(|p| is_used(p)).map(|(r, _)| r).collect();
    if used.is_empty() || !family_known {
        return Err(no_rows(&chip, family, &chips, cases_file));
    }
    // Each case with its chip file's constants: the fit's "before", and which cases price.
    let outcomes: Vec<Outcome> = rows.iter().map(|(r, _)| r.outcome(None)).collect();
    let before: Vec<Outcome> = (rows.iter().zip(&outcomes))
        .filter(|(p, _)| is_used(p))
        .map(|(_, o)| o.clone())
        .collect();
    if let Some(o) = before.iter().find(|o| o.predicted.is_err()) {
        let reason = o.predicted.as_ref().err().cloned().unwrap_or_default();
        return Err(Error::value(format!(
            "case `{}` (line {}) cannot be priced: {reason}",
            o.case.id, o.case.line
        )));
    }
    let priced: Vec<&Row> = (rows.iter().zip(&outcomes))
        .filter(|(_, o)| o.predicted.is_ok())
        .map(|((r, _), _)| r)
        .collect();
    let (prior, wider) = prior_of(&start, &priced, &chip, family)?;
    let engines = fit_engine_hosts(&priced)?;
    let fitted = fit_rows(&start, &used, Some(&wider))?;
    let after = used
        .iter()
        .map(|r| r.outcome(Some(&fitted.constants)))
        .collect();
    Ok(ChipFit {
        chip: chip.with_expected(fitted.constants.clone()),
        family: family.map(str::to_owned),
        start,
        fitted,
        prior,
        prior_cases: wider.cases,
        before,
        after,
        engines,
    })
}

/// A chip's name in a case file, loaded (or why not).
type Loaded = (String, Result<Chip, String>);

/// A priced case, and whether it is the fitted chip's own.
type Priced = (Row, bool);

/// Every case of `cases` that prices (each on its own chip, `chip` for its own), and whether
/// it is `chip`'s own, with the chips the cases name. A case the fit uses (`chip`'s, or its
/// `family`'s) that cannot be priced is an error; another only informs the prior and is left
/// out of it.
fn load_rows(
    cases: Vec<Case>,
    cases_file: &Path,
    chip: &Chip,
    family: Option<&str>,
) -> Result<(Vec<Priced>, Vec<Loaded>), Error> {
    let mut chips: Vec<(String, Result<Chip, String>)> = Vec::new();
    // Every case that prices, and whether it is the chip's own; the fitted chip and each
    // file the cases name shared by their rows.
    let mut rows: Vec<Priced> = Vec::new();
    let mut loads = Loads::default();
    let fitted = Arc::new(chip.clone());
    for case in cases {
        let index = match chips.iter().position(|(name, _)| *name == case.chip) {
            Some(i) => i,
            None => {
                let mut loaded = validate::case_chip(&case, cases_file).map_err(|e| e.to_string());
                // A chip no file describes yet (`fit --new-chip`): its cases price on it.
                if loaded.is_err() && case.chip == chip.id() {
                    loads.insert_chip(&case.chip, Arc::clone(&fitted));
                    loaded = Ok(chip.clone());
                }
                chips.push((case.chip.clone(), loaded));
                chips.len() - 1
            }
        };
        let case_chip = &chips[index].1;
        let own = case.chip == chip.id() || matches!(case_chip, Ok(c) if c.id() == chip.id());
        let used =
            own || family.is_some_and(|f| matches!(case_chip, Ok(c) if c.family() == Some(f)));
        let (id, line) = (case.id.clone(), case.line);
        match Row::new(case, cases_file, own.then_some(&fitted), &mut loads) {
            Ok(row) => rows.push((row, own)),
            // A case the fit does not use only informs the prior: one that cannot be priced
            // is left out of it.
            Err(_) if !used => {}
            Err(e) => {
                return Err(Error::value(format!(
                    "case `{id}` (line {line}) cannot be priced: {e}"
                )))
            }
        }
    }
    Ok((rows, chips))
}

/// The wider fit `chip`'s is pulled towards: its family's (itself pulled towards every
/// chip's) where a chip alone is fitted and its family has priced rows, else every chip's.
fn prior_of(
    start: &Achievable,
    priced: &[&Row],
    chip: &Chip,
    family: Option<&str>,
) -> Result<(Prior, Fitted), Error> {
    let pooled = fit_pooled(priced)?;
    let family_rows: Vec<&Row> = match (family, chip.family()) {
        (None, Some(f)) => (priced.iter().copied())
            .filter(|r| r.chip.family() == Some(f))
            .collect(),
        _ => Vec::new(),
    };
    if family_rows.is_empty() {
        return Ok((Prior::Pooled, pooled));
    }
    Ok((Prior::Family, fit_rows(start, &family_rows, Some(&pooled))?))
}

/// Why no case was found: the chips and families the cases do name.
fn no_rows(chip: &Chip, family: Option<&str>, chips: &[Loaded], cases_file: &Path) -> Error {
    let names: Vec<&str> = chips.iter().map(|(n, _)| n.as_str()).collect();
    let mut families: Vec<&str> = chips
        .iter()
        .filter_map(|(_, c)| c.as_ref().ok().and_then(Chip::family))
        .collect();
    families.sort_unstable();
    families.dedup();
    let what = match family {
        Some(f) => format!("a chip of family `{f}`"),
        None => format!("chip `{}`", chip.id()),
    };
    let hint = family.map_or(String::new(), |f| did_you_mean(f, families.iter().copied()));
    Error::value(format!(
        "no case in {} is measured on {what}{hint}; its cases name the chips {} (families {})",
        cases_file.display(),
        list(&names),
        list(&families)
    ))
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_the_id_up_to_its_first_dash() {
        assert_eq!(source_of("MAMF-7"), "MAMF");
        assert_eq!(source_of("AZ-M10"), "AZ");
        assert_eq!(source_of("LMD-P1"), "LMD");
        assert_eq!(source_of("own"), "own");
    }
}
