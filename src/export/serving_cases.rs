//! Serving rows of a case file priced by the steady state, against their measurements: a
//! table with the errors per group, CSV rows, or JSON.

use std::io::{self, Write};

use super::table::{align_right, new_table};
use super::OutputFormat;
use crate::base::units::{percent, signed_percent, three_significant};
use crate::study::validate::{ErrorStats, ServingOutcome, ALL_AT_ONCE_MOST};

/// Serving rows priced by the steady state: each row, then the errors (a table), the rows
/// (CSV), or both under `serving_cases` and `serving_errors` (JSON, for merging into the
/// step rows' report).
pub fn write_serving_validation(
    out: &mut dyn Write,
    outcomes: &[ServingOutcome],
    stats: &[ErrorStats],
    format: OutputFormat,
) -> io::Result<()> {
    let rows: Vec<ServingCaseRow> = outcomes.iter().map(ServingCaseRow).collect();
    match format {
        OutputFormat::Table => {
            super::for_terminal(out, |t| serving_validation_table(t, outcomes, stats))
        }
        OutputFormat::Csv | OutputFormat::CsvRaw => super::rows::write_rows(
            out,
            rows.iter().map(|r| r as &dyn super::rows::Row),
            format.csv_text(),
        ),
        OutputFormat::Json => {
            let value = serde_json::json!({
                "serving_cases": rows.iter().map(|r| super::rows::json_value(r)).collect::<Vec<_>>(),
                "serving_errors": stats.iter().map(|s| super::rows::json_value(&super::rows::StatsRow(s))).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// One serving row as CSV or JSON.
struct ServingCaseRow<'a>(&'a ServingOutcome);

impl super::rows::Row for ServingCaseRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, super::rows::Value<'_>)) {
        use super::rows::Value;
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
