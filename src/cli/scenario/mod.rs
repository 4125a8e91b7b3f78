//! `--scenario FILE` and `--save-scenario FILE`: a scenario file's keys under the flags given
//! on the command line, and the merged scenario written back. A flag given overrides its key
//! (`--set` and `--dtype` one param or type key at a time, `--price` one chip at a time);
//! each value of the file goes through its flag's own parser, and a bad one is reported at
//! its line in the file. Each command merges the keys it takes ([`Merge`]) and saves them
//! ([`save`]); this module holds what comes of the merge ([`Settled`]) and the merge and the
//! pricing of the commands that take one scenario on chips (`compare`, `report`, `plot
//! roofline`).

mod merge;
pub(crate) mod save;
mod settled;

use anyhow::Result;

pub(crate) use merge::{has, joined, Merge};
use save::{cost_keys, scenario_keys, texts, Doc, Node};
pub(crate) use settled::{Saver, Settled};

use crate::base::source::{FileKind, Source};
use crate::cli::flags::{ChipsScenario, Given};
use crate::cli::output;
use crate::core::workload::Workload;
use crate::export::atomic::{OutputPlan, Target};
use crate::study::compare::{compare, Compared};

/// `compare`, `report` and `plot roofline`: chips, one value per key.
pub(crate) fn chips_scenario(
    args: &mut ChipsScenario,
    given: &Given,
    command: &'static str,
) -> Result<Settled> {
    let file = Merge::load(&args.file)?;
    let m = Merge::new(file.as_ref(), given, command);
    let workload = m.workload(args.workload.take())?;
    let given_chips = !args.chip.is_empty();
    m.chips(&mut args.chip, given_chips)?;
    m.scenario(&mut args.scenario)?;
    m.cost(&mut args.cost)?;
    m.unused(&[
        ("request", has(&file, |f| f.request.is_some())),
        ("chip_sets", has(&file, |f| !f.chip_sets.is_empty())),
        ("images", has(&file, |f| f.images.is_some())),
        ("image_tokens", has(&file, |f| f.image_tokens.is_some())),
    ]);
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", texts(&args.chip));
    scenario_keys(&mut doc, &args.scenario);
    cost_keys(&mut doc, &args.cost);
    m.settled(workload, &args.file, &doc)
}

/// Prices the scenario on each chip, once `targets` (and the scenario to save) pass their
/// checks against the files read.
pub(crate) fn price_on_chips(
    args: ChipsScenario,
    settled: Settled,
    targets: Vec<Target>,
) -> Result<(Compared, OutputPlan, Saver)> {
    let source = Source::resolve(&settled.workload, FileKind::Workload)?;
    let inputs = settled.command_inputs(&source, &args.chip, &args.cost);
    let saver = settled.saver(&inputs, &targets)?;
    let plan = output::plan_all(targets, &inputs)?;
    let workload = Workload::load(&source)?;
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let compared = compare(workload, chips, &args.scenario.spec()?)?;
    Ok((compared, plan, saver))
}
