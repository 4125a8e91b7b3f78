//! The filter's text into a tree: tokens, then precedence climbing (`||` below `&&` below `!`
//! below the comparisons), each column name resolved to its index as it is read.

use super::{CmpOp, FilterError, Kind, Node, Operand};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Str(String),
    Name(String),
    Cmp(CmpOp),
    And,
    Or,
    Not,
    Open,
    Close,
    Minus,
}

/// A token and the 1-based character where it starts.
type Spanned = (Token, usize);

fn lex(text: &str) -> Result<Vec<Spanned>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        let two = |next: char| chars.get(i + 1) == Some(&next);
        let (token, len) = match c {
            _ if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '(' => (Token::Open, 1),
            ')' => (Token::Close, 1),
            '-' => (Token::Minus, 1),
            '&' if two('&') => (Token::And, 2),
            '|' if two('|') => (Token::Or, 2),
            '=' if two('=') => (Token::Cmp(CmpOp::Eq), 2),
            '!' if two('=') => (Token::Cmp(CmpOp::Ne), 2),
            '<' if two('=') => (Token::Cmp(CmpOp::Le), 2),
            '>' if two('=') => (Token::Cmp(CmpOp::Ge), 2),
            '!' => (Token::Not, 1),
            '<' => (Token::Cmp(CmpOp::Lt), 1),
            '>' => (Token::Cmp(CmpOp::Gt), 1),
            '"' => string(&chars, i)?,
            _ if c.is_ascii_digit() || c == '.' => number(&chars, i)?,
            _ if c.is_alphabetic() || c == '_' => {
                let len = chars[i..]
                    .iter()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
                    .count();
                (Token::Name(chars[i..i + len].iter().collect()), len)
            }
            '=' | '&' | '|' => {
                let doubled = format!("{c}{c}");
                return Err(FilterError::at(
                    at,
                    format!("`{c}` alone is not an operator; did you mean `{doubled}`?"),
                ));
            }
            _ => {
                return Err(FilterError::at(
                    at,
                    format!("unexpected `{}`", c.escape_debug()),
                ))
            }
        };
        tokens.push((token, at));
        i += len;
    }
    Ok(tokens)
}

/// A double-quoted string starting at `start`, with `\"` and `\\` escapes.
fn string(chars: &[char], start: usize) -> Result<(Token, usize), FilterError> {
    let mut text = String::new();
    let mut i = start + 1;
    while let Some(&c) = chars.get(i) {
        match c {
            '"' => return Ok((Token::Str(text), i + 1 - start)),
            '\\' => match chars.get(i + 1) {
                Some(&e @ ('"' | '\\')) => {
                    text.push(e);
                    i += 2;
                    continue;
                }
                _ => {
                    return Err(FilterError::at(
                        i + 1,
                        "in a string only `\\\"` and `\\\\` are escapes",
                    ))
                }
            },
            _ => text.push(c),
        }
        i += 1;
    }
    Err(FilterError::at(
        start + 1,
        "this string has no closing `\"`",
    ))
}

/// A number starting at `start`: digits, a fraction, an exponent.
fn number(chars: &[char], start: usize) -> Result<(Token, usize), FilterError> {
    let mut i = start;
    let digits = |i: &mut usize| {
        while chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
    };
    digits(&mut i);
    if chars.get(i) == Some(&'.') {
        i += 1;
        digits(&mut i);
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        let mark = i;
        i += 1;
        if matches!(chars.get(i), Some('+' | '-')) {
            i += 1;
        }
        let before = i;
        digits(&mut i);
        if i == before {
            i = mark; // `2e` is the number 2 followed by a name: refused by the parser
        }
    }
    let text: String = chars[start..i].iter().collect();
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok((Token::Num(x), i - start)),
        _ => Err(FilterError::at(
            start + 1,
            format!("`{text}` is not a finite number"),
        )),
    }
}

/// Resolves a column name to its index and kind, or says why it cannot.
pub(super) type Resolve<'r> = &'r dyn Fn(&str) -> Result<(usize, Kind), String>;

