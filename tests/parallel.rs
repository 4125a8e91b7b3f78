//! Steps split across chips: tensor parallelism and the collectives it costs.

use stepcost::{timing::Bound, types::DType, types::Role, ScenarioSpec};

use crate::common::{assert_close, roofline, run};

fn llama_70b(tp: f64, dtypes: &[(Role, DType)]) -> stepcost::StepReport {
    run(
        "llama-3.1-70b",
        "h100-sxm",
        &[
            ("batch", 16.0),
            ("tokens", 1.0),
            ("context", 1024.0),
            ("tp", tp),
        ],
        ScenarioSpec {
            dtypes: dtypes.iter().map(|&(r, d)| (r.into(), d.into())).collect(),
            ..roofline()
        },
    )
}

#[test]
fn tensor_parallel_weights_are_an_eighth_plus_the_replicated_norms() {
    let one = llama_70b(1.0, &[]).summary;
    let eight = llama_70b(8.0, &[]).summary;
    // Norm weights are replicated on every chip: 2 per layer and the final one, bf16.
    let norms = (80.0 * 2.0 * 8192.0 + 8192.0) * 2.0;
    assert_close(
        eight.weight_bytes,
        (one.weight_bytes - norms) / 8.0 + norms,
        1e-12,
    );
    assert_eq!(eight.chips, 8);
    assert_close(
        eight.tokens_per_s_per_chip.unwrap(),
        eight.tokens_per_s.unwrap() / 8.0,
        1e-12,
    );
}

#[test]
fn a_layer_under_tp_has_two_ring_all_reduces_of_the_hidden_state() {
    let r = llama_70b(8.0, &[]);
    let bytes = 16.0 * 8192.0 * 2.0; // batch x tokens x hidden, bf16
    for name in ["attn_allreduce", "ffn_allreduce"] {
        let p = r.prices.iter().find(|p| p.name == name).unwrap();
        assert_eq!(p.cost.count, 80);
        assert_eq!(p.cost.bytes, bytes);
        assert_eq!(p.cost.bound, Bound::Interconnect);
        // ring all-reduce over 8 chips: each sends 2 (n - 1) / n of the buffer at 450 GB/s
        assert_close(p.cost.time_s, 2.0 * 7.0 / 8.0 * bytes / 450e9, 1e-12);
    }
    // at tp = 1 there is nothing to reduce
    assert!(llama_70b(1.0, &[])
        .prices
        .iter()
        .all(|p| !p.name.contains("allreduce")));
}

#[test]
fn kv_heads_replicate_when_tp_exceeds_them() {
    // a GB200 NVL72 rack: 72 chips in one NVLink domain
    let kv = |tp: f64| {
        run(
            "llama-3.1-70b",
            "gb200",
            &[("batch", 16.0), ("context", 1024.0), ("tp", tp)],
            roofline(),
        )
        .summary
        .kv_bytes
    };
    let one = kv(1.0);
    // 8 KV heads: at tp = 8 each chip holds one; at tp = 16 each still holds one (a copy)
    assert_close(kv(8.0), one / 8.0, 1e-12);
    assert_close(kv(16.0), one / 8.0, 1e-12);
    // so 16 chips hold the cache twice over
    assert_close(16.0 * kv(16.0), 2.0 * one, 1e-12);
}

#[test]
fn a_group_beyond_the_domain_crosses_the_network() {
    // 16 chips: two 8-GPU NVLink nodes, so the all-reduce runs hierarchically: each chip's
    // eighth of the buffer crosses the NIC's 400 Gb/s (tests/multinode.rs has the phases)
    let r = llama_70b(16.0, &[]);
    let p = r
        .prices
        .iter()
        .find(|p| p.name == "attn_allreduce")
        .unwrap();
    let bytes = 16.0 * 8192.0 * 2.0;
    let nvlink_s = 2.0 * 7.0 / 8.0 * bytes / 450e9;
    assert_close(p.cost.time_s, nvlink_s + bytes / 8.0 / 50e9, 1e-12);
    // a chip with no link at all cannot split a step
    let w = crate::common::workload("llama-3.1-70b");
    let spec = ScenarioSpec {
        sets: vec![("tp".into(), 2.0)],
        ..roofline()
    };
    let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
    let linkless = "name: no link\nmemory: {capacity: 48 GB, bandwidth: 864 GB/s}\n\
                    matrix: {bf16: 362 TFLOPS}\nvector: {fp32: 91.6 TFLOPS}\n";
    let chip = stepcost::Chip::load(&stepcost::Source::from_text("linkless.yaml", linkless));
    let err = stepcost::price(&w, &chip.unwrap(), &scenario).unwrap_err();
    assert!(err.to_string().contains("spans 2 chips"), "{err}");
}

