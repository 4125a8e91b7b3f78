//! Weight groups (`groups:`): which weight tensors and GEMMs' implied weights a checkpoint may
//! store in a format of their own (`embed`, `attention`, `ffn`, `experts`).

use std::collections::HashMap;

use super::Builder;
use crate::base::types::WeightGroup;
use crate::core::workload::file::WorkloadFile;
use crate::core::workload::{Op, Ref, Tensor};

impl Builder {
    /// Name -> group from the file's `groups:`, with a problem for an unknown group or a name
    /// listed twice.
    pub(super) fn weight_groups(&mut self, file: &WorkloadFile) -> HashMap<String, WeightGroup> {
        let mut groups = HashMap::new();
        for (key, names) in &file.groups {
            let field = format!("groups.{key}");
            let group = match key.parse::<WeightGroup>() {
                Ok(g) => g,
                Err(e) => {
                    self.problem(self.at(field, names), e);
                    continue;
                }
            };
            for name in &names.value {
                if let Some(other) = groups.insert(name.clone(), group) {
                    let message = format!(
                        "`{name}` is in two weight groups, `{}` and `{key}`",
                        other.name()
                    );
                    self.problem(self.at(field.as_str(), names), message);
                }
            }
        }
        groups
    }

    /// Checks that every grouped name is a weight tensor or a GEMM whose weight is implied.
    pub(super) fn check_groups(
        &mut self,
        file: &WorkloadFile,
        names: &indexmap::IndexMap<String, Ref>,
        tensors: &[Tensor],
        ops: &[Op],
    ) {
        for (key, list) in &file.groups {
            for name in &list.value {
                let fits = match names.get(name) {
                    Some(Ref::Tensor(t)) => tensors[*t].role() == crate::base::dtype::Role::Weight,
                    Some(Ref::Op(i)) => ops.get(*i).is_some_and(|op| {
                        op.inputs
                            .iter()
                            .any(|x| matches!(x.source, Ref::OwnWeight(_)))
                    }),
                    _ => false,
                };
                if !fits {
                    let known = names.get(name).is_some();
                    let message = if known {
                        format!("`{name}` is neither a weight tensor nor a GEMM with an implied weight, so it has no weight to group")
                    } else {
                        format!(
                            "unknown weight tensor or GEMM `{name}`{}",
                            self.did_you_mean(name, names.keys().map(String::as_str))
                        )
                    };
                    self.problem(self.at(format!("groups.{key}"), list), message);
                }
            }
        }
    }
}
