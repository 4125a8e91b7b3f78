//! Running a sweep: the grid's scenarios priced chunk by chunk, each chunk split into tasks on
//! rayon's pool with their own buffers and reused evaluation state, and the buffers handed in
//! grid order to a writer thread while the next chunk is priced. Chunks are sized in bytes:
//! from the widest row seen so far, each holds about [`CHUNK_BYTES`] of rows, so a sweep's
//! memory does not grow with the width of its rows.

use std::io::{self, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Mutex;

use rayon::prelude::*;

use super::{Grid, RowSink, SweepOptions, SweepStats, SweptScenario};
use crate::base::error::Error;
use crate::core::scenario::Scenario;
use crate::core::timing::{price_request, price_step, KernelCost};
use crate::core::workload::{Evaluation, Workload};

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

/// Most rows per chunk (a chunk's buffers are in memory at once).
const ROWS_PER_CHUNK: u64 = 32_768;

/// Bytes of rows aimed at per chunk. With the chunks queued for the writer (two), the one
/// being written and the one being priced, a sweep holds about four of them, whatever the
/// width of a row; only a single scenario whose rows are wider than this makes a larger chunk.
const CHUNK_BYTES: u64 = 8 << 20;

/// The chunks of buffers a sweep's writer thread receives, in grid order.
type Chunk = Vec<Vec<u8>>;

/// Buffers the writer has written, emptied, for the next tasks to fill: memory the sweep has
/// touched already, where a fresh buffer would cost a page fault for every 4 KiB it fills.
#[derive(Default)]
struct Pool {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    buffers: Vec<Vec<u8>>,
    /// Their capacity together, at most [`POOL_BYTES`].
    bytes: usize,
}

/// Bytes of empty buffers a sweep keeps: two chunks' worth, what the writer hands back while
/// the next chunk is priced.
const POOL_BYTES: usize = 2 * CHUNK_BYTES as usize;

/// The largest buffer kept: a task's usual share of a chunk (128 KiB on two threads) is a
/// quarter of this. A sweep of rows so wide that one fills more keeps none, so that its memory
/// stays what its chunks need.
const POOL_BUFFER_BYTES: usize = CHUNK_BYTES as usize / 16;

impl Pool {
    /// An empty buffer with room for `bytes`: a kept one if it has the room.
    fn take(&self, bytes: usize) -> Vec<u8> {
        let kept = self.kept.lock().ok().and_then(|mut kept| {
            let buffer = kept.buffers.pop()?;
            kept.bytes -= buffer.capacity();
            Some(buffer)
        });
        // One too small (from the first, short chunks) would grow by a copy: a new one instead.
        match kept.filter(|b| b.capacity() >= bytes) {
            Some(buffer) => buffer,
            None => Vec::with_capacity(bytes),
        }
    }

    fn give_back(&self, mut buffer: Vec<u8>) {
        buffer.clear();
        if let Ok(mut kept) = self.kept.lock() {
            let room = kept.bytes + buffer.capacity() <= POOL_BYTES;
            if room && buffer.capacity() <= POOL_BUFFER_BYTES {
                kept.bytes += buffer.capacity();
                kept.buffers.push(buffer);
            }
        }
    }
}

/// Why a sweep stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The rows could not be written.
    #[error(transparent)]
    Write(#[from] io::Error),
    /// A scenario failed for a reason other than a chip lacking what an op needs (which is an
    /// `error` row): a param value that makes no graph, totals that overflow.
    #[error("scenario {index} of the sweep (chip `{chip}`)")]
    Scenario {
        /// Its index in the grid's product order.
        index: u64,
        /// The id of the chip it was priced on.
        chip: String,
        /// Why it failed.
        #[source]
        error: Error,
    },
}

/// Prices every scenario of `grid` (or of the shard `options` names) and writes the rows
/// `sink` makes of them to `out`, in grid order, then what the sink held back. `progress` is
/// called after each chunk with the scenarios it priced; setting `cancel` stops the sweep
/// after the chunk in flight. A scenario the chip cannot run
/// ([`Error::Unsupported`]) is an `error` row (or no row, with `skip_invalid`); any other
/// failure stops the sweep with the first failing scenario in grid order.
pub fn run<W: Write + Send, S: RowSink>(
    grid: &Grid,
    options: SweepOptions,
    sink: &S,
    out: W,
    progress: &(dyn Fn(u64) + Sync),
    cancel: &AtomicBool,
) -> Result<SweepStats, SweepError> {
    let total = grid.len().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the grid has more than 2^64 scenarios",
        )
    })?;
    let pricer = Pricer::new(grid, options, sink);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<Chunk>(2);
        // A thread the system will not start is an error like a write that fails.
        let pool = &pricer.pool;
        let writer = std::thread::Builder::new()
            .spawn_scoped(scope, move || write_chunks(receiver, out, pool))
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot start a thread to write the rows: {e}"),
                )
            })?;
        let scenarios = options.shard.range(total);
        let priced = pricer.price_all(scenarios, &sender, progress, cancel);
        drop(sender);
        let written = match writer.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let stats = priced?;
        written?;
        Ok(stats)
    })
}

