//! The compiled form: a tree flattened to a postfix program of [`Instr`] over a fixed-size
//! stack, and its evaluation with a slice of param values.

use super::parse::{BinOp, Func, Node};
use super::{EvalError, Expr};

/// One step of a compiled expression, run on a small stack.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Instr {
    Const(f64),
    Param(usize),
    Neg,
    Bin(BinOp),
    Ceil,
    Floor,
    Pow,
    ExpertsTouched,
    RanksTouched,
    /// Fold the top `n` values with min or max.
    Min(usize),
    Max(usize),
}

/// Deepest stack a compiled expression may need.
pub(super) const MAX_STACK: usize = 24;

/// Expected distinct experts reached when `n` tokens each pick `k` of `e` experts uniformly.
fn experts_touched(e: f64, k: f64, n: f64) -> f64 {
    if e <= 0.0 || k <= 0.0 || n <= 0.0 {
        return 0.0;
    }
    e * (1.0 - (1.0 - (k / e).min(1.0)).powf(n))
}

/// Expected distinct ranks one token reaches when its `k` of `e` experts (distinct, uniformly
/// chosen) are spread evenly over `r` ranks: `r (1 - C(e - e/r, k) / C(e, k))`, the chance that
/// a rank holds none of them being the ratio of the binomials (docs/sources.md, X2). Evaluated
/// as a product of `k` ratios, so that no factorial overflows; `k` is rounded to a count. Past
/// 4096 factors the rest are taken at the last ratio (they only fall, and the product is then
/// far below any figure a report prints), so an absurd `k` costs no time.
fn ranks_touched(e: f64, k: f64, r: f64) -> f64 {
    if e <= 0.0 || k <= 0.0 || r <= 0.0 {
        return 0.0;
    }
    let others = e - e / r; // experts on the other ranks
    let k = k.round().min(e);
    let mut none_here = 1.0;
    let mut i = 0.0;
    while i < k && none_here > 0.0 {
        let ratio = ((others - i) / (e - i)).max(0.0);
        if i >= 4096.0 {
            none_here *= ratio.powf(k - i);
            break;
        }
        none_here *= ratio;
        i += 1.0;
    }
    r * (1.0 - none_here)
}

/// A tree compiled: its program, the params it reads (sorted, without repeats) and the deepest
/// stack it needs.
pub(super) struct Compiled {
    pub program: Vec<Instr>,
    pub params: Vec<usize>,
    pub max_depth: usize,
}

/// Compiles `node` to postfix.
pub(super) fn compile(node: &Node) -> Compiled {
    let mut compiled = Compiled {
        program: Vec::new(),
        params: Vec::new(),
        max_depth: 0,
    };
    let mut depth = 0;
    compiled.emit(node, &mut depth);
    compiled.params.sort_unstable();
    compiled.params.dedup();
    compiled
}

impl Compiled {
    /// Emits `node` in postfix order, tracking the stack `depth` it needs.
    fn emit(&mut self, node: &Node, depth: &mut usize) {
        match node {
            Node::Num(x) => {
                self.program.push(Instr::Const(*x));
                *depth += 1;
            }
            Node::Param(i) => {
                self.params.push(*i);
                self.program.push(Instr::Param(*i));
                *depth += 1;
            }
            Node::Neg(a) => {
                self.emit(a, depth);
                self.program.push(Instr::Neg);
            }
            Node::Bin(op, a, b) => {
                self.emit(a, depth);
                self.emit(b, depth);
                self.program.push(Instr::Bin(*op));
                *depth -= 1;
            }
            Node::Call(func, args) => {
                for a in args {
                    self.emit(a, depth);
                }
                self.program.push(match func {
                    Func::Ceil => Instr::Ceil,
                    Func::Floor => Instr::Floor,
                    Func::Pow => Instr::Pow,
                    Func::ExpertsTouched => Instr::ExpertsTouched,
                    Func::RanksTouched => Instr::RanksTouched,
                    Func::Min => Instr::Min(args.len()),
                    Func::Max => Instr::Max(args.len()),
                });
                *depth -= args.len() - 1;
            }
        }
        self.max_depth = self.max_depth.max(*depth);
    }
}

impl Expr {
    /// Evaluates the expression with `values[i]` for param `i`; the result is finite.
    pub fn eval(&self, values: &[f64]) -> Result<f64, EvalError> {
        let mut stack = [0.0f64; MAX_STACK];
        let mut top = 0; // number of values on the stack
        for instr in &self.program {
            match *instr {
                Instr::Const(x) => {
                    stack[top] = x;
                    top += 1;
                }
                Instr::Param(i) => {
                    stack[top] = values[i];
                    top += 1;
                }
                Instr::Neg => stack[top - 1] = -stack[top - 1],
                Instr::Ceil => stack[top - 1] = stack[top - 1].ceil(),
                Instr::Floor => stack[top - 1] = stack[top - 1].floor(),
                Instr::Pow => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].powf(stack[top]);
                }
                Instr::ExpertsTouched => {
                    top -= 2;
                    stack[top - 1] = experts_touched(stack[top - 1], stack[top], stack[top + 1]);
                }
                Instr::RanksTouched => {
                    top -= 2;
                    stack[top - 1] = ranks_touched(stack[top - 1], stack[top], stack[top + 1]);
                }
                Instr::Bin(op) => {
                    let (a, b) = (stack[top - 2], stack[top - 1]);
                    top -= 1;
                    stack[top - 1] = match op {
                        BinOp::Add => a + b,
                        BinOp::Sub => a - b,
                        BinOp::Mul => a * b,
                        BinOp::Div if b == 0.0 => {
                            return Err(EvalError::DivisionByZero(self.text.clone()))
                        }
                        BinOp::Div => a / b,
                    };
                }
                Instr::Min(n) | Instr::Max(n) => {
                    let args = &stack[top - n..top];
                    let v = if matches!(instr, Instr::Min(_)) {
                        args.iter().copied().fold(f64::INFINITY, f64::min)
                    } else {
                        args.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    };
                    top -= n - 1;
                    stack[top - 1] = v;
                }
            }
        }
        let v = stack[0];
        if v.is_finite() {
            Ok(v)
        } else {
            Err(EvalError::NotFinite(self.text.clone()))
        }
    }
}
