//! Each command's share of a scenario file: the keys it takes, how its flags hold them, and
//! the merged scenario it saves.

use anyhow::Result;

use super::save::{Doc, Node};
use super::{Given, Merge, ScenarioFileArgs, Settled};
use crate::base::format::Format;
use crate::base::parse::{parse_axis, parse_dtype_axis};
use crate::base::types::{parse_type, TypeKey};
use crate::cli::args::{ChipsScenario, CostArgs, PlanArgs, RunArgs, ScenarioArgs, SweepArgs};
use crate::core::cost::CostView;
use crate::core::scenario::Mode;
use crate::study::scenario_file::{Entry, ScenarioFile};
use crate::study::sweep::ChipAxis;
use crate::study::validate::parse_request;

/// `run`: one chip, one value per key.
pub(crate) fn run(args: &mut RunArgs, given: &Given) -> Result<(Settled, String)> {
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
    cost_keys(&mut doc, &args.cost);
    Ok((m.settled(workload, &args.file, &doc)?, chip))
}

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
    ]);
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", texts(&args.chip));
    scenario_keys(&mut doc, &args.scenario);
    cost_keys(&mut doc, &args.cost);
    m.settled(workload, &args.file, &doc)
}

/// `sweep`: chips, and lists and ranges for params, types and fusion plans.
pub(crate) fn sweep(args: &mut SweepArgs, given: &Given) -> Result<Settled> {
    let file = Merge::load(&args.file)?;
    let m = Merge::new(file.as_ref(), given, "sweep");
    let workload = m.workload(args.workload.take())?;
    let given_chips = !args.chip.is_empty();
    m.chips(&mut args.chip, given_chips)?;
    let mut sets = Vec::new();
    for (name, entry) in file.iter().flat_map(|f| &f.sets) {
        if !args.sets.iter().any(|(n, _)| n == name) {
            let text = format!("{name}={}", entry.value.join(","));
            sets.extend(m.parse(Some(&joined(entry)), |_| parse_axis(&text))?);
        }
    }
    sets.append(&mut args.sets);
    args.sets = sets;
    m.chip_sets(&mut args.chip_sets)?;
    m.type_lists(&mut args.dtypes)?;
    if args.fusion.is_empty() {
        if let Some(entry) = file.as_ref().and_then(|f| f.fusion.as_ref()) {
            args.fusion = entry.value.clone();
        }
    }
    m.mode(&mut args.mode)?;
    m.memory_utilization(&mut args.memory_utilization)?;
    if args.request.is_none() {
        args.request = m.parse(
            file.as_ref().and_then(|f| f.request.as_ref()),
            parse_request,
        )?;
    }
    m.cost(&mut args.cost)?;
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", texts(&args.chip));
    let sets = (args.sets.iter())
        .map(|(name, axis)| (name.clone(), Node::scalar(axis.text())))
        .collect();
    doc.push("sets", Node::last_wins(sets));
    if !args.chip_sets.is_empty() {
        let chip_sets = (args.chip_sets.iter())
            .map(|axis| (axis.field().to_string(), Node::scalar(axis.text())))
            .collect();
        doc.push("chip_sets", Node::last_wins(chip_sets));
    }
    type_lists_key(&mut doc, &args.dtypes);
    if !args.fusion.is_empty() {
        doc.push("fusion", texts(&args.fusion));
    }
    doc.push("mode", Node::Text(Mode::from(args.mode).name().to_owned()));
    if let Some(u) = args.memory_utilization {
        doc.push("memory_utilization", Node::Number(u));
    }
    request_key(&mut doc, args.request);
    cost_keys(&mut doc, &args.cost);
    m.settled(workload, &args.file, &doc)
}

/// `plan`: chips (all by default), one value per param, lists of types.
pub(crate) fn plan(args: &mut PlanArgs, given: &Given) -> Result<Settled> {
    let file = Merge::load(&args.file)?;
    let m = Merge::new(file.as_ref(), given, "plan");
    let workload = m.workload(args.workload.take())?;
    m.chips(&mut args.chip, given.has("chip"))?;
    m.sets(&mut args.sets)?;
    m.type_lists(&mut args.dtypes)?;
    m.fusion(&mut args.fusion)?;
    m.mode(&mut args.mode)?;
    m.memory_utilization(&mut args.memory_utilization)?;
    m.cost(&mut args.cost)?;
    m.unused(&[
        ("request", has(&file, |f| f.request.is_some())),
        ("chip_sets", has(&file, |f| !f.chip_sets.is_empty())),
    ]);
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", texts(&args.chip));
    let mut sets = number_pairs(&args.sets);
    if let Some(context) = args.context {
        sets.push(("context".to_owned(), Node::Number(context)));
    }
    doc.push("sets", Node::last_wins(sets));
    type_lists_key(&mut doc, &args.dtypes);
    if let Some(fusion) = &args.fusion {
        doc.push("fusion", Node::Text(fusion.clone()));
    }
    doc.push("mode", Node::Text(Mode::from(args.mode).name().to_owned()));
    if let Some(u) = args.memory_utilization {
        doc.push("memory_utilization", Node::Number(u));
    }
    cost_keys(&mut doc, &args.cost);
    m.settled(workload, &args.file, &doc)
}

