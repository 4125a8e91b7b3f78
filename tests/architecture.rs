//! The doors of docs/ARCHITECTURE.md, checked from the source: every `crate::` and `super::`
//! path in every file under `src/`, in `use` lines (grouped ones too) and inline in code, is
//! resolved to the module that defines what it names (through the `use` lines that re-export
//! it), and then
//!
//! - (a) a file of a wing names only its own wing or wings below it:
//!   cli > ui > export > study > core > base (`main.rs` and `lib.rs` are the doors themselves);
//! - (b) a module of `study` names only `study` modules on lower floors of [`STUDY_FLOORS`];
//! - (c) the same for `export` and [`EXPORT_FLOORS`];
//! - (d) no files of one folder of the wings in [`LOOP_FREE`] name each other in a loop.
//!
//! A path counts twice: as written (the module it goes through) and as resolved (the module
//! that defines the item), so a re-export cannot carry a door upward. `super::` and `self::`
//! paths within one module of a floor are free. Comments and string literals are not code
//! and are skipped. Every offence is printed as `file:line: path`. Two more tests check the
//! reader and each rule on a small made-up crate, so that the check itself cannot pass by
//! finding nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The wings, lowest first.
const WINGS: [&str; 6] = ["base", "core", "study", "export", "ui", "cli"];

/// The floors of `study`, lowest first: a module names only modules on floors below its own.
const STUDY_FLOORS: &[&[&str]] = &[
    // Facts a question starts from: the 80 % band's calibration, a request and its KV
    // cache's trip, the model list, scenario files, a prompt's images and their encoder.
    &["band", "request", "models", "scenario_file", "images"],
    // Layouts a fleet may take, priced and banded.
    &["plan"],
    // Requests arriving over time, each iteration priced.
    &["simulate"],
    // Serving in steady state: surveys, frontiers, fleets under SLOs (checked by simulating).
    &["serving"],
    // Predictions against measured cases (serving rows priced by the steady state).
    &["validate"],
    // Constants fitted to the measured cases, and their cross-validation.
    &["fit"],
    // Questions no other study module asks.
    &[
        "sweep", "compare", "fix", "lever", "check", "import", "ingest",
    ],
];

/// The floors of `export`, lowest first: every command's output on the top floor, over the
/// pieces they share.
const EXPORT_FLOORS: &[&[&str]] = &[
    // Leaves: files written whole, names escaped, a table's style, numbers and bands as
    // tables show them, cost words, advice lines, the row kinds and their CSV and JSON.
    &[
        "atomic", "escape", "style", "numbers", "costs", "advice", "rows",
    ],
    // Over rows and a table's style: the output formats, a row's typed cells, the row
    // filter, what a step's tables say beside their numbers, serving engines' launch lines.
    &["format", "cells", "filter", "step", "launch"],
    // Rows cut to a shape, the best rows of a stream, rows as typed columns and as Parquet.
    &["shaped", "top", "typed", "parquet"],
    // A list of rows in the format asked, whole or cut to a shape.
    &["list"],
    // One module per command's output; none imports another.
    &[
        "run",
        "compare",
        "plan",
        "validate",
        "chips",
        "prices",
        "engines",
        "workloads",
        "serving",
        "simulate",
        "fit",
        "ingest",
        "bench",
        "band",
        "document",
        "svg",
        "stream",
    ],
];

/// The wings whose folders must be free of loops between sibling files (rule (d)). `base`
/// and `ui` have none either; `core` (chip and cost, scenario and timing, files inside
/// `timing` and `workload`) and `cli` (a knot around `args.rs`) still have some, and join
/// this list once those are broken.
const LOOP_FREE: [&str; 3] = ["study", "export", "cli"];

#[test]
fn doors_open_downward_only() {
    let source = Source::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut offences = Vec::new();
    offences.extend(wing_offences(&source));
    for (wing, floors) in [("study", STUDY_FLOORS), ("export", EXPORT_FLOORS)] {
        offences.extend(floor_offences(&source, wing, floors));
    }
    for wing in LOOP_FREE {
        offences.extend(sibling_loops(&source, wing));
    }
    assert!(
        offences.is_empty(),
        "{} door(s) open the wrong way:\n{}",
        offences.len(),
        offences.join("\n")
    );
}

