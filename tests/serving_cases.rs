//! Serving rows of a case file (kind `serving`): read with their values, refused with the
//! file, line and field when bad, counted by `validate`, and without effect on the other rows'
//! results.

use std::path::Path;

use predicates::prelude::*;
use stepcost::internals::validate::{
    check_serving, read_case_file, Load, ServingCase, ServingMetric,
};
use stepcost::Source;

use crate::common::stepcost;

const HEADER: &str =
    "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n";

/// A case file of `rows` under the header, as read.
fn read(rows: &str) -> Result<stepcost::internals::validate::CaseFile, stepcost::Error> {
    read_case_file(&Source::from_text("cases.csv", &format!("{HEADER}{rows}")))
}

#[test]
fn serving_rows_are_read_with_their_values() {
    let file = read(
        "G1,h200,gemm,m=1024,,,,1,attained_tflops,700,kernel,x,an older row\n\
         # a comment between rows\n\
         S1,h100-sxm,llama-3.1-70b,concurrency=25,weight=fp8;activation=fp8,,in=5000;out=500,2,ttft_ms,688.69,serving,src,\n\
         S2,h200,deepseek-v3,rate=2.5;ep=8,,flash,in=1000;out=1000,8,output_tokens_per_s_per_gpu,1200,serving,src,\n\
         S3,mi300x,llama-3.1-405b,rate=inf,,,in=80;out=85,8,e2e_s,7.5,serving,src,note\n",
    )
    .unwrap();
    assert_eq!(file.cases.len(), 1);
    assert_eq!(file.cases[0].id, "G1");
    let ids: Vec<&str> = file.serving.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["S1", "S2", "S3"]);
    let s1 = &file.serving[0];
    assert_eq!(
        (s1.line, s1.chip.as_str(), s1.workload.as_str()),
        (4, "h100-sxm", "llama-3.1-70b")
    );
    assert_eq!(s1.load, Load::Concurrency(25));
    assert!(s1.sets.is_empty(), "the load is not a workload param");
    assert_eq!(s1.dtypes.len(), 2);
    assert_eq!((s1.request, s1.tp), ((5000, 500), 2));
    assert_eq!((s1.metric, s1.measured), (ServingMetric::TtftMs, 688.69));
    let s2 = &file.serving[1];
    assert_eq!(s2.load, Load::RatePerS(2.5));
    assert_eq!(s2.sets, vec![("ep".to_owned(), 8.0)]);
    assert_eq!(s2.fusion.as_deref(), Some("flash"));
    assert_eq!(s2.metric, ServingMetric::OutputTokensPerSPerGpu);
    let s3 = &file.serving[2];
    assert_eq!((s3.load, s3.metric), (Load::AllAtOnce, ServingMetric::E2eS));
    assert_eq!((s3.request, s3.tp, s3.line), ((80, 85), 8, 6));
}

#[test]
fn bad_serving_rows_name_the_line_and_field() {
    let good = "S,h200,llama-3.1-8b,concurrency=8,,,in=100;out=10,1,tpot_ms,10,serving,src,\n";
    for (row, field, says) in [
        (
            "S,h200,llama-3.1-8b,,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "params",
            "needs its load",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8;rate=2,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "params",
            "given twice",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=0,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "params",
            "`concurrency=0`",
        ),
        (
            "S,h200,llama-3.1-8b,rate=-1,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "params",
            "`rate=-1`",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8;batch=lots,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "params",
            "`lots` is not a number",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8,,,,1,tpot_ms,10,serving,src,\n",
            "request",
            "needs a request",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8,,,in=100,1,tpot_ms,10,serving,src,\n",
            "request",
            "expected in=I,out=O",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8,,,in=100;out=10,0,tpot_ms,10,serving,src,\n",
            "tp",
            "`0` is not a chip count",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8,,,in=100;out=10,1,attained_tflops,10,serving,src,\n",
            "metric",
            "unknown serving metric `attained_tflops`",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8,,,in=100;out=10,1,tpot_ms,0,serving,src,\n",
            "measured",
            "`0` is not a number above 0",
        ),
        (
            "S,h200,llama-3.1-8b,concurrency=8,weight=fp9,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "dtypes",
            "fp9",
        ),
        // A serving row's load or metric on a row of another kind.
        (
            "S,h200,llama-3.1-8b,concurrency=8,,,in=100;out=10,1,tpot_ms,10,request,src,\n",
            "params",
            "set the row's kind to serving",
        ),
        (
            "S,h200,llama-3.1-8b,,,,in=100;out=10,1,output_tokens_per_s,10,request,src,\n",
            "metric",
            "a serving metric: set the row's kind to serving",
        ),
        (
            "S,h200,llama-3.1-8b,,,,in=100;out=10,1,tpot_ms,10,servng,src,\n",
            "kind",
            "request or serving",
        ),
    ] {
        let err = read(&format!("{good}{row}")).unwrap_err();
        assert_eq!(err.file(), Some("cases.csv"), "{row}");
        assert_eq!(err.line(), Some(3), "{row}: {err}");
        assert_eq!(err.field(), Some(field), "{row}: {err}");
        let text = format!("{err:#}");
        assert!(text.contains(says), "{row}: {text}");
    }
}

