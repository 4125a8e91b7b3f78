//! A scenario file's keys under the flags typed: each key's value read by its flag's own
//! parser (a bad one reported at its line in the file), taken only where no flag gives it.
//! Each command's file merges the keys it takes with these steps.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Result;

use super::save::Doc;
use super::settled::Settled;
use crate::base::diagnostic::did_you_mean;
use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::parse::{number_in, parse_dtype_axis, parse_quote, parse_set};
use crate::base::ranges::{self, Range};
use crate::base::source::Source;
use crate::base::types::{parse_type, TypeKey};
use crate::cli::flags::{
    parse_power_cap, parse_whole, CostArg, CostArgs, Given, ImageArgs, ModeArg, ScenarioArgs,
    ScenarioFileArgs,
};
use crate::core::workload::Workload;
use crate::study::scenario_file::{Entry, Prices, ScenarioFile};
use crate::study::sweep::ChipAxis;

/// A scenario file's keys, taken where no flag says otherwise.
pub(crate) struct Merge<'a> {
    file: Option<&'a ScenarioFile>,
    given: &'a Given,
    /// The command, for messages.
    command: &'static str,
}

impl<'a> Merge<'a> {
    /// Reads `--scenario`'s file, if given.
    pub(crate) fn load(args: &ScenarioFileArgs) -> Result<Option<ScenarioFile>> {
        if args.save_scenario.as_deref() == Some(Path::new("-")) {
            anyhow::bail!("--save-scenario -: a scenario is saved to a file, not to stdout");
        }
        match &args.scenario {
            Some(path) => Ok(Some(ScenarioFile::load(Source::read(path)?)?)),
            None => Ok(None),
        }
    }

    pub(crate) fn new(
        file: Option<&'a ScenarioFile>,
        given: &'a Given,
        command: &'static str,
    ) -> Self {
        Merge {
            file,
            given,
            command,
        }
    }

