//! Each engine's flags for a layout (docs/sources.md: L1 vLLM, L2 SGLang, L3 TensorRT-LLM).
//! A flag is written only where the named version documents it; the rest are notes.

use std::fmt::Display;

use super::{Engine, EngineLaunch, LaunchLayout, Vendor};
use crate::base::format::Format;

/// A command being built, and the notes on what it leaves out.
struct Command {
    argv: Vec<String>,
    notes: Vec<String>,
}

impl Command {
    fn new(program: &[&str]) -> Command {
        Command {
            argv: program.iter().map(|w| w.to_string()).collect(),
            notes: Vec::new(),
        }
    }

    fn word(&mut self, word: &str) {
        self.argv.push(word.to_string());
    }

    fn flag(&mut self, flag: &str, value: impl Display) {
        self.argv.push(flag.to_string());
        self.argv.push(value.to_string());
    }

    fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    fn done(self, engine: Engine) -> EngineLaunch {
        EngineLaunch {
            engine,
            version: engine.title(),
            argv: Some(self.argv),
            notes: self.notes,
        }
    }
}

/// No command: the engine does not run on the chip's vendor.
fn unmapped(engine: Engine, why: String) -> EngineLaunch {
    EngineLaunch {
        engine,
        version: engine.title(),
        argv: None,
        notes: vec![why],
    }
}

pub(super) fn render(engine: Engine, layout: &LaunchLayout) -> EngineLaunch {
    match engine {
        Engine::Vllm => vllm(layout),
        Engine::Sglang => sglang(layout),
        Engine::Trtllm => trtllm(layout),
    }
}

/// The model's id, or `MODEL` with a note to replace it.
fn model(layout: &LaunchLayout, command: &mut Command) -> String {
    match &layout.model_id {
        Some(id) => id.clone(),
        None => {
            command.note(format!(
                "stepcost knows no Hugging Face id for {}: replace MODEL with the \
                 checkpoint's id or path",
                layout.model_name
            ));
            "MODEL".into()
        }
    }
}

/// How an engine gets the layout's weight format from the checkpoint.
#[derive(PartialEq)]
enum Weights {
    /// The checkpoint already stores it.
    AsStored,
    /// A 16- or 32-bit checkpoint quantised to fp8 (E4M3, one scale per tensor) at load:
    /// vLLM's and SGLang's `--quantization fp8`.
    OnlineFp8,
    /// No engine here converts to it at load.
    Other,
}

fn weights(layout: &LaunchLayout) -> Weights {
    let wide = matches!(
        layout.checkpoint,
        Format::Bf16 | Format::Fp16 | Format::Fp32
    );
    match (layout.weight, wide) {
        (w, _) if w == layout.checkpoint => Weights::AsStored,
        (Format::Fp8, true) => Weights::OnlineFp8,
        _ => Weights::Other,
    }
}

fn weights_note(engine: &str, layout: &LaunchLayout) -> String {
    format!(
        "{engine} loads the weights as the checkpoint stores them ({}) and has no flag that \
         converts them to {} at load: serve a checkpoint stored in {}",
        layout.checkpoint, layout.weight, layout.weight
    )
}

/// The KV type is the model's own unless set: 16-bit KV needs no flag.
fn kv_is_default(kv: Format) -> bool {
    matches!(kv, Format::Bf16 | Format::Fp16)
}

fn kv_note(engine: &str, kv: Format) -> String {
    format!("{engine} has no KV cache type {kv}: the cache stays in the model's type (auto)")
}

/// The note for replicas of a model with expert layers where the engine's data-parallel
/// ranks would share those layers: replicas are separate servers.
fn replicas_note(dp: u64) -> String {
    format!(
        "run {dp} copies of this command, one per replica, behind a load balancer: the \
         engine's data-parallel ranks would share the expert layers instead"
    )
}

