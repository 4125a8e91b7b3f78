//! `--format`, `--raw-text`, `--columns`, `--digits` and `--out`: what a command's output
//! looks like (`export::rows::Shape` and the output format) and where it goes.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::export::rows::{Columns, Shape};
use crate::export::OutputFormat;

#[derive(Args)]
pub(crate) struct OutputArgs {
    #[command(flatten)]
    pub(crate) format: FormatArgs,
    /// Write to FILE instead of stdout (`-` is stdout), whole or not at all; FILE is a
    /// regular file (through its symlinks) or a new name, never one of the command's inputs
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
}

/// The format of a command's output, and how its CSV writes text.
#[derive(Args, Clone)]
pub(crate) struct FormatArgs {
    /// Output format: human-scaled table, or CSV or JSON with units in the column names
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub(crate) format: FormatArg,
    // CSV: text cells as they are, formula-like ones included.
    #[arg(long, help = RAW_TEXT_HELP)]
    pub(crate) raw_text: bool,
    #[command(flatten)]
    pub(crate) shape: ShapeArgs,
}

impl FormatArgs {
    /// The rows' shape (`--columns`, `--digits`) for this format.
    pub(crate) fn shape(&self) -> anyhow::Result<Shape> {
        self.shape.shape(matches!(self.format, FormatArg::Table))
    }
}

/// `--raw-text`'s help, for every command whose CSV has text cells.
pub(crate) const RAW_TEXT_HELP: &str =
    "CSV: write text cells as they are. Without it, a name, id, \
    note or error that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (which a \
    spreadsheet would run as a formula) gets a `'` before it; numbers are never changed, JSON is \
    always raw";

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
    Table,
    Csv,
    Json,
}

impl From<&FormatArgs> for OutputFormat {
    fn from(f: &FormatArgs) -> OutputFormat {
        match (f.format, f.raw_text) {
            (FormatArg::Table, _) => OutputFormat::Table,
            (FormatArg::Csv, false) => OutputFormat::Csv,
            (FormatArg::Csv, true) => OutputFormat::CsvRaw,
            (FormatArg::Json, _) => OutputFormat::Json,
        }
    }
}

/// `--columns` and `--digits`: which columns a command's rows have, and how many significant
/// digits their numbers keep.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct ShapeArgs {
    /// Only these columns, in this order (comma-separated names from docs/columns.md), or
    /// `brief`: workload, chip, the data types, batch, context, step_time_us, ms_per_token,
    /// tokens_per_s, fits, max_batch, usd_per_million_tokens, mfu (those the rows have)
    #[arg(long, value_name = "LIST|brief", value_parser = parse_columns)]
    pub(crate) columns: Option<Columns>,
    /// Significant digits of numbers that are not whole (whole ones, such as a batch or a
    /// byte count, keep every digit); `--columns brief` implies 4, a table of columns too
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=17))]
    pub(crate) digits: Option<u8>,
}

impl ShapeArgs {
    /// The shape asked for; `table` says whether the output is the human table, whose
    /// numbers have their own human units and take `--digits` only with `--columns`.
    pub(crate) fn shape(&self, table: bool) -> anyhow::Result<Shape> {
        if table && self.columns.is_none() && self.digits.is_some() {
            anyhow::bail!(
                "--digits shapes the columns of --columns, or CSV and JSON; the table shows human \
                 units (add --columns brief, or --format csv)"
            );
        }
        Ok(Shape {
            columns: self.columns.clone().unwrap_or_default(),
            digits: self.digits,
        })
    }
}

fn parse_columns(text: &str) -> Result<Columns, String> {
    if text.trim() == "brief" {
        return Ok(Columns::Brief);
    }
    let names: Vec<String> = text.split(',').map(|n| n.trim().to_owned()).collect();
    if names.iter().any(String::is_empty) {
        return Err(format!(
            "`{text}`: expected comma-separated column names (e.g. chip,batch,tokens_per_s) or `brief`"
        ));
    }
    Ok(Columns::List(names))
}