/// A serving row that parses but names a chip, workload or param that does not load is
/// refused by `validate` with its id and line, before any report.
#[test]
fn validate_refuses_a_serving_row_that_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    for (row, field, says) in [
        (
            "S9,h100-sxn,llama-3.1-8b,concurrency=8,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "field `chip`",
            "h100-sxm",
        ),
        (
            "S9,h200,llama-9b,concurrency=8,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "field `workload`",
            "llama-9b",
        ),
        (
            "S9,h200,llama-3.1-8b,concurrency=8;heads_per_chip=2,,,in=100;out=10,1,tpot_ms,10,serving,src,\n",
            "serving case",
            "heads_per_chip",
        ),
        (
            "S9,h200,gemm,concurrency=8,,,in=100;out=10,2,tpot_ms,10,serving,src,\n",
            "serving case",
            "no `tp` param",
        ),
    ] {
        let path = dir.path().join("cases.csv");
        // The bad row on line 3, after a comment.
        std::fs::write(&path, format!("{HEADER}# a comment\n{row}")).unwrap();
        stepcost()
            .arg("validate")
            .arg(&path)
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains("cases.csv:3:"))
            .stderr(predicate::str::contains(field))
            .stderr(predicate::str::contains("serving case `S9`"))
            .stderr(predicate::str::contains(says));
    }
}

/// The shipped serving rows: every one loads, and they come from at least four sources (an
/// id's prefix up to its first `-`), each naming its source.
#[test]
fn the_shipped_serving_rows_load() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/serving.csv");
    let source = Source::read(&path).unwrap();
    let file = read_case_file(&source).unwrap();
    assert!(file.cases.is_empty());
    assert_eq!(file.serving.len(), 45);
    check_serving(&file.serving, &source, &path).unwrap();
    let mut sources: Vec<&str> = file
        .serving
        .iter()
        .map(|c: &ServingCase| c.id.split('-').next().unwrap())
        .collect();
    sources.sort_unstable();
    sources.dedup();
    assert_eq!(sources, ["DCH", "DSTK", "NIM", "TRTPO"]);
    assert!(file.serving.iter().all(|c| !c.source.is_empty()));
}

