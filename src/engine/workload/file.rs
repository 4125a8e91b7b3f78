//! The workload file as written: serde types close to the YAML, unknown fields denied.
//! `build` turns them into a validated [`Workload`](super::Workload).

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WorkloadFile {
    pub(super) name: Spanned<String>,
    /// Another workload file whose graph this one reuses with its own param values.
    pub(super) template: Option<Spanned<String>>,
    #[allow(dead_code)] // documentation for readers of the file
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) params: IndexMap<String, Spanned<String>>,
    #[serde(default)]
    pub(super) dtypes: IndexMap<String, Spanned<String>>,
    pub(super) tokens_per_step: Option<Spanned<String>>,
    pub(super) sequences: Option<Spanned<String>>,
    pub(super) chips: Option<Spanned<String>>,
    pub(super) stages: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) tensors: IndexMap<String, TensorFile>,
    #[serde(default)]
    pub(super) blocks: Vec<BlockFile>,
    #[serde(default)]
    pub(super) fusion: IndexMap<String, Spanned<Vec<Vec<String>>>>,
    pub(super) default_fusion: Option<Spanned<String>>,
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
    #[serde(default)]
    pub(super) tensors: IndexMap<String, TensorFile>,
    pub(super) ops: Vec<OpFile>,
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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CollectiveFile {
    pub(super) name: Spanned<String>,
    pub(super) of: Spanned<Names>,
    pub(super) elements: Spanned<String>,
    pub(super) group: Spanned<String>,
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
