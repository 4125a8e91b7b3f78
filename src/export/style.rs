//! How a table for a terminal looks and how it reaches one: the borders, numbers aligned to
//! the right, and every character a terminal could act on shown as its escape.

use std::io::{self, Write};

use comfy_table::{presets, CellAlignment, Table};

use crate::base::text::shown_as_is;

/// An empty table in the style of every table: borders only, with `header` (none when empty).
pub(super) fn new_table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(presets::UTF8_BORDERS_ONLY);
    if !header.is_empty() {
        table.set_header(header.to_vec());
    }
    table
}

/// Aligns the columns from `from` on to the right, as numbers read.
pub(super) fn align_right(table: &mut Table, from: usize) {
    let columns = table.column_count();
    for i in from..columns {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// Writes a human table with every character a terminal could act on (an escape sequence in
/// a chip's name, a line separator) shown as its escape (`\u{1b}`); line breaks stay. The
/// table's own text is printable, so only names from files can change.
pub(super) fn for_terminal(
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut text = Vec::new();
    write(&mut text)?;
    let text = String::from_utf8_lossy(&text);
    if text.chars().all(|c| c == '\n' || shown_as_is(c)) {
        return out.write_all(text.as_bytes());
    }
    let mut inert = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' || shown_as_is(c) {
            inert.push(c);
        } else {
            inert.extend(c.escape_debug());
        }
    }
    out.write_all(inert.as_bytes())
}
