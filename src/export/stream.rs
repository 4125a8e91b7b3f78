//! A sweep's rows as CSV, JSON Lines or Parquet cells: the [`RowSink`] the command line
//! streams with. The same row structs as `run` prints, so a sweep row is byte for byte the
//! `run` row of its scenario.

use std::cell::RefCell;
use std::sync::OnceLock;

use crate::base::chip_field::ChipField;
use crate::base::param::ScenarioParam;
use crate::core::scenario::Mode;
use crate::core::timing::priced_by;
use crate::core::workload::Workload;
use crate::export::filter::{self, Filter, FilterError};
use crate::export::rows::{
    self, param_columns, scenario_column_type, Captured, ChipColumn, ColumnType, CsvText,
    KernelName, KernelRow, Row, RowInline, ScenarioLabel, Selection, Shape, SummaryRow,
    UnknownColumn, Value, WhatIfCells,
};
use crate::export::top::{Order, RankError, Ranking};
use crate::study::band;
use crate::study::serving::ServingBand;
use crate::study::sweep::{Grid, RowSink, SweptScenario};

/// How streamed rows are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamFormat {
    /// A header line, then one CSV line per row; a text cell a spreadsheet would run as a
    /// formula gets a `'` before it (see `rows::CsvText`).
    #[default]
    Csv,
    /// CSV with every text cell as it is (`--raw-text`).
    CsvRaw,
    /// One JSON object per line.
    JsonLines,
    /// Each row's typed cells for [`TypedRows`](crate::export::typed::TypedRows), which makes
    /// typed columns of them; no header (the columns are [`SweepRows::column_types`]).
    Cells,
    /// Each row's cells for [`ParquetFile`](crate::export::parquet::ParquetFile), which
    /// makes the file of them; no header (the schema is [`SweepRows::column_types`]).
    #[cfg(feature = "parquet")]
    Parquet,
}

/// Rows of a sweep: one per scenario, or with `per_op` one per kernel of each scenario; cut
/// to a shape (`--columns`, `--digits`), narrowed by a filter (`--where`) and then to the best
/// by a column (`--top`) when asked. The filter and the ranking read every column of a row,
/// whatever the shape writes.
#[derive(Debug)]
pub struct SweepRows {
    format: StreamFormat,
    per_op: bool,
    /// The param columns' names, from the workload.
    columns: Vec<String>,
    /// The chip fields a what-if sweep changes, one column each after the params.
    chip_columns: Vec<ChipColumn>,
    workload_id: String,
    selection: Option<Selection>,
    filter: Option<Filter>,
    /// The first row the filter could not be applied to (a text cell compared with a number):
    /// that row and the like are left out, and the command reports it.
    filter_error: OnceLock<FilterError>,
    /// The best rows, held back until every scenario is priced.
    ranking: Option<Ranking>,
}

thread_local! {
    /// The cells of the row being filtered, kept from row to row for their capacity.
    static FILTERED: RefCell<Captured> = RefCell::new(Captured::default());
}

impl SweepRows {
    /// Rows of a sweep of `workload` in `format`, one per kernel of each scenario with `per_op`; no
    /// shape, filter or ranking until one is set.
    pub fn new(workload: &Workload, format: StreamFormat, per_op: bool) -> SweepRows {
        SweepRows {
            format,
            per_op,
            columns: param_columns(workload.params.iter().map(|p| p.name.as_str())),
            chip_columns: Vec::new(),
            workload_id: workload.id.clone(),
            selection: None,
            filter: None,
            filter_error: OnceLock::new(),
            ranking: None,
        }
    }

    /// The rows with a column for each chip field a what-if sweep changes (`--chip-set`), in
    /// the order given; to be called before [`SweepRows::shaped`] and [`SweepRows::filtered`],
    /// which read the columns.
    pub fn with_chip_fields(mut self, fields: impl IntoIterator<Item = ChipField>) -> SweepRows {
        self.chip_columns = fields.into_iter().map(ChipColumn::of).collect();
        self
    }

