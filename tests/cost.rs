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
    assert_eq!(files.len(), 28, "the catalogue's chips");
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
fn every_price_names_its_basis_with_its_date_and_source() {
    let mut bases = Vec::new();
    for (chip, text) in chip_files() {
        let (basis, why) = field(&text, "  basis:").unwrap_or_else(|| panic!("{chip}: no basis"));
        let date = basis.rsplit('-').take(3).collect::<Vec<_>>();
        assert!(
            date.len() == 3 && date.iter().all(|d| d.parse::<u32>().is_ok()),
            "{chip}: basis `{basis}` ends with no YYYY-MM-DD date"
        );
        assert!(
            ["P8", "P10", "P11", "P12", "P13", "P14"]
                .iter()
                .any(|p| why.contains(p)),
            "{chip}: basis without its source"
        );
        bases.push(basis.to_owned());
        let (cloud, why) = field(&text, "  cloud:").unwrap_or_else(|| panic!("{chip}: no cloud"));
        let sourced = why.contains("no public price found")
            || ["P8", "P10", "P11", "P12", "P13", "P14"]
                .iter()
                .any(|p| why.contains(p));
        assert!(sourced, "{chip}: cloud price without its source");
        assert!(
            cloud == "none" || cloud.ends_with("USD/h"),
            "{chip}: `{cloud}`"
        );
    }
    bases.sort();
    bases.dedup();
    assert_eq!(bases.len(), 6, "{bases:?}");
}

#[test]
fn plan_ranks_every_priced_chip_and_counts_the_others() {
    let out = stepcost()
        .args(["plan", "llama-3.1-8b", "--cost", "cloud", "--chip", "all"])
        .args(["--format", "csv"])
        .assert()
        .success();
    let output = out.get_output();
    let (header, rows) = crate::common::csv_rows(&String::from_utf8_lossy(&output.stdout));
    let cost = |r: &Vec<String>| {
        cell(&header, r, "usd_per_million_tokens")
            .parse::<f64>()
            .ok()
    };
    let priced = rows.iter().take_while(|r| cost(r).is_some()).count();
    // every priced row first, cheapest first; none after them has a price
    assert!(rows[priced..].iter().all(|r| cost(r).is_none()));
    let costs: Vec<f64> = rows[..priced].iter().filter_map(cost).collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]));
    let chips: std::collections::BTreeSet<&str> = rows[..priced]
        .iter()
        .map(|r| cell(&header, r, "chip"))
        .collect();
    for chip in [
        "tpu-v6e",
        "trainium2",
        "gb200",
        "mi325x",
        "a100-40gb",
        "h200",
    ] {
        assert!(chips.contains(chip), "{chip} is not ranked");
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let unpriced = rows.len() - priced;
    assert!(unpriced > 0);
    assert!(
        stderr.contains(&format!(
            "{priced} chip and type choices ranked by cost; {unpriced} without a cost"
        )),
        "{stderr}"
    );
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
    // DGX H200: 10.2 kW over 8 GPUs, on the system basis; a street price per GPU, on the
    // accelerator's
    assert_eq!((purchase, power_w), (35_000.0, 10_200.0 / 8.0));
    assert_eq!(field(&text, "power_basis:").unwrap().0, "system");
    assert_eq!(field(&text, "  purchase_basis:").unwrap().0, "accelerator");
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
        "--years",
        "5",
        "--rate-of-capital",
        "0.08",
        "--pue",
        "1.2",
        "--usd-per-kwh",
        "0.12",
        "--usd-per-kw-month",
        "150",
        "--tco-utilization",
        "0.6",
        "--network-usd-per-gbps",
        "12",
    ];
    let (header, row) = csv(&args);
    let num = |c: &str| cell(&header, &row, c).parse::<f64>().unwrap();
    // capex: the GPU plus the host share of an 8-GPU server (a 317,000 USD 8 x H100 server
    // less 8 x 30,000 USD GPUs, over 8), as an annuity at 8 % over 5 years
    let system_usd = 35_000.0 + (317_000.0 - 240_000.0) / 8.0;
    let annuity = 0.08 / (1.0 - 1.08f64.powi(-5));
    let capex = system_usd * annuity / 8760.0;
    // network: 400 Gb/s of NIC per GPU at 12 USD per Gb/s, the same annuity
    let network = 400.0 * 12.0 * annuity / 8760.0;
    // power at the wall: 1.275 kW x PUE 1.2 x 0.12 USD/kWh; colo: 1.275 kW x 150 x 12 / 8760
    let power = 1.275 * 1.2 * 0.12;
    let colo = 1.275 * 150.0 * 12.0 / 8760.0;
    for (column, want) in [
        ("capex_usd_per_hour", capex),
        ("network_usd_per_hour", network),
        ("power_usd_per_hour", power),
        ("colo_usd_per_hour", colo),
    ] {
        assert_close(num(column), want, 1e-9);
    }
    // 60 % of hours served: each served hour pays for 1 / 0.6 calendar hours
    let usd_per_hour = (capex + network + power + colo) / 0.6;
    assert_close(num("usd_per_hour"), usd_per_hour, 1e-9);
    // decode: 8 sequences, one token each per step
    let tokens_per_s = 8.0 / (num("step_time_us") * 1e-6);
    assert_close(
        num("usd_per_million_tokens"),
        usd_per_hour / 3600.0 / tokens_per_s * 1e6,
        1e-9,
    );
    assert_close(
        num("tokens_per_kwh"),
        tokens_per_s * 3600.0 / (1.275 * 1.2),
        1e-9,
    );
    assert_close(
        num("tokens_per_s_per_mw"),
        tokens_per_s / (1.275e-3 * 1.2),
        1e-9,
    );
    assert_eq!(cell(&header, &row, "cost_basis"), "tco");
    assert_eq!(cell(&header, &row, "cost_note"), "");
}

