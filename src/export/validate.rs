//! What `validate` writes: predictions against measured cases, each case with its error and
//! the errors per group, as a table, CSV or JSON; and the serving rows of a case file, priced
//! by the steady state, the same way.

use std::io::{self, Write};

use super::format::OutputFormat;
use super::rows::{self, CaseRow, Row, Shape, StatsRow, Value};
use super::shaped;
use super::style::{align_right, for_terminal, new_table};
use crate::base::units::{percent, signed_percent, three_significant};
use crate::study::validate::{ErrorStats, Outcome, ServingOutcome, ALL_AT_ONCE_MOST};

/// Writes a validation: every case, then the error statistics (table and JSON; CSV lists the
/// cases only).
pub(crate) fn write_validation(
    out: &mut dyn Write,
    outcomes: &[Outcome],
    stats: &[ErrorStats],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let cases: Vec<CaseRow> = outcomes.iter().map(CaseRow).collect();
    if !shape.is_whole() {
        return shaped::validation(out, &cases, stats, format, shape);
    }
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, outcomes, stats)),
        OutputFormat::Csv | OutputFormat::CsvRaw => {
            rows::write_rows(out, cases.iter().map(|r| r as &dyn Row), format.csv_text())
        }
        OutputFormat::Json => {
            let value = serde_json::json!({
                "cases": cases.iter().map(|r| rows::json_value(r)).collect::<Vec<_>>(),
                "errors": stats.iter().map(|s| rows::json_value(&StatsRow(s))).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// The table of a validation: every case with its error, the error statistics, and the
/// cases that could not be priced.
fn table(out: &mut dyn Write, outcomes: &[Outcome], stats: &[ErrorStats]) -> io::Result<()> {
    let mut table = new_table(&[
        "id",
        "chip",
        "workload",
        "kind",
        "dtype",
        "metric",
        "measured",
        "predicted",
        "error",
    ]);
    let mut skipped = Vec::new();
    for o in outcomes {
        let c = &o.case;
        match (&o.predicted, o.error()) {
            (Ok(p), Some(e)) => {
                table.add_row(vec![
                    c.id.clone(),
                    c.chip.clone(),
                    c.workload.clone(),
                    c.kind.clone(),
                    o.dtype.to_string(),
                    c.metric.name().to_owned(),
                    three_significant(c.measured),
                    three_significant(*p),
                    signed_percent(e),
                ]);
            }
            (Err(why), _) => skipped.push(format!("{}: {why}", c.id)),
            (Ok(_), None) => {}
        }
    }
    align_right(&mut table, 6);
    writeln!(out, "{table}")?;
    let mut summary = new_table(&["group", "cases", "median |error|", "90th pct |error|"]);
    for s in stats {
        summary.add_row(vec![
            s.group.clone(),
            s.cases.to_string(),
            percent(s.median_abs),
            percent(s.p90_abs),
        ]);
    }
    align_right(&mut summary, 1);
    writeln!(out, "{summary}")?;
    if !skipped.is_empty() {
        writeln!(out, "skipped ({}):", skipped.len())?;
        for s in skipped {
            writeln!(out, "  {s}")?;
        }
    }
    Ok(())
}

/// Serving rows priced by the steady state: each row, then the errors (a table), the rows
/// (CSV), or both under `serving_cases` and `serving_errors` (JSON, for merging into the
/// step rows' report).
pub(crate) fn write_serving_validation(
    out: &mut dyn Write,
    outcomes: &[ServingOutcome],
    stats: &[ErrorStats],
    format: OutputFormat,
) -> io::Result<()> {
    let rows: Vec<ServingCaseRow> = outcomes.iter().map(ServingCaseRow).collect();
    match format {
        OutputFormat::Table => for_terminal(out, |t| serving_validation_table(t, outcomes, stats)),
        OutputFormat::Csv | OutputFormat::CsvRaw => rows::write_rows(
            out,
            rows.iter().map(|r| r as &dyn rows::Row),
            format.csv_text(),
        ),
        OutputFormat::Json => {
            let value = serde_json::json!({
                "serving_cases": rows.iter().map(|r| rows::json_value(r)).collect::<Vec<_>>(),
                "serving_errors": stats.iter().map(|s| rows::json_value(&rows::StatsRow(s))).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// One serving row as CSV or JSON.
struct ServingCaseRow<'a>(&'a ServingOutcome);

impl rows::Row for ServingCaseRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, rows::Value<'_>)) {
        let (o, c) = (self.0, &self.0.case);
        f("id", Value::Text(&c.id));
        f("chip", Value::Text(&c.chip));
        f("workload", Value::Text(&c.workload));
        f("input_tokens", Value::Int(c.request.0));
        f("output_tokens", Value::Int(c.request.1));
        f("chips", Value::Int(c.tp));
        f(
            "concurrency",
            o.concurrency.map_or(Value::Empty, Value::Int),
        );
        f("metric", Value::Text(c.metric.name()));
        f("measured", Value::Num(c.measured));
        f("predicted", o.predicted.as_ref().ok().copied().into());
        f("error", o.error().into());
        f("source", Value::Text(&c.source));
        f(
            "note",
            Value::Text(o.predicted.as_ref().err().map_or("", String::as_str)),
        );
    }
}

fn serving_validation_table(
    out: &mut dyn Write,
    outcomes: &[ServingOutcome],
    stats: &[ErrorStats],
) -> io::Result<()> {
    writeln!(
        out,
        "serving rows: the steady state (continuous batching) at each row's requests in flight; a rate is served at the fewest in flight that keep up with it, `rate=inf` at the most that fit (at most {ALL_AT_ONCE_MOST})"
    )?;
    let mut table = new_table(&[
        "id",
        "chip",
        "workload",
        "in/out",
        "chips",
        "conc",
        "metric",
        "measured",
        "predicted",
        "error",
    ]);
    for o in outcomes {
        let c = &o.case;
        let (predicted, error) = match (&o.predicted, o.error()) {
            (Ok(p), Some(e)) => (three_significant(*p), signed_percent(e)),
            (Err(why), _) => ("-".into(), format!("skipped: {why}")),
            _ => ("-".into(), "-".into()),
        };
        table.add_row(vec![
            c.id.clone(),
            c.chip.clone(),
            c.workload.clone(),
            format!("{}/{}", c.request.0, c.request.1),
            c.tp.to_string(),
            o.concurrency.map_or("-".into(), |c| c.to_string()),
            c.metric.name().into(),
            three_significant(c.measured),
            predicted,
            error,
        ]);
    }
    align_right(&mut table, 3);
    writeln!(out, "{table}")?;
    let mut errors = new_table(&[
        "group",
        "rows",
        "median |error|",
        "p90 |error|",
        "signed median",
    ]);
    for s in stats {
        errors.add_row(vec![
            s.group.clone(),
            s.cases.to_string(),
            percent(s.median_abs),
            percent(s.p90_abs),
            signed_percent(s.signed_median),
        ]);
    }
    align_right(&mut errors, 1);
    writeln!(out, "{errors}")
}
