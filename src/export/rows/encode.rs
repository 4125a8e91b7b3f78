//! Rows as bytes: a CSV header and lines, JSON Lines, or a JSON value, each cell as `text`
//! writes it (a number in the shortest form that reads back exactly, a CSV text cell quoted
//! and kept from reading as a formula). JSON is not a spreadsheet: its strings stay as they
//! are.

use std::io::Write;

use super::lines::csv_line;
use super::text::{push_csv_text, push_number, CsvText};
use super::{Row, Value};

/// Appends the CSV header line of `row`'s columns.
pub(crate) fn csv_header(out: &mut Vec<u8>, row: &dyn Row, mode: CsvText) {
    let mut first = true;
    row.visit(&mut |name, _| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        push_csv_text(out, name, mode);
    });
    out.push(b'\n');
}

fn push_json_string(out: &mut Vec<u8>, text: &str) {
    // Writing a &str to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// Appends `row` as one JSON object on one line (JSON Lines).
pub(crate) fn json_line(out: &mut Vec<u8>, row: &dyn Row) {
    out.push(b'{');
    let mut first = true;
    row.visit(&mut |name, value| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        push_json_string(out, name);
        out.push(b':');
        match value {
            Value::Text(s) => push_json_string(out, s),
            Value::Num(x) if x.is_finite() => push_number(out, x),
            Value::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Num(_) | Value::Empty => out.extend_from_slice(b"null"),
        }
    });
    out.extend_from_slice(b"}\n");
}

/// `row` as a JSON object, for documents that nest rows.
pub(crate) fn json_value(row: &dyn Row) -> serde_json::Value {
    let mut line = Vec::new();
    json_line(&mut line, row);
    serde_json::from_slice(&line).unwrap_or(serde_json::Value::Null)
}

