//! The workload file as written: serde types close to the YAML, unknown fields denied.
//! `build` turns them into a validated [`Workload`](super::Workload).

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::Collective;
use crate::base::diagnostic::{did_you_mean, Diagnostics};
use crate::base::error::Error;
use crate::base::source::Source;

/// Reads a workload or template file; an op of a kind there is none of says so in our words,
/// with the closest kind, rather than in serde's ("unknown variant").
pub(super) fn read(source: &Source) -> Result<WorkloadFile, Error> {
    source.parse().map_err(|Diagnostics(mut problems)| {
        for problem in &mut problems {
            let unknown = (problem.message.strip_prefix("unknown variant `"))
                .and_then(|rest| rest.split_once('`'))
                .map(|(kind, _)| kind.to_owned());
            if let Some(kind) = unknown {
                problem.message = format!(
                    "unknown op kind `{kind}`{}; op kinds: {}",
                    did_you_mean(&kind, OpFile::KINDS),
                    OpFile::KINDS.join(", ")
                );
            }
        }
        Error::Invalid(Diagnostics(problems))
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkloadFile {
    pub(super) name: Spanned<String>,
    /// Another workload file whose graph this one reuses with its own param values.
    pub(super) template: Option<Spanned<String>>,
    /// The vision encoder (another workload) that turns a request's images into prompt
    /// tokens, for a multimodal model: what `--images` prices.
    pub(super) vision: Option<Spanned<String>>,
    #[allow(dead_code)] // documentation for readers of the file
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) params: IndexMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) dtypes: IndexMap<String, Spanned<String>>,
    /// The weight groups a checkpoint may type apart: group name -> weight tensors and GEMMs
    /// (whose implied weight joins the group).
    #[serde(default)]
    pub(super) groups: IndexMap<String, Spanned<Vec<String>>>,
    pub(super) tokens_per_step: Option<Spanned<String>>,
    /// Positions the model attends over at most (its checkpoint's `max_position_embeddings`,
    /// extended by the RoPE scaling it ships with): a step's `context + tokens` may not pass it.
    pub(super) max_positions: Option<Spanned<f64>>,
    pub(super) sequences: Option<Spanned<String>>,
    pub(super) chips: Option<Spanned<String>>,
    pub(super) stages: Option<Spanned<String>>,
    /// Numbers every scenario must keep whole, each with why: `tp` must divide the heads it
    /// splits, as engines refuse a layout that does not.
    #[serde(default)]
    pub(super) whole: Vec<WholeFile>,
    #[serde(default)]
    pub(super) tensors: IndexMap<String, TensorFile>,
    #[serde(default)]
    pub(super) blocks: Vec<BlockFile>,
    #[serde(default)]
    pub(super) fusion: IndexMap<String, Spanned<Vec<Vec<String>>>>,
    pub(super) default_fusion: Option<Spanned<String>>,
}

/// An expression a scenario must keep whole (`heads / tp`), and why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WholeFile {
    pub(super) of: Spanned<String>,
    pub(super) why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TensorFile {
    pub(super) role: Spanned<String>,
    pub(super) shape: Spanned<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BlockFile {
    pub(super) name: Spanned<String>,
    pub(super) repeat: Option<Spanned<String>>,
    pub(super) held: Option<Spanned<String>>,
    /// `first` or `last`: the pipeline stage that alone runs the block (the embedding, the
    /// head); without it, the block's work is spread evenly over the stages.
    pub(super) stage: Option<Spanned<String>>,
    /// The block's attention is causal: `{queries, context, window}` (see `Causal`).
    pub(super) causal: Option<CausalFile>,
    #[serde(default)]
    pub(super) tensors: IndexMap<String, TensorFile>,
    pub(super) ops: Vec<OpFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CausalFile {
    pub(super) queries: Spanned<String>,
    pub(super) context: Spanned<String>,
    pub(super) window: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum OpFile {
    Gemm(GemmFile),
    Gemv(GemmFile),
    KvRead(KvReadFile),
    Elementwise(ElementwiseFile),
    Allreduce(CollectiveFile),
    Allgather(CollectiveFile),
    Reducescatter(CollectiveFile),
    Alltoall(CollectiveFile),
    Sendrecv(CollectiveFile),
    Scan(Box<ScanFile>),
}

impl OpFile {
    /// The op kinds as a file writes them (the variants' snake_case names).
    pub(super) const KINDS: [&'static str; 10] = [
        "gemm",
        "gemv",
        "kv_read",
        "elementwise",
        "allreduce",
        "allgather",
        "reducescatter",
        "alltoall",
        "sendrecv",
        "scan",
    ];

    /// The name every op has.
    pub(super) fn name(&self) -> &Spanned<String> {
        match self {
            OpFile::Gemm(g) | OpFile::Gemv(g) => &g.name,
            OpFile::KvRead(r) => &r.name,
            OpFile::Elementwise(e) => &e.name,
            OpFile::Scan(s) => &s.name,
            OpFile::Allreduce(c)
            | OpFile::Allgather(c)
            | OpFile::Reducescatter(c)
            | OpFile::Alltoall(c)
            | OpFile::Sendrecv(c) => &c.name,
        }
    }

    /// The tag the op is written under (`gemm`, `kv_read`, `allreduce`, ...).
    pub(super) fn tag(&self) -> &'static str {
        match self {
            OpFile::Gemm(_) => "gemm",
            OpFile::Gemv(_) => "gemv",
            OpFile::KvRead(_) => "kv_read",
            OpFile::Elementwise(_) => "elementwise",
            OpFile::Scan(_) => "scan",
            _ => self.collective().map_or("", |(c, _)| c.name()),
        }
    }

    /// The collective the op is, if it is one.
    pub(super) fn collective(&self) -> Option<(Collective, &CollectiveFile)> {
        Some(match self {
            OpFile::Allreduce(c) => (Collective::AllReduce, c),
            OpFile::Allgather(c) => (Collective::AllGather, c),
            OpFile::Reducescatter(c) => (Collective::ReduceScatter, c),
            OpFile::Alltoall(c) => (Collective::AllToAll, c),
            OpFile::Sendrecv(c) => (Collective::SendRecv, c),
            _ => return None,
        })
    }

    /// The names the op reads (`of:`), and the sizes it reads of some (`reads:`), for the
    /// kinds that take them.
    pub(super) fn of_and_reads(
        &self,
    ) -> (&Spanned<Names>, Option<&IndexMap<String, Spanned<String>>>) {
        match self {
            OpFile::Gemm(g) | OpFile::Gemv(g) => (&g.of, None),
            OpFile::KvRead(r) => (&r.of, Some(&r.reads)),
            OpFile::Elementwise(e) => (&e.of, Some(&e.reads)),
            OpFile::Scan(s) => (&s.of, Some(&s.reads)),
            OpFile::Allreduce(c)
            | OpFile::Allgather(c)
            | OpFile::Reducescatter(c)
            | OpFile::Alltoall(c)
            | OpFile::Sendrecv(c) => (&c.of, None),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CollectiveFile {
    pub(super) name: Spanned<String>,
    pub(super) of: Spanned<Names>,
    pub(super) elements: Spanned<String>,
    pub(super) group: Spanned<String>,
    /// The chips the group is laid over, when its members are not neighbours (`tp * ep` for
    /// one chip of each of `ep` tensor-parallel groups): where it crosses scale-up domains.
    pub(super) span: Option<Spanned<String>>,
    pub(super) algorithm: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Names {
    One(String),
    Many(Vec<String>),
}

impl Names {
    pub(super) fn list(&self) -> Vec<&str> {
        match self {
            Names::One(s) => vec![s.as_str()],
            Names::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GemmFile {
    pub(super) name: Spanned<String>,
    pub(super) of: Spanned<Names>,
    pub(super) m: Option<Spanned<String>>,
    pub(super) n: Spanned<String>,
    pub(super) k: Spanned<String>,
    pub(super) batch: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KvReadFile {
    pub(super) name: Spanned<String>,
    pub(super) of: Spanned<Names>,
    pub(super) flops: Option<Spanned<String>>,
    pub(super) out: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) reads: IndexMap<String, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ElementwiseFile {
    pub(super) name: Spanned<String>,
    pub(super) of: Spanned<Names>,
    pub(super) elements: Option<Spanned<String>>,
    pub(super) flops_per_element: Spanned<String>,
    pub(super) out: Option<Spanned<String>>,
    pub(super) out_role: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) reads: IndexMap<String, Spanned<String>>,
}

/// A state-space scan (Mamba-2's SSD): `sequences` sequences of `tokens` new tokens through
/// `heads` heads of `head_dim` channels, each with a `state`-wide recurrent state per channel
/// whose input and output projections (B, C) are shared by the heads of each of `groups`
/// groups; the chunked kernel works in chunks of `chunk` tokens; `rule: gated_delta` makes it a
/// gated delta rule's recurrence (Gated DeltaNet) instead.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScanFile {
    pub(super) name: Spanned<String>,
    pub(super) of: Spanned<Names>,
    pub(super) sequences: Spanned<String>,
    pub(super) tokens: Spanned<String>,
    pub(super) heads: Spanned<String>,
    pub(super) head_dim: Spanned<String>,
    pub(super) state: Spanned<String>,
    pub(super) groups: Spanned<String>,
    pub(super) chunk: Spanned<String>,
    /// The recurrence: `mamba2` (the default) or `gated_delta`.
    pub(super) rule: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) reads: IndexMap<String, Spanned<String>>,
}
