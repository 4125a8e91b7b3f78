//! Text to tokens: number literals (`8192`, `1e-3`, `1_000`), names, and the operators and
//! punctuation `+ - * / ( ) ,`.

use super::ParseError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Num(f64),
    Ident(String),
    Op(char),
}

impl Token {
    pub(super) fn describe(&self) -> String {
        match self {
            Token::Num(x) => format!("number `{x}`"),
            Token::Ident(s) => format!("name `{s}`"),
            Token::Op(c) => format!("`{c}`"),
        }
    }
}

pub(super) fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            i = number_end(&chars, start);
            tokens.push(Token::Num(number(&chars[start..i])?));
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

/// Where the number literal starting at `start` ends: digits, `.`, `_`, and an exponent
/// (`e` or `E` followed by a digit or sign).
fn number_end(chars: &[char], start: usize) -> usize {
    let mut i = start;
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
    i
}

/// The value of a number literal, `_` separators dropped; it must be finite.
fn number(literal: &[char]) -> Result<f64, ParseError> {
    let literal: String = literal.iter().filter(|c| **c != '_').collect();
    let value: f64 = literal
        .parse()
        .map_err(|_| ParseError(format!("`{literal}` is not a number")))?;
    if !value.is_finite() {
        return Err(ParseError(format!("`{literal}` is too large")));
    }
    Ok(value)
}
