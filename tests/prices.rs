//! The price data: which chips the one cloud basis prices, purchase prices of systems over their
//! GPUs, and power per GPU as a system's share, each against the sources' figures by hand.

use std::path::Path;

use crate::common::{assert_close, cell, csv_rows, stepcost};

/// `chips`' CSV: one row per chip (its first data type's row), keyed by chip.
fn chips() -> (Vec<String>, Vec<Vec<String>>) {
    let out = stepcost()
        .args(["chips", "--format", "csv"])
        .assert()
        .success();
    let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
    let mut seen = std::collections::BTreeSet::new();
    let rows = rows
        .into_iter()
        .filter(|r| seen.insert(cell(&header, r, "chip").to_owned()))
        .collect();
    (header, rows)
}

/// `column` of `chip`'s row as a number; `None` for an empty cell.
fn number(header: &[String], rows: &[Vec<String>], chip: &str, column: &str) -> Option<f64> {
    let row = rows
        .iter()
        .find(|r| cell(header, r, "chip") == chip)
        .unwrap_or_else(|| panic!("no chip {chip}"));
    let text = cell(header, row, column);
    (!text.is_empty()).then(|| text.parse().unwrap())
}

#[test]
fn every_shipping_chip_has_a_cloud_price_on_a_named_basis_or_says_none_was_found() {
    // P8 (docs/sources.md): RunPod's securePrice per GPU-hour, 2026-02-26; P10-P14 the
    // second bases for chips RunPod does not rent
    let runpod = "runpod-secure-on-demand-2026-02-26";
    let expected = [
        ("a100-80gb", 1.49, runpod),
        ("b200", 4.99, runpod),
        ("b300", 6.59, runpod),
        ("h100-nvl", 3.07, runpod),
        ("h100-pcie", 2.39, runpod),
        ("h100-sxm", 2.69, runpod),
        ("h200", 3.59, runpod),
        ("h200-nvl", 3.39, runpod),
        ("l40s", 0.86, runpod),
        ("mi300x", 1.99, runpod),
        ("rtx-pro-6000", 1.69, runpod),
        ("tpu-v5e", 1.20, "google-cloud-tpu-on-demand-2026-08-01"),
        ("tpu-v5p", 4.20, "google-cloud-tpu-on-demand-2026-08-01"),
        ("tpu-v6e", 2.70, "google-cloud-tpu-on-demand-2026-08-01"),
        ("tpu7x", 12.00, "google-cloud-tpu-on-demand-2026-08-01"),
        // trn2.48xlarge's Capacity Block price over its 16 chips
        ("trainium2", 2.235, "aws-ec2-capacity-block-2026-10-09"),
        ("mi325x", 1.95, "tensorwave-on-demand-2026-05-18"),
        // a GB200 superchip's 9.08 USD/h over its 2 GPUs
        ("gb200", 9.08 / 2.0, "spheron-on-demand-2026-03-17"),
        ("a100-40gb", 1.48, "lambda-on-demand-2026-05-07"),
    ];
    let no_public_price = [
        "gaudi3",
        "gb300",
        "h20",
        "h20-141gb",
        "mi350x",
        "mi355x",
        "trainium3",
    ];
    let (header, rows) = chips();
    assert_eq!(rows.len(), 28);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware");
    for row in &rows {
        let chip = cell(&header, row, "chip");
        let price = number(&header, &rows, chip, "usd_per_hour");
        match expected.iter().find(|(c, _, _)| *c == chip) {
            Some((_, usd, basis)) => {
                assert_close(price.unwrap(), *usd, 1e-12);
                assert_eq!(cell(&header, row, "price_basis"), *basis, "{chip}");
            }
            None => {
                assert_eq!(price, None, "{chip}");
                if cell(&header, row, "status") == "available" {
                    assert!(no_public_price.contains(&chip), "{chip} has no price");
                    let text = std::fs::read_to_string(dir.join(format!("{chip}.yaml"))).unwrap();
                    let line = text.lines().find(|l| l.starts_with("  cloud:")).unwrap();
                    assert!(
                        line.contains("no public price found") && line.contains("searched"),
                        "{chip}: `{line}`"
                    );
                }
            }
        }
    }
}

