//! The fusion plans: each named plan's groups checked (known ops, each in one group, no
//! collective fused, one block per group, no cycle through an outside op) and cut into
//! kernels, after the plan `none`; and the plan used by default.

use std::collections::HashSet;

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use super::{valid_name, Builder, Model, NAME_RULE};
use crate::base::diagnostic::Origin;
use crate::core::workload::file::WorkloadFile;
use crate::core::workload::graph::{consumers, kernels};
use crate::core::workload::{FusionPlan, Op, OpKind, Ref};

/// A plan being checked: its name, where it is written, and the ops it may name.
struct Plan<'a> {
    name: &'a str,
    origin: Origin,
    names: &'a IndexMap<String, Ref>,
    ops: &'a [Op],
}

impl Builder {
    /// Every plan, `none` (no fusion) first, then the valid plans of `files`.
    pub(super) fn fusion_plans(
        &mut self,
        files: &IndexMap<String, Spanned<Vec<Vec<String>>>>,
        names: &IndexMap<String, Ref>,
        ops: &[Op],
    ) -> Vec<FusionPlan> {
        let consumers = consumers(ops);
        let mut fusion_plans = vec![FusionPlan {
            name: "none".into(),
            groups: Vec::new(),
            kernels: kernels(ops, &[], &consumers),
        }];
        for (plan_name, groups) in files {
            if let Some(groups) = self.fusion_plan(plan_name, groups, names, ops) {
                fusion_plans.push(FusionPlan {
                    name: plan_name.clone(),
                    kernels: kernels(ops, &groups, &consumers),
                    groups,
                });
            }
        }
        fusion_plans
    }

    /// The groups of plan `plan_name`, each sorted; `None` for `none` or after recording a
    /// problem.
    fn fusion_plan(
        &mut self,
        plan_name: &str,
        groups: &Spanned<Vec<Vec<String>>>,
        names: &IndexMap<String, Ref>,
        ops: &[Op],
    ) -> Option<Vec<Vec<usize>>> {
        let plan = Plan {
            name: plan_name,
            origin: self.at(format!("fusion.{plan_name}"), groups),
            names,
            ops,
        };
        let before = self.problem_count();
        if !valid_name(plan_name) {
            self.problem(
                plan.origin.clone(),
                format!("`{plan_name}` is not a valid plan name ({NAME_RULE})"),
            );
        }
        let mut seen = HashSet::new();
        let mut groups_of_ops = Vec::new();
        for group in &groups.value {
            let mut members = self.group_members(&plan, group, &mut seen);
            self.check_group(&plan, group, &members);
            members.sort_unstable();
            members.dedup();
            groups_of_ops.push(members);
        }
        if plan_name == "none" {
            if !groups_of_ops.is_empty() {
                self.problem(plan.origin, "plan `none` means no fusion and must be empty");
            }
            return None;
        }
        if self.problem_count() > before {
            return None;
        }
        self.check_acyclic(ops, &groups_of_ops);
        Some(groups_of_ops)
    }

    /// The ops `group` names, in its order; `seen` gathers the ops of the plan's groups so far,
    /// to report an op in two.
    fn group_members(
        &mut self,
        plan: &Plan,
        group: &[String],
        seen: &mut HashSet<usize>,
    ) -> Vec<usize> {
        let plan_name = plan.name;
        let mut members = Vec::new();
        for op in group {
            match plan.names.get(op.as_str()) {
                Some(Ref::Op(i)) => {
                    if !seen.insert(*i) {
                        self.problem(
                            plan.origin.clone(),
                            format!("op `{op}` is in more than one group of plan `{plan_name}`"),
                        );
                    }
                    members.push(*i);
                }
                Some(_) => self.problem(
                    plan.origin.clone(),
                    format!("`{op}` is a tensor, not an op; fusion groups list ops"),
                ),
                None => {
                    let message = format!(
                        "fusion plan `{plan_name}` names unknown op `{op}`{}",
                        self.did_you_mean(op, plan.ops.iter().map(|o| o.name.as_str()))
                    );
                    self.problem(plan.origin.clone(), message);
                }
            }
        }
        members
    }

    /// Reports a group that is empty, fuses a collective, or spans blocks.
    fn check_group(&mut self, plan: &Plan, group: &[String], members: &[usize]) {
        let (plan_name, ops) = (plan.name, plan.ops);
        if group.is_empty() {
            self.problem(plan.origin.clone(), "a fusion group needs at least one op");
        }
        let collective = |i: &usize| matches!(ops[*i].kind, OpKind::Collective { .. });
        if members.len() > 1 && members.iter().any(collective) {
            self.problem(
                plan.origin.clone(),
                format!("a group of plan `{plan_name}` holds a collective; collectives run on the interconnect and are not fused"),
            );
        }
        if members
            .windows(2)
            .any(|w| ops[w[0]].block != ops[w[1]].block)
        {
            self.problem(
                plan.origin.clone(),
                format!("a group of plan `{plan_name}` spans blocks; ops fused into one kernel must repeat together"),
            );
        }
    }

    /// The index of the plan used by default: the model's choice, else the graph file's,
    /// else `none`.
    pub(super) fn default_fusion(
        &mut self,
        plans: &[FusionPlan],
        file: &WorkloadFile,
        model: Option<&Model>,
    ) -> usize {
        let model_fusion =
            model.and_then(|(src, m)| m.default_fusion.as_ref().map(|f| (Some(src), f)));
        let Some((src, name)) = model_fusion.or(file.default_fusion.as_ref().map(|f| (None, f)))
        else {
            return 0;
        };
        if let Some(i) = plans.iter().position(|p| p.name == name.value) {
            return i;
        }
        let plan_names: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
        let message = format!(
            "no fusion plan `{}`{}; plans: {}",
            name.value,
            self.did_you_mean(&name.value, plan_names.iter().copied()),
            plan_names.join(", ")
        );
        let mut origin = self.at("default_fusion", name);
        if let Some(src) = src {
            origin = origin.in_file(src);
        }
        self.problem(origin, message);
        0
    }
}