/// The writer thread: writes the chunks received, in order, then flushes; each buffer
/// written goes back to `pool`.
fn write_chunks<W: Write>(receiver: Receiver<Chunk>, mut out: W, pool: &Pool) -> io::Result<()> {
    for buffers in receiver {
        for buffer in buffers {
            out.write_all(&buffer)?;
            pool.give_back(buffer);
        }
    }
    out.flush()
}

/// What one task of a chunk made.
struct TaskRows {
    buffer: Vec<u8>,
    rows: u64,
    errors: u64,
    /// The first scenario of the task that failed for real, if any: the task stops there.
    failed: Option<SweepError>,
    /// Bytes per row of the scenario whose rows were widest on average (0 when none).
    widest_row: u64,
}

/// How one sweep prices: the grid, what each scenario prices, the sink that makes the rows,
/// and how the scenarios are cut into chunks and tasks.
struct Pricer<'a, S> {
    grid: &'a Grid<'a>,
    options: SweepOptions,
    sink: &'a S,
    /// The most rows one scenario makes.
    rows_per_scenario: u64,
    /// Tasks a chunk is split into.
    tasks_per_chunk: u64,
    pool: Pool,
}

impl<'a, S: RowSink> Pricer<'a, S> {
    fn new(grid: &'a Grid<'a>, options: SweepOptions, sink: &'a S) -> Self {
        // Many small tasks: a thread that finishes first steals more of the chunk, and each
        // task's buffer (about 128 KiB) is reused memory rather than fresh pages.
        let tasks_per_chunk = (rayon::current_num_threads() as u64 * 32).max(1);
        Pricer {
            grid,
            options,
            sink,
            rows_per_scenario: sink.rows_per_scenario(grid.workload()).max(1),
            tasks_per_chunk,
            pool: Pool::default(),
        }
    }

    /// Scenarios in the next chunk, given the widest row seen so far (0 for none yet) and the
    /// scenarios of the last chunk: as many as fill [`CHUNK_BYTES`] if every row were the
    /// widest, and at most [`ROWS_PER_CHUNK`] rows. Until a row is seen (the first chunk is a
    /// single scenario) chunks double from one.
    fn chunk_len(&self, widest_row: u64, last: u64) -> u64 {
        let by_rows = ROWS_PER_CHUNK / self.rows_per_scenario;
        let by_bytes = match widest_row {
            0 => last.saturating_mul(2),
            row => CHUNK_BYTES / row.saturating_mul(self.rows_per_scenario),
        };
        by_rows.min(by_bytes).max(1)
    }

    /// Prices `scenarios` chunk by chunk and sends each chunk's buffers, the header first (if
    /// asked for), to the writer, then what the sink held back; stops early when `cancel` is
    /// set or the writer has failed.
    fn price_all(
        &self,
        scenarios: Range<u64>,
        sender: &SyncSender<Chunk>,
        progress: &(dyn Fn(u64) + Sync),
        cancel: &AtomicBool,
    ) -> Result<SweepStats, SweepError> {
        let mut stats = SweepStats::default();
        let mut header = Vec::new();
        if self.options.header {
            self.sink.header(self.grid, &mut header);
        }
        let mut pending = vec![header];
        let (mut start, mut len, mut widest_row) = (scenarios.start, 0, 0);
        let total = scenarios.end;
        while start < total {
            if cancel.load(Ordering::Relaxed) {
                stats.cancelled = true;
                break;
            }
            len = self.chunk_len(widest_row, len);
            let end = total.min(start.saturating_add(len));
            for task in self.price_chunk(start, end, widest_row) {
                if let Some(failure) = task.failed {
                    return Err(failure); // nothing of this chunk is sent
                }
                stats.rows += task.rows;
                stats.errors += task.errors;
                widest_row = widest_row.max(task.widest_row);
                pending.push(task.buffer);
            }
            stats.scenarios += end - start;
            if sender.send(std::mem::take(&mut pending)).is_err() {
                break; // the writer failed; its error is returned by `run`
            }
            progress(end - start);
            start = end;
        }
        if start == total {
            let mut held = Vec::new();
            stats.rows += self.sink.finish(&mut held);
            pending.push(held);
        }
        if !pending.is_empty() {
            let _ = sender.send(pending);
        }
        Ok(stats)
    }

