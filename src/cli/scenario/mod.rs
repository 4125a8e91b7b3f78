//! `--scenario FILE` and `--save-scenario FILE`: a scenario file's keys under the flags given
//! on the command line, and the merged scenario written back. A flag given overrides its key
//! (`--set` and `--dtype` one param or type key at a time, `--price` one chip at a time);
//! each value of the file goes through its flag's own parser, and a bad one is reported at
//! its line in the file.

mod commands;
mod save;

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{ArgMatches, Args};

pub(crate) use commands::{chips_scenario, plan, run, sweep};

use super::args::ModeArg;
use super::cost::{CostArg, CostArgs};
use super::output::Inputs;
use crate::base::diagnostic::did_you_mean;
use crate::base::error::Error;
use crate::base::parse::{number_in, parse_quote, parse_set};
use crate::base::ranges::{self, Range};
use crate::base::source::Source;
use crate::core::workload::Workload;
use crate::export::atomic::{OutputPlan, Target};
use crate::study::scenario_file::{Entry, Prices, ScenarioFile};

/// The flags a person typed, by clap's id (a field's name): a flag with a default counts
/// as given only when typed.
#[derive(Debug, Clone, Default)]
pub struct Given(Vec<String>);

impl Given {
    /// The ids of `matches` whose values came from the command line.
    pub(crate) fn of(matches: &ArgMatches) -> Given {
        let typed = |id: &&clap::Id| {
            matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
        };
        Given(
            matches
                .ids()
                .filter(typed)
                .map(|id| id.to_string())
                .collect(),
        )
    }

    fn has(&self, id: &str) -> bool {
        self.0.iter().any(|g| g == id)
    }
}

/// `--scenario` and `--save-scenario`.
#[derive(Args, Clone, Default)]
pub(crate) struct ScenarioFileArgs {
    /// YAML scenario file: workload, chips, sets, types, fusion, mode, context, request,
    /// memory_utilization, cost, prices (see the README's "Scenario files"); flags given
    /// override its keys, `--set` and `--dtype` one key at a time
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: Option<PathBuf>,
    /// Write the scenario as priced (the file's keys under the flags) to FILE, whole or not
    /// at all, once the command succeeds; `--scenario FILE` reads it back to the same numbers
    #[arg(long, value_name = "FILE")]
    pub(crate) save_scenario: Option<PathBuf>,
}

/// What a command takes from its scenario: the workload's name, the files it read, and the
/// merged scenario to save.
pub(crate) struct Settled {
    pub(crate) workload: String,
    file: Option<PathBuf>,
    save: Option<(PathBuf, String)>,
}

impl Settled {
    /// The scenario file is one of the command's inputs: no output may overwrite it.
    pub(crate) fn inputs(&self, inputs: &mut Inputs) {
        if let Some(path) = &self.file {
            inputs.path(path);
        }
    }

    /// Every file a pricing command reads: the workload (resolved to `source`) and its
    /// template, the chips named by path, the price book, the scenario file.
    pub(crate) fn command_inputs(
        &self,
        source: &Source,
        chips: &[String],
        cost: &CostArgs,
    ) -> Inputs {
        let mut inputs = Inputs::default();
        inputs.workload(&self.workload, source);
        inputs.named(chips);
        cost.inputs(&mut inputs);
        self.inputs(&mut inputs);
        inputs
    }

    /// The saved scenario's output, checked now against the command's inputs and its other
    /// `targets`; written by [`Saver::commit`] once the command has written its own.
    pub(crate) fn saver(&self, inputs: &Inputs, targets: &[Target]) -> Result<Saver> {
        let Some((path, yaml)) = &self.save else {
            return Ok(Saver(None));
        };
        let save = Target::File(path.clone());
        let mut all = vec![save.clone()];
        all.extend(targets.iter().cloned());
        super::output::plan_all(all, inputs)?;
        let plan = OutputPlan::new(vec![save], inputs.paths())?;
        Ok(Saver(Some((plan, yaml.clone()))))
    }
}

/// The saved scenario, to be written when the command has succeeded.
pub(crate) struct Saver(Option<(OutputPlan, String)>);