/// `validate` and `validate --cross-validate` print the same report for the shipped
/// measurements with the shipped serving rows among them as without, and count the serving
/// rows on stderr.
#[test]
fn serving_rows_leave_the_other_rows_results_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let measured = std::fs::read_to_string(root.join("validation/measured.csv")).unwrap();
    let serving = std::fs::read_to_string(root.join("validation/serving.csv")).unwrap();
    // The serving rows (no header, no comments) between the measured file's rows.
    let rows = serving.lines().filter(|l| l.contains(",serving,"));
    let mut mixed: Vec<String> = measured.lines().map(str::to_owned).collect();
    let at = mixed.len() - 5;
    mixed.splice(at..at, rows.map(str::to_owned));
    let path = dir.path().join("mixed.csv");
    std::fs::write(&path, mixed.join("\n") + "\n").unwrap();
    let run = |file: &Path, args: &[&str]| {
        let out = stepcost()
            .current_dir(root)
            .arg("validate")
            .arg(file)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.stdout, String::from_utf8(out.stderr).unwrap())
    };
    let alone = Path::new("validation/measured.csv");
    // The table: the step rows' report as it was, then the serving rows'.
    let (with, err) = run(&path, &[]);
    let (without, _) = run(alone, &[]);
    assert!(with.starts_with(&without), "the step rows' report changed");
    assert!(String::from_utf8_lossy(&with[without.len()..]).contains("all serving"));
    assert!(err.is_empty(), "{err}");
    // JSON: the same keys and values, and the serving rows' beside them.
    let (with, _) = run(&path, &["--format", "json"]);
    let (without, _) = run(alone, &["--format", "json"]);
    let with: serde_json::Value = serde_json::from_slice(&with).unwrap();
    let without: serde_json::Value = serde_json::from_slice(&without).unwrap();
    for key in ["cases", "errors"] {
        assert_eq!(with[key], without[key]);
    }
    assert_eq!(with["serving_cases"].as_array().unwrap().len(), 45);
    // Cross-validation leaves the serving rows out, and says so: on three sources' rows (the
    // whole set refits every chip 29 times, minutes in a debug build; band.rs does it once).
    let few: Vec<&str> = (measured.lines())
        .filter(|l| l.starts_with('#') || l.starts_with("id,") || l.starts_with("AZ-"))
        .chain(
            measured
                .lines()
                .filter(|l| l.starts_with("GF-") || l.starts_with("W-")),
        )
        .collect();
    let (few_path, few_mixed) = (dir.path().join("few.csv"), dir.path().join("few-mixed.csv"));
    std::fs::write(&few_path, few.join("\n") + "\n").unwrap();
    let serving_rows = serving.lines().filter(|l| l.contains(",serving,"));
    let mixed_few: Vec<&str> = few.iter().copied().chain(serving_rows).collect();
    std::fs::write(&few_mixed, mixed_few.join("\n") + "\n").unwrap();
    let (with, err) = run(&few_mixed, &["--cross-validate"]);
    let (without, _) = run(&few_path, &["--cross-validate"]);
    assert_eq!(with, without);
    assert!(err.contains("note: 45 serving rows in "), "{err}");
}

/// A case file of serving rows alone is priced by the steady state; its report is theirs.
#[test]
fn a_file_of_serving_rows_alone_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("serving.csv");
    std::fs::write(
        &path,
        format!(
            "{HEADER}S1,h200,llama-3.1-8b,rate=inf,,,in=1000;out=1000,1,output_tokens_per_s,17744,serving,src,\n"
        ),
    )
    .unwrap();
    stepcost()
        .arg("validate")
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("S1"))
        .stdout(predicate::str::contains("all serving"));
}

/// A serving row at one request in flight is a request priced alone: its TTFT is the
/// prompt's prefill step, as `run` prices it.
#[test]
fn a_serving_rows_prediction_is_the_steady_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.csv");
    std::fs::write(
        &path,
        format!(
            "{HEADER}S1,h100-sxm,llama-3.1-8b,concurrency=1,,,in=2000;out=100,1,ttft_ms,20,serving,src,\n"
        ),
    )
    .unwrap();
    let out = stepcost()
        .arg("validate")
        .arg(&path)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (header, rows) = crate::common::csv_rows(&String::from_utf8(out.stdout).unwrap());
    let predicted: f64 = crate::common::cell(&header, &rows[0], "predicted")
        .parse()
        .unwrap();
    let prefill = crate::common::run(
        "llama-3.1-8b",
        "h100-sxm",
        &[("batch", 1.0), ("tokens", 2000.0), ("context", 0.0)],
        stepcost::ScenarioSpec::default(),
    );
    crate::common::assert_close(predicted, prefill.summary.step_time_s * 1e3, 1e-9);
    let error: f64 = crate::common::cell(&header, &rows[0], "error")
        .parse()
        .unwrap();
    crate::common::assert_close(error, predicted / 20.0 - 1.0, 1e-9);
}
