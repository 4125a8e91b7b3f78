//! Fitting a chip's expected-mode constants to measured cases: the continuous numbers of its
//! `expected` section (fractions of peak per type, of the vector unit and of bandwidth, the
//! small-M, attention and weight-only memory fractions, the DRAM latency, the serving engine's
//! host work) move, from a fixed start, to minimise the soft-L1 loss of the log errors
//! `ln(predicted / measured)` over the cases, each source's rows weighing together as one,
//! each constant inside its physical range (`base::ranges`, the fit's bounds); tile shapes and
//! switches stay as the file has them. Single kernels' rows set what they reach; model steps
//! and requests then fit only what none of them reaches (`fit_constants`), and the engine's
//! host work, which every chip shares, only in every chip's fit ([`fit_pooled`]).
//! `scripts/refit` writes this fit into chip files as [`shipped_family`] chooses: per family,
//! or per chip where a chip's rows come from two sources or more. `optimise` is the search,
//! `cross` the leave-one-source-out loop of `validate --cross-validate`.

mod constant;
pub mod cross;
mod engine_host;
pub mod new_chip;
mod optimise;
mod select;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

pub use constant::Constant;
pub use engine_host::{fit_engine_hosts, EngineHost};
use optimise::least_squares;
pub use select::{fit_chip, shipped_family, source_of, ChipFit, Prior, OWN_SOURCES};

use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::core::chip::{Achievable, Chip};
use crate::core::engine::KernelPath;
use crate::core::scenario::Mode;
use crate::study::validate::{self, Case, Loads, Outcome, Prepared};

/// Significant digits a fitted constant keeps: the measurements behind it agree to a few
/// percent, so more digits would only be noise, and fewer would not read back to the same
/// predictions in a test of 1e-6.
const DIGITS: i32 = 7;

/// A measured case ready to price, and the chip it is priced on.
pub struct Row {
    /// The measured case.
    pub case: Case,
    /// The case's chip, workload and scenario, loaded and resolved in expected mode.
    pub prepared: Prepared,
    /// The chip the row is priced on: the case's own, or one given in its place (the chip
    /// being fitted, for its own cases); shared by the rows on it.
    pub chip: Arc<Chip>,
    /// A kernel row's kernel path and the type its GEMM computes in, where it names a path
    /// (what [`Constant::paths_for`] fits).
    pub path: Option<(KernelPath, DType)>,
}

impl Row {
    /// Prepares `case` in expected mode, priced on `chip` (the case's own where `None`), its
    /// chip and workload taken from `loads` (see [`Loads`]).
    pub fn new(
        case: Case,
        cases_file: &Path,
        chip: Option<&Arc<Chip>>,
        loads: &mut Loads,
    ) -> Result<Row, Error> {
        let prepared = validate::prepare_with(&case, cases_file, Mode::Expected, loads)?;
        let chip = Arc::clone(chip.unwrap_or(&prepared.chip));
        let path = (case.stack.path())
            .filter(|_| case.kind == KERNEL)
            .and_then(|p| Some((p, prepared.predict(&chip).ok()?.1?)));
        Ok(Row {
            case,
            prepared,
            chip,
            path,
        })
    }

    /// The case's outcome with the chip's own constants, or with `constants`' numbers.
    pub fn outcome(&self, constants: Option<&Achievable>) -> Outcome {
        let predicted = match constants {
            None => self.prepared.predict(&self.chip),
            Some(c) => self.prepared.predict(&with_numbers(&self.chip, c)),
        };
        validate::outcome(self.case.clone(), predicted)
    }
}

/// `chip` with the continuous constants of `from` that its own section has (its tiles and
/// switches kept; a constant it has no figure for stays without one).
fn with_own_numbers(chip: &Chip, from: &Achievable) -> Chip {
    let Some(own) = chip.expected() else {
        return with_numbers(chip, from);
    };
    let mut a = own.clone();
    let present = Constant::of(from);
    for c in Constant::of(own) {
        if present.contains(&c) {
            c.set(&mut a, c.get(from));
        }
    }
    // A fit's paths are its own rows', never the file's.
    a.paths = from.paths.clone();
    chip.clone().with_expected(a)
}

