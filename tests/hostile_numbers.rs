//! Hostile numbers: the catalogue's "numeric extremes" section. Every chip field at the
//! minimum and the maximum of its physical range (`stepcost::internals::ranges`) is accepted
//! and goes through `check`, `run`, `plot roofline` and `report` without a hang or a panic;
//! just outside its range it is refused with the field named. Flags refuse what is not a
//! finite number in range, counts never saturate, and a picture that cannot be drawn is an
//! error, never a hang. Each command runs in a temp folder whose files are compared before
//! and after: only the intended output may change.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use stepcost::internals::ranges::{self, Range};

use crate::common::snapshot;
use crate::common::stepcost;

/// A bound, not a measure: every command here takes milliseconds; a hang fails at 20 s.
const TIMEOUT: Duration = Duration::from_secs(20);

/// What one command did: its exit status and stderr.
struct Outcome {
    code: i32,
    stderr: String,
}

/// Runs stepcost with `args` in `dir` within [`TIMEOUT`], and asserts that no file but those
/// in `writes` (names in `dir`) was created, changed or removed.
fn run_in(dir: &Path, args: &[&str], writes: &[&str]) -> Outcome {
    let before = snapshot(dir);
    let output = stepcost()
        .current_dir(dir)
        .args(args)
        .timeout(TIMEOUT)
        .output()
        .unwrap();
    let code = output.status.code().unwrap_or_else(|| {
        panic!(
            "`stepcost {}` did not finish (a hang or a signal)",
            args.join(" ")
        )
    });
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut after = snapshot(dir);
    for name in writes {
        after.remove(Path::new(name));
    }
    let mut before = before;
    for name in writes {
        before.remove(Path::new(name));
    }
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "`stepcost {}` changed the folder's files",
        args.join(" ")
    );
    assert!(
        before == after,
        "`stepcost {}` changed a file",
        args.join(" ")
    );
    Outcome { code, stderr }
}

/// Asserts a refusal: exit 1, every text of `expected` in the message, and nothing written.
fn refused(dir: &Path, args: &[&str], expected: &[&str]) {
    let out = run_in(dir, args, &[]);
    assert_eq!(out.code, 1, "`stepcost {}`: {}", args.join(" "), out.stderr);
    for text in expected {
        assert!(
            out.stderr.contains(text),
            "`stepcost {}`: `{text}` not in: {}",
            args.join(" "),
            out.stderr
        );
    }
}

