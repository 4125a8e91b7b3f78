//! Arithmetic expressions over a workload's params: `batch * tokens`,
//! `(heads + 2 * kv_heads) * head_dim`, `max(1, ceil(context / 128))`.
//!
//! Grammar: numbers (`8192`, `1e-3`, `1_000`), param names, `+ - * /`, unary minus,
//! parentheses and the functions `min(a, b, ...)`, `max(a, b, ...)`, `ceil(x)`, `floor(x)`,
//! `pow(x, y)` and `experts_touched(E, k, n)`: the expected number of distinct experts that
//! `n` tokens routed uniformly to `k` of `E` experts each reach, `E (1 - (1 - k/E)^n)`.
//! Names are resolved to param indices when the expression is compiled, so evaluation is a walk
//! over a small tree with a slice of values and no lookups.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Min,
    Max,
    Ceil,
    Floor,
    Pow,
    ExpertsTouched,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "min" => Func::Min,
            "max" => Func::Max,
            "ceil" => Func::Ceil,
            "floor" => Func::Floor,
            "pow" => Func::Pow,
            "experts_touched" => Func::ExpertsTouched,
            _ => return None,
        })
    }

    /// Arguments taken: `(least, most)`.
    fn arity(self) -> (usize, usize) {
        match self {
            Func::Ceil | Func::Floor => (1, 1),
            Func::Pow => (2, 2),
            Func::ExpertsTouched => (3, 3),
            Func::Min | Func::Max => (2, usize::MAX),
        }
    }
}

/// Expected distinct experts reached when `n` tokens each pick `k` of `e` experts uniformly.
fn experts_touched(e: f64, k: f64, n: f64) -> f64 {
    if e <= 0.0 || k <= 0.0 || n <= 0.0 {
        return 0.0;
    }
    e * (1.0 - (1.0 - (k / e).min(1.0)).powf(n))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Num(f64),
    Param(usize),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

/// One step of a compiled expression, run on a small stack.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Instr {
    Const(f64),
    Param(usize),
    Neg,
    Bin(BinOp),
    Ceil,
    Floor,
    Pow,
    ExpertsTouched,
    /// Fold the top `n` values with min or max.
    Min(usize),
    Max(usize),
}

/// Deepest stack a compiled expression may need.
const MAX_STACK: usize = 24;

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
    #[error("division by zero in `{0}`")]
    DivisionByZero(String),
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
        let tokens = tokenize(text)?;
        let mut parser = Parser {
            tokens: &tokens,
            pos: 0,
            depth: 0,
            max_depth: limits.expr_depth,
            resolve,
        };
        let node = parser.expr()?;
        if let Some(tok) = parser.tokens.get(parser.pos) {
            return Err(ParseError(format!(
                "unexpected {} in `{text}`",
                tok.describe()
            )));
        }
        let mut program = Vec::new();
        let mut params = Vec::new();
        let mut depth = 0;
        let mut max_depth = 0;
        compile(&node, &mut program, &mut params, &mut depth, &mut max_depth);
        if max_depth > MAX_STACK {
            return Err(ParseError(format!(
                "expression `{}` is too complex (it needs a stack of {max_depth}; the limit is {MAX_STACK})",
                text.trim()
            )));
        }
        params.sort_unstable();
        params.dedup();
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

