//! The physical floor of a sweep: a program that formats and writes as many bytes of float CSV
//! as a sweep does, in as many rows, over two threads in ordered chunks, with no pricing at
//! all. `scripts/sweep-vs-floor` runs it beside the 1M-scenario sweep and reports the ratio.
//!
//!     cargo bench --bench floor -- ROWS BYTES FILE [--in-place] [--ryu]
//!
//! Each row is floats in their shortest round-trip form, separated by commas, as many as
//! bring the file to BYTES; values vary from row to row as a sweep's do. They are formatted
//! with zmij, the formatter the sweep writes its floats with, into the same bytes (a positive
//! exponent without its `+`), so that the floor pays for formatting no more than the sweep
//! can; `--ryu` formats with ryu instead, the slower formatter this floor first used, for
//! comparison with figures measured against it.
//!
//! The bytes go where a sweep's `--out` puts them: into a new file beside FILE, renamed over
//! it at the end (a sweep never overwrites its target in place, so that a failed sweep leaves
//! it whole). On ext4 a new file can cost the writer more kernel time than rewriting an
//! existing one in place; the floor pays what the sweep pays. `--in-place` truncates FILE and
//! writes into it instead, for comparison.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::mpsc;
use std::thread;

/// Rows a thread formats before handing its chunk over.
const CHUNK_ROWS: u64 = 4096;
const THREADS: u64 = 2;

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let in_place = args.iter().any(|a| a == "--in-place");
    let formatter = match args.iter().any(|a| a == "--ryu") {
        true => Formatter::Ryu,
        false => Formatter::Zmij,
    };
    args.retain(|a| a != "--in-place" && a != "--ryu");
    let [rows, bytes, path] = args.as_slice() else {
        eprintln!("usage: floor ROWS BYTES FILE [--in-place] [--ryu]");
        std::process::exit(2);
    };
    let rows: u64 = rows.parse().expect("ROWS is a whole number");
    let bytes: u64 = bytes.parse().expect("BYTES is a whole number");
    let per_row = (bytes / rows.max(1)).max(2) as usize;
    let temp = match in_place {
        true => path.clone(),
        false => format!("{path}.floor-tmp"),
    };
    let out = match in_place {
        true => File::create(&temp).expect("FILE can be created"),
        false => File::create_new(&temp).expect("a new file can be created beside FILE"),
    };
    let mut out = BufWriter::with_capacity(1 << 20, out);
    let chunks = rows.div_ceil(CHUNK_ROWS);
    // Chunks are handed out round-robin: thread t formats chunks t, t + THREADS, ...; the
    // writer takes them back in order, as a sweep writes its rows in product order.
    let receivers: Vec<mpsc::Receiver<Vec<u8>>> = (0..THREADS)
        .map(|t| {
            let (send, receive) = mpsc::sync_channel(2);
            thread::spawn(move || {
                for c in (t..chunks).step_by(THREADS as usize) {
                    let first = c * CHUNK_ROWS;
                    let last = (first + CHUNK_ROWS).min(rows);
                    if send
                        .send(format_rows(first..last, per_row, formatter))
                        .is_err()
                    {
                        return;
                    }
                }
            });
            receive
        })
        .collect();
    for c in 0..chunks {
        let chunk = receivers[(c % THREADS) as usize]
            .recv()
            .expect("a chunk for every index");
        out.write_all(&chunk).expect("the file takes the bytes");
    }
    out.flush().expect("the file takes the bytes");
    drop(out);
    if !in_place {
        std::fs::rename(&temp, path).expect("the new file can replace FILE");
    }
}

/// The shortest round-trip float formatter a floor formats with.
#[derive(Debug, Clone, Copy)]
enum Formatter {
    /// The sweep's: zmij, a positive exponent's `+` left out.
    Zmij,
    /// ryu, as the floor was first defined.
    Ryu,
}

impl Formatter {
    /// `value` in its shortest form, appended to `buf`, at most `room` bytes of it.
    fn append(self, value: f64, buf: &mut Vec<u8>, room: usize) {
        let mut zmij = zmij::Buffer::new();
        let mut ryu = ryu::Buffer::new();
        let text = match self {
            Formatter::Zmij => zmij.format_finite(value),
            Formatter::Ryu => ryu.format_finite(value),
        }
        .as_bytes();
        let start = buf.len();
        buf.extend(text.iter().copied().filter(|&b| b != b'+').take(room));
        debug_assert!(buf.len() - start <= room);
    }
}

/// Rows `range`, each about `per_row` bytes of comma-separated floats and a newline.
fn format_rows(range: std::ops::Range<u64>, per_row: usize, formatter: Formatter) -> Vec<u8> {
    let mut buf = Vec::with_capacity(per_row * (range.end - range.start) as usize);
    for row in range {
        let start = buf.len();
        let mut column = 0u64;
        while buf.len() - start + 1 < per_row {
            if column > 0 {
                buf.push(b',');
            }
            // Values with the digits a priced step has: not round, different per row.
            let value = (row as f64 + 1.0) * 1.000_123_456_789 / (column as f64 + 3.0);
            let room = per_row - 1 - (buf.len() - start);
            formatter.append(value, &mut buf, room);
            column += 1;
        }
        buf.push(b'\n');
    }
    buf
}
