//! JSON: records become objects with their columns in order; a run is its summary's fields
//! plus, with per-op output, an `ops` array.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::{price_record, summary_record, Cell, Record};
use crate::price::StepReport;

fn object(record: &Record) -> Value {
    let map: Map<String, Value> = record
        .iter()
        .map(|(name, cell)| {
            let value = match cell {
                Cell::Text(s) => Value::from(s.as_str()),
                Cell::Num(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
                Cell::Int(n) => Value::from(*n),
                Cell::Empty => Value::Null,
            };
            (name.clone(), value)
        })
        .collect();
    Value::Object(map)
}

fn finish(out: &mut dyn Write, value: &Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// Writes a run as one object.
pub fn write_run(out: &mut dyn Write, report: &StepReport, per_op: bool) -> io::Result<()> {
    let mut value = object(&summary_record(report));
    if per_op {
        let ops = report
            .prices
            .iter()
            .map(|p| object(&price_record(p)))
            .collect();
        if let Value::Object(map) = &mut value {
            map.insert("ops".into(), Value::Array(ops));
        }
    }
    finish(out, &value)
}

/// Writes records as an array of objects.
pub fn write_records(out: &mut dyn Write, records: &[Record]) -> io::Result<()> {
    finish(out, &Value::Array(records.iter().map(object).collect()))
}
