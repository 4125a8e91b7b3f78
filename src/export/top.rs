//! The best rows of a stream (`--top K --by COLUMN [--per COLUMN]`): the K rows with the
//! lowest value in one column (or the highest, `-COLUMN`), in each group of rows that share
//! another column's value, kept while the rows stream past.
//!
//! Each group holds a bounded heap of at most K rows, kept as the bytes they are written as,
//! so memory is O(K x groups) whatever the number of rows, and every row kept is byte for byte
//! the row the whole stream would have written. Rows come from many threads in any order; a
//! row's place in the product order (its scenario, then its rank in the scenario) breaks ties
//! and orders the groups, so the result does not depend on the thread count. A row whose
//! column is empty (no price, a scenario that could not be priced) never ranks.

use std::collections::{BinaryHeap, HashMap};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::base::suggest::did_you_mean;
use crate::export::filter::Kind;
use crate::export::rows::{Row, Value};

/// Most rows `--top` keeps per group (they are held in memory).
pub(crate) const MAX_TOP: u64 = 1_000_000;

/// Why a ranking cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RankError {
    /// A column the rows do not have.
    #[error("--{flag}: no column `{name}`{suggestion}; the columns: {known}")]
    UnknownColumn {
        flag: &'static str,
        name: String,
        /// ` (did you mean `x`?)`, or empty.
        suggestion: String,
        known: String,
    },
    /// `--by` on a column that does not hold numbers.
    #[error("--by {column}: the column holds {found}, not numbers; rank by a numeric column")]
    NotNumeric { column: String, found: &'static str },
    /// K out of range.
    #[error("--top {0}: expected a whole number of rows from 1 to {MAX_TOP}")]
    Count(u64),
}

/// Where a row stands in the product order: its scenario, then its place among the
/// scenario's rows.
pub(crate) type Order = (u64, u32);

/// One row kept, with the key it ranks by (the value, negated when the highest come first).
#[derive(Debug)]
struct Kept {
    key: f64,
    order: Order,
    line: Box<[u8]>,
}

impl Kept {
    fn rank(&self, key: f64, order: Order) -> std::cmp::Ordering {
        self.key.total_cmp(&key).then(self.order.cmp(&order))
    }
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Kept {}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Best first: the heap's top is the worst row kept, the one the next better row replaces.
impl Ord for Kept {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank(other.key, other.order)
    }
}

/// The rows kept of one group, and where the group first showed a ranked row.
#[derive(Debug)]
struct Group {
    first: Order,
    heap: BinaryHeap<Kept>,
}

/// The K best rows by a column, per group; fed from many threads.
#[derive(Debug)]
pub(crate) struct Ranking {
    k: usize,
    by: usize,
    by_name: String,
    descending: bool,
    per: Option<usize>,
    /// Groups by their `--per` cell as bytes (a kind tag, then the text or the number's bits).
    groups: Mutex<HashMap<Box<[u8]>, Group>>,
    /// The first cell of `--by` that held no number (a column whose kind the sample row could
    /// not show): such rows are left out, and the command reports it.
    error: OnceLock<RankError>,
    /// Rows whose `--by` cell was empty (no price, no throughput): they never rank, and the
    /// command says how many were left out.
    unranked: std::sync::atomic::AtomicU64,
}

