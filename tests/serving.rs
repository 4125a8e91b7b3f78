//! `serving`: the steady state against steps priced on their own (a request alone, Little's
//! law, speculation that never helps at acceptance 0, a prefix cache), the frontier's order,
//! memory's cap on concurrency, and bad input refused.

use stepcost::{
    serving::frontier_rows, serving::survey as serving_survey, serving::Draft,
    serving::LayoutChoice, serving::RequestShape, serving::Server, serving::ServingOptions,
    serving::ServingQuery, serving::Speculation, timing::IterationPricer, Scenario, ScenarioSpec,
};

use crate::common::{assert_close, cell, chip, csv_rows, run, stepcost, succeeded, workload};

/// The steady state of `name` on `chip_name` with `sets` (expected mode), batching 8192
/// tokens.
fn point(
    name: &str,
    chip_name: &str,
    sets: &[(&str, f64)],
    options: ServingOptions,
    shape: RequestShape,
    concurrency: u64,
) -> stepcost::serving::ServingPoint {
    with_server(name, chip_name, sets, options, |s| {
        s.steady_state(shape, concurrency).unwrap()
    })
}

/// [`with_server_under`] the chip's default engine.
fn with_server<T>(
    name: &str,
    chip_name: &str,
    sets: &[(&str, f64)],
    options: ServingOptions,
    f: impl FnOnce(&mut Server) -> T,
) -> T {
    with_server_under(None, name, chip_name, sets, options, f)
}

/// Calls `f` with the server of `name` on `chip_name` with `sets` (expected mode), batching
/// 8192 tokens; with speculation, a one-layer draft of the same model.
fn with_server_under<T>(
    engine: Option<std::sync::Arc<stepcost::engine::Engine>>,
    name: &str,
    chip_name: &str,
    sets: &[(&str, f64)],
    options: ServingOptions,
    f: impl FnOnce(&mut Server) -> T,
) -> T {
    let w = workload(name);
    let c = chip(chip_name);
    let spec = ScenarioSpec {
        sets: sets.iter().map(|(n, v)| ((*n).into(), *v)).collect(),
        engine,
        ..ScenarioSpec::default()
    };
    let scenario = Scenario::resolve(&w, &spec).unwrap();
    let target = IterationPricer::new(&w, &c, &scenario).unwrap();
    let draft_scenario = stepcost::serving::one_layer_draft(&w, &scenario).unwrap();
    let draft = options
        .speculation
        .map(|_| IterationPricer::new(&w, &c, &draft_scenario).unwrap());
    let mut server = Server::new(&c, target, draft, 8192.0, options).unwrap();
    f(&mut server)
}

#[test]
fn prefill_apart_with_a_free_transfer_is_never_slower_to_the_first_token() {
    // The prefill instance has the aggregated instance's layout: its TTFT is the prompt's
    // steps alone, where the aggregated one shares them with decode tokens.
    for (name, chip_name, sets) in [
        ("llama-3.1-8b", "h100-sxm", &[][..]),
        ("llama-3.1-70b", "h200", &[("tp", 4.0)][..]),
        ("mixtral-8x7b", "mi300x", &[("tp", 2.0)][..]),
    ] {
        for (input, output) in [(128, 1024), (1024, 1024), (12_000, 200)] {
            let shape = RequestShape::new(input, output).unwrap();
            with_server(name, chip_name, sets, ServingOptions::default(), |s| {
                for c in [1, 4, 32, 128] {
                    let together = s.steady_state(shape, c).unwrap();
                    let apart = s
                        .disaggregated(shape, c, stepcost::serving::KvLink::Free)
                        .unwrap();
                    assert!(
                        apart.ttft_s <= together.ttft_s * (1.0 + 1e-12),
                        "{name} {input}/{output} c={c}: {} > {}",
                        apart.ttft_s,
                        together.ttft_s
                    );
                    let d = apart.disaggregated.unwrap();
                    assert_eq!(d.kv_transfer_s, 0.0);
                    // The decode instance runs decode steps only: its TPOT is one at c.
                    assert_close(apart.tpot_s, apart.decode.step_time_s, 1e-12);
                    // Its chips: the decode instance's and the busy prefill instances'.
                    let chips = apart.chips as f64 + d.prefill_chips;
                    assert_close(
                        apart.output_tokens_per_s_per_chip * chips,
                        apart.output_tokens_per_s,
                        1e-12,
                    );
                }
            });
        }
    }
}

