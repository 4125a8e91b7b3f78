//! Layouts past one scale-up domain: hierarchical collectives, expert parallelism as DeepEP
//! sends tokens, pipelines with micro-batches in flight, and plans over several nodes.

use stepcost::{timing::Bound, Mode, ScenarioSpec};

use crate::common::{assert_close, roofline, run};

/// H100 SXM: NVLink 450 GB/s per direction, 8 GPUs a node, a 400 Gb/s NIC per GPU (50 GB/s);
/// 2 us a step over NVLink and 5 us across the network, 1.26 us a launch (hardware/h100-sxm.yaml).
const NVLINK: f64 = 450e9;
const NIC: f64 = 400e9 / 8.0;
const NVLINK_STEP_S: f64 = 2e-6;
const NIC_STEP_S: f64 = 5e-6;
const LAUNCH_S: f64 = 1.26e-6;

fn llama_70b_tp16(mode: Mode) -> stepcost::StepReport {
    let sets = [("batch", 16.0), ("context", 1024.0), ("tp", 16.0)];
    let spec = ScenarioSpec {
        mode,
        ..ScenarioSpec::default()
    };
    run("llama-3.1-70b", "h100-sxm", &sets, spec)
}

#[test]
fn a_tensor_parallel_all_reduce_over_two_nodes_reduces_inside_each_node_first() {
    let r = llama_70b_tp16(Mode::Roofline);
    let buffer = 16.0 * 8192.0 * 2.0; // batch x hidden, bf16
                                      // Reduce-scatter inside the node (7/8 of the buffer over NVLink), all-reduce of each GPU's
                                      // eighth with its peer in the other node (a ring of 2: 2 x 1/2 of it over the NIC), then
                                      // all-gather inside the node (7/8 again over NVLink).
    let over_nvlink = 2.0 * 7.0 / 8.0 * buffer;
    let over_nic = 2.0 * (1.0 / 2.0) * buffer / 8.0;
    for name in ["attn_allreduce", "ffn_allreduce"] {
        let p = r.prices.iter().find(|p| p.name == name).unwrap();
        assert_eq!((p.cost.count, p.cost.bytes), (80, buffer));
        assert_eq!(p.cost.bound, Bound::Interconnect);
        assert_close(p.cost.time_s, over_nvlink / NVLINK + over_nic / NIC, 1e-12);
    }
    // Far less than the whole all-reduce over the network: 2 x 15/16 of the buffer at 50 GB/s.
    let flat_network_s = 2.0 * 15.0 / 16.0 * buffer / NIC;
    let p = r.prices.iter().find(|p| p.name == "ffn_allreduce").unwrap();
    assert!(p.cost.time_s < flat_network_s / 5.0);
}

#[test]
fn expected_mode_adds_each_phase_s_steps_on_its_own_wire() {
    let r = llama_70b_tp16(Mode::Expected);
    let buffer = 16.0 * 8192.0 * 2.0;
    let inside = 7.0 / 8.0 * buffer / NVLINK + 7.0 * NVLINK_STEP_S; // a ring of 8, each half
    let shard = buffer / 8.0;
    let ring = shard / NIC + 2.0 * NIC_STEP_S; // 2 (n - 1) / n = 1 of the shard, 2 steps
    let tree = 2.0 * shard / NIC + 2.0 * NIC_STEP_S; // log2(2) = 1 level down and up
    let p = r
        .prices
        .iter()
        .find(|p| p.name == "attn_allreduce")
        .unwrap();
    assert_close(
        p.cost.time_s,
        LAUNCH_S + 2.0 * inside + ring.min(tree),
        1e-12,
    );
}

#[test]
fn a_stage_boundary_between_nodes_crosses_the_network() {
    let at = |tp: f64| {
        let sets = [("batch", 16.0), ("tp", tp), ("pp", 2.0)];
        let r = run("llama-3.1-70b", "h100-sxm", &sets, roofline());
        let p = r.prices.iter().find(|p| p.name == "stage_send").unwrap();
        p.cost.time_s
    };
    let bytes = 16.0 * 8192.0 * 2.0;
    // Two stages of 4 GPUs share a node; two of 8 do not.
    assert_close(at(4.0), bytes / NVLINK, 1e-12);
    assert_close(at(8.0), bytes / NIC, 1e-12);
}

