//! The serving software a step runs under (expected mode only): host work and how much of
//! it the GPU hides, graph capture, all-reduce choice, admission and batching limits, prompt
//! buckets, what the `fp8`/`fp4`/`int4` choices expand to, the kernel path of each GEMM
//! format, the cost of a quantised KV cache, the speculative and pipeline schedules.
//!
//! These are the pricing-side terms. An engine file (`engines/*.yaml`) is read into them;
//! roofline mode reads none of them, so every engine prices alike there.

use crate::base::error::Error;

mod file;
mod load;

pub use load::{builtin, builtin_ids, resolve};

/// The library a kernel runs in. Expected-mode fractions are fitted per chip family and
/// path; an engine chooses its paths; a measured row names its path (or its engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelPath {
    /// NVIDIA's cuBLASLt (and cuBLAS over it).
    Cublaslt,
    /// CUTLASS kernels an engine builds in (scaled fp8/fp4 GEMMs, grouped MoE GEMMs).
    Cutlass,
    /// DeepSeek's DeepGEMM (fp8 block-scaled GEMMs, grouped MoE GEMMs).
    Deepgemm,
    /// Marlin (weight-only int4/fp8 GEMMs, W4A16 / W8A16).
    Marlin,
    /// Machete (weight-only mixed-input GEMMs on Hopper).
    Machete,
    /// AMD's hipBLASLt.
    Hipblaslt,
    /// AMD's AITER kernels (and Composable Kernel under them).
    Aiter,
    /// Triton kernels (fused MoE, a framework's own GEMMs).
    Triton,
    /// A framework's generic linear layer under a timing loop (eager PyTorch `F.linear`).
    FrameworkLinear,
    /// XLA's compiled kernels (TPU).
    Xla,
    /// AWS Neuron's compiled kernels (Trainium).
    Neuron,
}

impl KernelPath {
    /// Every path, in the order they are written.
    pub const ALL: [KernelPath; 11] = [
        KernelPath::Cublaslt,
        KernelPath::Cutlass,
        KernelPath::Deepgemm,
        KernelPath::Marlin,
        KernelPath::Machete,
        KernelPath::Hipblaslt,
        KernelPath::Aiter,
        KernelPath::Triton,
        KernelPath::FrameworkLinear,
        KernelPath::Xla,
        KernelPath::Neuron,
    ];

    /// The path's name, as files and columns write it.
    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Cublaslt => "cublaslt",
            KernelPath::Cutlass => "cutlass",
            KernelPath::Deepgemm => "deepgemm",
            KernelPath::Marlin => "marlin",
            KernelPath::Machete => "machete",
            KernelPath::Hipblaslt => "hipblaslt",
            KernelPath::Aiter => "aiter",
            KernelPath::Triton => "triton",
            KernelPath::FrameworkLinear => "framework-linear",
            KernelPath::Xla => "xla",
            KernelPath::Neuron => "neuron",
        }
    }

    /// The path a name written in a file or a column names.
    pub fn from_name(name: &str) -> Option<KernelPath> {
        KernelPath::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Host work per step that the chip may wait for: scheduling, preparing inputs, launching or
/// replaying the graph, sampling, processing outputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostWork {
    /// Work each step pays whatever its batch, in seconds.
    pub step_s: f64,
    /// Work each sequence in the step adds, in seconds.
    pub sequence_s: f64,
    /// Share of the host work hidden behind the GPU's previous step (0: none, the chip waits
    /// for all of it; 1: all, as far as the GPU step is longer), in [0, 1].
    pub overlap: f64,
}

/// How kernels are launched: a captured graph replays back to back; a batch beyond the
/// largest captured size runs eagerly, each kernel paying a launch from the host.
#[derive(Debug, Clone, PartialEq)]
pub struct Launches {
    /// Batch sizes with a captured graph, ascending; a batch runs in the smallest one that
    /// holds it (padded to it). Empty: every step is eager.
    pub graph_batch_sizes: Vec<u64>,
    /// Host time to launch one kernel eagerly, in seconds.
    pub eager_launch_s: f64,
}

/// An all-reduce algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllReduceAlgorithm {
    /// Every rank reads every other rank's buffer once (a custom one-shot kernel): one step's
    /// latency, `(n - 1) x message` bytes into each rank.
    OneShot,
    /// Reduce-scatter then all-gather over peer buffers (a custom two-shot kernel): two
    /// steps, `2 (n - 1) / n x message` per rank.
    TwoShot,
    /// NCCL's ring: `2 (n - 1)` steps, `2 (n - 1) / n x message` per rank.
    Ring,
    /// NCCL's tree: `2 log2 n` steps.
    Tree,
}