/// Asserts a command finished as success or as a clear refusal (exit 1 with an `error:`
/// message), never a panic (exit 2) or a hang.
fn finished(dir: &Path, args: &[&str], writes: &[&str]) -> i32 {
    let out = run_in(dir, args, writes);
    let clear = out.code == 0 || (out.code == 1 && out.stderr.starts_with("error:"));
    assert!(
        clear,
        "`stepcost {}` ({}): {}",
        args.join(" "),
        out.code,
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out.code
}

/// The chip fields with the text each takes, a full H100-like chip by default.
const CHIP_FIELDS: &[(&str, &str)] = &[
    ("memory.capacity", "80e9 B"),
    ("memory.marketed_capacity", "80e9 B"),
    ("memory.reserve", "2e9 B"),
    ("memory.bandwidth", "3.35e12 B/s"),
    ("matrix.TYPE", "989e12 FLOP/s"),
    ("vector.TYPE", "134e12 FLOP/s"),
    ("sfu", "3.9e12 FLOP/s"),
    ("cache.size", "50e6 B"),
    ("cache.bandwidth", "10e12 B/s"),
    ("compute_units", "132"),
    ("launch", "1.26e-6 s"),
    ("eager_launch", "2.43e-6 s"),
    ("interconnect.bandwidth", "450e9 B/s"),
    ("interconnect.domain", "8"),
    ("interconnect.latency", "2e-6 s"),
    ("interconnect.link_bandwidth", "64e9 B/s"),
    ("interconnect.expected", "0.75"),
    ("network.bandwidth", "50e9 B/s"),
    ("network.latency", "5e-6 s"),
    ("power", "700 W"),
    ("price.cloud", "3.78 USD/h"),
    ("price.purchase", "30000 USD"),
    ("price.purchase_gpus", "8"),
    ("expected.matrix.TYPE", "0.8"),
    ("expected.vector", "0.9"),
    ("expected.memory", "0.89"),
    ("expected.small_m_memory", "0.8"),
    ("expected.attention_memory", "0.9"),
    ("expected.exp_overlap", "0.41"),
    ("expected.weight_only_memory", "0.9"),
    ("expected.fp4_memory", "0.9"),
    ("expected.fp16_clock", "0.92"),
    ("expected.split_k", "8"),
    ("expected.row_tile", "64"),
    ("expected.cta_tiles", "128"),
    ("expected.cta_pair_rows", "256"),
    ("expected.dram_latency", "0.4e-6 s"),
    ("expected.host_step", "2e-4 s"),
    ("expected.host_sequence", "1e-5 s"),
];

/// A chip file with every field, `values` replacing the defaults (`TYPE` is bf16).
fn chip_text(values: &BTreeMap<&str, String>) -> String {
    let v = |field: &str| -> String {
        values.get(field).cloned().unwrap_or_else(|| {
            let (_, default) = CHIP_FIELDS.iter().find(|(f, _)| *f == field).unwrap();
            (*default).to_owned()
        })
    };
    format!(
        "name: extreme\n\
         memory: {{capacity: {}, marketed_capacity: {}, reserve: {}, bandwidth: {}}}\n\
         matrix: {{bf16: {}, fp8: 1979e12 FLOP/s}}\n\
         vector: {{fp32: 67e12 FLOP/s, bf16: {}}}\n\
         sfu: {}\n\
         cache: {{size: {}, bandwidth: {}}}\n\
         compute_units: {}\n\
         launch: {}\n\
         eager_launch: {}\n\
         interconnect: {{fabric: mesh, bandwidth: {}, domain: {}, latency: {}, link_bandwidth: {}, \
         expected: {{2: {}}}}}\n\
         network: {{bandwidth: {}, latency: {}}}\n\
         power: {}\n\
         price: {{basis: extreme 2026-01-01, cloud: {}, purchase: {}, purchase_gpus: {}}}\n\
         expected:\n  matrix: {{bf16: {}, fp8: 0.71}}\n  vector: {}\n  memory: {}\n  \
         small_m_memory: {}\n  attention_memory: {}\n  exp_overlap: {}\n  weight_only_memory: {}\n  fp4_memory: {}\n  fp16_clock: {}\n  split_k: {}\n  cta_pair_rows: {}\n  \
         row_tile: {}\n  cta_tiles: [[{}, 128], [128, 256]]\n  stream_k: true\n  dram_latency: {}\n  host_step: {}\n  host_sequence: {}\n",
        v("memory.capacity"),
        v("memory.marketed_capacity"),
        v("memory.reserve"),
        v("memory.bandwidth"),
        v("matrix.TYPE"),
        v("vector.TYPE"),
        v("sfu"),
        v("cache.size"),
        v("cache.bandwidth"),
        v("compute_units"),
        v("launch"),
        v("eager_launch"),
        v("interconnect.bandwidth"),
        v("interconnect.domain"),
        v("interconnect.latency"),
        v("interconnect.link_bandwidth"),
        v("interconnect.expected"),
        v("network.bandwidth"),
        v("network.latency"),
        v("power"),
        v("price.cloud"),
        v("price.purchase"),
        v("price.purchase_gpus"),
        v("expected.matrix.TYPE"),
        v("expected.vector"),
        v("expected.memory"),
        v("expected.small_m_memory"),
        v("expected.attention_memory"),
        v("expected.exp_overlap"),
        v("expected.weight_only_memory"),
        v("expected.fp4_memory"),
        v("expected.fp16_clock"),
        v("expected.split_k"),
        v("expected.cta_pair_rows"),
        v("expected.row_tile"),
        v("expected.cta_tiles"),
        v("expected.dram_latency"),
        v("expected.host_step"),
        v("expected.host_sequence"),
    )
}

/// How a field's value is written: a quantity in its SI unit, a count, or a fraction.
fn written(range: &Range, value: f64) -> String {
    if !range.unit.is_empty() {
        format!("{value:e} {}", range.unit)
    } else if range.max == 1.0 {
        format!("{value:?}")
    } else {
        format!("{}", value as u64)
    }
}

/// The field as a diagnostic names it (`matrix.TYPE` is written as bf16).
fn named(range: &Range) -> String {
    range.field.replace("TYPE", "bf16")
}

/// The values just outside a range: a millionth below and above for a quantity or a
/// fraction, one less and one more for a count.
fn outside(range: &Range) -> [f64; 2] {
    if range.unit.is_empty() && range.max > 1.0 {
        [range.min - 1.0, range.max + 1.0]
    } else if range.max == 1.0 {
        [range.min * (1.0 - 1e-6), range.max + 1e-6]
    } else {
        [range.min * (1.0 - 1e-6), range.max * (1.0 + 1e-6)]
    }
}

/// `check`, `run`, `plot roofline` and `report` on the chip file `name` in `dir`: each exits
/// 0 or refuses clearly, writing only its own output, within the timeout.
fn through_every_command(dir: &Path, name: &str) {
    let ok = run_in(dir, &["check", name], &[]);
    assert_eq!(ok.code, 0, "check {name}: {}", ok.stderr);
    let scenario = ["llama-3.1-8b", "--chip", name, "--set", "tp=2"];
    let run: Vec<&str> = ["run"].iter().chain(&scenario).copied().collect();
    finished(dir, &[&run[..], &["--per-op"]].concat(), &[]);
    let plot: Vec<&str> = ["plot", "roofline"]
        .iter()
        .chain(&scenario)
        .copied()
        .collect();
    finished(dir, &[&plot[..], &["--out", "r.svg"]].concat(), &["r.svg"]);
    let report: Vec<&str> = ["report"].iter().chain(&scenario).copied().collect();
    let md = [&report[..], &["--out", "z.md"]].concat();
    finished(dir, &md, &["z.md", "z.svg"]);
    finished(
        dir,
        &[&report[..], &["--out", "z.html"]].concat(),
        &["z.html"],
    );
    for output in ["r.svg", "z.md", "z.svg", "z.html"] {
        let _ = std::fs::remove_file(dir.join(output));
    }
}

/// The catalogue's numeric extremes: each chip field at the minimum and the maximum of its
/// range is accepted and goes through every command; just outside, it is refused with the
/// field named and nothing written.
#[test]
fn every_chip_field_at_the_extremes_of_its_range() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        ranges::CHIP.len(),
        CHIP_FIELDS.len(),
        "a chip range without a value here"
    );
    for range in ranges::CHIP {
        assert!(
            CHIP_FIELDS.iter().any(|(f, _)| *f == range.field),
            "{}: no default value in CHIP_FIELDS",
            range.field
        );
        for (end, value) in [("min", range.min), ("max", range.max)] {
            let name = format!("{}-{end}.yaml", range.field.replace('.', "-"));
            let values = BTreeMap::from([(range.field, written(range, value))]);
            std::fs::write(dir.path().join(&name), chip_text(&values)).unwrap();
            through_every_command(dir.path(), &name);
        }
        for value in outside(range) {
            let name = format!("{}-out.yaml", range.field.replace('.', "-"));
            let values = BTreeMap::from([(range.field, written(range, value))]);
            std::fs::write(dir.path().join(&name), chip_text(&values)).unwrap();
            let field = format!("field `{}`", named(range));
            refused(dir.path(), &["check", &name], &[&name, &field]);
            let run = ["run", "gemm", "--chip", &name, "--out", "o.csv"];
            refused(dir.path(), &run, &[&name, &field]);
        }
    }
}

