//! Names as inert text in each markup: a chip's, a workload's, a kernel's or a param's name
//! comes from a file or the command line, so before it goes into a Markdown or HTML document it
//! is escaped to mean only itself. A control character or a line or paragraph separator is
//! shown as its escape (`\n`, `\u{2028}`), so a name can never end a line, a table cell or a
//! heading; Markdown backslash-escapes every character it could read as markup; HTML escapes
//! `& < > " '`.

use crate::base::text::shown_as_is;

/// A name's characters, each unshown one replaced by its escape.
fn visible(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if shown_as_is(c) {
            out.push(c);
        } else {
            out.extend(c.escape_debug());
        }
    }
    out
}

/// A name as inert Markdown text: every character Markdown or HTML could read as markup
/// backslash-escaped, except `_` inside a word (between letters or digits it can neither open
/// nor close emphasis, and `kv_heads` stays readable in the source).
pub(super) fn markdown_name(text: &str) -> String {
    let chars = visible(text);
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(char::is_ascii_alphanumeric)
    };
    let mut out = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        let inside_word = word(i.checked_sub(1)) && word(Some(i + 1));
        match c {
            '_' if inside_word => {}
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '&' | '"' | '\'' | '~' | '$'
            | '#' => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

/// A name as a Markdown code span: fenced by one backtick more than its longest run of them,
/// and padded with a space where it starts or ends with a backtick or a space.
pub(super) fn markdown_code(text: &str) -> String {
    let code: String = visible(text).into_iter().collect();
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if code.is_empty() || code.starts_with(['`', ' ']) || code.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{code}{pad}{fence}")
}

/// A file name as a Markdown link target: every byte but letters, digits and `-._~`
/// percent-encoded, so that a space or a parenthesis cannot end the link.
pub(super) fn link_target(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A name for HTML: `& < > " '` escaped, unshown characters as their escapes.
pub(super) fn html_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in visible(text) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_markup_but_not_words() {
        assert_eq!(
            markdown_name("attn_norm kv_heads=8"),
            "attn_norm kv_heads=8"
        );
        assert_eq!(markdown_name("_x_ a*b [c](d)"), "\\_x\\_ a\\*b \\[c\\](d)");
        assert_eq!(markdown_name("a|b\n# c"), "a\\|b\\\\n\\# c");
        assert_eq!(markdown_name("<b>&amp;"), "\\<b\\>\\&amp;");
    }

    #[test]
    fn code_spans_outlast_the_backticks_they_hold() {
        assert_eq!(markdown_code("gate_up"), "`gate_up`");
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`a``"), "``` `a`` ```");
        assert_eq!(markdown_code("a\nb"), "`a\\nb`");
    }

    #[test]
    fn links_and_html_are_inert() {
        assert_eq!(link_target("report.svg"), "report.svg");
        assert_eq!(link_target("a b).svg"), "a%20b%29.svg");
        assert_eq!(
            html_name("<i a=\"1\" b='2'>&\u{2028}"),
            "&lt;i a=&quot;1&quot; b=&#39;2&#39;&gt;&amp;\\u{2028}"
        );
    }
}
