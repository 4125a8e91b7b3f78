//! `stepcost fit` and `validate --cross-validate`: constants recovered from cases made with
//! known ones, the fragment read back, inputs never written, each source held out once, and
//! bad input refused with a clear error (the fits of the whole measured set, minutes in a debug
//! build, are the `slow` target's `fit` module).

use std::path::Path;

use predicates::prelude::*;
use stepcost::internals::export::fit::fragment;
use stepcost::internals::fit::cross::cross_validate;
use stepcost::internals::fit::{fit_chip, shipped_family, source_of};
use stepcost::internals::validate::{read_cases, validate};
use stepcost::internals::Achievable;
use stepcost::{Chip, Mode, Source};

use crate::common::stepcost;

/// A chip whose `expected` section is `expected`: a slow vector unit so that a triad's
/// compute shows in its time, and a launch cost for small kernels.
fn chip_file(expected: &str) -> String {
    format!(
        "name: Synthetic
family: test-one
memory: {{capacity: 80 GB, bandwidth: 4 TB/s}}
matrix: {{bf16: 1000 TFLOPS, fp16: 1000 TFLOPS, fp8: 2000 TFLOPS}}
vector: {{fp32: 2 TFLOPS, bf16: 4 TFLOPS}}
compute_units: 132
launch: 2 us
expected:
{expected}"
    )
}

const TRUTH: &str = "  matrix: {bf16: 0.7, fp16: 0.7, fp8: 0.6}
  vector: 0.6
  memory: 0.85
  small_m_memory: 0.75
  row_tile: 64
  stream_k: true
  dram_latency: 300 ns
";

const START: &str = "  matrix: {bf16: 0.8, fp16: 0.75, fp8: 0.7}
  vector: 0.9
  memory: 0.9
  small_m_memory: 0.8
  row_tile: 64
  stream_k: true
  dram_latency: 500 ns
";

const HEADER: &str =
    "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n";

/// Cases on `synth` that together reach every constant but the weight-only and fp4 memory
/// fractions, from two sources; the large GEMM in fp16, whose fraction is bf16's.
const SHAPES: [&str; 7] = [
    "A-1,synth.yaml,gemm,m=8192;n=8192;k=8192,weight=fp16;activation=fp16,,,1,attained_tflops",
    "A-2,synth.yaml,gemm,m=8192;n=8192;k=8192,weight=fp8;activation=fp8,,,1,attained_tflops",
    "A-3,synth.yaml,gemm,m=16;n=8192;k=8192,,,,1,step_time_us",
    "B-1,synth.yaml,copy,n=67108864,,,,1,bandwidth_tb_s",
    "B-2,synth.yaml,triad,n=67108864,,,,1,step_time_us",
    "B-3,synth.yaml,copy,n=1024,,,,1,step_time_us",
    "B-4,synth.yaml,gemm,m=4096;n=4096;k=4096,,,,1,step_time_us",
];

/// Writes `synth.yaml` with `expected` and a case file of [`SHAPES`] with `measured` values.
fn write_set(dir: &Path, expected: &str, measured: &[f64]) -> std::path::PathBuf {
    std::fs::write(dir.join("synth.yaml"), chip_file(expected)).unwrap();
    let mut text = HEADER.to_owned();
    for (shape, m) in SHAPES.iter().zip(measured) {
        text.push_str(&format!("{shape},{m},kernel,synthetic,\n"));
    }
    let cases = dir.join("cases.csv");
    std::fs::write(&cases, text).unwrap();
    cases
}

/// Cases measured on the truth chip: its own predictions, written in full.
fn synthetic(dir: &Path) -> std::path::PathBuf {
    let truth_dir = dir.join("truth");
    std::fs::create_dir_all(&truth_dir).unwrap();
    let placeholder = write_set(&truth_dir, TRUTH, &[1.0; 7]);
    let cases = read_cases(&Source::read(&placeholder).unwrap()).unwrap();
    let measured: Vec<f64> = validate(cases, &placeholder, Mode::Expected)
        .iter()
        .map(|o| *o.predicted.as_ref().unwrap())
        .collect();
    write_set(dir, START, &measured)
}