/// Every field at once at the end of its range that makes a chip slowest (least rate and
/// size, most time, least fraction), then fastest: both go through every command.
#[test]
fn chips_at_every_extreme_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let slow_end = |r: &Range| {
        let more_is_slower = r.unit == "s" || r.field.starts_with("price.") || r.field == "power";
        if more_is_slower {
            r.max
        } else {
            r.min
        }
    };
    let fast_end = |r: &Range| {
        if slow_end(r) == r.max {
            r.min
        } else {
            r.max
        }
    };
    for (name, end) in [
        ("slowest.yaml", &slow_end as &dyn Fn(&Range) -> f64),
        ("fastest.yaml", &fast_end),
        ("smallest.yaml", &|r: &Range| r.min),
        ("largest.yaml", &|r: &Range| r.max),
    ] {
        let values = ranges::CHIP
            .iter()
            .map(|r| (r.field, written(r, end(r))))
            .collect();
        std::fs::write(dir.path().join(name), chip_text(&values)).unwrap();
        through_every_command(dir.path(), name);
    }
}

/// Defect 4: an absurd `expected.dram_latency` (1e300 s) made `plot roofline` and `report`
/// hang while `check` and `run` accepted it; it is now refused at load, by every command.
#[test]
fn an_absurd_dram_latency_is_refused_at_load_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let values = BTreeMap::from([("expected.dram_latency", "1e300 s".to_owned())]);
    std::fs::write(dir.path().join("slow.yaml"), chip_text(&values)).unwrap();
    let expected = [
        "slow.yaml:",
        "field `expected.dram_latency`",
        "`1e300 s` is out of range: expected from 1 ns to 1 ms",
    ];
    refused(dir.path(), &["check", "slow.yaml"], &expected);
    let scenario = ["llama-3.1-70b", "--chip", "slow.yaml"];
    for command in [
        &["run"][..],
        &["plot", "roofline"],
        &["report"],
        &["compare"],
    ] {
        let out = if command == ["report"] {
            "z.md"
        } else {
            "z.out"
        };
        let args = [command, &scenario, &["--out", out]].concat();
        refused(dir.path(), &args, &expected);
    }
    // and a bandwidth of 1e-300 B/s, the other end
    let values = BTreeMap::from([("memory.bandwidth", "1e-300 B/s".to_owned())]);
    std::fs::write(dir.path().join("thin.yaml"), chip_text(&values)).unwrap();
    refused(
        dir.path(),
        &["check", "thin.yaml"],
        &["field `memory.bandwidth`", "`1e-300 B/s` is out of range"],
    );
}

