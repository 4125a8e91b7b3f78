//! Arithmetic expressions over a workload's params: `batch * tokens`,
//! `(heads + 2 * kv_heads) * head_dim`, `max(1, ceil(context / 128))`.
//!
//! Grammar: numbers (`8192`, `1e-3`, `1_000`), param names, `+ - * /`, unary minus,
//! parentheses and the functions `min(a, b, ...)`, `max(a, b, ...)`, `ceil(x)`, `floor(x)`,
//! `pow(x, y)`, `experts_touched(E, k, n)`: the expected number of distinct experts that
//! `n` tokens routed uniformly to `k` of `E` experts each reach, `E (1 - (1 - k/E)^n)`, and
//! `ranks_touched(E, k, R)`: the expected number of ranks one token's `k` distinct experts
//! fall on when the `E` experts are spread evenly over `R` ranks,
//! `R (1 - C(E - E/R, k) / C(E, k))`.
//! Names are resolved to param indices when the expression is compiled, so evaluation is a walk
//! over a small tree with a slice of values and no lookups.
//!
//! This module owns [`Expr`] and its errors; `lex` turns text into tokens, `parse` tokens into
//! a tree, and `program` the tree into the postfix program that [`Expr::eval`] runs.

mod lex;
mod parse;
mod program;

use std::fmt;

use program::{compile, Compiled, Instr, MAX_STACK};

/// A compiled expression; evaluate it with the values of the params it was compiled against.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    program: Vec<Instr>,
    params: Vec<usize>,
    text: String,
}

/// Why an expression did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// A division by zero, in the expression whose text it holds.
    #[error("division by zero in `{0}`")]
    DivisionByZero(String),
    /// A value that overflowed to infinity or is not a number, in the expression whose text
    /// it holds.
    #[error("`{0}` is not a finite number (overflow)")]
    NotFinite(String),
}

impl Expr {
    /// Compiles `text`; `resolve` maps a param name to its index, or says it is unknown.
    pub fn parse(
        text: &str,
        resolve: &dyn Fn(&str) -> Result<usize, String>,
    ) -> Result<Expr, ParseError> {
        // Longest text and deepest nesting (parentheses, calls, unary minus): see crate::base::limits.
        let limits = crate::base::limits::limits().map_err(ParseError)?;
        if text.len() > limits.expr_length {
            return Err(ParseError(format!(
                "expression is {} characters long; the limit is {} (STEPCOST_MAX_EXPR_LENGTH raises it)",
                text.len(),
                limits.expr_length
            )));
        }
        let tokens = lex::tokenize(text)?;
        let node = parse::parse(&tokens, text, limits.expr_depth, resolve)?;
        let Compiled {
            program,
            params,
            max_depth,
        } = compile(&node);
        if max_depth > MAX_STACK {
            return Err(ParseError(format!(
                "expression `{}` is too complex (it needs a stack of {max_depth}; the limit is {MAX_STACK})",
                text.trim()
            )));
        }
        Ok(Expr {
            program,
            params,
            text: text.trim().to_owned(),
        })
    }

    /// A constant expression.
    pub fn constant(value: f64) -> Expr {
        Expr {
            program: vec![Instr::Const(value)],
            params: Vec::new(),
            text: value.to_string(),
        }
    }

    /// The text the expression was compiled from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Indices of the params the expression reads, sorted, without repeats.
    pub fn params(&self) -> &[usize] {
        &self.params
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(text: &str) -> Result<Expr, ParseError> {
        let names = ["batch", "tokens", "heads", "kv_heads", "head_dim"];
        Expr::parse(text, &|n| {
            names
                .iter()
                .position(|x| *x == n)
                .ok_or_else(|| format!("undefined param `{n}`"))
        })
    }

    const VALUES: [f64; 5] = [32.0, 1.0, 64.0, 8.0, 128.0];

    #[test]
    fn evaluates_with_precedence() {
        let e = compile("(heads + 2 * kv_heads) * head_dim").unwrap();
        assert_eq!(e.eval(&VALUES), Ok(10240.0));
        assert_eq!(compile("batch * tokens").unwrap().eval(&VALUES), Ok(32.0));
        assert_eq!(
            compile("tokens * heads / kv_heads").unwrap().eval(&VALUES),
            Ok(8.0)
        );
        assert_eq!(compile("10 - 4 - 3").unwrap().eval(&VALUES), Ok(3.0));
        assert_eq!(compile("-2 * -3").unwrap().eval(&VALUES), Ok(6.0));
        assert_eq!(compile("1_000 * 1e3").unwrap().eval(&VALUES), Ok(1e6));
        assert_eq!(compile("2.5e-1 * 4").unwrap().eval(&VALUES), Ok(1.0));
    }

    #[test]
    fn functions() {
        assert_eq!(
            compile("min(batch, 8, 100)").unwrap().eval(&VALUES),
            Ok(8.0)
        );
        assert_eq!(
            compile("max(batch, heads)").unwrap().eval(&VALUES),
            Ok(64.0)
        );
        assert_eq!(compile("ceil(batch / 5)").unwrap().eval(&VALUES), Ok(7.0));
        assert_eq!(compile("floor(batch / 5)").unwrap().eval(&VALUES), Ok(6.0));
        assert!(compile("ceil(1, 2)").is_err());
        assert!(compile("min(1)").is_err());
        assert!(compile("sqrt(4)")
            .unwrap_err()
            .0
            .contains("unknown function"));
    }

    #[test]
    fn ranks_touched_by_one_token() {
        let at = |text: &str| compile(text).unwrap().eval(&VALUES).unwrap();
        // Top-8 of 256 experts over 8 ranks of 32: a rank holds none of the 8 with chance
        // (224 x 223 x ... x 217) / (256 x 255 x ... x 249), by hand.
        let none: f64 = (0..8)
            .map(|i| (224.0 - i as f64) / (256.0 - i as f64))
            .product();
        assert!((at("ranks_touched(256, 8, 8)") - 8.0 * (1.0 - none)).abs() < 1e-12);
        assert!((at("ranks_touched(256, 8, 8)") - 5.2947).abs() < 1e-4);
        // One rank holds every expert; one expert per token reaches one rank; 2 of 4 experts
        // over 2 ranks: both on one rank in 2 of the C(4, 2) = 6 choices, so 2 - 2/6 ranks.
        assert_eq!(at("ranks_touched(256, 8, 1)"), 1.0);
        assert!((at("ranks_touched(64, 1, 8)") - 1.0).abs() < 1e-12);
        assert!((at("ranks_touched(4, 2, 2)") - (2.0 - 2.0 / 6.0)).abs() < 1e-12);
        // More experts picked than the other ranks hold together leaves no rank out.
        assert_eq!(at("ranks_touched(16, 13, 4)"), 4.0);
        assert!(at("ranks_touched(1e300, 1e300, 1e300)").is_finite());
    }

    #[test]
    fn errors() {
        assert!(compile("batch *").is_err());
        assert!(compile("(batch").is_err());
        assert!(compile("batch)").is_err());
        assert!(compile("").is_err());
        assert!(compile("batch % 2")
            .unwrap_err()
            .0
            .contains("unexpected character"));
        assert_eq!(compile("batchh").unwrap_err().0, "undefined param `batchh`");
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(compile(&deep).unwrap_err().0.contains("nested"));
        let e = compile("batch / (tokens - 1)").unwrap();
        assert!(matches!(e.eval(&VALUES), Err(EvalError::DivisionByZero(_))));
        let e = compile("1e300 * 1e300").unwrap();
        assert!(matches!(e.eval(&VALUES), Err(EvalError::NotFinite(_))));
    }
}
