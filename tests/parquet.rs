//! `sweep --format parquet`: the file, read back with the parquet crate's own reader, holds
//! the CSV of the same sweep value for value (numbers bit for bit, nulls where the CSV is
//! empty), in the same columns and order, typed as `docs/columns.md` says.

use std::fs::File;
use std::path::Path;

use parquet::basic::{Encoding, LogicalType, Type as Physical};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use predicates::prelude::*;

use crate::common::{csv_rows, stepcost};

/// A chip whose matrix unit has no fp8 nor a 16-bit type to widen fp8 to: an `error` row.
const FP32_ONLY: &str = "name: FP32 only\nmemory: {capacity: 40 GB, bandwidth: 1.5 TB/s}\n\
    matrix: {fp32: 19.5 TFLOPS}\nvector: {fp32: 19.5 TFLOPS}\n\
    expected: {matrix: {fp32: 0.8}, memory: 0.9}\n";

/// The CSV (text as it is, as Parquet keeps it) and the Parquet file of `sweep ARGS`.
fn both(dir: &Path, args: &[&str]) -> (String, SerializedFileReader<File>) {
    let csv = stepcost()
        .arg("sweep")
        .args(args)
        .args(["--raw-text", "--quiet"])
        .assert()
        .success();
    let csv = String::from_utf8(csv.get_output().stdout.clone()).unwrap();
    let out = dir.join("sweep.parquet");
    stepcost()
        .arg("sweep")
        .args(args)
        .args(["--format", "parquet", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    (
        csv,
        SerializedFileReader::new(File::open(&out).unwrap()).unwrap(),
    )
}

/// Asserts the Parquet file holds `csv`: the same columns in order, the same rows in order,
/// each value equal to the CSV cell it stands for. Returns the rows, for more checks.
fn assert_same(csv: &str, parquet: &SerializedFileReader<File>) -> Vec<Vec<Field>> {
    let (header, rows) = csv_rows(csv);
    let schema = parquet.metadata().file_metadata().schema_descr();
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
    assert_eq!(names, header);
    let read: Vec<Vec<Field>> = (parquet.get_row_iter(None).unwrap())
        .map(|row| {
            row.unwrap()
                .into_columns()
                .into_iter()
                .map(|(_, f)| f)
                .collect()
        })
        .collect();
    assert_eq!(read.len(), rows.len());
    for (i, (fields, cells)) in read.iter().zip(&rows).enumerate() {
        for ((field, cell), name) in fields.iter().zip(cells).zip(&header) {
            let at = format!("row {i}, column `{name}`: {field:?} against {cell:?}");
            match field {
                Field::Null => assert_eq!(cell, "", "{at}"),
                Field::Double(x) => {
                    let csv: f64 = cell.parse().expect(&at);
                    assert_eq!(x.to_bits(), csv.to_bits(), "{at}");
                }
                Field::Long(n) => assert_eq!(n.to_string(), *cell, "{at}"),
                Field::Bool(b) => assert_eq!(b.to_string(), *cell, "{at}"),
                Field::Str(s) => assert!(!s.is_empty() && s == cell, "{at}"),
                _ => panic!("{at}: a type no column has"),
            }
        }
    }
    read
}

/// The physical type and logical type of `column`.
fn type_of(parquet: &SerializedFileReader<File>, column: &str) -> (Physical, Option<LogicalType>) {
    let schema = parquet.metadata().file_metadata().schema_descr();
    let c = (schema.columns().iter())
        .find(|c| c.name() == column)
        .unwrap_or_else(|| panic!("no column `{column}`"));
    (c.physical_type(), c.logical_type_ref().cloned())
}

#[test]
fn a_sweep_reads_back_as_its_csv_typed_as_the_column_table_says() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("fp32-only.yaml");
    std::fs::write(&old, FP32_ONLY).unwrap();
    let chips = format!("h100-sxm,{}", old.display());
    // Batch 512 at a 128k context does not fit an H100; fp8 on the fp32-only chip is an error
    // row; the request fills the request columns.
    let args = [
        "llama-3.1-8b",
        "--chip",
        &chips,
        "--set",
        "batch=1,512",
        "--set",
        "context=1024,131072",
        "--dtype",
        "weight=bf16,fp8",
        "--request",
        "in=512,out=128",
    ];
    let (csv, parquet) = both(dir.path(), &args);
    let rows = assert_same(&csv, &parquet);
    assert_eq!(rows.len(), 2 * 2 * 2 * 2);
    // Every kind of cell was compared: nulls, numbers, integers, booleans both ways, text.
    let all: Vec<&Field> = rows.iter().flatten().collect();
    assert!(all.iter().any(|f| matches!(f, Field::Null)));
    assert!(all.iter().any(|f| matches!(f, Field::Long(_))));
    assert!(all.iter().any(|f| matches!(f, Field::Bool(true))));
    assert!(all.iter().any(|f| matches!(f, Field::Bool(false))));
    assert!(all
        .iter()
        .any(|f| matches!(f, Field::Str(s) if s.contains("fp8"))));
    assert_eq!(type_of(&parquet, "step_time_us").0, Physical::DOUBLE);
    assert_eq!(type_of(&parquet, "batch").0, Physical::DOUBLE);
    assert_eq!(type_of(&parquet, "kernels").0, Physical::INT64);
    assert_eq!(type_of(&parquet, "input_tokens").0, Physical::INT64);
    assert_eq!(type_of(&parquet, "fits").0, Physical::BOOLEAN);
    assert_eq!(
        type_of(&parquet, "chip"),
        (Physical::BYTE_ARRAY, Some(LogicalType::String))
    );
    // Text is dictionary-encoded.
    let group = parquet.metadata().row_group(0);
    let chip = (group.columns().iter())
        .find(|c| c.column_path().string() == "chip")
        .unwrap();
    assert!(chip.encodings().any(|e| e == Encoding::RLE_DICTIONARY));
}

#[test]
fn kernel_rows_cut_and_filtered_read_back_as_their_csv() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "llama-3.1-8b",
        "--chip",
        "h100-sxm,b200",
        "--set",
        "batch=1,64",
        "--per-op",
        "--where",
        "kind == \"gemm\" && time_us > 10",
        "--columns",
        "chip,batch,op,count,time_us,bound,error",
    ];
    let (csv, parquet) = both(dir.path(), &args);
    let rows = assert_same(&csv, &parquet);
    assert!(rows.len() > 4, "{csv}");
    assert_eq!(type_of(&parquet, "count").0, Physical::INT64);
}