fn vllm(layout: &LaunchLayout) -> EngineLaunch {
    let mut c = Command::new(&["vllm", "serve"]);
    let model = model(layout, &mut c);
    c.word(&model);
    let (tp, ep, dp) = (layout.tp, layout.ep, layout.dp);
    c.flag("--tensor-parallel-size", tp);
    if layout.pp > 1 {
        c.flag("--pipeline-parallel-size", layout.pp);
    }
    let mut seqs = layout.max_seqs;
    if ep > 1 {
        c.flag("--data-parallel-size", ep);
        c.word("--enable-expert-parallel");
        c.note(format!(
            "stepcost's {ep} expert groups of {} are vLLM's data-parallel ranks; \
             vLLM's expert-parallel size is tensor x data parallel, {}, the chips stepcost \
             spreads the experts over",
            chips(tp),
            tp * ep
        ));
        // Each data-parallel rank schedules its own sequences.
        seqs = layout.max_seqs.div_ceil(ep);
        c.note(format!(
            "--max-num-seqs is per data-parallel rank: the replica's {} sequences over {ep} \
             ranks, rounded up",
            layout.max_seqs
        ));
        if dp > 1 {
            c.note(replicas_note(dp));
        }
    } else if dp > 1 && layout.moe {
        // vLLM's data-parallel ranks of a MoE model share their expert layers (a DP x TP
        // tensor-parallel group): they are not whole replicas.
        c.note(replicas_note(dp));
    } else if dp > 1 {
        c.flag("--data-parallel-size", dp);
        c.note(format!(
            "--data-parallel-size {dp}: {dp} replicas of {} behind one server, each \
             its own engine: --max-num-seqs and --max-num-batched-tokens hold per replica",
            chips(tp * layout.pp)
        ));
    }
    c.flag("--max-num-seqs", seqs);
    c.flag("--max-num-batched-tokens", layout.max_batched_tokens);
    c.flag("--gpu-memory-utilization", layout.memory_utilization);
    match layout.kv {
        Format::Fp8 => c.flag("--kv-cache-dtype", "fp8"),
        kv if kv_is_default(kv) => {}
        kv => c.note(kv_note("vLLM v0.11", kv)),
    }
    match weights(layout) {
        Weights::AsStored => {}
        Weights::OnlineFp8 => {
            c.flag("--quantization", "fp8");
            if layout.fp8_math && layout.activation.element().bytes() >= 2.0 {
                c.note(format!(
                    "on a chip with fp8 math vLLM's --quantization fp8 quantises the \
                     activations too (W8A8, dynamic scales), where these settings were priced \
                     with {} activations (W8A16): --dtype activation=fp8 prices what it runs",
                    layout.activation
                ));
            }
        }
        Weights::Other => c.note(weights_note("vLLM", layout)),
    }
    c.word("--enable-chunked-prefill");
    match layout.vendor {
        Vendor::Nvidia | Vendor::Amd => {}
        Vendor::Google | Vendor::Intel => c.note(format!(
            "vLLM runs on {} chips through a platform backend; these flags were checked \
             against vLLM's GPU documentation: check the backend supports each, the data \
             types above all",
            layout.vendor.name()
        )),
        Vendor::Unknown => c.note(unknown_vendor("vLLM")),
    }
    c.done(Engine::Vllm)
}

/// `1 chip`, `4 chips`.
fn chips(n: u64) -> String {
    match n {
        1 => "1 chip".into(),
        n => format!("{n} chips"),
    }
}

fn unknown_vendor(engine: &str) -> String {
    format!("the chip names no known vendor: check that {engine} runs on it")
}

