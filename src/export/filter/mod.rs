//! The filter language for rows (`--where`): conditions on the columns of exported rows, apart
//! from the workload expression language (`core::expr`), which stays arithmetic.
//!
//! A filter holds numbers (`8`, `1.5e3`, `-1`), `true` and `false`, double-quoted strings
//! (`"h200"`, with `\"` and `\\`), column names, the comparisons `== != < <= > >=`, `&&`,
//! `||`, `!` and parentheses. `!` binds tightest, then the comparisons, then `&&`, then `||`;
//! comparisons do not chain. A column alone is a condition when it holds booleans (`fits`).
//!
//! A comparison with an empty cell (a scenario that could not be priced, a column that does
//! not apply) is false, whatever the operator, and so is an empty boolean column alone; `!`
//! turns either into true. Numbers compare as numbers, strings as strings (byte order),
//! booleans only with `==` and `!=`.
//!
//! A filter is compiled once against a row's column names (an unknown column is an error
//! naming the closest) into column indices; evaluating it reads only the cells it names and
//! allocates nothing. Where the caller knows a column's kind (a row of our own), comparing
//! it with a literal of another kind is refused at compile time; a CSV read back knows no
//! kinds, so there the mismatch is found on the first row that shows it.

mod parse;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::base::suggest::did_you_mean;
use crate::export::rows::{Captured, Row, Value};

/// What a column holds, where it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Not known (a CSV field, an empty cell): compares with a literal of any kind.
    Any,
    /// A number.
    Num,
    /// A string.
    Text,
    /// `true` or `false`.
    Bool,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Any => "a value",
            Kind::Num => "a number",
            Kind::Text => "text",
            Kind::Bool => "a boolean",
        }
    }
}

/// One cell as a filter reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    /// No value: every comparison with it is false.
    Empty,
    /// A number.
    Num(f64),
    /// Text, compared in byte order.
    Text(&'a str),
    /// A boolean, compared only with `==` and `!=`.
    Bool(bool),
}

impl Cell<'_> {
    fn kind(&self) -> Kind {
        match self {
            Cell::Empty => Kind::Any,
            Cell::Num(_) => Kind::Num,
            Cell::Text(_) => Kind::Text,
            Cell::Bool(_) => Kind::Bool,
        }
    }
}

/// A row as a filter reads it: the cell in a column, read as `want` where the row's cells are
/// untyped text (a CSV field `4090` is a number when compared with one, text when compared
/// with a string).
pub trait Cells {
    /// The cell in `column` (by index), read as `want` where the row's cells are untyped text.
    fn cell(&self, column: usize, want: Kind) -> Cell<'_>;
}

/// A CSV row: an empty field is empty, `true` and `false` are booleans, a field that reads as
/// a finite number is one (unless text is wanted), anything else is text.
impl Cells for csv::StringRecord {
    fn cell(&self, column: usize, want: Kind) -> Cell<'_> {
        let text = self.get(column).unwrap_or("");
        match (text, want) {
            ("", _) => Cell::Empty,
            (_, Kind::Text) => Cell::Text(text),
            ("true", _) => Cell::Bool(true),
            ("false", _) => Cell::Bool(false),
            _ => match text.parse::<f64>() {
                Ok(x) if x.is_finite() => Cell::Num(x),
                _ => Cell::Text(text),
            },
        }
    }
}

/// A row of our own, captured: every cell as it is typed.
impl Cells for Captured {
    fn cell(&self, column: usize, _: Kind) -> Cell<'_> {
        match self.value(column) {
            Value::Num(x) => Cell::Num(x),
            Value::Int(n) => Cell::Num(n as f64),
            Value::Bool(b) => Cell::Bool(b),
            Value::Text(s) => Cell::Text(s),
            Value::Empty => Cell::Empty,
        }
    }
}

/// The kind of each of a row's columns, as a sample of the row shows it (an empty cell: any).
pub fn kinds(row: &dyn Row) -> Vec<(String, Kind)> {
    let mut kinds = Vec::new();
    row.visit(&mut |name, value| {
        let kind = match value {
            Value::Text(_) => Kind::Text,
            Value::Num(_) | Value::Int(_) => Kind::Num,
            Value::Bool(_) => Kind::Bool,
            Value::Empty => Kind::Any,
        };
        kinds.push((name.to_owned(), kind));
    });
    kinds
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    fn ordering(self) -> bool {
        !matches!(self, CmpOp::Eq | CmpOp::Ne)
    }

    fn holds(self, order: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            CmpOp::Eq => order == Equal,
            CmpOp::Ne => order != Equal,
            CmpOp::Lt => order == Less,
            CmpOp::Le => order != Greater,
            CmpOp::Gt => order == Greater,
            CmpOp::Ge => order != Less,
        }
    }
}

/// A side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    Column { index: usize, kind: Kind },
    Num(f64),
    Str(Box<str>),
    Bool(bool),
}

impl Operand {
    fn kind(&self) -> Kind {
        match self {
            Operand::Column { kind, .. } => *kind,
            Operand::Num(_) => Kind::Num,
            Operand::Str(_) => Kind::Text,
            Operand::Bool(_) => Kind::Bool,
        }
    }