#[test]
fn a_priced_transfer_sends_the_prompts_cache_over_the_network() {
    // Llama-3.1-8B's KV: 32 layers x 8 heads x 128 x 2 (k, v) x 2 bytes = 131,072 B a token;
    // 4096 tokens over the 50 GB/s (400 Gb/s) network h100-sxm.yaml gives each GPU.
    let shape = RequestShape::new(4096, 64).unwrap();
    let t = with_server(
        "llama-3.1-8b",
        "h100-sxm",
        &[],
        ServingOptions::default(),
        |s| {
            s.disaggregated(shape, 1, stepcost::serving::KvLink::Priced)
                .unwrap()
        },
    );
    assert_close(
        t.disaggregated.unwrap().kv_transfer_s,
        131_072.0 * 4096.0 / 50e9,
        1e-9,
    );
}

#[test]
fn a_hybrid_models_transfer_sends_the_prompts_state_with_its_cache() {
    // Nemotron-H-8B: KV in 4 attention layers, 2 x 8 heads x 128 x 2 bytes = 16,384 B a
    // token; the state of 24 Mamba-2 layers, (128 x 64 x 128 + 3 x 10240) x 2 bytes each;
    // 2048 tokens over h100-sxm's 50 GB/s network.
    let shape = RequestShape::new(2048, 64).unwrap();
    let t = with_server(
        "nemotron-h-8b",
        "h100-sxm",
        &[],
        ServingOptions::default(),
        |s| {
            s.disaggregated(shape, 1, stepcost::serving::KvLink::Priced)
                .unwrap()
        },
    );
    let state = 24.0 * (128.0 * 64.0 * 128.0 + 3.0 * 10240.0) * 2.0;
    assert_close(
        t.disaggregated.unwrap().kv_transfer_s,
        (16_384.0 * 2048.0 + state) / 50e9,
        1e-9,
    );
}

#[test]
fn one_request_in_flight_is_a_request_priced_alone() {
    let shape = RequestShape::new(1024, 512).unwrap();
    let sets = [("tp", 2.0)];
    let p = point(
        "llama-3.1-70b",
        "h100-sxm",
        &sets,
        ServingOptions::default(),
        shape,
        1,
    );
    // TPOT: a one-sequence decode step at the mean of the contexts the request decodes at
    // (1024 to 1024 + 510).
    let mean = 1024.0 + 510.0 / 2.0;
    let decode = run(
        "llama-3.1-70b",
        "h100-sxm",
        &[
            ("tp", 2.0),
            ("batch", 1.0),
            ("tokens", 1.0),
            ("context", mean),
        ],
        ScenarioSpec::default(),
    );
    assert_close(p.tpot_s, decode.summary.step_time_s, 1e-12);
    assert_close(
        p.tokens_per_s_per_user,
        1.0 / decode.summary.step_time_s,
        1e-12,
    );
    // TTFT: the whole prompt in one step (it is under max_batched_tokens) on an empty cache.
    let prefill = run(
        "llama-3.1-70b",
        "h100-sxm",
        &[
            ("tp", 2.0),
            ("batch", 1.0),
            ("tokens", 1024.0),
            ("context", 0.0),
        ],
        ScenarioSpec::default(),
    );
    assert_close(p.ttft_s, prefill.summary.step_time_s, 1e-12);
    assert_close(p.e2e_s, p.ttft_s + 511.0 * p.tpot_s, 1e-12);
    assert_eq!(p.chips, 2);
    assert_close(p.output_tokens_per_s_per_chip, 512.0 / p.e2e_s / 2.0, 1e-12);
}