/// Defect 3: `plot sweep` of values near f64's largest (stepcost's own sweep output, GEMMs
/// of 4.44e102 on a side) hung inside plotters; it is now an error naming the column, on
/// every kind of axis, and the CSV is left as it was.
#[test]
fn plot_sweep_of_values_near_the_largest_float_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = [
        "sweep",
        "gemm",
        "--chip",
        "h100-sxm",
        "--set",
        "m=1,4.44e102",
        "--set",
        "n=4.44e102",
        "--set",
        "k=4.44e102",
        "--mode",
        "roofline",
        "--out",
        "s.csv",
    ];
    assert_eq!(run_in(dir.path(), &sweep, &["s.csv"]).code, 0);
    let csv = std::fs::read_to_string(dir.path().join("s.csv")).unwrap();
    assert!(csv.contains("1.75056768e308"), "{csv}");
    for axes in [&[][..], &["--log-y"], &["--log-x", "--log-y"]] {
        let plot = [
            "plot",
            "sweep",
            "s.csv",
            "--x",
            "m",
            "--y",
            "flops",
            "--include-unfit",
        ];
        let args = [&plot[..], axes, &["--out", "p.svg"]].concat();
        refused(
            dir.path(),
            &args,
            &[
                "cannot draw the picture: column `flops` runs from",
                "to 1.75e308",
                "axis holds values",
            ],
        );
    }
}

