//! `sweep --shard I/N` (slices of the product order that concatenate to the whole sweep) and
//! `sweep --top K --by COLUMN --per COLUMN` (the best rows, checked against the full output
//! sorted and cut by the code here).

use std::sync::atomic::AtomicBool;

use predicates::prelude::*;
use proptest::prelude::*;
use stepcost::{
    sweep::Axes, sweep::Grid, sweep::Shard, sweep::StreamFormat, sweep::SweepOptions,
    sweep::SweepRows,
};

use crate::common::{chip, csv_rows, stepcost, workload};

/// A small grid: 3 chips x 4 batches x 2 contexts = 24 scenarios.
const GRID: [&str; 8] = [
    "sweep",
    "llama-3.1-8b",
    "--chip",
    "h100-sxm,l40s,h200",
    "--set",
    "batch=1,8,64,512",
    "--set",
    "context=1024,32768",
];

fn sweep(extra: &[&str]) -> String {
    let out = stepcost().args(GRID).args(extra).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn shards_concatenate_to_the_whole_sweep_in_csv_and_json() {
    for format in ["csv", "json"] {
        let whole = sweep(&["--format", format]);
        assert_eq!(whole.lines().count(), 24 + usize::from(format == "csv"));
        // 30 shards of 24 scenarios: some are empty.
        for n in [1, 2, 5, 24, 30] {
            let parts: String = (0..n)
                .map(|i| sweep(&["--format", format, "--shard", &format!("{i}/{n}")]))
                .collect();
            assert_eq!(parts, whole, "{format}, {n} shards");
        }
    }
}

#[test]
fn a_shard_is_its_slice_of_the_product_order() {
    let (header, rows) = csv_rows(&sweep(&[]));
    // Shard 1 of 5 of 24 scenarios: from 1 * 24 / 5 = 4 to 2 * 24 / 5 = 9.
    let shard = sweep(&["--shard", "1/5", "--header"]);
    let (shard_header, shard_rows) = csv_rows(&shard);
    assert_eq!(shard_header, header);
    assert_eq!(shard_rows, rows[4..9]);
    // Without --header a later shard has none; --header on shard 0 is its usual one.
    assert_eq!(sweep(&["--shard", "1/5"]).lines().count(), 5);
    assert_eq!(
        sweep(&["--shard", "0/5", "--header"]),
        sweep(&["--shard", "0/5"])
    );
}

#[test]
fn max_scenarios_counts_the_shard() {
    // 24 scenarios in 4 shards of 6.
    sweep(&["--shard", "3/4", "--max-scenarios", "6"]);
    stepcost()
        .args(GRID)
        .args(["--shard", "3/4", "--max-scenarios", "5"])
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "shard 3/4 of the sweep has 6 scenarios (of 24), more than --max-scenarios 5",
        ));
}

#[test]
fn a_bad_shard_is_refused_before_any_work_and_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("part.csv");
    for (shard, message) in [
        ("3/3", "shard 3 of 3 does not exist: I goes from 0 to 2"),
        ("0/0", "at least 1 shard"),
        ("a/4", "expected I/N, two whole numbers"),
        ("1.5/4", "expected I/N, two whole numbers"),
        ("2", "expected I/N, two whole numbers"),
        ("-1/4", "expected I/N"),
    ] {
        stepcost()
            .args(GRID)
            .args(["--out", out.to_str().unwrap(), &format!("--shard={shard}")])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(message));
        assert!(!out.exists(), "{shard}");
    }
}