#[test]
fn a_long_prompt_is_prefilled_in_chunks_of_the_batched_tokens() {
    // 20,000 prompt tokens in steps of at most 8192: three chunks of 6,666.7 tokens, at prior
    // contexts 0, 6,666.7 and 13,333.3, priced at their mean (attention is linear in context).
    let shape = RequestShape::new(20_000, 64).unwrap();
    let p = point(
        "llama-3.1-8b",
        "h200",
        &[],
        ServingOptions::default(),
        shape,
        1,
    );
    assert_eq!(p.chunks_per_prompt, 3);
    let chunk = 20_000.0 / 3.0;
    let prefill = run(
        "llama-3.1-8b",
        "h200",
        &[("batch", 1.0), ("tokens", chunk), ("context", chunk)],
        ScenarioSpec::default(),
    );
    assert_close(p.ttft_s, 3.0 * prefill.summary.step_time_s, 1e-12);
}

#[test]
fn littles_law_holds_at_every_concurrency() {
    let shape = RequestShape::new(2048, 256).unwrap();
    for c in [1, 3, 16, 100] {
        let p = point(
            "llama-3.1-8b",
            "h100-sxm",
            &[],
            ServingOptions::default(),
            shape,
            c,
        );
        assert_close(p.requests_per_s * p.e2e_s, c as f64, 1e-12);
        assert_close(p.output_tokens_per_s, p.requests_per_s * 256.0, 1e-12);
        assert!(p.ttft_s > 0.0 && p.tpot_s > 0.0, "{p:?}");
    }
}

#[test]
fn speculation_accepting_nothing_is_never_faster() {
    let shape = RequestShape::new(1024, 1024).unwrap();
    for (name, chip_name) in [("llama-3.1-8b", "h100-sxm"), ("deepseek-v3", "h200")] {
        let sets: &[(&str, f64)] = if name == "deepseek-v3" {
            &[("tp", 8.0)]
        } else {
            &[]
        };
        for c in [1, 8, 64] {
            let plain = point(name, chip_name, sets, ServingOptions::default(), shape, c);
            for k in [1, 3] {
                let spec = ServingOptions {
                    speculation: Some(Speculation::new(k, 0.0).unwrap()),
                    ..ServingOptions::default()
                };
                let s = point(name, chip_name, sets, spec, shape, c);
                assert!(s.tpot_s >= plain.tpot_s, "{name} c={c} k={k}");
                assert!(s.output_tokens_per_s <= plain.output_tokens_per_s);
            }
        }
    }
}

#[test]
fn with_a_draft_each_sequence_holds_both_models_states() {
    // Nemotron-H-8B verifying 2 drafted tokens a step at the mean context 1535 holds 1538
    // positions of KV (4 attention layers x 2 x 8 KV heads x 128, bf16) and 24 Mamba-2
    // layers of state (128 x 64 x 128 + 3 x 10240, bf16) a sequence; its one-layer draft
    // (a Mamba-2 and an MLP layer, the kinds its pattern ends with) one layer of state and
    // no KV.
    let shape = RequestShape::new(1024, 1024).unwrap();
    let options = ServingOptions {
        speculation: Some(Speculation::new(2, 0.7).unwrap()),
        ..ServingOptions::default()
    };
    // Pages on demand (the fitted stack): each sequence holds its mean context's KV.
    let p = with_server_under(
        crate::common::fitted_engine(),
        "nemotron-h-8b",
        "h100-sxm",
        &[],
        options,
        |s| s.steady_state(shape, 64).unwrap(),
    );
    let layer_state = (128.0 * 64.0 * 128.0 + 3.0 * 10240.0) * 2.0;
    let per_seq = 1538.0 * 4.0 * 2.0 * 8.0 * 128.0 * 2.0 + 24.0 * layer_state + layer_state;
    // The draft's weights: embedding and head (131072 x 4096 each), the final norm, a Mamba-2
    // layer (norm, in_proj 4096 x (2 x 8192 + 2 x 8 x 128 + 128), conv 10240 x 5, 3 x 128
    // decays and skips, gated norm 8192, out_proj 8192 x 4096) and an MLP layer (norm, up and
    // down 4096 x 21504), bf16.
    let (h, vocab) = (4096.0, 131072.0);
    let mamba = h + h * 18560.0 + 10240.0 * 5.0 + 384.0 + 8192.0 + 8192.0 * h;
    let mlp = h + 2.0 * h * 21504.0;
    let draft_weight_bytes = (2.0 * vocab * h + h + mamba + mlp) * 2.0;
    let d = &p.decode;
    let room =
        d.usable_bytes - d.weight_bytes - d.workspace_bytes - d.reserve_bytes - draft_weight_bytes;
    assert_eq!(p.max_concurrency, Some((room / per_seq).floor() as u64));
    assert_close(
        p.footprint_bytes,
        d.usable_bytes - room + 64.0 * per_seq,
        1e-12,
    );
}

