//! `stepcost ingest`: the three serving benchmarks' own results (real outputs from public
//! repositories, each named with its source in `tests/fixtures/ingest/README.md`) become
//! serving cases that `validate` prices; `plan` and `serving --emit-bench` write the benchmark
//! of an answer; `fit --new-chip` writes a chip file from a probe's rows; `probe` names what to
//! install when its interpreter lacks it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::stepcost;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ingest")
        .join(name)
}

/// `ingest FIXTURE ARGS` into a case file in `dir`; its CSV rows (comment line left out).
fn ingest(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, Vec<csv::StringRecord>) {
    let out = dir.join(format!("{name}.csv"));
    stepcost()
        .arg("ingest")
        .arg(fixture(name))
        .args(args)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert_eq!(
        header.iter().collect::<Vec<_>>(),
        [
            "id", "chip", "workload", "params", "dtypes", "fusion", "request", "tp", "metric",
            "measured", "kind", "source", "engine", "version", "library", "harness", "notes"
        ]
    );
    (out, reader.records().map(Result::unwrap).collect())
}

/// `validate FILE --format json`: every serving row priced, the overall figure finite.
fn priced(file: &Path, rows: usize) -> Value {
    let out = stepcost()
        .args(["validate", "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = report["serving_cases"].as_array().unwrap();
    assert_eq!(cases.len(), rows);
    for c in cases {
        let predicted = c["predicted"].as_f64();
        assert!(predicted.is_some_and(|p| p.is_finite() && p > 0.0), "{c}");
    }
    let all = &report["serving_errors"][0];
    assert_eq!(all["group"], "all serving");
    assert!(all["median_abs_error"].as_f64().unwrap().is_finite());
    report
}

fn cell(row: &csv::StringRecord, i: usize) -> &str {
    row.get(i).unwrap()
}

#[test]
fn a_vllm_bench_serve_result_becomes_serving_rows_that_validate_prices() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--chip",
        "h100-sxm",
        "--workload",
        "llama-3.1-70b",
        "--tp",
        "8",
        "--id",
        "VB",
    ];
    let (file, rows) = ingest(dir.path(), "vllm-bench-serve.json", &args);
    // Output and request throughput, mean TTFT and TPOT; no end-to-end figure in this version.
    let metrics: Vec<&str> = rows.iter().map(|r| cell(r, 8)).collect();
    assert_eq!(
        metrics,
        [
            "output_tokens_per_s",
            "requests_per_s",
            "ttft_ms",
            "tpot_ms"
        ]
    );
    for r in &rows {
        // 42659 input and 42449 output tokens over 200 requests, at 4 requests/s.
        assert_eq!(cell(r, 6), "in=213;out=212");
        assert_eq!(cell(r, 3), "rate=4");
        assert_eq!(
            (cell(r, 7), cell(r, 10), cell(r, 12)),
            ("8", "serving", "vllm")
        );
        assert_eq!(cell(r, 15), "vllm bench serve");
    }
    assert_eq!(cell(&rows[0], 9).parse::<f64>().unwrap(), 673.9184869835061);
    assert_eq!(
        cell(&rows[3], 9).parse::<f64>().unwrap(),
        27.083319078977674
    );
    assert_eq!(cell(&rows[0], 0), "VB-1");
    priced(&file, 4);
}

#[test]
fn sglang_bench_serving_json_lines_become_a_run_each() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--chip",
        "h200",
        "--workload",
        "llama-3.1-70b",
        "--tp",
        "4",
        "--id",
        "SB",
    ];
    let (file, rows) = ingest(dir.path(), "sglang-bench-serving.jsonl", &args);
    // Three runs, each with output throughput, median TTFT and mean end-to-end latency.
    assert_eq!(rows.len(), 9);
    let loads: Vec<&str> = rows.iter().map(|r| cell(r, 3)).collect();
    assert_eq!(loads[0], "rate=1");
    assert_eq!(loads[3], "rate=2");
    assert_eq!(loads[6], "rate=4");
    // 152612 / 300 = 508.7 and 160347 / 300 = 534.49 input and output tokens per request.
    assert_eq!(cell(&rows[0], 6), "in=509;out=534");
    assert_eq!(cell(&rows[1], 8), "ttft_ms");
    assert!(
        cell(&rows[1], 16).starts_with("median ttft_ms"),
        "{:?}",
        rows[1]
    );
    assert_eq!(cell(&rows[2], 8), "e2e_s");
    assert_eq!(cell(&rows[2], 9).parse::<f64>().unwrap(), 7.840616212638561);
    assert!(rows.iter().all(|r| cell(r, 12) == "sglang"));
    priced(&file, 9);
}

