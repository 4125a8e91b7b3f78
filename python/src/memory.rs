//! A sweep's table is held in memory whole, so its bytes are counted before and while it is
//! made: a sweep that would pass its cap raises `MemoryError` with the estimate and the ways
//! out, where an allocation that failed would abort the interpreter.
//!
//! A row's bytes come from the sweep's own columns, as the table holds them while it fills:
//! a number or a count is 8 bytes and a validity flag (1), a boolean its value and flag (2), a
//! text its 4-byte offset, flag and bytes (5 + its length). The text (and, with a row per
//! kernel, the rows a scenario makes) is measured on the shard's first scenarios, one per
//! fusion plan, priced first, plus the longest chip id; an error row adds its message. An
//! eighth is added for buffers that grow by doubling, and [`SWEEP_BYTES`] for what the sweep
//! holds besides its rows. (Once whole, the Arrow table packs the flags into bits:
//! `llama-3.1-70b`'s 91 columns take 823 bytes a row while the table fills, 733 in Arrow.)

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use stepcost::internals::units::human;
use stepcost::{
    sweep::ColumnType, sweep::Grid, sweep::RowSink, sweep::Shard, sweep::StreamFormat,
    sweep::SweepOptions, sweep::SweepRows, sweep::SweptScenario, sweep::TypedRows,
    sweep::TypedTable, sweep::TypedValues, Chip, Workload,
};

use crate::errors::memory;

/// Slack on a row's bytes: a text column's buffer that grows by doubling, the allocator's
/// rounding.
const SLACK: f64 = 1.125;

/// What a sweep holds besides its rows: its chunks of rows in flight (about four of 8 MiB)
/// and the buffers it keeps for the next chunks (16 MiB).
pub const SWEEP_BYTES: u64 = 64 << 20;

/// The most bytes a sweep's table may take, and where the figure comes from (for the
/// message): `max_memory_bytes`, or the default the package measured.
pub struct Cap {
    pub bytes: u64,
    pub origin: String,
}

/// The ways out of a sweep too large to hold, in the package's own names.
const WAYS_OUT: &str = "keep fewer rows with where= (e.g. where=\"fits\"), price it in \
    shards one at a time (grid(...).shards(n), or shard=(i, n)) or on a cluster's workers, \
    raise max_memory_bytes, or write it to a file with the command line (stepcost sweep ... \
    --format parquet --out FILE)";

/// The bytes of a sweep's rows, and how many rows a scenario makes.
pub struct RowBytes {
    /// Values, flags and offsets, from the columns' types.
    fixed: u64,
    /// Text, measured.
    text: u64,
    columns: usize,
    /// Rows a scenario makes: 1, or with a row per kernel the measured average (each fusion
    /// plan is sampled once, as the grid's product order takes them in turn).
    rows_per_scenario: f64,
}

/// A sweep to measure: its grid, the scenarios priced and the sink they go to.
pub struct Measured<'a> {
    pub workload: &'a Workload,
    pub grid: &'a Grid<'a>,
    pub chips: &'a [Chip],
    pub options: SweepOptions,
    pub sink: &'a SweepRows,
    pub per_op: bool,
    /// The fusion plans the grid prices, in turn, with each choice of the other axes (the
    /// innermost axis of its product order).
    pub plans: u64,
    /// The scenarios priced, and in all.
    pub scenarios: Range<u64>,
    pub total: u64,
}

impl RowBytes {
    /// The bytes of a row of `sweep`'s sink, its text measured on the rows of the first
    /// scenarios priced (one per fusion plan) and widened by the longest chip id. Scenarios
    /// that cannot be priced are measured as no text, and a row per kernel as the most
    /// kernels a plan has: the sweep says why, and counts its rows as they come.
    pub fn measure(sweep: &Measured) -> RowBytes {
        let columns = sweep.sink.column_types();
        let fixed = columns.iter().map(|(_, kind)| fixed_bytes(*kind)).sum();
        let longest_id = sweep.chips.iter().map(|c| c.id().len() as u64).max();
        let most = sweep.sink.rows_per_scenario(sweep.workload) as f64;
        let (text, rows_per_scenario) = match sample(sweep) {
            Some(Sample {
                text,
                rows,
                scenarios,
                errors: false,
            }) => (text.div_ceil(rows), rows as f64 / scenarios as f64),
            Some(Sample { text, rows, .. }) => (text.div_ceil(rows), most),
            None => (0, most),
        };
        RowBytes {
            fixed,
            text: text + longest_id.unwrap_or(0),
            columns: columns.len(),
            rows_per_scenario,
        }
    }

    /// Bytes a row, slack included.
    pub fn per_row(&self) -> f64 {
        (self.fixed + self.text) as f64 * SLACK
    }

    /// Refuses the rows of `scenarios` scenarios (and the sweep's own bytes) above `cap`,
    /// before any is priced.
    pub fn check(&self, scenarios: u64, cap: &Cap) -> Result<(), pyo3::PyErr> {
        let rows = (scenarios as f64 * self.rows_per_scenario).ceil();
        let bytes = rows * self.per_row() + SWEEP_BYTES as f64;
        if bytes <= cap.bytes as f64 {
            return Ok(());
        }
        let rows_of = match (self.rows_per_scenario == 1.0, rows == 1.0) {
            (true, true) => "1 row".to_owned(),
            (true, false) => format!("{rows} rows"),
            (false, _) => format!("{rows} rows ({scenarios} scenarios, a row per kernel)"),
        };
        Err(memory(format!(
            "the sweep's table would take about {}: {rows_of} of {} bytes ({} columns) and {} \
             for the sweep itself, more than max_memory_bytes {} ({}); {WAYS_OUT}",
            human(bytes, "B"),
            self.per_row().round(),
            self.columns,
            human(SWEEP_BYTES as f64, "B"),
            human(cap.bytes as f64, "B"),
            cap.origin,
        )))
    }
}