#[test]
fn a_tdp_chip_gets_the_hosts_watts_and_a_users_chip_says_what_is_missing() {
    // MI300X: a 750 W TDP, to which the TCO adds a DGX H100's host share per GPU, (10,200 W
    // - 8 x 700 W) / 8 = 575 W; 15,000 USD plus the host share 9,625 USD
    let args = ["run", "llama-3.1-8b", "--chip", "mi300x", "--cost", "tco"];
    let (header, row) = csv(&args);
    let num = |c: &str| cell(&header, &row, c).parse::<f64>().unwrap();
    let kw = (750.0 + (10_200.0 - 5_600.0) / 8.0) / 1e3;
    assert_close(num("power_usd_per_hour"), kw * 1.3 * 0.10, 1e-9);
    assert_close(num("colo_usd_per_hour"), kw * 195.94 * 12.0 / 8760.0, 1e-9);
    let annuity = 0.10 / (1.0 - 1.1f64.powi(-4));
    assert_close(
        num("capex_usd_per_hour"),
        (15_000.0 + 9_625.0) * annuity / 8760.0,
        1e-9,
    );
    // a user's file without the bases: the TCO is computed and says which basis is missing
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.yaml");
    std::fs::write(
        &path,
        "name: mine\nmemory: {capacity: 80 GB, bandwidth: 2 TB/s}\nmatrix: {bf16: 1 PFLOPS}\nvector: {bf16: 100 TFLOPS}\n\
         power: 1000 W\nprice: {purchase: 20000 USD}\n",
    )
    .unwrap();
    let args = [
        "run",
        "llama-3.1-8b",
        "--mode",
        "roofline",
        "--chip",
        path.to_str().unwrap(),
    ];
    let (header, row) = csv(&[args.as_slice(), &["--cost", "tco"]].concat());
    assert_eq!(
        cell(&header, &row, "cost_note"),
        "tco: no purchase_basis (capex may lack the host share), no power_basis (power may lack the host share)"
    );
    assert!(!cell(&header, &row, "usd_per_hour").is_empty());
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
        "--rate-of-capital",
        "0",
        "--usd-per-kw-month",
        "0",
        "--network-usd-per-gbps",
        "0",
    ]);
    // straight division, no rent, no network: 17,520 / 35,040 h + 1 kW x 1.3 x 0.10 = 0.5 +
    // 0.13 (a buyer's figures name no basis: none of the host's shares is added)
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