/// Emits `node` in postfix order, tracking the stack depth it needs.
fn compile(
    node: &Node,
    out: &mut Vec<Instr>,
    params: &mut Vec<usize>,
    depth: &mut usize,
    max_depth: &mut usize,
) {
    match node {
        Node::Num(x) => {
            out.push(Instr::Const(*x));
            *depth += 1;
        }
        Node::Param(i) => {
            params.push(*i);
            out.push(Instr::Param(*i));
            *depth += 1;
        }
        Node::Neg(a) => {
            compile(a, out, params, depth, max_depth);
            out.push(Instr::Neg);
        }
        Node::Bin(op, a, b) => {
            compile(a, out, params, depth, max_depth);
            compile(b, out, params, depth, max_depth);
            out.push(Instr::Bin(*op));
            *depth -= 1;
        }
        Node::Call(func, args) => {
            for a in args {
                compile(a, out, params, depth, max_depth);
            }
            out.push(match func {
                Func::Ceil => Instr::Ceil,
                Func::Floor => Instr::Floor,
                Func::Pow => Instr::Pow,
                Func::ExpertsTouched => Instr::ExpertsTouched,
                Func::Min => Instr::Min(args.len()),
                Func::Max => Instr::Max(args.len()),
            });
            *depth -= args.len() - 1;
        }
    }
    *max_depth = (*max_depth).max(*depth);
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Ident(String),
    Op(char),
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Num(x) => format!("number `{x}`"),
            Token::Ident(s) => format!("name `{s}`"),
            Token::Op(c) => format!("`{c}`"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || chars[i] == '.'
                    || chars[i] == '_'
                    || ((chars[i] == 'e' || chars[i] == 'E')
                        && chars
                            .get(i + 1)
                            .is_some_and(|n| n.is_ascii_digit() || *n == '-' || *n == '+'))
                    || ((chars[i] == '-' || chars[i] == '+')
                        && i > start
                        && (chars[i - 1] == 'e' || chars[i - 1] == 'E')))
            {
                i += 1;
            }
            let literal: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let value: f64 = literal
                .parse()
                .map_err(|_| ParseError(format!("`{literal}` is not a number")))?;
            if !value.is_finite() {
                return Err(ParseError(format!("`{literal}` is too large")));
            }
            tokens.push(Token::Num(value));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Ident(chars[start..i].iter().collect()));
        } else if "+-*/(),".contains(c) {
            tokens.push(Token::Op(c));
            i += 1;
        } else {
            return Err(ParseError(format!(
                "unexpected character `{c}` in `{}`; expressions use numbers, param names, + - * / ( ) and min, max, ceil, floor",
                text.trim()
            )));
        }
    }
    if tokens.is_empty() {
        return Err(ParseError("empty expression".into()));
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    depth: usize,
    max_depth: usize,
    resolve: &'a dyn Fn(&str) -> Result<usize, String>,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.pos) {
            Some(Token::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn expect(&mut self, want: char) -> Result<(), ParseError> {
        match self.tokens.get(self.pos) {
            Some(Token::Op(c)) if *c == want => {
                self.pos += 1;
                Ok(())
            }
            Some(tok) => Err(ParseError(format!(
                "expected `{want}`, found {}",
                tok.describe()
            ))),
            None => Err(ParseError(format!(
                "expected `{want}` but the expression ended"
            ))),
        }
    }

    fn nest(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > self.max_depth {
            Err(ParseError(format!(
                "expression nested more than {} levels deep (STEPCOST_MAX_EXPR_DEPTH raises it)",
                self.max_depth
            )))
        } else {
            Ok(())
        }
    }

    fn expr(&mut self) -> Result<Node, ParseError> {
        let mut lhs = self.term()?;
        while let Some(c @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            let rhs = self.term()?;
            let op = if c == '+' { BinOp::Add } else { BinOp::Sub };
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Node, ParseError> {
        let mut lhs = self.unary()?;
        while let Some(c @ ('*' | '/')) = self.peek_op() {
            self.pos += 1;
            let rhs = self.unary()?;
            let op = if c == '*' { BinOp::Mul } else { BinOp::Div };
            lhs = Node::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Node, ParseError> {
        if self.peek_op() == Some('-') {
            self.pos += 1;
            self.nest()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Neg(Box::new(inner)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let token = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        match token {
            Some(Token::Num(x)) => Ok(Node::Num(x)),
            Some(Token::Op('(')) => {
                self.nest()?;
                let inner = self.expr()?;
                self.expect(')')?;
                self.depth -= 1;
                Ok(inner)
            }
            Some(Token::Ident(name)) if self.peek_op() == Some('(') => {
                let func = Func::from_name(&name).ok_or_else(|| {
                    ParseError(format!(
                        "unknown function `{name}`; expected min, max, ceil, floor, pow or experts_touched"
                    ))
                })?;
                self.pos += 1;
                self.nest()?;
                let mut args = vec![self.expr()?];
                while self.peek_op() == Some(',') {
                    self.pos += 1;
                    args.push(self.expr()?);
                }
                self.expect(')')?;
                self.depth -= 1;
                let (least, most) = func.arity();
                if args.len() < least || args.len() > most {
                    let wanted = match (least, most) {
                        (1, 1) => "one argument".to_owned(),
                        (l, m) if l == m => format!("{l} arguments"),
                        (l, _) => format!("{l} or more arguments"),
                    };
                    return Err(ParseError(format!(
                        "`{name}` takes {wanted}, found {}",
                        args.len()
                    )));
                }
                Ok(Node::Call(func, args))
            }
            Some(Token::Ident(name)) => (self.resolve)(&name).map(Node::Param).map_err(ParseError),
            Some(tok) => Err(ParseError(format!(
                "expected a number, a name or `(`, found {}",
                tok.describe()
            ))),
            None => Err(ParseError("the expression ended too early".into())),
        }
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
