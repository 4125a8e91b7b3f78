//! `plot`: pictures as SVG, the roofline with a scenario's kernels on it (`plot roofline`)
//! or curves from a sweep's CSV (`plot sweep`).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::base::limits;
use crate::base::source::input::Input;
use crate::cli::flags::{ChipsScenario, Given};
use crate::cli::output::{self, emit, Inputs};
use crate::cli::scenario;
use crate::export::atomic::Target;
use crate::export::svg;

#[derive(Args)]
pub(crate) struct PlotArgs {
    #[command(subcommand)]
    picture: PlotCommand,
}

#[derive(Subcommand)]
enum PlotCommand {
    /// Log-log roofline of each chip (memory slope, compute roofs, ridge points; achievable
    /// roofs dashed in expected mode) with every kernel at its intensity and attained rate,
    /// marker area proportional to its share of the step
    Roofline {
        #[command(flatten)]
        scenario: Box<ChipsScenario>,
        /// Write the SVG to FILE instead of stdout (`-` is stdout), whole or not at all
        #[arg(long, value_name = "FILE.svg")]
        out: Option<PathBuf>,
    },
    /// Line chart of two columns of a sweep CSV, one line per value of --series, titled
    /// with the scenario the plotted rows share
    Sweep {
        /// The CSV written by `stepcost sweep`
        csv: PathBuf,
        /// Column for the horizontal axis, e.g. batch
        #[arg(long)]
        x: String,
        /// Column for the vertical axis, e.g. tokens_per_s
        #[arg(long)]
        y: String,
        /// Columns whose values make separate lines, e.g. chip or chip,weight_dtype (one
        /// line per combination)
        #[arg(long, value_delimiter = ',')]
        series: Vec<String>,
        /// Plot only the rows that pass this filter, e.g. 'fits && context == 4096' (see
        /// the README's "Filters")
        #[arg(long = "where", value_name = "EXPR")]
        filter: Option<String>,
        /// Also draw the rows that do not fit the chip's memory (`fits` false); without it a
        /// curve stops where memory ends
        #[arg(long)]
        include_unfit: bool,
        /// Logarithmic horizontal axis
        #[arg(long)]
        log_x: bool,
        /// Logarithmic vertical axis
        #[arg(long)]
        log_y: bool,
        /// Write this column's value beside each point where it changes along the line
        /// (and at each line's first point), e.g. layout
        #[arg(long, value_name = "COLUMN")]
        label: Option<String>,
        /// Write the SVG to FILE instead of stdout (`-` is stdout), whole or not at all
        #[arg(long, value_name = "FILE.svg")]
        out: Option<PathBuf>,
    },
}

/// `plot`: the picture asked for, as SVG.
pub(crate) fn run(args: PlotArgs, given: &Given) -> Result<()> {
    let (svg, plan) = match args.picture {
        PlotCommand::Roofline { mut scenario, out } => {
            let settled = scenario::chips_scenario(&mut scenario, given, "plot roofline")?;
            let target = Target::from_out(out.as_deref());
            let (priced, plan, saver) = scenario::price_on_chips(*scenario, settled, vec![target])?;
            let svg = svg::roofline(&priced.pairs())?;
            emit(plan, svg.as_bytes())?;
            return saver.commit();
        }
        PlotCommand::Sweep {
            csv,
            x,
            y,
            series,
            filter,
            include_unfit,
            log_x,
            log_y,
            label,
            out,
        } => {
            let mut inputs = Inputs::default();
            inputs.path(&csv);
            let plan = output::plan(out.as_deref(), &inputs)?;
            // streamed: a sweep CSV may be far larger than a YAML file
            let limits = limits::limits().map_err(anyhow::Error::msg)?;
            let input = Input::open(&csv, limits.csv_bytes, "STEPCOST_MAX_CSV_BYTES")?;
            let name = input.name.clone();
            let chart = svg::SweepChart {
                x,
                y,
                series,
                filter,
                include_unfit,
                log_x,
                log_y,
                label,
            };
            (svg::sweep(input, &name, &chart)?, plan)
        }
    };
    emit(plan, svg.as_bytes())
}
