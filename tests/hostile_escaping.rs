//! Text from files written into other formats: `import`'s YAML, CSV read by spreadsheets, and
//! Markdown and HTML reports. Whatever a name, key or id holds, the output means only that text
//! (issue 12, defects 2 and 15): the YAML reads back to the same model with the name intact, a
//! CSV cell that a spreadsheet would run as a formula gets a `'` before it (unless
//! `--raw-text`), and a report shows a name as inert text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::snapshot;
use crate::common::{csv_rows, stepcost};

/// Asserts that `after` is `before` with exactly the files `added` (relative paths) new.
fn only_added(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
    added: &[&str],
) {
    let mut expected: Vec<PathBuf> = before.keys().cloned().collect();
    expected.extend(added.iter().map(PathBuf::from));
    expected.sort();
    let listed: Vec<PathBuf> = after.keys().cloned().collect();
    assert_eq!(listed, expected, "the folder's listing changed otherwise");
    for (path, bytes) in before {
        assert!(after[path] == *bytes, "{} changed", path.display());
    }
}

/// Runs `stepcost args` in `dir`; returns (status, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = stepcost().current_dir(dir).args(args).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Text that ends lines, comments and YAML scalars in every way: newlines, `#`, `: `, both
/// quotes, a flow mapping, Unicode line and paragraph separators, NEL, CR, tab and NUL.
const HOSTILE: &str = "evil\ndtypes: {weight: int4}\n# c: d \"q\" 'q' \\ \
    \u{2028}dtypes: {weight: int4}\u{2029}x\u{0085}params: {layers: 1}\r\tname: y\u{0}end";

/// A Llama config, with `extra` fields added before the last brace.
fn llama_config(extra: &str) -> String {
    format!(
        r#"{{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        "vocab_size": 128256, "rms_norm_eps": 1e-5{extra}}}"#
    )
}

/// `text` as a JSON string, which is also a YAML double-quoted one (line and paragraph
/// separators escaped: YAML would read them raw as line breaks).
fn json(text: &str) -> String {
    serde_json::to_string(text)
        .unwrap()
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `import` writes hostile names, keys and paths so that the YAML reads back to the same
/// model (same params, data types and price as the clean config) with the name intact.
#[test]
fn import_keeps_hostile_config_text_inert() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("clean")).unwrap();
    std::fs::create_dir(d.join("hostile")).unwrap();
    let clean = llama_config(r#", "_name_or_path": "org/evil""#);
    let hostile = llama_config(&format!(
        ", \"_name_or_path\": {name}, {key}: {value}, {key2}: 1, \"torch_dtype\": {value}",
        name = json(&format!("org/{HOSTILE}")),
        key = json(HOSTILE),
        value = json(HOSTILE),
        key2 = json("k\u{2028}dtypes: {weight: int4}\u{0085}\n#"),
    ));
    std::fs::write(d.join("clean/config.json"), &clean).unwrap();
    std::fs::write(d.join("hostile/config.json"), &hostile).unwrap();

    let before = snapshot(d);
    let (status, stdout, stderr) = run_in(
        d,
        &["import", "hostile/config.json", "--out", "hostile/w.yaml"],
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("not understood"), "{stderr}");
    let after = snapshot(d);
    only_added(&before, &after, &["hostile/w.yaml"]);
    let (status, _, stderr) = run_in(d, &["import", "clean/config.json", "--out", "clean/w.yaml"]);
    assert_eq!(status, 0, "{stderr}");

    // The same lines as the clean file: nothing ended a comment or added a field.
    let yaml = String::from_utf8(after[Path::new("hostile/w.yaml")].clone()).unwrap();
    let clean_yaml = std::fs::read_to_string(d.join("clean/w.yaml")).unwrap();
    let shape = |text: &str| -> Vec<String> {
        text.split(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}'])
            .map(|l| l.split(':').next().unwrap_or("").to_owned())
            .filter(|k| !k.starts_with('#'))
            .collect()
    };
    assert_eq!(shape(&yaml), shape(&clean_yaml), "{yaml}");
    assert!(!yaml.contains(['\u{0}', '\r', '\t', '\u{2028}', '\u{2029}', '\u{85}']));
    assert!(yaml.contains("# Not understood"), "{yaml}");

    // It loads with the name as it was, and prices exactly like the clean config.
    let source = stepcost::Source::read(&d.join("hostile/w.yaml")).unwrap();
    let workload = stepcost::Workload::load(&source).unwrap();
    assert_eq!(workload.name(), HOSTILE);
    let price = |file: &str| {
        let (status, stdout, stderr) = run_in(
            d,
            &[
                "run", file, "--chip", "h200", "--set", "batch=8", "--format", "json",
            ],
        );
        assert_eq!(status, 0, "{stderr}");
        stdout
    };
    let priced = price("hostile/w.yaml");
    assert_eq!(priced, price("clean/w.yaml"));
    assert!(priced.contains("\"weight_dtype\": \"bf16\""), "{priced}");

    // Every not-understood key is reported as it was.
    let imported = stepcost::internals::import::import(&hostile, "config.json", None).unwrap();
    assert!(imported.not_understood.iter().any(|k| k == HOSTILE));
}