/// Reads tokens into a tree, resolving column names with `resolve`.
pub(super) struct Parser<'r> {
    tokens: Vec<Spanned>,
    next: usize,
    end: usize,
    resolve: Resolve<'r>,
}

impl<'r> Parser<'r> {
    pub(super) fn parse(text: &str, resolve: Resolve<'r>) -> Result<Node, FilterError> {
        let mut parser = Parser {
            tokens: lex(text)?,
            next: 0,
            end: text.chars().count() + 1,
            resolve,
        };
        if parser.tokens.is_empty() {
            return Err(FilterError::at(1, "the filter is empty"));
        }
        let node = parser.or()?;
        match parser.tokens.get(parser.next) {
            None => Ok(node),
            Some((Token::Close, at)) => Err(FilterError::at(*at, "`)` without its `(`")),
            Some((_, at)) => Err(FilterError::at(
                *at,
                "expected `&&`, `||` or the end after a complete condition",
            )),
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next).map(|(t, _)| t)
    }

    /// Where the next token starts (the end of the text when there is none).
    fn here(&self) -> usize {
        self.tokens.get(self.next).map_or(self.end, |(_, at)| *at)
    }

    fn or(&mut self) -> Result<Node, FilterError> {
        let mut node = self.and()?;
        while self.peek() == Some(&Token::Or) {
            self.next += 1;
            node = Node::Or(Box::new(node), Box::new(self.and()?));
        }
        Ok(node)
    }

    fn and(&mut self) -> Result<Node, FilterError> {
        let mut node = self.not()?;
        while self.peek() == Some(&Token::And) {
            self.next += 1;
            node = Node::And(Box::new(node), Box::new(self.not()?));
        }
        Ok(node)
    }

    fn not(&mut self) -> Result<Node, FilterError> {
        if self.peek() == Some(&Token::Not) {
            self.next += 1;
            return Ok(Node::Not(Box::new(self.not()?)));
        }
        if self.peek() == Some(&Token::Open) {
            let open = self.here();
            self.next += 1;
            let node = self.or()?;
            if self.peek() != Some(&Token::Close) {
                return Err(FilterError::at(open, "this `(` is never closed"));
            }
            self.next += 1;
            return Ok(node);
        }
        self.comparison()
    }

    /// `a OP b`, or a lone operand that must be a boolean (`fits`, `true`).
    fn comparison(&mut self) -> Result<Node, FilterError> {
        let (left, left_at) = self.operand()?;
        let Some(Token::Cmp(op)) = self.peek().cloned() else {
            return Node::truth(left).map_err(|m| FilterError::at(left_at, m));
        };
        let op_at = self.here();
        self.next += 1;
        let (right, _) = self.operand()?;
        if let Some(Token::Cmp(_)) = self.peek() {
            return Err(FilterError::at(
                self.here(),
                "comparisons do not chain; join them with `&&`",
            ));
        }
        Node::compare(left, op, right).map_err(|m| FilterError::at(op_at, m))
    }

    fn operand(&mut self) -> Result<(Operand, usize), FilterError> {
        let at = self.here();
        let Some((token, _)) = self.tokens.get(self.next).cloned() else {
            return Err(FilterError::at(
                at,
                "expected a column, a number, a string, `true` or `false`, found the end",
            ));
        };
        self.next += 1;
        let operand = match token {
            Token::Num(x) => Operand::Num(x),
            Token::Str(s) => Operand::Str(s.into_boxed_str()),
            Token::Minus => match self.tokens.get(self.next) {
                Some((Token::Num(x), _)) => {
                    self.next += 1;
                    Operand::Num(-x)
                }
                _ => return Err(FilterError::at(at, "`-` is only a number's sign here")),
            },
            Token::Name(name) => match name.as_str() {
                "true" => Operand::Bool(true),
                "false" => Operand::Bool(false),
                _ => {
                    let (index, kind) =
                        (self.resolve)(&name).map_err(|m| FilterError::at(at, m))?;
                    Operand::Column { index, kind }
                }
            },
            _ => {
                return Err(FilterError::at(
                    at,
                    "expected a column, a number, a string, `true` or `false`",
                ))
            }
        };
        Ok((operand, at))
    }
}
