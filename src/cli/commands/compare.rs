//! `compare`: one scenario on several chips side by side, with speeds relative to the first.

use anyhow::Result;
use clap::Args;

use crate::cli::flags::{ChipsScenario, Given, OutputArgs};
use crate::cli::output::{emit, warn_unfit};
use crate::cli::scenario;
use crate::export::atomic::Target;
use crate::export::{self as exporter};

#[derive(Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    scenario: ChipsScenario,
    #[command(flatten)]
    output: OutputArgs,
}

/// `compare`: each chip's report (with its warning where the scenario does not fit), as one
/// table or one set of rows.
pub(crate) fn run(mut args: CompareArgs, given: &Given) -> Result<()> {
    let target = Target::from_out(args.output.out.as_deref());
    let settled = scenario::chips_scenario(&mut args.scenario, given, "compare")?;
    let (compared, plan, saver) = scenario::price_on_chips(args.scenario, settled, vec![target])?;
    let format = (&args.output.format).into();
    let mut buffer = Vec::new();
    for (chip, report) in &compared.reports {
        warn_unfit(
            &mut buffer,
            &compared.workload,
            chip,
            &compared.scenario,
            report,
            format,
        )?;
    }
    let reports = compared.into_reports();
    let shape = args.output.format.shape()?;
    exporter::write_compare_shaped(&mut buffer, &reports, format, &shape)?;
    emit(plan, &buffer)?;
    saver.commit()
}