#[test]
fn expected_tokens_per_verify_step() {
    // (1 - A^(K+1)) / (1 - A): K = 3, A = 0.8 gives (1 - 0.4096) / 0.2 = 2.952.
    let s = Speculation::new(3, 0.8).unwrap();
    assert_close(s.tokens_per_verify(), 2.952, 1e-12);
    assert_eq!(Speculation::new(4, 1.0).unwrap().tokens_per_verify(), 5.0);
    assert_eq!(Speculation::new(4, 0.0).unwrap().tokens_per_verify(), 1.0);
    assert!(Speculation::new(0, 0.5).is_err());
    assert!(Speculation::new(2, 1.5).is_err());
}

#[test]
fn a_prefix_cache_hit_prefills_only_the_rest() {
    // Half of a 2048-token prompt cached: TTFT is a prefill of 1024 tokens over 1024 cached.
    let shape = RequestShape::new(2048, 16).unwrap();
    let options = ServingOptions {
        prefix_hit: 0.5,
        speculation: None,
    };
    let p = point("llama-3.1-8b", "h100-sxm", &[], options, shape, 1);
    let prefill = run(
        "llama-3.1-8b",
        "h100-sxm",
        &[("batch", 1.0), ("tokens", 1024.0), ("context", 1024.0)],
        ScenarioSpec::default(),
    );
    assert_close(p.ttft_s, prefill.summary.step_time_s, 1e-12);
}

/// The survey of llama-3.1-70b on two chips over every layout and two weight types.
fn wide_survey() -> stepcost::serving::Survey {
    let w = workload("llama-3.1-70b");
    let chips = [chip("h100-sxm"), chip("mi300x")];
    let scenario = Scenario::resolve(&w, &ScenarioSpec::default()).unwrap();
    let base = *scenario.dtypes();
    let mut fp8 = base;
    fp8.set(
        stepcost::types::TypeKey::Role(stepcost::types::Role::Weight),
        stepcost::types::Format::Fp8,
    );
    let query = ServingQuery {
        shape: RequestShape::new(1024, 1024).unwrap(),
        concurrency: vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
        scenario,
        dtype_choices: vec![base, fp8],
        layouts: LayoutChoice::All,
        options: ServingOptions::default(),
        draft: None::<Draft>,
        disagg: stepcost::serving::Disagg::Off,
        kv_link: stepcost::serving::KvLink::Priced,
        prefill_sets: Vec::new(),
    };
    serving_survey(&w, &chips, &query).unwrap()
}

