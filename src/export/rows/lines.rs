//! CSV lines written from one row of a sweep to the next: each column keeps the text of its
//! last cell, and a cell whose value is that of the row before is copied from it rather than
//! written again (most columns of a sweep keep their value: a model's shape, the chip's
//! price). Numbers and text are written as `text` writes them.

use super::short::Short;
use super::text::{number_text, push_csv_text, CsvText};
use super::{Row, RowInline, Value};

/// A number as [`push_number`](super::text::push_number) last wrote it in one column: its bits and its text with the
/// comma after it (empty when none is kept).
#[derive(Clone, Copy, Default)]
struct Written {
    bits: u64,
    text: Short,
}

/// A text cell as [`push_csv_text`] last wrote it in one column: its text, the mode, and the
/// bytes written, held in place when they are short (names and types are).
#[derive(Default)]
struct WrittenText {
    source: String,
    mode: CsvText,
    cell: Vec<u8>,
    /// `cell` and the comma after it held in place; empty when they are too long.
    short: Short,
}

/// One column's last cell.
#[derive(Default)]
struct Last {
    number: Written,
    int: Written,
    text: WrittenText,
}

/// One cell of the line being written, as the row gave it; a text cell's bytes are in its
/// column's [`WrittenText`] by then.
#[derive(Clone, Copy)]
enum Cell {
    Text,
    Num(f64),
    Int(u64),
    Bool(bool),
    Empty,
}

/// What writing CSV lines keeps from one line to the next.
#[derive(Default)]
struct Lines {
    /// Each column's last cell: from one row of a sweep to the next, most columns keep their
    /// value (a model's shape, the chip's price), and copying the text is cheaper than
    /// writing the number again.
    last: Vec<Last>,
    /// The line's cells, gathered before any is written.
    cells: Vec<Cell>,
    /// Bytes of the line's text cells too long to be held in place.
    long_bytes: usize,
    /// The line as it is written, before it is appended: kept from one line to the next, so
    /// that the room it needs is made once, not cleared for every line.
    line: Vec<u8>,
}

thread_local! {
    static LINES: std::cell::RefCell<Lines> = std::cell::RefCell::new(Lines::default());
}

/// Puts `x` at `at` in `line` as [`push_number`](super::text::push_number) writes it, reusing `last`'s text when it
/// was written from the same bits; returns where the cell ends.
#[inline(always)]
fn put_number_again(line: &mut [u8], at: usize, x: f64, last: &mut Written) -> usize {
    let bits = x.to_bits();
    if last.text.is_empty() || last.bits != bits {
        if !number_text(x, &mut last.text) {
            return put(line, at, b",");
        }
        // At most 25 bytes: the comma always fits.
        last.text.push_comma();
        last.bits = bits;
    }
    last.text.put(line, at)
}

/// Puts `n` at `at` in `line` as [`push_number`](super::text::push_number) writes it, reusing `last`'s text when it was
/// written from the same integer; returns where the cell ends.
#[inline(always)]
fn put_int_again(line: &mut [u8], at: usize, n: u64, last: &mut Written) -> usize {
    if last.text.is_empty() || last.bits != n {
        // A u64 has at most 20 digits: it and its comma always fit.
        last.text.set(itoa::Buffer::new().format(n).as_bytes());
        last.text.push_comma();
        last.bits = n;
    }
    last.text.put(line, at)
}

/// Keeps `text` as [`push_csv_text`] writes it in `last`, unless `last` holds it already in
/// the same mode (a sweep's names and types repeat row after row).
fn keep_csv_text(text: &str, mode: CsvText, last: &mut WrittenText) {
    if last.mode != mode || last.source != text {
        last.source.clear();
        last.source.push_str(text);
        last.mode = mode;
        last.cell.clear();
        push_csv_text(&mut last.cell, text, mode);
        let _ = last.short.set(&last.cell) && last.short.push_comma();
    }
}

