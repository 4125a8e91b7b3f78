//! A cell's text as CSV and JSON write it: a number in the shortest form that reads back
//! exactly, and a CSV text cell, quoted where it must be.
//!
//! CSV is read by spreadsheets, which run a cell that starts with `=`, `+`, `-`, `@`, a tab or
//! a carriage return as a formula (OWASP's "CSV injection"). Unless asked for raw text, a
//! text cell (a name, an id, a note, an error) that starts so is written with a `'` before it,
//! which a spreadsheet shows as text; numbers are written from numbers, never from text, so
//! a negative number is never touched.

use super::short::Short;

/// Appends a number: integers without a fraction, others in the shortest form that reads
/// back exactly. Never NaN or infinite (an empty cell instead).
pub(crate) fn push_number(out: &mut Vec<u8>, x: f64) {
    let mut text = Short::default();
    if number_text(x, &mut text) {
        text.push_to(out);
    }
}

/// Puts in `short` a number's text as [`push_number`] writes it; false for NaN or an
/// infinity (and `short` empty).
#[inline(always)]
pub(super) fn number_text(x: f64, short: &mut Short) -> bool {
    if !x.is_finite() {
        short.clear();
        return false;
    }
    // `as` saturates, and below 2^53 every integer is exact: a cheap integer test.
    let whole = x as i64;
    if whole as f64 == x && x.abs() < 9.007_199_254_740_992e15 {
        return short.set(itoa::Buffer::new().format(whole).as_bytes());
    }
    // zmij finds the same shortest digits as ryu in about half the time; it writes a
    // positive exponent with its sign (`1e+17`), which rows leave out (`1e17`), as ryu does.
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(x).as_bytes();
    // The sign can only follow the `e` of an exponent of at most three digits: look
    // among the last five bytes rather than through every digit.
    let tail = text.len().saturating_sub(5);
    match text[tail..].iter().position(|&b| b == b'+') {
        Some(at) => {
            let plus = tail + at;
            // At most 25 bytes with the sign (see `Short::CAPACITY`): joined in place.
            let mut joined = [0; Short::CAPACITY + 1];
            joined[..plus].copy_from_slice(&text[..plus]);
            joined[plus..text.len() - 1].copy_from_slice(&text[plus + 1..]);
            short.set(&joined[..text.len() - 1])
        }
        None => short.set(text),
    }
}

/// How CSV writes text cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum CsvText {
    /// A text cell a spreadsheet would run as a formula gets a `'` before it.
    #[default]
    Neutralised,
    /// Every text cell as it is (`--raw-text`).
    Raw,
}

/// Whether a spreadsheet would take a cell starting with `text` for a formula.
fn formula_like(text: &str) -> bool {
    matches!(
        text.as_bytes().first(),
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')
    )
}

pub(super) fn push_csv_text(out: &mut Vec<u8>, text: &str, mode: CsvText) {
    if mode == CsvText::Neutralised && formula_like(text) {
        let mut neutral = String::with_capacity(text.len() + 1);
        neutral.push('\'');
        neutral.push_str(text);
        return push_csv_text(out, &neutral, CsvText::Raw);
    }
    if (text.bytes()).any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
        out.push(b'"');
        for byte in text.bytes() {
            if byte == b'"' {
                out.push(b'"');
            }
            out.push(byte);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}