/// `steps` (case rows up to their metric) as a chip file `truth` prices them in expected mode:
/// what a chip with its constants measures.
fn priced_on(dir: &Path, truth: &str, steps: &[&str]) -> Vec<f64> {
    let truth_dir = dir.join("steps");
    std::fs::create_dir_all(&truth_dir).unwrap();
    std::fs::write(truth_dir.join("synth.yaml"), truth).unwrap();
    let placeholder = truth_dir.join("steps.csv");
    let rows: String = steps
        .iter()
        .map(|s| format!("{s},1,decode,other,\n"))
        .collect();
    std::fs::write(&placeholder, format!("{HEADER}{rows}")).unwrap();
    let cases = read_cases(&Source::read(&placeholder).unwrap()).unwrap();
    validate(cases, &placeholder, Mode::Expected)
        .iter()
        .map(|o| *o.predicted.as_ref().unwrap())
        .collect()
}

fn relative(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn a_fit_recovers_the_constants_the_cases_were_made_with() {
    let dir = tempfile::tempdir().unwrap();
    let cases = synthetic(dir.path());
    let out = dir.path().join("fitted.yaml");
    let chip = dir.path().join("synth.yaml");
    stepcost()
        .arg("fit")
        .arg(&cases)
        .arg("--chip")
        .arg(&chip)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("matrix.fp16"))
        .stdout(predicate::str::contains("(matrix.bf16's: one MMA rate)"));
    let text = std::fs::read_to_string(&out).unwrap();
    let fitted = Achievable::load(&Source::from_text("fitted.yaml", &text)).unwrap();
    let truth = Chip::load(&Source::from_text("synth.yaml", &chip_file(TRUTH))).unwrap();
    let truth = truth.expected().unwrap();
    let pairs = [
        (
            fitted.matrix[stepcost::types::DType::Bf16 as usize],
            truth.matrix[stepcost::types::DType::Bf16 as usize],
        ),
        (
            fitted.matrix[stepcost::types::DType::Fp8 as usize],
            truth.matrix[stepcost::types::DType::Fp8 as usize],
        ),
        (Some(fitted.vector), Some(truth.vector)),
        (Some(fitted.memory), Some(truth.memory)),
        (Some(fitted.small_m_memory), Some(truth.small_m_memory)),
        (Some(fitted.dram_latency_s), Some(truth.dram_latency_s)),
    ];
    for (i, (f, t)) in pairs.into_iter().enumerate() {
        let (f, t) = (f.unwrap(), t.unwrap());
        assert!(
            relative(f, t) < 1e-6,
            "constant {i}: fitted {f}, truth {t}\n{text}"
        );
    }
    // fp16's fraction is bf16's, set by the fp16 GEMM with the bf16 ones (the start's 0.75
    // and 0.8 would differ), and the fragment says so.
    let fp16 = fitted.matrix[stepcost::types::DType::Fp16 as usize].unwrap();
    assert_eq!(
        Some(fp16),
        fitted.matrix[stepcost::types::DType::Bf16 as usize]
    );
    assert!(relative(fp16, 0.7) < 1e-6, "{text}");
    assert!(
        text.contains("# matrix.fp16 is matrix.bf16's: the two run the same MMA instructions"),
        "{text}"
    );
    // No case reads weight-only quantised weights: the start's value is kept, and said so.
    assert!(
        text.contains("# kept (no case depends on them): weight_only_memory, fp4_memory"),
        "{text}"
    );
    assert!(
        text.contains("# cases: A-1, A-2, A-3, B-1, B-2, B-3, B-4"),
        "{text}"
    );
}

#[test]
fn the_fragment_loads_back_to_the_fitted_numbers_and_into_a_chip() {
    let path = Path::new("validation/measured.csv");
    let cases = read_cases(&Source::read(path).unwrap()).unwrap();
    // H20's own rows alone: its rows come from one source, so the shipped file holds its
    // family's fit, which this one differs from and improves on for these rows.
    let fit = fit_chip(cases, path, Chip::named("h20").unwrap(), None).unwrap();
    let text = fragment(&fit, "validation/measured.csv");
    let loaded = Achievable::load(&Source::from_text("fragment.yaml", &text)).unwrap();
    assert_eq!(&loaded, &fit.fitted.constants);
    assert_ne!(&loaded, Chip::named("h20").unwrap().expected().unwrap());
    // In place of a chip file's own section, it loads with the chip.
    let file = std::fs::read_to_string("hardware/h20.yaml").unwrap();
    let head = &file[..file.find("\nexpected:").unwrap() + 1];
    let chip = Chip::load(&Source::from_text("h20.yaml", &format!("{head}{text}"))).unwrap();
    assert_eq!(chip.expected(), Some(&loaded));
    // The fit lowered the squared log error it minimises.
    let squares = |outcomes: &[stepcost::internals::validate::Outcome]| -> f64 {
        outcomes
            .iter()
            .map(|o| (1.0 + o.error().unwrap()).ln().powi(2))
            .sum()
    };
    assert!(squares(&fit.after) < squares(&fit.before));
}