/// Expected ranks one token of DeepSeek-V3 reaches (top-8 of 256 experts over `ranks`):
/// `R (1 - C(256 - 256/R, 8) / C(256, 8))`, the binomials as a product of ratios.
fn deepseek_ranks(ranks: f64) -> f64 {
    let others = 256.0 - 256.0 / ranks;
    let none: f64 = (0..8)
        .map(|i| (others - i as f64) / (256.0 - i as f64))
        .product();
    ranks * (1.0 - none)
}

fn deepseek_v3(sets: &[(&str, f64)], weight: Option<&str>) -> stepcost::StepReport {
    let spec = ScenarioSpec {
        dtypes: weight
            .map(|w| vec![("weight".parse().unwrap(), w.parse().unwrap())])
            .unwrap_or_default(),
        ..roofline()
    };
    run("deepseek-v3", "h100-sxm", sets, spec)
}

#[test]
fn deepseek_v3_dispatches_each_token_once_per_rank_in_fp8_and_combines_in_bf16() {
    assert!((deepseek_ranks(8.0) - 5.29).abs() < 0.01); // not 8 copies
    let r = deepseek_v3(&[("batch", 64.0), ("ep", 8.0)], None);
    // 8 groups of 8 sequences; a token's 7168 values go to 5.29 ranks on average, as fp8 with
    // an fp32 scale per 128 values (DeepSeek-V3's fp8-b128 experts run W8A8 on H100).
    let dispatch = 8.0 * 7168.0 * deepseek_ranks(8.0) * (1.0 + 4.0 / 128.0);
    let combine = 8.0 * 7168.0 * deepseek_ranks(8.0) * 2.0;
    for (name, bytes) in [("dispatch", dispatch), ("gather_back", combine)] {
        let p = r.prices.iter().find(|p| p.name == name).unwrap();
        assert_eq!(p.cost.count, 58);
        assert_close(p.cost.bytes, bytes, 1e-12);
        // all within one node: 7/8 of it leaves the GPU over NVLink
        assert_close(p.cost.time_s, 7.0 / 8.0 * bytes / NVLINK, 1e-12);
    }
    // bf16 experts multiply bf16 activations: the dispatch stays bf16
    let bf16 = deepseek_v3(&[("batch", 64.0), ("ep", 8.0)], Some("bf16"));
    let p = bf16.prices.iter().find(|p| p.name == "dispatch").unwrap();
    assert_close(p.cost.bytes, combine, 1e-12);
    // hot experts: the busiest group receives 1.5 times the mean
    let hot = deepseek_v3(&[("batch", 64.0), ("ep", 8.0), ("ep_imbalance", 1.5)], None);
    let p = hot.prices.iter().find(|p| p.name == "dispatch").unwrap();
    assert_close(p.cost.bytes, 1.5 * dispatch, 1e-12);
}

#[test]
fn a_dispatch_over_two_nodes_sends_the_other_node_s_share_over_the_nic_at_once() {
    let r = deepseek_v3(&[("batch", 64.0), ("ep", 16.0)], None);
    let bytes = 4.0 * 7168.0 * deepseek_ranks(16.0) * (1.0 + 4.0 / 128.0);
    let p = r.prices.iter().find(|p| p.name == "dispatch").unwrap();
    assert_close(p.cost.bytes, bytes, 1e-12);
    // Of the 16 ranks' shares, 7 go to the node's other GPUs over NVLink and 8 to the other
    // node over the NIC, both at once: the NIC's half decides.
    let nvlink_s = 7.0 / 16.0 * bytes / NVLINK;
    let nic_s = 8.0 / 16.0 * bytes / NIC;
    assert!(nic_s > nvlink_s);
    assert_close(p.cost.time_s, nic_s, 1e-12);
}

fn llama_405b(sets: &[(&str, f64)]) -> stepcost::StepReport {
    let mut all = vec![("batch", 16.0), ("context", 2048.0), ("tp", 8.0)];
    all.extend_from_slice(sets);
    run("llama-3.1-405b", "h200", &all, roofline())
}

