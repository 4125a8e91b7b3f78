//! `stepcost fit` and `stepcost validate --cross-validate`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::args::{FormatArg, ModeArg, OutputArgs};
use super::case_file;
use super::output::{self, emit};
use crate::base::source::{FileKind, Source};
use crate::core::chip::Chip;
use crate::core::scenario::Mode;
use crate::export::atomic::Target;
use crate::export::{self, fit};
use crate::study::band;
use crate::study::fit::{cross, fit_chip, shipped_family};

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
pub(super) fn fit_command(args: &FitArgs) -> Result<()> {
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

/// `validate --cross-validate`: a table of errors per group, in sample and held out.
pub(super) fn cross_validate_command(
    cases: &Path,
    mode: ModeArg,
    residuals: Option<&Path>,
    output: OutputArgs,
) -> Result<()> {
    if Mode::from(mode) != Mode::Expected {
        anyhow::bail!("--cross-validate fits expected mode's constants; drop --mode roofline");
    }
    if !matches!(output.format.format, FormatArg::Table) || !output.format.shape()?.is_whole() {
        anyhow::bail!("--cross-validate writes one table; drop --format, --columns and --digits");
    }
    let (source, file) = case_file::read(cases, false)?;
    let mut targets = vec![Target::from_out(output.out.as_deref())];
    targets.extend(residuals.map(|r| Target::from_out(Some(r))));
    let plan = output::plan_all(targets, &case_file::inputs(cases, &file))?;
    let cv = cross::cross_validate(file.cases, cases)?;
    let residual_rows = cross::residuals_of(&cv);
    let mut buffer = Vec::new();
    fit::write_cross_validation(&mut buffer, &cv)?;
    let calibration = band::Calibration::of(&residual_rows);
    export::band::write_band_report(
        &mut buffer,
        &calibration,
        &band::nested_coverage(&residual_rows),
    )?;
    let csv = export::band::residuals_csv(&residual_rows, &cases.display().to_string());
    match residuals {
        Some(_) => plan.commit(&[&buffer, csv.as_bytes()])?,
        None => emit(plan, &buffer)?,
    }
    let skipped = cv.in_sample.iter().filter(|o| o.predicted.is_err()).count();
    if skipped > 0 {
        anyhow::bail!(
            "{skipped} of {} cases in {} could not be priced (left out of the errors)",
            cv.in_sample.len(),
            source.name
        );
    }
    Ok(())
}