#[test]
fn each_chips_frontier_trades_interactivity_for_throughput() {
    let all = wide_survey();
    let front = frontier_rows(&all.rows);
    for c in ["h100-sxm", "mi300x"] {
        let mine: Vec<_> = front.iter().filter(|r| r.chip == c).collect();
        assert!(mine.len() >= 3, "{c}: {} points", mine.len());
        for pair in mine.windows(2) {
            let (a, b) = (&pair[0].point, &pair[1].point);
            assert!(a.tokens_per_s_per_user < b.tokens_per_s_per_user);
            assert!(a.output_tokens_per_s_per_chip > b.output_tokens_per_s_per_chip);
        }
        // No surveyed point beats a frontier point on both.
        for r in all.rows.iter().filter(|r| r.chip == c) {
            let beaten = mine.iter().any(|f| {
                r.point.tokens_per_s_per_user > f.point.tokens_per_s_per_user
                    && r.point.output_tokens_per_s_per_chip > f.point.output_tokens_per_s_per_chip
            });
            let dominated_by_none = !mine.iter().any(|f| {
                f.point.tokens_per_s_per_user >= r.point.tokens_per_s_per_user
                    && f.point.output_tokens_per_s_per_chip >= r.point.output_tokens_per_s_per_chip
            });
            assert!(
                !dominated_by_none || beaten,
                "{r:?} is off a frontier it beats"
            );
        }
    }
}

#[test]
fn memory_caps_concurrency() {
    // 70B in bf16 on one H100 does not fit; at tp=2, 100,000 sequences of 8k context cannot.
    let out = stepcost()
        .args([
            "serving",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm",
            "--set",
            "tp=2",
        ])
        .args(["--request", "in=7000,out=1000", "--concurrency", "1,100000"])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let (header, rows) = csv_rows(&succeeded(out));
    assert_eq!(rows.len(), 2);
    let capped = &rows[1];
    assert_eq!(cell(&header, capped, "capped_from"), "100000");
    let c: u64 = cell(&header, capped, "concurrency").parse().unwrap();
    let most: u64 = cell(&header, capped, "max_concurrency").parse().unwrap();
    assert!(c <= most && c > 1, "{c} of {most}");
    assert_eq!(cell(&header, capped, "fits"), "true");
    let headroom: f64 = cell(&header, capped, "headroom_bytes").parse().unwrap();
    assert!(headroom >= 0.0);
}

#[test]
fn a_sequences_recurrent_state_caps_concurrency_where_its_cache_alone_would_not() {
    // Nemotron-H-8B on one H100, requests of 1024 in and 1024 out: decoding sequences sit at
    // a mean context of 1024 + 1022 / 2 = 1535 and hold 1536 positions of KV in the 4
    // attention layers (2 x 8 KV heads x 128, bf16), and each the state of 24 Mamba-2 layers
    // (SSM 128 x 64 x 128 and conv 3 x 10240, bf16) whatever its context.
    let kv_bytes = 1536.0 * 4.0 * 2.0 * 8.0 * 128.0 * 2.0;
    let state_bytes = 24.0 * (128.0 * 64.0 * 128.0 + 3.0 * 10240.0) * 2.0;
    assert_eq!((kv_bytes, state_bytes), (25_165_824.0, 51_806_208.0));
    // The activation workspace is the most one kernel reads and writes: at hundreds of
    // sequences the decode scan's, per sequence x, B, C (10240) and dt (128) read, one
    // layer's SSM state read and written, y (8192) written, bf16.
    let scan_bytes = (10240.0 + 128.0 + 2.0 * 128.0 * 64.0 * 128.0 + 8192.0) * 2.0;
    // The room beside the weights and the runtime reserve.
    let one = run(
        "nemotron-h-8b",
        "h100-sxm",
        &[("batch", 1.0), ("context", 1535.0)],
        ScenarioSpec {
            engine: crate::common::fitted_engine(),
            ..ScenarioSpec::default()
        },
    )
    .summary;
    let room = one.usable_bytes - one.weight_bytes - one.reserve_bytes;
    let most = (room / (kv_bytes + state_bytes + scan_bytes)).floor() as u64;
    // There, the scan's workspace is more than the one sized for max_batched_tokens.
    assert!(most as f64 * scan_bytes > one.workspace_bytes);
    // 1000 in flight: their caches alone would fit, with their states they do not.
    let kv_alone = (room - one.workspace_bytes) / kv_bytes;
    assert!(1000.0 < kv_alone && most < 1000, "{most}");
    let out = stepcost()
        .args(["serving", "nemotron-h-8b", "--chip", "h100-sxm"])
        .args(["--request", "in=1024,out=1024", "--concurrency", "1000"])
        .args(["--engine", "fitted"])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let (header, rows) = csv_rows(&succeeded(out));
    assert_eq!(rows.len(), 1);
    assert_eq!(cell(&header, &rows[0], "capped_from"), "1000");
    assert_eq!(cell(&header, &rows[0], "concurrency"), most.to_string());
    assert_eq!(cell(&header, &rows[0], "max_concurrency"), most.to_string());
    assert_eq!(cell(&header, &rows[0], "fits"), "true");
}