fn sglang(layout: &LaunchLayout) -> EngineLaunch {
    if matches!(layout.vendor, Vendor::Google | Vendor::Intel) {
        return unmapped(
            Engine::Sglang,
            format!(
                "does not map: SGLang v0.5's server runs on NVIDIA and AMD GPUs; stepcost \
                 knows no SGLang launch for {} chips",
                layout.vendor.name()
            ),
        );
    }
    let mut c = Command::new(&["python", "-m", "sglang.launch_server", "--model-path"]);
    let model = model(layout, &mut c);
    c.word(&model);
    let (tp, ep, dp) = (layout.tp, layout.ep, layout.dp);
    // SGLang's tensor-parallel size counts every chip of a stage, attention groups included.
    c.flag("--tp-size", tp * ep);
    if layout.pp > 1 {
        c.flag("--pp-size", layout.pp);
    }
    if ep > 1 {
        c.flag("--ep-size", tp * ep);
        c.flag("--dp-size", ep);
        c.word("--enable-dp-attention");
        c.note(format!(
            "--enable-dp-attention with --dp-size {ep} splits attention into {ep} \
             data-parallel groups of {}, as stepcost's expert groups, and --ep-size \
             spreads the experts over all {} chips of a stage",
            chips(tp),
            tp * ep
        ));
        if dp > 1 {
            c.note(replicas_note(dp));
        }
    } else if dp > 1 {
        c.flag("--dp-size", dp);
        c.note(format!(
            "--dp-size {dp} without --enable-dp-attention: {dp} replicas of {}; \
             --max-running-requests holds per replica",
            chips(tp * layout.pp)
        ));
    }
    c.flag("--max-running-requests", layout.max_seqs);
    c.flag("--chunked-prefill-size", layout.max_batched_tokens);
    c.flag("--mem-fraction-static", layout.memory_utilization);
    c.note(
        "--chunked-prefill-size caps the prompt tokens prefilled in one chunk, SGLang's \
         nearest setting to a step's token budget; --mem-fraction-static is the share of \
         memory for the weights and the KV cache pool, the activation workspace outside it \
         (vLLM's --gpu-memory-utilization includes it)"
            .into(),
    );
    match layout.kv {
        // stepcost's fp8 is E4M3.
        Format::Fp8 => c.flag("--kv-cache-dtype", "fp8_e4m3"),
        kv if kv_is_default(kv) => {}
        kv => c.note(kv_note("SGLang v0.5", kv)),
    }
    match weights(layout) {
        Weights::AsStored => {}
        Weights::OnlineFp8 => c.flag("--quantization", "fp8"),
        Weights::Other => c.note(weights_note("SGLang", layout)),
    }
    if layout.vendor == Vendor::Unknown {
        c.note(unknown_vendor("SGLang"));
    }
    c.done(Engine::Sglang)
}

fn trtllm(layout: &LaunchLayout) -> EngineLaunch {
    if matches!(layout.vendor, Vendor::Amd | Vendor::Google | Vendor::Intel) {
        return unmapped(
            Engine::Trtllm,
            format!(
                "does not map: TensorRT-LLM runs on NVIDIA GPUs only, not on {} chips",
                layout.vendor.name()
            ),
        );
    }
    let mut c = Command::new(&["trtllm-serve"]);
    let model = model(layout, &mut c);
    c.word(&model);
    c.flag("--backend", "pytorch");
    let (tp, ep, dp) = (layout.tp, layout.ep, layout.dp);
    c.flag("--tp_size", tp * ep);
    if layout.pp > 1 {
        c.flag("--pp_size", layout.pp);
    }
    if ep > 1 {
        c.flag("--ep_size", tp * ep);
        c.note(format!(
            "stepcost's {ep} expert groups run attention data-parallel: TensorRT-LLM takes \
             that from `enable_attention_dp: true` in the YAML file given to \
             --extra_llm_api_options, not from a flag; without it attention runs \
             tensor-parallel over all {} chips",
            tp * ep
        ));
    }
    if dp > 1 {
        c.note(format!(
            "trtllm-serve has no data-parallel flag: run {dp} copies of this command, one \
             per replica, behind a load balancer"
        ));
    }
    c.flag("--max_batch_size", layout.max_seqs);
    c.flag("--max_num_tokens", layout.max_batched_tokens);
    c.flag(
        "--kv_cache_free_gpu_memory_fraction",
        layout.memory_utilization,
    );
    c.note(
        "--kv_cache_free_gpu_memory_fraction is the share of the memory left free after the \
         weights and buffers that the KV cache takes, not a share of the whole chip: the same \
         number sizes the cache differently from vLLM's --gpu-memory-utilization"
            .into(),
    );
    match layout.kv {
        Format::Fp8 => c.note(
            "trtllm-serve has no flag for the KV cache type: set `dtype: fp8` under \
             `kv_cache_config` in the YAML file given to --extra_llm_api_options"
                .into(),
        ),
        kv if kv_is_default(kv) => {}
        kv => c.note(kv_note("trtllm-serve", kv)),
    }
    if weights(layout) != Weights::AsStored {
        c.note(weights_note("trtllm-serve", layout));
    }
    if layout.vendor == Vendor::Unknown {
        c.note(unknown_vendor("TensorRT-LLM"));
    }
    c.done(Engine::Trtllm)
}