/// One rule of an engine's all-reduce choice: the algorithm for messages up to a size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllReduceRule {
    /// Largest message (bytes per rank) the rule takes; `None`: any size.
    pub up_to_bytes: Option<f64>,
    /// Chips in the domain the rule takes at most (custom kernels need peer access among
    /// all ranks; usually 8); `None`: any count.
    pub up_to_ranks: Option<u64>,
    /// The algorithm used.
    pub algorithm: AllReduceAlgorithm,
}

/// How requests are admitted into the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Each request reserves its whole prompt + output in the cache on admission
    /// (TensorRT-LLM's GUARANTEED_NO_EVICT).
    ReserveWhole,
    /// Pages are allocated as tokens arrive; a full cache preempts the newest request (vLLM,
    /// SGLang).
    OnDemand,
}

/// The scheduler's limits and the cache's page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchLimits {
    /// Most sequences in one step (`max_num_seqs`, `max_batch_size`).
    pub max_sequences: u64,
    /// Most tokens in one step (`max_num_batched_tokens`, `max_num_tokens`).
    pub max_batched_tokens: u64,
    /// Tokens per KV-cache page.
    pub block_tokens: u64,
    /// Whether a long prompt is split across steps beside decodes (chunked prefill).
    pub chunked_prefill: bool,
}

/// What an engine runs when `plan` or `serving` chooses a type by name (never what a named
/// `--dtype` means: that stays as written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantChoices {
    /// The `fp8` choice multiplies in fp8 (W8A8, dynamic per-token activation scales) on
    /// chips with fp8 math; W8A16 where false or where the chip has none.
    pub fp8_activations: bool,
    /// The `fp8` choice also stores the KV cache in fp8.
    pub fp8_kv_cache: bool,
}

/// The GEMM path an engine runs for each weight format it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmPaths {
    /// 16-bit weights.
    pub bf16: KernelPath,
    /// fp8 weights (W8A8 or W8A16).
    pub fp8: KernelPath,
    /// fp4 weights (NVFP4, MXFP4).
    pub fp4: KernelPath,
    /// int4 weights (W4A16: AWQ, GPTQ).
    pub int4: KernelPath,
}

/// The extra work a decode attention kernel does to read a quantised KV cache: widening
/// each element back to the compute type before the dot products.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvDequant {
    /// Vector operations per cached element read from an fp8 cache.
    pub fp8_ops_per_element: f64,
    /// Vector operations per cached element read from an int4 or fp4 cache.
    pub int4_ops_per_element: f64,
}

/// One speculative-decoding cycle as the engine runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecCycle {
    /// The draft's host work is paid once per cycle, not on each draft step.
    pub draft_host_once: bool,
    /// An MLA model's verify step of `k + 1` tokens runs the absorbed (decode) form.
    pub absorbed_mla_verify: bool,
}

/// How a pipeline of stages is kept busy in serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineSchedule {
    /// Micro-batches in flight; `None`: as many as there are stages.
    pub micro_batches: Option<u64>,
    /// Whether the pipeline drains between iterations (a flush, as a training step does).
    pub flush: bool,
}

/// The family of launch commands `plan` and `serving` write for an engine's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LaunchFamily {
    /// `vllm serve` (vLLM and the builds of it for other chips).
    Vllm,
    /// `python -m sglang.launch_server`.
    Sglang,
    /// `trtllm-serve`.
    Trtllm,
    /// No launch command is written for it.
    #[default]
    None,
}

impl LaunchFamily {
    /// Every family, in the order launch settings print them.
    pub const ALL: [LaunchFamily; 4] = [
        LaunchFamily::Vllm,
        LaunchFamily::Sglang,
        LaunchFamily::Trtllm,
        LaunchFamily::None,
    ];

    /// As engine files write it.
    pub fn name(self) -> &'static str {
        match self {
            LaunchFamily::Vllm => "vllm",
            LaunchFamily::Sglang => "sglang",
            LaunchFamily::Trtllm => "trtllm",
            LaunchFamily::None => "none",
        }
    }
}

/// An engine as pricing reads it: every term validated by [`Engine::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct Engine {
    id: String,
    name: String,
    terms: EngineTerms,
    launch: LaunchFamily,
}

