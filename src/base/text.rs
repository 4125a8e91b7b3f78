//! Text that came from a file or the command line, shown to people: which characters may stand
//! as they are, and which are shown as their escape (`\n`, `\u{2028}`) so that a name can
//! never end a line, a comment, a table cell or a heading, nor turn the text around.

/// Whether `c` may be shown as it is; any other character is shown as its escape.
pub(crate) fn shown_as_is(c: char) -> bool {
    !(c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' // line and paragraph separators
                | '\u{200E}' | '\u{200F}' | '\u{061C}' // direction marks
                | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' // embeddings, isolates
                | '\u{FEFF}' // byte order mark
                | '\u{FFFE}' | '\u{FFFF}' // noncharacters
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_stands_and_line_breakers_do_not() {
        assert!("llama-3.1-70b <b>|*x*".chars().all(shown_as_is));
        for c in [
            '\n', '\r', '\t', '\0', '\u{85}', '\u{2028}', '\u{202E}', '\u{FEFF}',
        ] {
            assert!(!shown_as_is(c), "{c:?}");
        }
    }
}