#[test]
fn the_reader_finds_paths_in_use_lines_and_in_code_only() {
    let text = r#"
//! A doc naming crate::cli::Nothing.
use crate::{study::band::{self, Band}, core::chip::Chip as C};
use super::sibling::*;
fn f<'a>(x: &'a str) -> f64 {
    let s = "crate::export::not_a_path \" crate::ui::nor_this";
    let c = '"'; // crate::ui::nor_this
    /* crate::cli::nor_that */
    crate::study::fit::cross::residuals_of(x) + super::super::plan::y()
}
mod tests {
    use super::f;
}
"#;
    let module: Vec<String> = ["study", "serving", "slo"].map(String::from).to_vec();
    let scan = scan(&tokens(&code_only(text)), &module, &BTreeSet::new());
    let found: Vec<(usize, &str, String)> = (scan.paths.iter())
        .map(|(line, written, absolute)| (*line, written.as_str(), absolute.join("::")))
        .collect();
    let expected = [
        (3, "crate::study::band", "study::band"),
        (3, "crate::study::band::Band", "study::band::Band"),
        (3, "crate::core::chip::Chip", "core::chip::Chip"),
        (4, "super::sibling", "study::serving::sibling"),
        (
            9,
            "crate::study::fit::cross::residuals_of",
            "study::fit::cross::residuals_of",
        ),
        (9, "super::super::plan::y", "study::plan::y"),
        (12, "super::f", "study::serving::slo::f"),
    ];
    let expected: Vec<(usize, &str, String)> = (expected.iter())
        .map(|(line, written, absolute)| (*line, *written, absolute.to_string()))
        .collect();
    assert_eq!(found, expected);
    let slo = &scan.modules[&module];
    assert_eq!(slo.bindings["C"].join("::"), "core::chip::Chip");
    assert_eq!(slo.bindings["band"].join("::"), "study::band");
    assert!(slo.items.contains("f") && slo.items.contains("tests"));
}

#[test]
fn each_rule_finds_a_door_opened_the_wrong_way() {
    let files = [
        ("lib.rs", "mod export; mod study; use crate::export::write;"),
        ("export/mod.rs", "pub fn write() {}"),
        (
            "study/mod.rs",
            "pub mod request; pub mod serving; pub mod simulate;",
        ),
        // A re-export of a higher floor's item is as much a door upward.
        (
            "study/request.rs",
            "pub struct KvLink;\npub use crate::study::serving::serve;",
        ),
        (
            "study/serving/mod.rs",
            "mod checked; mod slo;\npub use crate::study::request::KvLink;\npub fn serve() {}",
        ),
        (
            "study/serving/checked.rs",
            "use super::slo::Fleet;\npub struct Simulated;",
        ),
        (
            "study/serving/slo.rs",
            "use super::{checked::Simulated, KvLink};\npub struct Fleet;",
        ),
        // Named through serving, which re-exports it from a lower floor: still serving's.
        (
            "study/simulate.rs",
            "use crate::study::serving::KvLink;\nfn f() { crate::export::write() }",
        ),
    ];
    let source = Source::of(files.map(|(p, t)| (p.to_owned(), t.to_owned())).to_vec());
    let floors: &[&[&str]] = &[&["request"], &["simulate"], &["serving"]];
    assert_eq!(
        wing_offences(&source),
        ["src/study/simulate.rs:2: crate::export::write (names a wing above its own)"]
    );
    assert_eq!(
        floor_offences(&source, "study", floors),
        [
            "src/study/request.rs:2: crate::study::serving::serve (names a module on a higher \
             floor)",
            "src/study/simulate.rs:1: crate::study::serving::KvLink (names a module on a higher \
             floor)",
        ]
    );
    let loops = sibling_loops(&source, "study");
    assert_eq!(loops.len(), 2, "{loops:#?}");
    assert!(loops[0].starts_with("files of src/study name each other in a loop: request, serving"));
    assert!(loops[1].starts_with(
        "files of src/study/serving name each other in a loop: checked, slo\n    checked -> \
         slo: src/study/serving/checked.rs:1: super::slo::Fleet"
    ));
}

