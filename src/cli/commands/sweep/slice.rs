//! Which part of a sweep a command writes: a shard of the grid's product order for a job
//! runner's task (`--shard`, `--header`), and the best rows by a column (`--top`, `--by`,
//! `--per`).

use clap::Args;

use crate::export::top::MAX_TOP;
use crate::study::sweep::Shard;

#[derive(Args, Clone, Default)]
pub(crate) struct SliceArgs {
    /// Price only slice I of N contiguous slices of the grid's product order (I from 0 to
    /// N-1, as a job array's index): the N shards' outputs, concatenated in order, are the
    /// whole sweep; --max-scenarios and the progress bar count the shard
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub(crate) shard: Option<Shard>,
    /// Write the CSV header on a shard other than 0 too (only shard 0 writes it by default)
    #[arg(long)]
    pub(crate) header: bool,
    /// Keep only the K best rows by --by (per group of --per), of those --where keeps; with
    /// --shard, the shard's best, to be merged by the reader
    #[arg(long, value_name = "K", requires = "by", value_parser = parse_top)]
    pub(crate) top: Option<u64>,
    /// The numeric column --top ranks by: lowest first, or highest first with a leading `-`
    /// (e.g. --by usd_per_million_tokens, --by -tokens_per_s); ties go to the earlier row
    #[arg(
        long,
        value_name = "[-]COLUMN",
        requires = "top",
        allow_hyphen_values = true
    )]
    pub(crate) by: Option<String>,
    /// Rank within each group of rows that share this column's value (e.g. --per chip); the
    /// groups in the order they first appear
    #[arg(long, value_name = "COLUMN", requires = "top")]
    pub(crate) per: Option<String>,
}

impl SliceArgs {
    /// The shard priced: the whole grid unless `--shard` names one.
    pub(crate) fn shard(&self) -> Shard {
        self.shard.unwrap_or_default()
    }

    /// Whether the CSV header is written: on the first shard, or when asked for.
    pub(crate) fn header(&self) -> bool {
        self.shard().index() == 0 || self.header
    }
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
        .map_err(|e: crate::base::error::Error| e.to_string())
}

fn parse_top(text: &str) -> Result<u64, String> {
    match text.trim().replace('_', "").parse::<u64>() {
        Ok(k) if (1..=MAX_TOP).contains(&k) => Ok(k),
        _ => Err(format!(
            "`{text}`: expected a whole number of rows from 1 to {MAX_TOP}"
        )),
    }
}