/// Every term an engine sets; see each type. Checked by [`Engine::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct EngineTerms {
    /// Host work; `None`: the chip file's fitted `host_step`/`host_sequence`, of which
    /// `host_overlap` is hidden.
    pub host: Option<HostWork>,
    /// Share of the chip's fitted host work hidden behind the GPU's previous step when `host`
    /// is `None` (an engine whose host terms are not fitted yet still says whether it
    /// overlaps: SGLang's overlap scheduler), in [0, 1]; `host.overlap` applies otherwise.
    pub host_overlap: f64,
    /// The default `engine_host` share (an explicit `--set engine_host=` wins).
    pub engine_host: f64,
    /// Graph capture and eager launches.
    pub launches: Launches,
    /// The all-reduce's algorithm by message size and rank count, first rule that admits the
    /// message; empty: NCCL's ring for every message.
    pub all_reduce: Vec<AllReduceRule>,
    /// How requests enter the KV cache.
    pub admission: Admission,
    /// Scheduler limits.
    pub limits: BatchLimits,
    /// Lengths a prompt is padded up to (ascending); empty: no padding.
    pub prompt_buckets: Vec<u64>,
    /// What `plan`'s and `serving`'s type choices expand to.
    pub quant: QuantChoices,
    /// The GEMM path per weight format.
    pub gemm_paths: GemmPaths,
    /// The cost of reading a quantised KV cache.
    pub kv_dequant: KvDequant,
    /// Speculative decoding's cycle.
    pub spec: SpecCycle,
    /// The pipeline's schedule in serving.
    pub pipeline: PipelineSchedule,
    /// The fusion plan the engine runs, by the workload's plan name; `None`: the workload's
    /// default.
    pub fusion: Option<String>,
}

impl Engine {
    /// An engine with its id (`vllm`, `vllm@0.7`), product name and terms, refused with a
    /// message naming the first term out of its range.
    pub fn new(id: &str, name: &str, terms: EngineTerms) -> Result<Engine, Error> {
        check_id(id)?;
        check_terms(&terms)?;
        Ok(Engine {
            id: id.to_owned(),
            name: name.to_owned(),
            terms,
            launch: LaunchFamily::None,
        })
    }

    /// The same engine, its launch commands written as `launch`'s.
    pub fn with_launch(mut self, launch: LaunchFamily) -> Engine {
        self.launch = launch;
        self
    }

    /// The family of launch commands written for it.
    pub fn launch(&self) -> LaunchFamily {
        self.launch
    }

    /// The engine's id (`vllm`, `vllm@0.7`), as `--engine` and the `engine` column write it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The product name and version (`vLLM 0.11 (V1)`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every term.
    pub fn terms(&self) -> &EngineTerms {
        &self.terms
    }
}

#[cfg(test)]
impl EngineTerms {
    /// Terms that price as the chip file's constants do (no engine): the fitted host work
    /// with none hidden, a graph for every batch, NCCL's choice, pages on demand, no buckets,
    /// free KV widening, a flushed pipeline. Tests change one term at a time from here.
    pub(crate) fn neutral() -> EngineTerms {
        EngineTerms {
            host: None,
            host_overlap: 0.0,
            engine_host: 1.0,
            launches: Launches {
                graph_batch_sizes: vec![1 << 40],
                eager_launch_s: 0.0,
            },
            all_reduce: Vec::new(),
            admission: Admission::OnDemand,
            limits: BatchLimits {
                max_sequences: 1 << 40,
                max_batched_tokens: 1 << 40,
                block_tokens: 16,
                chunked_prefill: true,
            },
            prompt_buckets: Vec::new(),
            quant: QuantChoices {
                fp8_activations: false,
                fp8_kv_cache: false,
            },
            gemm_paths: GemmPaths {
                bf16: KernelPath::Cublaslt,
                fp8: KernelPath::Cublaslt,
                fp4: KernelPath::Cutlass,
                int4: KernelPath::Marlin,
            },
            kv_dequant: KvDequant {
                fp8_ops_per_element: 0.0,
                int4_ops_per_element: 0.0,
            },
            spec: SpecCycle {
                draft_host_once: false,
                absorbed_mla_verify: false,
            },
            pipeline: PipelineSchedule {
                micro_batches: Some(1),
                flush: true,
            },
            fusion: None,
        }
    }

    /// An engine of these terms, shared as a scenario holds it.
    pub(crate) fn engine(self) -> std::sync::Arc<Engine> {
        std::sync::Arc::new(Engine::new("test", "Test engine", self).unwrap())
    }
}