#[test]
fn a_genai_perf_export_becomes_serving_rows_at_its_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--chip",
        "h100-sxm",
        "--workload",
        "llama-3.1-8b",
        "--engine",
        "trtllm",
        "--id",
        "GP",
    ];
    let (file, rows) = ingest(dir.path(), "genai-perf-export.json", &args);
    let metrics: Vec<&str> = rows.iter().map(|r| cell(r, 8)).collect();
    assert_eq!(
        metrics,
        [
            "output_tokens_per_s",
            "requests_per_s",
            "ttft_ms",
            "tpot_ms",
            "e2e_s"
        ]
    );
    for r in &rows {
        assert_eq!(cell(r, 3), "concurrency=100");
        // Mean input 200.85 and output 2565.855 tokens per request.
        assert_eq!(cell(r, 6), "in=201;out=2566");
        assert_eq!(cell(r, 12), "trtllm");
    }
    // The request latency's mean, 5767.43 ms, in seconds.
    assert_eq!(cell(&rows[4], 9).parse::<f64>().unwrap(), 5.767434807386666);
    priced(&file, 5);
}

#[test]
fn ingest_refuses_what_no_benchmark_writes_and_never_writes_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(&other, "{\"hello\": 1}\n").unwrap();
    let base = ["ingest", "--chip", "h200", "--workload", "llama-3.1-8b"];
    let out = stepcost().args(base).arg(&other).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("other.json:1") && err.contains("model_id"),
        "{err}"
    );
    let copy = dir.path().join("r.json");
    std::fs::copy(fixture("vllm-bench-serve.json"), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    stepcost()
        .args(base)
        .arg(&copy)
        .arg("--out")
        .arg(&copy)
        .assert()
        .failure();
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

/// A probe's case file: a device line, streams, small and large elementwise adds, GEMMs.
const PROBE: &str = "# probe-device: name=Test CPU; chip=cpu-test; memory_bytes=17179869184; cache_bytes=33554432; backend=numpy
id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,engine,version,library,harness,notes
PROBE-S1,cpu-test,copy,n=16777216;launch_mode=2,activation=fp32,,,1,bandwidth_tb_s,0.02,kernel,probe,,,stream,stepcost probe,
PROBE-S2,cpu-test,copy,n=33554432;launch_mode=2,activation=fp32,,,1,bandwidth_tb_s,0.025,kernel,probe,,,stream,stepcost probe,
PROBE-E1,cpu-test,elementwise,n=1024;launch_mode=2,activation=fp32,,,1,step_time_us,3.5,kernel,probe,,,stream,stepcost probe,
PROBE-E2,cpu-test,elementwise,n=16777216;launch_mode=2,activation=fp32,,,1,step_time_us,6000,kernel,probe,,,stream,stepcost probe,
PROBE-G1,cpu-test,gemm,m=1024;n=1024;k=1024;launch_mode=2,weight=fp32;activation=fp32,,,1,attained_tflops,0.9,kernel,probe,,,framework-linear,stepcost probe,
PROBE-G2,cpu-test,gemm,m=2048;n=2048;k=2048;launch_mode=2,weight=fp32;activation=fp32,,,1,attained_tflops,1.2,kernel,probe,,,framework-linear,stepcost probe,
PROBE-G3,cpu-test,gemm,m=64;n=2048;k=2048;launch_mode=2,weight=fp32;activation=fp32,,,1,attained_tflops,0.4,kernel,probe,,,framework-linear,stepcost probe,
";

#[test]
fn fit_new_chip_writes_a_chip_file_from_the_probe_s_own_peaks() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("probe.csv");
    std::fs::write(&cases, PROBE).unwrap();
    let chip_file = dir.path().join("cpu-test.yaml");
    stepcost()
        .args(["fit", "--new-chip", "cpu-test", "--out"])
        .arg(&chip_file)
        .arg(&cases)
        .assert()
        .success();
    let text = std::fs::read_to_string(&chip_file).unwrap();
    // The largest GEMM rate, the fastest copy, the launch under 1 ms, the device's memory.
    assert!(text.contains("matrix: {fp32: 1.2 TFLOPS}"), "{text}");
    assert!(text.contains("bandwidth: 0.025 TB/s"), "{text}");
    assert!(text.contains("launch: 3.5 us"), "{text}");
    assert!(text.contains("capacity: 17179869184 B"), "{text}");
    assert!(text.contains("name: \"Test CPU\""), "{text}");
    assert!(text.contains("\nexpected:\n"), "{text}");
    stepcost().arg("check").arg(&chip_file).assert().success();
    // `validate` finds the chip file beside the case file by the rows' chip id.
    let out = stepcost()
        .args(["validate", "--format", "json"])
        .arg(&cases)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 7);
    assert!(
        cases.iter().all(|c| c["predicted"].as_f64().is_some()),
        "{report}"
    );
    // Without the device line there is no capacity: refused, naming the line.
    let bare = dir.path().join("bare.csv");
    std::fs::write(&bare, PROBE.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let out = stepcost()
        .args(["fit", "--new-chip", "cpu-test", "--out", "-"])
        .arg(&bare)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("# probe-device:"));
}

#[cfg(unix)]
#[test]
fn probe_names_what_to_install_when_python_lacks_it() {
    let out = stepcost()
        .args(["probe", "--python", "/nonexistent/python3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no Python interpreter") && err.contains("--python"),
        "{err}"
    );
    // An interpreter that has neither numpy nor stepcost (its check prints both names).
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("python3");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho numpy\necho stepcost\necho stepcost.probe\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = stepcost()
        .args(["probe", "--python"])
        .arg(&fake)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pip install numpy") && err.contains("maturin build"),
        "{err}"
    );
}