/// Rule (a): a wing names only wings on or below its own floor.
fn wing_offences(source: &Source) -> Vec<String> {
    let rank = |name: &str| WINGS.iter().position(|w| *w == name);
    let mut offences = Vec::new();
    for (file, reference) in source.references() {
        let Some(own) = file.module.first().and_then(|w| rank(w)) else {
            continue; // main.rs and lib.rs
        };
        for target in [&reference.named, &reference.resolved] {
            if let Some(other) = target.first().and_then(|w| rank(w)) {
                if other > own {
                    offences.push(reference.offence(file, "names a wing above its own"));
                    break;
                }
            }
        }
    }
    offences
}

/// Rules (b) and (c): a module of `wing` names only modules of `wing` on lower floors, never
/// an item of the wing's own root (which sits above every floor).
fn floor_offences(source: &Source, wing: &str, floors: &[&[&str]]) -> Vec<String> {
    let floor_of = |name: &str| floors.iter().position(|f| f.contains(&name));
    let mut offences = Vec::new();
    let mut modules: Vec<&str> = floors.iter().flat_map(|f| f.iter().copied()).collect();
    modules.sort_unstable();
    let listed: BTreeSet<&str> = modules.iter().copied().collect();
    if listed.len() != modules.len() {
        offences.push(format!("{wing}: a module is on two floors: {modules:?}"));
    }
    let present: BTreeSet<&str> = (source.modules.keys())
        .filter(|m| m.len() == 2 && m[0] == wing)
        .map(|m| m[1].as_str())
        .collect();
    for missing in present.difference(&listed) {
        offences.push(format!(
            "{wing}::{missing} is on no floor: add it to the list"
        ));
    }
    for gone in listed.difference(&present) {
        offences.push(format!("{wing}::{gone} is on a floor but is no module"));
    }
    for (file, reference) in source.references() {
        if file.module.len() < 2 || file.module[0] != wing {
            continue; // outside the wing, or its root (declarations and re-exports)
        }
        let own = &file.module[1];
        let Some(own_floor) = floor_of(own) else {
            continue;
        };
        for target in [&reference.named, &reference.resolved] {
            if target.first().map(String::as_str) != Some(wing) {
                continue;
            }
            let Some(other) = target.get(1) else {
                offences.push(reference.offence(
                    file,
                    "names the wing's root: name the module that holds the item",
                ));
                break;
            };
            if other == own {
                continue;
            }
            match floor_of(other) {
                Some(f) if f < own_floor => {}
                Some(f) if f == own_floor => {
                    offences.push(reference.offence(file, "names a module on its own floor"));
                    break;
                }
                _ => {
                    offences.push(reference.offence(file, "names a module on a higher floor"));
                    break;
                }
            }
        }
    }
    offences
}

