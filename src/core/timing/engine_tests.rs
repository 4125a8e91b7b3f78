//! Each engine term expected mode prices, by hand on the round chip: host work and how much
//! of it hides behind the chip, host work per sequence, graph and eager launches, the
//! all-reduce's choice, prompt buckets and a quantised KV cache's widening.

use std::sync::Arc;

use super::attention_tests::{chip as attention_chip, ATTENTION};
use super::tests::{scenario_with, ALLREDUCE, CHIP, STEP};
use super::*;
use crate::base::dtype::Role;
use crate::base::format::Format;
use crate::base::source::Source;
use crate::base::types::TypeKey;
use crate::core::engine::{
    AllReduceAlgorithm, AllReduceRule, Engine, EngineTerms, HostWork, Launches,
};

fn with_engine(mut scenario: Scenario, engine: &Arc<Engine>) -> Scenario {
    scenario.set_engine(Some(engine.clone()));
    scenario
}

fn hosted_chip() -> Chip {
    let hosted = format!("{CHIP}  host_step: 100 us\n  host_sequence: 10 us\n");
    Chip::load(&Source::from_text("hosted.yaml", &hosted)).unwrap()
}

fn host(step_s: f64, sequence_s: f64, overlap: f64) -> Arc<Engine> {
    let mut t = EngineTerms::neutral();
    t.host = Some(HostWork {
        step_s,
        sequence_s,
        overlap,
    });
    t.engine()
}

#[test]
fn host_work_hides_behind_the_chips_step_as_far_as_the_engine_overlaps() {
    let chip = hosted_chip();
    let workload = Workload::load(&Source::from_text("step.yaml", STEP)).unwrap();
    let summary = |sets: &[(&str, f64)], engine: Option<&Arc<Engine>>| {
        let mut s = scenario_with(&workload, Mode::Expected, sets);
        s.set_engine(engine.cloned());
        price(&workload, &chip, &s).unwrap().summary
    };
    for n in [1000.0, 1e8] {
        let gpu_s = summary(&[("batch", 4.0), ("engine_host", 0.0), ("n", n)], None).step_time_s;
        // H = 100 us + 4 x 10 us = 140 us; o x H hides, at most the chip's own gpu_s.
        for overlap in [0.0, 0.5, 1.0] {
            let engine = host(100e-6, 10e-6, overlap);
            let s = summary(&[("batch", 4.0), ("n", n)], Some(&engine));
            let exposed = 140e-6 - (overlap * 140e-6f64).min(gpu_s);
            assert!((s.host_time_s - exposed).abs() < 1e-15, "{n} {overlap}");
            assert!((s.step_time_s - gpu_s - exposed).abs() < 1e-15);
        }
        // All of it hidden: the step takes the longer of the two.
        let s = summary(&[("batch", 4.0), ("n", n)], Some(&host(100e-6, 10e-6, 1.0)));
        assert!((s.step_time_s - gpu_s.max(140e-6)).abs() < 1e-15);
    }
    // The engine's default share of it, unless the scenario sets one.
    let mut t = EngineTerms::neutral();
    t.engine_host = 0.5;
    let half = t.engine();
    let s = summary(&[("batch", 4.0)], Some(&half));
    assert!((s.host_time_s - 70e-6).abs() < 1e-15, "{}", s.host_time_s);
    let s = summary(&[("batch", 4.0), ("engine_host", 1.0)], Some(&half));
    assert!((s.host_time_s - 140e-6).abs() < 1e-15);
    // An engine without host terms pays the chip's, none hidden: as without an engine.
    let neutral = EngineTerms::neutral().engine();
    assert_eq!(
        summary(&[("batch", 4.0)], Some(&neutral)),
        summary(&[("batch", 4.0)], None)
    );
    // Roofline mode reads no engine term.
    let mut s = scenario_with(&workload, Mode::Roofline, &[("batch", 4.0)]);
    s.set_engine(Some(host(1e-3, 1e-3, 0.0)));
    assert_eq!(
        price(&workload, &chip, &s).unwrap().summary.host_time_s,
        0.0
    );
}

#[test]
fn host_work_per_sequence_grows_with_the_batch() {
    let chip = hosted_chip();
    let workload = Workload::load(&Source::from_text("step.yaml", STEP)).unwrap();
    let engine = host(0.0, 50e-6, 0.0);
    let host_s = |batch: f64, dp: f64| {
        let s = scenario_with(&workload, Mode::Expected, &[("batch", batch), ("dp", dp)]);
        price(&workload, &chip, &with_engine(s, &engine))
            .unwrap()
            .summary
            .host_time_s
    };
    // 50 us for each sequence the replica steps: 1, 64, and 64 of 2 x 64 on two replicas.
    assert!((host_s(1.0, 1.0) - 50e-6).abs() < 1e-15);
    assert!((host_s(64.0, 1.0) - 3200e-6).abs() < 1e-15);
    assert!((host_s(64.0, 2.0) - 3200e-6).abs() < 1e-15);
}

