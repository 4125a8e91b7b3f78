//! `--columns` and `--digits`: the columns named, in their order, in every format; numbers to
//! the digits asked, checked against the full-precision row rounded here.

use crate::common::{cell, csv_rows, stepcost};

fn stdout(args: &[&str]) -> String {
    let out = stepcost().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `x` to `digits` significant digits through decimal text, independently of the program.
fn rounded(x: f64, digits: usize) -> f64 {
    format!("{x:.*e}", digits - 1).parse().unwrap()
}

#[test]
fn brief_is_the_buyers_columns_in_order() {
    let sweep = [
        "sweep",
        "llama-3.1-8b",
        "--chip",
        "h200",
        "--set",
        "batch=1,64",
        "--quiet",
    ];
    let (header, rows) = csv_rows(&stdout(&[&sweep[..], &["--columns", "brief"]].concat()));
    assert_eq!(
        header,
        [
            "workload",
            "chip",
            "weight_dtype",
            "activation_dtype",
            "kv_dtype",
            "batch",
            "context",
            "step_time_us",
            "ms_per_token",
            "tokens_per_s",
            "fits",
            "max_batch",
            "usd_per_million_tokens",
            "mfu"
        ]
    );
    assert_eq!(rows.len(), 2);
    // Brief implies 4 digits: each number is the full row's rounded to 4.
    let (full_header, full_rows) = csv_rows(&stdout(&sweep));
    for (short, full) in rows.iter().zip(&full_rows) {
        for column in ["step_time_us", "ms_per_token", "tokens_per_s", "mfu"] {
            let whole: f64 = cell(&full_header, full, column).parse().unwrap();
            let shown: f64 = cell(&header, short, column).parse().unwrap();
            assert_eq!(shown, rounded(whole, 4), "{column}: {whole}");
        }
        assert_eq!(
            cell(&header, short, "batch"),
            cell(&full_header, full, "batch")
        );
    }
}

#[test]
fn a_list_in_its_order_in_csv_json_and_table() {
    let run = ["run", "llama-3.1-70b", "--chip", "h200", "--set", "batch=8"];
    let pick = ["--columns", "tokens_per_s,chip,batch", "--digits", "2"];
    let csv = stdout(&[&run[..], &pick, &["--format", "csv"]].concat());
    let full = stdout(&[&run[..], &["--format", "csv"]].concat());
    let (fh, fr) = csv_rows(&full);
    let tokens: f64 = cell(&fh, &fr[0], "tokens_per_s").parse().unwrap();
    assert_eq!(
        csv,
        format!("tokens_per_s,chip,batch\n{},h200,8\n", rounded(tokens, 2))
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&[&run[..], &pick, &["--format", "json"]].concat())).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3);
    assert_eq!(json["chip"], "h200");
    assert_eq!(json["tokens_per_s"].as_f64().unwrap(), rounded(tokens, 2));
    let table = stdout(&[&run[..], &pick].concat());
    assert!(
        table.contains("tokens_per_s") && table.contains("h200"),
        "{table}"
    );
}

#[test]
fn digits_alone_on_a_human_table_is_refused() {
    stepcost()
        .args(["run", "llama-3.1-8b", "--chip", "h200", "--digits", "3"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "--digits shapes the columns of --columns",
        ));
}