/// Without `_name_or_path`, the name is the config file's stem: a file name is text too.
#[test]
fn import_keeps_a_hostile_file_name_inert() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stem = "m\ndtypes: {weight: int4}\n# \"x\" \u{2028}y";
    let config = format!("{stem}.json");
    std::fs::write(d.join(&config), llama_config("")).unwrap();
    let before = snapshot(d);
    let (status, stdout, stderr) = run_in(d, &["import", &config, "--out", "w.yaml"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.lines().all(|l| l.starts_with("note: ")), "{stderr}");
    let after = snapshot(d);
    only_added(&before, &after, &["w.yaml"]);
    let source = stepcost::Source::read(&d.join("w.yaml")).unwrap();
    assert_eq!(stepcost::Workload::load(&source).unwrap().name(), stem);
    let (status, stdout, stderr) =
        run_in(d, &["run", "w.yaml", "--chip", "h200", "--format", "json"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.contains("\"weight_dtype\": \"bf16\""), "{stdout}");
}

/// The YAML of an ordinary config is as before: the name a plain double-quoted string.
#[test]
fn import_writes_ordinary_names_as_before() {
    let config = llama_config(r#", "_name_or_path": "meta-llama/Llama-3.1-8B", "x": 1"#);
    let imported = stepcost::internals::import::import(&config, "config.json", None).unwrap();
    assert!(
        imported.yaml.starts_with(
            "# Llama-3.1-8B: imported from a Hugging Face config.json (model_type `llama`).\n\
             # Ignored (they change nothing stepcost counts): rms_norm_eps\n\
             # Not understood (left out of the step): x\n\
             name: \"Llama-3.1-8B\"\ntemplate: dense\nparams:\n"
        ),
        "{}",
        imported.yaml
    );
}

/// A copy of the built-in H200 with `name` as its name (a YAML double-quoted string).
fn chip_file(path: &Path, name: &str) {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("hardware/h200.yaml"))
            .unwrap();
    let text = text.replace(
        "\nname: NVIDIA H200 SXM\n",
        &format!("\nname: {}\n", json(name)),
    );
    assert!(text.contains(&json(name)));
    std::fs::write(path, text).unwrap();
}

const HYPERLINK: &str = "=HYPERLINK(\"http://x\")";
const CMD: &str = "=cmd|' /C calc'!A0";
/// A chip file whose stem, the chip's id in every row, is a formula.
const FORMULA_CHIP: &str = "@SUM(1+1)";

/// A folder with a chip named `=HYPERLINK(...)` in `evil.yaml`, the H200 again as
/// `@SUM(1+1).yaml`, and a case file whose case id is `=cmd|...`, measured so that its
/// error is negative.
fn spreadsheet_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    chip_file(&dir.path().join("evil.yaml"), HYPERLINK);
    chip_file(
        &dir.path().join(format!("{FORMULA_CHIP}.yaml")),
        "NVIDIA H200 SXM",
    );
    std::fs::write(
        dir.path().join("cases.csv"),
        format!(
            "id,chip,workload,params,dtypes,fusion,request,tp,metric,measured,kind,source,notes\n\
             \"{CMD}\",h200,gemm,,,,,1,step_time_us,2000,kernel,-test,\n"
        ),
    )
    .unwrap();
    dir
}

