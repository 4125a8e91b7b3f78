//! The rows of `run`, `compare` and `plan` as typed tables: the same row structs their CSV
//! is written from, so a table's cells are the CSV's values.

use std::io;

use super::TypedTable;
use crate::core::timing::StepReport;
use crate::export::rows::{compare_rows, kernel_rows, plan_rows, summary_row, ParamCells, Row};
use crate::study::plan::{PlanEntry, PlanRequest};

impl TypedTable {
    /// A run's summary: the one row of `run --format csv`.
    pub fn of_run(report: &StepReport) -> io::Result<TypedTable> {
        let cells = ParamCells::of(report);
        let row = summary_row(report, &cells);
        TypedTable::from_rows([&row as &dyn Row])
    }

    /// A run's kernels: the rows of `run --per-op --format csv`.
    pub fn of_kernels(report: &StepReport) -> io::Result<TypedTable> {
        let cells = ParamCells::of(report);
        let rows = kernel_rows(report, &cells);
        TypedTable::from_rows(rows.iter().map(|r| r as &dyn Row))
    }

    /// One scenario on several chips: the rows of `compare --format csv`.
    pub fn of_compare(reports: &[StepReport]) -> io::Result<TypedTable> {
        let cells: Vec<ParamCells> = reports.iter().map(ParamCells::of).collect();
        let rows = compare_rows(reports, &cells);
        TypedTable::from_rows(rows.iter().map(|r| r as &dyn Row))
    }

    /// A plan of `workload` (its name): the rows of `plan --format csv`.
    pub fn of_plan(
        workload: &str,
        request: &PlanRequest,
        entries: &[PlanEntry],
    ) -> io::Result<TypedTable> {
        let rows = plan_rows(workload, request, entries);
        TypedTable::from_rows(rows.iter().map(|r| r as &dyn Row))
    }
}