/// Values at the ends of what an axis holds (1e300 in magnitude, 300 decades on a log axis)
/// are drawn, the room around them clamped; past them the chart is refused, never hung.
#[test]
fn plot_sweep_draws_up_to_the_axis_limits_and_refuses_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let drawn = [
        ("-1e300", "1e300", &[][..]),
        ("1e-300", "0.1", &["--log-x", "--log-y"]),
        ("1e-150", "1e149", &["--log-x", "--log-y"]),
        ("1e300", "1e300", &["--log-y"]),
        ("5", "5", &[]),
    ];
    for (a, b, axes) in drawn {
        std::fs::write(dir.path().join("e.csv"), format!("x,y\n{a},{a}\n{b},{b}\n")).unwrap();
        let plot = ["plot", "sweep", "e.csv", "--x", "x", "--y", "y"];
        let args = [&plot[..], axes, &["--out", "e.svg"]].concat();
        let out = run_in(dir.path(), &args, &["e.svg"]);
        assert_eq!(out.code, 0, "{a}..{b} {axes:?}: {}", out.stderr);
        let svg = std::fs::read_to_string(dir.path().join("e.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(
            svg.len() < 1 << 20,
            "{a}..{b}: a {} byte picture",
            svg.len()
        );
        std::fs::remove_file(dir.path().join("e.svg")).unwrap();
    }
    let refusals = [
        (
            "1",
            "1.7e308",
            &[][..],
            "a linear axis holds values up to 1e300",
        ),
        ("1e-300", "1e300", &["--log-y"], "at most 300 decades apart"),
        ("5e-324", "1", &["--log-y"], "from 1e-300 to 1e300"),
    ];
    for (a, b, axes, why) in refusals {
        std::fs::write(dir.path().join("e.csv"), format!("x,y\n1,{a}\n2,{b}\n")).unwrap();
        let plot = ["plot", "sweep", "e.csv", "--x", "x", "--y", "y"];
        let args = [&plot[..], axes, &["--out", "e.svg"]].concat();
        refused(dir.path(), &args, &["column `y` runs from", why]);
    }
}

/// Defect 11: numbers on the command line are finite and inside their ranges, or refused
/// with the flag named; before, `--max-ms-per-token NaN` silently planned without a bound.
#[test]
fn flags_refuse_numbers_that_are_not_finite_or_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let plan = ["plan", "llama-3.1-8b", "--chip", "h100-sxm"];
    let target = ["--target-tokens-per-s", "1000"];
    let cases: &[(&[&str], &str)] = &[
        (&["--max-ms-per-token", "NaN"], "not a finite number"),
        (&["--max-ms-per-token", "inf"], "not a finite number"),
        (&["--max-ms-per-token=-5"], "out of range"),
        (&["--max-ms-per-token", "0"], "out of range"),
        (&["--max-ms-per-token", "1e300"], "out of range"),
        (&["--context", "NaN"], "not a whole number"),
        (&["--context=-1"], "too small"),
        (&["--context", "2.5"], "not a whole number"),
        (&["--context", "1e300"], "too large"),
    ];
    for (flag, why) in cases {
        let args = [&plan[..], &target, flag, &["--out", "p.csv"]].concat();
        refused(
            dir.path(),
            &args,
            &[flag[0].split('=').next().unwrap(), why],
        );
    }
    for (value, why) in [
        ("NaN", "not a finite number"),
        ("-inf", "not a finite number"),
        ("0", "out of range"),
        ("1e308", "out of range"),
    ] {
        let flag = format!("--target-tokens-per-s={value}");
        let args = [&plan[..], &[flag.as_str(), "--out", "p.csv"]].concat();
        refused(dir.path(), &args, &["--target-tokens-per-s", why, "10^12"]);
    }
    let run = [
        "run",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--out",
        "r.csv",
    ];
    for request in ["in=2000000000,out=1", "in=1,out=18446744073709551615"] {
        let args = [&run[..], &["--request", request]].concat();
        refused(dir.path(), &args, &["--request", "out of range", "10^9"]);
    }
    let sweep = ["sweep", "gemm", "--chip", "h100-sxm", "--out", "s.csv"];
    for (value, why) in [
        ("0", "too small"),
        ("1.5", "not a whole number"),
        ("NaN", "whole"),
    ] {
        let args = [&sweep[..], &["--max-scenarios", value]].concat();
        refused(dir.path(), &args, &["--max-scenarios", why]);
    }
    // in range, written as people write counts
    let args = [&sweep[..], &["--max-scenarios", "1e9"]].concat();
    assert_eq!(run_in(dir.path(), &args, &["s.csv"]).code, 0);
    let args = [
        &plan[..],
        &target,
        &["--max-ms-per-token", "50", "--context", "4096"],
    ]
    .concat();
    assert_eq!(run_in(dir.path(), &args, &[]).code, 0);
}

