//! The 80 % band of a priced request (`run --request`, `sweep --request`) against the residual
//! file's percentiles worked out here, and of `simulate`'s goodput against what the runs at the
//! band's ends must give.

use crate::band::{percentile, residuals, source_count};
use crate::common::{assert_close, cell, csv_rows, stepcost, succeeded};

/// The band's multipliers `(exp q10, exp q90)` of a prediction of `kind` on a chip of
/// `family`, by the rule the band is documented with: the kind and family's rows where they
/// come from 9 sources or more, else the kind's, else every row's.
fn band(kind: &str, family: &str) -> (f64, f64) {
    let groups = [
        residuals(Some(kind), Some(family)),
        residuals(Some(kind), None),
    ];
    let rows = (groups.into_iter())
        .find(|rows| source_count(rows) >= 9)
        .unwrap_or_else(|| residuals(None, None));
    (percentile(&rows, 0.1).exp(), percentile(&rows, 0.9).exp())
}

fn request_csv(command: &str, extra: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut args = vec![
        command,
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--set",
        "batch=4",
        "--request",
        "in=512,out=64",
        "--format",
        "csv",
    ];
    args.extend(extra);
    csv_rows(&succeeded(stepcost().args(args).output().unwrap()))
}

/// A request's TTFT takes the prefill band, its TPOT the decode band and its end-to-end
/// latency the request band, or where the request rows come from fewer than 9 sources, its
/// TTFT and 63 TPOTs each at its band's end; its output rate is the end-to-end latency's
/// inverse.
#[test]
fn a_priced_request_takes_the_band_of_the_rows_that_measure_it() {
    let family = "nvidia-hopper";
    let (prefill, decode) = (band("prefill", family), band("decode", family));
    for command in ["run", "sweep"] {
        let (header, rows) = request_csv(command, &[]);
        let num = |c: &str| cell(&header, &rows[0], c).parse::<f64>().unwrap();
        let (ttft, tpot, e2e) = (num("ttft_ms"), num("tpot_ms"), num("e2e_ms"));
        assert_close(num("ttft_low_ms"), ttft * prefill.0, 1e-9);
        assert_close(num("ttft_high_ms"), ttft * prefill.1, 1e-9);
        assert_close(num("tpot_low_ms"), tpot * decode.0, 1e-9);
        assert_close(num("tpot_high_ms"), tpot * decode.1, 1e-9);
        let later = 63.0 * tpot;
        let request = residuals(Some("request"), None);
        let (low, high) = match source_count(&request) >= 9 {
            true => band("request", family),
            false => (
                (ttft * prefill.0 + later * decode.0) / (ttft + later),
                (ttft * prefill.1 + later * decode.1) / (ttft + later),
            ),
        };
        assert_close(num("e2e_low_ms"), e2e * low, 1e-9);
        assert_close(num("e2e_high_ms"), e2e * high, 1e-9);
        let rate = num("output_tokens_per_s");
        assert_close(num("output_tokens_per_s_low"), rate / high, 1e-9);
        assert_close(num("output_tokens_per_s_high"), rate / low, 1e-9);
    }
}

#[test]
fn a_request_has_no_band_in_roofline_mode_nor_without_a_request() {
    let columns = [
        "ttft_low_ms",
        "tpot_high_ms",
        "e2e_low_ms",
        "output_tokens_per_s_high",
    ];
    for command in ["run", "sweep"] {
        let (header, rows) = request_csv(command, &["--mode", "roofline"]);
        assert!(!cell(&header, &rows[0], "ttft_ms").is_empty());
        for column in columns {
            assert_eq!(cell(&header, &rows[0], column), "", "{command} {column}");
        }
    }
    let args = [
        "sweep",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--format",
        "csv",
    ];
    let (header, rows) = csv_rows(&succeeded(stepcost().args(args).output().unwrap()));
    assert!(!cell(&header, &rows[0], "step_time_low_us").is_empty());
    for column in columns {
        assert_eq!(cell(&header, &rows[0], column), "", "{column}");
    }
}

