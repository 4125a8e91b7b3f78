//! An op's inputs: the names it reads resolved to tensors or ops, the sizes it reads of some
//! (`reads:`), a GEMM's two matrices (its weight implied when it names one input), and the
//! check that an elementwise op can take its size from its first input.

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use super::names::Scope;
use super::Builder;
use crate::base::diagnostic::Origin;
use crate::base::types::Slot;
use crate::core::workload::file::OpFile;
use crate::core::workload::{Input, ReadSize, Ref};

impl Builder {
    /// The inputs of `op` (at `prefix`), op number `index`; `None` after recording a problem.
    pub(super) fn inputs(
        &mut self,
        prefix: &str,
        op: &OpFile,
        index: usize,
        scope: &Scope,
    ) -> Option<Vec<Input>> {
        let no_reads = IndexMap::new();
        let (of, reads) = op.of_and_reads();
        let origin = self.at(format!("{prefix}.of"), of);
        let list = of.value.list();
        if list.is_empty() {
            self.problem(origin, "an op needs at least one input");
            return None;
        }
        let (mut inputs, ok) = self.resolve(&list, index, scope, &origin);
        let reads = reads.unwrap_or(&no_reads);
        if !self.read_sizes(prefix, reads, &list, &mut inputs, ok) {
            return None;
        }
        let ok = match op {
            OpFile::Gemm(_) | OpFile::Gemv(_) => {
                self.gemm_inputs(op, index, scope, &mut inputs, origin)
            }
            OpFile::Elementwise(e) if e.elements.is_none() => {
                self.first_input_sized(index, &inputs, list[0], origin)
            }
            _ => true,
        };
        ok.then_some(inputs)
    }

    /// The tensors or ops `list` names, each read whole, and whether every name resolved
    /// (an op reading its own output does not).
    fn resolve(
        &mut self,
        list: &[&str],
        index: usize,
        scope: &Scope,
        origin: &Origin,
    ) -> (Vec<Input>, bool) {
        let mut inputs = Vec::new();
        let mut ok = true;
        for name in list {
            let source = match scope.names.get(*name) {
                Some(&Ref::Op(j)) if j == index => {
                    self.problem(origin.clone(), format!("op `{name}` reads its own output"));
                    ok = false;
                    continue;
                }
                Some(source) => *source,
                None => {
                    ok = false;
                    let message = format!(
                        "unknown tensor or op `{name}`{}",
                        self.did_you_mean(name, scope.names.keys().map(String::as_str))
                    );
                    self.problem(origin.clone(), message);
                    continue;
                }
            };
            inputs.push(Input {
                source,
                size: ReadSize::Whole,
                slot: scope.slot(source),
            });
        }
        (inputs, ok)
    }

    /// Sets the sizes `reads` gives (while all is `ok` so far, `inputs` aligned with `list`),
    /// and checks that each names an input; whether all is still `ok`.
    fn read_sizes(
        &mut self,
        prefix: &str,
        reads: &IndexMap<String, Spanned<String>>,
        list: &[&str],
        inputs: &mut [Input],
        mut ok: bool,
    ) -> bool {
        for (name, value) in reads {
            let field = format!("{prefix}.reads.{name}");
            match list.iter().position(|n| n == name) {
                Some(i) if ok => {
                    let size = self.expr(&field, value).map(ReadSize::Explicit);
                    ok &= size.is_some();
                    inputs[i].size = size.unwrap_or(ReadSize::Whole);
                }
                Some(_) => {}
                None => {
                    ok = false;
                    let message = format!(
                        "`{name}` is not one of this op's inputs ({})",
                        list.join(", ")
                    );
                    self.problem(self.at(field, value), message);
                }
            }
        }
        ok
    }

    /// Sizes a GEMM's left and right matrices: its two inputs, or its one input and its own
    /// weight; false after recording a problem (more than two inputs).
    fn gemm_inputs(
        &mut self,
        op: &OpFile,
        index: usize,
        scope: &Scope,
        inputs: &mut Vec<Input>,
        origin: Origin,
    ) -> bool {
        if inputs.len() > 2 {
            let message = format!(
                "a {} reads one input (its weight is implied) or two, found {}",
                op.tag(),
                inputs.len()
            );
            self.problem(origin, message);
            return false;
        }
        inputs[0].size = ReadSize::GemmLeft;
        if inputs.len() == 1 {
            inputs.push(Input {
                source: Ref::OwnWeight(index),
                size: ReadSize::GemmRight,
                slot: Slot::Weight(scope.own_groups[index]),
            });
        }
        inputs[1].size = ReadSize::GemmRight;
        true
    }

    /// Whether an elementwise op without `elements` can take its size from its first input
    /// (`first`): not when that is the whole output of an op defined later.
    fn first_input_sized(
        &mut self,
        index: usize,
        inputs: &[Input],
        first: &str,
        origin: Origin,
    ) -> bool {
        if let (Ref::Op(j), ReadSize::Whole) = (inputs[0].source, &inputs[0].size) {
            if j > index {
                let message = format!(
                    "the first input `{first}` is an op defined later, so `elements` cannot default to its size; write `elements:`"
                );
                self.problem(origin, message);
                return false;
            }
        }
        true
    }
}