#[test]
fn fit_never_writes_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let cases = synthetic(dir.path());
    let chip = dir.path().join("synth.yaml");
    for target in [&cases, &chip] {
        let before = std::fs::read(target).unwrap();
        stepcost()
            .arg("fit")
            .arg(&cases)
            .arg("--chip")
            .arg(&chip)
            .arg("--out")
            .arg(target)
            .assert()
            .failure()
            .stderr(predicate::str::contains("input"));
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
}

#[test]
fn bad_input_is_refused_with_what_was_wrong() {
    let fit = |args: &[&str]| {
        let out = tempfile::tempdir().unwrap();
        let assert = stepcost()
            .args(["fit", "validation/measured.csv"])
            .args(args)
            .arg("--out")
            .arg(out.path().join("x.yaml"))
            .assert()
            .failure()
            .code(1);
        assert!(!out.path().join("x.yaml").exists());
        String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
    };
    let no_rows = fit(&["--chip", "gaudi3"]);
    assert!(
        no_rows.contains("no case in validation/measured.csv is measured on chip `gaudi3`"),
        "{no_rows}"
    );
    assert!(
        no_rows.contains("a100-80gb") && no_rows.contains("nvidia-hopper"),
        "{no_rows}"
    );
    let unknown = fit(&["--chip", "h100-sxn"]);
    assert!(unknown.contains("h100-sxm"), "{unknown}");
    let family = fit(&["--chip", "l40s", "--family", "nvidia-hoper"]);
    assert!(
        family.contains("family `nvidia-hoper` (did you mean `nvidia-hopper`?)"),
        "{family}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(
        &bad,
        format!("{HEADER}X-1,h100-sxm,gemm,m=1,,,,1,attained_tflops,-3,kernel,s,\n"),
    )
    .unwrap();
    stepcost()
        .arg("fit")
        .arg(&bad)
        .args(["--chip", "h100-sxm", "--out"])
        .arg(dir.path().join("x.yaml"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("measured"));
}

#[test]
fn a_family_fit_uses_every_chip_of_the_family() {
    let path = Path::new("validation/measured.csv");
    let cases = read_cases(&Source::read(path).unwrap()).unwrap();
    // Every chip file of the family (hardware/*.yaml with `family: nvidia-hopper`).
    let family = [
        "h100-sxm",
        "h100-pcie",
        "h100-nvl",
        "h200",
        "h200-nvl",
        "h20",
    ];
    let hopper = cases
        .iter()
        .filter(|c| family.contains(&c.chip.as_str()))
        .count();
    let fit = fit_chip(
        cases,
        path,
        Chip::named("h20").unwrap(),
        Some("nvidia-hopper"),
    )
    .unwrap();
    assert_eq!(fit.before.len(), hopper);
    assert_eq!(fit.chip.id(), "h20");
}

/// A constant the chip's own rows do not reach takes what its family's rows say, not the
/// chip file's: here `synth`'s rows (two sources) have no fp8 GEMM, and the fp8 GEMM made
/// with the truth's fraction (0.6) was measured on `twin`, a copy of it in its family.
#[test]
fn a_constant_no_own_row_reaches_takes_the_family_fit() {
    let dir = tempfile::tempdir().unwrap();
    let cases_path = synthetic(dir.path());
    std::fs::write(
        dir.path().join("twin.yaml"),
        chip_file(START).replace("Synthetic", "Twin"),
    )
    .unwrap();
    let text = std::fs::read_to_string(&cases_path).unwrap();
    let fp8_row = text.lines().find(|l| l.starts_with("A-2,")).unwrap();
    let mut rows: Vec<String> = (text.lines())
        .filter(|l| !l.starts_with("A-2,"))
        .map(str::to_owned)
        .collect();
    rows.push(
        fp8_row
            .replacen("A-2,synth.yaml", "C-1,twin.yaml", 1)
            .replacen(",synthetic,", ",other,", 1),
    );
    std::fs::write(&cases_path, rows.join("\n") + "\n").unwrap();
    let cases = read_cases(&Source::read(&cases_path).unwrap()).unwrap();
    let synth = Chip::load(&Source::read(&dir.path().join("synth.yaml")).unwrap()).unwrap();
    let fit = fit_chip(cases, &cases_path, synth, None).unwrap();
    assert_eq!(fit.prior, stepcost::internals::fit::Prior::Family);
    let fp8 = stepcost::internals::fit::Constant::Matrix(stepcost::types::DType::Fp8);
    assert!(fit.fitted.kept.contains(&fp8), "{:?}", fit.fitted);
    let got = fit.fitted.constants.matrix[stepcost::types::DType::Fp8 as usize].unwrap();
    // The start's (and the file's) 0.7 without the family's row.
    assert!(relative(got, 0.6) < 1e-3, "fp8 fraction {got}");
    // What the own rows reach is still theirs: the stream fraction, 0.85 in the truth.
    assert!(relative(fit.fitted.constants.memory, 0.85) < 1e-3);
}

#[test]
fn cross_validation_holds_each_source_out_once() {
    let dir = tempfile::tempdir().unwrap();
    let cases_path = synthetic(dir.path());
    // A third source on a second chip that no other source measured.
    let mut text = std::fs::read_to_string(&cases_path).unwrap();
    text.push_str("C-1,h100-sxm,copy,n=67108864,,,,1,bandwidth_tb_s,2.9,kernel,other,\n");
    std::fs::write(&cases_path, text).unwrap();
    let cases = read_cases(&Source::read(&cases_path).unwrap()).unwrap();
    let cv = cross_validate(cases, &cases_path).unwrap();
    let sources: Vec<&str> = cv.folds.iter().map(|f| f.source.as_str()).collect();
    assert_eq!(sources, ["A", "B", "C"]);
    assert_eq!(cv.folds.iter().map(|f| f.rows).sum::<usize>(), 8);
    // Held out, `synth`'s rows come from one other source: fitted with its family's rows.
    assert!(cv.folds[0].refit.is_empty());
    assert_eq!(
        cv.folds[0].family,
        [("synth".to_owned(), "test-one".to_owned())]
    );
    // No other source measured a Hopper: every chip's fit on the other sources' rows, not the
    // file's constants (which may hold a fit to this very row). Those rows are `synth`'s, made
    // with a stream fraction of 0.85 (TRUTH): the held-out stream moves at that over the
    // file's fraction (less a little: the pooled DRAM latency, 300 ns, is the truth's too).
    assert_eq!(cv.folds[2].unfitted, ["h100-sxm"]);
    let file = Chip::named("h100-sxm").unwrap().expected().unwrap().memory;
    let tb_s = |o: &stepcost::internals::validate::Outcome| *o.predicted.as_ref().unwrap();
    let ratio = tb_s(&cv.held_out[7]) / tb_s(&cv.in_sample[7]);
    let want = 0.85 / file;
    assert!(
        ratio < want * 1.01 && ratio > want * 0.99,
        "{ratio} against {want}"
    );
    // The synthetic rows were made with other constants than the file's: held out, each is
    // predicted with a refit, not the file.
    for i in 0..7 {
        assert_eq!(
            source_of(&cv.held_out[i].case.id),
            &cv.in_sample[i].case.id[..1]
        );
        assert_ne!(
            cv.held_out[i].predicted, cv.in_sample[i].predicted,
            "row {i}"
        );
    }
    let residuals = dir.path().join("band.csv");
    stepcost()
        .args(["validate", "--cross-validate"])
        .arg(&cases_path)
        .arg("--residuals")
        .arg(&residuals)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "C (1 row): h100-sxm from every chip's fit (no other source measured the family)",
        ))
        .stdout(predicate::str::contains("nested coverage"));
    // One residual per row, each ln(measured / predicted) of a time: the stream's bandwidth
    // row inverted (a rate).
    let text = std::fs::read_to_string(&residuals).unwrap();
    let rows = stepcost::internals::band::parse_residuals(&text).unwrap();
    assert_eq!(rows.len(), 8);
    let tb_s = *cv.held_out[7].predicted.as_ref().unwrap();
    assert!((rows[7].ln_time_ratio - (tb_s / 2.9).ln()).abs() < 1e-9);
}

