//! Each expected command is written by hand from the engines' documentation (docs/sources.md,
//! L1 to L3), not from this module's output.

use super::*;

/// Llama-3.1-70B served in fp8 (weights and KV) on 4 H100s, from its bf16 checkpoint.
fn llama_fp8() -> LaunchLayout {
    LaunchLayout {
        model_name: "Llama-3.1-70B".into(),
        model_id: Some("meta-llama/Llama-3.1-70B-Instruct".into()),
        checkpoint: Format::Bf16,
        weight: Format::Fp8,
        kv: Format::Fp8,
        activation: Format::Fp8,
        fp8_math: true,
        tp: 4,
        pp: 1,
        ep: 1,
        dp: 1,
        moe: false,
        max_seqs: 128,
        max_batched_tokens: 8192,
        memory_utilization: 0.9,
        vendor: Vendor::of_family(Some("nvidia-hopper")),
    }
}

/// DeepSeek-V3 from its fp8-b128 checkpoint on 8 H200s, one expert group per chip.
fn deepseek_ep8() -> LaunchLayout {
    LaunchLayout {
        model_name: "DeepSeek-V3".into(),
        model_id: Some("deepseek-ai/DeepSeek-V3".into()),
        checkpoint: Format::Fp8B128,
        weight: Format::Fp8B128,
        kv: Format::Bf16,
        tp: 1,
        ep: 8,
        moe: true,
        max_seqs: 256,
        ..llama_fp8()
    }
}

fn words(text: &str) -> Option<Vec<String>> {
    Some(text.split(' ').map(String::from).collect())
}

fn engine(launch: &Launch, engine: Engine) -> &EngineLaunch {
    launch.engines.iter().find(|e| e.engine == engine).unwrap()
}

fn notes_mention(e: &EngineLaunch, text: &str) -> bool {
    e.notes.iter().any(|n| n.contains(text))
}

#[test]
fn llama_fp8_on_four_h100s() {
    // The call `plan` and `serving` make: a layout in, commands out.
    let launch = launch(&llama_fp8()).unwrap();
    let vllm = engine(&launch, Engine::Vllm);
    assert_eq!(
        vllm.argv,
        words(
            "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 \
             --max-num-seqs 128 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.9 \
             --kv-cache-dtype fp8 --quantization fp8 --enable-chunked-prefill"
        )
    );
    assert!(vllm.notes.is_empty(), "{:?}", vllm.notes);
    let sglang = engine(&launch, Engine::Sglang);
    assert_eq!(
        sglang.argv,
        words(
            "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-70B-Instruct \
             --tp-size 4 --max-running-requests 128 --chunked-prefill-size 8192 \
             --mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --quantization fp8"
        )
    );
    let trt = engine(&launch, Engine::Trtllm);
    assert_eq!(
        trt.argv,
        words(
            "trtllm-serve meta-llama/Llama-3.1-70B-Instruct --backend pytorch --tp_size 4 \
             --max_batch_size 128 --max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.9"
        )
    );
    // No flag quantises online or sets the KV type: both are notes.
    assert!(notes_mention(trt, "`dtype: fp8` under `kv_cache_config`"));
    assert!(notes_mention(trt, "as the checkpoint stores them (bf16)"));
}

#[test]
fn deepseek_with_expert_parallel_on_eight_h200s() {
    let launch = launch(&deepseek_ep8()).unwrap();
    let vllm = engine(&launch, Engine::Vllm);
    // vLLM's EP size is tp x dp = 8; each of the 8 ranks schedules 256 / 8 sequences.
    assert_eq!(
        vllm.argv,
        words(
            "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 1 \
             --data-parallel-size 8 --enable-expert-parallel --max-num-seqs 32 \
             --max-num-batched-tokens 8192 --gpu-memory-utilization 0.9 \
             --enable-chunked-prefill"
        )
    );
    assert!(notes_mention(vllm, "tensor x data parallel, 8"));
    let sglang = engine(&launch, Engine::Sglang);
    assert_eq!(
        sglang.argv,
        words(
            "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp-size 8 \
             --ep-size 8 --dp-size 8 --enable-dp-attention --max-running-requests 256 \
             --chunked-prefill-size 8192 --mem-fraction-static 0.9"
        )
    );
    let trt = engine(&launch, Engine::Trtllm);
    assert_eq!(
        trt.argv,
        words(
            "trtllm-serve deepseek-ai/DeepSeek-V3 --backend pytorch --tp_size 8 --ep_size 8 \
             --max_batch_size 256 --max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.9"
        )
    );
    assert!(notes_mention(trt, "`enable_attention_dp: true`"));
    // The checkpoint is already fp8-b128: nothing to quantise, nothing to say about weights.
    for e in &launch.engines {
        assert!(!notes_mention(e, "checkpoint stores"), "{:?}", e.notes);
    }
}

