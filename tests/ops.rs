//! How each op kind counts FLOPs and bytes, checked against hand counts.

use stepcost::{
    price, timing::Bound, types::DType, types::Role, Chip, Scenario, ScenarioSpec, Source, Workload,
};

const CHIP: &str = "name: test
memory: {capacity: 80 GB, bandwidth: 2 TB/s}
matrix: {bf16: 1000 TFLOPS, fp8: 2000 TFLOPS}
vector: {fp32: 50 TFLOPS, bf16: 100 TFLOPS}
";

const STEP: &str = "name: ops
params:
  batch: 2
  heads: 4
  head_dim: 64
  context: 1000
  hidden: heads * head_dim          # a param defined by others
  layers: 3
tokens_per_step: batch
tensors:
  table: {role: weight, shape: [1000, hidden]}
blocks:
  - name: layer
    repeat: layers
    tensors:
      k: {role: kv, shape: [batch, heads, context, head_dim]}
      v: {role: kv, shape: [batch, heads, context, head_dim]}
    ops:
      - elementwise: {name: gather, of: [table], reads: {table: batch * hidden}, elements: batch * hidden,
                      flops_per_element: 0}
      - kv_read: {name: attend, of: [gather, k, v], flops: 4 * batch * heads * context * head_dim,
                  out: batch * hidden}
      - gemm: {name: mix, of: [attend, k], batch: batch * heads, m: 1, n: context, k: head_dim}
";

fn priced(dtypes: &[(Role, DType)]) -> stepcost::StepReport {
    let chip = Chip::load(&Source::from_text("c.yaml", CHIP)).unwrap();
    let w = Workload::load(&Source::from_text("w.yaml", STEP)).unwrap();
    let spec = ScenarioSpec {
        dtypes: dtypes.iter().map(|&(r, d)| (r.into(), d.into())).collect(),
        ..crate::common::roofline()
    };
    price(&w, &chip, &Scenario::resolve(&w, &spec).unwrap()).unwrap()
}

#[test]
fn each_kind_counts_as_documented() {
    let r = priced(&[]);
    let (batch, heads, d, ctx) = (2.0, 4.0, 64.0, 1000.0);
    let hidden = heads * d;
    let kv = batch * heads * ctx * d; // elements of one cache
                                      // gather: reads only the rows it needs, writes them; no FLOPs
    let gather = &r.prices[0];
    assert_eq!(
        (gather.cost.flops, gather.cost.bytes),
        (0.0, 2.0 * 2.0 * batch * hidden)
    );
    // kv_read: inputs whole (the gathered rows and both caches), `out` elements written
    let attend = &r.prices[1];
    assert_eq!(attend.cost.flops, 4.0 * batch * heads * ctx * d);
    assert_eq!(
        attend.cost.bytes,
        2.0 * (batch * hidden + 2.0 * kv + batch * hidden)
    );
    assert_eq!(attend.cost.bound, Bound::Memory);
    // gemm with two inputs: each matrix once, per batch entry
    let mix = &r.prices[2];
    let (b, m, n, k) = (batch * heads, 1.0, ctx, d);
    assert_eq!(mix.cost.flops, 2.0 * b * m * n * k);
    assert_eq!(mix.cost.bytes, 2.0 * b * (m * k + k * n + m * n));
    assert!(r.prices.iter().all(|p| p.cost.count == 3));
    assert_eq!(
        r.summary.step_time_s,
        3.0 * r.prices.iter().map(|p| p.cost.time_s).sum::<f64>()
    );
    // resident: the table, and both caches in each of 3 layers
    assert_eq!(r.summary.weight_bytes, 2.0 * 1000.0 * hidden);
    assert_eq!(r.summary.kv_bytes, 3.0 * 2.0 * 2.0 * kv);
    assert_eq!(r.summary.tokens_per_s, Some(batch / r.summary.step_time_s));
}

