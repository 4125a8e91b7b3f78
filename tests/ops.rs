//! How each op kind counts FLOPs and bytes, checked against hand counts.

use stepcost::{price, Bound, Chip, DType, Role, Scenario, ScenarioSpec, Source, Workload};

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
    assert_eq!(mix.cost.bytes, b * (k + k * n + n));
    assert_eq!(mix.cost.compute_time_s, 2.0 * b * n * k / 2000e12);
    let r = priced(&[(Role::Kv, DType::Int4)]);
    assert_eq!(r.prices[2].cost.compute_dtype, DType::Bf16);
    assert_eq!(
        r.prices[2].cost.bytes,
        8.0 * (2.0 * 64.0 + 0.5 * 64.0 * 1000.0 + 2.0 * 1000.0)
    );
}