/// Llama-3.1-8B on TPU v6e chips, its checkpoint's id not given.
fn tpu() -> LaunchLayout {
    LaunchLayout {
        model_name: "Llama-3.1-8B".into(),
        model_id: None,
        checkpoint: Format::Bf16,
        weight: Format::Bf16,
        kv: Format::Bf16,
        tp: 4,
        pp: 2,
        max_seqs: 64,
        max_batched_tokens: 2048,
        memory_utilization: 0.95,
        vendor: Vendor::of_family(Some("google-tpu-v6")),
        ..llama_fp8()
    }
}

#[test]
fn a_tpu_gets_vllm_only() {
    let launch = launch(&tpu()).unwrap();
    let vllm = engine(&launch, Engine::Vllm);
    assert_eq!(
        vllm.argv,
        words(
            "vllm serve MODEL --tensor-parallel-size 4 --pipeline-parallel-size 2 \
             --max-num-seqs 64 --max-num-batched-tokens 2048 --gpu-memory-utilization 0.95 \
             --enable-chunked-prefill"
        )
    );
    assert!(notes_mention(vllm, "replace MODEL"));
    assert!(notes_mention(
        vllm,
        "Google TPU chips through a platform backend"
    ));
    let sglang = engine(&launch, Engine::Sglang);
    assert_eq!(sglang.argv, None);
    assert_eq!(
        sglang.notes,
        [
            "does not map: SGLang v0.5's server runs on NVIDIA and AMD GPUs; stepcost knows no \
          SGLang launch for Google TPU chips"
        ]
    );
    let trt = engine(&launch, Engine::Trtllm);
    assert_eq!(trt.argv, None);
    assert_eq!(
        trt.notes,
        ["does not map: TensorRT-LLM runs on NVIDIA GPUs only, not on Google TPU chips"]
    );
}

#[test]
fn amd_maps_to_vllm_and_sglang_not_tensorrt_llm() {
    let layout = LaunchLayout {
        vendor: Vendor::of_family(Some("amd-cdna3")),
        ..llama_fp8()
    };
    let launch = launch(&layout).unwrap();
    assert!(engine(&launch, Engine::Vllm).argv.is_some());
    assert!(engine(&launch, Engine::Sglang).argv.is_some());
    let trt = engine(&launch, Engine::Trtllm);
    assert_eq!(trt.argv, None);
    assert!(notes_mention(trt, "not on AMD chips"));
}

#[test]
fn replicas_are_data_parallel_for_dense_models_and_copies_beside_experts() {
    let dense = launch(&LaunchLayout {
        dp: 3,
        ..llama_fp8()
    })
    .unwrap();
    let argv = engine(&dense, Engine::Vllm).argv.clone().unwrap();
    assert!(argv.windows(2).any(|w| w == ["--data-parallel-size", "3"]));
    let argv = engine(&dense, Engine::Sglang).argv.clone().unwrap();
    assert!(argv.windows(2).any(|w| w == ["--dp-size", "3"]));
    assert!(notes_mention(
        engine(&dense, Engine::Trtllm),
        "run 3 copies"
    ));

    // A MoE model without expert groups: vLLM's data-parallel ranks would share the experts.
    let moe_tp = launch(&LaunchLayout {
        dp: 3,
        moe: true,
        ..llama_fp8()
    })
    .unwrap();
    let vllm = engine(&moe_tp, Engine::Vllm);
    assert!(!vllm
        .argv
        .as_ref()
        .unwrap()
        .iter()
        .any(|w| w == "--data-parallel-size"));
    assert!(notes_mention(vllm, "run 3 copies"));

    let moe = launch(&LaunchLayout {
        dp: 2,
        ..deepseek_ep8()
    })
    .unwrap();
    for e in &moe.engines {
        assert!(notes_mention(e, "run 2 copies"), "{:?}", e.notes);
        // The data-parallel size stays the expert groups'.
        let argv = e.argv.as_ref().unwrap();
        assert!(!argv.iter().any(|w| w == "2"), "{argv:?}");
    }
}

#[test]
fn formats_an_engine_cannot_reach_are_notes_not_flags() {
    let layout = LaunchLayout {
        weight: Format::Int4G128,
        kv: Format::Fp4,
        ..llama_fp8()
    };
    let launch = launch(&layout).unwrap();
    for e in &launch.engines {
        let argv = e.argv.as_ref().unwrap();
        assert!(!argv.iter().any(|w| w.contains("quantization")), "{argv:?}");
        assert!(
            !argv.iter().any(|w| w.contains("kv-cache-dtype")),
            "{argv:?}"
        );
        assert!(
            notes_mention(e, "converts them to int4-g128"),
            "{:?}",
            e.notes
        );
        assert!(notes_mention(e, "no KV cache type fp4"), "{:?}", e.notes);
    }
    // Block-scaled fp8 is not what `--quantization fp8` makes (one scale per tensor).
    let blocks = super::launch(&LaunchLayout {
        weight: Format::Fp8B128,
        ..llama_fp8()
    })
    .unwrap();
    let vllm = engine(&blocks, Engine::Vllm);
    assert!(!vllm
        .argv
        .as_ref()
        .unwrap()
        .iter()
        .any(|w| w == "--quantization"));
    assert!(notes_mention(vllm, "converts them to fp8-b128"));
}

