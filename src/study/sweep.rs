//! Sweeps: the cartesian product of chips, param values, data types and fusion plans, priced
//! in parallel and streamed out in order.
//!
//! Scenario `i` of a grid is decoded from `i` in mixed radix (chip most significant, then the
//! params in the order given, then the data types, then the fusion plan), so any worker can
//! price any scenario without the grid ever being materialised. Scenarios are priced in
//! chunks, each chunk split into tasks that run on rayon's pool and write their rows into
//! their own buffers; the buffers are handed, in order, to a writer thread while the next
//! chunk is priced. Memory stays at a few chunks whatever the size of the grid, and the bytes
//! out do not depend on the number of threads.
//!
//! The sweep decides which scenarios make rows; a [`RowSink`] decides what a row looks like
//! (CSV, JSON Lines, or anything else), so this module never chooses a format.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use rayon::prelude::*;

use crate::base::dtype::{DType, Role};
use crate::base::error::Error;
use crate::engine::chip::Chip;
use crate::engine::price::{price_request, price_step, KernelCost, RequestSummary, StepSummary};
use crate::engine::scenario::{Mode, Scenario};
use crate::engine::workload::{Evaluation, Workload};

/// Most values one axis may list.
pub const MAX_AXIS_VALUES: usize = 10_000_000;

/// Default cap on the number of scenarios of a sweep.
pub const DEFAULT_MAX_SCENARIOS: u64 = 100_000_000;

/// Parses an axis: comma-separated numbers and ranges. A range is `a..=b` (inclusive) or
/// `a..b` (exclusive), stepping by 1, or by `:+s` (arithmetic, `128..=4096:+128`) or `:xf`
/// (geometric, `1..=256:x2`).
pub fn parse_values(text: &str) -> Result<Vec<f64>, String> {
    let mut values = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("empty value in `{text}`"));
        }
        match item.split_once("..") {
            None => values.push(number(item)?),
            Some((start, rest)) => range(item, start, rest, &mut values)?,
        }
        if values.len() > MAX_AXIS_VALUES {
            return Err(format!("`{text}` lists more than {MAX_AXIS_VALUES} values"));
        }
    }
    Ok(values)
}

