//! Snapshots of the human outputs: the tables of `run`, `compare`, `plan`, `chips` and
//! `validate`, the Markdown report, and the HTML report's structure. A change to any of them
//! shows up as a diff to review; accept it with `cargo insta accept` (or `INSTA_UPDATE=always
//! cargo test snapshots`) and commit the `.snap` files under tests/snapshots/.

use crate::common::stepcost;
use std::path::Path;

/// Asserts `text` against the snapshot `name` (tests/snapshots/NAME.snap), recording `command`
/// in the snapshot's header.
fn check(name: &str, command: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_description(command);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Runs `stepcost ARGS` from the repository root, asserts success and quiet stderr, returns
/// stdout.
fn human(args: &[&str]) -> String {
    let out = stepcost()
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .assert()
        .success();
    let output = out.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.is_empty(),
        "stepcost {args:?} wrote to stderr: {stderr}"
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Snapshots the stdout of `stepcost ARGS` (ARGS split on spaces).
fn snapshot_stdout(name: &str, args: &str) {
    let split: Vec<&str> = args.split(' ').collect();
    check(name, &format!("stepcost {args}"), &human(&split));
}

#[test]
fn run_table() {
    snapshot_stdout(
        "run_table",
        "run llama-3.1-70b --chip h100-sxm --set batch=32",
    );
}

#[test]
fn run_table_per_op() {
    snapshot_stdout(
        "run_table_per_op",
        "run llama-3.1-70b --chip h100-sxm --set batch=32 --per-op",
    );
}

#[test]
fn run_table_request() {
    snapshot_stdout(
        "run_table_request",
        "run llama-3.1-70b --chip h100-sxm --set batch=32 --request in=512,out=128",
    );
}

#[test]
fn compare_table() {
    snapshot_stdout(
        "compare_table",
        "compare llama-3.1-70b --chip h100-sxm,h200,b200,mi300x --set batch=64 --dtype weight=fp8",
    );
}

#[test]
fn plan_table() {
    snapshot_stdout(
        "plan_table",
        "plan llama-3.1-8b --target-tokens-per-s 10000 --max-ms-per-token 50 \
         --chip h100-sxm,h200,b200,mi300x,l40s",
    );
}

#[test]
fn chips_table() {
    snapshot_stdout("chips_table", "chips");
}

#[test]
fn validate_table() {
    snapshot_stdout("validate_table", "validate validation/measured.csv");
}

const REPORT_ARGS: &str = "report llama-3.1-70b --chip h100-sxm,h200 --set batch=32 --out";

/// Writes `stepcost REPORT_ARGS DIR/FILE` and returns the file's text, with the temporary
/// directory's path (should any appear) replaced by `[TMP]`.
fn report(file: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    let mut args: Vec<&str> = REPORT_ARGS.split(' ').collect();
    args.push(path.to_str().expect("a UTF-8 temporary path"));
    let stdout = human(&args);
    assert!(stdout.is_empty(), "report wrote to stdout: {stdout}");
    let text = std::fs::read_to_string(&path).unwrap();
    text.replace(&dir.path().display().to_string(), "[TMP]")
}

#[test]
fn report_markdown() {
    let text = report("report.md");
    check(
        "report_markdown",
        &format!("stepcost {REPORT_ARGS} DIR/report.md; DIR/report.md"),
        &text,
    );
}

#[test]
fn report_html_structure() {
    let text = report("report.html");
    check(
        "report_html_structure",
        &format!(
            "stepcost {REPORT_ARGS} DIR/report.html; the elements of DIR/report.html, nested, \
             with the text of title, headings and table header cells; the inline SVG elided"
        ),
        &html_structure(&text),
    );
}

/// The element tree of an HTML document, one element a line, indented by depth: the text of
/// `title`, headings and header rows; `p`, `style` and the inline `svg` as leaves (their
/// content elided); a table's data rows as their cell count, runs of alike rows counted.
fn html_structure(html: &str) -> String {
    const VOID: [&str; 6] = ["meta", "link", "br", "hr", "img", "input"];
    const LEAF: [&str; 4] = ["p", "style", "svg", "script"];
    let mut lines: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        rest = &rest[start..];
        let end = rest.find('>').expect("a tag ends") + 1;
        let tag = &rest[..end];
        rest = &rest[end..];
        if tag.starts_with("<!") {
            lines.push(tag.to_owned());
            continue;
        }
        if let Some(name) = tag.strip_prefix("</") {
            let name = name.trim_end_matches('>');
            depth = depth
                .checked_sub(1)
                .unwrap_or_else(|| panic!("stray </{name}>"));
            continue;
        }
        let name: String = tag[1..]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        let indent = "  ".repeat(depth);
        if VOID.contains(&name.as_str()) {
            lines.push(format!("{indent}{name}"));
            continue;
        }
        let close = format!("</{name}>");
        let inner_end = rest.find(&close).unwrap_or_else(|| panic!("no {close}"));
        let line = match name.as_str() {
            "title" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                format!("{indent}{name}: {}", text_of(&rest[..inner_end]))
            }
            "tr" => {
                let row = &rest[..inner_end];
                if row.contains("<th") {
                    let cells: Vec<String> = row
                        .split("<th")
                        .skip(1)
                        .map(|c| text_of(&c[c.find('>').unwrap() + 1..]))
                        .collect();
                    format!("{indent}tr: th [{}]", cells.join(" | "))
                } else {
                    format!("{indent}tr: {} td", row.matches("<td").count())
                }
            }
            leaf if LEAF.contains(&leaf) => {
                let what = if leaf == "svg" {
                    " [inline SVG elided]"
                } else {
                    ""
                };
                format!("{indent}{name}{what}")
            }
            _ => {
                lines.push(format!("{indent}{name}"));
                depth += 1;
                continue;
            }
        };
        // a leaf: its content and closing tag are skipped
        rest = &rest[inner_end + close.len()..];
        lines.push(line);
    }
    assert_eq!(depth, 0, "unclosed elements");
    // runs of alike data rows as one line with a count
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|l| **l == lines[i]).count();
        out.push_str(&lines[i]);
        if run > 1 {
            out.push_str(&format!(" (x{run})"));
        }
        out.push('\n');
        i += run;
    }
    out
}

/// The text inside an element: tags dropped, `&lt;`-style escapes left as written, up to the
/// next `</th>`-like closing tag.
fn text_of(inner: &str) -> String {
    let inner = inner.split("</").next().unwrap_or("");
    let mut text = String::new();
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.trim().to_owned()
}

/// The snapshots directory holds only the snapshots this file asserts: a renamed test leaves
/// no stale file behind.
#[test]
fn no_stale_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let expected = [
        "run_table",
        "run_table_per_op",
        "run_table_request",
        "compare_table",
        "plan_table",
        "chips_table",
        "validate_table",
        "report_markdown",
        "report_html_structure",
    ];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            continue; // a pending change, reported by its own test
        }
        let stem = name.strip_suffix(".snap").unwrap_or(&name);
        assert!(
            expected.contains(&stem),
            "stale snapshot tests/snapshots/{name}"
        );
    }
}