#[test]
fn a_sweep_of_several_row_groups_keeps_the_product_order() {
    // 70,000 scenarios of a small kernel workload: more than one row group of 65,536 rows.
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "gemm",
        "--chip",
        "h100-sxm",
        "--set",
        "m=1..=70000",
        "--columns",
        "m,step_time_us,flops,chip,fits,kernels",
    ];
    let (csv, parquet) = both(dir.path(), &args);
    assert_eq!(parquet.metadata().num_row_groups(), 2);
    let rows = assert_same(&csv, &parquet);
    assert_eq!(rows.len(), 70_000);
    assert_eq!(rows[69_999][0], Field::Double(70_000.0));
}

#[test]
fn parquet_is_much_smaller_than_csv() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "llama-3.1-70b",
        "--chip",
        "h100-sxm",
        "--set",
        "batch=1..=100",
        "--set",
        "context=128..=12800:+128",
    ];
    let (csv, _) = both(dir.path(), &args);
    let parquet = std::fs::metadata(dir.path().join("sweep.parquet"))
        .unwrap()
        .len();
    // 4.9x on this grid: the four band columns (step time and tokens/s times the band's
    // ends) are doubles whose mantissas no compressor shrinks; without them it was over 5x.
    assert!(
        parquet * 9 <= csv.len() as u64 * 2,
        "{parquet} bytes of Parquet against {} of CSV",
        csv.len()
    );
}

#[test]
fn parquet_is_refused_on_stdout_before_any_work() {
    for out in [&[][..], &["--out", "-"][..]] {
        stepcost()
            .args(["sweep", "gemm", "--chip", "h100-sxm", "--format", "parquet"])
            .args(out)
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(
                "--format parquet writes a file, not a stream: give --out FILE",
            ));
    }
}

#[test]
fn a_failed_parquet_sweep_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.parquet");
    std::fs::write(&out, "previous").unwrap();
    stepcost()
        .args([
            "sweep",
            "llama-3.1-8b",
            "--chip",
            "h100-sxm",
            "--set",
            "batch=1,0",
        ])
        .args(["--format", "parquet", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("scenario 1 of the sweep"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn an_interrupted_parquet_sweep_leaves_the_previous_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep.parquet");
    std::fs::write(&out, "previous").unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stepcost"))
        .args(["sweep", "llama-3.1-70b", "--chip", "all"])
        .args(["--set", "batch=1..=4096", "--set", "context=1..=900"])
        .args(["--format", "parquet", "--out"])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&output.stderr).contains("was not written"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_ranked_what_if_sweep_reads_back_as_its_csv() {
    // `--top` holds rows back until every scenario is priced, and what-if chips add columns:
    // the Parquet file still holds what the CSV does.
    let dir = tempfile::tempdir().unwrap();
    let (csv, parquet) = both(
        dir.path(),
        &[
            "llama-3.1-70b",
            "--chip",
            "h200,b200",
            "--set",
            "batch=1..=64:x2",
            "--dtype",
            "weight=fp8",
            "--chip-set",
            "memory.bandwidth=4.8TB/s,8TB/s",
            "--fits-only",
            "--top",
            "2",
            "--by",
            "usd_per_million_tokens",
            "--per",
            "chip",
        ],
    );
    let rows = assert_same(&csv, &parquet);
    assert_eq!(rows.len(), 8, "2 rows for each of 4 what-if chips");
}