#[test]
fn a_batch_past_the_largest_graph_launches_each_kernel_from_the_host() {
    let eager = format!("{CHIP}eager_launch: 3 us\n");
    let chip = Chip::load(&Source::from_text("eager.yaml", &eager)).unwrap();
    let workload = Workload::load(&Source::from_text("step.yaml", STEP)).unwrap();
    let engine = |sizes: Vec<u64>, eager_launch_s: f64| {
        let mut t = EngineTerms::neutral();
        t.launches = Launches {
            graph_batch_sizes: sizes,
            eager_launch_s,
        };
        t.engine()
    };
    let (slow, fast) = (
        engine(vec![1, 2, 4, 8], 5e-6),
        engine(vec![1, 2, 4, 8], 2e-6),
    );
    let (mut ev, mut costs) = (workload.new_evaluation(), Vec::new());
    // One evaluation throughout, as a sweep over engines reuses it: a cost priced under one
    // engine is not kept under another.
    let mut launch_at = |engine: &Arc<Engine>, sets: &[(&str, f64)]| {
        let s = with_engine(scenario_with(&workload, Mode::Expected, sets), engine);
        price_step(&workload, &chip, &s, &mut ev, &mut costs).unwrap();
        costs[0].launch_s
    };
    // Launch plus the DRAM latency of the first load and the last store (2 x 0.5 us).
    let dram_s = 1e-6;
    // Batch 5 replays the graph of 8 (padded); 9 is past it: the engine's 5 us per kernel.
    assert_eq!(launch_at(&slow, &[("batch", 5.0)]), 1e-6 + dram_s);
    assert_eq!(launch_at(&slow, &[("batch", 8.0)]), 1e-6 + dram_s);
    assert_eq!(launch_at(&slow, &[("batch", 9.0)]), 5e-6 + dram_s);
    // An engine quicker than the chip's eager launch waits for the chip's 3 us.
    assert_eq!(launch_at(&fast, &[("batch", 9.0)]), 3e-6 + dram_s);
    assert_eq!(launch_at(&slow, &[("batch", 9.0)]), 5e-6 + dram_s);
    // Per replica: 2 x 8 sequences over two replicas fit the graph of 8.
    assert_eq!(
        launch_at(&slow, &[("batch", 8.0), ("dp", 2.0)]),
        1e-6 + dram_s
    );
    // No graph at all: every step eager; a prompt step is eager whatever its batch.
    assert_eq!(launch_at(&engine(vec![], 5e-6), &[]), 5e-6 + dram_s);
    assert_eq!(launch_at(&slow, &[("tokens", 128.0)]), 5e-6 + dram_s);
}

#[test]
fn the_all_reduce_runs_the_first_rule_that_admits_its_buffer() {
    let linked = format!("{CHIP}interconnect: {{bandwidth: 100 GB/s, domain: 8, latency: 1 us}}\n");
    let chip = Chip::load(&Source::from_text("linked.yaml", &linked)).unwrap();
    let workload = Workload::load(&Source::from_text("ar.yaml", ALLREDUCE)).unwrap();
    let rule = |up_to_bytes, up_to_ranks, algorithm| AllReduceRule {
        up_to_bytes,
        up_to_ranks,
        algorithm,
    };
    let time_s = |rules: Vec<AllReduceRule>, tp: f64| {
        let mut t = EngineTerms::neutral();
        t.all_reduce = rules;
        let s = scenario_with(&workload, Mode::Expected, &[("tp", tp)]);
        let s = with_engine(s, &t.engine());
        price(&workload, &chip, &s).unwrap().prices[0].cost.time_s
    };
    // 1e6 bf16 values (2 MB) over 8 chips at 100 GB/s, 1 us a step, and the 1 us launch.
    let launch = 1e-6;
    let one_shot = launch + 7.0 * 2e6 / 100e9 + 1e-6;
    let two_shot = launch + 2.0 * 7.0 / 8.0 * 2e6 / 100e9 + 2.0 * 1e-6;
    let ring = launch + 2.0 * 7.0 / 8.0 * 2e6 / 100e9 + 14.0 * 1e-6;
    let tree = launch + 2.0 * 2e6 / 100e9 + 2.0 * 3.0 * 1e-6;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
    use AllReduceAlgorithm::*;
    assert!(close(
        time_s(vec![rule(Some(4e6), Some(8), OneShot)], 8.0),
        one_shot
    ));
    assert!(close(
        time_s(vec![rule(None, None, TwoShot)], 8.0),
        two_shot
    ));
    // Too large for the first rule: the next one's.
    let rules = vec![rule(Some(1e6), None, OneShot), rule(None, None, Ring)];
    assert!(close(time_s(rules, 8.0), ring));
    assert!(close(time_s(vec![rule(None, None, Tree)], 8.0), tree));
    // More ranks than the rule takes, and no rule after it: NCCL's faster of ring and tree.
    let rules = vec![rule(None, Some(4), OneShot)];
    assert!(close(time_s(rules, 8.0), ring.min(tree)));
    // Over 4 chips the one-shot reads 3 buffers.
    let rules = vec![rule(None, Some(4), OneShot)];
    assert!(close(time_s(rules, 4.0), launch + 3.0 * 2e6 / 100e9 + 1e-6));
}

