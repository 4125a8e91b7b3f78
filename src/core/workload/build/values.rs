//! Which format each activation value is stored in: `activation` where a GEMM with a weight
//! reads it (a quantised GEMM input), `output` otherwise. W8A8 serving (vLLM, SGLang,
//! TensorRT-LLM) quantises only the inputs of its linear layers: a norm or SiLU-and-mul in
//! front of one writes the quantised values itself (vLLM's fused RMSNorm + quant and
//! SiLU-and-mul + quant kernels), GEMMs and attention write bf16, and the residual stream,
//! rope and softmax stay in bf16 (docs/sources.md, "fp8 serving"). With 16-bit activations
//! both formats are the same and nothing here changes a number.

use crate::base::dtype::Role;
use crate::base::types::Slot;
use crate::core::workload::{Op, OpKind, Ref, Tensor};

/// Sets each op's output slot and each input's slot as the module says, then the operand
/// slots that decide compute types. A GEMM with a weight that reads another GEMM's output
/// (o_proj after attention) reads the quantised copy a separate kernel makes
/// (`price::kernel`'s activation quantisation); a recurrent state keeps its slot.
pub(super) fn assign(tensors: &[Tensor], ops: &mut [Op]) {
    let mut op_feeds_gemm = vec![false; ops.len()];
    let mut tensor_feeds_gemm = vec![false; tensors.len()];
    for op in ops.iter().filter(|op| op.multiplies_weight()) {
        for input in &op.inputs {
            match input.source {
                Ref::Op(j) => op_feeds_gemm[j] = true,
                Ref::Tensor(t) => tensor_feeds_gemm[t] = true,
                Ref::OwnWeight(_) => {}
            }
        }
    }
    let out_slots: Vec<Slot> = (ops.iter().enumerate())
        .map(|(j, op)| match op.out_role {
            Role::Activation if computes_output(&op.kind) || !op_feeds_gemm[j] => Slot::Output,
            role => role.into(),
        })
        .collect();
    for (op, out_slot) in ops.iter_mut().zip(&out_slots) {
        op.out_slot = *out_slot;
        let quantised = op.multiplies_weight();
        for input in op.inputs.iter_mut().filter(|i| i.slot == Slot::Activation) {
            input.slot = match input.source {
                _ if quantised => Slot::Activation,
                Ref::Op(j) => out_slots[j],
                Ref::Tensor(t) if !tensors[t].recurrent && !tensor_feeds_gemm[t] => Slot::Output,
                _ => Slot::Activation,
            };
        }
        op.operands = [false; 8];
        for slot in op.operand_slots().collect::<Vec<_>>() {
            op.operands[slot.index()] = true;
        }
    }
}

impl Op {
    /// Whether the op multiplies a weight on the matrix unit (a linear layer, not attention).
    pub fn multiplies_weight(&self) -> bool {
        self.kind.matrix_unit() && (self.inputs.iter()).any(|i| i.slot.role() == Role::Weight)
    }
}

/// Whether an op computes its output on the matrix unit (a GEMM, attention over the KV cache,
/// a scan), which writes it unquantised; a collective passes its input's format on.
fn computes_output(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Gemm { .. } | OpKind::KvRead { .. } | OpKind::Scan(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::workload::Workload;

    #[test]
    fn linear_layers_read_activations_and_everything_else_is_an_output() {
        let w = Workload::named("llama-3.1-8b").unwrap();
        let op = |name: &str| w.ops.iter().find(|o| o.name == name).unwrap();
        // written quantised for the linear layer that reads them
        assert_eq!(op("attn_norm").out_slot, Slot::Activation);
        assert_eq!(op("silu_mul").out_slot, Slot::Activation);
        // GEMM outputs, and values only attention and the residual read
        for name in ["qkv", "o_proj", "rope", "softmax", "attn_residual"] {
            assert_eq!(op(name).out_slot, Slot::Output, "{name}");
        }
        // the residual stream is read as an output; o_proj reads attention's output quantised
        assert_eq!(op("attn_norm").inputs[0].slot, Slot::Output);
        assert_eq!(op("o_proj").inputs[0].slot, Slot::Activation);
        // attention multiplies rope's output in the activations' type, the KV cache in its own
        let scores = op("scores");
        assert!(scores.operands[Slot::Activation.index()] && scores.operands[Slot::Kv.index()]);
        assert!(!scores.operands[Slot::Output.index()]);
    }
}