#[test]
fn a_systems_purchase_price_is_shared_by_its_gpus() {
    let (header, rows) = chips();
    let per_gpu = |chip| number(&header, &rows, chip, "purchase_usd");
    // Intel's list price: 8 Gaudi 3 on a baseboard, 125,000 USD (C7)
    assert_eq!(per_gpu("gaudi3"), Some(15_625.0));
    // DGX A100, 8 GPUs, 200,000 USD (C6)
    assert_eq!(per_gpu("a100-40gb"), Some(25_000.0));
    assert_eq!(per_gpu("a100-80gb"), Some(25_000.0));
    // per-GPU figures stay as written
    assert_eq!(per_gpu("h100-pcie"), Some(25_250.0));
    assert_eq!(per_gpu("mi300x"), Some(15_000.0));
    // no sourced figure, or not sold
    for chip in ["b300", "mi325x", "tpu-v5e", "tpu-v5p", "tpu-v6e"] {
        assert_eq!(per_gpu(chip), None, "{chip}");
    }
}

#[test]
fn power_is_the_systems_share_where_sourced_else_the_tdp() {
    let (header, rows) = chips();
    let watts = |chip| number(&header, &rows, chip, "power_w").unwrap();
    // system maximum over its GPUs (W1-W5 in docs/sources.md)
    assert_eq!(watts("a100-40gb"), 6_500.0 / 8.0);
    assert_eq!(watts("h100-sxm"), 10_200.0 / 8.0);
    assert_eq!(watts("h200"), 10_200.0 / 8.0);
    assert_eq!(watts("b200"), 14_300.0 / 8.0);
    assert_eq!(watts("b300"), 14_500.0 / 8.0);
    assert_close(watts("gb200"), 120_000.0 / 72.0, 2e-4);
    // TDP: no system figure sourced
    assert_eq!(watts("h100-pcie"), 350.0);
    assert_eq!(watts("mi300x"), 750.0);
}

#[test]
fn every_purchase_and_power_figure_names_its_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let comment = |key: &str| {
            let line = text.lines().find(|l| l.starts_with(key))?;
            Some(line.split_once('#').map_or("", |(_, c)| c).to_owned())
        };
        let name = path.display();
        if let Some(why) = comment("  purchase:") {
            let sourced =
                why.contains("assumption") || (1..=8).any(|n| why.contains(&format!("(C{n}")));
            assert!(sourced, "{name}: purchase `{why}`");
        }
        if let Some(why) = comment("power:") {
            let system = why.contains("system") && why.contains("(W");
            let tdp = why.contains("TDP") || why.contains("TGP");
            assert!(system || tdp, "{name}: power `{why}`");
        }
    }
}

#[test]
fn tco_by_hand_for_a_chip_with_a_systems_share_and_one_with_a_tdp() {
    // (purchase, power in kW as the TCO takes them: the host's shares added to a part sold
    // or rated alone, 9,625 USD and 0.575 kW; docs/sources.md T3, T4)
    for (chip, purchase_usd, power_kw) in [
        ("b200", 40_000.0 + 9_625.0, 1.7875),
        ("mi300x", 15_000.0 + 9_625.0, 0.75 + 0.575),
        ("gb200", 3_100_000.0 / 72.0, 1.667),
    ] {
        let out = stepcost()
            .args(["run", "llama-3.1-8b", "--chip", chip, "--cost", "tco"])
            .args(["--format", "csv"])
            .assert()
            .success();
        let (header, rows) = csv_rows(&String::from_utf8_lossy(&out.get_output().stdout));
        let usd_per_hour: f64 = cell(&header, &rows[0], "usd_per_hour").parse().unwrap();
        // an annuity at 10 % over 4 years, 400 Gb/s x 10.61875 USD the same way, kW x PUE 1.3
        // x 0.10 USD/kWh, kW x 195.94 USD per kW-month
        let annuity = 0.10 / (1.0 - 1.1f64.powi(-4)) / 8760.0;
        let network = 400.0 * (1_728_000.0 + 2_621_440.0) / 1024.0 / 400.0;
        let expected = (purchase_usd + network) * annuity
            + power_kw * 1.3 * 0.10
            + power_kw * 195.94 * 12.0 / 8760.0;
        assert_close(usd_per_hour, expected, 1e-9);
    }
}