#[test]
fn a_prompt_runs_at_its_bucket_and_counts_its_own_tokens() {
    let text = "\
name: prompt
params: {batch: 1, tokens: 1, k: 1000, n: 1000}
tokens_per_step: batch * tokens
sequences: batch
tensors:
  x: {role: activation, shape: [batch * tokens, k]}
blocks:
  - name: kernel
    ops:
      - gemm: {name: proj, of: [x], m: batch * tokens, n: n, k: k}
";
    let chip = Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap();
    let workload = Workload::load(&Source::from_text("prompt.yaml", text)).unwrap();
    let mut t = EngineTerms::neutral();
    t.prompt_buckets = vec![128, 256];
    let buckets = t.engine();
    let (mut ev, mut costs) = (workload.new_evaluation(), Vec::new());
    let mut step = |tokens: f64, engine: Option<&Arc<Engine>>| {
        let mut s = scenario_with(&workload, Mode::Expected, &[("tokens", tokens)]);
        s.set_engine(engine.cloned());
        price_step(&workload, &chip, &s, &mut ev, &mut costs).unwrap()
    };
    let at_128 = step(128.0, None);
    let padded = step(100.0, Some(&buckets));
    assert_eq!(padded.step_time_s, at_128.step_time_s);
    assert_eq!(padded.tokens_per_step, Some(100.0));
    let rate = padded.tokens_per_s.unwrap();
    assert!((rate - 100.0 / at_128.step_time_s).abs() < 1e-9 * rate);
    // The same evaluation priced at 128 first: the next scenario is not taken for it.
    let unpadded = step(100.0, None);
    assert!(unpadded.step_time_s < at_128.step_time_s);
    // A bucket's own length, one past the last bucket and a decode step run as they are.
    for tokens in [256.0, 300.0, 1.0] {
        assert_eq!(step(tokens, Some(&buckets)), step(tokens, None), "{tokens}");
    }
}

#[test]
fn reading_a_quantised_cache_pays_the_engines_widening_per_element() {
    let chip = attention_chip(None);
    let workload = Workload::load(&Source::from_text("attention.yaml", ATTENTION)).unwrap();
    let mut t = EngineTerms::neutral();
    t.kv_dequant.fp8_ops_per_element = 2.0;
    t.kv_dequant.int4_ops_per_element = 5.0;
    let engine = t.engine();
    let cost = |kv: Format, engine: Option<&Arc<Engine>>| {
        let mut s = Scenario::defaults(&workload);
        s.set_mode(Mode::Expected);
        s.set_type(TypeKey::Role(Role::Kv), kv);
        s.set_engine(engine.cloned());
        price(&workload, &chip, &s).unwrap().prices[0].cost
    };
    // Both caches, 2 sequences x 2 KV heads x 1000 positions x 64: 512,000 elements, widened
    // to bf16 at the 10 TFLOPS vector peak (fraction 1).
    let elements = 2.0 * 2.0 * 2.0 * 1000.0 * 64.0;
    let fp8 = cost(Format::Fp8, Some(&engine));
    assert!((fp8.dequant_s - elements * 2.0 / 10e12).abs() < 1e-20);
    let int4 = cost(Format::Int4, Some(&engine));
    assert!((int4.dequant_s - elements * 5.0 / 10e12).abs() < 1e-20);
    let without = cost(Format::Fp8, None);
    assert_eq!(without.dequant_s, 0.0);
    assert!((fp8.expected_compute_s - without.expected_compute_s - fp8.dequant_s).abs() < 1e-18);
    // A 16-bit cache is not widened.
    assert_eq!(cost(Format::Bf16, Some(&engine)).dequant_s, 0.0);
}