#[test]
fn a_run_table_shows_a_request_s_numbers_with_their_band() {
    let args = [
        "run",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--request",
        "in=512,out=64",
    ];
    let line = |table: &str, name: &str| {
        let line = table.lines().find(|l| l.contains(name));
        line.unwrap_or_else(|| panic!("{name} in {table}"))
            .to_owned()
    };
    let table = succeeded(stepcost().args(args).output().unwrap());
    for name in [
        "time to first token",
        "end to end",
        "output tokens per second",
    ] {
        assert!(line(&table, name).contains('('), "{table}");
    }
    let roofline = stepcost().args(args).args(["--mode", "roofline"]).output();
    let table = succeeded(roofline.unwrap());
    assert!(
        !line(&table, "time to first token").contains('('),
        "{table}"
    );
}

fn simulate_csv(extra: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let args = [
        "simulate",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--rate",
        "0.1",
        "--arrival",
        "uniform",
        "--requests",
        "5",
        "--format",
        "csv",
    ];
    csv_rows(&succeeded(
        stepcost().args(args).args(extra).output().unwrap(),
    ))
}

/// Five requests alone (one every 10 s, each done in about 2 s): each has the same TTFT, its
/// prompt's one iteration, and at the slow end of the band every TTFT is that times e^q90.
/// A TTFT bound halfway between the two is met by every request of the run and of its fast
/// end and by none at its slow end, so goodput's low end is 0 and its high end the fast run's
/// whole request rate.
#[test]
fn goodput_s_low_end_is_the_slow_run_s() {
    let (header, rows) = simulate_csv(&[]);
    let num = |c: &str| cell(&header, &rows[0], c).parse::<f64>().unwrap();
    // Alike up to rounding: each TTFT is a difference of clock readings at its own time.
    let (p50, p99) = (num("ttft_p50_s"), num("ttft_p99_s"));
    assert!(
        (p99 - p50).abs() <= 1e-9 * p50,
        "requests alike: {p50} {p99}"
    );
    assert_eq!(cell(&header, &rows[0], "goodput_requests_per_s_low"), "");
    let bound_ms = (num("ttft_p99_s") + num("ttft_p50_high_s")) / 2.0 * 1e3;
    let bound = format!("{bound_ms}");
    let (header, rows) = simulate_csv(&["--max-ttft-ms", &bound]);
    let num = |c: &str| cell(&header, &rows[0], c).parse::<f64>().unwrap();
    assert_eq!(num("goodput_share"), 1.0);
    assert_eq!(num("goodput_share_high"), 1.0);
    assert_eq!(num("goodput_share_low"), 0.0);
    assert_eq!(num("goodput_requests_per_s"), num("requests_per_s"));
    assert_eq!(
        num("goodput_requests_per_s_high"),
        num("requests_per_s_high")
    );
    assert_eq!(num("goodput_requests_per_s_low"), 0.0);
    let roofline = simulate_csv(&["--max-ttft-ms", &bound, "--mode", "roofline"]);
    let (header, rows) = roofline;
    assert!(!cell(&header, &rows[0], "goodput_share").is_empty());
    for column in ["goodput_requests_per_s_low", "goodput_share_high"] {
        assert_eq!(cell(&header, &rows[0], column), "", "{column}");
    }
}

/// Under load (8 requests/s on one H100, bounds a queue sometimes misses) goodput and its
/// share lie within their bands, and the table shows both bands.
#[test]
fn goodput_lies_within_its_band() {
    let args = [
        "simulate",
        "llama-3.1-8b",
        "--chip",
        "h100-sxm",
        "--rate",
        "8",
        "--requests",
        "400",
        "--max-ttft-ms",
        "40",
        "--max-ms-per-token",
        "10",
    ];
    let csv = stepcost().args(args).args(["--format", "csv"]).output();
    let (header, rows) = csv_rows(&succeeded(csv.unwrap()));
    let num = |c: &str| cell(&header, &rows[0], c).parse::<f64>().unwrap();
    for name in ["goodput_requests_per_s", "goodput_share"] {
        let (low, mid, high) = (
            num(&format!("{name}_low")),
            num(name),
            num(&format!("{name}_high")),
        );
        assert!(
            low <= mid && mid <= high && low < high,
            "{name}: {low} {mid} {high}"
        );
    }
    let table = succeeded(stepcost().args(args).output().unwrap());
    let line = table.lines().find(|l| l.contains("goodput")).unwrap();
    assert!(
        line.contains(") requests/s, ") && line.contains("% ("),
        "{line}"
    );
}
