//! `workloads`: the built-in workloads, models with their parameters, layers, hidden width
//! and checkpoint types, then the kernel microbenchmarks.

use anyhow::Result;
use clap::Args;

use crate::cli::flags::OutputArgs;
use crate::cli::output::{self, emit, Inputs};
use crate::export;
use crate::study::models;

#[derive(Args)]
pub(crate) struct WorkloadsArgs {
    #[command(flatten)]
    output: OutputArgs,
}

/// `workloads`: the built-in workloads, models first.
pub(crate) fn run(args: WorkloadsArgs) -> Result<()> {
    let output = args.output;
    let plan = output::plan(output.out.as_deref(), &Inputs::default())?;
    let list = models::builtin_workloads()?;
    let mut buffer = Vec::new();
    let format = &output.format;
    export::write_workloads(&mut buffer, &list, format.into(), &format.shape()?)?;
    emit(plan, &buffer)
}