#[test]
fn deepseek_v3_in_fp8_fits_an_h200_node_at_tp_8() {
    let at = |tp: f64| {
        run(
            "deepseek-v3",
            "h200",
            &[("batch", 1.0), ("tp", tp)],
            ScenarioSpec {
                dtypes: vec![(Role::Weight.into(), DType::Fp8.into())],
                ..roofline()
            },
        )
        .summary
    };
    let one = at(1.0);
    assert!(!one.fits);
    let eight = at(8.0);
    assert!(eight.fits, "{} bytes per chip", eight.footprint_bytes);
    // 671B parameters in fp8 over 8 chips, plus what every chip keeps whole (the low-rank
    // attention projections, norms, router): a little over an eighth each
    assert!(
        eight.weight_bytes > one.weight_bytes / 8.0
            && eight.weight_bytes < 1.05 * one.weight_bytes / 8.0
    );
}

#[test]
fn every_model_splits_across_a_node() {
    for model in [
        "llama-3.1-8b",
        "mistral-7b",
        "mixtral-8x7b",
        "qwen3-235b-a22b",
        "gpt-oss-120b",
        "gemma-2-27b",
    ] {
        let one = run(model, "h200", &[("tp", 1.0)], roofline()).summary;
        let eight = run(model, "h200", &[("tp", 8.0)], roofline()).summary;
        assert!(eight.weight_bytes < one.weight_bytes / 4.0, "{model}");
        assert_eq!(eight.chips, 8, "{model}");
    }
}

#[test]
fn plan_splits_models_that_no_single_chip_holds() {
    for model in ["llama-3.1-405b", "deepseek-v3"] {
        let out = crate::common::stepcost()
            .args([
                "plan",
                model,
                "--target-tokens-per-s",
                "5000",
                "--max-ms-per-token",
                "100",
            ])
            .args(["--chip", "h200", "--dtype", "weight=fp8", "--format", "csv"])
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        let (header, rows) = crate::common::csv_rows(&text);
        let get = |c: &str| {
            crate::common::cell(&header, &rows[0], c)
                .parse::<f64>()
                .unwrap()
        };
        let (tp, replicas, chips) = (get("chips_per_replica"), get("replicas"), get("chips"));
        assert!((2.0..=8.0).contains(&tp), "{model} on {tp} chips");
        assert_eq!(chips, tp * replicas, "{model}");
        assert!(get("ms_per_token") <= 100.0);
        assert!(replicas * get("tokens_per_s_per_chip") * tp >= 5000.0 * 0.999);
    }
}

#[test]
fn expert_parallelism_dispatches_and_combines_by_all_to_all() {
    let at = |ep: f64| {
        run(
            "mixtral-8x7b",
            "h200",
            &[("batch", 64.0), ("ep", ep)],
            roofline(),
        )
    };
    let one = at(1.0);
    let eight = at(8.0);
    // each of 8 groups serves 8 sequences and sends each token's hidden state to its 2 experts
    let bytes = 8.0 * 2.0 * 4096.0 * 2.0;
    for name in ["dispatch", "gather_back"] {
        let p = eight.prices.iter().find(|p| p.name == name).unwrap();
        assert_eq!((p.cost.count, p.cost.bytes), (32, bytes));
        assert_close(p.cost.time_s, 7.0 / 8.0 * bytes / 450e9, 1e-12);
    }
    assert!(one.prices.iter().all(|p| p.name != "dispatch"));
    // each chip holds one expert of the eight
    let expert_bytes = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0 * 2.0;
    assert_close(
        one.summary.weight_bytes - eight.summary.weight_bytes,
        expert_bytes * 7.0 / 8.0,
        1e-9,
    );
    assert_eq!(eight.summary.chips, 8);
}

#[test]
fn pipeline_stages_hold_a_share_of_the_layers_and_pass_the_hidden_state() {
    // one micro-batch at a time (tests/multinode.rs has them in flight)
    let at = |pp: f64| llama_70b_with(&[("pp", pp), ("micro_batches", 1.0)]);
    let one = at(1.0);
    let two = at(2.0);
    // each stage holds half the layers: their weights and KV cache halve; the first stage
    // holds the embedding, the last the lm_head and the final norm, so a chip holds one end
    let layer_weights = 80.0
        * (8192.0 * (64.0 + 16.0) * 128.0
            + 64.0 * 128.0 * 8192.0
            + 3.0 * 8192.0 * 28672.0
            + 2.0 * 8192.0)
        * 2.0;
    let embedding = 128256.0 * 8192.0 * 2.0;
    assert_close(
        one.summary.weight_bytes - two.summary.weight_bytes,
        layer_weights / 2.0 + embedding,
        1e-12,
    );
    assert_close(two.summary.kv_bytes, one.summary.kv_bytes / 2.0, 1e-12);
    // a step still runs every layer, plus one hand-off of the hidden state between the stages
    let send = two.prices.iter().find(|p| p.name == "stage_send").unwrap();
    let bytes = 16.0 * 8192.0 * 2.0;
    assert_eq!((send.cost.count, send.cost.bytes), (1, bytes));
    assert_close(send.cost.time_s, bytes / 450e9, 1e-12);
    assert_close(
        two.summary.step_time_s,
        one.summary.step_time_s + send.cost.time_s,
        1e-12,
    );
    // so each chip is busy half the time
    assert_close(
        two.summary.mbu,
        one.summary.mbu * one.summary.step_time_s / two.summary.step_time_s / 2.0,
        1e-12,
    );
    assert_eq!(two.summary.chips, 2);
}