/// Runs a command that writes to stdout and must change no file; returns its stdout.
fn stdout_of(dir: &Path, args: &[&str]) -> String {
    let before = snapshot(dir);
    let (status, stdout, stderr) = run_in(dir, args);
    assert_eq!(status, 0, "stepcost {}: {stderr}", args.join(" "));
    assert!(stderr.is_empty(), "stepcost {}: {stderr}", args.join(" "));
    only_added(&before, &snapshot(dir), &[]);
    stdout
}

/// Every cell of `column` in CSV `text`.
fn column(text: &str, name: &str) -> Vec<String> {
    let (header, rows) = csv_rows(text);
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column `{name}` in {header:?}"));
    rows.into_iter().map(|r| r[i].clone()).collect()
}

#[test]
fn csv_neutralises_formulas_in_chip_names_and_case_ids() {
    let dir = spreadsheet_folder();
    let d = dir.path();
    let chips = stdout_of(d, &["chips", "./evil.yaml", "--format", "csv"]);
    let neutral = format!("'{HYPERLINK}");
    assert!(
        column(&chips, "name").iter().all(|n| *n == neutral),
        "{chips}"
    );
    let raw = stdout_of(
        d,
        &["chips", "./evil.yaml", "--format", "csv", "--raw-text"],
    );
    assert!(column(&raw, "name").iter().all(|n| n == HYPERLINK), "{raw}");
    // JSON is not a spreadsheet: names stay as they are.
    let json = stdout_of(d, &["chips", "./evil.yaml", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value[0]["name"], HYPERLINK);
    // Numbers are written from numbers: the same in both.
    assert_eq!(column(&chips, "peak_tflops"), column(&raw, "peak_tflops"));

    let cases = stdout_of(d, &["validate", "cases.csv", "--format", "csv"]);
    assert_eq!(column(&cases, "id"), [format!("'{CMD}")], "{cases}");
    assert_eq!(column(&cases, "source"), ["'-test"], "{cases}");
    let error = &column(&cases, "error")[0];
    assert!(
        error.starts_with('-') && error.parse::<f64>().unwrap() < 0.0,
        "{cases}"
    );
    let raw = stdout_of(
        d,
        &["validate", "cases.csv", "--format", "csv", "--raw-text"],
    );
    assert_eq!(column(&raw, "id"), [CMD], "{raw}");
    assert_eq!(column(&raw, "error"), column(&cases, "error"));
    let json = stdout_of(d, &["validate", "cases.csv", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["cases"][0]["id"], CMD);
    assert!(value["cases"][0]["error"].as_f64().unwrap() < 0.0);
}

/// Every command that writes CSV neutralises a formula-like chip id, and keeps it raw with
/// `--raw-text`.
#[test]
fn every_csv_command_neutralises_and_raw_text_keeps() {
    let dir = spreadsheet_folder();
    let d = dir.path();
    let chip = format!("./{FORMULA_CHIP}.yaml");
    let commands: Vec<Vec<&str>> = vec![
        vec!["run", "gemm", "--chip", &chip, "--format", "csv"],
        vec![
            "run", "gemm", "--chip", &chip, "--per-op", "--format", "csv",
        ],
        vec!["compare", "gemm", "--chip", &chip, "--format", "csv"],
        vec!["sweep", "gemm", "--chip", &chip, "--set", "m=1,2"],
        vec![
            "sweep", "gemm", "--chip", &chip, "--per-op", "--format", "csv",
        ],
        vec![
            "plan",
            "llama-3.1-8b",
            "--target-tokens-per-s",
            "1000",
            "--chip",
            &chip,
            "--format",
            "csv",
        ],
        vec!["chips", &chip, "--format", "csv"],
    ];
    for args in commands {
        let neutral = stdout_of(d, &args);
        let cells = column(&neutral, "chip");
        assert!(!cells.is_empty(), "{neutral}");
        assert!(
            cells.iter().all(|c| *c == format!("'{FORMULA_CHIP}")),
            "stepcost {}: {neutral}",
            args.join(" ")
        );
        let mut raw_args = args.clone();
        raw_args.push("--raw-text");
        let raw = stdout_of(d, &raw_args);
        assert!(
            column(&raw, "chip").iter().all(|c| c == FORMULA_CHIP),
            "stepcost {}: {raw}",
            raw_args.join(" ")
        );
        // Only the text cell differs.
        assert_eq!(
            neutral.replace(&format!("'{FORMULA_CHIP}"), FORMULA_CHIP),
            raw
        );
    }
    // A sweep's JSON Lines keep the id as it is.
    let json = stdout_of(d, &["sweep", "gemm", "--chip", &chip, "--format", "json"]);
    let row: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(row["chip"], FORMULA_CHIP);
}

/// A file written with `--out` is neutralised the same, and is the only file that changes.
#[test]
fn a_csv_file_written_with_out_is_neutralised() {
    let dir = spreadsheet_folder();
    let d = dir.path();
    let before = snapshot(d);
    let (status, stdout, stderr) = run_in(
        d,
        &[
            "validate",
            "cases.csv",
            "--format",
            "csv",
            "--out",
            "report.csv",
        ],
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.lines().all(|l| l.starts_with("note: ")), "{stderr}");
    let after = snapshot(d);
    only_added(&before, &after, &["report.csv"]);
    let text = String::from_utf8(after[Path::new("report.csv")].clone()).unwrap();
    assert_eq!(column(&text, "id"), [format!("'{CMD}")]);
}

/// `--raw-text` is on every command that writes CSV, and its help says what it keeps.
#[test]
fn raw_text_is_documented_on_every_csv_command() {
    for command in ["run", "compare", "sweep", "plan", "chips", "validate"] {
        let (status, stdout, stderr) = run_in(Path::new("."), &[command, "--help"]);
        assert_eq!(status, 0, "{stderr}");
        assert!(
            stdout.contains("--raw-text") && stdout.contains("formula"),
            "stepcost {command} --help: {stdout}"
        );
    }
}

/// A name that is markup in Markdown and HTML: a script, a table cell's end, emphasis, a
/// link, code, an entity, a heading after a newline, a line separator.
const MARKUP: &str = "<script>alert(1)</script> | *x* _y_ [l](http://x) `c` &amp;\n# h\u{2028}i";

#[test]
fn reports_show_hostile_names_as_inert_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chip_file(&d.join("chip.yaml"), MARKUP);
    let workload =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/gemm.yaml"))
            .unwrap()
            .replace(
                "\nname: gemm [m x k] x [k x n]\n",
                &format!("\nname: {}\n", json(&format!("</title>{MARKUP}"))),
            );
    std::fs::write(d.join("w.yaml"), workload).unwrap();

    let before = snapshot(d);
    let (status, stdout, stderr) = run_in(
        d,
        &["report", "w.yaml", "--chip", "./chip.yaml", "--out", "r.md"],
    );
    assert_eq!(status, 0, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.lines().all(|l| l.starts_with("note: ")), "{stderr}");
    let after = snapshot(d);
    only_added(&before, &after, &["r.md", "r.svg"]);
    let md = String::from_utf8(after[Path::new("r.md")].clone()).unwrap();
    let escaped = "\\<script\\>alert(1)\\</script\\> \\| \\*x\\* \\_y\\_ \\[l\\](http://x) \
                   \\`c\\` \\&amp;\\\\n\\# h\\\\u{2028}i";
    assert!(md.contains(&format!("| {escaped} |")), "{md}");
    assert!(md.contains(&format!("## Kernels on {escaped}\n")), "{md}");
    assert!(
        md.starts_with(&format!("# \\</title\\>{escaped} on chip\n")),
        "{md}"
    );
    // A table's rows have as many cells as its header: no name ends one early.
    let mut header_pipes = None;
    for line in md.lines() {
        assert!(!line.starts_with("# h"), "a name began a heading: {md}");
        if !line.starts_with('|') {
            header_pipes = None;
            continue;
        }
        let pipes = line.replace("\\|", "").matches('|').count();
        assert_eq!(pipes, *header_pipes.get_or_insert(pipes), "{line}");
    }
    let svg = String::from_utf8(after[Path::new("r.svg")].clone()).unwrap();
    assert!(!svg.contains("<script"), "{svg}");

    let before = after;
    let (status, _, stderr) = run_in(
        d,
        &[
            "report",
            "w.yaml",
            "--chip",
            "./chip.yaml",
            "--out",
            "r.html",
        ],
    );
    assert_eq!(status, 0, "{stderr}");
    let after = snapshot(d);
    only_added(&before, &after, &["r.html"]);
    let html = String::from_utf8(after[Path::new("r.html")].clone()).unwrap();
    assert!(!html.contains("<script"), "{html}");
    assert_eq!(html.matches("</title>").count(), 1, "{html}");
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt; | *x* _y_ [l](http://x) `c` \
                   &amp;amp;\\n# h\\u{2028}i";
    assert!(html.contains(&format!("<th>{escaped}</th>")), "{html}");
    assert!(
        html.contains(&format!("<title>&lt;/title&gt;{escaped} on chip</title>")),
        "{html}"
    );
}

/// A name with quotes is escaped in HTML text; a kernel shown as code keeps its backticks
/// whatever the name holds.
#[test]
fn html_escapes_quotes_in_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    chip_file(&d.join("chip.yaml"), "a\"b'c");
    let (status, _, stderr) = run_in(
        d,
        &["report", "gemm", "--chip", "./chip.yaml", "--out", "r.html"],
    );
    assert_eq!(status, 0, "{stderr}");
    let html = std::fs::read_to_string(d.join("r.html")).unwrap();
    assert!(html.contains("<th>a&quot;b&#39;c</th>"), "{html}");
}

/// A terminal never receives an escape sequence or a line separator from a name: the human
/// tables show them as escapes, and the table's own lines stay.
#[test]
fn tables_show_control_characters_in_names_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    chip_file(
        &dir.path().join("evil.yaml"),
        "evil \u{1b}[31mRED\u{1b}[0m\u{2028}chip",
    );
    let before = snapshot(dir.path());
    for args in [
        &["run", "gemm", "--chip", "evil.yaml"][..],
        &["compare", "gemm", "--chip", "evil.yaml,h200"][..],
    ] {
        let (status, stdout, stderr) = run_in(dir.path(), args);
        assert_eq!(status, 0, "{args:?}: {stderr}");
        assert!(
            !stdout.contains('\u{1b}') && !stdout.contains('\u{2028}'),
            "{stdout}"
        );
        assert!(
            stdout.contains("evil \\u{1b}[31mRED\\u{1b}[0m\\u{2028}chip") || args[0] == "compare",
            "{stdout}"
        );
        assert!(stdout.lines().count() > 2, "{stdout}");
    }
    only_added(&before, &snapshot(dir.path()), &[]);
}