const SLOW_WORKLOAD: &str = "name: slow
params: {batch: 1, tokens: 1}
tokens_per_step: batch * tokens
sequences: batch
tensors:
  x: {role: activation, shape: [batch * tokens, 1000000000]}
blocks:
  - name: b
    repeat: 1000000000
    ops:
      - elementwise: {name: e, of: [x], flops_per_element: 1}
";

/// Defect 12: counts are checked integers, never saturated at 2^64 - 1 and then priced.
#[test]
fn counts_are_refused_when_too_large_never_saturated() {
    let dir = tempfile::tempdir().unwrap();
    // a workload's chips per replica
    let gemm =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/gemm.yaml"))
            .unwrap();
    std::fs::write(dir.path().join("w.yaml"), format!("{gemm}chips: 1e300\n")).unwrap();
    let run = ["run", "w.yaml", "--chip", "h100-sxm", "--format", "csv"];
    refused(
        dir.path(),
        &run,
        &["w.yaml:", "field `chips`", "a count too large", "10^6"],
    );
    let tp = [
        "run",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--set",
        "tp=1e300",
    ];
    refused(dir.path(), &tp, &["field `chips`", "a count too large"]);
    let tp = [
        "run",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--set",
        "dp=1000000",
    ];
    // 10^6 chips is a count: replicas (tp=10^6 would split 32 heads unevenly, a layout
    // refused on its own account)
    assert_eq!(run_in(dir.path(), &tp, &[]).code, 0);

    // a plan whose replicas would pass 2^53: a reason on the entry, no number
    let values = BTreeMap::from([
        ("launch", "1e-3 s".to_owned()),
        ("expected.dram_latency", "1e-3 s".to_owned()),
    ]);
    std::fs::write(dir.path().join("slow.yaml"), chip_text(&values)).unwrap();
    std::fs::write(dir.path().join("slow-w.yaml"), SLOW_WORKLOAD).unwrap();
    let plan = [
        "plan",
        "slow-w.yaml",
        "--chip",
        "slow.yaml",
        "--target-tokens-per-s",
        "1e12",
        "--include-unfit",
        "--format",
        "csv",
        "--out",
        "p.csv",
    ];
    assert_eq!(run_in(dir.path(), &plan, &["p.csv"]).code, 0);
    let text = std::fs::read_to_string(dir.path().join("p.csv")).unwrap();
    let (header, rows) = crate::common::csv_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    for row in &rows {
        for column in ["replicas", "chips", "usd_per_hour"] {
            assert_eq!(crate::common::cell(&header, row, column), "", "{text}");
        }
        let note = crate::common::cell(&header, row, "note");
        assert!(note.contains("a count too large"), "{note}");
    }

    // the largest batch that fits, when the bytes barely grow with the batch
    let flat = "name: flat\nparams: {batch: 1000000000000}\n\
                tensors:\n  x: {role: activation, shape: [16, 16]}\n\
                blocks:\n  - name: b\n    ops:\n      - elementwise: {name: e, of: [x], flops_per_element: 1}\n";
    std::fs::write(dir.path().join("flat.yaml"), flat).unwrap();
    let run = ["run", "flat.yaml", "--chip", "h100-sxm", "--out", "f.txt"];
    refused(
        dir.path(),
        &run,
        &["the largest batch that fits is a count too large"],
    );
}

/// The book's chapter on limits shows the ranges table, row for row.
#[test]
fn book_lists_every_range() {
    let chapter = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/book/src/limits.md");
    let text = std::fs::read_to_string(&chapter).unwrap();
    for range in ranges::CHIP
        .iter()
        .chain(ranges::COUNTS)
        .chain(ranges::FLAGS)
    {
        let row = ranges::markdown_row(range);
        assert!(
            text.contains(&row),
            "{} lacks the row\n{row}",
            chapter.display()
        );
    }
}
