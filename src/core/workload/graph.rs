//! The op graph and how fusion plans cut it: which ops read which, the order dependencies
//! allow (and the cycle that forbids one), and the kernels a plan's groups make, with what
//! each kernel reads from HBM and writes back.

use super::{Collective, Op, Ref};
use crate::base::types::Slot;

/// One launch: a single op, or a fused group of ops from one block.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// The op's name, or the fused ops' names joined by `+`.
    pub name: String,
    /// What the kernel is: its one op's kind, or `Fused`.
    pub kind: KernelKind,
    /// The block its ops belong to (index into `Workload::blocks`).
    pub block: usize,
    /// Op indices, in file order.
    pub members: Vec<usize>,
    /// What crosses the boundary inward, one entry per source read (a source read by several
    /// members is read once, at the largest size any member reads).
    pub reads: Vec<KernelRead>,
    /// Members whose output is written to HBM: read outside the kernel, or by nobody.
    pub writes: Vec<usize>,
}

/// One source a kernel reads from HBM.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRead {
    /// The role (and weight group) of what is read, which decides its format.
    pub slot: Slot,
    /// Whether the source is an output of the kernel just before this one (so it may still
    /// be in the on-chip cache).
    pub after_write: bool,
    /// Read slots of the members that read this source.
    pub slots: Vec<usize>,
}

/// A named way to group ops into kernels; ops in no group run alone.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionPlan {
    /// The plan's name, as `--fusion` names it; `none` runs every op alone.
    pub name: String,
    /// Groups of op indices; each group is one kernel.
    pub groups: Vec<Vec<usize>>,
    /// Every kernel of the step under this plan, in the order of their first op.
    pub kernels: Vec<Kernel>,
}

/// Orders nodes so each follows its dependencies, or returns a cycle (nodes in order).
pub(super) fn topological_order(deps: &[&[usize]]) -> Result<Vec<usize>, Vec<usize>> {
    let mut order = Vec::with_capacity(deps.len());
    let mut state = vec![0u8; deps.len()]; // 0 new, 1 on the path, 2 done
    for start in 0..deps.len() {
        if state[start] != 0 {
            continue;
        }
        let mut path = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&dep) = deps[node].get(*next) {
                *next += 1;
                match state[dep] {
                    0 => {
                        state[dep] = 1;
                        path.push((dep, 0));
                    }
                    1 => {
                        let from = path.iter().position(|(n, _)| *n == dep).unwrap_or(0);
                        return Err(path[from..].iter().map(|(n, _)| *n).collect());
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                order.push(node);
                path.pop();
            }
        }
    }
    Ok(order)
}

/// A cycle among ops, with each group of `groups` taken as one node: for each node on the
/// cycle, in order, the op it stands for (a group's first member); `None` when there is none.
pub(super) fn op_cycle(ops: &[Op], groups: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut node_of: Vec<usize> = (0..ops.len()).collect();
    for (g, members) in groups.iter().enumerate() {
        for &m in members {
            node_of[m] = ops.len() + g;
        }
    }
    // deps[n]: the nodes whose output node n reads.
    let mut deps = vec![Vec::new(); ops.len() + groups.len()];
    for (i, op) in ops.iter().enumerate() {
        for input in &op.inputs {
            if let Ref::Op(j) = input.source {
                if node_of[j] != node_of[i] {
                    deps[node_of[i]].push(node_of[j]);
                }
            }
        }
    }
    let deps: Vec<&[usize]> = deps.iter().map(Vec::as_slice).collect();
    let cycle = topological_order(&deps).err()?;
    let op = |n: usize| {
        if n < ops.len() {
            n
        } else {
            groups[n - ops.len()][0]
        }
    };
    Some(cycle.into_iter().map(op).collect())
}

/// For each op, the ops that read its output.
pub(super) fn consumers(ops: &[Op]) -> Vec<Vec<usize>> {
    let mut consumers = vec![Vec::new(); ops.len()];
    for (i, op) in ops.iter().enumerate() {
        for input in &op.inputs {
            if let Ref::Op(j) = input.source {
                if !consumers[j].contains(&i) {
                    consumers[j].push(i);
                }
            }
        }
    }
    consumers
}