/// `chip` with the continuous constants of `from` (its own tiles and switches kept).
fn with_numbers(chip: &Chip, from: &Achievable) -> Chip {
    let mut a = chip.expected().cloned().unwrap_or_else(|| from.clone());
    for c in Constant::of(from) {
        c.set(&mut a, c.get(from));
    }
    a.paths = from.paths.clone();
    chip.clone().with_expected(a)
}

/// Constants fitted to rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The fitted section: the start's, with every constant a case depends on moved.
    pub constants: Achievable,
    /// The constants the cases depend on (fitted), and those they do not (kept).
    pub fitted: Vec<Constant>,
    /// The constants no case reaches, left at the prior's value where it has one, else at
    /// the start's.
    pub kept: Vec<Constant>,
    /// The constants a measurement set: those fitted here, and those kept at the prior's value
    /// where a measurement set it there. A narrower fit is pulled towards these alone.
    pub informed: Vec<Constant>,
    /// Cost evaluations of the search (each prices every row once).
    pub evaluations: usize,
    /// The rows fitted to.
    pub cases: usize,
}

impl Fitted {
    /// The constants `start` has: at this fit's values where a measurement set them (here or
    /// in its prior), else at `start`'s; the lists narrowed to them.
    pub fn for_chip(&self, start: &Achievable) -> Fitted {
        // A kernel path's constants are the fit's where a measurement set them, whatever the
        // file has: a path no row measured takes the section's fractions.
        let paths = (self.informed.iter().copied()).filter(|c| c.is_path());
        let own: Vec<Constant> = Constant::of(start).into_iter().chain(paths).collect();
        let mut constants = start.clone();
        constants.paths.clear();
        for c in own.iter().filter(|c| self.informed.contains(c)) {
            c.set(&mut constants, c.get(&self.constants));
        }
        let mine = |cs: &[Constant]| cs.iter().copied().filter(|c| own.contains(c)).collect();
        Fitted {
            constants,
            fitted: mine(&self.fitted),
            kept: mine(&self.kept),
            informed: mine(&self.informed),
            ..*self
        }
    }
}

/// Fits the continuous constants of `start` to `rows` (each priced on its own chip with these
/// constants), by least squares on the log of predicted over measured, from each constant's
/// fixed [`Constant::start`]. With a `prior` (a wider fit's constants: the family's for one
/// chip, every chip's for a family), each constant the prior has is pulled towards its value
/// as one source's rows would pull it ([`PRIOR_WEIGHT`]), and one no row depends on takes it;
/// without, such a constant keeps `start`'s value.
pub fn fit_rows(
    start: &Achievable,
    rows: &[&Row],
    prior: Option<&Fitted>,
) -> Result<Fitted, Error> {
    Ok(fit_shared(start, rows, prior)?.for_chip(start))
}

/// Fits every constant `base` or any of `rows`' chips has, shared by them all, each chip
/// taking those its own section has: so that no row is priced with another chip file's
/// constants, and a fit depends on the rows alone (a chip file holding a fit's output fits to
/// the same again). [`Fitted::for_chip`] gives one chip its part; a constant no row depends on
/// and no prior set keeps `base`'s value.
pub fn fit_shared(
    base: &Achievable,
    rows: &[&Row],
    prior: Option<&Fitted>,
) -> Result<Fitted, Error> {
    let (template, constants) = shared_constants(base, rows, true);
    fit_constants(&template, &constants, rows, prior)
}

/// Fits every constant any of `rows`' chips has, shared by all of them, each chip taking only
/// the constants its own section has (its tiles and switches kept): the widest prior, what
/// the measurements say of accelerators at large. The chips' constants are fitted to the
/// kernel rows alone where there are any: a single kernel's benchmark measures what a chip's
/// units reach, where a model step or a request also carries its serving engine's work, which
/// a chip's or a family's fit answers to but a prior for every chip should not. The constants
/// every chip shares ([`Constant::is_shared`], the engine's host work) are then fitted here,
/// and only here, to the model steps and requests, the chips' constants held.
pub fn fit_pooled(rows: &[&Row]) -> Result<Fitted, Error> {
    let Some(first) = rows.iter().find_map(|r| r.chip.expected()) else {
        return Err(Error::value("no measured case to fit".to_owned()));
    };
    let (template, constants) = shared_constants(first, rows, false);
    let (shared, own): (Vec<Constant>, Vec<Constant>) =
        constants.iter().partition(|c| c.is_shared());
    let (kernels, steps): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| r.case.kind == KERNEL);
    if kernels.is_empty() {
        // Model rows alone: nothing to hold, everything fitted to them at once.
        return search(&template, &constants, &steps, None);
    }
    let units = search(&template, &own, &kernels, None)?;
    if shared.is_empty() || steps.is_empty() {
        return Ok(Fitted {
            kept: in_order(&constants, &[&units.kept, &shared]),
            ..units
        });
    }
    let host = search(&units.constants, &shared, &steps, None)?;
    Ok(units.then(host, &shared, &constants, rows.len()))
}