#[test]
fn micro_batches_in_flight_fill_the_pipeline_but_for_its_bubbles() {
    // Today's layout: two stages, one micro-batch, each stage idle while the other works.
    let alone = llama_405b(&[("pp", 2.0), ("micro_batches", 1.0)]).summary;
    assert_close(alone.tokens_per_s.unwrap(), 16.0 / alone.step_time_s, 1e-12);
    for m in [2.0, 4.0, 16.0] {
        let r = llama_405b(&[("pp", 2.0), ("micro_batches", m)]);
        let s = &r.summary;
        // pp x the one-micro-batch throughput x m / (m + pp - 1), within 1 % (the embedding
        // and lm_head make the two stages a little unequal)
        let bubble = 2.0 * alone.tokens_per_s.unwrap() * m / (m + 1.0);
        assert_close(s.tokens_per_s.unwrap(), bubble, 0.01);
        // and exactly: the first micro-batch passes both stages, each later one leaves the
        // slower stage (its half of the layers and the lm_head) one stage time later
        let time_in = |block: &str| -> f64 {
            (r.prices.iter())
                .filter(|p| p.block == block)
                .map(|p| p.cost.time_s * p.cost.count as f64)
                .sum()
        };
        let (first, last) = (time_in("embed"), time_in("head"));
        assert!(last > first && first > 0.0);
        let slowest = (s.step_time_s - first - last) / 2.0 + last;
        let schedule_s = s.step_time_s + (m - 1.0) * slowest;
        assert_close(s.pipeline_time_s, schedule_s, 1e-12);
        assert_close(s.tokens_per_s.unwrap(), m * 16.0 / schedule_s, 1e-12);
        // a sequence's next token waits for the whole schedule: the stages plus the bubbles
        assert_close(s.ms_per_token.unwrap(), schedule_s * 1e3, 1e-12);
        assert_eq!(s.micro_batches, m);
        // the step itself is unchanged: one micro-batch through both stages
        assert_close(s.step_time_s, alone.step_time_s, 1e-12);
    }
}

#[test]
fn a_stage_holds_its_layers_kv_for_every_micro_batch_and_only_its_own_end_of_the_model() {
    let one = llama_405b(&[]).summary;
    let two = llama_405b(&[("pp", 2.0)]).summary; // two micro-batches by default
    assert_eq!(two.micro_batches, 2.0);
    // half the layers' cache, for two micro-batches of 16 sequences
    assert_close(two.kv_bytes, one.kv_bytes, 1e-12);
    // the first stage holds the embedding, the last the lm_head (each 128256 x 16384 / 8 in
    // bf16) and the final norm; a chip holds the larger end, not both
    let end = 128256.0 * 16384.0 / 8.0 * 2.0;
    let final_norm = 16384.0 * 2.0;
    let layers = one.weight_bytes - 2.0 * end - final_norm;
    assert_close(two.weight_bytes, layers / 2.0 + end + final_norm, 1e-12);
}

#[test]
fn micro_batches_are_a_whole_number_of_at_least_one() {
    let w = crate::common::workload("llama-3.1-405b");
    for bad in [0.5, 1.5] {
        let spec = ScenarioSpec {
            sets: vec![("pp".into(), 2.0), ("micro_batches".into(), bad)],
            ..roofline()
        };
        let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
        let err = stepcost::price(&w, &crate::common::chip("h200"), &scenario).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("micro_batches") && text.contains("whole number"),
            "{text}"
        );
    }
}

/// `stepcost plan ARGS --format csv`: its header and rows.
fn plan_csv(args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = crate::common::stepcost()
        .arg("plan")
        .args(args)
        .args(["--format", "csv"])
        .assert()
        .success();
    crate::common::csv_rows(&String::from_utf8_lossy(&out.get_output().stdout))
}