#[test]
fn cross_validation_refuses_what_it_cannot_do() {
    for args in [
        ["--mode", "roofline"],
        ["--format", "csv"],
        ["--columns", "id"],
    ] {
        stepcost()
            .args(["validate", "validation/measured.csv", "--cross-validate"])
            .args(args)
            .assert()
            .failure()
            .code(1)
            .stderr(predicate::str::contains("--cross-validate"));
    }
}

#[test]
fn a_family_name_must_read_as_one() {
    let text = chip_file(TRUTH).replace("family: test-one", "family: NVIDIA Hopper");
    let err = Chip::load(&Source::from_text("synth.yaml", &text)).unwrap_err();
    assert_eq!(err.field(), Some("family"), "{err}");
    assert!(
        err.to_string()
            .contains("`NVIDIA Hopper` is not a family name"),
        "{err}"
    );
}

#[test]
fn the_fragment_goes_to_stdout_and_the_report_to_stderr_with_out_dash() {
    let assert = stepcost()
        .args([
            "fit",
            "validation/measured.csv",
            "--chip",
            "mi300x",
            "--out",
            "-",
        ])
        .assert()
        .success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(out.contains("expected:\n  matrix:"), "{out}");
    assert!(Achievable::load(&Source::from_text("-", &out)).is_ok());
    assert!(
        err.contains("`mi300x` (AMD Instinct MI300X): expected-mode constants fitted to 30 cases"),
        "{err}"
    );
}

