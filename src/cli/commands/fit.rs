//! `fit`: a chip's expected-mode constants fitted to measured cases, written as an
//! `expected:` section.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;

use crate::base::source::{FileKind, Source};
use crate::cli::case_file;
use crate::cli::output::{self, emit};
use crate::core::chip::Chip;
use crate::export::atomic::Target;
use crate::export::fit;
use crate::study::fit::{fit_chip, shipped_family};

/// `stepcost fit`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct FitArgs {
    /// Case file (CSV), as `validate` reads it
    cases: PathBuf,
    /// The chip to fit: a built-in name or a chip file; its cases are those naming it
    #[arg(long)]
    chip: String,
    /// Fit to the cases of every chip of this family (`nvidia-hopper`) too; `auto`: as
    /// `scripts/refit` fits chip files (the chip's family, or the chip alone where its own
    /// cases come from two sources or more)
    #[arg(long)]
    family: Option<String>,
    /// Where the `expected:` section goes (`-` is stdout; the report then goes to stderr);
    /// never one of the command's inputs
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// Fits the chip's constants and writes the fragment to `out`; the report goes to stdout (to
/// stderr when the fragment does).
pub(crate) fn run(args: &FitArgs) -> Result<()> {
    let (cases, chip_name, family, out) = (
        args.cases.as_path(),
        args.chip.as_str(),
        args.family.as_deref(),
        args.out.as_path(),
    );
    let (_, file) = case_file::read(cases, false)?;
    let mut inputs = case_file::inputs(cases, &file);
    inputs.named(&[chip_name]);
    let target = Target::from_out(Some(out));
    let plan = output::plan_all(vec![target.clone()], &inputs)?;
    let chip = Chip::load(&Source::resolve(chip_name, FileKind::Chip)?)?;
    let family = match family {
        Some("auto") => shipped_family(&file.cases, cases, &chip),
        other => other.map(str::to_owned),
    };
    let fitted = fit_chip(file.cases, cases, chip, family.as_deref())?;
    let name = cases.display().to_string();
    let mut report = Vec::new();
    fit::write_fit(&mut report, &fitted, &name)?;
    emit(plan, fit::fragment(&fitted, &name).as_bytes())?;
    if target == Target::Stdout {
        // A closed stderr is no reason to fail: the fragment is written.
        let _ = io::stderr().write_all(&report);
        Ok(())
    } else {
        let mut stdout = io::stdout().lock();
        stdout.write_all(&report)?;
        Ok(stdout.flush()?)
    }
}
