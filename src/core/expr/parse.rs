//! Tokens to a tree: a recursive-descent parser with the usual precedence (unary minus over
//! `* /` over `+ -`), function calls checked against their arity, names resolved to param
//! indices, and nesting bounded.

use super::lex::Token;
use super::ParseError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Func {
    Min,
    Max,
    Ceil,
    Floor,
    Pow,
    ExpertsTouched,
    RanksTouched,
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
            "ranks_touched" => Func::RanksTouched,
            _ => return None,
        })
    }

    /// Arguments taken: `(least, most)`.
    fn arity(self) -> (usize, usize) {
        match self {
            Func::Ceil | Func::Floor => (1, 1),
            Func::Pow => (2, 2),
            Func::ExpertsTouched | Func::RanksTouched => (3, 3),
            Func::Min | Func::Max => (2, usize::MAX),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    Num(f64),
    Param(usize),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

/// Parses all of `tokens` (from `text`, quoted in messages) into a tree nested at most
/// `max_depth` deep; `resolve` maps a param name to its index.
pub(super) fn parse(
    tokens: &[Token],
    text: &str,
    max_depth: usize,
    resolve: &dyn Fn(&str) -> Result<usize, String>,
) -> Result<Node, ParseError> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
        max_depth,
        resolve,
    };
    let node = parser.expr()?;
    if let Some(tok) = parser.tokens.get(parser.pos) {
        return Err(ParseError(format!(
            "unexpected {} in `{text}`",
            tok.describe()
        )));
    }
    Ok(node)
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
            Some(Token::Ident(name)) if self.peek_op() == Some('(') => self.call(&name),
            Some(Token::Ident(name)) => (self.resolve)(&name).map(Node::Param).map_err(ParseError),
            Some(tok) => Err(ParseError(format!(
                "expected a number, a name or `(`, found {}",
                tok.describe()
            ))),
            None => Err(ParseError("the expression ended too early".into())),
        }
    }

    /// A call of function `name`, its `(` next.
    fn call(&mut self, name: &str) -> Result<Node, ParseError> {
        let func = Func::from_name(name).ok_or_else(|| {
            ParseError(format!(
                "unknown function `{name}`; expected min, max, ceil, floor, pow, experts_touched or ranks_touched"
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
}