#[test]
fn deepseek_v3_on_h100_is_planned_over_two_nodes_and_ranked_with_four() {
    // 671B parameters in fp8 are 84 GB over 8 GPUs, more than the 0.9 x 85.5 = 77 GB an
    // H100 engine uses: no layout within one 8-GPU node holds them.
    let (header, rows) = plan_csv(&["deepseek-v3", "--chip", "h100-sxm"]);
    let get = |row: &Vec<String>, c: &str| crate::common::cell(&header, row, c).to_owned();
    // the checkpoint's own types: fp8-b128 weights, bf16 embeddings
    let native: Vec<&Vec<String>> = (rows.iter())
        .filter(|r| get(r, "weight_dtype") == "fp8-b128")
        .collect();
    let at = |chips: &str| -> Vec<String> {
        let mut layouts: Vec<String> = (native.iter())
            .filter(|r| get(r, "chips_per_replica") == chips)
            .map(|r| get(r, "layout"))
            .collect();
        layouts.sort();
        layouts
    };
    // two nodes, as they are run: tensor parallel within the node with two pipeline stages
    // or two expert-parallel groups across, or data-parallel attention with 16-way experts
    assert_eq!(at("16"), ["ep=16", "tp=8 ep=2", "tp=8 pp=2"]);
    // and the larger ones beside them
    assert_eq!(at("32"), ["ep=32", "tp=8 ep=4", "tp=8 pp=4"]);
    assert_eq!(native.len(), 6, "nothing on one node, nothing past four");
    // ranked by $ per million tokens, every type choice together
    let usd: Vec<f64> = (rows.iter())
        .map(|r| get(r, "usd_per_million_tokens").parse().unwrap())
        .collect();
    assert!(usd.windows(2).all(|w| w[0] <= w[1]), "{usd:?}");
    // each row is one replica of its chips, and its $/M is what they cost an hour over the
    // tokens they make in it (2.69 USD per H100-hour)
    for r in &native {
        let chips: f64 = get(r, "chips").parse().unwrap();
        let per_chip: f64 = get(r, "tokens_per_s_per_chip").parse().unwrap();
        let usd: f64 = get(r, "usd_per_million_tokens").parse().unwrap();
        assert_close(usd, 2.69 / 3600.0 / per_chip * 1e6, 1e-9);
        assert_eq!(get(r, "chips_per_replica"), get(r, "chips"));
        assert!(chips == 16.0 || chips == 32.0);
    }
}

#[test]
fn llama_405b_in_fp8_on_h200_stays_within_one_node() {
    let (header, rows) = plan_csv(&["llama-3.1-405b", "--chip", "h200", "--dtype", "weight=fp8"]);
    assert_eq!(rows.len(), 1);
    let get = |c: &str| crate::common::cell(&header, &rows[0], c).to_owned();
    // 405B parameters in fp8 are 405 GB: 51 GB on each of a node's eight H200s, of the
    // 0.9 x 150.8 = 136 GB each uses; the KV cache takes the rest
    assert_eq!(get("layout"), "tp=8");
    assert_eq!(get("chips_per_replica"), "8");
}

#[test]
fn a_group_past_a_domain_without_a_network_is_refused_by_name() {
    // An H100 SXM file without its `network`: two 8-way stages span 16 chips, two nodes
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/hardware/h100-sxm.yaml"
    ))
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("network:"))
        .unwrap();
    let kept: Vec<&str> = (lines.iter().enumerate())
        .filter(|(i, _)| !(at..at + 3).contains(i))
        .map(|(_, l)| *l)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-network.yaml");
    std::fs::write(&path, kept.join("\n")).unwrap();
    let source =
        stepcost::Source::resolve(path.to_str().unwrap(), stepcost::workload::FileKind::Chip);
    let chip = stepcost::Chip::load(&source.unwrap()).unwrap();
    let w = crate::common::workload("llama-3.1-70b");
    let spec = ScenarioSpec {
        sets: vec![("tp".into(), 8.0), ("pp".into(), 2.0)],
        ..roofline()
    };
    let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
    let err = stepcost::price(&w, &chip, &scenario).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("stage_send") && text.contains("spans 16 chips"),
        "{text}"
    );
    assert!(text.contains("no `network`"), "{text}");
}

#[test]
fn a_request_through_a_pipeline_waits_for_every_micro_batch_s_turn() {
    let w = crate::common::workload("llama-3.1-405b");
    let c = crate::common::chip("h200");
    let at = |m: f64| {
        let spec = ScenarioSpec {
            sets: vec![
                ("batch".into(), 16.0),
                ("tp".into(), 8.0),
                ("pp".into(), 2.0),
                ("micro_batches".into(), m),
            ],
            ..roofline()
        };
        let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
        stepcost::internals::timing::price_request(&w, &c, &scenario, 512, 1).unwrap()
    };
    let (one, two) = (at(1.0), at(2.0));
    // A prompt of 8192 tokens (16 x 512) makes the stages compute-bound: both stages take
    // about the same time t, so one micro-batch takes 2t and two take 3t, and each holds 16
    // sequences, whose one output token comes from the prefill.
    assert_close(two.ttft_s / one.ttft_s, 1.5, 0.01);
    assert_close(one.output_tokens_per_s, 16.0 / one.e2e_s, 1e-12);
    assert_close(two.output_tokens_per_s, 32.0 / two.e2e_s, 1e-12);
}