#[test]
fn auto_fits_a_chip_alone_only_where_two_sources_measured_it() {
    let path = Path::new("validation/measured.csv");
    let cases = read_cases(&Source::read(path).unwrap()).unwrap();
    // H100 SXM: MAMF, AZ, AO and more sources; H20: the four FAH20 rows alone.
    let h100 = Chip::named("h100-sxm").unwrap();
    assert_eq!(shipped_family(&cases, path, &h100), None);
    let h20 = Chip::named("h20").unwrap();
    assert_eq!(
        shipped_family(&cases, path, &h20).as_deref(),
        Some("nvidia-hopper")
    );
    let dir = tempfile::tempdir().unwrap();
    stepcost()
        .args([
            "fit",
            "validation/measured.csv",
            "--chip",
            "h20",
            "--family",
            "auto",
        ])
        .arg("--out")
        .arg(dir.path().join("h20.yaml"))
        .assert()
        .success()
        .stdout(predicate::str::contains("of chip family `nvidia-hopper`"));
}

/// Kernel rows fix what they reach; a model step fits only what no kernel row reaches. A decode
/// step measured half again slower than the truth prices it (on a chip file without the host
/// constants, nothing prices the slack) leaves every constant the kernel rows set at the
/// truth, where a joint fit would lower the stream fraction to absorb it; a weight-only decode
/// step measured at the truth sets the one constant only it reaches, the weight-only fraction.
#[test]
fn model_steps_fit_only_what_no_kernel_row_reaches() {
    let dir = tempfile::tempdir().unwrap();
    let cases_path = synthetic(dir.path());
    let truth = format!("{TRUTH}  weight_only_memory: 0.7\n");
    let steps = [
        "D-1,synth.yaml,llama-3.1-8b,batch=1;context=1024,,,,1,step_time_us",
        "D-2,synth.yaml,llama-3.1-8b,batch=1;context=1024,weight=int8,,,1,step_time_us",
    ];
    let priced = priced_on(dir.path(), &chip_file(&truth), &steps);
    let mut text = std::fs::read_to_string(&cases_path).unwrap();
    for (shape, (us, slower)) in steps.iter().zip(priced.iter().zip([1.5, 1.0])) {
        text.push_str(&format!("{shape},{},decode,other,\n", us * slower));
    }
    std::fs::write(&cases_path, text).unwrap();
    let cases = read_cases(&Source::read(&cases_path).unwrap()).unwrap();
    let synth = Chip::load(&Source::read(&dir.path().join("synth.yaml")).unwrap()).unwrap();
    let fit = fit_chip(cases, &cases_path, synth, None).unwrap();
    let a = &fit.fitted.constants;
    let bf16 = a.matrix[stepcost::types::DType::Bf16 as usize].unwrap();
    for (name, got, want) in [
        ("memory", a.memory, 0.85),
        ("small_m_memory", a.small_m_memory, 0.75),
        ("vector", a.vector, 0.6),
        ("matrix.bf16", bf16, 0.7),
        ("dram_latency", a.dram_latency_s, 300e-9),
        ("weight_only_memory", a.weight_only_memory, 0.7),
    ] {
        assert!(relative(got, want) < 1e-5, "{name}: {got} against {want}");
    }
    assert_eq!(fit.fitted.cases, 9);
}

