//! A sweep's rows as CSV or JSON Lines: the [`RowSink`] the command line streams with. The
//! same row structs as `run` prints, so a sweep row is byte for byte the `run` row of its
//! scenario.

use crate::engine::workload::Workload;
use crate::export::rows::{
    self, param_columns, CsvText, KernelName, KernelRow, Row, ScenarioLabel, SummaryRow,
};
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
}

/// Rows of a sweep: one per scenario, or with `per_op` one per kernel of each scenario.
#[derive(Debug, Clone)]
pub struct SweepRows {
    format: StreamFormat,
    per_op: bool,
    /// The param columns' names, from the workload.
    columns: Vec<String>,
}

impl SweepRows {
    pub fn new(workload: &Workload, format: StreamFormat, per_op: bool) -> SweepRows {
        SweepRows {
            format,
            per_op,
            columns: param_columns(workload.params.iter().map(|p| p.name.as_str())),
        }
    }

    fn line(&self, out: &mut Vec<u8>, row: &dyn Row) {
        match self.format {
            StreamFormat::Csv => rows::csv_line(out, row, CsvText::Neutralised),
            StreamFormat::CsvRaw => rows::csv_line(out, row, CsvText::Raw),
            StreamFormat::JsonLines => rows::json_line(out, row),
        }
    }

    fn label<'a>(&'a self, s: &SweptScenario<'a>) -> ScenarioLabel<'a> {
        ScenarioLabel {
            workload: &s.workload.id,
            chip: &s.chip.id,
            mode: s.scenario.mode,
            fusion: &s.workload.fusion_plans[s.scenario.fusion].name,
            dtypes: s.scenario.dtypes,
            param_columns: &self.columns,
            params: s.params,
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

    fn header(&self, grid: &Grid, out: &mut Vec<u8>) {
        let mode = match self.format {
            StreamFormat::Csv => CsvText::Neutralised,
            StreamFormat::CsvRaw => CsvText::Raw,
            StreamFormat::JsonLines => return,
        };
        // Any values will do: the header only takes the column names.
        let workload = grid.workload();
        let label = ScenarioLabel {
            workload: &workload.id,
            chip: "",
            mode: grid.mode(),
            fusion: "",
            dtypes: workload.default_dtypes,
            param_columns: &self.columns,
            params: &vec![0.0; self.columns.len()],
        };
        if self.per_op {
            rows::csv_header(out, &KernelRow::error(label, ""), mode);
        } else {
            rows::csv_header(out, &SummaryRow::error(label, ""), mode);
        }
    }

    fn scenario(&self, s: &SweptScenario, out: &mut Vec<u8>) -> u64 {
        let label = self.label(s);
        match s.outcome {
            Ok(summary) if self.per_op => {
                let plan = &s.workload.fusion_plans[s.scenario.fusion];
                let mut rows = 0;
                for (kernel, cost) in plan.kernels.iter().zip(s.costs) {
                    if cost.count == 0 {
                        continue; // a block repeated 0 times is not in the step
                    }
                    rows += 1;
                    let row = KernelRow {
                        label,
                        kernel: Some(KernelName {
                            name: &kernel.name,
                            block: &s.workload.blocks[kernel.block].name,
                            kind: kernel.kind.name(),
                        }),
                        cost: Some(cost),
                        step_time_s: summary.step_time_s,
                        error: "",
                    };
                    self.line(out, &row);
                }
                rows
            }
            Err(error) if self.per_op => {
                self.line(out, &KernelRow::error(label, error));
                1
            }
            outcome => {
                let row = SummaryRow {
                    label,
                    outcome,
                    request: s.request,
                };
                self.line(out, &row);
                1
            }
        }
    }
}