/// Prices `grid`'s scenarios of `shard` into bytes, with a header when asked for.
fn priced(grid: &Grid, format: StreamFormat, shard: Shard, header: bool) -> Vec<u8> {
    let sink = SweepRows::new(grid.workload(), format, false);
    let options = SweepOptions {
        shard,
        header,
        ..SweepOptions::default()
    };
    let mut out = Vec::new();
    let cancel = AtomicBool::new(false);
    stepcost::sweep::run(grid, options, &sink, &mut out, &|_| {}, &cancel).unwrap();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any small grid cut into any number of shards: the shards, the first with its header,
    /// concatenate to the whole sweep byte for byte.
    #[test]
    fn any_grid_in_any_shards_concatenates_to_the_whole(
        chips in proptest::sample::subsequence(vec!["h100-sxm", "h200", "l40s", "mi300x"], 1..=3),
        batches in proptest::collection::vec(1u32..=300, 1..=4),
        contexts in proptest::collection::vec(128u32..=65536, 1..=3),
        n in 1u64..=9,
        json in any::<bool>(),
    ) {
        let w = workload("llama-3.1-8b");
        let axes = Axes {
            chips: chips.iter().map(|c| chip(c)).collect(),
            params: vec![
                ("batch".into(), batches.iter().map(|b| f64::from(*b)).collect()),
                ("context".into(), contexts.iter().map(|c| f64::from(*c)).collect()),
            ],
            ..Axes::default()
        };
        let grid = Grid::new(&w, axes).unwrap();
        let format = if json { StreamFormat::JsonLines } else { StreamFormat::Csv };
        let whole = priced(&grid, format, Shard::default(), true);
        let mut parts = Vec::new();
        for i in 0..n {
            parts.extend(priced(&grid, format, Shard::new(i, n).unwrap(), i == 0));
        }
        prop_assert_eq!(String::from_utf8(parts).unwrap(), String::from_utf8(whole).unwrap());
    }
}

/// The K best lines of a full CSV output by `by` (a leading `-`: highest first), per group of
/// `per`: lines whose cell is empty never rank, ties keep the output's order, groups come in
/// the order of their first ranked line. Written apart from the program's heaps.
fn top_by_hand(full: &str, k: usize, by: &str, per: Option<&str>) -> Vec<String> {
    let (descending, by) = match by.strip_prefix('-') {
        Some(name) => (true, name),
        None => (false, by),
    };
    let (header, rows) = csv_rows(full);
    let lines: Vec<&str> = full.lines().skip(1).collect();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let by = column(by);
    let mut groups: Vec<(String, Vec<(f64, usize)>)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if row[by].is_empty() {
            continue;
        }
        let value: f64 = row[by].parse().unwrap();
        let key = per.map_or(String::new(), |p| row[column(p)].clone());
        match groups.iter_mut().find(|(g, _)| *g == key) {
            Some((_, members)) => members.push((value, i)),
            None => groups.push((key, vec![(value, i)])),
        }
    }
    let mut kept = Vec::new();
    for (_, mut members) in groups {
        // A stable sort: equal values stay in the output's order.
        members.sort_by(|a, b| match descending {
            true => b.0.total_cmp(&a.0),
            false => a.0.total_cmp(&b.0),
        });
        kept.extend(members.iter().take(k).map(|(_, i)| lines[*i].to_owned()));
    }
    kept
}

/// A grid with ties (gb200 and gb300 price the same tokens per second), chips without a price
/// (a100-40gb: an empty `usd_per_million_tokens`) and rows that do not fit.
const TOP_GRID: [&str; 8] = [
    "sweep",
    "llama-3.1-70b",
    "--chip",
    "h100-sxm,a100-40gb,gb200,gb300,mi300x",
    "--set",
    "batch=1..=256:x2",
    "--set",
    "context=1024,8192,65536",
];