fn number(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{text}` is not a finite number"))
    }
}

fn range(item: &str, start: &str, rest: &str, values: &mut Vec<f64>) -> Result<(), String> {
    let (inclusive, rest) = match rest.strip_prefix('=') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let (end, step) = match rest.split_once(':') {
        Some((end, step)) => (end, Some(step.trim())),
        None => (rest, None),
    };
    let (start, end) = (number(start)?, number(end)?);
    if end < start {
        return Err(format!("`{item}`: the range ends before it starts"));
    }
    // Steps are taken from the start (start + i x step, start x factor^i), not accumulated,
    // so long ranges do not drift; the end is compared with a relative tolerance.
    let past = |v: f64| {
        let slack = 1e-9 * end.abs().max(1.0);
        if inclusive {
            v > end + slack
        } else {
            v >= end - slack
        }
    };
    let bad_step = || format!("`{item}`: a step is `:+N` (add N > 0) or `:xF` (multiply by F > 1)");
    let next: Box<dyn Fn(usize) -> f64> = match step {
        None => Box::new(move |i| start + i as f64),
        Some(s) if s.starts_with('+') => {
            let step = number(&s[1..]).map_err(|_| bad_step())?;
            if step <= 0.0 {
                return Err(bad_step());
            }
            Box::new(move |i| start + i as f64 * step)
        }
        Some(s) if s.starts_with(['x', '*']) => {
            let factor = number(&s[1..]).map_err(|_| bad_step())?;
            if factor <= 1.0 || start <= 0.0 {
                return Err(format!(
                    "{}; a geometric range needs a start above 0",
                    bad_step()
                ));
            }
            Box::new(move |i| start * factor.powi(i as i32))
        }
        Some(_) => return Err(bad_step()),
    };
    for i in 0.. {
        let v = next(i);
        if past(v) {
            break;
        }
        values.push(v);
        if values.len() > MAX_AXIS_VALUES {
            return Err(format!("`{item}` lists more than {MAX_AXIS_VALUES} values"));
        }
    }
    Ok(())
}

/// The axes of a sweep as a person gives them, before they are checked against the workload.
#[derive(Debug, Clone, Default)]
pub struct Axes {
    pub chips: Vec<Chip>,
    /// `(param name, values)`, in the order given.
    pub params: Vec<(String, Vec<f64>)>,
    /// `(role, types)`, in the order given.
    pub dtypes: Vec<(Role, Vec<DType>)>,
    /// Fusion plans by name: none for the workload's default plan, `all` for every plan.
    pub fusions: Vec<String>,
    pub mode: Mode,
}

/// The axes of a sweep, checked: at least one chip, no empty axis, no param or role given
/// twice, every param and plan one the workload has. Every scenario of their product is
/// priced.
#[derive(Debug, Clone)]
pub struct Grid<'a> {
    workload: &'a Workload,
    chips: Vec<Chip>,
    /// `(param index, values)`, in the order given.
    params: Vec<(usize, Vec<f64>)>,
    /// `(role, types)`, in the order given.
    dtypes: Vec<(Role, Vec<DType>)>,
    /// Fusion plan indices.
    fusions: Vec<usize>,
    mode: Mode,
}

impl<'a> Grid<'a> {
    /// Checks `axes` against `workload`.
    pub fn new(workload: &'a Workload, axes: Axes) -> Result<Grid<'a>, Error> {
        if axes.chips.is_empty() {
            return Err(Error::value("a sweep needs at least one chip"));
        }
        let mut params: Vec<(usize, Vec<f64>)> = Vec::new();
        for (name, values) in axes.params {
            let index = workload.param_index(&name)?;
            if params.iter().any(|(i, _)| *i == index) {
                return Err(Error::value(format!(
                    "param `{name}` is set twice; give all its values in one --set"
                )));
            }
            if values.is_empty() {
                return Err(Error::value(format!("param `{name}` has no values")));
            }
            if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
                return Err(Error::value(format!(
                    "param `{name}` must be a finite number, found {bad}"
                )));
            }
            params.push((index, values));
        }
        let mut dtypes: Vec<(Role, Vec<DType>)> = Vec::new();
        for (role, types) in axes.dtypes {
            if dtypes.iter().any(|(r, _)| *r == role) {
                return Err(Error::value(format!(
                    "role `{role}` is set twice; give all its types in one --dtype"
                )));
            }
            if types.is_empty() {
                return Err(Error::value(format!("role `{role}` has no data types")));
            }
            dtypes.push((role, types));
        }
        let fusions = match axes.fusions.as_slice() {
            [] => vec![workload.default_fusion],
            [all] if all == "all" => (0..workload.fusion_plans.len()).collect(),
            names => names
                .iter()
                .map(|n| workload.fusion_index(n))
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(Grid {
            workload,
            chips: axes.chips,
            params,
            dtypes,
            fusions,
            mode: axes.mode,
        })
    }

    pub fn workload(&self) -> &'a Workload {
        self.workload
    }

    pub fn chips(&self) -> &[Chip] {
        &self.chips
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Sizes of the axes, most significant first: chips, params, dtypes, fusion plans.
    fn radices(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.chips.len())
            .chain(self.params.iter().map(|(_, v)| v.len()))
            .chain(self.dtypes.iter().map(|(_, v)| v.len()))
            .chain(std::iter::once(self.fusions.len()))
    }

    /// Scenarios in the grid, or `None` if the count does not fit in 64 bits.
    pub fn len(&self) -> Option<u64> {
        self.radices()
            .try_fold(1u64, |acc, n| acc.checked_mul(n as u64))
    }

    /// Whether the grid has no scenario (never, once built; kept for the `len` convention).
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Sets `scenario` to scenario `index` of the grid and returns its chip's index.
    pub fn scenario(&self, mut index: u64, scenario: &mut Scenario) -> usize {
        let mut digit = |n: usize| {
            let d = (index % n as u64) as usize;
            index /= n as u64;
            d
        };
        scenario.fusion = self.fusions[digit(self.fusions.len())];
        for (role, types) in self.dtypes.iter().rev() {
            scenario.dtypes.set(*role, types[digit(types.len())]);
        }
        scenario.overrides.clear();
        for (param, values) in self.params.iter().rev() {
            scenario
                .overrides
                .push((*param, values[digit(values.len())]));
        }
        scenario.mode = self.mode;
        digit(self.chips.len())
    }
}

/// Which scenarios a sweep prices and what it prices with them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepOptions {
    /// Leave out scenarios that cannot be priced instead of writing an `error` row.
    pub skip_invalid: bool,
    /// Also price a request of `(input, output)` tokens per sequence at each scenario.
    pub request: Option<(u64, u64)>,
}

/// What a sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepStats {
    /// Scenarios priced (all of the grid unless cancelled).
    pub scenarios: u64,
    /// Rows written (header excluded).
    pub rows: u64,
    /// Scenarios that could not be priced.
    pub errors: u64,
    /// Whether `cancel` stopped the sweep before the end.
    pub cancelled: bool,
}

/// One scenario of a sweep, priced, as a [`RowSink`] sees it.
pub struct SweptScenario<'a> {
    pub workload: &'a Workload,
    pub chip: &'a Chip,
    pub scenario: &'a Scenario,
    /// Every param's value, indexed like the workload's params.
    pub params: &'a [f64],
    /// The step's totals, or the first line of why it could not be priced.
    pub outcome: Result<&'a StepSummary, &'a str>,
    pub request: Option<&'a RequestSummary>,
    /// One cost per kernel of the scenario's fusion plan (valid when `outcome` is `Ok`).
    pub costs: &'a [KernelCost],
}

/// Turns a sweep's scenarios into bytes. Called from many threads at once, each with its own
/// buffer; the buffers are written out in grid order.
pub trait RowSink: Sync {
    /// The most rows one scenario of `workload` makes (sizes the chunks held in memory).
    fn rows_per_scenario(&self, workload: &Workload) -> u64;
    /// Appends what comes before the rows (a CSV header; nothing for JSON Lines).
    fn header(&self, grid: &Grid, out: &mut Vec<u8>);
    /// Appends the rows of one scenario and returns how many.
    fn scenario(&self, scenario: &SweptScenario, out: &mut Vec<u8>) -> u64;
}

/// Per-task buffers, reused across the scenarios of a task.
struct Worker {
    scenario: Scenario,
    ev: Evaluation,
    costs: Vec<KernelCost>,
}

/// Rows of scenarios targeted per chunk (a chunk's buffers are in memory at once).
const ROWS_PER_CHUNK: u64 = 32_768;

/// Prices every scenario of `grid` and writes the rows `sink` makes of them to `out`, in grid
/// order. `progress` is called after each chunk with the scenarios it priced; setting `cancel`
/// stops the sweep after the chunk in flight. Only writing can fail: a scenario that cannot
/// be priced is an `error` row (or no row, with `skip_invalid`).
pub fn run<W: Write + Send, S: RowSink>(
    grid: &Grid,
    options: SweepOptions,
    sink: &S,
    out: W,
    progress: &(dyn Fn(u64) + Sync),
    cancel: &AtomicBool,
) -> io::Result<SweepStats> {
    let workload = grid.workload;
    let total = grid.len().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the grid has more than 2^64 scenarios",
        )
    })?;
    let per_chunk = (ROWS_PER_CHUNK / sink.rows_per_scenario(workload).max(1)).max(1);
    let tasks_per_chunk = (rayon::current_num_threads() as u64 * 4).max(1);
    let per_task = per_chunk.div_ceil(tasks_per_chunk).max(1);

    let mut stats = SweepStats::default();
    std::thread::scope(|scope| -> io::Result<SweepStats> {
        let (sender, receiver) = mpsc::sync_channel::<Vec<Vec<u8>>>(2);
        let writer = scope.spawn(move || -> io::Result<()> {
            let mut out = out;
            for buffers in receiver {
                for buffer in buffers {
                    out.write_all(&buffer)?;
                }
            }
            out.flush()
        });

        let mut header = Vec::new();
        sink.header(grid, &mut header);
        let mut pending = vec![header];
        let mut start = 0;
        while start < total {
            if cancel.load(Ordering::Relaxed) {
                stats.cancelled = true;
                break;
            }
            let end = total.min(start + per_chunk);
            let tasks: Vec<(Vec<u8>, u64, u64)> = (0..(end - start).div_ceil(per_task))
                .into_par_iter()
                .map_init(
                    || Worker {
                        scenario: Scenario::defaults(workload),
                        ev: workload.new_evaluation(),
                        costs: Vec::new(),
                    },
                    |worker, task| {
                        let from = start + task * per_task;
                        let to = end.min(from + per_task);
                        let mut buffer = Vec::with_capacity((to - from) as usize * 512);
                        let (mut rows, mut errors) = (0, 0);
                        for index in from..to {
                            let (r, e) =
                                price_scenario(grid, options, sink, index, worker, &mut buffer);
                            rows += r;
                            errors += e;
                        }
                        (buffer, rows, errors)
                    },
                )
                .collect();
            for (buffer, rows, errors) in tasks {
                stats.rows += rows;
                stats.errors += errors;
                pending.push(buffer);
            }
            stats.scenarios += end - start;
            if sender.send(std::mem::take(&mut pending)).is_err() {
                break; // the writer failed; its error is returned below
            }
            progress(end - start);
            start = end;
        }
        if !pending.is_empty() {
            let _ = sender.send(pending);
        }
        drop(sender);
        match writer.join() {
            Ok(result) => result.map(|()| stats),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Prices scenario `index` and appends its rows; returns (rows written, errors).
fn price_scenario<S: RowSink>(
    grid: &Grid,
    options: SweepOptions,
    sink: &S,
    index: u64,
    worker: &mut Worker,
    out: &mut Vec<u8>,
) -> (u64, u64) {
    let chip = &grid.chips[grid.scenario(index, &mut worker.scenario)];
    let result = price_step(
        grid.workload,
        chip,
        &worker.scenario,
        &mut worker.ev,
        &mut worker.costs,
    );
    let request = match (&result, options.request) {
        (Ok(_), Some((input, output))) => Some(
            price_request(grid.workload, chip, &worker.scenario, input, output)
                .map_err(|e| e.to_string()),
        ),
        _ => None,
    };
    let message;
    let outcome: Result<&StepSummary, &str> = match (&result, &request) {
        (Ok(summary), None | Some(Ok(_))) => Ok(summary),
        (Err(_), _) | (_, Some(Err(_))) if options.skip_invalid => return (0, 1),
        (Err(err), _) => {
            message = err.to_string();
            Err(message.lines().next().unwrap_or(""))
        }
        (_, Some(Err(err))) => Err(err.lines().next().unwrap_or("")),
    };
    let errors = u64::from(outcome.is_err());
    let swept = SweptScenario {
        workload: grid.workload,
        chip,
        scenario: &worker.scenario,
        params: &worker.ev.params,
        outcome,
        request: request.as_ref().and_then(|r| r.as_ref().ok()),
        costs: &worker.costs,
    };
    (sink.scenario(&swept, out), errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!(parse_values("1,2,4"), Ok(vec![1.0, 2.0, 4.0]));
        assert_eq!(parse_values("1..=256:x2").unwrap().len(), 9);
        assert_eq!(parse_values("1..=256:x2").unwrap()[8], 256.0);
        assert_eq!(parse_values("1..=4"), Ok(vec![1.0, 2.0, 3.0, 4.0]));
        assert_eq!(parse_values("1..4"), Ok(vec![1.0, 2.0, 3.0]));
        let arithmetic = parse_values("128..=4096:+128").unwrap();
        assert_eq!(arithmetic.len(), 32);
        assert_eq!(arithmetic[31], 4096.0);
        assert_eq!(parse_values("0.1..=0.3:+0.1").unwrap().len(), 3);
        assert_eq!(
            parse_values("1, 8..=32:x2, 100"),
            Ok(vec![1.0, 8.0, 16.0, 32.0, 100.0])
        );
    }

    #[test]
    fn rejects_bad_axes() {
        for bad in [
            "", "1,,2", "a", "4..=1", "1..=8:x1", "1..=8:+0", "0..=8:x2", "1..=8:/2", "1..=1e9",
        ] {
            assert!(parse_values(bad).is_err(), "{bad}");
        }
    }
}
