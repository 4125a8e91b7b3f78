//! A layout stepcost chose (tp, pp, ep, dp, sequences in flight, tokens per step, memory
//! fraction, weight and KV types) as the command lines that ask three serving engines for the
//! same: vLLM, SGLang and TensorRT-LLM's `trtllm-serve`. Every flag is spelled as the named
//! version documents it (docs/sources.md, L1 to L3); where an engine has no equivalent for a
//! setting, or does not run on the chip's vendor, a note says so instead of a flag. The output
//! is a starting point, not a tested configuration.
//!
//! How stepcost's layout maps (its MoE templates: one replica is `tp * ep * pp` chips; each of
//! the `ep` groups of `tp` chips runs the attention of `1/ep` of the sequences and holds
//! `1/ep` of the experts, split `tp` ways): the `ep` groups are the engines' attention
//! data-parallel ranks, and the experts spread over all `tp * ep` chips of a stage. `dp`
//! counts whole replicas: an engine's data-parallel size where its ranks are independent,
//! separate servers where they would share expert layers.

mod engines;
#[cfg(test)]
mod tests;

use std::fmt;
use std::io::{self, Write};

use serde::Serialize;

use crate::base::format::Format;

/// The chip's vendor, which decides the engines that run on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// An `nvidia-*` family.
    Nvidia,
    /// An `amd-*` family.
    Amd,
    /// A `google-*` family: a TPU.
    Google,
    /// An `intel-*` family: a Gaudi.
    Intel,
    /// The chip file names no family, or one of a vendor not listed here.
    Unknown,
}

impl Vendor {
    /// The vendor a chip family names first (`nvidia-hopper`, `google-tpu-v5`).
    pub fn of_family(family: Option<&str>) -> Vendor {
        let vendor = family.and_then(|f| f.split('-').next()).unwrap_or("");
        match vendor {
            "nvidia" => Vendor::Nvidia,
            "amd" => Vendor::Amd,
            "google" => Vendor::Google,
            "intel" => Vendor::Intel,
            _ => Vendor::Unknown,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Vendor::Nvidia => "NVIDIA",
            Vendor::Amd => "AMD",
            Vendor::Google => "Google TPU",
            Vendor::Intel => "Intel Gaudi",
            Vendor::Unknown => "unknown",
        }
    }
}

/// One serving layout, as `plan` or `serving` chose it: what the commands are made from.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchLayout {
    /// The model's name, for the heading (`Llama-3.1-70B`).
    pub model_name: String,
    /// The checkpoint's Hugging Face id (`meta-llama/Llama-3.1-70B-Instruct`); `None` prints
    /// `MODEL` to be replaced.
    pub model_id: Option<String>,
    /// The format the checkpoint stores its weights in (the workload's default weight type).
    pub checkpoint: Format,
    /// The format the layout serves the weights in.
    pub weight: Format,
    /// The format the layout keeps the KV cache in.
    pub kv: Format,
    /// The format the priced GEMMs read their activations in: with fp8 weights quantised at
    /// load, whether what was priced is the W8A8 an engine runs on a chip with fp8 math.
    pub activation: Format,
    /// Whether the chip's matrix unit computes fp8.
    pub fp8_math: bool,
    /// Tensor-parallel chips of one attention group.
    pub tp: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Expert-parallel groups of one replica (1 for a dense model).
    pub ep: u64,
    /// Whole replicas.
    pub dp: u64,
    /// The model has expert (mixture-of-experts) layers: its workload has an `ep` param.
    pub moe: bool,
    /// Sequences one replica keeps in flight (the scenario's `batch`).
    pub max_seqs: u64,
    /// Tokens one step batches at most (the workload's `max_batched_tokens`).
    pub max_batched_tokens: u64,
    /// The fraction of each chip's memory the engine may take (`--memory-utilization`).
    pub memory_utilization: f64,
    /// The chip's vendor, from its family: which engines run on it and with which flags.
    pub vendor: Vendor,
}

/// Why a layout cannot be written as commands.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LaunchError {
    /// A count (`tp`, `pp`, `ep`, `dp`, `max_seqs`, `max_batched_tokens`) of 0.
    #[error("{field} must be at least 1, got 0")]
    Zero {
        /// The count's name, as `LaunchLayout` spells it.
        field: &'static str,
    },
    /// A count past what any engine takes.
    #[error("{field} = {value} is larger than any serving engine takes (at most {max})")]
    TooLarge {
        /// The count's name, as `LaunchLayout` spells it.
        field: &'static str,
        /// The count given.
        value: u64,
        /// The largest count accepted.
        max: u64,
    },
    /// A memory utilisation outside `(0, 1]` (the value given).
    #[error("memory utilisation must be above 0 and at most 1, got {0}")]
    MemoryUtilization(f64),
    /// A model id that is not safe to paste into a command as a Hugging Face id (the id given).
    #[error(
        "model id `{0}` is not a Hugging Face id: expected letters, digits, `.`, `_`, `-` and \
         `/`, not starting with `-`"
    )]
    ModelId(String),
}

/// The engines, in the order they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// vLLM (`vllm serve`).
    Vllm,
    /// SGLang (`python -m sglang.launch_server`).
    Sglang,
    /// TensorRT-LLM (`trtllm-serve`).
    Trtllm,
}

impl Engine {
    /// Every engine, in the order they are written.
    pub const ALL: [Engine; 3] = [Engine::Vllm, Engine::Sglang, Engine::Trtllm];

    /// The engine and the version whose flags are used.
    pub fn title(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM v0.11",
            Engine::Sglang => "SGLang v0.5",
            Engine::Trtllm => "TensorRT-LLM 1.0 (trtllm-serve)",
        }
    }
}

