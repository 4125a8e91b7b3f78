//! `engines`: the serving software stepcost knows (`engines/*.yaml`), the terms a buyer
//! compares, each with its source in the engine's file.

use anyhow::Result;
use clap::Args;

use crate::cli::flags::OutputArgs;
use crate::cli::output::{self, emit, Inputs};
use crate::core::engine;
use crate::export;

#[derive(Args)]
pub(crate) struct EnginesArgs {
    /// Engines to list (built-in ids such as vllm or vllm@0.7, or YAML files); all built-ins
    /// when omitted
    engines: Vec<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// `engines`: the engines named, or every built-in one.
pub(crate) fn run(args: EnginesArgs) -> Result<()> {
    let mut inputs = Inputs::default();
    inputs.named(&args.engines);
    let plan = output::plan(args.output.out.as_deref(), &inputs)?;
    let engines = if args.engines.is_empty() {
        engine::builtin_ids()
            .map(engine::builtin)
            .collect::<Result<Vec<_>, _>>()?
    } else {
        (args.engines.iter())
            .map(|e| engine::resolve(e))
            .collect::<Result<Vec<_>, _>>()?
    };
    let refs: Vec<&engine::Engine> = engines.iter().map(|e| &**e).collect();
    let mut buffer = Vec::new();
    let format = &args.output.format;
    export::write_engines(&mut buffer, &refs, format.into(), &format.shape()?)?;
    emit(plan, &buffer)
}