#[test]
fn bad_layouts_are_refused_with_the_field() {
    let refused = |layout: LaunchLayout| launch(&layout).unwrap_err();
    let zero = refused(LaunchLayout {
        tp: 0,
        ..llama_fp8()
    });
    assert_eq!(zero, LaunchError::Zero { field: "tp" });
    assert_eq!(zero.to_string(), "tp must be at least 1, got 0");
    for u in [0.0, 1.5, f64::NAN, -0.1] {
        let err = refused(LaunchLayout {
            memory_utilization: u,
            ..llama_fp8()
        });
        assert!(matches!(err, LaunchError::MemoryUtilization(_)), "{err}");
    }
    for id in ["", "a b", "x;rm -rf", "--help", "$(id)", "m\u{1b}[2J"] {
        let err = refused(LaunchLayout {
            model_id: Some(id.into()),
            ..llama_fp8()
        });
        assert_eq!(err, LaunchError::ModelId(id.into()));
    }
    let big = refused(LaunchLayout {
        max_seqs: u64::MAX,
        ..llama_fp8()
    });
    assert!(matches!(
        big,
        LaunchError::TooLarge {
            field: "max_seqs",
            ..
        }
    ));
}

#[test]
fn vendors_come_from_the_family_prefix() {
    let cases = [
        (Some("nvidia-blackwell"), Vendor::Nvidia),
        (Some("amd-cdna4"), Vendor::Amd),
        (Some("google-tpu-v5"), Vendor::Google),
        (Some("intel-gaudi3"), Vendor::Intel),
        (Some("acme-x1"), Vendor::Unknown),
        (None, Vendor::Unknown),
    ];
    for (family, vendor) in cases {
        assert_eq!(Vendor::of_family(family), vendor, "{family:?}");
    }
}

#[test]
fn json_carries_every_engine() {
    let value = serde_json::to_value(launch(&deepseek_ep8()).unwrap()).unwrap();
    assert_eq!(value["caveat"], CAVEAT);
    let engines = value["engines"].as_array().unwrap();
    let names: Vec<_> = engines.iter().map(|e| e["engine"].clone()).collect();
    assert_eq!(names, ["vllm", "sglang", "trtllm"]);
    assert_eq!(engines[0]["version"], "vLLM v0.11");
    assert_eq!(engines[2]["argv"][3], "pytorch");
}

#[test]
fn text_puts_a_flag_a_line_and_the_notes_under_each_engine() {
    let layout = tpu();
    let mut out = Vec::new();
    write_launch(&mut out, &layout, &launch(&layout).unwrap()).unwrap();
    let expected = r"Launch settings for Llama-3.1-8B (a starting point, not a tested configuration: check every flag against the engine version you run)
  layout: tp 4 x ep 1 x pp 2 chips a replica, dp 1; 64 sequences and 2048 tokens a step at most; weights bf16 (checkpoint bf16), KV bf16; memory 0.95; Google TPU chips

vLLM v0.11
  vllm serve MODEL \
    --tensor-parallel-size 4 \
    --pipeline-parallel-size 2 \
    --max-num-seqs 64 \
    --max-num-batched-tokens 2048 \
    --gpu-memory-utilization 0.95 \
    --enable-chunked-prefill
  note: stepcost knows no Hugging Face id for Llama-3.1-8B: replace MODEL with the checkpoint's id or path
  note: vLLM runs on Google TPU chips through a platform backend; these flags were checked against vLLM's GPU documentation: check the backend supports each, the data types above all

SGLang v0.5
  (no command)
  note: does not map: SGLang v0.5's server runs on NVIDIA and AMD GPUs; stepcost knows no SGLang launch for Google TPU chips

TensorRT-LLM 1.0 (trtllm-serve)
  (no command)
  note: does not map: TensorRT-LLM runs on NVIDIA GPUs only, not on Google TPU chips
";
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn a_model_name_cannot_drive_the_terminal() {
    let layout = LaunchLayout {
        model_name: "evil\u{1b}[2J".into(),
        ..tpu()
    };
    let mut out = Vec::new();
    write_launch(&mut out, &layout, &launch(&layout).unwrap()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains('\u{1b}'));
    assert!(text.starts_with("Launch settings for evil\\u{1b}[2J ("));
}

#[test]
fn online_fp8_on_a_chip_with_fp8_math_is_w8a8_whatever_was_priced() {
    // vLLM's --quantization fp8 runs W8A8 where the chip computes fp8 and weight-only W8A16
    // (FP8 Marlin) where it does not (docs/sources.md, L4): settings priced W8A16 on a Hopper
    // say so; on an A100, or priced W8A8, they need no note.
    let note = "quantises the activations too";
    let at = |activation: Format, fp8_math: bool| {
        let layout = LaunchLayout {
            kv: Format::Bf16,
            activation,
            fp8_math,
            ..llama_fp8()
        };
        let launch = launch(&layout).unwrap();
        notes_mention(engine(&launch, Engine::Vllm), note)
    };
    assert!(at(Format::Bf16, true));
    assert!(!at(Format::Bf16, false));
    assert!(!at(Format::Fp8, true));
}
