//! The engine's serving terms, each by hand: admission (whole requests reserved against
//! pages on demand), the speculative cycle (the draft's host work once a cycle, an MLA
//! verify in the absorbed form) and the pipeline's steady state (micro-batches in flight, no
//! flush).

use super::*;
use crate::base::source::Source;
use crate::core::engine::{EngineTerms, PipelineSchedule};
use crate::core::scenario::{Mode, Scenario};
use crate::core::workload::Workload;

/// Round numbers, with host work so that the draft's host terms show.
const CHIP: &str = "\
name: Round chip
memory: {capacity: 80 GB, bandwidth: 1 TB/s}
matrix: {bf16: 100 TFLOPS}
vector: {bf16: 10 TFLOPS}
launch: 1 us
expected:
  matrix: {bf16: 0.5}
  memory: 0.8
  host_step: 100 us
  host_sequence: 10 us
";

/// `layers` layers of one projection and a read of each sequence's cache, spread evenly over
/// `pp` stages (no block only one stage runs), and a projection of the prompt tokens a mixed
/// step carries.
const SERVED: &str = "\
name: served
params: {batch: 1, tokens: 1, context: 0, layers: 8, pp: 1, micro_batches: pp,
         engine_host: 1, hidden: 4096, absorbed_max_tokens: 1,
         prefill_tokens: 0, prefill_seqs: 0, prefill_context: 0, max_batched_tokens: 8192}
tokens_per_step: batch * tokens
sequences: batch
chips: pp
stages: pp
tensors:
  x: {role: activation, shape: [batch * tokens, hidden]}
  kv: {role: kv, shape: [batch, context + tokens, hidden]}
  prompt: {role: activation, shape: ['max(prefill_tokens, 1)', hidden]}
blocks:
  - name: prompts
    repeat: min(ceil(prefill_tokens), 1)
    ops:
      - gemm: {name: prompt_proj, of: [prompt], m: 'max(prefill_tokens, 1)', n: hidden, k: hidden}
  - name: layer
    repeat: layers
    held: layers / pp
    ops:
      - gemm: {name: proj, of: [x], m: batch * tokens, n: hidden, k: hidden}
      - elementwise: {name: attend, of: [proj, kv], elements: batch * tokens * hidden,
                      flops_per_element: 2}
";

fn chip() -> Chip {
    Chip::load(&Source::from_text("round.yaml", CHIP)).unwrap()
}

fn workload() -> Workload {
    Workload::load(&Source::from_text("served.yaml", SERVED)).unwrap()
}

fn scenario(workload: &Workload, terms: Option<EngineTerms>, sets: &[(&str, f64)]) -> Scenario {
    let mut s = Scenario::defaults(workload);
    s.set_mode(Mode::Expected);
    for (name, value) in sets {
        s.set(workload, name, *value).unwrap();
    }
    s.set_engine(terms.map(EngineTerms::engine));
    s
}

fn server<'a>(chip: &'a Chip, workload: &'a Workload, scenario: &Scenario) -> Server<'a> {
    let target = IterationPricer::new(workload, chip, scenario).unwrap();
    Server::new(chip, target, None, 8192.0, ServingOptions::default()).unwrap()
}