/// Rule (d): the files of one folder under `wing` name each other without a loop.
fn sibling_loops(source: &Source, wing: &str) -> Vec<String> {
    // Per folder (a parent module): sibling -> sibling -> where.
    type Edges = BTreeMap<String, BTreeMap<String, Vec<String>>>;
    let mut folders: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
    for (file, reference) in source.references() {
        if file.module.first().map(String::as_str) != Some(wing) {
            continue;
        }
        let (parent, own) = file.module.split_at(file.module.len() - 1);
        let siblings: BTreeSet<&String> = [&reference.named, &reference.resolved]
            .into_iter()
            .filter(|t| t.len() > parent.len() && t.starts_with(parent))
            .map(|t| &t[parent.len()])
            .filter(|s| **s != own[0])
            .collect();
        for sibling in siblings {
            let edges = folders.entry(parent.to_vec()).or_default();
            let to = edges.entry(own[0].clone()).or_default();
            let at = to.entry(sibling.clone()).or_default();
            at.push(format!(
                "{}:{}: {}",
                file.path, reference.line, reference.written
            ));
        }
    }
    let mut offences = Vec::new();
    for (parent, edges) in &folders {
        for component in loops(edges) {
            let mut text = format!(
                "files of src/{} name each other in a loop: {}",
                parent.join("/"),
                component.iter().cloned().collect::<Vec<_>>().join(", ")
            );
            for (from, tos) in edges.iter().filter(|(f, _)| component.contains(*f)) {
                for (to, at) in tos.iter().filter(|(t, _)| component.contains(*t)) {
                    text += &format!("\n    {from} -> {to}: {}", at.join("; "));
                }
            }
            offences.push(text);
        }
    }
    offences
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn loops<V>(edges: &BTreeMap<String, BTreeMap<String, V>>) -> Vec<BTreeSet<String>> {
    struct Walk<'a, V> {
        edges: &'a BTreeMap<String, BTreeMap<String, V>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'a, V> Walk<'a, V> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flat_map(|t| t.keys()) {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    component.insert(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

/// The crate's files and, per module, the names its `use` lines bind and the items it
/// defines.
struct Source {
    files: Vec<File>,
    modules: BTreeMap<Vec<String>, Module>,
}

#[derive(Default)]
struct Module {
    /// Name -> absolute path, from `use` lines (`as` renames included).
    bindings: BTreeMap<String, Vec<String>>,
    /// Absolute paths of `use x::*` lines.
    globs: Vec<Vec<String>>,
    /// Names of items defined here.
    items: BTreeSet<String>,
}

struct File {
    /// `src/...`, with `/`.
    path: String,
    /// The file's module (`["study", "band"]`; empty for `lib.rs` and `main.rs`).
    module: Vec<String>,
    references: Vec<Reference>,
}

/// One path a file names.
struct Reference {
    line: usize,
    /// As written, with its prefix (`crate::study::band::Band`, `super::Server`).
    written: String,
    /// The module the path goes through as written, made absolute.
    named: Vec<String>,
    /// The module that defines what it names, through re-exports.
    resolved: Vec<String>,
}

impl Reference {
    fn offence(&self, file: &File, why: &str) -> String {
        format!("{}:{}: {} ({why})", file.path, self.line, self.written)
    }
}

impl Source {
    /// Every `.rs` file under `src`.
    fn read(src: &Path) -> Source {
        let mut paths = Vec::new();
        collect_rs(src, &mut paths);
        paths.sort();
        let files = (paths.into_iter())
            .map(|path| {
                let relative = path.strip_prefix(src).unwrap().to_string_lossy();
                let relative = relative.replace('\\', "/");
                let text = std::fs::read_to_string(&path).unwrap();
                (relative, text)
            })
            .collect();
        Source::of(files)
    }

    /// `files` as (path under `src/`, text).
    fn of(files: Vec<(String, String)>) -> Source {
        let module_of = |relative: &str| {
            let mut module: Vec<String> = relative.split('/').map(str::to_owned).collect();
            let last = module.pop().unwrap();
            match last.as_str() {
                "mod.rs" => {}
                "lib.rs" | "main.rs" if module.is_empty() => {}
                _ => module.push(last.trim_end_matches(".rs").to_owned()),
            }
            module
        };
        let file_modules: BTreeSet<Vec<String>> =
            files.iter().map(|(path, _)| module_of(path)).collect();
        let mut modules: BTreeMap<Vec<String>, Module> = BTreeMap::new();
        let mut parsed = Vec::new();
        for (relative, text) in files {
            let module = module_of(&relative);
            let scan = scan(&tokens(&code_only(&text)), &module, &file_modules);
            for (name, found) in scan.modules {
                let entry = modules.entry(name).or_default();
                entry.bindings.extend(found.bindings);
                entry.globs.extend(found.globs);
                entry.items.extend(found.items);
            }
            parsed.push((format!("src/{relative}"), module, scan.paths));
        }
        let mut source = Source {
            files: Vec::new(),
            modules,
        };
        for (path, module, paths) in parsed {
            let references = (paths.into_iter())
                .map(|(line, written, absolute)| Reference {
                    line,
                    named: source.module_prefix(&absolute).to_vec(),
                    resolved: source.resolve(&absolute, 0),
                    written,
                })
                .collect();
            source.files.push(File {
                path,
                module,
                references,
            });
        }
        source
    }

    fn references(&self) -> impl Iterator<Item = (&File, &Reference)> {
        (self.files.iter()).flat_map(|f| f.references.iter().map(move |r| (f, r)))
    }

    /// The longest prefix of `path` that is a module.
    fn module_prefix<'p>(&self, path: &'p [String]) -> &'p [String] {
        let n = (0..=path.len())
            .rev()
            .find(|n| self.modules.contains_key(&path[..*n]))
            .unwrap_or(0);
        &path[..n]
    }

    /// The module that defines what `path` names, following `use` bindings.
    fn resolve(&self, path: &[String], depth: usize) -> Vec<String> {
        let module = self.module_prefix(path);
        let Some(name) = path.get(module.len()) else {
            return module.to_vec();
        };
        if depth > 16 {
            return module.to_vec();
        }
        let found = &self.modules[module];
        if found.items.contains(name) {
            return module.to_vec();
        }
        if let Some(target) = found.bindings.get(name) {
            let mut next = target.clone();
            next.extend_from_slice(&path[module.len() + 1..]);
            return self.resolve(&next, depth + 1);
        }
        for glob in &found.globs {
            let Some(inner) = self.modules.get(glob) else {
                continue; // an enum's variants
            };
            let mut child = glob.clone();
            child.push(name.clone());
            if inner.items.contains(name)
                || inner.bindings.contains_key(name)
                || self.modules.contains_key(&child)
            {
                child.extend_from_slice(&path[module.len() + 1..]);
                return self.resolve(&child, depth + 1);
            }
        }
        module.to_vec()
    }
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with comments and the insides of string and character literals blanked (newlines
/// kept, so lines keep their numbers).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_at(&chars, i) {
            // r"...", r#"..."#, br#"..."#: no escapes, ends at a quote and as many #.
            let open = chars[i..].iter().position(|c| *c == '"').unwrap() + i;
            out.push('"');
            i = open + 1;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < chars.len() && !chars[i..].starts_with(&close) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push('"');
            i += close.len();
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{1b}'); a lifetime ('a) has no closing quote.
            out.push('\'');
            i += 1;
            if chars[i] == '\\' {
                i += 1;
                out.push(' ');
            }
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push('\'');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string literal starting at `i`, if one does.
fn raw_string_at(chars: &[char], i: usize) -> Option<usize> {
    let before = i.checked_sub(1).map(|j| chars[j]);
    if before.is_some_and(|b| b.is_alphanumeric() || b == '_') {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some(hashes)
}

/// A token: an identifier, `::`, or one punctuation character; with its line.
struct Token {
    text: String,
    line: usize,
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let text = chars[start..i].iter().collect();
            out.push(Token { text, line });
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: c.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

/// What one file says: per module it holds (itself and its inline modules), the names its
/// `use` lines bind and the items it defines; and every path it names, made absolute.
#[derive(Default)]
struct Scan {
    modules: BTreeMap<Vec<String>, Module>,
    /// (line, as written, absolute).
    paths: Vec<(usize, String, Vec<String>)>,
}

const ITEM_KEYWORDS: [&str; 9] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
];

fn scan(tokens: &[Token], file_module: &[String], files: &BTreeSet<Vec<String>>) -> Scan {
    let mut scan = Scan::default();
    scan.modules.entry(file_module.to_vec()).or_default();
    // Inline modules open: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    let current = |inline: &[(String, usize)]| {
        let mut m = file_module.to_vec();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    while i < tokens.len() {
        let t = tokens[i].text.as_str();
        let next = tokens.get(i + 1).map(|t| t.text.as_str());
        match t {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "use" => {
                let module = current(&inline);
                let end = (i..tokens.len())
                    .find(|j| tokens[*j].text == ";")
                    .unwrap_or(tokens.len());
                let mut trees = Vec::new();
                let mut at = i + 1;
                use_tree(&tokens[..end], &mut at, Vec::new(), &mut trees);
                for (segments, binding) in trees {
                    let line = tokens[i].line;
                    let Some(absolute) = absolute(&segments, &module, &scan.modules, files) else {
                        continue;
                    };
                    let entry = scan.modules.entry(module.clone()).or_default();
                    match binding {
                        Binding::Glob => entry.globs.push(absolute.clone()),
                        Binding::Name(name) if name != "_" => {
                            entry.bindings.insert(name, absolute.clone());
                        }
                        Binding::Name(_) => {}
                    }
                    if matches!(segments[0].as_str(), "crate" | "super" | "self") {
                        scan.paths.push((line, segments.join("::"), absolute));
                    }
                }
                i = end;
            }
            "crate" | "super" | "self" if next == Some("::") => {
                let mut segments = vec![t.to_owned()];
                let mut j = i + 1;
                while tokens.get(j).is_some_and(|t| t.text == "::")
                    && tokens.get(j + 1).is_some_and(|t| is_ident(&t.text))
                {
                    segments.push(tokens[j + 1].text.clone());
                    j += 2;
                }
                let module = current(&inline);
                if let Some(absolute) = absolute(&segments, &module, &scan.modules, files) {
                    scan.paths
                        .push((tokens[i].line, segments.join("::"), absolute));
                }
                i = j;
                continue;
            }
            _ if ITEM_KEYWORDS.contains(&t)
                && next.is_some_and(is_ident)
                && (i == 0 || tokens[i - 1].text != "'") =>
            {
                let name = next.unwrap().to_owned();
                let module = current(&inline);
                if t == "mod" && tokens.get(i + 2).is_some_and(|t| t.text == "{") {
                    let mut inner = module.clone();
                    inner.push(name.clone());
                    scan.modules.entry(inner).or_default();
                    inline.push((name.clone(), depth + 1));
                }
                scan.modules.entry(module).or_default().items.insert(name);
            }
            "macro_rules" if next == Some("!") => {
                if let Some(name) = tokens.get(i + 2) {
                    let module = current(&inline);
                    let entry = scan.modules.entry(module).or_default();
                    entry.items.insert(name.text.clone());
                }
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

fn is_ident(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// What a `use` tree's leaf binds.
enum Binding {
    Name(String),
    Glob,
}

/// Parses the use tree at `tokens[*at..]` under `prefix` into (path, binding) leaves.
fn use_tree(
    tokens: &[Token],
    at: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Binding)>,
) {
    let mut path = prefix;
    if tokens.get(*at).is_some_and(|t| t.text == "::") {
        *at += 1; // `use ::std::...`
    }
    while let Some(t) = tokens.get(*at) {
        match t.text.as_str() {
            "{" => {
                *at += 1;
                while tokens.get(*at).is_some_and(|t| t.text != "}") {
                    use_tree(tokens, at, path.clone(), out);
                    if tokens.get(*at).is_some_and(|t| t.text == ",") {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            "*" => {
                *at += 1;
                out.push((path, Binding::Glob));
                return;
            }
            "::" => *at += 1,
            name if is_ident(name) => {
                path.push(name.to_owned());
                *at += 1;
                let follows = tokens.get(*at).map(|t| t.text.as_str());
                if follows == Some("::") {
                    continue;
                }
                let mut bound = name.to_owned();
                if follows == Some("as") {
                    bound = tokens.get(*at + 1).map_or(bound, |t| t.text.clone());
                    *at += 2;
                }
                if bound == "self" {
                    path.pop();
                    bound = path.last().cloned().unwrap_or_default();
                }
                out.push((path, Binding::Name(bound)));
                return;
            }
            _ => return,
        }
    }
}

/// `segments` as a path from the crate's root, for a path written in `module`; none for an
/// external crate's.
fn absolute(
    segments: &[String],
    module: &[String],
    known: &BTreeMap<Vec<String>, Module>,
    files: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut base = module.to_vec();
    let mut rest = segments;
    match segments.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &segments[1..];
        }
        Some("super") | Some("self") => {
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        // A path relative to the module: one of its child modules, or a name it binds.
        Some(first) => {
            let mut child = module.to_vec();
            child.push(first.to_owned());
            let binds = known
                .get(module)
                .is_some_and(|m| m.bindings.contains_key(first));
            if !binds && !files.contains(&child) {
                return None;
            }
            if binds {
                let mut path = known[module].bindings[first].clone();
                path.extend_from_slice(&segments[1..]);
                return Some(path);
            }
        }
        None => return None,
    }
    base.extend_from_slice(rest);
    Some(base)
}