/// Appends `row` as one CSV line.
pub(crate) fn csv_line(out: &mut Vec<u8>, row: &dyn Row, mode: CsvText) {
    LINES.with_borrow_mut(|lines| {
        lines.clear();
        row.visit(&mut |_, value| lines.gather(value, mode));
        lines.write(out);
    });
}

/// Appends `row` as one CSV line, as [`csv_line`] does, with the visitor inlined into the
/// row's columns: a sweep's way.
pub(crate) fn csv_line_inline<R: RowInline>(out: &mut Vec<u8>, row: &R, mode: CsvText) {
    LINES.with_borrow_mut(|lines| {
        lines.clear();
        row.visit_inline(&mut |_, value| lines.gather(value, mode));
        lines.write(out);
    });
}

impl Lines {
    fn clear(&mut self) {
        self.cells.clear();
        self.long_bytes = 0;
    }

    /// Keeps one cell of a line: the row's cells are gathered first, then written in one
    /// loop, so that the visitor's callback stays small enough to be inlined at each of a
    /// row's columns.
    #[inline(always)]
    fn gather(&mut self, value: Value<'_>, mode: CsvText) {
        let cell = match value {
            Value::Text(s) => return self.gather_text(s, mode),
            Value::Num(x) => Cell::Num(x),
            Value::Int(n) => Cell::Int(n),
            Value::Bool(b) => Cell::Bool(b),
            Value::Empty => Cell::Empty,
        };
        self.cells.push(cell);
    }

    /// A text cell, kept in its column's [`WrittenText`]: out of line, so that
    /// [`Lines::gather`] stays small.
    #[inline(never)]
    fn gather_text(&mut self, text: &str, mode: CsvText) {
        let column = self.cells.len();
        if self.last.len() <= column {
            self.last.resize_with(column + 1, Last::default);
        }
        let kept = &mut self.last[column].text;
        keep_csv_text(text, mode, kept);
        if kept.short.is_empty() {
            self.long_bytes += kept.cell.len();
        }
        self.cells.push(Cell::Text);
    }

    /// Writes the cells gathered, each number again from its column's last text where its
    /// bits are those of the row before. The line has room for every cell at its longest, so
    /// that each cell is one fixed-length copy into it with no check of a vector's capacity;
    /// what was written is then appended in one copy.
    fn write(&mut self, out: &mut Vec<u8>) {
        let Lines {
            last,
            cells,
            long_bytes,
            line,
        } = self;
        if last.len() < cells.len() {
            last.resize_with(cells.len(), Last::default);
        }
        let room = cells.len() * (Short::CAPACITY + 1) + *long_bytes + 1;
        if line.len() < room {
            line.resize(room, 0);
        }
        let mut at = 0;
        // Each cell is written with the comma after it, held with its text.
        let line = &mut line[..room];
        for (cell, last) in cells.iter().zip(last.iter_mut()) {
            at = match *cell {
                Cell::Text if !last.text.short.is_empty() => last.text.short.put(line, at),
                Cell::Text => {
                    let at = put(line, at, &last.text.cell);
                    put(line, at, b",")
                }
                Cell::Num(x) => put_number_again(line, at, x, &mut last.number),
                Cell::Int(n) => put_int_again(line, at, n, &mut last.int),
                Cell::Bool(true) => put(line, at, b"true,"),
                Cell::Bool(false) => put(line, at, b"false,"),
                Cell::Empty => put(line, at, b","),
            };
        }
        // The last cell's comma ends the line instead (or, with no cells, the newline is
        // all the line has).
        at = at.saturating_sub(1);
        line[at] = b'\n';
        out.extend_from_slice(&line[..=at]);
    }
}

/// Puts `text` at `at` in `line`; returns where it ends.
#[inline(always)]
fn put(line: &mut [u8], at: usize, text: &[u8]) -> usize {
    line[at..at + text.len()].copy_from_slice(text);
    at + text.len()
}
