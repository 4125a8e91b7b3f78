//! A scenario file (`--scenario FILE`): the choices of one scenario, or of a sweep's grid,
//! in YAML, so that a question can be asked again, shared and changed in one place.
//!
//! ```yaml
//! workload: llama-3.1-70b
//! chips: [h200, b200]          # or one: `chips: h200`
//! sets: {batch: 32}            # a sweep takes lists and ranges: `batch: 1..=256:x2`
//! chip_sets: {memory.bandwidth: [4.8TB/s, 8TB/s]}   # a sweep's what-if chips
//! types: {weight: fp8}         # a sweep takes lists: `weight: [bf16, fp8]`
//! fusion: flash
//! engine: vllm                 # plan, serving and a sweep take lists: `[vllm, sglang]`
//! mode: expected
//! overlap_comm: false
//! context: 4096                # the same as `sets: {context: 4096}`
//! request: {in: 1000, out: 200}
//! images: 2                    # images per request (`--images`), a multimodal model's
//! image_tokens: 144            # and the prompt tokens of each (`--image-tokens`)
//! memory_utilization: 0.9
//! cost: {view: tco, years: 4, pue: 1.3, usd_per_kwh: 0.10, rate_of_capital: 0.10,
//!        usd_per_kw_month: 195.94, tco_utilization: 0.8, network_usd_per_gbps: 10.62,
//!        power_cap: 500W}
//! prices: {h200: 3.10}         # USD per chip-hour, or the path of a price book
//! ```
//!
//! This module reads the file's shape (unknown keys are errors with the closest name) and
//! keeps each value as the text its command-line flag takes, with the place it came from; the
//! command line gives the values their meaning, with the flags' own parsers, and reports a bad
//! value at its line here.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::base::diagnostic::{Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::source::Source;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    workload: Option<Spanned<Scalar>>,
    chips: Option<Spanned<Values>>,
    sets: Option<IndexMap<String, Spanned<Values>>>,
    chip_sets: Option<IndexMap<String, Spanned<Values>>>,
    types: Option<IndexMap<String, Spanned<Values>>>,
    fusion: Option<Spanned<Values>>,
    engine: Option<Spanned<Values>>,
    mode: Option<Spanned<Scalar>>,
    overlap_comm: Option<bool>,
    context: Option<Spanned<Values>>,
    request: Option<Spanned<RequestRepr>>,
    images: Option<Spanned<Scalar>>,
    image_tokens: Option<Spanned<Scalar>>,
    memory_utilization: Option<Spanned<Scalar>>,
    cost: Option<CostRepr>,
    prices: Option<Spanned<PricesRepr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestRepr {
    #[serde(rename = "in")]
    input: Scalar,
    out: Scalar,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CostRepr {
    view: Option<Spanned<Scalar>>,
    years: Option<Spanned<Scalar>>,
    pue: Option<Spanned<Scalar>>,
    usd_per_kwh: Option<Spanned<Scalar>>,
    rate_of_capital: Option<Spanned<Scalar>>,
    usd_per_kw_month: Option<Spanned<Scalar>>,
    tco_utilization: Option<Spanned<Scalar>>,
    network_usd_per_gbps: Option<Spanned<Scalar>>,
    power_cap: Option<Spanned<Scalar>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PricesRepr {
    File(String),
    Quotes(IndexMap<String, Scalar>),
}

/// One value or a list of them.
#[derive(Deserialize)]
#[serde(untagged)]
enum Values {
    Many(Vec<Scalar>),
    One(Scalar),
}

/// A number or a word, kept as text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Number(f64),
    Text(String),
}

impl Scalar {
    /// The text a flag would take: a number as Rust writes it back exactly (`32`, `0.9`).
    fn text(&self) -> String {
        match self {
            Scalar::Number(x) => format!("{x}"),
            Scalar::Text(t) => t.trim().to_owned(),
        }
    }
}

impl Values {
    fn texts(&self) -> Vec<String> {
        match self {
            Values::Many(list) => list.iter().map(Scalar::text).collect(),
            Values::One(one) => vec![one.text()],
        }
    }
}

/// A value of the file and where it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry<T> {
    pub value: T,
    pub origin: Origin,
}

/// The `cost` keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CostEntries {
    pub view: Option<Entry<String>>,
    pub years: Option<Entry<String>>,
    pub pue: Option<Entry<String>>,
    pub usd_per_kwh: Option<Entry<String>>,
    pub rate_of_capital: Option<Entry<String>>,
    pub usd_per_kw_month: Option<Entry<String>>,
    pub tco_utilization: Option<Entry<String>>,
    pub network_usd_per_gbps: Option<Entry<String>>,
    /// A board power limit per accelerator, as `--power-cap` takes it (`500W`).
    pub power_cap: Option<Entry<String>>,
}

/// The `prices` key: a price book's path (relative to the scenario file's folder), or
/// quotes per chip-hour by chip.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Prices {
    File(PathBuf),
    Quotes(Vec<(String, String)>),
}