fn top_sweep(extra: &[&str]) -> String {
    let out = stepcost().args(TOP_GRID).args(extra).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn top_is_the_full_output_sorted_and_cut() {
    let full = top_sweep(&["--fits-only"]);
    let header = full.lines().next().unwrap().to_owned();
    for (k, by, per) in [
        (3, "usd_per_million_tokens", Some("chip")),
        (4, "-tokens_per_s", None),
        (2, "-tokens_per_s", Some("context")),
        (1, "ms_per_token", Some("batch")),
        (1000, "usd_per_million_tokens", None),
    ] {
        let k_text = k.to_string();
        let mut args = vec!["--fits-only", "--top", &k_text, "--by", by];
        if let Some(per) = per {
            args.extend(["--per", per]);
        }
        let top = top_sweep(&args);
        let expected = top_by_hand(&full, k, by, per);
        assert!(!expected.is_empty());
        let lines: Vec<&str> = top.lines().collect();
        assert_eq!(lines[0], header);
        assert_eq!(lines[1..], expected, "--top {k} --by {by} --per {per:?}");
    }
    // Ties go to the earlier row: gb200 before gb300 at the same speed (batch 64, where both
    // are bound by the same bandwidth), so the grid has ties the ranking had to break.
    let best = top_by_hand(&full, 4, "-tokens_per_s", None);
    let speed = |line: &str| line.split(',').nth(19).unwrap().to_owned();
    assert!(best[2].contains(",gb200,") && best[3].contains(",gb300,"));
    assert_eq!(speed(&best[2]), speed(&best[3]));
}

#[test]
fn top_rows_are_the_full_output_s_rows_through_columns_and_json() {
    let filter = ["--where", "fits && ms_per_token <= 50"];
    let full = top_sweep(&filter);
    let lines: Vec<&str> = full.lines().skip(1).collect();
    let indices: Vec<usize> = (top_by_hand(&full, 2, "usd_per_million_tokens", Some("chip")))
        .iter()
        .map(|line| lines.iter().position(|l| l == line).unwrap())
        .collect();
    let ranked = [
        "--top",
        "2",
        "--by",
        "usd_per_million_tokens",
        "--per",
        "chip",
    ];
    // Ranked on every column, whatever --columns writes; each row kept is the row the whole
    // output writes, in JSON or cut to columns and digits.
    for (shape, header) in [
        (&["--format", "json"][..], 0),
        (&["--columns", "chip,batch,context", "--digits", "3"], 1),
    ] {
        let whole = top_sweep(&[&filter[..], shape].concat());
        let whole: Vec<&str> = whole.lines().collect();
        let expected: Vec<&str> = indices.iter().map(|i| whole[header + i]).collect();
        let top = top_sweep(&[&filter[..], shape, &ranked].concat());
        let top: Vec<&str> = top.lines().collect();
        assert_eq!(top[..header], whole[..header]);
        assert_eq!(top[header..], expected);
    }
}

#[test]
fn shard_tops_merge_into_the_whole_top() {
    let full = top_sweep(&["--fits-only"]);
    let expected = top_by_hand(&full, 3, "usd_per_million_tokens", Some("chip"));
    let mut merged = format!("{}\n", full.lines().next().unwrap());
    for i in 0..4 {
        let shard = format!("{i}/4");
        let args = ["--fits-only", "--shard", &shard, "--top", "3", "--by"];
        let part = top_sweep(&[&args[..], &["usd_per_million_tokens", "--per", "chip"]].concat());
        let body = match i {
            0 => part.split_once('\n').unwrap().1.to_owned(),
            _ => part,
        };
        // Each shard's top is the top of that shard's own rows.
        let own = top_sweep(&["--fits-only", "--shard", &shard, "--header"]);
        let own_top = top_by_hand(&own, 3, "usd_per_million_tokens", Some("chip"));
        assert_eq!(body.lines().collect::<Vec<_>>(), own_top);
        merged.push_str(&body);
    }
    // Ranking the shards' tops again gives the whole sweep's top, in its order.
    assert_eq!(
        top_by_hand(&merged, 3, "usd_per_million_tokens", Some("chip")),
        expected
    );
}

#[test]
fn top_errors_are_clear_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("top.csv");
    for (args, message) in [
        (
            &["--top", "3", "--by", "usd_per_milion_tokens"][..],
            "--by: no column `usd_per_milion_tokens` (did you mean `usd_per_million_tokens`?)",
        ),
        (
            &["--top", "3", "--by", "mfu", "--per", "chp"],
            "--per: no column `chp` (did you mean `chip`?)",
        ),
        (
            &["--top", "3", "--by", "chip"],
            "--by chip: the column holds text, not numbers",
        ),
        (
            &["--top", "3", "--by", "-fits"],
            "--by fits: the column holds booleans, not numbers",
        ),
        (&["--top", "0", "--by", "mfu"], "from 1 to 1000000"),
        (&["--top", "3"], "--by <[-]COLUMN>"),
        (&["--by", "mfu"], "--top <K>"),
    ] {
        stepcost()
            .args(GRID)
            .args(["--out", out.to_str().unwrap()])
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(message));
        assert!(!out.exists(), "{args:?}");
    }
}

#[test]
fn where_errors_name_the_flag_and_point_into_the_text_typed() {
    for (args, message) in [
        // With --fits-only the filter is `fits && (...)`: the place is still in what was typed.
        (
            &["--fits-only", "--where", "batch > 1 && contxt > 1"][..],
            "--where at character 14: no column `contxt` (did you mean `context`?)",
        ),
        (
            &["--per-op", "--fits-only"],
            "--per-op rows (kernels) have no `fits` column",
        ),
    ] {
        stepcost()
            .args(GRID)
            .args(args)
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message));
    }
}
