//! Collectives within one scale-up domain, on the wires each chip file names: a switch, a
//! point-to-point mesh, a torus or PCIe. Every expected time is bytes over a bandwidth worked
//! out here from the datasheet rates, not read back from the program.

use stepcost::{Mode, ScenarioSpec, StepReport};

use crate::common::{assert_close, roofline, run};

/// Llama-3.1-8B decode at batch 16 on `chip` split `tp` ways.
fn llama_8b(chip: &str, tp: f64, mode: Mode) -> StepReport {
    let spec = ScenarioSpec {
        mode,
        engine: crate::common::fitted_engine(),
        ..roofline()
    };
    let sets = [
        ("batch", 16.0),
        ("tokens", 1.0),
        ("context", 1024.0),
        ("tp", tp),
    ];
    run("llama-3.1-8b", chip, &sets, spec)
}

/// The buffer of one all-reduce of the hidden state: batch x tokens x hidden, bf16.
const BUFFER_BYTES: f64 = 16.0 * 4096.0 * 2.0;

/// The time of the attention output's all-reduce.
fn allreduce_s(report: &StepReport) -> f64 {
    let op = report.prices.iter().find(|p| p.name == "attn_allreduce");
    op.expect("an all-reduce under tp").cost.time_s
}

/// A ring all-reduce over `n` chips sends `2 (n - 1) / n` of the buffer from each.
fn ring_s(n: f64, bandwidth_bytes_per_s: f64) -> f64 {
    2.0 * (n - 1.0) / n * BUFFER_BYTES / bandwidth_bytes_per_s
}

#[test]
fn mi300x_pairs_share_one_link_and_eight_use_the_whole_mesh() {
    // Infinity Fabric: 128 GB/s a link both ways = 64 GB/s per direction to each peer.
    let link = 128e9 / 2.0;
    let two = llama_8b("mi300x", 2.0, Mode::Roofline);
    assert_close(allreduce_s(&two), ring_s(2.0, link), 1e-12);
    let four = llama_8b("mi300x", 4.0, Mode::Roofline);
    assert_close(allreduce_s(&four), ring_s(4.0, 3.0 * link), 1e-12);
    let eight = llama_8b("mi300x", 8.0, Mode::Roofline);
    assert_close(allreduce_s(&eight), ring_s(8.0, 7.0 * link), 1e-12);
}

#[test]
fn mi300x_expected_mode_applies_the_measured_bus_bandwidth() {
    // Measured busbw: 47.671 GB/s on 2 GPUs, 312.912 GB/s on 8 (stas00/ml-engineering
    // network/README.md). Expected mode takes the faster of a ring (2 (n - 1) steps) and a
    // tree (the buffer twice, 2 log2 n steps), 2 us a step.
    for (tp, busbw) in [(2.0_f64, 47.671e9), (8.0, 312.912e9)] {
        let report = llama_8b("mi300x", tp, Mode::Expected);
        let op = report.prices.iter().find(|p| p.name == "attn_allreduce");
        let cost = &op.unwrap().cost;
        let ring = ring_s(tp, busbw) + 2.0 * (tp - 1.0) * 2e-6;
        let tree = 2.0 * BUFFER_BYTES / busbw + 2.0 * tp.log2() * 2e-6;
        // The file rounds the measured fractions to three places.
        assert_close(cost.time_s - cost.launch_s, ring.min(tree), 2e-3);
    }
}

#[test]
fn l40s_splits_over_pcie() {
    // PCIe 4.0 x16: 31 GB/s per direction; a switch fabric of two cards is one slot each.
    let report = llama_8b("l40s", 2.0, Mode::Roofline);
    assert_close(allreduce_s(&report), ring_s(2.0, 31e9), 1e-12);
}

#[test]
fn h100_pcie_goes_over_pcie_and_h100_nvl_over_its_bridge() {
    // PCIe 5.0 x16: 63 GB/s per direction; the NVL pair's bridges: 600 GB/s both ways.
    let pcie = llama_8b("h100-pcie", 2.0, Mode::Roofline);
    assert_close(allreduce_s(&pcie), ring_s(2.0, 63e9), 1e-12);
    let nvl = llama_8b("h100-nvl", 2.0, Mode::Roofline);
    assert_close(allreduce_s(&nvl), ring_s(2.0, 600e9 / 2.0), 1e-12);
}

#[test]
fn a_tpu_torus_gives_a_ring_per_dimension_spanned() {
    // TPU v6e: 800 GB/s both ways over 4 ports = 100 GB/s per link and direction. A group
    // inside one 16-chip ring uses that ring's two links; one spanning both dimensions of the
    // 16x16 torus uses all four.
    let link = 800e9 / 2.0 / 4.0;
    let sixteen = llama_8b("tpu-v6e", 16.0, Mode::Roofline);
    assert_close(allreduce_s(&sixteen), ring_s(16.0, 2.0 * link), 1e-12);
    let thirty_two = llama_8b("tpu-v6e", 32.0, Mode::Roofline);
    assert_close(allreduce_s(&thirty_two), ring_s(32.0, 4.0 * link), 1e-12);
}

#[test]
fn a_switch_gives_every_group_the_whole_link() {
    // NVLink 4 into NVSwitch: 900 GB/s both ways = 450 GB/s per direction, for 2 as for 8.
    for tp in [2.0, 8.0] {
        let report = llama_8b("h100-sxm", tp, Mode::Roofline);
        assert_close(allreduce_s(&report), ring_s(tp, 450e9), 1e-12);
    }
}