/// Every constant `base` or any of `rows`' chips has, and `base` with those it lacks added at
/// the value each fit starts from; with `paths`, also the kernel-path constants `rows` measure
/// ([`Constant::paths_for`]: a family's or a chip's fit; every chip's fit has none, a path's
/// fraction being its family's).
fn shared_constants(base: &Achievable, rows: &[&Row], paths: bool) -> (Achievable, Vec<Constant>) {
    let mut constants = Constant::of(base);
    let mut template = base.clone();
    template.paths.clear();
    for a in rows.iter().filter_map(|r| r.chip.expected()) {
        for c in Constant::of(a) {
            if !constants.contains(&c) {
                c.set(&mut template, c.start());
                constants.push(c);
            }
        }
    }
    let measured: Vec<(KernelPath, DType)> = match paths {
        true => rows.iter().filter_map(|r| r.path).collect(),
        false => Vec::new(),
    };
    for c in Constant::paths_for(&measured) {
        c.set(&mut template, c.start());
        constants.push(c);
    }
    (template, constants)
}

/// The search behind [`fit_rows`] and [`fit_pooled`], each row's chip taking the trial's
/// constants its own section has ([`with_own_numbers`]). Under a wider fit (`prior`), the
/// constants every chip shares are held at its values ([`Constant::is_shared`]). Kernel rows
/// first ([`fit_staged`]): a kernel's benchmark isolates what the chip's units reach, where a
/// model step also carries its serving engine's host work, so fitted together the chip's
/// fractions would drop to absorb what the host constants price, and single kernels would
/// come out too slow.
fn fit_constants(
    start: &Achievable,
    constants: &[Constant],
    rows: &[&Row],
    prior: Option<&Fitted>,
) -> Result<Fitted, Error> {
    let Some(prior) = prior else {
        return fit_staged(start, constants, rows, None);
    };
    let (shared, own): (Vec<Constant>, Vec<Constant>) =
        constants.iter().partition(|c| c.is_shared());
    let mut start = start.clone();
    let informed: Vec<Constant> = (shared.iter().copied())
        .filter(|c| prior.informed.contains(c))
        .collect();
    for c in &informed {
        c.set(&mut start, c.get(&prior.constants));
    }
    let fit = fit_staged(&start, &own, rows, Some(prior))?;
    Ok(Fitted {
        kept: in_order(constants, &[&fit.kept, &shared]),
        informed: in_order(constants, &[&fit.informed, &informed]),
        fitted: in_order(constants, &[&fit.fitted]),
        ..fit
    })
}

impl Fitted {
    /// This fit followed by `second`, a search of `searched` from this fit's constants over
    /// `cases` rows in all: `second`'s verdict on the constants it searched replaces this one's;
    /// the lists keep `order`'s order.
    fn then(
        self,
        second: Fitted,
        searched: &[Constant],
        order: &[Constant],
        cases: usize,
    ) -> Fitted {
        let unsearched = |cs: &[Constant]| -> Vec<Constant> {
            (cs.iter().copied())
                .filter(|c| !searched.contains(c))
                .collect()
        };
        Fitted {
            constants: second.constants,
            fitted: in_order(order, &[&unsearched(&self.fitted), &second.fitted]),
            kept: in_order(order, &[&unsearched(&self.kept), &second.kept]),
            informed: in_order(order, &[&unsearched(&self.informed), &second.informed]),
            evaluations: self.evaluations + second.evaluations,
            cases,
        }
    }
}

