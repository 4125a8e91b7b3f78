//! A workload's parameter counts: the weight elements a model holds, and those one token's
//! decode step reads. Counted from the graph itself (declared weight tensors and the weights
//! GEMMs imply), so a model file and its count can never disagree.

use super::{Ref, Workload};
use crate::base::dtype::Role;
use crate::base::error::Error;
use crate::base::param::ScenarioParam;

/// Weight elements (parameters) of a workload at its defaults, unsplit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParameterCounts {
    /// Every weight element one replica holds: what `weight_bytes` counts, over bytes per
    /// element.
    pub total: f64,
    /// The weight elements a decode step of one sequence reads: a mixture-of-experts layer's
    /// `top_k` routed experts, not all of them; the input embedding's one row, not the table.
    /// A weight that several ops read counts once.
    pub active: f64,
}

impl Workload {
    /// The parameter counts at the file's defaults with one sequence decoding one token
    /// (`batch = tokens = 1`) and no parallelism (`tp = pp = ep = dp = 1`), where the
    /// workload has those params.
    pub fn parameter_counts(&self) -> Result<ParameterCounts, Error> {
        let one = [
            ScenarioParam::Batch,
            ScenarioParam::Tokens,
            ScenarioParam::Tp,
            ScenarioParam::Pp,
            ScenarioParam::Ep,
            ScenarioParam::Dp,
        ];
        let overrides: Vec<(usize, f64)> = (one.into_iter())
            .filter_map(|p| self.param(p).map(|i| (i, 1.0)))
            .collect();
        let mut ev = self.new_evaluation();
        self.evaluate(&overrides, &mut ev)?;
        let held = |block: Option<usize>| block.map_or(1.0, |b| ev.held[b]);
        let runs = |block: usize| ev.repeats[block] as f64;
        let mut total = 0.0;
        let mut active = 0.0;
        // Elements read of each declared tensor in the step, all repeats together.
        let mut read = vec![0.0; self.tensors.len()];
        for op in &self.ops {
            for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
                let elements = ev.reads[slot];
                match input.source {
                    Ref::OwnWeight(_) => {
                        total += elements * held(Some(op.block));
                        active += elements * runs(op.block);
                    }
                    Ref::Tensor(t) => read[t] += elements * runs(op.block),
                    Ref::Op(_) => {}
                }
            }
        }
        for (t, tensor) in self.tensors.iter().enumerate() {
            if tensor.role() != Role::Weight {
                continue;
            }
            total += ev.tensors[t] * held(tensor.block);
            let whole = ev.tensors[t] * tensor.block.map_or(1.0, runs);
            active += read[t].min(whole);
        }
        Ok(ParameterCounts { total, active })
    }
}