#[test]
fn reserving_whole_requests_holds_about_half_the_requests_of_pages_on_demand() {
    let (chip, workload) = (chip(), workload());
    // Long outputs: 100 prompt tokens, 3900 output tokens.
    let shape = RequestShape::new(100, 3900).unwrap();
    let at = |admission| {
        let mut t = EngineTerms::neutral();
        t.admission = admission;
        let s = scenario(&workload, Some(t), &[]);
        server(&chip, &workload, &s).steady_state(shape, 8).unwrap()
    };
    let (on_demand, reserved) = (at(Admission::OnDemand), at(Admission::ReserveWhole));
    // A decoding sequence holds its mean context's cache, 100 + 3898 / 2 + 1 = 2050
    // positions, on demand; its prompt and whole output, 4000, reserved.
    let d = &on_demand.decode;
    let per_position = d.kv_bytes / (8.0 * 2050.0);
    let room = d.usable_bytes - (d.footprint_bytes - d.kv_bytes);
    let most = |positions: f64| (room / (per_position * positions)).floor() as u64;
    assert_eq!(on_demand.max_concurrency, Some(most(2050.0)));
    assert_eq!(reserved.max_concurrency, Some(most(4000.0)));
    let share =
        reserved.max_concurrency.unwrap() as f64 / on_demand.max_concurrency.unwrap() as f64;
    assert!((share - 2050.0 / 4000.0).abs() < 1e-3, "{share}");
    // The iterations are the same; only what each request holds differs.
    assert_eq!(on_demand.tpot_s, reserved.tpot_s);
    assert!(reserved.footprint_bytes > on_demand.footprint_bytes);
    // Without an engine: pages on demand.
    let plain = server(&chip, &workload, &scenario(&workload, None, &[]));
    assert_eq!(plain.admission, Admission::OnDemand);
}

#[test]
fn the_drafts_host_work_is_paid_once_a_cycle_where_the_engine_says() {
    let (chip, workload) = (chip(), workload());
    let k = 3;
    let cycle_at = |once: bool| {
        let mut t = EngineTerms::neutral();
        t.spec.draft_host_once = once;
        let s = scenario(&workload, Some(t), &[]);
        let draft = layouts::one_layer_draft(&workload, &s).unwrap();
        let target = IterationPricer::new(&workload, &chip, &s).unwrap();
        let drafter = IterationPricer::new(&workload, &chip, &draft).unwrap();
        let options = ServingOptions {
            prefix_hit: 0.0,
            speculation: Some(Speculation::new(k, 0.5).unwrap()),
        };
        let mut server = Server::new(&chip, target, Some(drafter), 8192.0, options).unwrap();
        let cycle = server.cycle(4.0, 1000.0, f64::from(k) + 1.0, None).unwrap();
        // The parts priced alone: the verify step of 4 x 4 tokens, one draft step.
        let mut target = IterationPricer::new(&workload, &chip, &s).unwrap();
        let mut verify = Iteration::decode(4.0, 1000.0);
        verify.decode_tokens = f64::from(k) + 1.0;
        let verify = target.price(&verify).unwrap();
        let mut drafter = IterationPricer::new(&workload, &chip, &draft).unwrap();
        let drafted = drafter.price(&Iteration::decode(4.0, 1000.0)).unwrap();
        (cycle.time_s, verify.step_time_s, drafted)
    };
    let (every, verify, drafted) = cycle_at(false);
    // 100 us + 4 x 10 us of host work a draft step.
    assert!((drafted.host_time_s - 140e-6).abs() < 1e-15);
    let k = f64::from(k);
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12 * b, "{a} against {b}");
    close(every, verify + k * drafted.step_time_s);
    let (once, ..) = cycle_at(true);
    close(once, verify + k * (drafted.step_time_s - 140e-6) + 140e-6);
    close(every - once, 2.0 * 140e-6);
}

