//! `import`: a Hugging Face config.json turned into a workload file.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use crate::base::source::Source;
use crate::cli::output::{self, emit, Inputs};
use crate::core::workload::Workload;
use crate::export::atomic::Target;
use crate::study::import;

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// The config.json
    config: PathBuf,
    /// Write the workload to FILE instead of stdout (`-` is stdout); never the config itself
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `import`: the workload file, checked to load, with notes on the config's keys it left out.
pub(crate) fn run(args: ImportArgs) -> Result<()> {
    let (config, out) = (args.config.as_path(), args.out);
    let mut inputs = Inputs::default();
    inputs.path(config);
    let plan = output::plan(out.as_deref(), &inputs)?;
    let source = Source::read(config)?;
    let imported = import::import(&source.text, &source.name, folder_of(config).as_deref())?;
    // The result must load: a config whose numbers make no graph is caught here.
    let name = match plan.targets() {
        [Target::File(path)] => path.display().to_string(),
        _ => config.display().to_string(),
    };
    Workload::load(&Source::from_text(&name, &imported.yaml))?;
    note_fields(
        &source.name,
        "ignored (they change nothing counted)",
        &imported.ignored,
    );
    note_fields(
        &source.name,
        "not understood, left out of the step",
        &imported.not_understood,
    );
    emit(plan, imported.yaml.as_bytes())
}

/// The name of the folder `config` is in (made absolute first: `config.json` alone is in the
/// current folder), the model's name when its config has no `_name_or_path`.
fn folder_of(config: &Path) -> Option<String> {
    let absolute = std::path::absolute(config).ok()?;
    let name = absolute.parent()?.file_name()?;
    Some(name.to_string_lossy().into_owned())
}

/// A note on stderr listing config keys. Keys come from the config: control characters are
/// shown escaped, never sent to the terminal. A closed stderr is no reason to fail.
fn note_fields(file: &str, what: &str, keys: &[String]) {
    if keys.is_empty() {
        return;
    }
    let keys: Vec<String> = keys.iter().map(|k| k.escape_debug().to_string()).collect();
    let _ = writeln!(
        io::stderr(),
        "note: fields of {} {what}: {}",
        file.escape_debug(),
        keys.join(", ")
    );
}
