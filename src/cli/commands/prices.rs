//! `prices`: the cloud price books the built-in chips are priced on, with their dates.

use anyhow::Result;
use clap::Args;

use crate::cli::flags::OutputArgs;
use crate::cli::output::{self, emit, Inputs};
use crate::core::chip::{Announced, Chip};
use crate::core::cost::books::cloud_books;
use crate::export as exporter;

#[derive(Args)]
pub(crate) struct PricesArgs {
    /// Chips whose books to list (built-in names or YAML files); every built-in when omitted
    chips: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// `prices`: each price basis, its date, the chips it prices and those it lists without one.
pub(crate) fn run(args: PricesArgs) -> Result<()> {
    let names = &args.chips;
    let mut inputs = Inputs::default();
    inputs.named(names);
    let plan = output::plan(args.output.out.as_deref(), &inputs)?;
    let all = ["all".to_owned()];
    let chips = Chip::load_selected(
        if names.is_empty() { &all } else { names },
        Announced::Include,
    )?;
    let mut buffer = Vec::new();
    exporter::write_prices(
        &mut buffer,
        &cloud_books(&chips),
        (&args.output.format).into(),
    )?;
    emit(plan, &buffer)
}