    /// Prices scenarios `start..end` in parallel tasks; their rows come back in grid order.
    /// `widest_row` (bytes, 0 when no row is seen yet) sizes the tasks' buffers.
    fn price_chunk(&self, start: u64, end: u64, widest_row: u64) -> Vec<TaskRows> {
        let per_task = (end - start).div_ceil(self.tasks_per_chunk).max(1);
        (0..(end - start).div_ceil(per_task))
            .into_par_iter()
            .map_init(
                || Worker::new(self.grid.workload()),
                |worker, task| {
                    let from = start + task * per_task;
                    let to = end.min(from + per_task);
                    self.price_task(from..to, worker, widest_row)
                },
            )
            .collect()
    }

    /// Prices the scenarios `indices` of one task into one buffer, sized for rows as wide as
    /// `widest_row` (so that it is not copied as it grows).
    fn price_task(&self, indices: Range<u64>, worker: &mut Worker, widest_row: u64) -> TaskRows {
        let row = match widest_row {
            0 => 512,
            w => w + w / 16,
        };
        let rows = (indices.end - indices.start) * self.rows_per_scenario;
        let mut buffer = self
            .pool
            .take(rows.saturating_mul(row).min(CHUNK_BYTES) as usize);
        let (mut rows, mut errors, mut failed, mut widest_row) = (0, 0, None, 0);
        for index in indices {
            let before = buffer.len();
            match self.price_scenario(index, worker, &mut buffer) {
                Ok((r, e)) => {
                    rows += r;
                    errors += e;
                    if r > 0 {
                        let bytes = (buffer.len() - before) as u64;
                        widest_row = widest_row.max(bytes.div_ceil(r));
                    }
                }
                Err(failure) => {
                    failed = Some(failure);
                    break;
                }
            }
        }
        TaskRows {
            buffer,
            rows,
            errors,
            failed,
            widest_row,
        }
    }

    /// Prices scenario `index` and appends its rows; returns (rows written, errors).
    fn price_scenario(
        &self,
        index: u64,
        worker: &mut Worker,
        out: &mut Vec<u8>,
    ) -> Result<(u64, u64), SweepError> {
        let (grid, options) = (self.grid, self.options);
        let workload = grid.workload();
        let fatal = |error| SweepError::Scenario {
            index,
            chip: grid.chips()[grid.chip_of(index)].id().to_owned(),
            error,
        };
        let chip = &grid.chips()[grid.scenario(index, &mut worker.scenario).map_err(fatal)?];
        let priced = price_step(
            workload,
            chip,
            &worker.scenario,
            &mut worker.ev,
            &mut worker.costs,
        )
        .and_then(|summary| match options.request {
            Some((input, output)) => {
                let request = price_request(workload, chip, &worker.scenario, input, output)?;
                Ok((summary, Some(request)))
            }
            None => Ok((summary, None)),
        });
        let priced = match priced {
            Err(e) if !e.is_unsupported() => return Err(fatal(e)),
            priced => priced,
        };
        let message;
        let (outcome, request) = match &priced {
            Ok((summary, request)) => (Ok(summary), request.as_ref()),
            Err(_) if options.skip_invalid => return Ok((0, 1)),
            Err(e) => {
                message = e.to_string();
                (Err(message.lines().next().unwrap_or("")), None)
            }
        };
        let errors = u64::from(outcome.is_err());
        let swept = SweptScenario {
            index,
            workload,
            chip,
            scenario: &worker.scenario,
            params: &worker.ev.params,
            outcome,
            request,
            costs: &worker.costs,
        };
        Ok((self.sink.scenario(&swept, out), errors))
    }
}
