//! The imported workload's text: a comment saying where it came from, what it read and what
//! it ignored, then the template, its params and the checkpoint's types. Text from the config
//! goes into comments through [`comment_text`] and into the `name` field through
//! [`yaml_quoted`], so that no name or key can end a comment early or add a field, and the
//! name reads back exactly as it was.

use super::quant::Checkpoint;
use crate::base::format::Format;
use crate::base::text::shown_as_is;
use crate::base::types::TypeKey;

/// What the workload file says.
pub(super) struct Draft<'a> {
    pub name: &'a str,
    pub model_type: &'a str,
    pub template: &'a str,
    pub params: &'a [(&'static str, f64)],
    /// The model's position limit, where the config states one.
    pub max_positions: Option<u64>,
    pub checkpoint: &'a Checkpoint,
    /// Fields that change nothing stepcost counts.
    pub ignored: &'a [String],
    /// Fields stepcost does not know.
    pub not_understood: &'a [String],
}

/// Comment lines are wrapped at about this width.
const WIDTH: usize = 96;

impl Draft<'_> {
    pub(super) fn yaml(&self) -> String {
        let mut yaml = format!(
            "# {}: imported from a Hugging Face config.json (model_type `{}`).\n",
            comment_text(self.name),
            comment_text(self.model_type)
        );
        for note in &self.checkpoint.notes {
            let words: Vec<String> = comment_text(note).split(' ').map(str::to_owned).collect();
            wrapped(&mut yaml, "Note: ", &words, "");
        }
        let keys = |keys: &[String]| keys.iter().map(|k| comment_text(k)).collect::<Vec<_>>();
        if !self.ignored.is_empty() {
            wrapped(
                &mut yaml,
                "Ignored (they change nothing stepcost counts): ",
                &keys(self.ignored),
                ",",
            );
        }
        if !self.not_understood.is_empty() {
            wrapped(
                &mut yaml,
                "Not understood (left out of the step): ",
                &keys(self.not_understood),
                ",",
            );
        }
        yaml.push_str(&format!(
            "name: {}\ntemplate: {}\n",
            yaml_quoted(self.name),
            self.template
        ));
        if let Some(n) = self.max_positions {
            yaml.push_str(&format!("max_positions: {n}\n"));
        }
        yaml.push_str("params:\n");
        for (param, value) in self.params {
            yaml.push_str(&format!("  {param}: {value}\n"));
        }
        yaml.push_str(
            "dtypes:                 # the checkpoint's types; a --dtype flag overrides them\n",
        );
        let c = self.checkpoint;
        yaml.push_str(&format!("  weight: {}\n", c.quantised.name()));
        for (group, format) in &c.exceptions {
            yaml.push_str(&format!(
                "  {}: {}\n",
                TypeKey::Group(*group).name(),
                format.name()
            ));
        }
        if let Some(kv) = c.kv.filter(|f| *f != Format::Bf16) {
            yaml.push_str(&format!("  kv: {}\n", kv.name()));
        }
        yaml
    }
}

/// `items` after `lead`, each but the last followed by `sep`, as comment lines of about
/// [`WIDTH`] characters.
fn wrapped(yaml: &mut String, lead: &str, items: &[String], sep: &str) {
    let mut line = format!("# {lead}");
    for (i, item) in items.iter().enumerate() {
        let piece = if i + 1 < items.len() {
            format!("{item}{sep}")
        } else {
            item.clone()
        };
        if line.len() + piece.len() + 1 > WIDTH && line.len() > 2 + lead.len() {
            yaml.push_str(line.trim_end());
            yaml.push('\n');
            line = "#   ".to_owned();
        }
        line.push_str(&piece);
        line.push(' ');
    }
    yaml.push_str(line.trim_end());
    yaml.push('\n');
}

/// `text` for a YAML comment: `\`, and every character [`yaml_quoted`] would escape (controls,
/// line and paragraph separators, ...) written as its Rust escape (`\\`, `\n`, `\u{2028}`),
/// so the comment is one line whatever the text holds and reads unambiguously.
pub(super) fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' || !shown_as_is(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a YAML double-quoted scalar that reads back as exactly `text`: `"` and `\`
/// escaped, and every character YAML would not keep as it is (controls, the line breaks of
/// YAML 1.1 and Unicode, bidirectional overrides, the byte order mark, noncharacters)
/// written as a `\u` or `\U` escape. Printable text is written as it is, so the name of an
/// ordinary model is the same as its JSON string.
pub(super) fn yaml_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if shown_as_is(c) => out.push(c),
            c if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}
