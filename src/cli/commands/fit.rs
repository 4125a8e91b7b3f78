//! `fit`: a chip's expected-mode constants fitted to measured cases, written as an
//! `expected:` section; with `--new-chip`, a whole chip file for a machine no built-in
//! describes, its peaks the cases' own.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;

use crate::base::source::{FileKind, Source};
use crate::cli::case_file;
use crate::cli::output::{self, emit};
use crate::core::chip::Chip;
use crate::export::atomic::Target;
use crate::export::fit;
use crate::study::fit::new_chip::{self, Device};
use crate::study::fit::{fit_chip, shipped_family};

/// `stepcost fit`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct FitArgs {
    /// Case file (CSV), as `validate` reads it
    cases: PathBuf,
    /// The chip to fit: a built-in name or a chip file; its cases are those naming it
    #[arg(
        long,
        required_unless_present = "new_chip",
        conflicts_with = "new_chip"
    )]
    chip: Option<String>,
    /// A chip no file describes yet (the id `stepcost probe` gave the device): its cases'
    /// own peaks (largest GEMM rate per type, fastest copy) and the `# probe-device:` line's
    /// memory make its file, whose `expected:` section is then fitted; `--out` gets the whole
    /// chip file (write it as NAME.yaml beside the case file, and `validate` finds it)
    #[arg(long, value_name = "NAME", conflicts_with = "family")]
    new_chip: Option<String>,
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
    let (cases, family, out) = (
        args.cases.as_path(),
        args.family.as_deref(),
        args.out.as_path(),
    );
    let (source, file) = case_file::read(cases, false)?;
    let mut inputs = case_file::inputs(cases, &file);
    let target = Target::from_out(Some(out));
    let name = cases.display().to_string();
    let (chip, head) = match (&args.new_chip, &args.chip) {
        (Some(new), _) => {
            let device = Device::from_case_file(&source.text);
            let (head, chip) = new_chip::start_chip(new, &file.cases, device.as_ref(), &name)?;
            (chip, Some(head))
        }
        (None, Some(chip_name)) => {
            inputs.named(&[chip_name.as_str()]);
            let chip = Chip::load(&Source::resolve(chip_name, FileKind::Chip)?)?;
            (chip, None)
        }
        (None, None) => anyhow::bail!("--chip or --new-chip is needed"),
    };
    let plan = output::plan_all(vec![target.clone()], &inputs)?;
    let family = match family {
        Some("auto") => shipped_family(&file.cases, cases, &chip),
        other => other.map(str::to_owned),
    };
    let fitted = fit_chip(file.cases, cases, chip, family.as_deref())?;
    let mut report = Vec::new();
    fit::write_fit(&mut report, &fitted, &name)?;
    let fragment = fit::fragment(&fitted, &name);
    emit(plan, (head.unwrap_or_default() + &fragment).as_bytes())?;
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
