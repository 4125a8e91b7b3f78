//! Memory basis, one cloud price basis, total cost of ownership and a buyer's own prices, each
//! checked against the chip files' own numbers and hand arithmetic.

use std::path::Path;

use crate::common::{assert_close, cell, csv_rows, stepcost};

/// Every shipped chip file: its stem and text.
fn chip_files() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    assert_eq!(files.len(), 26, "the catalogue's chips");
    files
}

/// The line of `text` that sets `key` (indented as written, e.g. `  capacity:`): its value
/// and its comment.
fn field<'a>(text: &'a str, key: &str) -> Option<(&'a str, &'a str)> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let rest = &line[key.len()..];
    let (value, comment) = rest.split_once('#').unwrap_or((rest, ""));
    Some((value.trim(), comment.trim()))
}

/// The number before the unit in `value` (`35000 USD`, `700 W`).
fn number(value: &str) -> f64 {
    value.split_whitespace().next().unwrap().parse().unwrap()
}

/// `cmd`'s CSV output: the header and the first row.
fn csv(args: &[&str]) -> (Vec<String>, Vec<String>) {
    let out = stepcost()
        .args(args)
        .args(["--format", "csv"])
        .assert()
        .success();
    let (header, mut rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    (header, rows.remove(0))
}

#[test]
fn every_chip_names_its_sku_memory_basis_and_reserve_with_a_source() {
    for (chip, text) in chip_files() {
        let (sku, _) = field(&text, "sku:").unwrap_or_else(|| panic!("{chip}: no sku"));
        assert!(sku.len() > 5, "{chip}: sku `{sku}`");
        let (_, why) = field(&text, "  capacity:").unwrap();
        assert!(!why.is_empty(), "{chip}: capacity without a source comment");
        let (basis, why) = field(&text, "  capacity_basis:").expect(&chip);
        assert!(
            ["reported", "vendor_gib", "marketed"].contains(&basis),
            "{chip}: capacity_basis `{basis}`"
        );
        assert!(!why.is_empty(), "{chip}: capacity_basis without a source");
        let (_, why) = field(&text, "  reserve:").expect(&chip);
        assert!(why.contains("assumption"), "{chip}: reserve `{why}`");
    }
    // what `chips` reports is what the files say
    let out = stepcost()
        .args(["chips", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let h200 = rows
        .iter()
        .find(|r| cell(&header, r, "chip") == "h200")
        .unwrap();
    assert_eq!(cell(&header, h200, "capacity_basis"), "reported");
    let mib = 1024.0 * 1024.0;
    let bytes: f64 = cell(&header, h200, "capacity_bytes").parse().unwrap();
    assert_eq!(bytes, 143_771.0 * mib);
    assert_eq!(cell(&header, h200, "reserve_bytes"), "1073741824"); // 1 GiB
    assert_eq!(
        cell(&header, h200, "sku"),
        "H200 SXM5 141GB HBM3e, HGX board"
    );
}

#[test]
fn every_price_names_one_basis_with_its_date() {
    let mut bases = Vec::new();
    for (chip, text) in chip_files() {
        let (basis, _) = field(&text, "  basis:").unwrap_or_else(|| panic!("{chip}: no basis"));
        let date = basis.rsplit('-').take(3).collect::<Vec<_>>();
        assert!(
            date.len() == 3 && date.iter().all(|d| d.parse::<u32>().is_ok()),
            "{chip}: basis `{basis}` ends with no YYYY-MM-DD date"
        );
        bases.push(basis.to_owned());
        let (cloud, why) = field(&text, "  cloud:").unwrap_or_else(|| panic!("{chip}: no cloud"));
        assert!(why.contains("P8"), "{chip}: cloud price without its source");
        assert!(
            cloud == "none" || cloud.ends_with("USD/h"),
            "{chip}: `{cloud}`"
        );
    }
    bases.dedup();
    assert_eq!(bases, ["runpod-secure-on-demand-2026-02-26"], "one basis");
}

#[test]
fn a_superchip_costs_its_rack_over_its_gpus() {
    let text = chip_files()
        .into_iter()
        .find(|(c, _)| c == "gb200")
        .unwrap()
        .1;
    let system = number(field(&text, "  purchase:").unwrap().0);
    let gpus = number(field(&text, "  purchase_gpus:").unwrap().0);
    assert_eq!((system, gpus), (3.1e6, 72.0));
    let (header, row) = csv(&["chips", "gb200"]);
    // 3,100,000 USD / 72 GPUs = 43,055.56 USD per GPU
    assert_close(
        cell(&header, &row, "purchase_usd").parse().unwrap(),
        43_055.555_6,
        1e-6,
    );
}

#[test]
fn tco_by_hand_for_h200() {
    let text = chip_files()
        .into_iter()
        .find(|(c, _)| c == "h200")
        .unwrap()
        .1;
    let purchase = number(field(&text, "  purchase:").unwrap().0);
    let power_w = number(field(&text, "power:").unwrap().0);
    // DGX H200: 10.2 kW over 8 GPUs
    assert_eq!((purchase, power_w), (35_000.0, 10_200.0 / 8.0));
    let args = [
        "run",
        "llama-3.1-70b",
        "--chip",
        "h200",
        "--dtype",
        "weight=fp8",
        "--set",
        "batch=8",
        "--cost",
        "tco",
    ];
    let (header, row) = csv(&args);
    let num = |c: &str| cell(&header, &row, c).parse::<f64>().unwrap();
    // 35,000 / (4 x 8760 h) + 1.275 kW x 1.3 x 0.10 USD/kWh = 0.99886 + 0.16575 = 1.16461 USD/h
    let usd_per_hour = 35_000.0 / (4.0 * 8760.0) + 1.275 * 1.3 * 0.10;
    assert_close(num("usd_per_hour"), usd_per_hour, 1e-12);
    // decode: 8 sequences, one token each per step
    let tokens_per_s = 8.0 / (num("step_time_us") * 1e-6);
    assert_close(
        num("usd_per_million_tokens"),
        usd_per_hour / 3600.0 / tokens_per_s * 1e6,
        1e-9,
    );
    assert_close(
        num("tokens_per_kwh"),
        tokens_per_s * 3600.0 / (1.275 * 1.3),
        1e-9,
    );
    assert_eq!(cell(&header, &row, "cost_basis"), "tco");
    // other assumptions move it as the formula says
    let more: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--years", "2", "--pue", "1", "--usd-per-kwh", "0.2"])
        .collect();
    let (header, row) = csv(&more);
    let expected = 35_000.0 / (2.0 * 8760.0) + 1.275 * 1.0 * 0.2;
    assert_close(
        cell(&header, &row, "usd_per_hour").parse().unwrap(),
        expected,
        1e-12,
    );
}

#[test]
fn a_chip_without_a_price_on_the_basis_says_so() {
    let args = ["run", "llama-3.1-8b", "--chip", "mi355x"];
    let (header, row) = csv(&args);
    assert_eq!(cell(&header, &row, "usd_per_million_tokens"), "");
    let note = "no price on basis runpod-secure-on-demand-2026-02-26";
    assert_eq!(cell(&header, &row, "cost_note"), note);
    let table = stepcost().args(args).assert().success();
    assert!(String::from_utf8_lossy(&table.get_output().stdout).contains(note));
    // in the TCO view a chip without a purchase price says that instead
    let (header, row) = csv(&["run", "llama-3.1-8b", "--chip", "mi325x", "--cost", "tco"]);
    assert_eq!(
        cell(&header, &row, "cost_note"),
        "no purchase price for tco"
    );
}

#[test]
fn a_buyers_prices_replace_the_files() {
    // --price: a cloud quote, even for a chip with none on the basis
    let (header, row) = csv(&[
        "run",
        "llama-3.1-8b",
        "--chip",
        "mi355x",
        "--price",
        "mi355x=2.50",
    ]);
    let num = |c: &str| cell(&header, &row, c).parse::<f64>().unwrap();
    assert_eq!(num("usd_per_hour"), 2.5);
    let tokens_per_s = 1.0 / (num("step_time_us") * 1e-6);
    assert_close(
        num("usd_per_million_tokens"),
        2.5 / 3600.0 / tokens_per_s * 1e6,
        1e-9,
    );
    // --prices: a book with every figure, in the TCO view
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("quotes.yaml");
    std::fs::write(
        &book,
        "h200: {cloud: 2.00 USD/h, purchase: 17520 USD, power: 1000 W}\nb200: 5 USD/h\n",
    )
    .unwrap();
    let book = book.to_str().unwrap();
    let (header, row) = csv(&[
        "run",
        "llama-3.1-8b",
        "--chip",
        "h200",
        "--prices",
        book,
        "--cost",
        "tco",
    ]);
    // 17,520 / 35,040 h + 1 kW x 1.3 x 0.10 = 0.5 + 0.13
    assert_close(
        cell(&header, &row, "usd_per_hour").parse().unwrap(),
        0.63,
        1e-12,
    );
    let (header, row) = csv(&["run", "llama-3.1-8b", "--chip", "b200", "--prices", book]);
    assert_eq!(cell(&header, &row, "usd_per_hour"), "5");
    // --price wins over the book
    let (header, row) = csv(&[
        "run",
        "llama-3.1-8b",
        "--chip",
        "b200",
        "--prices",
        book,
        "--price",
        "b200=4",
    ]);
    assert_eq!(cell(&header, &row, "usd_per_hour"), "4");
}

#[test]
fn a_bad_price_book_is_refused_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    for (text, marks) in [
        (
            "h200: 2 USD/h\nb200: {cloud: 3 parsecs}\n",
            &["bad.yaml:2:", "field `b200.cloud`", "parsecs"][..],
        ),
        (
            "h200: {purchase: -5 USD}\n",
            &["bad.yaml:1:", "field `h200.purchase`"],
        ),
        (
            "h200: {cloud: 2 USD/h, rent: 3}\n",
            &["bad.yaml:1:", "rent"],
        ),
        (
            "h2000: 2 USD/h\n",
            &["chip `h2000`", "did you mean `h200`?"],
        ),
    ] {
        let book = dir.path().join("bad.yaml");
        std::fs::write(&book, text).unwrap();
        let out = stepcost()
            .args(["run", "llama-3.1-8b", "--chip", "h200", "--prices"])
            .arg(&book)
            .assert()
            .code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        for mark in marks {
            assert!(stderr.contains(mark), "{text}: `{mark}` not in {stderr}");
        }
    }
    let out = stepcost()
        .args([
            "run",
            "llama-3.1-8b",
            "--chip",
            "h200",
            "--price",
            "h200=free",
        ])
        .assert()
        .code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--price"));
}

#[test]
fn plan_shows_both_views_and_ranks_by_the_chosen_one() {
    let args = [
        "plan",
        "llama-3.1-8b",
        "--target-tokens-per-s",
        "10000",
        "--chip",
        "h100-sxm,h200,b200",
        "--dtype",
        "weight=fp8",
    ];
    for (view, column) in [
        ("cloud", "cloud_usd_per_million_tokens"),
        ("tco", "tco_usd_per_million_tokens"),
    ] {
        let out = stepcost()
            .args(args)
            .args(["--cost", view, "--format", "csv"])
            .assert()
            .success();
        let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
        let get = |r: &Vec<String>, c: &str| cell(&header, r, c).parse::<f64>().unwrap();
        let hours: Vec<f64> = rows.iter().map(|r| get(r, "usd_per_hour")).collect();
        assert!(hours.windows(2).all(|w| w[0] <= w[1]), "{view}: {hours:?}");
        for r in &rows {
            assert!(get(r, "cloud_usd_per_million_tokens") > 0.0);
            assert!(get(r, "tco_usd_per_million_tokens") > 0.0);
            assert_eq!(get(r, "usd_per_million_tokens"), get(r, column), "{view}");
        }
    }
}

#[test]
fn a_targets_million_tokens_pay_for_the_whole_fleet() {
    // One B200 serves 500 tokens/s of Llama-3.1-70B with room to spare: the target's tokens
    // carry the chip's every hour, so a million of them cost its $/hour over 500 x 3600 / 10^6,
    // more than the same chip's tokens at its capacity.
    let out = stepcost()
        .args(["plan", "llama-3.1-70b", "--chip", "b200"])
        .args(["--dtype", "weight=fp8", "--target-tokens-per-s", "500"])
        .args(["--max-ms-per-token", "50"])
        .args(["--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let get = |c: &str| cell(&header, &rows[0], c).parse::<f64>().unwrap();
    assert_eq!(get("chips"), 1.0);
    let at_target = get("usd_per_hour") / (500.0 * 3600.0) * 1e6;
    assert_close(get("cloud_usd_per_million_tokens"), at_target, 1e-12);
    assert_close(get("usd_per_million_tokens"), at_target, 1e-12);
    let at_capacity = get("usd_per_hour") / (get("tokens_per_s_per_chip") * 3600.0) * 1e6;
    assert!(get("tokens_per_s_per_chip") > 500.0 && at_target > at_capacity);
}

#[test]
fn a_cloud_quote_with_the_tco_view_is_refused() {
    // TCO costs purchase and power: a --price quote would change nothing, so it is an error
    // that says what to give instead, not a figure silently left unused.
    let out = stepcost()
        .args(["run", "llama-3.1-8b", "--chip", "h200"])
        .args(["--price", "h200=2.50", "--cost", "tco"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("--prices"), "{stderr}");
    assert!(out.get_output().stdout.is_empty());
}