/// One engine's command, or why there is none, with what it leaves out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineLaunch {
    /// The engine the command is for.
    pub engine: Engine,
    /// [`Engine::title`].
    pub version: &'static str,
    /// The command's words, program first; `None` where the layout does not map.
    pub argv: Option<Vec<String>>,
    /// Settings the command cannot carry, and how it differs from stepcost's layout.
    pub notes: Vec<String>,
}

/// Every engine's launch settings for one layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    /// Says that the commands are untested starting points.
    pub caveat: &'static str,
    /// One entry per engine, in [`Engine::ALL`] order.
    pub engines: Vec<EngineLaunch>,
}

/// The caveat every [`Launch`] carries: the commands are untested starting points.
pub const CAVEAT: &str = "a starting point, not a tested configuration: check every flag \
                          against the engine version you run";

/// Most chips or sequences a layout may name: beyond any real deployment, small enough that
/// products of them stay exact.
const MAX_COUNT: u64 = 1 << 24;

/// The launch settings of `layout` for every engine.
///
/// ```
/// use stepcost::internals::export::launch::{launch, write_launch, Engine, LaunchLayout, Vendor};
/// use stepcost::types::Format;
///
/// let layout = LaunchLayout {
///     model_name: "Llama-3.1-70B".into(),
///     model_id: Some("meta-llama/Llama-3.1-70B-Instruct".into()),
///     checkpoint: Format::Bf16,
///     weight: Format::Fp8,
///     kv: Format::Fp8,
///     activation: Format::Fp8,
///     fp8_math: true,
///     tp: 4, pp: 1, ep: 1, dp: 1, moe: false,
///     max_seqs: 128,
///     max_batched_tokens: 8192,
///     memory_utilization: 0.9,
///     vendor: Vendor::of_family(Some("nvidia-hopper")),
/// };
/// let settings = launch(&layout)?;
/// let vllm = &settings.engines[0];
/// assert_eq!(vllm.engine, Engine::Vllm);
/// assert!(vllm.argv.as_ref().unwrap().join(" ").contains("--quantization fp8"));
/// write_launch(&mut std::io::stdout(), &layout, &settings)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn launch(layout: &LaunchLayout) -> Result<Launch, LaunchError> {
    validate(layout)?;
    Ok(Launch {
        caveat: CAVEAT,
        engines: (Engine::ALL.iter())
            .map(|&engine| engines::render(engine, layout))
            .collect(),
    })
}

fn validate(layout: &LaunchLayout) -> Result<(), LaunchError> {
    let counts = [
        ("tp", layout.tp),
        ("pp", layout.pp),
        ("ep", layout.ep),
        ("dp", layout.dp),
        ("max_seqs", layout.max_seqs),
        ("max_batched_tokens", layout.max_batched_tokens),
    ];
    for (field, value) in counts {
        if value == 0 {
            return Err(LaunchError::Zero { field });
        }
        if value > MAX_COUNT {
            let max = MAX_COUNT;
            return Err(LaunchError::TooLarge { field, value, max });
        }
    }
    let u = layout.memory_utilization;
    if !(u > 0.0 && u <= 1.0) {
        return Err(LaunchError::MemoryUtilization(u));
    }
    if let Some(id) = &layout.model_id {
        if !is_model_id(id) {
            return Err(LaunchError::ModelId(id.clone()));
        }
    }
    Ok(())
}

/// A Hugging Face repository id (`owner/name`) or a plain relative path: safe to paste into a
/// shell unquoted, and never read as a flag.
fn is_model_id(id: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/');
    !id.is_empty() && id.len() <= 256 && !id.starts_with('-') && id.chars().all(allowed)
}

/// Writes `launch` for a terminal: per engine its command, one flag a line, and its notes.
pub fn write_launch(out: &mut dyn Write, layout: &LaunchLayout, launch: &Launch) -> io::Result<()> {
    super::style::for_terminal(out, |out| write_text(out, layout, launch))
}

fn write_text(out: &mut dyn Write, layout: &LaunchLayout, launch: &Launch) -> io::Result<()> {
    writeln!(
        out,
        "Launch settings for {} ({})",
        layout.model_name, launch.caveat
    )?;
    writeln!(out, "  layout: {}", Summary(layout))?;
    for engine in &launch.engines {
        writeln!(out)?;
        writeln!(out, "{}", engine.version)?;
        match &engine.argv {
            Some(argv) => writeln!(out, "  {}", shell_lines(argv))?,
            None => writeln!(out, "  (no command)")?,
        }
        for note in &engine.notes {
            writeln!(out, "  note: {note}")?;
        }
    }
    Ok(())
}

/// The command with each flag and its value on a line of its own, continued by ` \`; the
/// program and the model (SGLang's `--model-path` with it) stay on the first line.
fn shell_lines(argv: &[String]) -> String {
    let mut text = String::new();
    for (i, word) in argv.iter().enumerate() {
        if i > 0 {
            match word.starts_with("--") && word != "--model-path" {
                true => text.push_str(" \\\n    "),
                false => text.push(' '),
            }
        }
        text.push_str(word);
    }
    text
}

/// The layout in one line: `tp 4 x ep 1 x pp 1, dp 1; 128 sequences, ...`.
struct Summary<'a>(&'a LaunchLayout);

impl fmt::Display for Summary<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.0;
        write!(
            f,
            "tp {} x ep {} x pp {} chips a replica, dp {}; {} sequences and {} tokens a step \
             at most; weights {} (checkpoint {}), KV {}; memory {}; {} chips",
            l.tp,
            l.ep,
            l.pp,
            l.dp,
            l.max_seqs,
            l.max_batched_tokens,
            l.weight,
            l.checkpoint,
            l.kv,
            l.memory_utilization,
            l.vendor.name(),
        )
    }
}
