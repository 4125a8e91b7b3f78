//! The merged scenario as a YAML file: every value the command priced with, one key a line,
//! text quoted, so that `--scenario` reads it back to the same values.

use std::fmt::Write as _;

/// A value of the file.
pub(super) enum Node {
    Text(String),
    Number(f64),
    Bool(bool),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
}

impl Node {
    /// A value as a flag writes it: a number where it is one, else text.
    pub(super) fn scalar(text: &str) -> Node {
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() && format!("{x}") == text => Node::Number(x),
            _ => Node::Text(text.to_owned()),
        }
    }

    /// One value, or a list of several.
    pub(super) fn one_or_list(mut values: Vec<Node>) -> Node {
        match values.len() {
            1 => values.remove(0),
            _ => Node::List(values),
        }
    }

    /// A map from `(key, value)` pairs in order, a key given twice kept where it was last
    /// given (as a later flag wins).
    pub(super) fn last_wins(pairs: Vec<(String, Node)>) -> Node {
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
pub(super) struct Doc {
    keys: Vec<(String, Node)>,
    /// Why the scenario cannot be written as a file, if it cannot.
    refused: Option<&'static str>,
}

impl Doc {
    pub(super) fn push(&mut self, key: &str, node: Node) {
        self.keys.push((key.to_owned(), node));
    }

    /// Marks the scenario as one no file can hold, saying why.
    pub(super) fn refuse(&mut self, why: &'static str) {
        self.refused = Some(why);
    }

    /// The file's text.
    pub(super) fn yaml(&self, command: &str) -> anyhow::Result<String> {
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
