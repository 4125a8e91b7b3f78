//! `--columns` and `--digits`: which columns a command's rows have, and how many significant
//! digits their numbers keep (`export::rows::Shape`).

use clap::Args;

use crate::export::rows::{Columns, Shape};

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