/// `name` or `name@version`: lower-case letters, digits and `-`, a version of digits and dots.
fn check_id(id: &str) -> Result<(), Error> {
    let (name, version) = id.split_once('@').unwrap_or((id, ""));
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let version_ok = (version.is_empty() && !id.contains('@'))
        || (!version.is_empty() && version.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    if name_ok && version_ok {
        Ok(())
    } else {
        Err(Error::value(format!(
            "engine id `{id}`: expected a name of lower-case letters, digits and `-`, \
             optionally `@` and a version of digits and dots (`vllm@0.7`)"
        )))
    }
}

fn check_terms(t: &EngineTerms) -> Result<(), Error> {
    let share = |name: &str, v: f64| {
        if (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(Error::value(format!(
                "engine `{name}` is {v}: expected 0 to 1"
            )))
        }
    };
    let seconds = |name: &str, v: f64| {
        if v.is_finite() && (0.0..=1.0).contains(&v) {
            Ok(())
        } else {
            Err(Error::value(format!(
                "engine `{name}` is {v} s: expected 0 to 1 s"
            )))
        }
    };
    if let Some(h) = t.host {
        seconds("host.step", h.step_s)?;
        seconds("host.sequence", h.sequence_s)?;
        share("host.overlap", h.overlap)?;
    }
    share("host_overlap", t.host_overlap)?;
    share("engine_host", t.engine_host)?;
    seconds("launches.eager", t.launches.eager_launch_s)?;
    let ascending = |name: &str, v: &[u64]| {
        if v.windows(2).all(|w| w[0] < w[1]) && v.first().is_none_or(|&f| f > 0) {
            Ok(())
        } else {
            Err(Error::value(format!(
                "engine `{name}`: expected positive sizes in ascending order"
            )))
        }
    };
    ascending("launches.graph_batch_sizes", &t.launches.graph_batch_sizes)?;
    ascending("prompt_buckets", &t.prompt_buckets)?;
    let l = t.limits;
    if l.max_sequences == 0 || l.max_batched_tokens == 0 || l.block_tokens == 0 {
        return Err(Error::value(
            "engine `limits`: max_sequences, max_batched_tokens and block_tokens must be above 0",
        ));
    }
    for (name, v) in [
        ("kv_dequant.fp8", t.kv_dequant.fp8_ops_per_element),
        ("kv_dequant.int4", t.kv_dequant.int4_ops_per_element),
    ] {
        if !(v.is_finite() && (0.0..=1000.0).contains(&v)) {
            return Err(Error::value(format!(
                "engine `{name}` is {v}: expected 0 to 1000 operations per element"
            )));
        }
    }
    if t.pipeline.micro_batches == Some(0) {
        return Err(Error::value(
            "engine `pipeline.micro_batches` must be above 0",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms() -> EngineTerms {
        EngineTerms {
            host: None,
            host_overlap: 0.0,
            engine_host: 1.0,
            launches: Launches {
                graph_batch_sizes: vec![1, 2, 4, 8],
                eager_launch_s: 5e-6,
            },
            all_reduce: Vec::new(),
            admission: Admission::OnDemand,
            limits: BatchLimits {
                max_sequences: 256,
                max_batched_tokens: 8192,
                block_tokens: 16,
                chunked_prefill: true,
            },
            prompt_buckets: Vec::new(),
            quant: QuantChoices {
                fp8_activations: true,
                fp8_kv_cache: false,
            },
            gemm_paths: GemmPaths {
                bf16: KernelPath::Cublaslt,
                fp8: KernelPath::Cutlass,
                fp4: KernelPath::Cutlass,
                int4: KernelPath::Marlin,
            },
            kv_dequant: KvDequant {
                fp8_ops_per_element: 1.0,
                int4_ops_per_element: 2.0,
            },
            spec: SpecCycle {
                draft_host_once: true,
                absorbed_mla_verify: true,
            },
            pipeline: PipelineSchedule {
                micro_batches: None,
                flush: false,
            },
            fusion: None,
        }
    }

    #[test]
    fn ids_and_ranges_are_checked() {
        assert!(Engine::new("vllm", "vLLM", terms()).is_ok());
        assert!(Engine::new("vllm@0.7", "vLLM V0", terms()).is_ok());
        for bad in ["", "VLLM", "vllm@", "vllm@v1", "a b", "@0.7"] {
            assert!(Engine::new(bad, "x", terms()).is_err(), "{bad}");
        }
        let mut t = terms();
        t.engine_host = 1.5;
        assert!(Engine::new("vllm", "vLLM", t).is_err());
        let mut t = terms();
        t.launches.graph_batch_sizes = vec![4, 2];
        assert!(Engine::new("vllm", "vLLM", t).is_err());
    }

    #[test]
    fn paths_round_trip_their_names() {
        for p in KernelPath::ALL {
            assert_eq!(KernelPath::from_name(p.name()), Some(p));
        }
        assert_eq!(KernelPath::from_name("cuBLAS"), None);
    }
}
