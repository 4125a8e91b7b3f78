//! `run`: one scenario on one chip, the step's totals, every kernel with `--per-op`, a
//! request priced with `--request`, and the lever that moves the step most.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use clap::Args;

use crate::base::source::{FileKind, Source};
use crate::cli::flags::{CostArgs, Given, ImageArgs, OutputArgs, ScenarioArgs, ScenarioFileArgs};
use crate::cli::output::{self, emit, warn_unfit, Inputs};
use crate::cli::scenario::save::{cost_keys, image_keys, request_key, scenario_keys, Doc, Node};
use crate::cli::scenario::{has, Merge, Settled};
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::timing::{price, StepReport};
use crate::core::workload::Workload;
use crate::export::atomic::Target;
use crate::export::{self as exporter};
use crate::study::images::{price_with_images, request_with_images};
use crate::study::lever;
use crate::study::validate::parse_request;

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Workload: built-in name or YAML file (or the --scenario file's `workload`)
    #[arg(required_unless_present = "scenario")]
    workload: Option<String>,
    /// Chip: built-in name or YAML file
    #[arg(long, required_unless_present = "scenario")]
    chip: Option<String>,
    #[command(flatten)]
    scenario: ScenarioArgs,
    #[command(flatten)]
    cost: CostArgs,
    /// Also list every kernel (op or fused group)
    #[arg(long)]
    per_op: bool,
    /// Also price a whole request at the scenario's batch: in=I,out=O tokens per sequence
    /// (time to first token, time per output token, end to end, output tokens/s)
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request)]
    request: Option<(u64, u64)>,
    #[command(flatten)]
    images: ImageArgs,
    #[command(flatten)]
    file: ScenarioFileArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// `run`: the report, after a warning where the scenario does not fit, and in a table the
/// next step a lever offers.
pub(crate) fn run(mut args: RunArgs, given: &Given) -> Result<()> {
    let (settled, chip_name) = settle(&mut args, given)?;
    let workload_name = &settled.workload;
    if chip_name.contains(',') && !Path::new(&chip_name).is_file() {
        anyhow::bail!(
            "`run` prices one chip, and --chip {chip_name} names several; price them side by \
             side with `stepcost compare {workload_name} --chip {chip_name}`",
        );
    }
    let chip = Chip::load(&Source::resolve(&chip_name, FileKind::Chip)?)?;
    let source = Source::resolve(workload_name, FileKind::Workload)?;
    let mut inputs = Inputs::default();
    inputs.named(&[&chip_name]);
    inputs.workload(workload_name, &source);
    inputs.optional(args.cost.book());
    settled.inputs(&mut inputs);
    let target = Target::from_out(args.output.out.as_deref());
    let saver = settled.saver(&inputs, std::slice::from_ref(&target))?;
    let plan = output::plan_all(vec![target], &inputs)?;
    let chip = args.cost.apply(vec![chip])?.remove(0);
    let workload = Workload::load(&source)?;
    let spec = args.scenario.spec()?;
    let (scenario, mut report) = match args.images.images() {
        Some(images) => price_with_images(&workload, &chip, &spec, images)?,
        None => {
            let scenario = Scenario::resolve(&workload, &spec)?;
            let report: StepReport = price(&workload, &chip, &scenario)?;
            (scenario, report)
        }
    };
    if let Some(request) = args.request {
        report = request_with_images(report, &workload, &chip, &scenario, request)?;
    }
    let format = (&args.output.format).into();
    let mut buffer = Vec::new();
    warn_unfit(&mut buffer, &workload, &chip, &scenario, &report, format)?;
    let shape = args.output.format.shape()?;
    exporter::write_run_shaped(&mut buffer, &report, args.per_op, format, &shape)?;
    if format == exporter::OutputFormat::Table && report.fits() {
        let levers = lever::levers(&workload, &chip, &scenario, &report)?;
        if let Some(next) = lever::next_step(&levers) {
            writeln!(buffer, "{}", exporter::next_step_line(next))?;
        }
    }
    emit(plan, &buffer)?;
    saver.commit()
}

/// The scenario file's keys under the flags: one chip, one value per key.
fn settle(args: &mut RunArgs, given: &Given) -> Result<(Settled, String)> {
    let file = Merge::load(&args.file)?;
    let m = Merge::new(file.as_ref(), given, "run");
    let workload = m.workload(args.workload.take())?;
    let mut chips: Vec<String> = args.chip.iter().cloned().collect();
    if let (Some(entry), None) = (file.as_ref().and_then(|f| f.chips.as_ref()), &args.chip) {
        if entry.value.len() > 1 {
            let message = "`run` prices one chip; price several side by side with `compare`";
            return Err(m.problem(entry, message.to_owned()).into());
        }
    }
    m.chips(&mut chips, args.chip.is_some())?;
    m.scenario(&mut args.scenario)?;
    m.unused(&[("chip_sets", has(&file, |f| !f.chip_sets.is_empty()))]);
    m.cost(&mut args.cost)?;
    m.images(&mut args.images)?;
    if args.request.is_none() {
        args.request = m.parse(
            file.as_ref().and_then(|f| f.request.as_ref()),
            parse_request,
        )?;
    }
    let chip = chips.join(",");
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", Node::Text(chip.clone()));
    scenario_keys(&mut doc, &args.scenario);
    request_key(&mut doc, args.request);
    image_keys(&mut doc, &args.images);
    cost_keys(&mut doc, &args.cost);
    Ok((m.settled(workload, &args.file, &doc)?, chip))
}
