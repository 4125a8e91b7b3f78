//! The chips of the catalogue: each new chip is listed by `stepcost chips` with figures its
//! datasheets give by arithmetic (units x FLOP per clock x clock, bus width x data rate, a
//! rack's figure over its GPUs), and announced chips stay out of `--chip all` unless asked for.

use stepcost::{chip::Announced, chip::ChipStatus, chip::Fabric, types::DType, Chip};

use crate::common::{assert_close, cell, chip, csv_rows, stepcost};

/// The chip ids `stepcost chips --format csv` lists (one row per chip and data type).
fn listed_ids() -> Vec<String> {
    let out = stepcost()
        .args(["chips", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (header, rows) = csv_rows(&String::from_utf8(out.stdout).unwrap());
    let mut ids: Vec<String> = rows
        .iter()
        .map(|r| cell(&header, r, "chip").to_owned())
        .collect();
    ids.dedup();
    ids
}

#[test]
fn chips_lists_the_new_chips_and_marks_the_announced_ones() {
    let ids = listed_ids();
    for id in [
        "gb300",
        "b300",
        "tpu7x",
        "trainium2",
        "rtx-pro-6000",
        "mi350x",
        "h100-pcie",
        "h100-nvl",
        "h200-nvl",
        "vr200",
        "mi455x",
    ] {
        assert!(ids.iter().any(|i| i == id), "`stepcost chips` lacks {id}");
    }
    let out = stepcost().args(["chips"]).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("vr200 (announced)") && table.contains("mi455x (announced)"));
    assert!(!table.contains("gb300 (announced)"));
}

#[test]
fn peaks_are_units_times_flop_per_clock_times_clock() {
    // CDNA4: 256 CUs (ROCm gpu-specs), 4,096 bf16 and 8,192 fp8 FLOP per clock per CU; the
    // MI350X runs the MI355X's silicon at 2.2 GHz, the MI355X at 2.4 GHz.
    for (id, ghz) in [("mi350x", 2.2e9), ("mi355x", 2.4e9)] {
        let c = chip(id);
        assert_close(
            c.matrix_peak(DType::Bf16).unwrap(),
            256.0 * 4096.0 * ghz,
            1e-4,
        );
        assert_close(
            c.matrix_peak(DType::Fp8).unwrap(),
            256.0 * 8192.0 * ghz,
            1e-4,
        );
    }
    // RTX PRO 6000: 188 SMs x 128 FP32 lanes x 2 (FMA) x ~2.6 GHz boost = 125.1 TFLOPS.
    let rtx = chip("rtx-pro-6000");
    let fp32 = rtx.matrix_peak(DType::Fp32).unwrap();
    assert_close(fp32, 188.0 * 128.0 * 2.0 * 2.6e9, 2e-3);
    // GDDR7 on a 512-bit bus at 28 Gb/s a pin.
    assert_close(rtx.bandwidth_bytes_per_s(), 512.0 / 8.0 * 28e9, 1e-12);
    assert_eq!(rtx.interconnect().map(|l| &l.fabric), Some(&Fabric::Pcie));
}

#[test]
fn rack_and_pod_figures_over_their_chips() {
    // GB300 NVL72: 1,080 PF dense FP4, 576 TB/s of HBM and 135 kW a rack, over 72 GPUs.
    let gb300 = chip("gb300");
    assert_close(
        gb300.matrix_peak(DType::Fp4).unwrap(),
        1080e15 / 72.0,
        1e-12,
    );
    assert_close(gb300.bandwidth_bytes_per_s(), 576e12 / 72.0, 1e-12);
    assert_close(gb300.power_w().unwrap(), 135e3 / 72.0, 1e-12);
    // TPU7x: 1,200 GB/s of ICI both ways per chip = 6 neighbours x 200 GB/s; 192 GiB of HBM.
    let tpu = chip("tpu7x");
    let link = tpu.interconnect().unwrap();
    assert_close(link.bandwidth_bytes_per_s, 6.0 * 200e9 / 2.0, 1e-12);
    assert_eq!(tpu.capacity_bytes(), 192.0 * 1024.0 * 1024.0 * 1024.0);
    // Trainium2: 8 NeuronCore-v3 x 79 BF16 TFLOPS = 632 against the 667 AWS states for the chip;
    // the chip figure is the file's, and the cores' product is within 6 % of it.
    let trn = chip("trainium2");
    let bf16 = trn.matrix_peak(DType::Bf16).unwrap();
    assert_eq!(bf16, 667e12);
    assert_close(8.0 * 79e12, bf16, 0.06);
    // H100 NVL: NVIDIA's 1,671 BF16 TFLOPS are with 2:4 sparsity; dense is half.
    assert_close(
        chip("h100-nvl").matrix_peak(DType::Bf16).unwrap(),
        1671e12 / 2.0,
        1e-12,
    );
}

#[test]
fn announced_chips_stay_out_of_all_unless_included() {
    let ids = |announced| -> Vec<String> {
        let chips = Chip::load_selected(&["all"], announced).unwrap();
        chips.iter().map(|c| c.id().to_owned()).collect()
    };
    let shipping = ids(Announced::Exclude);
    let every = ids(Announced::Include);
    for id in ["vr200", "mi455x"] {
        assert_eq!(chip(id).status(), ChipStatus::Announced);
        assert!(!shipping.iter().any(|i| i == id), "`all` holds {id}");
        assert!(
            every.iter().any(|i| i == id),
            "`all` with announced lacks {id}"
        );
    }
    assert_eq!(every.len(), shipping.len() + 2);
    // Named by itself, an announced chip loads.
    assert_eq!(Chip::load_all(&["vr200"]).unwrap()[0].id(), "vr200");
}

#[test]
fn compare_all_takes_announced_chips_only_with_the_flag() {
    let chips_of = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["compare", "gemm", "--chip", "all", "--format", "csv"];
        args.extend(extra);
        let out = stepcost().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (header, rows) = csv_rows(&String::from_utf8(out.stdout).unwrap());
        rows.iter()
            .map(|r| cell(&header, r, "chip").to_owned())
            .collect()
    };
    let without = chips_of(&[]);
    assert!(!without.iter().any(|c| c == "vr200" || c == "mi455x"));
    let with = chips_of(&["--include-announced"]);
    assert!(with.iter().any(|c| c == "vr200") && with.iter().any(|c| c == "mi455x"));
}

