//! Running a sweep: the grid's scenarios priced chunk by chunk, each chunk split into tasks on
//! rayon's pool with their own buffers and reused evaluation state, and the buffers handed in
//! grid order to a writer thread while the next chunk is priced.

use std::io::{self, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};

use rayon::prelude::*;

use super::{Grid, RowSink, SweepOptions, SweepStats, SweptScenario};
use crate::engine::price::{price_request, price_step, KernelCost, StepSummary};
use crate::engine::scenario::Scenario;
use crate::engine::workload::{Evaluation, Workload};

/// Per-task buffers, reused across the scenarios of a task.
struct Worker {
    scenario: Scenario,
    ev: Evaluation,
    costs: Vec<KernelCost>,
}

impl Worker {
    fn new(workload: &Workload) -> Self {
        Worker {
            scenario: Scenario::defaults(workload),
            ev: workload.new_evaluation(),
            costs: Vec::new(),
        }
    }
}

/// Rows of scenarios targeted per chunk (a chunk's buffers are in memory at once).
const ROWS_PER_CHUNK: u64 = 32_768;

/// The chunks of buffers a sweep's writer thread receives, in grid order.
type Chunk = Vec<Vec<u8>>;

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
    let total = grid.len().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the grid has more than 2^64 scenarios",
        )
    })?;
    let pricer = Pricer::new(grid, options, sink);
    std::thread::scope(|scope| -> io::Result<SweepStats> {
        let (sender, receiver) = mpsc::sync_channel::<Chunk>(2);
        let writer = scope.spawn(move || write_chunks(receiver, out));
        let stats = pricer.price_all(total, &sender, progress, cancel);
        drop(sender);
        match writer.join() {
            Ok(result) => result.map(|()| stats),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// The writer thread: writes the chunks received, in order, then flushes.
fn write_chunks<W: Write>(receiver: Receiver<Chunk>, mut out: W) -> io::Result<()> {
    for buffers in receiver {
        for buffer in buffers {
            out.write_all(&buffer)?;
        }
    }
    out.flush()
}

/// What one task of a chunk made.
struct TaskRows {
    buffer: Vec<u8>,
    rows: u64,
    errors: u64,
}

/// How one sweep prices: the grid, what each scenario prices, the sink that makes the rows,
/// and how the scenarios are cut into chunks and tasks.
struct Pricer<'a, S> {
    grid: &'a Grid<'a>,
    options: SweepOptions,
    sink: &'a S,
    /// Scenarios per chunk.
    per_chunk: u64,
    /// Scenarios per task of a chunk.
    per_task: u64,
}

impl<'a, S: RowSink> Pricer<'a, S> {
    fn new(grid: &'a Grid<'a>, options: SweepOptions, sink: &'a S) -> Self {
        let per_chunk = (ROWS_PER_CHUNK / sink.rows_per_scenario(grid.workload()).max(1)).max(1);
        let tasks_per_chunk = (rayon::current_num_threads() as u64 * 4).max(1);
        Pricer {
            grid,
            options,
            sink,
            per_chunk,
            per_task: per_chunk.div_ceil(tasks_per_chunk).max(1),
        }
    }

    /// Prices scenarios `0..total` chunk by chunk and sends each chunk's buffers, the header
    /// first, to the writer; stops early when `cancel` is set or the writer has failed.
    fn price_all(
        &self,
        total: u64,
        sender: &SyncSender<Chunk>,
        progress: &(dyn Fn(u64) + Sync),
        cancel: &AtomicBool,
    ) -> SweepStats {
        let mut stats = SweepStats::default();
        let mut header = Vec::new();
        self.sink.header(self.grid, &mut header);
        let mut pending = vec![header];
        let mut start = 0;
        while start < total {
            if cancel.load(Ordering::Relaxed) {
                stats.cancelled = true;
                break;
            }
            let end = total.min(start + self.per_chunk);
            for task in self.price_chunk(start, end) {
                stats.rows += task.rows;
                stats.errors += task.errors;
                pending.push(task.buffer);
            }
            stats.scenarios += end - start;
            if sender.send(std::mem::take(&mut pending)).is_err() {
                break; // the writer failed; its error is returned by `run`
            }
            progress(end - start);
            start = end;
        }
        if !pending.is_empty() {
            let _ = sender.send(pending);
        }
        stats
    }

    /// Prices scenarios `start..end` in parallel tasks; their rows come back in grid order.
    fn price_chunk(&self, start: u64, end: u64) -> Vec<TaskRows> {
        (0..(end - start).div_ceil(self.per_task))
            .into_par_iter()
            .map_init(
                || Worker::new(self.grid.workload()),
                |worker, task| {
                    let from = start + task * self.per_task;
                    let to = end.min(from + self.per_task);
                    self.price_task(from..to, worker)
                },
            )
            .collect()
    }

    /// Prices the scenarios `indices` of one task into one buffer.
    fn price_task(&self, indices: Range<u64>, worker: &mut Worker) -> TaskRows {
        let mut buffer = Vec::with_capacity((indices.end - indices.start) as usize * 512);
        let (mut rows, mut errors) = (0, 0);
        for index in indices {
            let (r, e) = self.price_scenario(index, worker, &mut buffer);
            rows += r;
            errors += e;
        }
        TaskRows {
            buffer,
            rows,
            errors,
        }
    }

    /// Prices scenario `index` and appends its rows; returns (rows written, errors).
    fn price_scenario(&self, index: u64, worker: &mut Worker, out: &mut Vec<u8>) -> (u64, u64) {
        let (grid, options) = (self.grid, self.options);
        let workload = grid.workload();
        let chip = &grid.chips()[grid.scenario(index, &mut worker.scenario)];
        let result = price_step(
            workload,
            chip,
            &worker.scenario,
            &mut worker.ev,
            &mut worker.costs,
        );
        let request = match (&result, options.request) {
            (Ok(_), Some((input, output))) => Some(
                price_request(workload, chip, &worker.scenario, input, output)
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
            workload,
            chip,
            scenario: &worker.scenario,
            params: &worker.ev.params,
            outcome,
            request: request.as_ref().and_then(|r| r.as_ref().ok()),
            costs: &worker.costs,
        };
        (self.sink.scenario(&swept, out), errors)
    }
}
