//! What ops read by name: the declared tensors (the step's, then each block's), and the one
//! namespace of tensors and ops, with the role of each op's output.

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use super::{valid_name, Builder, NAME_RULE};
use crate::base::dtype::Role;
use crate::base::types::{Slot, WeightGroup};
use crate::core::workload::file::{BlockFile, OpFile, TensorFile, WorkloadFile};
use crate::core::workload::{Field, Ref, Tensor};

/// Every name an op may read (tensors, then ops; names are unique across both), and the role
/// of each op's output.
pub(super) struct Scope<'t> {
    pub(super) tensors: &'t [Tensor],
    pub(super) names: IndexMap<String, Ref>,
    pub(super) out_roles: Vec<Role>,
    /// The weight group of each op's implied weight (by op index).
    pub(super) own_groups: Vec<Option<WeightGroup>>,
}

impl Scope<'_> {
    /// Where the format of what `source` holds comes from.
    pub(super) fn slot(&self, source: Ref) -> Slot {
        match source {
            Ref::Tensor(t) => self.tensors[t].slot,
            Ref::Op(j) => self.out_roles[j].into(),
            Ref::OwnWeight(j) => Slot::Weight(self.own_groups[j]),
        }
    }
}

impl Builder {
    /// The tensors of the whole step, then each block's, in file order.
    pub(super) fn declared_tensors(&mut self, file: &WorkloadFile) -> Vec<Tensor> {
        let mut tensors = Vec::new();
        self.tensors("", &file.tensors, None, &mut tensors);
        for (b, block) in file.blocks.iter().enumerate() {
            self.tensors(
                &format!("blocks[{b}]."),
                &block.tensors,
                Some(b),
                &mut tensors,
            );
        }
        tensors
    }

    fn tensors(
        &mut self,
        prefix: &str,
        files: &IndexMap<String, TensorFile>,
        block: Option<usize>,
        out: &mut Vec<Tensor>,
    ) {
        for (name, file) in files {
            let field = format!("{prefix}tensors.{name}");
            if !valid_name(name) {
                self.problem(
                    self.at(format!("{field}.role"), &file.role),
                    format!("`{name}` is not a valid name ({NAME_RULE})"),
                );
            }
            // `state` is a role of tensors only: a recurrent state, stored as an activation.
            let recurrent = file.role.value.trim() == "state";
            let role = match recurrent {
                true => Some(Role::Activation),
                false => self.tensor_role(&format!("{field}.role"), &file.role),
            };
            if file.shape.value.is_empty() {
                self.problem(
                    self.at(format!("{field}.shape"), &file.shape),
                    "a shape needs at least one dimension",
                );
            }
            let shape: Option<Vec<Field>> = file
                .shape
                .value
                .iter()
                .enumerate()
                .map(|(i, d)| self.expr(&format!("{field}.shape[{i}]"), d))
                .collect::<Vec<_>>()
                .into_iter()
                .collect();
            if let (Some(role), Some(shape)) = (role, shape) {
                let slot = match role {
                    Role::Weight => Slot::Weight(self.groups.get(name).copied()),
                    other => other.into(),
                };
                out.push(Tensor {
                    name: name.clone(),
                    slot,
                    shape,
                    block,
                    recurrent,
                });
            }
        }
    }

    /// A tensor's role; `None` after recording a problem that names every role a tensor may
    /// have.
    fn tensor_role(&mut self, field: &str, value: &Spanned<String>) -> Option<Role> {
        let role = value.value.parse::<Role>().ok();
        if role.is_none() {
            self.problem(
                self.at(field, value),
                format!(
                    "unknown role `{}`; expected one of weight, activation, kv, state",
                    value.value
                ),
            );
        }
        role
    }

    /// The names of `tensors` and of the ops of `blocks`, each checked to be valid and unique.
    pub(super) fn scope<'t>(&mut self, tensors: &'t [Tensor], blocks: &[BlockFile]) -> Scope<'t> {
        let mut names: IndexMap<String, Ref> = IndexMap::new();
        for (i, t) in tensors.iter().enumerate() {
            if names.insert(t.name.clone(), Ref::Tensor(i)).is_some() {
                let origin = t
                    .shape
                    .first()
                    .map(|f| f.origin.clone())
                    .unwrap_or_default();
                self.problem(origin, format!("tensor `{}` is declared twice", t.name));
            }
        }
        let mut out_roles = Vec::new();
        let mut own_groups = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            for (o, op) in block.ops.iter().enumerate() {
                let field = format!("blocks[{b}].ops[{o}].{}", op.tag());
                self.name_op(&field, op, Ref::Op(out_roles.len()), &mut names);
                out_roles.push(self.out_role(&field, op));
                own_groups.push(self.groups.get(&op.name().value).copied());
            }
        }
        Scope {
            tensors,
            names,
            out_roles,
            own_groups,
        }
    }

    /// Adds the name of `op` (at `field`) to `names`.
    fn name_op(
        &mut self,
        field: &str,
        op: &OpFile,
        source: Ref,
        names: &mut IndexMap<String, Ref>,
    ) {
        let name = op.name();
        if !valid_name(&name.value) {
            self.problem(
                self.at(format!("{field}.name"), name),
                format!("`{}` is not a valid op name ({NAME_RULE})", name.value),
            );
        }
        if names.insert(name.value.clone(), source).is_some() {
            self.problem(
                self.at(format!("{field}.name"), name),
                format!(
                    "`{}` is already the name of a tensor or op; names must be unique",
                    name.value
                ),
            );
        }
    }

    /// The role of the output of `op` (at `field`): an activation unless it says otherwise.
    fn out_role(&mut self, field: &str, op: &OpFile) -> Role {
        let role = match op {
            OpFile::Elementwise(e) => match &e.out_role {
                Some(r) => self.role(&format!("{field}.out_role"), r),
                None => None,
            },
            _ => None,
        };
        role.unwrap_or(Role::Activation)
    }
}
