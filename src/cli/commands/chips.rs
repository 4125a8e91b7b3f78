//! `chips`: the chips it knows, their peaks per data type and their ridge points.

use anyhow::Result;
use clap::Args;

use crate::cli::flags::OutputArgs;
use crate::cli::output::{self, emit, Inputs};
use crate::core::chip::{Announced, Chip};
use crate::export as exporter;

#[derive(Args)]
pub(crate) struct ChipsArgs {
    /// Chips to list (built-in names or YAML files); all built-ins when omitted
    chips: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// `chips`: the chips named, or every built-in one, announced ones marked as such.
pub(crate) fn run(args: ChipsArgs) -> Result<()> {
    let names = &args.chips;
    let mut inputs = Inputs::default();
    inputs.named(names);
    let plan = output::plan(args.output.out.as_deref(), &inputs)?;
    let all = ["all".to_owned()];
    // The catalogue lists the announced chips too, marked as such.
    let chips = Chip::load_selected(
        if names.is_empty() { &all } else { names },
        Announced::Include,
    )?;
    let mut buffer = Vec::new();
    let format = &args.output.format;
    exporter::write_chips(&mut buffer, &chips, format.into(), &format.shape()?)?;
    emit(plan, &buffer)
}