/// What the sample's rows held.
struct Sample {
    text: u64,
    rows: u64,
    scenarios: u64,
    /// Whether a scenario could not be priced (its row is an error's).
    errors: bool,
}

/// The first scenarios `sweep` prices, one for each fusion plan, each priced alone into the
/// sweep's columns (unfiltered); `None` when none makes a row.
fn sample(sweep: &Measured) -> Option<Sample> {
    let rows_like = SweepRows::new(sweep.workload, StreamFormat::Cells, sweep.per_op);
    let end = sweep
        .scenarios
        .end
        .min(sweep.scenarios.start + sweep.plans.max(1));
    let mut sample = Sample {
        text: 0,
        rows: 0,
        scenarios: 0,
        errors: false,
    };
    for index in sweep.scenarios.start..end {
        let options = SweepOptions {
            skip_invalid: false,
            shard: Shard::new(index, sweep.total).ok()?,
            header: false,
            ..sweep.options
        };
        let mut rows = TypedRows::new(rows_like.column_types());
        let never = AtomicBool::new(false);
        stepcost::sweep::run(sweep.grid, options, &rows_like, &mut rows, &|_| {}, &never).ok()?;
        let table = rows.finish().ok()?;
        sample.text += text_bytes(&table);
        sample.rows += table.rows() as u64;
        sample.scenarios += 1;
        sample.errors |= has_errors(&table);
    }
    (sample.rows > 0).then_some(sample)
}

/// Whether a row of `table` has its `error` filled.
fn has_errors(table: &TypedTable) -> bool {
    let Some(at) = table.columns().iter().position(|(name, _)| name == "error") else {
        return false;
    };
    (table.batches().iter()).any(|b| b.columns()[at].valid().iter().any(|v| *v))
}

/// A value of `kind` and its validity flag (a text's offset and flag, without its text).
fn fixed_bytes(kind: ColumnType) -> u64 {
    match kind {
        ColumnType::Number | ColumnType::Integer => 9,
        ColumnType::Boolean => 2,
        ColumnType::Text => 5,
    }
}

/// Bytes of text in `table`.
fn text_bytes(table: &TypedTable) -> u64 {
    let columns = table.batches().iter().flat_map(|b| b.columns());
    (columns.map(|c| match c {
        TypedValues::Text { text, .. } => text.len() as u64,
        _ => 0,
    }))
    .sum()
}

/// A sink that counts the bytes of the rows `rows` keeps and stops the sweep (through
/// `cancel`) once they pass the cap: for a sweep whose rows cannot be counted before (a
/// filter keeps some), and for any whose estimate was short.
pub struct Budget<'a, S> {
    rows: &'a S,
    per_row: f64,
    /// Bytes the rows may take: the cap less what the sweep holds besides them.
    room: u64,
    held: AtomicU64,
    kept: AtomicU64,
    over: AtomicBool,
    cancel: &'a AtomicBool,
}

impl<'a, S: RowSink> Budget<'a, S> {
    pub fn new(rows: &'a S, row: &RowBytes, cap: &Cap, cancel: &'a AtomicBool) -> Self {
        Budget {
            rows,
            per_row: row.per_row(),
            room: cap.bytes.saturating_sub(SWEEP_BYTES),
            held: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            over: AtomicBool::new(false),
            cancel,
        }
    }

    /// Whether the rows passed the cap (and the sweep was stopped).
    pub fn passed(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    /// The error of a sweep stopped at the cap.
    pub fn error(&self, cap: &Cap) -> pyo3::PyErr {
        memory(format!(
            "the sweep was stopped after {} rows: they took about {} (and {} for the sweep \
             itself), more than max_memory_bytes {} ({}); {WAYS_OUT}",
            self.kept.load(Ordering::Relaxed),
            human(self.held.load(Ordering::Relaxed) as f64, "B"),
            human(SWEEP_BYTES as f64, "B"),
            human(cap.bytes as f64, "B"),
            cap.origin,
        ))
    }
}

impl<S: RowSink> RowSink for Budget<'_, S> {
    fn rows_per_scenario(&self, workload: &Workload) -> u64 {
        self.rows.rows_per_scenario(workload)
    }

    fn header(&self, grid: &Grid, out: &mut Vec<u8>) {
        self.rows.header(grid, out)
    }

    fn scenario(&self, scenario: &SweptScenario, out: &mut Vec<u8>) -> u64 {
        let rows = self.rows.scenario(scenario, out);
        if rows == 0 {
            return 0; // left out by the filter: nothing held, nothing shared to count
        }
        // The sample measured a priced row's text; an error row holds its message too.
        let message = scenario.outcome.err().map_or(0, str::len) as u64;
        let bytes = (rows as f64 * self.per_row).ceil() as u64 + rows * message;
        self.kept.fetch_add(rows, Ordering::Relaxed);
        let held = self.held.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if held > self.room {
            self.over.store(true, Ordering::Relaxed);
            self.cancel.store(true, Ordering::Relaxed);
        }
        rows
    }

    fn finish(&self, out: &mut Vec<u8>) -> u64 {
        self.rows.finish(out)
    }
}
