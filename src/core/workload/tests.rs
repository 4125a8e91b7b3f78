//! A two-op workload evaluated by hand: its GEMM sizes, its FLOPs and bytes per op, the
//! params found by meaning, and the kernels each fusion plan cuts it into.

use super::*;
use crate::base::param::ScenarioParam;
use crate::base::source::Source;

const STEP: &str = "\
name: two ops
params: {batch: 4, tokens: 2, hidden: 64, ffn: 256}
tensors:
  x: {role: activation, shape: [batch * tokens, hidden]}
blocks:
  - name: layer
    repeat: 3
    ops:
      - gemm: {name: up, of: [x], m: batch * tokens, n: ffn, k: hidden}
      - elementwise: {name: act, of: [up], flops_per_element: 4}
fusion:
  fused: [[up, act]]
default_fusion: fused
";

fn workload() -> Workload {
    Workload::load(&Source::from_text("two-ops.yaml", STEP)).unwrap()
}

#[test]
fn evaluation_counts_each_op_by_hand() {
    let w = workload();
    let mut ev = w.new_evaluation();
    w.evaluate(&[], &mut ev).unwrap();
    // the GEMM: 8 x 64 times 64 x 256, once
    let dims = ev.gemm[0];
    assert_eq!(
        (dims.count, dims.m, dims.n, dims.k),
        (1.0, 8.0, 256.0, 64.0)
    );
    assert_eq!(ev.flops[0], 2.0 * 8.0 * 256.0 * 64.0);
    // the activation: 4 FLOPs on each of the GEMM's 8 x 256 outputs
    assert_eq!(ev.flops[1], 4.0 * 8.0 * 256.0);
    assert_eq!(ev.repeats[0], 3);
    // a new batch changes what depends on it
    let batch = w.param_index("batch").unwrap();
    w.evaluate(&[(batch, 8.0)], &mut ev).unwrap();
    assert_eq!(ev.gemm[0].m, 16.0);
}

/// An evaluation reused across scenarios whose overrides come and go, as a sweep, a plan's
/// profile and its scenario share one: each gives what a fresh evaluation gives.
#[test]
fn a_reused_evaluation_follows_overrides_that_come_and_go() {
    const DERIVED: &str = "\
name: derived
params: {batch: 4, ep: 2, local: batch / ep, rows: local * 2, reps: 3}
tensors:
  x: {role: activation, shape: [rows, 64]}
blocks:
  - name: layer
    repeat: reps
    ops:
      - gemm: {name: up, of: [x], m: local, n: 128, k: 64}
";
    let w = Workload::load(&Source::from_text("derived.yaml", DERIVED)).unwrap();
    let [batch, ep, local, reps] =
        ["batch", "ep", "local", "reps"].map(|p| w.param_index(p).unwrap());
    // A derived param overridden, then not: it and what reads it follow its default again.
    let sequence: [&[(usize, f64)]; 9] = [
        &[(batch, 8.0)],
        &[(batch, 8.0), (ep, 4.0)],
        &[(ep, 4.0)],
        &[(ep, 4.0), (local, 3.0)],
        &[(local, 5.0)],
        &[(batch, 8.0)],
        &[],
        &[(reps, 5.0), (batch, 16.0)],
        &[(batch, 16.0)],
    ];
    let mut reused = w.new_evaluation();
    for overrides in sequence {
        w.evaluate(overrides, &mut reused).unwrap();
        let mut fresh = w.new_evaluation();
        w.evaluate(overrides, &mut fresh).unwrap();
        assert_eq!(reused.params, fresh.params, "{overrides:?}");
        assert_eq!(reused.gemm[0], fresh.gemm[0], "{overrides:?}");
        assert_eq!(reused.repeats, fresh.repeats, "{overrides:?}");
        assert_eq!(reused.tensors, fresh.tensors, "{overrides:?}");
    }
    // batch 16 over the default 2 experts' worth: 8 rows, in 3 repeats once reps is dropped
    assert_eq!((reused.gemm[0].m, reused.repeats[0]), (8.0, 3));
}

#[test]
fn params_with_a_meaning_are_found_at_load() {
    let w = workload();
    assert_eq!(w.param(ScenarioParam::Batch), Some(0));
    assert_eq!(w.param(ScenarioParam::Tokens), Some(1));
    assert_eq!(w.param(ScenarioParam::Context), None);
    let err = w
        .require(ScenarioParam::Context, "it cannot price a request")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "workload `two-ops` has no `context` param, so it cannot price a request"
    );
}

#[test]
fn fusion_plans_cut_kernels_and_name_their_kind() {
    let w = workload();
    let names: Vec<&str> = w.fusion_plan_names().collect();
    assert_eq!(names, ["none", "fused"]);
    assert_eq!(w.default_fusion, 1);
    let none: Vec<KernelKind> = w.fusion_plans[0].kernels.iter().map(|k| k.kind).collect();
    assert_eq!(none, [KernelKind::Gemm, KernelKind::Elementwise]);
    let fused = &w.fusion_plans[1].kernels;
    assert_eq!(fused.len(), 1);
    assert_eq!(
        (fused[0].kind, fused[0].name.as_str()),
        (KernelKind::Fused, "up+act")
    );
    assert_eq!(fused[0].kind.name(), "fused");
}

/// A windowed block's mask share moves with the context even where the op's own sizes stay
/// at the window: a reused evaluation re-evaluates it then, and keeps it where the share too
/// is as it was.
#[test]
fn a_reused_evaluation_follows_a_mask_share_that_moves_alone() {
    const WINDOWED: &str = "\
name: windowed
params: {tokens: 50, context: 60, window: 100}
tensors:
  q: {role: activation, shape: [tokens, 64]}
  k: {role: kv, shape: [\"min(context + tokens, window)\", 64]}
blocks:
  - name: local
    causal: {queries: tokens, context: context, window: window}
    ops:
      - gemm: {name: scores, of: [q, k], m: tokens, n: \"min(context + tokens, window)\", k: 64}
";
    let w = Workload::load(&Source::from_text("windowed.yaml", WINDOWED)).unwrap();
    let context = w.param_index("context").unwrap();
    let mut reused = w.new_evaluation();
    // Contexts 60, 70 and 80 all fill the window (n = 100); the first query attends to
    // window - context of the new tokens before the window is full: 40, 30, 20 of them.
    for c in [60.0, 70.0, 80.0, 200.0, 300.0] {
        w.evaluate(&[(context, c)], &mut reused).unwrap();
        let mut fresh = w.new_evaluation();
        w.evaluate(&[(context, c)], &mut fresh).unwrap();
        assert_eq!(reused.gemm[0].n, 100.0);
        assert_eq!(reused.causal[0], fresh.causal[0], "context {c}");
        // Past the window every query sees a full window: the share is 1 at 200 and at 300,
        // where the op is kept.
        let n1 = (100.0 - c).clamp(0.0, 50.0);
        let pairs = n1 * c + n1 * (n1 + 1.0) / 2.0 + (50.0 - n1) * 100.0;
        assert_eq!(fresh.causal[0], pairs / (50.0 * 100.0), "context {c}");
        assert_eq!(reused.op_changed(0), c < 300.0, "context {c}");
    }
}