impl<'a> Merge<'a> {
    fn new(file: Option<&'a ScenarioFile>, given: &'a Given, command: &'static str) -> Self {
        Merge {
            file,
            given,
            command,
        }
    }

    /// What the command takes from the merge, the merged scenario saved as `doc`.
    fn settled(&self, workload: String, args: &ScenarioFileArgs, doc: &Doc) -> Result<Settled> {
        let save = match &args.save_scenario {
            Some(path) => Some((path.clone(), doc.yaml(self.command)?)),
            None => None,
        };
        Ok(Settled {
            workload,
            file: args.scenario.clone(),
            save,
        })
    }

    /// The keys of one scenario: params, types, fusion plan, mode, overlap, memory.
    fn scenario(&self, args: &mut ScenarioArgs) -> Result<()> {
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
        self.mode(&mut args.mode)?;
        if !args.overlap_comm {
            args.overlap_comm = self.file.and_then(|f| f.overlap_comm) == Some(true);
        }
        self.memory_utilization(&mut args.memory_utilization)
    }

    fn fusion(&self, flag: &mut Option<String>) -> Result<()> {
        if let (None, Some(entry)) = (&flag, self.file.and_then(|f| f.fusion.as_ref())) {
            *flag = Some(self.single(entry)?.value);
        }
        Ok(())
    }

    /// The file's what-if chip fields under the `--chip-set`s given, one field at a time.
    fn chip_sets(&self, flags: &mut Vec<ChipAxis>) -> Result<()> {
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
    fn type_lists(&self, flags: &mut Vec<(TypeKey, Vec<Format>)>) -> Result<()> {
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
}

fn has(file: &Option<ScenarioFile>, key: impl Fn(&ScenarioFile) -> bool) -> bool {
    file.as_ref().is_some_and(key)
}

/// A list entry as one text, for a parser that reads comma-separated values.
fn joined(entry: &Entry<Vec<String>>) -> Entry<String> {
    Entry {
        value: entry.value.join(","),
        origin: entry.origin.clone(),
    }
}

fn texts(values: &[String]) -> Node {
    Node::one_or_list(values.iter().map(|v| Node::Text(v.clone())).collect())
}

fn number_pairs(sets: &[(String, f64)]) -> Vec<(String, Node)> {
    (sets.iter())
        .map(|(name, v)| (name.clone(), Node::Number(*v)))
        .collect()
}

/// `sets`, `types`, `fusion`, `mode`, `overlap_comm`, `memory_utilization` of one scenario.
fn scenario_keys(doc: &mut Doc, s: &ScenarioArgs) {
    doc.push("sets", Node::last_wins(number_pairs(&s.sets)));
    let types = (s.dtypes.iter())
        .map(|(key, format)| (key.name(), Node::Text(format.to_string())))
        .collect();
    doc.push("types", Node::last_wins(types));
    if let Some(fusion) = &s.fusion {
        doc.push("fusion", Node::Text(fusion.clone()));
    }
    doc.push("mode", Node::Text(Mode::from(s.mode).name().to_owned()));
    if s.overlap_comm {
        doc.push("overlap_comm", Node::Bool(true));
    }
    if let Some(u) = s.memory_utilization {
        doc.push("memory_utilization", Node::Number(u));
    }
}

fn type_lists_key(doc: &mut Doc, dtypes: &[(TypeKey, Vec<Format>)]) {
    let types = (dtypes.iter())
        .map(|(key, formats)| {
            let formats = formats.iter().map(|f| Node::Text(f.to_string())).collect();
            (key.name(), Node::one_or_list(formats))
        })
        .collect();
    doc.push("types", Node::last_wins(types));
}

fn request_key(doc: &mut Doc, request: Option<(u64, u64)>) {
    if let Some((input, output)) = request {
        let pairs = vec![
            ("in".to_owned(), Node::Number(input as f64)),
            ("out".to_owned(), Node::Number(output as f64)),
        ];
        doc.push("request", Node::Map(pairs));
    }
}

/// `cost` and `prices`. Prices from a book and from `--price` together are more than the
/// file's one `prices` key holds: refused, rather than one of them dropped.
fn cost_keys(doc: &mut Doc, cost: &CostArgs) {
    let view = CostView::from(cost.view).name();
    let pairs = vec![
        ("view".to_owned(), Node::Text(view.to_owned())),
        ("years".to_owned(), Node::Number(cost.years)),
        ("pue".to_owned(), Node::Number(cost.pue)),
        ("usd_per_kwh".to_owned(), Node::Number(cost.usd_per_kwh)),
    ];
    doc.push("cost", Node::Map(pairs));
    match (&cost.book, cost.quotes.is_empty()) {
        (Some(_), false) => doc.refuse(
            "--save-scenario: the prices come from a price book and from --price; a scenario \
             file's `prices` is one or the other: put the quotes in the book, or give them all \
             with --price",
        ),
        (Some(book), true) => {
            let path = std::path::absolute(book).unwrap_or_else(|_| book.clone());
            doc.push("prices", Node::Text(path.display().to_string()));
        }
        (None, false) => {
            let quotes = (cost.quotes.iter())
                .map(|(chip, usd)| (chip.clone(), Node::Number(*usd)))
                .collect();
            doc.push("prices", Node::last_wins(quotes));
        }
        (None, true) => {}
    }
}