/// The constants of `constants` that any of `lists` holds, in `constants`' order.
fn in_order(constants: &[Constant], lists: &[&[Constant]]) -> Vec<Constant> {
    (constants.iter().copied())
        .filter(|c| lists.iter().any(|l| l.contains(c)))
        .collect()
}

/// Kernel rows first: where `rows` hold both single kernels and model steps (or requests),
/// `constants` are fitted to the kernel rows, and the model rows then fit only those no kernel
/// row reached (the others held).
fn fit_staged(
    start: &Achievable,
    constants: &[Constant],
    rows: &[&Row],
    prior: Option<&Fitted>,
) -> Result<Fitted, Error> {
    let (kernels, steps): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| r.case.kind == KERNEL);
    if kernels.is_empty() || steps.is_empty() {
        return search(start, constants, rows, prior);
    }
    let first = search(start, constants, &kernels, prior)?;
    let rest: Vec<Constant> = (constants.iter().copied())
        .filter(|c| !first.fitted.contains(c))
        .collect();
    if rest.is_empty() {
        return Ok(Fitted {
            cases: rows.len(),
            ..first
        });
    }
    let second = search(&first.constants, &rest, &steps, prior)?;
    Ok(first.then(second, &rest, constants, rows.len()))
}

/// One least-squares search of `constants` over `rows`, the others held at `start`'s values.
fn search(
    start: &Achievable,
    constants: &[Constant],
    rows: &[&Row],
    prior: Option<&Fitted>,
) -> Result<Fitted, Error> {
    // In logs: every constant is positive, and a step is then a relative change.
    let x0: Vec<f64> = constants.iter().map(|c| c.start().ln()).collect();
    let lower: Vec<f64> = constants.iter().map(|c| c.range().min.ln()).collect();
    let upper: Vec<f64> = constants.iter().map(|c| c.range().max.ln()).collect();
    let pulls = pulls(constants, prior);
    // Each chip the rows are priced on once, and each row's: a trial makes each chip's
    // constants once, not each row's.
    let (chips, slots) = distinct_chips(rows);
    let at = |x: &[f64]| {
        let mut a = start.clone();
        for (c, v) in constants.iter().zip(x) {
            c.set(&mut a, v.exp());
        }
        a
    };
    let weights = source_weights(rows);
    let residuals = |x: &[f64]| -> Result<Vec<f64>, Error> {
        let a = at(x);
        let trial: Vec<Chip> = chips.iter().map(|c| with_own_numbers(c, &a)).collect();
        // Rows price independently: in parallel, collected in order (the same sums).
        let mut r = (rows.par_iter())
            .zip(&slots)
            .zip(&weights)
            .with_min_len(ROWS_PER_TASK)
            .map(|((row, &slot), w)| {
                let (predicted, _) = row.prepared.predict(&trial[slot])?;
                Ok(w * soft_l1((predicted / row.case.measured).ln()))
            })
            .collect::<Result<Vec<f64>, Error>>()?;
        r.extend(
            x.iter()
                .zip(&pulls)
                .filter_map(|(x, p)| p.map(|p| PRIOR_WEIGHT * (x - p))),
        );
        Ok(r)
    };
    let solution = least_squares(&x0, &lower, &upper, rows.len(), residuals)?;
    let mut fitted_constants = start.clone();
    let (mut fitted, mut kept) = (Vec::new(), Vec::new());
    for (i, c) in constants.iter().enumerate() {
        if solution.reached[i] {
            let value = round(solution.x[i].exp()).clamp(c.range().min, c.range().max);
            c.set(&mut fitted_constants, value);
            fitted.push(*c);
        }
    }
    let mut informed = fitted.clone();
    for (i, c) in constants.iter().enumerate() {
        if !solution.reached[i] {
            // The prior's where it has one; else to the same digits as the fitted ones (a
            // file's `0.4 us` is 4.0000000000000003e-7 s).
            let value = pulls[i].map_or(c.get(start), f64::exp);
            c.set(&mut fitted_constants, round(value));
            kept.push(*c);
            // A path's pull to 1 is no measurement of it.
            let measured = !c.is_path() || prior.is_some_and(|p| p.informed.contains(c));
            if pulls[i].is_some() && measured {
                informed.push(*c);
            }
        }
    }
    Ok(Fitted {
        constants: fitted_constants,
        fitted,
        kept,
        informed,
        evaluations: solution.evaluations,
        cases: rows.len(),
    })
}