#[test]
fn a_power_budget_fills_whole_replicas_by_hand() {
    let out = stepcost()
        .args(["plan", "llama-3.1-70b", "--power-budget-mw", "1"])
        .args(["--chip", "h200,b200,mi355x", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) =
        crate::common::csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    assert!(rows.len() >= 3);
    // System power at the wall per chip, kW: DGX H200 10.2 kW / 8 and DGX B200 14.3 kW / 8
    // (system basis); MI355X its 1,400 W TDP plus the host's 575 W; each x PUE 1.3
    let kw = |chip: &str| match chip {
        "h200" => 10.2 / 8.0 * 1.3,
        "b200" => 14.3 / 8.0 * 1.3,
        "mi355x" => (1.4 + 0.575) * 1.3,
        other => panic!("{other}"),
    };
    let mut seen = std::collections::BTreeSet::new();
    for row in &rows {
        let chip = cell(&header, row, "chip");
        seen.insert(chip.to_owned());
        let num = |c: &str| cell(&header, row, c).parse::<f64>().unwrap();
        assert_close(num("kw_per_chip"), kw(chip), 1e-12);
        let tp = num("chips_per_replica");
        let replicas = (1000.0 / (kw(chip) * tp)).floor();
        assert_eq!(num("chips_in_budget"), replicas * tp, "{chip}");
        let per_replica = num("tokens_per_s_per_chip") * tp;
        assert_close(num("tokens_per_s_in_budget"), replicas * per_replica, 1e-9);
        // $/M within the budget: the chips' hours over their tokens, in the cloud view
        let usd = cell(&header, row, "usd_per_hour");
        if usd.is_empty() {
            assert_eq!(cell(&header, row, "usd_per_million_tokens_in_budget"), "");
        } else {
            let per_chip = usd.parse::<f64>().unwrap() / num("chips");
            let want = per_chip * replicas * tp / 3600.0 / (replicas * per_replica) * 1e6;
            assert_close(num("usd_per_million_tokens_in_budget"), want, 1e-9);
        }
    }
    assert_eq!(seen.len(), 3);
    // with a target: whether the fleet fits, its MW the chips x kW at the wall
    let out = stepcost()
        .args(["plan", "llama-3.1-70b", "--power-budget-mw", "0.05"])
        .args([
            "--target-tokens-per-s",
            "20000",
            "--chip",
            "h200",
            "--format",
            "csv",
        ])
        .assert()
        .success();
    let (header, rows) =
        crate::common::csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let num = |c: &str| cell(&header, &rows[0], c).parse::<f64>().unwrap();
    assert_close(num("fleet_mw"), num("chips") * kw("h200") / 1e3, 1e-12);
}

#[test]
fn a_chip_on_another_price_basis_is_marked_in_the_table_and_its_header() {
    for command in ["compare", "plan"] {
        let out = stepcost()
            .args([command, "llama-3.1-8b", "--chip", "h200,h100-sxm,tpu-v6e"])
            .assert()
            .success();
        let table = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let header = table
            .lines()
            .find(|l| l.starts_with("cost: cloud"))
            .unwrap();
        assert!(
            header.contains("runpod-secure-on-demand-2026-02-26"),
            "{header}"
        );
        assert!(
            header.contains("google-cloud-tpu-on-demand-2026-08-01"),
            "{header}"
        );
        for line in table.lines().filter(|l| l.starts_with("│ ")) {
            let marked = line.contains(" * ");
            assert_eq!(marked, line.contains("tpu-v6e"), "{command}: {line}");
        }
        assert!(table.contains("* priced on another cloud basis than runpod"));
    }
}

#[test]
fn a_fleet_for_a_rate_within_a_power_budget_by_hand() {
    // 10 kW at the wall: an H200's 10.2 kW / 8 x PUE 1.3 = 1.6575 kW, so six chips' worth
    let out = stepcost()
        .args([
            "plan",
            "llama-3.1-8b",
            "--rate",
            "20",
            "--request",
            "in=1000,out=200",
        ])
        .args([
            "--max-ms-per-token",
            "30",
            "--chip",
            "h200",
            "--mode",
            "roofline",
        ])
        .args(["--power-budget-mw", "0.01", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    assert!(!rows.is_empty());
    let kw = 10.2 / 8.0 * 1.3;
    for row in &rows {
        let num = |c: &str| cell(&header, row, c).parse::<f64>().unwrap();
        assert_close(num("kw_per_chip"), kw, 1e-12);
        let fleet_mw = num("chips") * kw / 1e3;
        assert_close(num("fleet_mw"), fleet_mw, 1e-12);
        let fits = cell(&header, row, "fits_power_budget");
        assert_eq!(fits, if fleet_mw <= 0.01 { "true" } else { "false" });
        // whole instances at the fleet's power per instance, each at the fleet's load
        let per_instance_kw = num("chips") * kw / num("instances");
        let instances = (10.0 / per_instance_kw).floor();
        assert_eq!(num("instances_in_budget"), instances);
        let rate = 20.0 / num("instances") * instances;
        assert_close(num("requests_per_s_in_budget"), rate, 1e-12);
        assert_close(num("tokens_per_s_in_budget"), rate * 200.0, 1e-12);
        // the latency bound the fleet meets holds in the budget: the same instances
        assert!(num("tpot_ms") <= 30.0);
    }
    // Without a budget, the columns are empty.
    let out = stepcost()
        .args([
            "plan",
            "llama-3.1-8b",
            "--rate",
            "20",
            "--request",
            "in=1000,out=200",
        ])
        .args(["--chip", "h200", "--mode", "roofline", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    assert_eq!(cell(&header, &rows[0], "fleet_mw"), "");
}

/// The H100 SXM's chip file with a perf-vs-power curve appended: an illustration of the
/// mechanism (no public curve for the family ships), 0.6 of the clock at 400 W and 0.9 at
/// 550 W, the TDP's 700 W at 1.
fn h100_with_a_curve(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware/h100-sxm.yaml"),
    )
    .unwrap();
    let path = dir.join("h100-curve.yaml");
    let curve = "power_curve: {source: test, tdp: 700 W, points: {400 W: 0.6, 550 W: 0.9}}\n";
    std::fs::write(&path, format!("{text}\n{curve}")).unwrap();
    path
}

#[test]
fn a_power_cap_reads_the_curve_and_slows_compute_bound_work_more() {
    let dir = tempfile::tempdir().unwrap();
    let chip = h100_with_a_curve(dir.path());
    let chip = chip.to_str().unwrap();
    // Per-op times of a prefill step (compute-bound GEMMs) in roofline mode.
    let ops = |cap: Option<&str>| {
        let mut cmd = stepcost();
        cmd.args([
            "run",
            "llama-3.1-8b",
            "--chip",
            chip,
            "--set",
            "tokens=2048",
        ])
        .args(["--mode", "roofline", "--per-op", "--format", "csv"]);
        if let Some(cap) = cap {
            cmd.args(["--power-cap", cap]);
        }
        let out = cmd.assert().success();
        csv_rows(&String::from_utf8_lossy(&out.get_output().stdout))
    };
    let (header, base) = ops(None);
    // Two points of the curve by hand: 550 W is 0.9 of the clock; 475 W is halfway from
    // 400 W (0.6) to 550 W (0.9), 0.75. A compute-bound op's time is its FLOPs over the
    // peak times the clock; a memory-bound op's stays.
    for (cap, clock) in [("550W", 0.9), ("475 W", 0.75)] {
        let (_, capped) = ops(Some(cap));
        let mut compute = 0;
        for (b, c) in base.iter().zip(&capped) {
            let t = |row: &[String]| cell(&header, row, "time_us").parse::<f64>().unwrap();
            let bound = |row: &[String]| cell(&header, row, "bound").to_owned();
            if bound(b) == "compute" && bound(c) == "compute" {
                assert_close(t(c), t(b) / clock, 1e-9);
                compute += 1;
            } else if bound(b) == "memory" && bound(c) == "memory" {
                assert_close(t(c), t(b), 1e-12);
            }
        }
        assert!(compute > 0, "a prefill has compute-bound GEMMs");
    }
    // A compute-bound prefill slows more than a memory-bound decode at 500 W.
    let step = |tokens: &str, cap: Option<&str>| {
        let mut args = vec!["run", "llama-3.1-8b", "--chip", chip, "--set", tokens];
        args.extend(["--mode", "roofline"]);
        if let Some(cap) = cap {
            args.extend(["--power-cap", cap]);
        }
        let (header, row) = csv(&args);
        let num = |c: &str| cell(&header, &row, c).parse::<f64>().unwrap();
        (num("step_time_us"), num("tokens_per_kwh"))
    };
    let prefill = step("tokens=2048", Some("500W")).0 / step("tokens=2048", None).0;
    let decode = step("tokens=1", Some("500W")).0 / step("tokens=1", None).0;
    assert!(prefill > 1.1 && prefill <= 1.0 / 0.8 + 1e-9, "{prefill}");
    assert!(decode < prefill && decode >= 1.0, "{decode}");
    // The power falls by what the cap takes off the TDP: the system's 1,275 W per GPU
    // (DGX H100, system basis) less 200 W; tokens per kWh follow the time and the power.
    let (t0, k0) = step("tokens=1", None);
    let (t1, k1) = step("tokens=1", Some("500W"));
    assert_close(k1 / k0, (t0 / t1) * (1275.0 / 1075.0), 1e-9);
}

#[test]
fn a_power_cap_on_a_chip_without_a_public_curve_is_refused() {
    for command in ["run", "compare", "sweep", "plan", "serving"] {
        let out = stepcost()
            .args([
                command,
                "llama-3.1-8b",
                "--chip",
                "h100-sxm",
                "--power-cap",
                "500W",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("`h100-sxm` (nvidia-hopper)"),
            "{command}: {err}"
        );
        assert!(err.contains("no public figures"), "{command}: {err}");
    }
}
