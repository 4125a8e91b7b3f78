//! The output formats a command writes in: a table for people, CSV, or JSON.

use super::rows::CsvText;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Aligned tables with human-scaled units (`1.11 ms`, `403 MB`).
    #[default]
    Table,
    /// Comma-separated values: numbers in the units their column names end with; a text cell
    /// a spreadsheet would run as a formula gets a `'` before it (see `rows::CsvText`).
    Csv,
    /// CSV with every text cell as it is (`--raw-text`).
    CsvRaw,
    /// JSON: numbers in the units their field names end with.
    Json,
}

impl OutputFormat {
    /// How the format writes text cells, for the CSV ones.
    pub(super) fn csv_text(self) -> CsvText {
        match self {
            OutputFormat::CsvRaw => CsvText::Raw,
            _ => CsvText::Neutralised,
        }
    }
}