/// Where `prior` pulls each of `constants`, in logs (inside its bounds): `None` where the
/// prior has no measured value for it, but a kernel path's factor, which is pulled to 1.
fn pulls(constants: &[Constant], prior: Option<&Fitted>) -> Vec<Option<f64>> {
    (constants.iter())
        .map(|c| {
            // A kernel path's factor no wider fit measured: towards 1 (the section's).
            let Some(prior) = prior.filter(|p| p.informed.contains(c)) else {
                return c.is_path().then_some(0.0);
            };
            Some(
                c.get(&prior.constants)
                    .clamp(c.range().min, c.range().max)
                    .ln(),
            )
        })
        .collect()
}

/// Fewest rows one task of a parallel evaluation prices (each a few microseconds).
const ROWS_PER_TASK: usize = 256;

/// The kind of a case that times one kernel.
const KERNEL: &str = "kernel";

/// How hard a prior pulls each constant: as hard as one source whose rows all miss by the
/// constant's log distance from the prior's value (each source's rows weigh one together).
pub const PRIOR_WEIGHT: f64 = 1.0;

/// Where a log error stops counting in full: ln(1.25). Up to about 25 % a row pulls as in
/// plain least squares; beyond, its pull grows as |error| rather than its square, so that a
/// few rows a mechanism does not yet price (a 60 % miss) cannot drag a chip's constants away
/// from what every other row says (the soft-L1 loss).
const SOFT_L1_SCALE: f64 = 0.223_143_551_314_209_7;

/// A residual whose square is the soft-L1 loss of log error `r`:
/// `2 c^2 (sqrt(1 + (r / c)^2) - 1)`, with its sign.
fn soft_l1(r: f64) -> f64 {
    let c = SOFT_L1_SCALE;
    let loss = 2.0 * c * c * ((1.0 + (r / c).powi(2)).sqrt() - 1.0);
    loss.sqrt().copysign(r)
}

/// Each row's weight: a source's rows count as much together as another source's (a
/// publication's rows share its setup: twenty rows of one benchmark are not twenty
/// independent looks at a chip), each row 1 / sqrt(rows of its source in the fit). Counted
/// in one pass: linear in the rows.
fn source_weights(rows: &[&Row]) -> Vec<f64> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for r in rows {
        *counts.entry(source_of(&r.case.id)).or_default() += 1;
    }
    rows.iter()
        .map(|r| 1.0 / (counts[source_of(&r.case.id)] as f64).sqrt())
        .collect()
}

/// The chips `rows` are priced on, each once (rows share a chip by pointer, see [`Loads`]),
/// and each row's index among them.
fn distinct_chips(rows: &[&Row]) -> (Vec<Arc<Chip>>, Vec<usize>) {
    let mut chips: Vec<Arc<Chip>> = Vec::new();
    let mut index: HashMap<*const Chip, usize> = HashMap::new();
    let slots = rows
        .iter()
        .map(|r| {
            *index.entry(Arc::as_ptr(&r.chip)).or_insert_with(|| {
                chips.push(Arc::clone(&r.chip));
                chips.len() - 1
            })
        })
        .collect();
    (chips, slots)
}

/// `x` to [`DIGITS`] significant digits.
fn round(x: f64) -> f64 {
    let scale = 10f64.powi(DIGITS - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_l1_counts_small_errors_in_full_and_large_ones_less() {
        // 2 c^2 (sqrt(1 + (r / c)^2) - 1) with c = ln 1.25, by hand: r = 0.1 gives 0.0095428,
        // r = 1 gives 0.357675; the residual is its square root, with r's sign.
        assert!((soft_l1(0.1) - 0.097687).abs() < 1e-5, "{}", soft_l1(0.1));
        assert!((soft_l1(-1.0) + 0.598060).abs() < 1e-5, "{}", soft_l1(-1.0));
        assert_eq!(soft_l1(0.0), 0.0);
    }

    #[test]
    fn rounds_to_seven_digits() {
        assert_eq!(round(0.801234567), 0.8012346);
        assert_eq!(round(4.1234567e-7), 4.123457e-7);
        assert_eq!(round(1.0), 1.0);
    }
}