    fn cell<'a>(&'a self, row: &'a dyn Cells, want: Kind) -> Cell<'a> {
        match self {
            Operand::Column { index, .. } => row.cell(*index, want),
            Operand::Num(x) => Cell::Num(*x),
            Operand::Str(s) => Cell::Text(s),
            Operand::Bool(b) => Cell::Bool(*b),
        }
    }
}

/// The compiled tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Compare(Operand, CmpOp, Operand),
    /// A boolean operand alone.
    Truth(Operand),
}

impl Node {
    /// `left op right`, refused where the kinds are known and cannot compare.
    fn compare(left: Operand, op: CmpOp, right: Operand) -> Result<Node, String> {
        let (a, b) = (left.kind(), right.kind());
        if a != Kind::Any && b != Kind::Any && a != b {
            return Err(format!("cannot compare {} with {}", a.name(), b.name()));
        }
        if op.ordering() && (a == Kind::Bool || b == Kind::Bool) {
            return Err("booleans compare only with `==` and `!=`".into());
        }
        Ok(Node::Compare(left, op, right))
    }

    fn truth(operand: Operand) -> Result<Node, String> {
        match operand.kind() {
            Kind::Bool | Kind::Any => Ok(Node::Truth(operand)),
            kind => Err(format!(
                "{} is not a condition on its own; compare it (`==`, `<`, ...)",
                kind.name()
            )),
        }
    }

    fn eval(&self, row: &dyn Cells) -> Result<bool, Mismatch> {
        Ok(match self {
            Node::Or(a, b) => a.eval(row)? || b.eval(row)?,
            Node::And(a, b) => a.eval(row)? && b.eval(row)?,
            Node::Not(a) => !a.eval(row)?,
            Node::Truth(operand) => match operand.cell(row, Kind::Bool) {
                Cell::Bool(b) => b,
                Cell::Empty => false,
                cell => return Err(Mismatch::NotBoolean(cell.kind())),
            },
            Node::Compare(left, op, right) => {
                // A literal side says how to read an untyped column on the other.
                let want = match (left.kind(), right.kind()) {
                    (Kind::Any, k) | (k, Kind::Any) => k,
                    (k, _) => k,
                };
                compare(left.cell(row, want), *op, right.cell(row, want))?
            }
        })
    }
}

fn compare(a: Cell<'_>, op: CmpOp, b: Cell<'_>) -> Result<bool, Mismatch> {
    let order = match (a, b) {
        (Cell::Empty, _) | (_, Cell::Empty) => return Ok(false),
        (Cell::Num(x), Cell::Num(y)) => x.total_cmp(&y),
        (Cell::Text(x), Cell::Text(y)) => x.cmp(y),
        (Cell::Bool(x), Cell::Bool(y)) if !op.ordering() => x.cmp(&y),
        (Cell::Bool(_), Cell::Bool(_)) => return Err(Mismatch::Ordered),
        (a, b) => return Err(Mismatch::Kinds(a.kind(), b.kind())),
    };
    Ok(op.holds(order))
}

/// Why a row's cells could not be compared.
#[derive(Debug, Clone, Copy)]
enum Mismatch {
    Kinds(Kind, Kind),
    NotBoolean(Kind),
    Ordered,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Kinds(a, b) => write!(f, "cannot compare {} with {}", a.name(), b.name()),
            Mismatch::NotBoolean(k) => {
                write!(f, "{} is not a condition on its own; compare it", k.name())
            }
            Mismatch::Ordered => f.write_str("booleans compare only with `==` and `!=`"),
        }
    }
}

/// A filter that cannot be read, or a row it cannot be applied to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(String);

impl FilterError {
    /// A problem at the 1-based character `at` of the filter.
    fn at(at: usize, message: impl fmt::Display) -> FilterError {
        FilterError(format!("at character {at}: {message}"))
    }
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FilterError {}

/// A compiled filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    root: Node,
    text: String,
}

impl Filter {
    /// Compiles `text` against the columns a row has, each with its kind where known.
    pub fn compile<'c>(
        text: &str,
        columns: impl IntoIterator<Item = (&'c str, Kind)>,
    ) -> Result<Filter, FilterError> {
        let columns: Vec<(&str, Kind)> = columns.into_iter().collect();
        let resolve = |name: &str| -> Result<(usize, Kind), String> {
            let names = || columns.iter().map(|(n, _)| *n);
            match names().position(|n| n == name) {
                Some(i) => Ok((i, columns[i].1)),
                None => Err(format!(
                    "no column `{name}`{}; the columns: {}",
                    did_you_mean(name, names()),
                    names().collect::<Vec<_>>().join(", ")
                )),
            }
        };
        let root = parse::Parser::parse(text, &resolve)?;
        Ok(Filter {
            root,
            text: text.to_owned(),
        })
    }

    /// Whether `row` passes; an error says why its cells cannot be compared as written.
    pub fn matches(&self, row: &dyn Cells) -> Result<bool, FilterError> {
        self.root
            .eval(row)
            .map_err(|m| FilterError(format!("`{}`: {m}", self.text)))
    }
}