#[test]
fn every_chip_prices_a_fixed_cost_per_kernel() {
    // A chip file without a launch floor or a DRAM latency would price every kernel's gap,
    // first load and last store as free, and win at small batch for that alone: each file
    // gives both, measured, fitted or stated as an assumption (docs/sources.md, kernel
    // physics 3 and 10). One bf16 value added to: all fixed cost, at least a microsecond.
    let w = crate::common::workload("elementwise");
    let spec = stepcost::ScenarioSpec {
        sets: vec![("n".into(), 1.0)],
        ..stepcost::ScenarioSpec::default()
    };
    let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
    for id in listed_ids() {
        let c = chip(&id);
        let step_s = stepcost::price(&w, &c, &scenario)
            .unwrap()
            .summary
            .step_time_s;
        assert!(step_s >= 1e-6, "{id}: {step_s} s");
        assert!(c.expected().unwrap().dram_latency_s > 0.0, "{id}");
    }
}

#[test]
fn the_catalogue_refuses_a_file_without_its_purchase_and_power_bases() {
    let without =
        "name: t\nmemory: {capacity: 80 GB, bandwidth: 2 TB/s}\nmatrix: {bf16: 1 PFLOPS}\n\
                   power: 1000 W\nprice: {purchase: 20000 USD}\n";
    let source = stepcost::Source::from_text("t.yaml", without);
    // a user's file may leave them out
    assert!(Chip::load(&source).is_ok());
    let refused = Chip::load_catalogue(&source).unwrap_err().to_string();
    assert!(refused.contains("price.purchase_basis"), "{refused}");
    assert!(refused.contains("power_basis"), "{refused}");
    let with = without
        .replace("power: 1000 W\n", "power: 1000 W\npower_basis: system\n")
        .replace("20000 USD}", "20000 USD, purchase_basis: system}");
    let source = stepcost::Source::from_text("t.yaml", &with);
    assert!(Chip::load_catalogue(&source).is_ok());
    // every built-in file passes the catalogue's rules
    for id in stepcost::chip::builtin() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("hardware/{id}.yaml")),
        )
        .unwrap();
        let source = stepcost::Source::from_text(&format!("{id}.yaml"), &text);
        assert!(Chip::load_catalogue(&source).is_ok(), "{id}");
    }
}