/// A scenario file read: each key's values as text, in the file's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScenarioFile {
    source: Source,
    pub workload: Option<Entry<String>>,
    pub chips: Option<Entry<Vec<String>>>,
    /// Params and their values; the `context` key is here as `context`.
    pub sets: Vec<(String, Entry<Vec<String>>)>,
    /// A sweep's what-if chip fields (`memory.bandwidth`) and their values, with units.
    pub chip_sets: Vec<(String, Entry<Vec<String>>)>,
    /// Type keys (`weight`, `experts.weight`, `kv`) and their formats.
    pub types: Vec<(String, Entry<Vec<String>>)>,
    pub fusion: Option<Entry<Vec<String>>>,
    /// The serving engines (`--engine`), as ids or engine files' paths.
    pub engine: Option<Entry<Vec<String>>>,
    pub mode: Option<Entry<String>>,
    /// Whether collectives overlap the kernel before them (`--overlap-comm`).
    pub overlap_comm: Option<bool>,
    /// `in=I,out=O`, as `--request` takes it.
    pub request: Option<Entry<String>>,
    /// Images per request (`--images`).
    pub images: Option<Entry<String>>,
    /// Prompt tokens per image (`--image-tokens`).
    pub image_tokens: Option<Entry<String>>,
    pub memory_utilization: Option<Entry<String>>,
    pub cost: CostEntries,
    pub prices: Option<Entry<Prices>>,
}

impl ScenarioFile {
    /// Reads the file's keys; a key it does not know, or a value of the wrong shape, is an
    /// error at its line.
    pub(crate) fn load(source: Source) -> Result<ScenarioFile, Error> {
        let file: FileRepr = source.parse().map_err(Error::Invalid)?;
        let entry = |field: &str, v: &Spanned<Scalar>| Entry {
            value: v.value.text(),
            origin: Origin::of(field, v),
        };
        let list = |field: &str, v: &Spanned<Values>| Entry {
            value: v.value.texts(),
            origin: Origin::of(field, v),
        };
        let map = |key: &str, m: &Option<IndexMap<String, Spanned<Values>>>| {
            (m.iter().flatten())
                .map(|(name, v)| (name.clone(), list(&format!("{key}.{name}"), v)))
                .collect::<Vec<_>>()
        };
        let mut sets = map("sets", &file.sets);
        if let Some(context) = &file.context {
            if let Some((_, twice)) = sets.iter().find(|(name, _)| name == "context") {
                let message = "the context is given twice: as `context` and as `sets.context`";
                return Err(problem(&source, &twice.origin, message));
            }
            sets.push(("context".to_owned(), list("context", context)));
        }
        let cost = file.cost.as_ref();
        let cost_entry = |name: &str, pick: fn(&CostRepr) -> &Option<Spanned<Scalar>>| {
            let value = cost.and_then(|c| pick(c).as_ref())?;
            Some(entry(&format!("cost.{name}"), value))
        };
        let prices = file.prices.as_ref().map(|p| Entry {
            value: match &p.value {
                PricesRepr::File(path) => Prices::File(beside(&source, path)),
                PricesRepr::Quotes(quotes) => {
                    Prices::Quotes(quotes.iter().map(|(c, v)| (c.clone(), v.text())).collect())
                }
            },
            origin: Origin::of("prices", p),
        });
        Ok(ScenarioFile {
            workload: file.workload.as_ref().map(|v| entry("workload", v)),
            chips: file.chips.as_ref().map(|v| list("chips", v)),
            chip_sets: map("chip_sets", &file.chip_sets),
            types: map("types", &file.types),
            fusion: file.fusion.as_ref().map(|v| list("fusion", v)),
            engine: file.engine.as_ref().map(|v| list("engine", v)),
            mode: file.mode.as_ref().map(|v| entry("mode", v)),
            overlap_comm: file.overlap_comm,
            request: file.request.as_ref().map(|r| Entry {
                value: format!("in={},out={}", r.value.input.text(), r.value.out.text()),
                origin: Origin::of("request", r),
            }),
            images: file.images.as_ref().map(|v| entry("images", v)),
            image_tokens: file.image_tokens.as_ref().map(|v| entry("image_tokens", v)),
            memory_utilization: (file.memory_utilization.as_ref())
                .map(|v| entry("memory_utilization", v)),
            cost: CostEntries {
                view: cost_entry("view", |c| &c.view),
                years: cost_entry("years", |c| &c.years),
                pue: cost_entry("pue", |c| &c.pue),
                usd_per_kwh: cost_entry("usd_per_kwh", |c| &c.usd_per_kwh),
                rate_of_capital: cost_entry("rate_of_capital", |c| &c.rate_of_capital),
                usd_per_kw_month: cost_entry("usd_per_kw_month", |c| &c.usd_per_kw_month),
                tco_utilization: cost_entry("tco_utilization", |c| &c.tco_utilization),
                network_usd_per_gbps: cost_entry("network_usd_per_gbps", |c| {
                    &c.network_usd_per_gbps
                }),
                power_cap: cost_entry("power_cap", |c| &c.power_cap),
            },
            prices,
            sets,
            source,
        })
    }

    /// The file as errors name it.
    pub(crate) fn name(&self) -> &str {
        &self.source.name
    }

    /// A problem with the value at `origin`, quoting its line.
    pub(crate) fn problem(&self, origin: &Origin, message: impl Into<String>) -> Error {
        problem(&self.source, origin, message)
    }
}

fn problem(source: &Source, origin: &Origin, message: impl Into<String>) -> Error {
    Error::Invalid(Diagnostics(vec![source.problem(origin, message)]))
}

/// A path the file names, relative to the file's own folder.
fn beside(source: &Source, path: &str) -> PathBuf {
    let folder = Path::new(&source.name).parent().unwrap_or(Path::new(""));
    folder.join(path)
}
