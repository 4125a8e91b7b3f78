//! The engine file as written: serde types that mirror the YAML field for field (unknown
//! fields denied), with each value's place in the file kept for diagnostics. Quantities stay
//! text here; `load` parses and validates them.

use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EngineFile {
    pub(super) name: Spanned<String>,
    /// The launch-command family `plan` and `serving` write for it (`vllm`, `sglang`,
    /// `trtllm`, `none`).
    pub(super) launch: Spanned<String>,
    /// Host work; absent: the chip file's fitted terms.
    pub(super) host: Option<HostFile>,
    /// Share of the host work hidden behind the GPU when `host` is absent.
    pub(super) host_overlap: Option<Spanned<f64>>,
    pub(super) engine_host: Option<Spanned<f64>>,
    pub(super) graphs: GraphsFile,
    #[serde(default)]
    pub(super) all_reduce: Vec<AllReduceFile>,
    pub(super) admission: Spanned<String>,
    pub(super) limits: LimitsFile,
    pub(super) prompt_buckets: Option<Spanned<String>>,
    pub(super) quant: QuantFile,
    pub(super) gemm_paths: GemmPathsFile,
    pub(super) kv_dequant: KvDequantFile,
    pub(super) spec: SpecFile,
    pub(super) pipeline: PipelineFile,
    pub(super) fusion: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HostFile {
    /// `derived` (from documentation) or `fitted` (from measured rows).
    pub(super) basis: Spanned<String>,
    pub(super) step: Spanned<String>,
    pub(super) sequence: Spanned<String>,
    pub(super) overlap: Spanned<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GraphsFile {
    /// Captured batch sizes as an axis is written (`1, 2, 4, 8..=256:+8`); `none` for none.
    pub(super) sizes: Spanned<String>,
    pub(super) eager_launch: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AllReduceFile {
    pub(super) up_to: Option<Spanned<String>>,
    pub(super) ranks: Option<Spanned<u64>>,
    pub(super) algorithm: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsFile {
    pub(super) max_sequences: Spanned<u64>,
    pub(super) max_batched_tokens: Spanned<u64>,
    pub(super) block_tokens: Spanned<u64>,
    pub(super) chunked_prefill: Spanned<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QuantFile {
    pub(super) fp8_activations: Spanned<bool>,
    pub(super) fp8_kv_cache: Spanned<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GemmPathsFile {
    pub(super) bf16: Spanned<String>,
    pub(super) fp8: Spanned<String>,
    pub(super) fp4: Spanned<String>,
    pub(super) int4: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KvDequantFile {
    pub(super) fp8: Spanned<f64>,
    pub(super) int4: Spanned<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SpecFile {
    pub(super) draft_host_once: Spanned<bool>,
    pub(super) absorbed_mla_verify: Spanned<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PipelineFile {
    /// Micro-batches in flight, or `stages` (as many as there are stages).
    pub(super) micro_batches: Spanned<String>,
    pub(super) flush: Spanned<bool>,
}