    /// The rows cut to `shape` (`--columns`, `--digits`); an unknown column is an error.
    pub fn shaped(mut self, shape: &Shape) -> Result<SweepRows, UnknownColumn> {
        if !shape.is_whole() {
            let selection = self.with_sample(|row| Selection::new(shape, row))?;
            self.selection = Some(selection);
        }
        Ok(self)
    }

    /// Only the rows that pass `text` (`--where`), compiled against the rows' columns.
    pub fn filtered(mut self, text: &str) -> Result<SweepRows, FilterError> {
        let kinds = self.with_sample(filter::kinds);
        let filter = Filter::compile(text, kinds.iter().map(|(n, k)| (n.as_str(), *k)))?;
        self.filter = Some(filter);
        Ok(self)
    }

    /// Only the `k` best rows by `by` (`-name`: the highest first), per group of `per`, of
    /// those the filter keeps; written once every scenario is priced (see `export::top`).
    pub fn ranked(mut self, k: u64, by: &str, per: Option<&str>) -> Result<SweepRows, RankError> {
        let kinds = self.with_sample(filter::kinds);
        self.ranking = Some(Ranking::new(k, by, per, &kinds)?);
        Ok(self)
    }

    /// The format the rows are encoded in.
    pub fn format(&self) -> StreamFormat {
        self.format
    }

    /// The columns written, in order, with the type the column table gives each.
    pub fn column_types(&self) -> Vec<(String, ColumnType)> {
        let mut columns = Vec::new();
        self.with_sample(|row| {
            let mut visit = |name: &str, _: Value<'_>| {
                columns.push((name.to_owned(), scenario_column_type(name)));
            };
            match &self.selection {
                Some(selection) => selection.of(row).visit(&mut visit),
                None => row.visit(&mut visit),
            }
        });
        columns
    }

    /// Why a row could not be filtered, if one could not.
    pub fn filter_error(&self) -> Option<&FilterError> {
        self.filter_error.get()
    }

    /// Rows `--top` left out because their `--by` cell was empty (no price, say).
    pub fn unranked(&self) -> u64 {
        self.ranking.as_ref().map_or(0, Ranking::unranked)
    }

    /// Why a row could not be ranked, if one could not.
    pub fn rank_error(&self) -> Option<&RankError> {
        self.ranking.as_ref().and_then(Ranking::error)
    }

    /// `f` of a row of this sink's kind (an error row: its names and the kinds of its label).
    fn with_sample<T>(&self, f: impl FnOnce(&dyn Row) -> T) -> T {
        let label = ScenarioLabel {
            workload: &self.workload_id,
            chip: "",
            engine: "",
            mode: Mode::default(),
            fusion: "",
            dtypes: Default::default(),
            param_columns: &self.columns,
            params: &vec![0.0; self.columns.len()],
            what_if: WhatIfCells {
                columns: &self.chip_columns,
                chip: None,
            },
        };
        match self.per_op {
            true => f(&KernelRow::error(label, "")),
            false => f(&SummaryRow::error(label, "")),
        }
    }

    /// Writes `row`, at `order` in the product order, if it passes the filter (or offers it
    /// to the ranking, which writes it later if it is among the best); whether it was written.
    fn line<R: RowInline>(&self, out: &mut Vec<u8>, row: &R, order: Order) -> bool {
        if let Some(filter) = &self.filter {
            let pass = FILTERED.with_borrow_mut(|captured| {
                captured.capture(row);
                filter.matches(captured)
            });
            match pass {
                Ok(true) => {}
                Ok(false) => return false,
                Err(e) => {
                    let _ = self.filter_error.set(e);
                    return false;
                }
            }
        }
        match &self.ranking {
            Some(ranking) => {
                ranking.offer(row, order, |kept| self.shape(kept, row));
                false
            }
            None => {
                self.shape(out, row);
                true
            }
        }
    }

    /// Writes `row` cut to the selection, if there is one.
    fn shape<R: RowInline>(&self, out: &mut Vec<u8>, row: &R) {
        match &self.selection {
            Some(selection) => self.encode(out, &selection.of(row)),
            None => match self.format {
                StreamFormat::Csv => rows::csv_line_inline(out, row, CsvText::Neutralised),
                StreamFormat::CsvRaw => rows::csv_line_inline(out, row, CsvText::Raw),
                _ => self.encode(out, row),
            },
        }
    }

    fn encode(&self, out: &mut Vec<u8>, row: &dyn Row) {
        match self.format {
            StreamFormat::Csv => rows::csv_line(out, row, CsvText::Neutralised),
            StreamFormat::CsvRaw => rows::csv_line(out, row, CsvText::Raw),
            StreamFormat::JsonLines => rows::json_line(out, row),
            StreamFormat::Cells => crate::export::cells::push_cells(out, row),
            #[cfg(feature = "parquet")]
            StreamFormat::Parquet => crate::export::cells::push_cells(out, row),
        }
    }

    fn label<'a>(&'a self, s: &SweptScenario<'a>) -> ScenarioLabel<'a> {
        ScenarioLabel {
            workload: &s.workload.id,
            chip: &s.chip.id,
            engine: s.scenario.engine_id_on(s.chip),
            mode: s.scenario.mode(),
            fusion: &s.workload.fusion_plans[s.scenario.fusion()].name,
            dtypes: *s.scenario.dtypes(),
            param_columns: &self.columns,
            params: s.params,
            what_if: WhatIfCells {
                columns: &self.chip_columns,
                chip: Some(s.chip),
            },
        }
    }
}