#[test]
fn a_workload_without_sequences_cannot_be_served() {
    for command in [
        &["serving", "gemm", "--chip", "h100-sxm"][..],
        &[
            "plan",
            "gemm",
            "--chip",
            "h100-sxm",
            "--rate",
            "1",
            "--request",
            "in=8,out=8",
        ][..],
    ] {
        let out = stepcost().args(command).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("has no `batch` param, so it cannot serve requests"),
            "{err}"
        );
    }
}

#[test]
fn bad_serving_input_is_refused() {
    let cases: [(&[&str], &str); 5] = [
        (&["--concurrency", "0"], "at least 1"),
        (&["--request", "in=10,out=1"], "2 output tokens"),
        (&["--prefix-hit", "1"], "below 1"),
        (
            &["--spec-k", "2", "--spec-accept", "1.5", "--draft", "mtp"],
            "between 0 and 1",
        ),
        (&["--spec-k", "2"], "--spec-accept"),
    ];
    for (args, message) in cases {
        let out = stepcost()
            .args(["serving", "llama-3.1-8b", "--chip", "h100-sxm"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

/// The steady state of llama-3.1-70b on h200 with decode on `decode_tp` chips and prompts
/// prefilled apart on `prefill_tp` chips, at `c` in flight.
fn pools_apart(
    decode_tp: f64,
    prefill_tp: f64,
    shape: RequestShape,
    c: u64,
) -> stepcost::serving::ServingPoint {
    let pool = with_server(
        "llama-3.1-70b",
        "h200",
        &[("tp", prefill_tp)],
        ServingOptions::default(),
        |s| s.prefill_pool(shape).unwrap(),
    );
    with_server(
        "llama-3.1-70b",
        "h200",
        &[("tp", decode_tp)],
        ServingOptions::default(),
        |s| {
            s.disaggregated_with(&pool, shape, c, stepcost::serving::KvLink::Priced)
                .unwrap()
        },
    )
}

#[test]
fn a_prefill_pool_of_its_own_layout_sets_ttft_and_its_chips_by_hand() {
    // Llama-3.1-70B's KV: 80 layers x 8 heads x 128 x 2 (k, v) x 2 bytes = 327,680 B a
    // token; tp=2 holds half the heads on each chip, tp=4 a quarter, tp=8 one head each.
    // H200's network: 400 Gb/s = 50 GB/s a chip.
    let (input, c) = (1024u64, 32u64);
    let shape = RequestShape::new(input, 1024).unwrap();
    let prompt = |tp: f64| {
        run(
            "llama-3.1-70b",
            "h200",
            &[
                ("tp", tp),
                ("batch", 1.0),
                ("tokens", 1024.0),
                ("context", 0.0),
            ],
            ScenarioSpec::default(),
        )
        .summary
        .step_time_s
    };
    // Decode on tp=4: 32 sequences at the mean context 1024 + 1022 / 2; 1023 steps a request.
    let decode = run(
        "llama-3.1-70b",
        "h200",
        &[
            ("tp", 4.0),
            ("batch", 32.0),
            ("tokens", 1.0),
            ("context", 1535.0),
        ],
        ScenarioSpec::default(),
    )
    .summary
    .step_time_s;
    let requests_per_s = c as f64 / (1023.0 * decode);
    // Each prefill tp=2 chip sends half the cache (a decode tp=4 chip receives a quarter);
    // with prefill on tp=8, each decode chip's quarter is the larger share.
    for (prefill_tp, bytes_per_token) in [(2.0, 163_840.0), (8.0, 81_920.0)] {
        let p = pools_apart(4.0, prefill_tp, shape, c);
        let d = p.disaggregated.unwrap();
        let transfer_s = bytes_per_token * input as f64 / 50e9;
        assert_close(d.kv_transfer_s, transfer_s, 1e-9);
        assert_close(p.ttft_s, prompt(prefill_tp) + transfer_s, 1e-9);
        assert_close(p.tpot_s, decode, 1e-9);
        assert_eq!((p.chips, d.prefill_instance_chips), (4, prefill_tp as u64));
        // Prefill instances busy at the decode instance's rate, each on its chips.
        let instances = requests_per_s * prompt(prefill_tp);
        assert_close(d.prefill_instances, instances, 1e-9);
        assert_close(d.prefill_chips, instances * prefill_tp, 1e-9);
        let all_chips = 4.0 + instances * prefill_tp;
        assert_close(
            p.output_tokens_per_s_per_chip,
            requests_per_s * 1024.0 / all_chips,
            1e-9,
        );
    }
}

#[test]
fn serving_names_both_layouts_and_the_split_of_chips() {
    let args = [
        "serving",
        "llama-3.1-70b",
        "--chip",
        "h200",
        "--set",
        "tp=4",
        "--disagg",
        "on",
        "--prefill-set",
        "tp=2",
        "--concurrency",
        "32",
    ];
    let out = stepcost()
        .args(args)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let (h, rows) = csv_rows(&succeeded(out));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(
        (cell(&h, r, "layout"), cell(&h, r, "prefill_layout")),
        ("tp=4", "tp=2")
    );
    assert_eq!(cell(&h, r, "prefill_chips_per_instance"), "2");
    let p = pools_apart(4.0, 2.0, RequestShape::new(1024, 1024).unwrap(), 32);
    let ttft_ms: f64 = cell(&h, r, "ttft_ms").parse().unwrap();
    assert_close(ttft_ms, p.ttft_s * 1e3, 1e-9);
    // The table names the prefill layout and the chips of each pool (prefill:decode).
    let out = stepcost().args(args).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("tp=2 x"), "{text}");
    assert!(text.contains(":4 chips"), "{text}");
    // A prefill layout without prefill apart, or of a param that is not a layout, is refused.
    for (extra, message) in [
        (&["--prefill-set", "tp=2"][..], "--disagg on or auto"),
        (
            &["--disagg", "on", "--prefill-set", "batch=2"][..],
            "a prefill layout sets only",
        ),
    ] {
        let out = stepcost()
            .args(["serving", "llama-3.1-8b", "--chip", "h100-sxm"])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(message),
            "{extra:?}: {err}"
        );
    }
}

#[test]
fn the_smallest_layout_is_tensor_parallel_among_as_many_chips() {
    // Llama-3.1-405B in bf16 (810 GB of weights) needs all eight H200s of a node; of the
    // layouts on eight chips the survey takes tp=8, as engines lay out a node, not pp=8,
    // whose stages a decode step runs one after another.
    let out = stepcost()
        .args([
            "serving",
            "llama-3.1-405b",
            "--chip",
            "h200",
            "--concurrency",
            "1",
        ])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let (header, rows) = csv_rows(&succeeded(out));
    assert_eq!(rows.len(), 1);
    assert_eq!(cell(&header, &rows[0], "layout"), "tp=8");
    assert_eq!(cell(&header, &rows[0], "chips"), "8");
}
