//! The merged scenario as a YAML file: every value the command priced with, one key a line,
//! text quoted, so that `--scenario` reads it back to the same values; and the keys the flag
//! groups several commands share write into it.

use std::fmt::Write as _;

use crate::base::format::Format;
use crate::base::types::TypeKey;
use crate::cli::flags::{CostArgs, ImageArgs, ScenarioArgs};
use crate::core::cost::CostView;
use crate::core::scenario::Mode;

/// A value of the file.
pub(crate) enum Node {
    Text(String),
    Number(f64),
    Bool(bool),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// A value as a flag writes it: a number where it is one, else text.
    pub(crate) fn scalar(text: &str) -> Node {
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() && format!("{x}") == text => Node::Number(x),
            _ => Node::Text(text.to_owned()),
        }
    }

    /// One value, or a list of several.
    pub(crate) fn one_or_list(mut values: Vec<Node>) -> Node {
        match values.len() {
            1 => values.remove(0),
            _ => Node::List(values),
        }
    }

    /// A map from `(key, value)` pairs in order, a key given twice kept where it was last
    /// given (as a later flag wins).
    pub(crate) fn last_wins(pairs: Vec<(String, Node)>) -> Node {
        let mut kept: Vec<(String, Node)> = Vec::new();
        for (key, value) in pairs {
            kept.retain(|(k, _)| *k != key);
            kept.push((key, value));
        }
        Node::Map(kept)
    }
}

/// The keys of a scenario file, in order.
#[derive(Default)]
pub(crate) struct Doc {
    keys: Vec<(String, Node)>,
    /// Why the scenario cannot be written as a file, if it cannot.
    refused: Option<&'static str>,
}

impl Doc {
    pub(crate) fn push(&mut self, key: &str, node: Node) {
        self.keys.push((key.to_owned(), node));
    }

    /// Marks the scenario as one no file can hold, saying why.
    pub(crate) fn refuse(&mut self, why: &'static str) {
        self.refused = Some(why);
    }

    /// The file's text.
    pub(crate) fn yaml(&self, command: &str) -> anyhow::Result<String> {
        if let Some(why) = self.refused {
            anyhow::bail!("{why}");
        }
        let mut text = format!(
            "# A stepcost scenario, saved by `stepcost {command}`: `--scenario FILE` reads it \
             back;\n# flags given with it override its keys.\n"
        );
        for (key, node) in &self.keys {
            let _ = writeln!(text, "{}: {}", quoted_key(key), flow(node));
        }
        Ok(text)
    }
}

/// A value in YAML's flow style; text in double quotes, escaped as JSON (which YAML reads).
fn flow(node: &Node) -> String {
    match node {
        Node::Text(t) => quoted_key(t),
        Node::Number(x) => format!("{x}"),
        Node::Bool(b) => format!("{b}"),
        Node::List(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Node::Map(pairs) => {
            let pairs: Vec<String> = (pairs.iter())
                .map(|(k, v)| format!("{}: {}", quoted_key(k), flow(v)))
                .collect();
            format!("{{{}}}", pairs.join(", "))
        }
    }
}

/// A word as it is when it is a plain name (`batch`, `experts.weight`, `llama-3.1-70b`) that
/// YAML reads as text, else quoted.
fn quoted_key(key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !matches!(
            key.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    match plain {
        true => key.to_owned(),
        false => serde_json::Value::from(key).to_string(),
    }
}

/// Texts as one value, or a list of several.
pub(crate) fn texts(values: &[String]) -> Node {
    Node::one_or_list(values.iter().map(|v| Node::Text(v.clone())).collect())
}

pub(crate) fn number_pairs(sets: &[(String, f64)]) -> Vec<(String, Node)> {
    (sets.iter())
        .map(|(name, v)| (name.clone(), Node::Number(*v)))
        .collect()
}

/// `sets`, `types`, `fusion`, `engine`, `mode`, `overlap_comm`, `memory_utilization` of one
/// scenario.
pub(crate) fn scenario_keys(doc: &mut Doc, s: &ScenarioArgs) {
    doc.push("sets", Node::last_wins(number_pairs(&s.sets)));
    let types = (s.dtypes.iter())
        .map(|(key, format)| (key.name(), Node::Text(format.to_string())))
        .collect();
    doc.push("types", Node::last_wins(types));
    if let Some(fusion) = &s.fusion {
        doc.push("fusion", Node::Text(fusion.clone()));
    }
    if let Some(engine) = &s.engine {
        doc.push("engine", Node::Text(engine.clone()));
    }
    doc.push("mode", Node::Text(Mode::from(s.mode).name().to_owned()));
    if s.overlap_comm {
        doc.push("overlap_comm", Node::Bool(true));
    }
    if let Some(u) = s.memory_utilization {
        doc.push("memory_utilization", Node::Number(u));
    }
}

/// `types` as lists of formats (`sweep`'s and `plan`'s).
pub(crate) fn type_lists_key(doc: &mut Doc, dtypes: &[(TypeKey, Vec<Format>)]) {
    let types = (dtypes.iter())
        .map(|(key, formats)| {
            let formats = formats.iter().map(|f| Node::Text(f.to_string())).collect();
            (key.name(), Node::one_or_list(formats))
        })
        .collect();
    doc.push("types", Node::last_wins(types));
}

pub(crate) fn request_key(doc: &mut Doc, request: Option<(u64, u64)>) {
    if let Some((input, output)) = request {
        let pairs = vec![
            ("in".to_owned(), Node::Number(input as f64)),
            ("out".to_owned(), Node::Number(output as f64)),
        ];
        doc.push("request", Node::Map(pairs));
    }
}

/// `images` and `image_tokens`, where given.
pub(crate) fn image_keys(doc: &mut Doc, images: &ImageArgs) {
    if let Some(n) = images.images {
        doc.push("images", Node::Number(n as f64));
    }
    if let Some(t) = images.image_tokens {
        doc.push("image_tokens", Node::Number(t as f64));
    }
}

/// `cost` and `prices`. Prices from a book and from `--price` together are more than the
/// file's one `prices` key holds: refused, rather than one of them dropped.
pub(crate) fn cost_keys(doc: &mut Doc, cost: &CostArgs) {
    let view = CostView::from(cost.view).name();
    let pairs = vec![
        ("view".to_owned(), Node::Text(view.to_owned())),
        ("years".to_owned(), Node::Number(cost.years)),
        ("pue".to_owned(), Node::Number(cost.pue)),
        ("usd_per_kwh".to_owned(), Node::Number(cost.usd_per_kwh)),
        (
            "rate_of_capital".to_owned(),
            Node::Number(cost.rate_of_capital),
        ),
        (
            "usd_per_kw_month".to_owned(),
            Node::Number(cost.usd_per_kw_month),
        ),
        (
            "tco_utilization".to_owned(),
            Node::Number(cost.tco_utilization),
        ),
        (
            "network_usd_per_gbps".to_owned(),
            Node::Number(cost.network_usd_per_gbps),
        ),
    ];
    let mut pairs = pairs;
    if let Some(w) = cost.power_cap {
        pairs.push(("power_cap".to_owned(), Node::Number(w)));
    }
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
