//! The type of each column of scenario and kernel rows, as `docs/columns.md` lists it: what a
//! typed output (Parquet) declares before any row is seen. A row's cell may be empty in any
//! column; its type is the one it has when it is not.

/// What a column holds when its cell is not empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Text (UTF-8).
    Text,
    /// A real number (`f64`).
    Number,
    /// A count (`u64`).
    Integer,
    /// `true` or `false`.
    Boolean,
}

impl ColumnType {
    /// The word `docs/columns.md` uses for it.
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Text => "text",
            ColumnType::Number => "number",
            ColumnType::Integer => "integer",
            ColumnType::Boolean => "boolean",
        }
    }
}

/// The text columns of scenario and kernel rows.
const TEXT: [&str; 21] = [
    "workload",
    "chip",
    "engine",
    "mode",
    "fusion",
    "weight_dtype",
    "weight_groups",
    "activation_dtype",
    "kv_dtype",
    "cost_basis",
    "price_basis",
    "cost_note",
    "scheme",
    "error",
    "op",
    "block",
    "kind",
    "compute_dtype",
    "unit",
    "bound",
    "priced_by",
];

/// The integer columns of scenario and kernel rows.
const INTEGER: [&str; 6] = [
    "kernels",
    "chips_per_replica",
    "max_batch",
    "input_tokens",
    "output_tokens",
    "count",
];

/// The type of `column` of a scenario or kernel row (`sweep`'s rows). Every other column,
/// the metrics and the params alike, is a number; a param whose name is one of these
/// columns is written `param_NAME` (`rows::param_columns`), so a name never means two things.
pub(crate) fn scenario_column_type(column: &str) -> ColumnType {
    if TEXT.contains(&column) {
        ColumnType::Text
    } else if INTEGER.contains(&column) {
        ColumnType::Integer
    } else if column == "fits" {
        ColumnType::Boolean
    } else {
        ColumnType::Number
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::types::Types;
    use crate::core::scenario::Mode;
    use crate::export::rows::{param_columns, CompareRow, KernelRow, Row, ScenarioLabel};

    /// The `type` of every column named in `section` of `docs/columns.md` (a `## ` heading).
    fn documented(section: &str) -> Vec<(String, String)> {
        let text = include_str!("../../../docs/columns.md");
        let start = text.find(&format!("## {section}")).expect("the section");
        let body = &text[start..];
        let body = &body[..body[3..].find("\n## ").map_or(body.len(), |e| e + 3)];
        let mut types = Vec::new();
        for line in body.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            for name in cells[1].split(',').map(str::trim) {
                types.push((name.trim_matches('`').to_owned(), cells[3].to_owned()));
            }
        }
        types
    }

    fn names(row: &dyn Row) -> Vec<String> {
        let mut names = Vec::new();
        row.visit(&mut |name, _| names.push(name.to_owned()));
        names
    }

    #[test]
    fn every_column_has_the_type_the_column_table_gives_it() {
        let params = param_columns(["batch"]);
        let label = ScenarioLabel {
            workload: "",
            chip: "",
            engine: "",
            mode: Mode::Roofline,
            fusion: "",
            dtypes: Types::default(),
            param_columns: &params,
            params: &[1.0],
            what_if: crate::export::rows::WhatIfCells::NONE,
        };
        let compare = CompareRow {
            summary: crate::export::rows::SummaryRow::error(label, ""),
            relative_speed: None,
        };
        let scenario = documented("Scenario rows");
        let kernel = documented("Kernel rows");
        let rows: [(&dyn Row, Vec<_>); 2] = [
            (&compare, scenario.clone()),
            (&KernelRow::error(label, ""), [kernel, scenario].concat()),
        ];
        for (row, table) in rows {
            for name in names(row).iter().filter(|n| *n != "batch") {
                let doc = (table.iter().find(|(n, _)| n == name))
                    .unwrap_or_else(|| panic!("`{name}` is not in docs/columns.md"));
                assert_eq!(scenario_column_type(name).name(), doc.1, "column `{name}`");
            }
        }
        assert_eq!(scenario_column_type("batch"), ColumnType::Number);
    }
}