impl Saver {
    pub(crate) fn commit(self) -> Result<()> {
        match self.0 {
            Some((plan, yaml)) => Ok(plan.commit(&[yaml.as_bytes()])?),
            None => Ok(()),
        }
    }
}

/// A scenario file's keys, taken where no flag says otherwise.
struct Merge<'a> {
    file: Option<&'a ScenarioFile>,
    given: &'a Given,
    /// The command, for messages.
    command: &'static str,
}

impl<'a> Merge<'a> {
    /// Reads `--scenario`'s file, if given.
    fn load(args: &ScenarioFileArgs) -> Result<Option<ScenarioFile>> {
        if args.save_scenario.as_deref() == Some(std::path::Path::new("-")) {
            anyhow::bail!("--save-scenario -: a scenario is saved to a file, not to stdout");
        }
        match &args.scenario {
            Some(path) => Ok(Some(ScenarioFile::load(Source::read(path)?)?)),
            None => Ok(None),
        }
    }

    /// The file's value for a key, read by its flag's parser; an error is placed at its line.
    fn parse<T>(
        &self,
        entry: Option<&Entry<String>>,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, Error> {
        let (Some(file), Some(entry)) = (self.file, entry) else {
            return Ok(None);
        };
        (parse(&entry.value).map(Some)).map_err(|m| file.problem(&entry.origin, m))
    }

    /// The one value of a key the command takes one of.
    fn single(&self, entry: &Entry<Vec<String>>) -> Result<Entry<String>, Error> {
        match entry.value.as_slice() {
            [one] => Ok(Entry {
                value: one.clone(),
                origin: entry.origin.clone(),
            }),
            _ => Err(self.problem(
                entry,
                format!(
                    "`{}` takes one value here, found {}; lists are for `sweep` (and `plan`'s types)",
                    self.command,
                    entry.value.len()
                ),
            )),
        }
    }

    fn problem<T>(&self, entry: &Entry<T>, message: String) -> Error {
        match self.file {
            Some(file) => file.problem(&entry.origin, message),
            None => Error::value(message),
        }
    }

    /// The workload: the positional argument, else the file's `workload`. The file's params
    /// and fusion plans are checked against it here, so that a misspelt one is shown at its
    /// line.
    fn workload(&self, flag: Option<String>) -> Result<String> {
        let file = self.file.and_then(|f| f.workload.as_ref());
        let name = match (flag, file) {
            (Some(name), _) => name,
            (None, Some(entry)) => entry.value.clone(),
            (None, None) => anyhow::bail!(
                "`{}` needs a workload: give WORKLOAD, or `workload:` in the --scenario file",
                self.command
            ),
        };
        let Some(file) = self
            .file
            .filter(|f| !f.sets.is_empty() || f.fusion.is_some())
        else {
            return Ok(name);
        };
        let workload = Workload::named(&name)?;
        let at = |entry: &Entry<_>, e: Error| file.problem(&entry.origin, e.to_string());
        for (param, entry) in &file.sets {
            workload
                .settable_param_index(param)
                .map_err(|e| at(entry, e))?;
        }
        for (plan, entry) in (file.fusion.iter()).flat_map(|e| e.value.iter().map(move |p| (p, e)))
        {
            if plan != "all" {
                workload.fusion_index(plan).map_err(|e| at(entry, e))?;
            }
        }
        Ok(name)
    }

    /// The chips: `--chip` when given, else the file's `chips`.
    fn chips(&self, flag: &mut Vec<String>, given: bool) -> Result<()> {
        if let Some(entry) = self.file.and_then(|f| f.chips.as_ref()).filter(|_| !given) {
            *flag = entry.value.clone();
        }
        if flag.is_empty() {
            anyhow::bail!(
                "`{}` needs chips: give --chip, or `chips:` in the --scenario file",
                self.command
            );
        }
        Ok(())
    }

    /// The file's single-valued params under the `--set`s given: `(name, value)` in order.
    fn sets(&self, flags: &mut Vec<(String, f64)>) -> Result<()> {
        let mut merged = Vec::new();
        for (name, entry) in self.file.iter().flat_map(|f| &f.sets) {
            if flags.iter().any(|(n, _)| n == name) {
                continue;
            }
            let one = self.single(entry)?;
            let text = format!("{name}={}", one.value);
            merged.extend(self.parse(Some(&one), |_| parse_set(&text))?);
        }
        merged.append(flags);
        *flags = merged;
        Ok(())
    }

    /// The mode: `--mode` when typed, else the file's `mode`.
    fn mode(&self, flag: &mut ModeArg) -> Result<()> {
        if self.given.has("mode") {
            return Ok(());
        }
        let entry = self.file.and_then(|f| f.mode.as_ref());
        if let Some(mode) = self.parse(entry, |t| enum_value::<ModeArg>(t, "mode"))? {
            *flag = mode;
        }
        Ok(())
    }

    fn memory_utilization(&self, flag: &mut Option<f64>) -> Result<()> {
        if flag.is_none() {
            let entry = self.file.and_then(|f| f.memory_utilization.as_ref());
            *flag = self.parse(entry, |t| number_in(t, &ranges::MEMORY_UTILIZATION))?;
        }
        Ok(())
    }

    /// The cost view, its assumptions and the prices, each where no flag gives it.
    fn cost(&self, cost: &mut CostArgs) -> Result<()> {
        let Some(file) = self.file else {
            return Ok(());
        };
        let c = &file.cost;
        if !self.given.has("view") {
            if let Some(view) = self.parse(c.view.as_ref(), |t| enum_value::<CostArg>(t, "view"))? {
                cost.view = view;
            }
        }
        let figures: [(&str, &Option<Entry<String>>, &mut f64, &Range); 3] = [
            ("years", &c.years, &mut cost.years, &ranges::COST_YEARS),
            ("pue", &c.pue, &mut cost.pue, &ranges::COST_PUE),
            (
                "usd_per_kwh",
                &c.usd_per_kwh,
                &mut cost.usd_per_kwh,
                &ranges::COST_USD_PER_KWH,
            ),
        ];
        for (id, entry, value, range) in figures {
            if !self.given.has(id) {
                if let Some(x) = self.parse(entry.as_ref(), |t| number_in(t, range))? {
                    *value = x;
                }
            }
        }
        // `--prices FILE` replaces the file's prices; `--price` one chip's.
        match file.prices.as_ref().filter(|_| cost.book.is_none()) {
            Some(Entry {
                value: Prices::File(path),
                ..
            }) => cost.book = Some(path.clone()),
            Some(
                entry @ Entry {
                    value: Prices::Quotes(quotes),
                    ..
                },
            ) => {
                let mut merged = Vec::new();
                for (chip, usd) in quotes {
                    if cost.quotes.iter().any(|(c, _)| c == chip) {
                        continue;
                    }
                    let text = format!("{chip}={usd}");
                    let quote = parse_quote(&text).map_err(|m| self.problem(entry, m))?;
                    merged.push(quote);
                }
                merged.append(&mut cost.quotes);
                cost.quotes = merged;
            }
            None => {}
        }
        Ok(())
    }

    /// A note on stderr naming the file's keys this command has no use for.
    fn unused(&self, keys: &[(&str, bool)]) {
        let Some(file) = self.file else {
            return;
        };
        let unused: Vec<&str> = (keys.iter())
            .filter(|(_, present)| *present)
            .map(|(key, _)| *key)
            .collect();
        if !unused.is_empty() {
            let _ = writeln!(
                io::stderr(),
                "note: {}: `{}` has no use for {}; left out",
                file.name().escape_debug(),
                self.command,
                unused.join(", ")
            );
        }
    }
}

/// A word that names one of `T`'s values, or what the values are.
fn enum_value<T: clap::ValueEnum>(text: &str, key: &str) -> Result<T, String> {
    T::from_str(text, false).map_err(|_| {
        let names: Vec<String> = (T::value_variants().iter())
            .filter_map(|v| v.to_possible_value())
            .map(|v| v.get_name().to_owned())
            .collect();
        format!(
            "unknown {key} `{text}`{}; expected one of {}",
            did_you_mean(text, names.iter().map(String::as_str)),
            names.join(", ")
        )
    })
}