    /// The file's value for a key, read by its flag's parser; an error is placed at its line.
    pub(crate) fn parse<T>(
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

    pub(crate) fn problem<T>(&self, entry: &Entry<T>, message: String) -> Error {
        match self.file {
            Some(file) => file.problem(&entry.origin, message),
            None => Error::value(message),
        }
    }

    /// What the command takes from the merge, the merged scenario saved as `doc`.
    pub(crate) fn settled(
        &self,
        workload: String,
        args: &ScenarioFileArgs,
        doc: &Doc,
    ) -> Result<Settled> {
        let save = match &args.save_scenario {
            Some(path) => Some((path.clone(), doc.yaml(self.command)?)),
            None => None,
        };
        Ok(Settled::new(workload, args.scenario.clone(), save))
    }

    /// The workload: the positional argument, else the file's `workload`. The file's params
    /// and fusion plans are checked against it here, so that a misspelt one is shown at its
    /// line.
    pub(crate) fn workload(&self, flag: Option<String>) -> Result<String> {
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
    pub(crate) fn chips(&self, flag: &mut Vec<String>, given: bool) -> Result<()> {
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

    /// The keys of one scenario: params, types, fusion plan, mode, overlap, memory.
    pub(crate) fn scenario(&self, args: &mut ScenarioArgs) -> Result<()> {
        self.sets(&mut args.sets)?;
        let mut merged = Vec::new();
        for (key, entry) in self.file.iter().flat_map(|f| &f.types) {
            let one = self.single(entry)?;
            let text = format!("{key}={}", one.value);
            let parsed = self.parse(Some(&one), |_| parse_type(&text))?;
            merged.extend(parsed.filter(|(k, _)| !args.dtypes.iter().any(|(f, _)| f == k)));
        }
        merged.append(&mut args.dtypes);
        args.dtypes = merged;
        self.fusion(&mut args.fusion)?;
        self.engine(&mut args.engine)?;
        self.mode(&mut args.mode)?;
        if !args.overlap_comm {
            args.overlap_comm = self.file.and_then(|f| f.overlap_comm) == Some(true);
        }
        self.memory_utilization(&mut args.memory_utilization)
    }

    /// The file's single-valued params under the `--set`s given: `(name, value)` in order.
    pub(crate) fn sets(&self, flags: &mut Vec<(String, f64)>) -> Result<()> {
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

    pub(crate) fn fusion(&self, flag: &mut Option<String>) -> Result<()> {
        if let (None, Some(entry)) = (&flag, self.file.and_then(|f| f.fusion.as_ref())) {
            *flag = Some(self.single(entry)?.value);
        }
        Ok(())
    }

    /// One engine: `--engine` when given, else the file's `engine`.
    pub(crate) fn engine(&self, flag: &mut Option<String>) -> Result<()> {
        if let (None, Some(entry)) = (&flag, self.file.and_then(|f| f.engine.as_ref())) {
            *flag = Some(self.single(entry)?.value);
        }
        Ok(())
    }

    /// A list of engines: `--engine` when given, else the file's `engine` (one or a list).
    pub(crate) fn engines(&self, flag: &mut Vec<String>) {
        if let (true, Some(entry)) = (flag.is_empty(), self.file.and_then(|f| f.engine.as_ref())) {
            *flag = entry.value.clone();
        }
    }

    /// The mode: `--mode` when typed, else the file's `mode`.
    pub(crate) fn mode(&self, flag: &mut ModeArg) -> Result<()> {
        if self.given.has("mode") {
            return Ok(());
        }
        let entry = self.file.and_then(|f| f.mode.as_ref());
        if let Some(mode) = self.parse(entry, |t| enum_value::<ModeArg>(t, "mode"))? {
            *flag = mode;
        }
        Ok(())
    }

    pub(crate) fn memory_utilization(&self, flag: &mut Option<f64>) -> Result<()> {
        if flag.is_none() {
            let entry = self.file.and_then(|f| f.memory_utilization.as_ref());
            *flag = self.parse(entry, |t| number_in(t, &ranges::MEMORY_UTILIZATION))?;
        }
        Ok(())
    }

    /// The file's `images` and `image_tokens` under `--images` and `--image-tokens`.
    pub(crate) fn images(&self, args: &mut ImageArgs) -> Result<()> {
        let file = |pick: fn(&ScenarioFile) -> &Option<Entry<String>>| {
            self.file.and_then(|f| pick(f).as_ref())
        };
        if args.images.is_none() {
            args.images = self.parse(file(|f| &f.images), parse_whole)?;
        }
        if args.image_tokens.is_none() {
            args.image_tokens = self.parse(file(|f| &f.image_tokens), parse_whole)?;
        }
        if let (None, Some(entry)) = (args.images, file(|f| &f.image_tokens)) {
            let message = "`image_tokens` needs `images`: the images whose tokens it counts";
            return Err(self.problem(entry, message.to_owned()).into());
        }
        Ok(())
    }

    /// The file's what-if chip fields under the `--chip-set`s given, one field at a time.
    pub(crate) fn chip_sets(&self, flags: &mut Vec<ChipAxis>) -> Result<()> {
        let mut merged = Vec::new();
        for (field, entry) in self.file.iter().flat_map(|f| &f.chip_sets) {
            let text = format!("{field}={}", entry.value.join(","));
            let parsed = self.parse(Some(&joined(entry)), |_| ChipAxis::parse(&text))?;
            let given = |axis: &ChipAxis| flags.iter().any(|f| f.field() == axis.field());
            merged.extend(parsed.filter(|axis| !given(axis)));
        }
        merged.append(flags);
        *flags = merged;
        Ok(())
    }

    /// The file's types as lists (`weight: [bf16, fp8]`) under the `--dtype`s given.
    pub(crate) fn type_lists(&self, flags: &mut Vec<(TypeKey, Vec<Format>)>) -> Result<()> {
        let mut merged = Vec::new();
        for (key, entry) in self.file.iter().flat_map(|f| &f.types) {
            let text = format!("{key}={}", entry.value.join(","));
            let parsed = self.parse(Some(&joined(entry)), |_| parse_dtype_axis(&text))?;
            merged.extend(parsed.filter(|(k, _)| !flags.iter().any(|(f, _)| f == k)));
        }
        merged.append(flags);
        *flags = merged;
        Ok(())
    }

    /// The cost view, its assumptions and the prices, each where no flag gives it.
    pub(crate) fn cost(&self, cost: &mut CostArgs) -> Result<()> {
        let Some(file) = self.file else {
            return Ok(());
        };
        let c = &file.cost;
        if !self.given.has("view") {
            if let Some(view) = self.parse(c.view.as_ref(), |t| enum_value::<CostArg>(t, "view"))? {
                cost.view = view;
            }
        }
        let figures: [(&str, &Option<Entry<String>>, &mut f64, &Range); 7] = [
            ("years", &c.years, &mut cost.years, &ranges::COST_YEARS),
            ("pue", &c.pue, &mut cost.pue, &ranges::COST_PUE),
            (
                "usd_per_kwh",
                &c.usd_per_kwh,
                &mut cost.usd_per_kwh,
                &ranges::COST_USD_PER_KWH,
            ),
            (
                "rate_of_capital",
                &c.rate_of_capital,
                &mut cost.rate_of_capital,
                &ranges::COST_RATE_OF_CAPITAL,
            ),
            (
                "usd_per_kw_month",
                &c.usd_per_kw_month,
                &mut cost.usd_per_kw_month,
                &ranges::COST_USD_PER_KW_MONTH,
            ),
            (
                "tco_utilization",
                &c.tco_utilization,
                &mut cost.tco_utilization,
                &ranges::COST_TCO_UTILIZATION,
            ),
            (
                "network_usd_per_gbps",
                &c.network_usd_per_gbps,
                &mut cost.network_usd_per_gbps,
                &ranges::COST_NETWORK_USD_PER_GBPS,
            ),
        ];
        for (id, entry, value, range) in figures {
            if !self.given.has(id) {
                if let Some(x) = self.parse(entry.as_ref(), |t| number_in(t, range))? {
                    *value = x;
                }
            }
        }
        if !self.given.has("power_cap") {
            if let Some(w) = self.parse(c.power_cap.as_ref(), parse_power_cap)? {
                cost.power_cap = Some(w);
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
    pub(crate) fn unused(&self, keys: &[(&str, bool)]) {
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

/// Whether the scenario file is given and `key` holds of it.
pub(crate) fn has(file: &Option<ScenarioFile>, key: impl Fn(&ScenarioFile) -> bool) -> bool {
    file.as_ref().is_some_and(key)
}

/// A list entry as one text, for a parser that reads comma-separated values.
pub(crate) fn joined(entry: &Entry<Vec<String>>) -> Entry<String> {
    Entry {
        value: entry.value.join(","),
        origin: entry.origin.clone(),
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
