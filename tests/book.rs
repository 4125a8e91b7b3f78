//! The README and the book (`docs/book/`) hold together: every chapter is in the book's
//! SUMMARY and every SUMMARY entry is a file; every relative link (of these and of the pages
//! beside the book, `docs/*.md`) resolves to a file of the repository and every `#anchor` to a
//! heading of its target (the slugs GitHub and mdBook give); no link is a machine path; and
//! every worked output is either a ```console block, which `tests/worked.rs` runs, or a
//! ```text block marked `<!-- unchecked: why -->`.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The programs a ```console block may run besides stepcost: those `tests/worked.rs`
/// registers. trycmd skips a command whose program it does not know, silently.
const TOOLS: [&str; 4] = ["stepcost", "cat", "cut", "python3"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn book_src() -> PathBuf {
    root().join("docs/book/src")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every Markdown file under the book's `src`, SUMMARY.md included, sorted.
fn book_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![book_src()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The documents whose worked outputs are checked (and links).
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    files.extend(book_files());
    files
}

/// The documents whose links are checked: those above, the reference pages beside the book
/// (`docs/*.md`) and the Python package's README.
fn linked_documents() -> Vec<PathBuf> {
    let mut files = documents();
    let mut beside: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    beside.sort();
    files.extend(beside);
    files.push(root().join("python/README.md"));
    files
}

/// A line of a document with what it is part of.
struct Line<'a> {
    number: usize,
    text: &'a str,
    /// The info string of the fenced block the line is inside (the fences excluded).
    fence: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut fence = None;
    let mut out = Vec::new();
    for (i, text) in text.lines().enumerate() {
        if let Some(info) = text.strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim()),
                Some(_) => None,
            };
            continue;
        }
        out.push(Line {
            number: i + 1,
            text,
            fence,
        });
    }
    out
}

/// The line with its inline code spans blanked, so `[..](..)` in code is no link.
fn without_code(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        } else {
            out.push('`');
        }
    }
    out
}

