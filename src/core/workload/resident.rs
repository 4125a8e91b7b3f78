//! What a scenario keeps resident in HBM: weights, KV cache and recurrent state.

use super::{Evaluation, Ref, Stage, Tensor, Workload};
use crate::base::dtype::Role;
use crate::base::param::ScenarioParam;
use crate::base::types::Types;

impl Workload {
    /// Bytes of weights and KV cache resident in HBM under `types`: declared tensors and
    /// implied GEMM weights, each block's counted once per repeat it holds.
    pub fn resident_bytes(&self, ev: &Evaluation, types: &Types) -> (f64, f64) {
        (self.weight_bytes(ev, types), self.kv_bytes(ev, types))
    }

    /// [`Workload::resident_bytes`], with the weights kept from the last call on `ev` while
    /// its evaluations since changed nothing they depend on (a sweep over batch or context),
    /// and the part of the KV cache whose shape does not follow `batch` (a mixed step's
    /// prefilling sequences): weights, KV cache, that part of it.
    pub(crate) fn resident_bytes_kept(
        &self,
        ev: &mut Evaluation,
        types: &Types,
    ) -> (f64, f64, f64) {
        let weight = match ev.weight_memo {
            Some((kept, stages, bytes)) if kept == *types && stages == ev.stages => bytes,
            _ => {
                let bytes = self.weight_bytes(ev, types);
                ev.weight_memo = Some((*types, ev.stages, bytes));
                bytes
            }
        };
        let (kv, apart) = self.kv_split(ev, types);
        (weight, kv, apart)
    }

    fn held(&self, ev: &Evaluation, block: Option<usize>) -> f64 {
        block.map_or(1.0, |b| ev.held[b])
    }

    /// The weights one chip holds: with pipeline stages, those every stage holds a share of
    /// and the larger of what the first stage alone holds (the embedding) and the last (the
    /// head); with one stage, all of them.
    fn weight_bytes(&self, ev: &Evaluation, types: &Types) -> f64 {
        // Spread over the stages, the first's alone, the last's alone.
        let mut weight = [0.0; 3];
        let place = |stage: Option<Stage>| match stage {
            None => 0,
            Some(Stage::First) => 1,
            Some(Stage::Last) => 2,
        };
        for (t, tensor) in self.tensors.iter().enumerate() {
            if tensor.role() == Role::Weight {
                let format = types.get(tensor.slot);
                let bytes = ev.tensors[t] * format.bytes() * self.held(ev, tensor.block);
                weight[place(self.tensor_stage(t))] += bytes;
            }
        }
        for op in &self.ops {
            for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
                if matches!(input.source, Ref::OwnWeight(_)) {
                    let format = types.get(input.slot);
                    let bytes = ev.reads[slot] * format.bytes() * self.held(ev, Some(op.block));
                    weight[place(self.blocks[op.block].stage)] += bytes;
                }
            }
        }
        let [spread, first, last] = weight;
        match ev.stages > 1.0 {
            true => spread + first.max(last),
            false => spread + first + last,
        }
    }

    /// The one stage that holds tensor `t`: its block's, or for a tensor of the whole step,
    /// the stage of every block whose ops read it, when they agree.
    fn tensor_stage(&self, t: usize) -> Option<Stage> {
        if let Some(b) = self.tensors[t].block {
            return self.blocks[b].stage;
        }
        let mut readers = (self.ops.iter())
            .filter(|op| (op.inputs.iter()).any(|i| i.source == Ref::Tensor(t)))
            .map(|op| self.blocks[op.block].stage);
        let first = readers.next().flatten()?;
        readers.all(|s| s == Some(first)).then_some(first)
    }

    fn kv_bytes(&self, ev: &Evaluation, types: &Types) -> f64 {
        self.kv_split(ev, types).0
    }

    /// The recurrent state's bytes (tensors of the file's role `state`), and those of them in
    /// tensors whose shape does not follow `batch`.
    pub(crate) fn state_split(&self, ev: &Evaluation, types: &Types) -> (f64, f64) {
        self.split(ev, types, |t| t.recurrent)
    }

    /// The KV cache's bytes, and those of them in tensors whose shape does not follow
    /// `batch` (see [`Workload::tensors_following_batch`]).
    fn kv_split(&self, ev: &Evaluation, types: &Types) -> (f64, f64) {
        self.split(ev, types, |t| t.role() == Role::Kv)
    }

    /// The bytes one chip holds of the tensors `pick` takes, and those of them in tensors
    /// whose shape does not follow `batch`.
    fn split(&self, ev: &Evaluation, types: &Types, pick: impl Fn(&Tensor) -> bool) -> (f64, f64) {
        let (mut all, mut apart) = (0.0, 0.0);
        for (t, tensor) in self.tensors.iter().enumerate() {
            if pick(tensor) {
                let bytes =
                    ev.tensors[t] * types.get(tensor.slot).bytes() * self.held(ev, tensor.block);
                all += bytes;
                if !self.follows_batch[t] {
                    apart += bytes;
                }
            }
        }
        (all, apart)
    }

    /// For each tensor, whether its shape reads the `batch` param, itself or through params
    /// whose defaults read it (`batch_local: batch / ep`); none where there is no `batch`.
    pub(super) fn tensors_following_batch(&self) -> Vec<bool> {
        let mut follows = vec![false; self.params.len()];
        if let Some(b) = self.param(ScenarioParam::Batch) {
            // Each param comes after those its default reads.
            for &i in &self.eval_order {
                follows[i] = i == b || self.params[i].default.params().iter().any(|&d| follows[d]);
            }
        }
        (self.tensors.iter())
            .map(|t| {
                (t.shape.iter()).any(|d| self.exprs[d.id].params().iter().any(|&p| follows[p]))
            })
            .collect()
    }
}
