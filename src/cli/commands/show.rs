//! `show`: a built-in chip, workload, template or engine file's text as shipped, to copy and edit.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::base::builtin;
use crate::base::diagnostic::did_you_mean;
use crate::cli::output::{self, emit, Inputs};

/// `show`'s arguments.
#[derive(Args)]
pub(crate) struct ShowArgs {
    /// What to print
    #[arg(value_enum)]
    kind: ShowKind,
    /// Its built-in name, e.g. h200, llama-3.1-70b, dense, vllm (a template is also
    /// `workload templates/NAME`)
    name: String,
    /// Write to FILE instead of stdout (`-` is stdout), whole or not at all
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ShowKind {
    /// A chip file of hardware/
    Chip,
    /// A workload file of workloads/
    Workload,
    /// A template of workloads/templates/, which workload files name with `template:`
    Template,
    /// An engine file of engines/ (the serving software), sources in its comments
    Engine,
}

/// `show`: the built-in file's bytes as shipped.
pub(crate) fn run(args: ShowArgs) -> Result<()> {
    let plan = output::plan(args.out.as_deref(), &Inputs::default())?;
    let text = builtin_text(args.kind, &args.name)?;
    emit(plan, text.as_bytes())
}

/// The text of the built-in `name` of `kind`; for a workload, `templates/NAME` is a template.
/// An unknown name is an error naming the closest and every built-in of the kind.
fn builtin_text(kind: ShowKind, name: &str) -> Result<&'static str> {
    let template = name.strip_prefix("templates/");
    let files = match (kind, template) {
        (ShowKind::Chip, _) => builtin::CHIPS,
        (ShowKind::Engine, _) => builtin::ENGINES,
        (ShowKind::Workload, None) => builtin::WORKLOADS,
        (ShowKind::Workload | ShowKind::Template, Some(_)) | (ShowKind::Template, None) => {
            builtin::TEMPLATES
        }
    };
    let id = if matches!(kind, ShowKind::Chip | ShowKind::Engine) {
        name
    } else {
        template.unwrap_or(name)
    };
    if let Some((_, text)) = files.iter().find(|(known, _)| *known == id) {
        return Ok(text);
    }
    let (what, mut known): (&str, Vec<String>) = match kind {
        ShowKind::Chip => ("chip", names(builtin::CHIPS, "")),
        ShowKind::Workload => ("workload", names(builtin::WORKLOADS, "")),
        ShowKind::Template => ("template", names(builtin::TEMPLATES, "")),
        ShowKind::Engine => ("engine", names(builtin::ENGINES, "")),
    };
    // A workload's templates are offered under `templates/`, as `show workload` takes them.
    if kind == ShowKind::Workload {
        known.extend(names(builtin::TEMPLATES, "templates/"));
    }
    anyhow::bail!(
        "no built-in {what} `{name}`{}; built-in {what}s: {}",
        did_you_mean(name, known.iter().map(String::as_str)),
        known.join(", ")
    )
}

fn names(files: &[(&str, &str)], prefix: &str) -> Vec<String> {
    files
        .iter()
        .map(|(id, _)| format!("{prefix}{id}"))
        .collect()
}
