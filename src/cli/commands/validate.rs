//! `validate`: measured cases priced, each prediction's error, and the median and 90th
//! percentile overall and per group; with `--cross-validate`, each source held out in turn.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use std::sync::Arc;

use anyhow::Result;
use clap::Args;

use crate::base::source::Source;
use crate::cli::case_file;
use crate::cli::flags::{FormatArg, ModeArg, OutputArgs};
use crate::cli::output::{self, emit};
use crate::core::engine::{self, Engine};
use crate::core::scenario::Mode;
use crate::export::atomic::Target;
use crate::export::{self as exporter, fit};
use crate::study::band;
use crate::study::fit::cross;
use crate::study::validate;

#[derive(Args)]
pub(crate) struct ValidateArgs {
    /// Case file (CSV): id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes
    /// and, optionally, engine,version,library,harness (the stack a row was measured on)
    cases: PathBuf,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    /// Hold out each source (a row's id prefix: `MAMF` of `MAMF-7`) in turn, fit its
    /// chips' expected-mode constants to the other sources' rows, predict its rows, and
    /// report those errors beside the in-sample ones (a table)
    #[arg(long)]
    cross_validate: bool,
    /// With --cross-validate: write each row's held-out residual, ln(measured / predicted
    /// step time), to FILE (`validation/band.csv` is this for the shipped set: the 80 %
    /// band of every expected-mode number is taken from it)
    #[arg(long, value_name = "FILE", requires = "cross_validate")]
    residuals: Option<PathBuf>,
    /// Serving engine: every step row is priced under it (default: `fitted`, the stack the
    /// chip files' constants were fitted on), and the serving rows that name none (default:
    /// each row's chip file's engine); a serving row's own engine wins
    #[arg(long, value_name = "NAME[@VERSION]", conflicts_with = "cross_validate")]
    engine: Option<String>,
    /// Price only the rows whose ids FILE lists (one a line, `#` comments):
    /// `validation/baseline.txt` holds the rows present before the set grew, so that a
    /// figure can be compared on the same rows
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

/// `validate`, or `validate --cross-validate`.
pub(crate) fn run(args: ValidateArgs) -> Result<()> {
    let baseline = args.baseline.as_deref();
    if args.cross_validate {
        cross_validate(
            &args.cases,
            args.mode,
            args.residuals.as_deref(),
            baseline,
            args.output,
        )
    } else {
        let engine = args.engine.as_deref().map(engine::resolve).transpose()?;
        validate(
            &args.cases,
            (args.mode, engine.as_ref()),
            baseline,
            args.output,
        )
    }
}

/// The case file, kept to the rows `baseline`'s file lists where one is given.
fn read_cases(
    cases: &Path,
    check_serving: bool,
    baseline: Option<&Path>,
) -> Result<(Source, validate::CaseFile)> {
    let (source, mut file) = case_file::read(cases, check_serving)?;
    if let Some(list) = baseline {
        let text = std::fs::read_to_string(list).map_err(|e| {
            anyhow::anyhow!("cannot read the baseline list {}: {e}", list.display())
        })?;
        let ids = validate::baseline_ids(&text);
        file.cases.retain(|c| ids.contains(c.id.as_str()));
        file.serving.retain(|c| ids.contains(c.id.as_str()));
        if file.cases.is_empty() && file.serving.is_empty() {
            anyhow::bail!(
                "no row of {} is listed in {}: expected a list of its row ids, one a line",
                source.name,
                list.display()
            );
        }
    }
    Ok((source, file))
}

fn validate(
    cases: &Path,
    (mode, engine): (ModeArg, Option<&Arc<Engine>>),
    baseline: Option<&Path>,
    output: OutputArgs,
) -> Result<()> {
    let (source, file) = read_cases(cases, true, baseline)?;
    let plan = output::plan(output.out.as_deref(), &case_file::inputs(cases, &file))?;
    let serving = validate::validate_serving_under(&file.serving, cases, (mode.into(), engine));
    let steps = !file.cases.is_empty() || serving.is_empty();
    let outcomes = validate::validate_under(file.cases, cases, (mode.into(), engine));
    let stats = validate::error_stats(&outcomes);
    let format = &output.format;
    let mut buffer = Vec::new();
    if steps {
        let shape = format.shape()?;
        exporter::write_validation(&mut buffer, &outcomes, &stats, format.into(), &shape)?;
    }
    if !serving.is_empty() {
        let serving_stats = validate::serving_stats(&serving);
        let mut section = Vec::new();
        let kind = format.into();
        exporter::write_serving_validation(&mut section, &serving, &serving_stats, kind)?;
        buffer = match (steps, kind) {
            (false, _) => section,
            (true, exporter::OutputFormat::Table) => [buffer, b"\n".to_vec(), section].concat(),
            (true, exporter::OutputFormat::Json) => merge_json(&buffer, &section)?,
            (true, _) => {
                // One CSV has one header: the step rows' report, the serving rows told apart.
                let _ = writeln!(
                    io::stderr(),
                    "note: {} serving rows in {}: listed with --format table or json",
                    serving.len(),
                    source.name.escape_debug()
                );
                buffer
            }
        };
    }
    emit(plan, &buffer)?;
    let skipped = outcomes.iter().filter(|o| o.predicted.is_err()).count()
        + serving.iter().filter(|o| o.predicted.is_err()).count();
    if skipped > 0 {
        anyhow::bail!(
            "{skipped} of {} cases in {} could not be priced (listed as skipped in the report)",
            outcomes.len() + serving.len(),
            source.name
        );
    }
    Ok(())
}

/// Two JSON objects' keys as one object (the step rows' report, then the serving rows').
fn merge_json(first: &[u8], second: &[u8]) -> Result<Vec<u8>> {
    let mut a: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(first)?;
    let b: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(second)?;
    a.extend(b);
    let mut out = serde_json::to_vec_pretty(&a)?;
    out.push(b'\n');
    Ok(out)
}

/// `validate --cross-validate`: a table of errors per group, in sample and held out.
fn cross_validate(
    cases: &Path,
    mode: ModeArg,
    residuals: Option<&Path>,
    baseline: Option<&Path>,
    output: OutputArgs,
) -> Result<()> {
    if Mode::from(mode) != Mode::Expected {
        anyhow::bail!("--cross-validate fits expected mode's constants; drop --mode roofline");
    }
    if !matches!(output.format.format, FormatArg::Table) || !output.format.shape()?.is_whole() {
        anyhow::bail!("--cross-validate writes one table; drop --format, --columns and --digits");
    }
    let (source, file) = read_cases(cases, false, baseline)?;
    let mut targets = vec![Target::from_out(output.out.as_deref())];
    targets.extend(residuals.map(|r| Target::from_out(Some(r))));
    let plan = output::plan_all(targets, &case_file::inputs(cases, &file))?;
    let cv = cross::cross_validate(file.cases, cases)?;
    let residual_rows = cross::residuals_of(&cv);
    let mut buffer = Vec::new();
    fit::write_cross_validation(&mut buffer, &cv)?;
    let calibration = band::Calibration::of(&residual_rows);
    exporter::band::write_band_report(
        &mut buffer,
        &calibration,
        &band::nested_coverage(&residual_rows),
    )?;
    let csv = exporter::band::residuals_csv(&residual_rows, &cases.display().to_string());
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
