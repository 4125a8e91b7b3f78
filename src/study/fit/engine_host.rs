//! Host work per engine: each engine's `host_step` and `host_sequence` fitted to the model
//! steps and requests that name it (every chip's), each row priced with its own chip file's
//! constants but for those two, each source weighing as one. What an engine file's host terms
//! are fitted from (marked `# fitted` there); an engine whose rows leave the host no work to
//! wait for (`engine_host=0`: a compiled loop, an overlapping scheduler) gets no figure.

use rayon::prelude::*;

use crate::base::error::Error;

use super::optimise::least_squares;
use super::{round, soft_l1, source_weights, Constant, Row, KERNEL};

/// One engine's fitted host work.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineHost {
    /// The engine id the rows name (`trtllm-cpp`, `vllm@0.7`).
    pub engine: String,
    /// Model steps and requests that name it.
    pub rows: usize,
    /// Host work per step, in seconds; `None` where no row depends on it.
    pub host_step_s: Option<f64>,
    /// Host work per sequence in the step, in seconds; `None` where no row depends on it.
    pub host_sequence_s: Option<f64>,
}

/// Each engine's host work fitted to the model steps and requests of `rows` naming it, in
/// engine-id order (`unknown` left out: it is no one engine).
pub fn fit_engine_hosts(rows: &[&Row]) -> Result<Vec<EngineHost>, Error> {
    let mut engines: Vec<&str> = (rows.iter())
        .filter(|r| r.case.kind != KERNEL)
        .filter_map(|r| r.case.stack.engine.as_deref())
        .filter(|e| *e != "unknown")
        .collect();
    engines.sort_unstable();
    engines.dedup();
    engines
        .into_iter()
        .map(|engine| {
            let mine: Vec<&Row> = (rows.iter().copied())
                .filter(|r| r.case.kind != KERNEL)
                .filter(|r| r.case.stack.engine.as_deref() == Some(engine))
                .collect();
            fit_one(engine, &mine)
        })
        .collect()
}

/// `engine`'s host work fitted to `rows`.
fn fit_one(engine: &str, rows: &[&Row]) -> Result<EngineHost, Error> {
    let constants = [Constant::HostStep, Constant::HostSequence];
    let x0: Vec<f64> = constants.iter().map(|c| c.start().ln()).collect();
    let lower: Vec<f64> = constants.iter().map(|c| c.range().min.ln()).collect();
    let upper: Vec<f64> = constants.iter().map(|c| c.range().max.ln()).collect();
    let weights = source_weights(rows);
    let residuals = |x: &[f64]| -> Result<Vec<f64>, Error> {
        (rows.par_iter())
            .zip(&weights)
            .map(|(row, w)| {
                let mut a = row.chip.expected().cloned().ok_or_else(|| {
                    Error::value(format!(
                        "chip `{}` has no `expected` section to fit host work with",
                        row.chip.id()
                    ))
                })?;
                a.host_step_s = x[0].exp();
                a.host_sequence_s = x[1].exp();
                let chip = row.chip.as_ref().clone().with_expected(a);
                let (predicted, _) = row.prepared.predict(&chip)?;
                Ok(w * soft_l1((predicted / row.case.measured).ln()))
            })
            .collect()
    };
    let solution = least_squares(&x0, &lower, &upper, rows.len(), residuals)?;
    let value = |i: usize| {
        let c = constants[i];
        (solution.reached[i])
            .then(|| round(solution.x[i].exp()).clamp(c.range().min, c.range().max))
    };
    Ok(EngineHost {
        engine: engine.to_owned(),
        rows: rows.len(),
        host_step_s: value(0),
        host_sequence_s: value(1),
    })
}
