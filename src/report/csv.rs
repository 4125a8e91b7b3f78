//! CSV: a header from the first record's column names, then one line per record.

use std::io::{self, Write};

use super::{Cell, Record};

/// Writes `records` (all with the same columns) with a header line.
pub fn write_records(out: &mut dyn Write, records: &[Record]) -> io::Result<()> {
    let mut writer = ::csv::Writer::from_writer(out);
    if let Some(first) = records.first() {
        writer.write_record(first.iter().map(|(name, _)| name.as_str()))?;
    }
    for record in records {
        writer.write_record(record.iter().map(|(_, cell)| cell_text(cell)))?;
    }
    writer.flush()
}

pub(super) fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Text(s) => s.clone(),
        Cell::Num(x) => x.to_string(),
        Cell::Int(n) => n.to_string(),
        Cell::Empty => String::new(),
    }
}