fn llama_70b_with(sets: &[(&str, f64)]) -> stepcost::StepReport {
    let mut all = vec![("batch", 16.0), ("tokens", 1.0), ("context", 1024.0)];
    all.extend_from_slice(sets);
    run("llama-3.1-70b", "h100-sxm", &all, roofline())
}

#[test]
fn overlapping_communication_is_a_knob_off_by_default() {
    let at = |overlap: bool| {
        run(
            "llama-3.1-70b",
            "h200",
            &[("batch", 64.0), ("tp", 8.0)],
            ScenarioSpec {
                mode: stepcost::Mode::Expected,
                overlap_comm: overlap,
                ..ScenarioSpec::default()
            },
        )
    };
    let (off, on) = (at(false), at(true));
    let find = |r: &stepcost::StepReport, name: &str| {
        r.prices.iter().find(|p| p.name == name).unwrap().cost
    };
    let (coll, before) = (find(&off, "attn_allreduce"), find(&off, "o_proj"));
    let hidden = find(&on, "attn_allreduce");
    let transfer = coll.time_s - coll.launch_s;
    assert_close(
        hidden.time_s,
        coll.launch_s + (transfer - before.time_s).max(0.0),
        1e-12,
    );
    assert!(on.summary.step_time_s < off.summary.step_time_s);
}

#[test]
fn data_parallel_replicas_multiply_throughput_not_per_chip_work() {
    let one = llama_70b_with(&[("tp", 8.0)]).summary;
    let four = llama_70b_with(&[("tp", 8.0), ("dp", 4.0)]).summary;
    assert_eq!(four.chips, 32);
    assert_eq!(four.step_time_s, one.step_time_s);
    assert_close(
        four.tokens_per_s.unwrap(),
        4.0 * one.tokens_per_s.unwrap(),
        1e-12,
    );
    assert_close(
        four.tokens_per_s_per_chip.unwrap(),
        one.tokens_per_s_per_chip.unwrap(),
        1e-12,
    );
    assert_eq!(four.weight_bytes, one.weight_bytes);
}

#[test]
fn a_layout_that_splits_heads_or_experts_unevenly_is_refused() {
    // Llama-3.1-70B has 64 query and 8 KV heads: tp=3 gives 21.33 heads a chip, which no
    // engine runs (Megatron's `divide`, kept by vLLM, asserts it); tp=16 replicates each KV
    // head on 2 chips and runs. Llama-4-Scout's 40 query heads split 5 ways, its 8 KV heads
    // do not; Mixtral's 8 experts do not split 3 ways.
    let refused = |workload: &str, set: &str, says: &str| {
        let out = crate::common::stepcost()
            .args(["run", workload, "--chip", "h200", "--set", set])
            .assert()
            .code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(says), "{stderr}");
        assert!(out.get_output().stdout.is_empty());
    };
    let heads = "`heads / tp` is 21.3333; tensor parallelism splits";
    refused("llama-3.1-70b", "tp=3", heads);
    refused(
        "llama-4-scout",
        "tp=5",
        "tp must divide the KV heads, or they it",
    );
    refused("mixtral-8x7b", "ep=3", "ep must divide the experts");
    let w = crate::common::workload("llama-3.1-70b");
    let spec = ScenarioSpec {
        sets: vec![("tp".into(), 16.0)],
        ..ScenarioSpec::default()
    };
    let scenario = stepcost::Scenario::resolve(&w, &spec).unwrap();
    assert!(stepcost::price(&w, &crate::common::chip("h200"), &scenario).is_ok());
    // In a sweep it is the scenario's error row; the others are priced.
    let out = crate::common::stepcost()
        .args([
            "sweep",
            "llama-3.1-70b",
            "--chip",
            "h200",
            "--set",
            "tp=1..=4",
        ])
        .args(["--columns", "tp,error", "--format", "csv"])
        .output()
        .unwrap();
    let (header, rows) = crate::common::csv_rows(&crate::common::succeeded(out));
    let errors: Vec<bool> = (rows.iter())
        .map(|r| !crate::common::cell(&header, r, "error").is_empty())
        .collect();
    assert_eq!(errors, [false, false, true, false]);
}
