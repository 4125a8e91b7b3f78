//! The work of one op in a scenario: its FLOPs, output and reads, from its kind's sizes.

use super::{
    Collective, Evaluation, Field, GemmDims, Op, OpKind, ReadSize, Ref, ScanDims, ScanSizes,
    Workload,
};
use crate::base::error::Error;

/// What one op does in a scenario: its FLOPs and output elements, and for a GEMM the
/// elements of its left and right matrices (zero for other ops).
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    flops: f64,
    out: f64,
    left: f64,
    right: f64,
}

impl Workload {
    /// The share of op `op`'s counted work its block's causal mask leaves (1 outside a causal
    /// block); `last` keeps the last block's, which every op of a block shares in an
    /// evaluation (the expressions it reads are settled before any op).
    pub(super) fn causal_share(
        &self,
        op: &Op,
        ev: &Evaluation,
        last: &mut Option<(usize, f64)>,
    ) -> f64 {
        match *last {
            Some((block, share)) if block == op.block => share,
            _ => {
                let causal = self.blocks[op.block].causal.as_ref();
                let share = causal.map_or(1.0, |c| c.share_in(ev));
                *last = Some((op.block, share));
                share
            }
        }
    }

    /// One op's FLOPs, output elements and reads (those of whole op outputs are settled
    /// after every op, as NaN until then), its block's causal mask leaving `causal` of it.
    pub(super) fn evaluate_op(
        &self,
        index: usize,
        op: &Op,
        ev: &mut Evaluation,
        causal: f64,
    ) -> Result<(), Error> {
        let work = match &op.kind {
            OpKind::Gemm { m, n, k, batch, .. } => {
                self.gemm_work(index, [m, n, k], batch.as_ref(), ev)?
            }
            OpKind::KvRead { flops, out } => Work {
                flops: self.amount(flops.as_ref(), ev)?,
                out: self.amount(out.as_ref(), ev)?,
                ..Work::default()
            },
            OpKind::Elementwise {
                elements,
                flops_per_element,
                out,
            } => self.elementwise_work(op, elements.as_ref(), flops_per_element, out, ev)?,
            OpKind::Scan(dims) => self.scan_work(dims, ev)?,
            OpKind::Collective {
                collective,
                elements,
                group,
                span,
                ..
            } => self.collective_work(index, *collective, elements, (group, span.as_ref()), ev)?,
        };
        if !work.flops.is_finite() || !work.out.is_finite() {
            return Err(self.problem(
                &op.origin,
                format!("op `{}`: its FLOPs or output size overflow", op.name),
            ));
        }
        ev.flops[index] = work.flops;
        ev.out_elements[index] = work.out;
        ev.causal[index] = causal;
        for (input, slot) in op.inputs.iter().zip(op.slots.clone()) {
            ev.reads[slot] = match (&input.size, input.source) {
                (ReadSize::GemmLeft, _) => work.left,
                (ReadSize::GemmRight, _) => work.right,
                // May be 0: a read of an op whose block vanished in this scenario (a mixed
                // step's prefill ops, without prompt tokens).
                (ReadSize::Explicit(field), _) => self.amount(Some(field), ev)?,
                (ReadSize::Whole, Ref::Tensor(t)) => ev.tensors[t],
                (ReadSize::Whole, _) => f64::NAN, // an op's output: settled after all ops
            };
        }
        Ok(())
    }

    /// `batch` products of `[m x k] x [k x n]`; records the GEMM's sizes in `ev`.
    fn gemm_work(
        &self,
        index: usize,
        [m, n, k]: [&Field; 3],
        batch: Option<&Field>,
        ev: &mut Evaluation,
    ) -> Result<Work, Error> {
        let (m, n, k) = (self.dim(m, ev)?, self.dim(n, ev)?, self.dim(k, ev)?);
        let batch = match batch {
            Some(b) => self.dim(b, ev)?,
            None => 1.0,
        };
        ev.gemm[index] = GemmDims {
            count: batch,
            m,
            n,
            k,
        };
        // Each matrix once: A is [m x k], B is [k x n], C is [m x n], per batch entry.
        Ok(Work {
            flops: 2.0 * batch * m * n * k,
            out: batch * m * n,
            left: batch * m * k,
            right: batch * k * n,
        })
    }

    /// `elements` (by default, the size of the first input) times `flops_per_element` of
    /// vector work, writing `out` elements (by default, as many as it works on).
    fn elementwise_work(
        &self,
        op: &Op,
        elements: Option<&Field>,
        flops_per_element: &Field,
        out: &Option<Field>,
        ev: &Evaluation,
    ) -> Result<Work, Error> {
        let n = match elements {
            Some(e) => self.dim(e, ev)?,
            // `build` made sure the first input is a tensor or an earlier op.
            None => match op.inputs[0].source {
                Ref::Tensor(t) => ev.tensors[t],
                Ref::Op(j) => ev.out_elements[j],
                Ref::OwnWeight(_) => 0.0,
            },
        };
        let out = match out {
            Some(_) => self.amount(out.as_ref(), ev)?,
            None => n,
        };
        let per_element = ev.exprs[flops_per_element.id];
        if per_element < 0.0 {
            return Err(self.problem(
                &flops_per_element.origin,
                format!("`{per_element}` FLOPs per element must not be negative"),
            ));
        }
        Ok(Work {
            flops: n * per_element,
            out,
            ..Work::default()
        })
    }

    /// A state-space scan's FLOPs and output, from its sizes (see [`ScanSizes`]).
    fn scan_work(&self, d: &ScanDims, ev: &Evaluation) -> Result<Work, Error> {
        let sizes = ScanSizes {
            sequences: self.dim(&d.sequences, ev)?,
            tokens: self.dim(&d.tokens, ev)?,
            heads: self.dim(&d.heads, ev)?,
            head_dim: self.dim(&d.head_dim, ev)?,
            state: self.dim(&d.state, ev)?,
            groups: self.dim(&d.groups, ev)?,
            chunk: self.dim(&d.chunk, ev)?,
            rule: d.rule,
        };
        Ok(Work {
            flops: sizes.flops(),
            out: sizes.out_elements(),
            ..Work::default()
        })
    }

    /// A collective of `elements` over a whole number of chips, laid over a whole number at
    /// least that large; records both in `ev`.
    fn collective_work(
        &self,
        index: usize,
        collective: Collective,
        elements: &Field,
        (group, span): (&Field, Option<&Field>),
        ev: &mut Evaluation,
    ) -> Result<Work, Error> {
        let n = self.dim(elements, ev)?;
        let chips = self.dim(group, ev)?;
        let spread = span.map_or(Ok(chips), |s| self.dim(s, ev))?;
        for (field, value, what) in [
            (group, chips, "a group is"),
            (span.unwrap_or(group), spread, "a span is"),
        ] {
            if value.fract() != 0.0 {
                return Err(self.problem(
                    &field.origin,
                    format!(
                        "`{}` is {value}; {what} a whole number of chips",
                        self.exprs[field.id]
                    ),
                ));
            }
        }
        if spread < chips {
            let field = span.unwrap_or(group);
            return Err(self.problem(
                &field.origin,
                format!(
                    "`{}` is {spread}, fewer chips than the group's {chips}; a span holds its group",
                    self.exprs[field.id]
                ),
            ));
        }
        ev.group[index] = chips;
        ev.span[index] = spread;
        let out = match collective {
            Collective::ReduceScatter => n / chips,
            _ => n,
        };
        Ok(Work {
            out,
            ..Work::default()
        })
    }
}
