//! What `chips` writes: one row per chip and matrix-unit data type with a peak (CSV, JSON),
//! or for people a row per chip with its peaks and ridge points in the types planners compare.

use std::io::{self, Write};

use comfy_table::{presets, Table};

use super::format::OutputFormat;
use super::rows::{self, ChipRow, Row, Shape};
use super::shaped;
use super::style::{align_right, for_terminal};
use crate::base::dtype::DType;
use crate::base::units::human;
use crate::core::chip::{Chip, ChipStatus};

/// Writes the chip list: one row per chip and matrix-unit data type with a peak.
pub(crate) fn write_chips(
    out: &mut dyn Write,
    chips: &[Chip],
    format: OutputFormat,
    shape: &Shape,
) -> io::Result<()> {
    let rows: Vec<ChipRow> = chips
        .iter()
        .flat_map(|chip| {
            chip.matrix.peaks().map(move |(dtype, peak)| ChipRow {
                chip,
                dtype,
                peak_flop_per_s: peak,
            })
        })
        .collect();
    if !shape.is_whole() {
        return shaped::write(out, &rows, format, shape, true);
    }
    let rows = rows.iter().map(|r| r as &dyn Row);
    match format {
        OutputFormat::Table => for_terminal(out, |t| table(t, chips)),
        OutputFormat::Csv | OutputFormat::CsvRaw => rows::write_rows(out, rows, format.csv_text()),
        OutputFormat::Json => {
            let value: Vec<serde_json::Value> = rows.map(rows::json_value).collect();
            serde_json::to_writer_pretty(&mut *out, &value)?;
            writeln!(out)
        }
    }
}

/// The data types of the chip list's table columns.
fn table_dtypes(chips: &[Chip]) -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| chips.iter().any(|c| c.matrix.peaks().any(|(x, _)| x == *d)))
        .collect()
}

/// The table of the chip list: a row per chip, its peaks and ridge points in the types
/// planners compare, and a note on what the columns mean.
fn table(out: &mut dyn Write, chips: &[Chip]) -> io::Result<()> {
    // The types planners compare; `--format csv` lists every type.
    let dtypes: Vec<DType> = table_dtypes(chips)
        .into_iter()
        .filter(|d| matches!(d, DType::Bf16 | DType::Fp8 | DType::Fp4))
        .collect();
    let mut header = ["chip", "HBM", "basis", "reserve", "bandwidth"]
        .map(String::from)
        .to_vec();
    for d in &dtypes {
        header.push(format!("{d} peak"));
        header.push(format!("{d} ridge"));
    }
    header.push("fabric".to_owned());
    header.push("bought as".to_owned());
    header.push("power as".to_owned());
    header.push("SKU".to_owned());
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    table.set_header(header);
    for chip in chips {
        let announced = chip.status() == ChipStatus::Announced;
        let mut row = vec![
            if announced {
                format!("{} (announced)", chip.id)
            } else {
                chip.id.clone()
            },
            human(chip.capacity_bytes, "B"),
            chip.capacity_basis.name().to_owned(),
            human(chip.reserve_bytes, "B"),
            human(chip.bandwidth_bytes_per_s, "B/s"),
        ];
        for d in &dtypes {
            match chip.matrix.peaks().find(|(x, _)| x == d) {
                Some((_, peak)) => {
                    row.push(human(peak, "FLOPS"));
                    row.push(format!("{:.0}", peak / chip.bandwidth_bytes_per_s));
                }
                None => row.extend(["-".to_owned(), "-".to_owned()]),
            }
        }
        row.push(fabric_cell(chip));
        row.push(chip.purchase_basis().map_or("-", |b| b.name()).to_owned());
        row.push(chip.power_basis().map_or("-", |b| b.name()).to_owned());
        row.push(chip.sku.clone());
        table.add_row(row);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "peaks are dense matrix-unit FLOP/s; ridge = peak / bandwidth in FLOP per byte of HBM traffic;\n\
         HBM is what the device reports to software where `basis` is `reported`, the vendor's GiB\n\
         (`vendor_gib`) or the marketed figure (`marketed`); reserve is the runtime's share of it;\n\
         fabric: the scale-up fabric, its rate per direction and chips per domain; (announced):\n\
         a roadmap part, left out of `--chip all` unless `--include-announced`;\n\
         bought as / power as: what the purchase price buys and the power measures (`system`: a\n\
         server or rack per accelerator; `accelerator`: the part alone, to which the TCO adds the\n\
         host's share; `not-sold`: rented only);\n\
         `--format csv` lists every data type, prices and power"
    )
}

/// The scale-up fabric in a few characters: `switch 450 GB/s x8`.
fn fabric_cell(chip: &Chip) -> String {
    chip.interconnect().map_or("-".to_owned(), |link| {
        let domain = link.domain.map_or(String::new(), |d| format!(" x{d}"));
        let rate = human(link.bandwidth_bytes_per_s, "B/s");
        format!("{} {rate}{domain}", link.fabric.name())
    })
}