/// Cuts the ops into kernels: each group one kernel, every other op alone.
pub(super) fn kernels(ops: &[Op], groups: &[Vec<usize>], consumers: &[Vec<usize>]) -> Vec<Kernel> {
    let mut group_of = vec![None; ops.len()];
    for (g, members) in groups.iter().enumerate() {
        for &m in members {
            group_of[m] = Some(g);
        }
    }
    let mut emitted = vec![false; groups.len()];
    let mut kernels: Vec<Kernel> = Vec::new();
    for (op, group) in group_of.iter().enumerate() {
        let members = match *group {
            Some(g) if emitted[g] => continue,
            Some(g) => {
                emitted[g] = true;
                groups[g].clone()
            }
            None => vec![op],
        };
        let previous = kernels.last().map(|k| k.members.as_slice());
        let kernel = kernel(ops, members, consumers, previous);
        kernels.push(kernel);
    }
    kernels
}

/// The kernel of `members`, launched right after the kernel of `previous`.
fn kernel(
    ops: &[Op],
    members: Vec<usize>,
    consumers: &[Vec<usize>],
    previous: Option<&[usize]>,
) -> Kernel {
    let name = members
        .iter()
        .map(|&i| ops[i].name.as_str())
        .collect::<Vec<_>>()
        .join("+");
    Kernel {
        name,
        kind: if members.len() > 1 {
            KernelKind::Fused
        } else {
            ops[members[0]].kind.kernel_kind()
        },
        block: ops[members[0]].block,
        reads: boundary_reads(ops, &members, previous),
        writes: boundary_writes(&members, consumers),
        members,
    }
}

/// What the members read from outside the kernel, one entry per source, in the order of
/// first reading.
fn boundary_reads(ops: &[Op], members: &[usize], previous: Option<&[usize]>) -> Vec<KernelRead> {
    let mut reads: Vec<(Ref, KernelRead)> = Vec::new();
    for &i in members {
        for (input, slot) in ops[i].inputs.iter().zip(ops[i].slots.clone()) {
            if matches!(input.source, Ref::Op(j) if members.contains(&j)) {
                continue; // made and used inside the kernel: never touches HBM
            }
            match reads.iter_mut().find(|(s, _)| *s == input.source) {
                Some((_, read)) => read.slots.push(slot),
                None => {
                    let after_write = matches!(
                        (input.source, previous),
                        (Ref::Op(j), Some(p)) if p.contains(&j)
                    );
                    reads.push((
                        input.source,
                        KernelRead {
                            slot: input.slot,
                            after_write,
                            slots: vec![slot],
                        },
                    ))
                }
            }
        }
    }
    reads.into_iter().map(|(_, read)| read).collect()
}

/// The members whose output goes to HBM: read outside the kernel, or by nobody.
fn boundary_writes(members: &[usize], consumers: &[Vec<usize>]) -> Vec<usize> {
    members
        .iter()
        .copied()
        .filter(|&i| consumers[i].is_empty() || consumers[i].iter().any(|c| !members.contains(c)))
        .collect()
}

/// What a kernel is, as rows and pictures name it: one op's kind, or a fused group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// A single GEMM op.
    Gemm,
    /// A single GEMV op: a GEMM of few rows (a decode step's matrix-vector products).
    Gemv,
    /// A single KV-cache read (attention over the cached context).
    KvRead,
    /// A single elementwise op: vector work.
    Elementwise,
    /// A single state-space scan.
    Scan,
    /// Several ops run as one kernel.
    Fused,
    /// A single collective, on the interconnect; never fused.
    Collective(Collective),
}

impl KernelKind {
    /// The name in the `kind` column.
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Gemm => "gemm",
            KernelKind::Gemv => "gemv",
            KernelKind::KvRead => "kv_read",
            KernelKind::Elementwise => "elementwise",
            KernelKind::Scan => "scan",
            KernelKind::Fused => "fused",
            KernelKind::Collective(c) => c.name(),
        }
    }
}

impl serde::Serialize for KernelKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::topological_order;

    #[test]
    fn orders_dependencies_first_and_finds_cycles() {
        let deps: [&[usize]; 3] = [&[1], &[2], &[]];
        assert_eq!(topological_order(&deps), Ok(vec![2, 1, 0]));
        let cyclic: [&[usize]; 3] = [&[1], &[2], &[0]];
        assert_eq!(topological_order(&cyclic), Err(vec![0, 1, 2]));
    }
}