/// A serving engine's host work is fitted once, to the model steps with every chip's
/// constants held, and a chip's own fit keeps it there: a decode and a prefill step measured
/// with 400 us of host work each (the truth's `host_step`) give the file's 50 us back as 400
/// us, the kernel rows' constants stay at the truth, and the fragment writes it. A bare loop's
/// step (`engine_host=0`) measured without host work agrees.
#[test]
fn an_engines_host_work_is_fitted_once_to_the_model_steps() {
    let dir = tempfile::tempdir().unwrap();
    let cases_path = synthetic(dir.path());
    let with_host = |section: &str, host: &str| format!("{section}  host_step: {host}\n");
    std::fs::write(
        dir.path().join("synth.yaml"),
        chip_file(&with_host(START, "50 us")),
    )
    .unwrap();
    let steps = [
        "D-1,synth.yaml,llama-3.1-8b,batch=8;context=1024,,,,1,step_time_us",
        "D-2,synth.yaml,llama-3.1-8b,batch=1;tokens=512;context=0,,,,1,step_time_us",
        "E-1,synth.yaml,llama-3.1-8b,batch=1;context=1024;engine_host=0,,,,1,step_time_us",
    ];
    let priced = priced_on(dir.path(), &chip_file(&with_host(TRUTH, "400 us")), &steps);
    let mut text = std::fs::read_to_string(&cases_path).unwrap();
    for (shape, us) in steps.iter().zip(&priced) {
        text.push_str(&format!("{shape},{us},decode,other,\n"));
    }
    std::fs::write(&cases_path, text).unwrap();
    let cases = read_cases(&Source::read(&cases_path).unwrap()).unwrap();
    let synth = Chip::load(&Source::read(&dir.path().join("synth.yaml")).unwrap()).unwrap();
    let fit = fit_chip(cases, &cases_path, synth, None).unwrap();
    let a = &fit.fitted.constants;
    for (name, got, want) in [
        ("host_step", a.host_step_s, 400e-6),
        ("memory", a.memory, 0.85),
        ("small_m_memory", a.small_m_memory, 0.75),
        ("dram_latency", a.dram_latency_s, 300e-9),
    ] {
        assert!(relative(got, want) < 1e-5, "{name}: {got} against {want}");
    }
    // Held at the pooled fit's value in the chip's own fit, not fitted there.
    let held = |c: &stepcost::internals::fit::Constant| c.name() == "host_step";
    assert!(fit.fitted.kept.iter().any(held) && fit.fitted.informed.iter().any(held));
    assert!(!fit.fitted.fitted.iter().any(held));
    assert!(fragment(&fit, "cases.csv").contains("host_step: 4e-4 s"));
}

/// Issue 38: a fit loaded the chip and the workload again for every row and held a copy of
/// each (16 KB and 2.9 ms a row). Now 10,000 rows naming two workloads and one chip load three
/// files in all, and every row holds the one chip.
#[test]
fn rows_share_the_files_they_name() {
    use std::sync::Arc;
    use stepcost::internals::fit::Row;
    use stepcost::internals::validate::Loads;
    let mut text = String::from(HEADER);
    for i in 0..10_000 {
        let workload = if i % 2 == 0 { "gemm" } else { "llama-3.1-8b" };
        let params = if i % 2 == 0 {
            format!("m={};n=4096;k=4096", 1 + i % 512)
        } else {
            format!("batch={}", 1 + i % 64)
        };
        text.push_str(&format!(
            "S-{i},h100-sxm,{workload},{params},,,,1,step_time_us,100,,s,\n"
        ));
    }
    let cases = read_cases(&Source::from_text("cases.csv", &text)).unwrap();
    let mut loads = Loads::default();
    let rows: Vec<Row> = (cases.into_iter())
        .map(|case| Row::new(case, Path::new("cases.csv"), None, &mut loads).unwrap())
        .collect();
    assert_eq!(loads.loaded(), 3);
    assert!(rows.iter().all(|r| Arc::ptr_eq(&r.chip, &rows[0].chip)));
    // Each row's, the prepared case's own handle, and the one `loads` keeps.
    assert_eq!(Arc::strong_count(&rows[0].chip), 2 * rows.len() + 1);
}