impl RowSink for SweepRows {
    fn rows_per_scenario(&self, workload: &Workload) -> u64 {
        if self.per_op {
            let most = workload.fusion_plans.iter().map(|p| p.kernels.len()).max();
            most.unwrap_or(1).max(1) as u64
        } else {
            1
        }
    }

    fn header(&self, _: &Grid, out: &mut Vec<u8>) {
        let mode = match self.format {
            StreamFormat::Csv => CsvText::Neutralised,
            StreamFormat::CsvRaw => CsvText::Raw,
            StreamFormat::JsonLines | StreamFormat::Cells => return,
            #[cfg(feature = "parquet")]
            StreamFormat::Parquet => return,
        };
        // Any values will do: the header only takes the column names.
        self.with_sample(|row| match &self.selection {
            Some(selection) => rows::csv_header(out, &selection.of(row), mode),
            None => rows::csv_header(out, row, mode),
        });
    }

    fn scenario(&self, s: &SweptScenario, out: &mut Vec<u8>) -> u64 {
        let label = self.label(s);
        match s.outcome {
            Ok(summary) if self.per_op => {
                let plan = &s.workload.fusion_plans[s.scenario.fusion()];
                let (mut rows, mut place) = (0, 0);
                for (kernel, cost) in plan.kernels.iter().zip(s.costs) {
                    if cost.count == 0 {
                        continue; // a block repeated 0 times is not in the step
                    }
                    let priced_by = priced_by(s.chip, kernel.kind, cost);
                    let row = KernelRow {
                        label,
                        kernel: Some(KernelName {
                            name: &kernel.name,
                            block: &s.workload.blocks[kernel.block].name,
                            kind: kernel.kind.name(),
                        }),
                        cost: Some(cost),
                        priced_by: &priced_by,
                        step_time_s: summary.step_time_s,
                        error: "",
                    };
                    rows += u64::from(self.line(out, &row, (s.index, place)));
                    place += 1;
                }
                rows
            }
            Err(error) if self.per_op => {
                u64::from(self.line(out, &KernelRow::error(label, error), (s.index, 0)))
            }
            outcome => {
                let tokens = s.workload.param(ScenarioParam::Tokens);
                let row = SummaryRow {
                    label,
                    outcome,
                    request: s.request,
                    band: band::of_step(
                        s.scenario.mode(),
                        tokens.map(|i| s.params[i]),
                        s.chip.family(),
                    ),
                    // Looked up only where a request was priced (worked out once per process).
                    request_band: (s.request)
                        .and_then(|_| ServingBand::of(s.scenario.mode(), s.chip.family())),
                };
                u64::from(self.line(out, &row, (s.index, 0)))
            }
        }
    }

    fn finish(&self, out: &mut Vec<u8>) -> u64 {
        self.ranking
            .as_ref()
            .map_or(0, |ranking| ranking.finish(out))
    }
}