#[test]
fn an_mla_verify_runs_absorbed_where_the_engine_says() {
    use crate::base::source::FileKind;
    use crate::base::source::Source as File;
    let workload = workload();
    let h200 = Chip::load(&File::resolve("h200", FileKind::Chip).unwrap()).unwrap();
    let absorbed = |on: bool, mode: Mode, speculation: Option<Speculation>| {
        let mut t = EngineTerms::neutral();
        t.spec.absorbed_mla_verify = on;
        let mut s = scenario(&workload, Some(t), &[]);
        s.set_mode(mode);
        let s = layouts::absorbed_verify(&workload, &h200, &s, speculation).unwrap();
        s.map(|s| {
            let i = workload.param_index("absorbed_max_tokens").unwrap();
            s.overrides().iter().find(|(p, _)| *p == i).unwrap().1
        })
    };
    let spec = Some(Speculation::new(3, 0.7).unwrap());
    // Drafting 3: a verify step of 4 tokens per sequence attends in the absorbed form.
    assert_eq!(absorbed(true, Mode::Expected, spec), Some(4.0));
    // Not without the term, without speculation, or on the roofline.
    assert_eq!(absorbed(false, Mode::Expected, spec), None);
    assert_eq!(absorbed(true, Mode::Expected, None), None);
    assert_eq!(absorbed(true, Mode::Roofline, spec), None);
    // DeepSeek-V3's verify step of 4 tokens per sequence: decompressed as a prompt without
    // the term, in the absorbed (decode) form with it.
    let v3 = Workload::load(&File::resolve("deepseek-v3", FileKind::Workload).unwrap()).unwrap();
    let blocks = |on: bool| {
        let mut t = EngineTerms::neutral();
        t.spec.absorbed_mla_verify = on;
        let s = scenario(&v3, Some(t), &[("batch", 8.0), ("tokens", 4.0)]);
        let s = layouts::absorbed_verify(&v3, &h200, &s, spec)
            .unwrap()
            .unwrap_or(s);
        let r = crate::core::timing::price(&v3, &h200, &s).unwrap();
        let has = |block: &str| r.prices.iter().any(|p| p.block == block);
        (has("attention"), has("expanded_attention"))
    };
    assert_eq!(blocks(false), (false, true));
    assert_eq!(blocks(true), (true, false));
}

#[test]
fn a_pipeline_without_a_flush_keeps_every_stage_busy() {
    let (chip, workload) = (chip(), workload());
    let no_flush = |micro_batches| {
        let mut t = EngineTerms::neutral();
        t.pipeline = PipelineSchedule {
            micro_batches,
            flush: false,
        };
        t
    };
    let seqs = 64.0;
    let priced = |terms: Option<EngineTerms>, pp: f64, seqs: f64| {
        let s = scenario(&workload, terms, &[("pp", pp), ("engine_host", 0.0)]);
        let mut pricer = IterationPricer::new(&workload, &chip, &s).unwrap();
        let summary = pricer.price(&Iteration::decode(seqs, 1000.0)).unwrap();
        (
            pricer.iteration_s(&summary),
            summary,
            pricer.micro_batches(),
        )
    };
    // One micro-batch of all 64, its 8 layers one stage after the other: as one chip's step.
    let (flushed, one, m) = priced(None, 2.0, seqs);
    assert_eq!((flushed, m), (one.step_time_s, 1.0));
    // Two micro-batches of 32 in flight: each stage runs one while the other runs the other,
    // so all 64 advance in 2 x one stage's time of 32, that is the step of 32 (balanced
    // stages, nothing only one stage runs).
    let (steady, half, m) = priced(Some(no_flush(None)), 2.0, seqs);
    assert_eq!(m, 2.0);
    let (_, alone, _) = priced(None, 2.0, seqs / 2.0);
    let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12 * b, "{a} against {b}");
    close(half.step_time_s, alone.step_time_s);
    close(steady, alone.step_time_s);
    // Stage time = half the step; a stage is busy all the time: ~2x one stage's throughput
    // for work that scales with the batch, against a flushed pipeline's 1x.
    close(steady, 2.0 * (half.step_time_s / 2.0));
    // The cache of both micro-batches is held: as much as one micro-batch of 64.
    close(half.kv_bytes, one.kv_bytes);
    // Three micro-batches over two stages: each stage has 3 x a third's work to do.
    let (three, third, m) = priced(Some(no_flush(Some(3))), 2.0, seqs);
    assert_eq!(m, 3.0);
    close(three, 3.0 * third.step_time_s / 2.0);
    // One micro-batch in flight, no flush: it still passes both stages, one after the other.
    let (single, all, _) = priced(Some(no_flush(Some(1))), 2.0, seqs);
    close(single, all.step_time_s);
    // One stage: nothing to overlap.
    let (alone, step, m) = priced(Some(no_flush(None)), 1.0, seqs);
    assert_eq!((alone, m), (step.step_time_s, 1.0));
}