/// The words of a script's command line (its last line).
fn command_of(dir: &Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    assert!(text.starts_with("#!/bin/sh\n"), "{text}");
    let line = text.lines().last().unwrap();
    line.split_whitespace().map(str::to_owned).collect()
}

/// The value after `flag` in `words`.
fn flag<'a>(words: &'a [String], flag: &str) -> &'a str {
    let i = words.iter().position(|w| w == flag);
    let i = i.unwrap_or_else(|| panic!("no {flag} in {words:?}"));
    &words[i + 1]
}

#[test]
fn plan_emit_bench_writes_launch_and_benchmark_commands_that_match_the_plan_s_row() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("bench");
    let plan = [
        "plan",
        "llama-3.1-8b",
        "--rate",
        "5",
        "--request",
        "in=1000,out=200",
        "--chip",
        "h100-sxm",
    ];
    let out = stepcost()
        .args(plan)
        .args(["--format", "json", "--emit-bench"])
        .arg(&bench)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &rows[0];
    let u = |k: &str| row[k].as_u64().unwrap().to_string();
    let (tp, seqs, instances) = (
        u("chips_per_instance"),
        u("max_concurrency"),
        row["instances"].as_f64().unwrap(),
    );
    // The rate each instance is benchmarked at: its share of the fleet's 5 requests/s.
    let share = 5.0 / instances;

    let vllm = command_of(&bench, "launch-vllm.sh");
    assert_eq!(vllm[..2], ["vllm", "serve"]);
    assert_eq!(flag(&vllm, "--tensor-parallel-size"), tp);
    assert_eq!(flag(&vllm, "--max-num-seqs"), seqs);
    let vb = command_of(&bench, "bench-vllm.sh");
    assert_eq!(vb[..3], ["vllm", "bench", "serve"]);
    assert_eq!(flag(&vb, "--random-input-len"), "1000");
    assert_eq!(flag(&vb, "--random-output-len"), "200");
    assert_eq!(flag(&vb, "--request-rate").parse::<f64>().unwrap(), share);
    assert_eq!(flag(&vb, "--result-filename"), "vllm-result.json");

    let sglang = command_of(&bench, "launch-sglang.sh");
    assert_eq!(flag(&sglang, "--tp-size"), tp);
    assert_eq!(flag(&sglang, "--max-running-requests"), seqs);
    let sb = command_of(&bench, "bench-sglang.sh");
    assert_eq!(sb[..3], ["python3", "-m", "sglang.bench_serving"]);
    assert_eq!(flag(&sb, "--random-input-len"), "1000");
    assert_eq!(flag(&sb, "--random-output-len"), "200");
    assert_eq!(flag(&sb, "--request-rate").parse::<f64>().unwrap(), share);

    let trt = command_of(&bench, "launch-trtllm.sh");
    assert_eq!(flag(&trt, "--tp_size"), tp);
    assert_eq!(flag(&trt, "--max_batch_size"), seqs);
    let gb = command_of(&bench, "bench-trtllm.sh");
    assert_eq!(gb[..2], ["genai-perf", "profile"]);
    assert_eq!(flag(&gb, "--synthetic-input-tokens-mean"), "1000");
    assert_eq!(flag(&gb, "--output-tokens-mean"), "200");
    assert_eq!(flag(&gb, "--request-rate").parse::<f64>().unwrap(), share);

    // The README names the figures to compare, the plan's own numbers.
    let readme = std::fs::read_to_string(bench.join("README.md")).unwrap();
    let ttft = format!("{:.1} ms", row["ttft_ms"].as_f64().unwrap());
    assert!(readme.contains(&ttft), "{readme}");
    assert!(readme.contains("stepcost ingest RESULT --chip h100-sxm --workload llama-3.1-8b"));

    // A second run refuses the directory it would write over, and leaves it as it was.
    let before = std::fs::read(bench.join("bench-vllm.sh")).unwrap();
    let again = stepcost()
        .args(plan)
        .arg("--emit-bench")
        .arg(&bench)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    assert_eq!(std::fs::read(bench.join("bench-vllm.sh")).unwrap(), before);
}

#[test]
fn serving_emit_bench_benchmarks_the_first_row_at_its_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("b");
    std::fs::create_dir(&bench).unwrap(); // an empty directory is taken
    stepcost()
        .args([
            "serving",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--request",
            "in=512,out=128",
        ])
        .args(["--concurrency", "32", "--emit-bench"])
        .arg(&bench)
        .assert()
        .success();
    let vb = command_of(&bench, "bench-vllm.sh");
    assert_eq!(flag(&vb, "--max-concurrency"), "32");
    assert_eq!(flag(&vb, "--random-input-len"), "512");
    let gb = command_of(&bench, "bench-trtllm.sh");
    assert_eq!(flag(&gb, "--concurrency"), "32");
    assert_eq!(
        flag(&command_of(&bench, "launch-vllm.sh"), "--max-num-seqs"),
        "32"
    );
}