/// The targets of the inline links and images of a document, with their lines.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for line in lines(text).iter().filter(|l| l.fence.is_none()) {
        let prose = without_code(line.text);
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push((line.number, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    out
}

/// A heading's anchor as GitHub and mdBook make it: the text without its inline markup,
/// lower-cased, letters, digits, `-` and `_` kept, spaces turned into `-`, the rest dropped.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // A link in a heading counts by its text.
    while let Some(open) = rest.find('[') {
        match (rest[open..].find("]("), rest[open..].find(')')) {
            (Some(mid), Some(close)) if mid < close => {
                text.push_str(&rest[..open]);
                text.push_str(&rest[open + 1..open + mid]);
                rest = &rest[open + close + 1..];
            }
            _ => break,
        }
    }
    text.push_str(rest);
    text.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors of a document's headings; a repeated one gets `-1`, `-2`, ... as both tools do.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in lines(text).iter().filter(|l| l.fence.is_none()) {
        let hashes = line.text.chars().take_while(|&c| c == '#').count();
        let Some(heading) = line.text[hashes..].strip_prefix(' ') else {
            continue;
        };
        if hashes == 0 || hashes > 6 {
            continue;
        }
        let base = slug(heading.trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `path` made lexically plain (`a/./b/../c` is `a/c`); None where `..` climbs above the start.
fn plain(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// What is wrong with the links of `document` (a path relative to the repository's root)
/// whose text is `text`, each problem a line of its own.
fn link_problems(document: &Path, text: &str, repository: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let folder = document.parent().unwrap_or(Path::new(""));
    for (line, target) in links(text) {
        let at = format!("{}:{line}: `{target}`", document.display());
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        if file.starts_with('/')
            || file.starts_with('~')
            || file.contains(':')
            || file.contains('\\')
        {
            problems.push(format!("{at} is a machine path, not one in the repository"));
            continue;
        }
        let Some(relative) = plain(&folder.join(file)) else {
            problems.push(format!("{at} leaves the repository"));
            continue;
        };
        let path = repository.join(&relative);
        let target_text = if file.is_empty() {
            text.to_owned()
        } else if path.is_file() {
            // A picture is no text: it exists, and has no headings.
            std::fs::read_to_string(&path).unwrap_or_default()
        } else if path.is_dir() && anchor.is_none() {
            continue;
        } else {
            problems.push(format!("{at}: no file {}", relative.display()));
            continue;
        };
        if let Some(anchor) = anchor {
            let markdown = file.is_empty() || file.ends_with(".md");
            if !markdown || !anchors(&target_text).contains(anchor) {
                problems.push(format!("{at}: no heading with the anchor `#{anchor}`"));
            }
        }
    }
    problems
}

/// What is wrong with the worked outputs of a document: a fence without an info string
/// (trycmd would read it as a test), a `$ ` line outside a checked or marked block, a
/// console block that runs a program the worked examples' test does not run.
fn worked_problems(document: &Path, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let all: Vec<&str> = text.lines().collect();
    let mut open: Option<(usize, &str)> = None;
    for (i, line) in all.iter().enumerate() {
        let at = format!("{}:{}", document.display(), i + 1);
        if let Some(info) = line.strip_prefix("```") {
            open = match open {
                Some(_) => None,
                None => {
                    let info = info.trim();
                    if info.is_empty() {
                        problems.push(format!("{at}: a fence without an info string"));
                    }
                    let before = all[..i].iter().rev().find(|l| !l.trim().is_empty());
                    let marked = before.is_some_and(|l| l.starts_with("<!-- unchecked: "));
                    let first = all.get(i + 1).copied().unwrap_or("");
                    if info == "console" && !first.starts_with("$ ") {
                        problems.push(format!("{at}: a console block starts with its command"));
                    }
                    if marked && info != "text" {
                        problems.push(format!("{at}: an unchecked block is a ```text block"));
                    }
                    Some((i, if marked { "unchecked" } else { info }))
                }
            };
            continue;
        }
        let Some(command) = line.trim_start().strip_prefix("$ ") else {
            continue;
        };
        match open {
            Some((_, "console")) => {
                let program = command
                    .split_whitespace()
                    .find(|word| !word.contains('='))
                    .unwrap_or("");
                if !TOOLS.contains(&program) {
                    problems.push(format!(
                        "{at}: `{program}` is not one of the programs the worked examples run"
                    ));
                }
            }
            Some((_, "unchecked")) => {}
            _ => problems.push(format!(
                "{at}: a worked output outside a ```console block (or a ```text block \
                 marked <!-- unchecked: why -->)"
            )),
        }
    }
    problems
}

/// Every chapter is in SUMMARY.md, and every SUMMARY entry is a file of the book.
#[test]
fn the_summary_lists_every_chapter_and_only_chapters() {
    let summary = book_src().join("SUMMARY.md");
    let listed: BTreeSet<PathBuf> = links(&read(&summary))
        .into_iter()
        .map(|(_, target)| book_src().join(target))
        .collect();
    for entry in &listed {
        assert!(
            entry.is_file(),
            "SUMMARY.md lists {}, which is no file",
            entry.display()
        );
    }
    for chapter in book_files().into_iter().filter(|f| *f != summary) {
        assert!(
            listed.contains(&chapter),
            "SUMMARY.md lacks {}",
            chapter.display()
        );
    }
    assert!(root().join("docs/book/book.toml").is_file());
}

/// Every relative link and anchor of the README, CONTRIBUTING, CHANGELOG, the book and the
/// pages beside it resolves inside the repository.
#[test]
fn every_link_resolves_inside_the_repository() {
    let mut problems = Vec::new();
    for path in linked_documents() {
        let relative = path.strip_prefix(root()).unwrap();
        problems.extend(link_problems(relative, &read(&path), root()));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every worked output is a console block the worked examples' test runs, or a text block
/// that says why it is not checked.
#[test]
fn every_worked_output_is_checked_or_marked() {
    let mut problems = Vec::new();
    for path in documents() {
        let relative = path.strip_prefix(root()).unwrap();
        problems.extend(worked_problems(relative, &read(&path)));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The anchors are GitHub's and mdBook's: punctuation dropped, each space a dash (so two
/// dashes where a dropped `%` stood between spaces), repeats numbered.
#[test]
fn anchors_are_the_slugs_both_tools_make() {
    assert_eq!(slug("The 80 % band"), "the-80--band");
    assert_eq!(
        slug("Bad input, limits and exit codes"),
        "bad-input-limits-and-exit-codes"
    );
    assert_eq!(
        slug("`plan` rows: `tokens_per_s`"),
        "plan-rows-tokens_per_s"
    );
    assert_eq!(
        slug("A serving engine's host work"),
        "a-serving-engines-host-work"
    );
    assert_eq!(slug("4. Memory [latency](x.md)"), "4-memory-latency");
    let text = "# Chip\n```yaml\n# not a heading\n```\n## Chip\n### Chip\n";
    let found: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(found, ["chip", "chip-1", "chip-2"]);
}

/// The checks find what they are for: a missing file, a missing anchor, a machine path, a
/// link out of the repository, and worked outputs nothing checks.
#[test]
fn the_checks_catch_broken_links_and_unchecked_outputs() {
    let repository = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repository.path().join("docs")).unwrap();
    std::fs::write(repository.path().join("docs/there.md"), "# Here\n").unwrap();
    let page = "[a](there.md#here) [b](there.md#gone) [c](missing.md) [d](/etc/passwd) \
                [e](../../out.md) [f](#top) `[g](in-code.md)`\n# Top\n";
    let problems = link_problems(Path::new("docs/page.md"), page, repository.path());
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].contains("`#gone`"));
    assert!(problems[1].contains("no file docs/missing.md"));
    assert!(problems[2].contains("machine path"));
    assert!(problems[3].contains("leaves the repository"));

    let worked = "```\nx\n```\n    $ stepcost chips\n```text\n$ stepcost run\n```\n\
                  <!-- unchecked: slow -->\n```text\n$ stepcost fit\n```\n\
                  ```console\n$ curl example.com\n```\n";
    let problems = worked_problems(Path::new("page.md"), worked);
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].contains("page.md:1: a fence without an info string"));
    assert!(problems[1].contains("page.md:4: a worked output outside"));
    assert!(problems[2].contains("page.md:6: a worked output outside"));
    assert!(problems[3].contains("`curl`"));
}