/// Writes rows as CSV, with a header, to `out`.
pub(crate) fn write_rows<'a>(
    out: &mut dyn Write,
    rows: impl IntoIterator<Item = &'a dyn Row>,
    mode: CsvText,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        if i == 0 {
            csv_header(&mut buffer, row, mode);
        }
        csv_line(&mut buffer, row, mode);
    }
    out.write_all(&buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Example;

    impl Row for Example {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("text", Value::Text("a, \"quoted\" word"));
            f("int", Value::Num(8192.0));
            f("float", Value::Num(0.25));
            f("big", Value::Num(1e300));
            f("empty", Value::Empty);
            f("nan", Value::Num(f64::NAN));
            f("yes", Value::Bool(true));
        }
    }

    #[test]
    fn csv_and_json_agree_and_escape() {
        let mut csv = Vec::new();
        csv_header(&mut csv, &Example, CsvText::Neutralised);
        csv_line(&mut csv, &Example, CsvText::Neutralised);
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "text,int,float,big,empty,nan,yes\n\"a, \"\"quoted\"\" word\",8192,0.25,1e300,,,true\n"
        );
        let mut json = Vec::new();
        json_line(&mut json, &Example);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["text"], "a, \"quoted\" word");
        assert_eq!(value["int"], 8192);
        assert_eq!(value["float"], 0.25);
        assert!(value["nan"].is_null() && value["empty"].is_null());
    }

    #[test]
    fn numbers_are_written_as_ryu_writes_them() {
        // Shortest round-trip digits, integers below 2^53 without a fraction, and exponents
        // without a `+`: the form every release of the rows has had.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut checked = 0;
        let special = [
            0.1,
            0.3,
            1e15 + 0.5,
            1e16,
            1e17,
            1e21,
            1e22,
            1e-5,
            1e-6,
            5e-324,
            f64::MAX,
        ];
        let random = std::iter::repeat_with(|| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            f64::from_bits(state)
        });
        for x in special.into_iter().chain(random.take(200_000)) {
            if !x.is_finite() || (x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15) {
                continue;
            }
            let mut cell = Vec::new();
            push_number(&mut cell, x);
            assert_eq!(
                std::str::from_utf8(&cell).unwrap(),
                ryu::Buffer::new().format_finite(x),
                "{x:e}"
            );
            checked += 1;
        }
        assert!(checked > 150_000, "{checked}");
    }

    /// One column of numbers.
    struct Column(f64);

    impl Row for Column {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("x", Value::Num(self.0));
            f("y", Value::Num(2.5));
        }
    }

    #[test]
    fn a_column_repeating_its_number_writes_the_same_text() {
        let values = [
            0.1,
            0.1,
            0.30000000000000004,
            8192.0,
            8192.0,
            f64::NAN,
            8192.0,
            -0.0,
            0.0,
            1.7976931348623157e308,
            1.7976931348623157e308,
        ];
        let mut lines = Vec::new();
        for x in values {
            csv_line(&mut lines, &Column(x), CsvText::Raw);
        }
        let expected: String = values
            .iter()
            .map(|&x| {
                let mut cell = Vec::new();
                push_number(&mut cell, x);
                format!("{},2.5\n", String::from_utf8(cell).unwrap())
            })
            .collect();
        assert_eq!(String::from_utf8(lines).unwrap(), expected);
        assert!(expected.starts_with("0.1,2.5\n0.1,2.5\n0.30000000000000004,2.5\n8192,"));
        // NaN is an empty cell, and -0 is written as the integer it equals.
        assert!(expected.contains("\n,2.5\n8192,2.5\n0,2.5\n0,2.5\n"));
    }

    /// One column of text.
    struct Named<'a>(&'a str);

    impl Row for Named<'_> {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("name", Value::Text(self.0));
        }
    }

    #[test]
    fn a_column_repeating_its_text_writes_the_same_cell() {
        // Held in place with its comma up to 31 bytes; 32 and more are copied from the heap.
        let (long, longer) = ("x".repeat(31), "y".repeat(32));
        let texts = [
            "h100", "h100", "a,b", "a,b", "=1", "h100", "", "h100", &long, &longer, &longer,
        ];
        let mut lines = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            // Modes alternate every two rows: a cell is reused only in its own mode.
            let mode = [CsvText::Neutralised, CsvText::Raw][i / 2 % 2];
            csv_line(&mut lines, &Named(t), mode);
        }
        assert_eq!(
            String::from_utf8(lines).unwrap(),
            format!(
                "h100\nh100\n\"a,b\"\n\"a,b\"\n'=1\nh100\n\nh100\n{long}\n{longer}\n{longer}\n"
            )
        );
    }

    struct Formulas;

    impl Row for Formulas {
        fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
            f("eq", Value::Text("=HYPERLINK(\"http://x\")"));
            f("plus", Value::Text("+1"));
            f("minus", Value::Text("-1"));
            f("at", Value::Text("@SUM(A1)"));
            f("tab", Value::Text("\t=1"));
            f("cr", Value::Text("\r=1"));
            f("inner", Value::Text("a=1"));
            f("negative", Value::Num(-2.5));
            f("int", Value::Int(3));
        }
    }

    #[test]
    fn formula_like_text_is_neutralised_and_numbers_are_not() {
        let line = |mode| {
            let mut csv = Vec::new();
            csv_line(&mut csv, &Formulas, mode);
            String::from_utf8(csv).unwrap()
        };
        assert_eq!(
            line(CsvText::Neutralised),
            "\"'=HYPERLINK(\"\"http://x\"\")\",'+1,'-1,'@SUM(A1),'\t=1,\"'\r=1\",a=1,-2.5,3\n"
        );
        assert_eq!(
            line(CsvText::Raw),
            "\"=HYPERLINK(\"\"http://x\"\")\",+1,-1,@SUM(A1),\t=1,\"\r=1\",a=1,-2.5,3\n"
        );
        let mut json = Vec::new();
        json_line(&mut json, &Formulas);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["eq"], "=HYPERLINK(\"http://x\")");
        assert_eq!(value["minus"], "-1");
        assert_eq!(value["negative"], -2.5);
    }
}