#[test]
fn role_types_set_bytes_and_the_compute_type() {
    let r = priced(&[(Role::Kv, DType::Fp8), (Role::Activation, DType::Fp8)]);
    let mix = &r.prices[2];
    assert_eq!(mix.cost.compute_dtype, DType::Fp8);
    let (b, n, k) = (8.0, 1000.0, 64.0);
    // fp8 attention reads its query (attend's output) in bf16 and quantises it in the kernel,
    // reads the fp8 cache, and writes its output in bf16 (`output` follows activation=fp8 to
    // bf16): 2 bytes a query value, 1 a cached value, 2 an output value
    assert_eq!(mix.cost.bytes, b * (2.0 * k + k * n + 2.0 * n));
    assert_eq!(mix.cost.compute_time_s, 2.0 * b * n * k / 2000e12);
    let r = priced(&[(Role::Kv, DType::Int4)]);
    assert_eq!(r.prices[2].cost.compute_dtype, DType::Bf16);
    assert_eq!(
        r.prices[2].cost.bytes,
        8.0 * (2.0 * 64.0 + 0.5 * 64.0 * 1000.0 + 2.0 * 1000.0)
    );
}

/// A state-space layer: a scan over `x` (heads x head_dim per token), B and C (groups x state
/// per token each) and each sequence's recurrent state (a tensor of role `state`).
const SCAN: &str = "name: scan
params:
  batch: 3
  tokens: 1
  heads: 4
  head_dim: 8
  state: 16
  groups: 2
tensors:
  xbc: {role: activation, shape: [batch * tokens, heads * head_dim + 2 * groups * state]}
blocks:
  - name: layer
    repeat: 2
    tensors:
      h: {role: state, shape: [batch, heads, head_dim, state]}   # one per layer
    ops:
      - scan: {name: ssm, of: [xbc, h], sequences: batch, tokens: tokens, heads: heads,
               head_dim: head_dim, state: state, groups: groups, chunk: 64}
";

fn scanned(sets: &[(&str, f64)]) -> stepcost::StepReport {
    let chip = Chip::load(&Source::from_text("c.yaml", CHIP)).unwrap();
    let w = Workload::load(&Source::from_text("w.yaml", SCAN)).unwrap();
    let spec = ScenarioSpec {
        sets: sets.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
        ..crate::common::roofline()
    };
    price(&w, &chip, &Scenario::resolve(&w, &spec).unwrap()).unwrap()
}

#[test]
fn a_scan_counts_its_recurrence_and_its_state() {
    let (batch, heads, p, n, groups) = (3.0, 4.0, 8.0, 16.0, 2.0);
    let state = heads * p * n; // one sequence's state: 512 elements
    let xbc = heads * p + 2.0 * groups * n; // 96 per token
                                            // Decode: per head, decay 128, outer product added 2 x 128, y = h C 2 x 128, x dt 8,
                                            // skip 2 x 8.
    let r = scanned(&[]);
    let ssm = &r.prices[0];
    assert_eq!(
        ssm.cost.flops,
        batch * heads * (128.0 + 256.0 + 256.0 + 8.0 + 16.0)
    );
    // Reads x, B, C and the state; writes y and the state back; bf16.
    let elements = batch * xbc + batch * state + batch * heads * p + batch * state;
    assert_eq!(ssm.cost.bytes, 2.0 * elements);
    // The state is resident per sequence in both layers, not KV cache.
    assert_eq!(r.summary.state_bytes, 2.0 * batch * state * 2.0);
    assert_eq!(r.summary.kv_bytes, 0.0);
    // Prefill of 128 tokens: 2 chunks of 64. Per chunk and head the diagonal block
    // 2 x 64^2 x 8, the chunk state and the output from the carried state 2 x 64 x 16 x 8
    // each, passing the state 2 x 16 x 8; per chunk and group C B^T 2 x 64^2 x 16.
    let r = scanned(&[("tokens", 128.0)]);
    let per_chunk = heads * (65536.0 + 2.0 * 16384.0 + 256.0) + groups * 131072.0;
    assert_eq!(r.prices[0].cost.flops, batch * 2.0 * per_chunk);
    let elements = batch * 128.0 * xbc + batch * state + batch * 128.0 * heads * p + batch * state;
    assert_eq!(r.prices[0].cost.bytes, 2.0 * elements);
    // and the state does not grow with the tokens
    assert_eq!(r.summary.state_bytes, 2.0 * batch * state * 2.0);
}