thread_local! {
    /// The `--per` cell of the row being offered, kept from row to row for its capacity.
    static GROUP_KEY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Ranking {
    /// The `k` best rows by `by` (`-name`: the highest first) in each group of `per`, against
    /// the columns (with their kinds, where known) of the rows to come.
    pub(crate) fn new(
        k: u64,
        by: &str,
        per: Option<&str>,
        columns: &[(String, Kind)],
    ) -> Result<Ranking, RankError> {
        if !(1..=MAX_TOP).contains(&k) {
            return Err(RankError::Count(k));
        }
        let (descending, by_name) = match by.strip_prefix('-') {
            Some(name) => (true, name),
            None => (false, by),
        };
        let by = column(columns, by_name, "by")?;
        match columns[by].1 {
            Kind::Num | Kind::Any => {}
            kind => return Err(not_numeric(by_name, kind)),
        }
        Ok(Ranking {
            k: k as usize,
            by,
            by_name: by_name.to_owned(),
            descending,
            per: per.map(|p| column(columns, p, "per")).transpose()?,
            groups: Mutex::new(HashMap::new()),
            error: OnceLock::new(),
            unranked: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Rows left out because their `--by` cell was empty (an unpriced chip's cost).
    pub(crate) fn unranked(&self) -> u64 {
        self.unranked.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Why a row could not be ranked, if one could not.
    pub(crate) fn error(&self) -> Option<&RankError> {
        self.error.get()
    }

    /// Offers `row`, at `order` in the product order; `encode` writes it as the stream would,
    /// and is called only if the row is kept.
    pub(crate) fn offer(&self, row: &dyn Row, order: Order, encode: impl FnOnce(&mut Vec<u8>)) {
        GROUP_KEY.with_borrow_mut(|cell| {
            cell.clear();
            let Some(key) = self.key(row, cell) else {
                return;
            };
            let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
            if !groups.contains_key(cell.as_slice()) {
                let heap = BinaryHeap::with_capacity(self.k.min(1024));
                let group = Group { first: order, heap };
                groups.insert(cell.as_slice().into(), group);
            }
            let Some(group) = groups.get_mut(cell.as_slice()) else {
                return;
            };
            group.first = group.first.min(order);
            let full = group.heap.len() >= self.k;
            if full
                && group
                    .heap
                    .peek()
                    .is_some_and(|worst| worst.rank(key, order).is_le())
            {
                return;
            }
            let mut line = Vec::new();
            encode(&mut line);
            if full {
                group.heap.pop();
            }
            let line = line.into_boxed_slice();
            group.heap.push(Kept { key, order, line });
        });
    }

    /// The key `row` ranks by (`None`: it does not rank), with its `--per` cell written into
    /// `group`.
    fn key(&self, row: &dyn Row, group: &mut Vec<u8>) -> Option<f64> {
        let mut found = None;
        let mut column = 0;
        row.visit(&mut |_, cell| {
            if column == self.by {
                found = Some(match cell {
                    Value::Num(x) => Ok(x),
                    Value::Int(n) => Ok(n as f64),
                    Value::Empty => Err(None),
                    Value::Text(_) => Err(Some(Kind::Text)),
                    Value::Bool(_) => Err(Some(Kind::Bool)),
                });
            }
            if Some(column) == self.per {
                group_bytes(cell, group);
            }
            column += 1;
        });
        match found? {
            // A cell that is not finite is written empty: it does not rank either.
            Ok(x) if x.is_finite() => {
                let key = if self.descending { -x } else { x };
                Some(key + 0.0) // -0 ranks as 0, its tie broken by order
            }
            Ok(_) | Err(None) => {
                (self.unranked).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                None
            }
            Err(Some(kind)) => {
                let _ = self.error.set(not_numeric(&self.by_name, kind));
                None
            }
        }
    }

    /// Appends the rows kept, group by group in the order the groups first ranked a row, each
    /// group best first; returns how many.
    pub(crate) fn finish(&self, out: &mut Vec<u8>) -> u64 {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        let mut groups: Vec<Group> = groups.drain().map(|(_, g)| g).collect();
        groups.sort_by_key(|g| g.first);
        let mut rows = 0;
        for group in groups {
            for kept in group.heap.into_sorted_vec() {
                out.extend_from_slice(&kept.line);
                rows += 1;
            }
        }
        rows
    }
}

/// A cell as the bytes that tell its group apart: a kind tag, then the text or the number.
fn group_bytes(cell: Value<'_>, out: &mut Vec<u8>) {
    match cell {
        Value::Empty => out.push(0),
        Value::Text(s) => {
            out.push(1);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Num(x) => {
            out.push(2);
            out.extend_from_slice(&(x + 0.0).to_bits().to_le_bytes());
        }
        Value::Int(n) => {
            out.push(3);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Bool(b) => out.extend_from_slice(&[4, u8::from(b)]),
    }
}

/// The index of column `name`, or an error naming the closest.
fn column(columns: &[(String, Kind)], name: &str, flag: &'static str) -> Result<usize, RankError> {
    let names = || columns.iter().map(|(n, _)| n.as_str());
    names()
        .position(|n| n == name)
        .ok_or_else(|| RankError::UnknownColumn {
            flag,
            name: name.to_owned(),
            suggestion: did_you_mean(name, names()),
            known: names().collect::<Vec<_>>().join(", "),
        })
}

fn not_numeric(column: &str, kind: Kind) -> RankError {
    RankError::NotNumeric {
        column: column.to_owned(),
        found: match kind {
            Kind::Bool => "booleans",
            _ => "text",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of three columns: a group name, a number, a text.
    struct Line(&'static str, Option<f64>, u8);

    impl Row for Line {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("group", Value::Text(self.0));
            f("x", self.1.into());
            f("id", Value::Int(u64::from(self.2)));
        }
    }

    fn columns() -> Vec<(String, Kind)> {
        let kinds = [("group", Kind::Text), ("x", Kind::Any), ("id", Kind::Num)];
        kinds.iter().map(|(n, k)| ((*n).to_owned(), *k)).collect()
    }

    fn ranked(k: u64, by: &str, per: Option<&str>, rows: &[Line]) -> Vec<u8> {
        let ranking = Ranking::new(k, by, per, &columns()).unwrap();
        // Offered in reverse, as threads may: the product order still decides.
        for (i, row) in rows.iter().enumerate().rev() {
            ranking.offer(row, (i as u64, 0), |out| out.push(row.2));
        }
        let mut out = Vec::new();
        assert_eq!(ranking.finish(&mut out), out.len() as u64);
        out
    }

    #[test]
    fn the_best_per_group_by_product_order_on_ties() {
        let rows = [
            Line("b", Some(3.0), 0),
            Line("a", Some(1.0), 1),
            Line("b", Some(1.0), 2),
            Line("b", None, 3),
            Line("a", Some(1.0), 4),
            Line("b", Some(-0.0), 5),
            Line("a", Some(0.0), 6),
            Line("b", Some(0.0), 7),
        ];
        assert_eq!(ranked(2, "x", None, &rows), [5, 6]);
        assert_eq!(ranked(2, "x", Some("group"), &rows), [5, 7, 6, 1]);
        assert_eq!(ranked(2, "-x", Some("group"), &rows), [0, 2, 1, 4]);
        assert_eq!(ranked(9, "-x", None, &rows).len(), 7); // the empty cell never ranks
    }

    #[test]
    fn columns_are_checked_before_any_row() {
        let new = |k, by, per| {
            Ranking::new(k, by, per, &columns())
                .unwrap_err()
                .to_string()
        };
        assert!(new(1, "xx", None).contains("no column `xx`"));
        assert!(new(1, "x", Some("grup")).contains("`group`?"));
        assert!(new(1, "group", None).contains("holds text"));
        assert!(new(0, "x", None).contains("from 1 to"));
    }
}
