//! One budget per request, counted before any work starts: the chips it prices (after `all`
//! is expanded and repeats removed), the scenarios of its grid, the ops priced in all, and
//! the bytes of its answer. A request past any of them is refused with what to narrow;
//! one within them is still bounded while it runs: the pricing loops read its cancel flag
//! (set at the time limit), and the answer is written through [`Capped`], which refuses a
//! byte past the answer limit. Answers held for clients that do not read them are counted
//! against one server-wide total (`State::hold`), so memory does not grow with such clients.

use std::convert::Infallible;
use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Bytes;
use axum::http::StatusCode;
use http_body::{Frame, SizeHint};
use tokio::sync::OwnedSemaphorePermit;

use super::error::ApiError;
use super::Limits;
use crate::core::workload::Workload;

/// Most chips one request prices, counted after `all` is expanded and repeats removed.
pub(crate) const MAX_CHIPS: usize = 64;

/// Most op pricings one request may ask for: ops of the workload × scenarios × chips, × the
/// pricings of each chip's verdict for `run` and `compare`. About 10 s of one core in a
/// release build; no built-in workload comes near it with every chip (deepseek-v3 on 64
/// chips with verdicts: about 0.3 million).
pub(crate) const MAX_WORK: u64 = 50_000_000;

/// Most kernel prices one request holds at once: each chip's report keeps a price per op
/// (about 700 bytes each in all, so at most about 70 MB), for `run`, `compare` and
/// `plot/roofline`. Built-in workloads have at most about 60 ops: 64 chips take 4,000.
pub(crate) const MAX_PRICES: u64 = 100_000;

/// Pricings of one chip's verdict beyond its own (`run`, `compare`): the levers (batch ×2 and
/// ÷2, a narrower type per role) and the fixes (tensor parallel degrees, fp8, the largest
/// batch that fits, found by bisection), each a pricing; the fusion plans are added apiece.
const VERDICT_PRICINGS: u64 = 32;

/// Bytes an answer may take besides its rows: the JSON envelope, a picture's frame, axes and
/// legend.
const FRAME_BYTES: u64 = 64 * 1024;
/// A row of `run` or `compare` as JSON, with its verdict, and room for its params.
const ROW_BYTES: u64 = 4 * 1024;
/// A kernel's marker and its label on the roofline picture (about 190 bytes measured).
const MARKER_BYTES: u64 = 256;
/// A sweep cell's value and its separator, as most are written (a number of a dozen
/// digits): a typical row, not the longest; [`Capped`] holds the answer to its limit whatever
/// the rows turn out to take. (Measured: 6 to 7 bytes a CSV cell of `gemm` and
/// `llama-3.1-8b`, 22 a JSON Lines cell with its column's name.)
pub(crate) const CELL_BYTES: u64 = 12;
/// A point of a sweep's chart.
const POINT_BYTES: u64 = 256;

/// What a request asks for: which answer, and the size of the work behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `run` or `compare`: each chip priced once, then its verdict.
    Verdicts,
    /// `plot/roofline`: each chip priced once, each kernel a marker.
    Roofline,
    /// `sweep`: a row per scenario of `row_bytes` (see [`row_bytes`]).
    Rows { row_bytes: u64 },
    /// `plot/sweep`: the sweep's CSV (`row_bytes` a row), then a point per scenario.
    Chart { row_bytes: u64 },
}

/// A request's work and answer, counted before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Chips priced, repeats removed.
    pub(crate) chips: u64,
    /// Scenarios on each chip (1 unless a sweep).
    pub(crate) scenarios: u64,
    /// Op pricings in all (saturating: a count past `u64` is past every limit).
    pub(crate) work: u64,
    /// Kernel prices held at once: each chip's report's (none for a sweep's rows).
    pub(crate) prices: u64,
    /// The answer's bytes, an upper estimate.
    pub(crate) answer_bytes: u64,
}

impl Budget {
    /// The budget of `answer` for `workload` on `chips` chips, `scenarios` a chip.
    pub(crate) fn of(answer: Answer, workload: &Workload, chips: usize, scenarios: u64) -> Budget {
        Budget::counted(
            answer,
            workload.ops.len() as u64,
            workload.fusion_plans.len() as u64,
            chips as u64,
            scenarios,
        )
    }

    /// [`Budget::of`] from the counts alone: ops and fusion plans of the workload.
    pub(crate) fn counted(
        answer: Answer,
        ops: u64,
        plans: u64,
        chips: u64,
        scenarios: u64,
    ) -> Budget {
        let pricings = chips.saturating_mul(scenarios);
        let per_pricing = match answer {
            Answer::Verdicts => 1 + VERDICT_PRICINGS + plans,
            _ => 1,
        };
        let work = pricings
            .saturating_mul(per_pricing)
            .saturating_mul(ops.max(1));
        let rows = match answer {
            Answer::Verdicts => chips.saturating_mul(ROW_BYTES),
            Answer::Roofline => {
                chips.saturating_mul(ROW_BYTES.saturating_add(ops.saturating_mul(MARKER_BYTES)))
            }
            Answer::Rows { row_bytes } => pricings.saturating_mul(row_bytes),
            Answer::Chart { row_bytes } => {
                pricings.saturating_mul(POINT_BYTES.saturating_add(row_bytes))
            }
        };
        let prices = match answer {
            Answer::Verdicts | Answer::Roofline => chips.saturating_mul(ops),
            Answer::Rows { .. } | Answer::Chart { .. } => 0,
        };
        Budget {
            chips,
            scenarios,
            work,
            prices,
            answer_bytes: rows.saturating_add(FRAME_BYTES),
        }
    }

    /// Refuses a request whose work or answer is past the limits, saying what to narrow.
    pub(crate) fn check(&self, limits: &Limits) -> Result<(), ApiError> {
        if self.work > MAX_WORK {
            return Err(ApiError::with_status(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the request asks for about {} op pricings ({} chips × {} scenarios × the \
                     workload's ops{}), more than the limit of {MAX_WORK} per request; name \
                     fewer chips, narrow the sweep's axes, or run the command line",
                    self.work,
                    self.chips,
                    self.scenarios,
                    if self.scenarios == 1 {
                        ", × each verdict's pricings"
                    } else {
                        ""
                    },
                ),
            ));
        }
        if self.prices > MAX_PRICES {
            return Err(ApiError::with_status(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the request would hold {} kernel prices ({} chips × the workload's ops), \
                     more than the limit of {MAX_PRICES} per request; name fewer chips, or \
                     run the command line",
                    self.prices, self.chips
                ),
            ));
        }
        let limit = limits.answer_bytes;
        if self.answer_bytes > limit {
            return Err(too_large(format!(
                "the answer would take about {} bytes ({} chips × {} scenarios), more than the \
                 limit of {limit} bytes per answer",
                self.answer_bytes, self.chips, self.scenarios
            )));
        }
        Ok(())
    }
}

/// A sweep row's bytes as most are written: [`CELL_BYTES`] a column, and in JSON Lines each
/// column's name (quoted, with its colon).
pub(crate) fn row_bytes<'a>(columns: impl IntoIterator<Item = &'a str>, json: bool) -> u64 {
    (columns.into_iter())
        .map(|name| CELL_BYTES + if json { name.len() as u64 + 3 } else { 0 })
        .fold(0, u64::saturating_add)
}

/// 413 for an answer past the answer limit, with the ways to narrow it.
pub(crate) fn too_large(what: String) -> ApiError {
    ApiError::with_status(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "{what}; name fewer chips, narrow the sweep's axes (or set `sweep.max_scenarios`), \
             or run the command line, which writes any size to a file"
        ),
    )
}

/// The error [`Capped`] writes fail with once the answer would pass its limit.
#[derive(Debug, thiserror::Error)]
#[error("the answer is larger than the limit of {limit} bytes")]
pub(crate) struct AnswerTooLarge {
    pub(crate) limit: u64,
}

/// Finds an [`AnswerTooLarge`] anywhere in `error`'s chain (an exporter wraps its writer's
/// errors in its own), as the 413 it stands for.
pub(crate) fn past_limit(error: &(dyn std::error::Error + 'static)) -> Option<ApiError> {
    let mut cause = Some(error);
    while let Some(c) = cause {
        let found = c.downcast_ref::<AnswerTooLarge>().or_else(|| {
            c.downcast_ref::<io::Error>()
                .and_then(|e| e.get_ref())
                .and_then(|e| e.downcast_ref::<AnswerTooLarge>())
        });
        if let Some(AnswerTooLarge { limit }) = found {
            return Some(too_large(format!(
                "the answer is larger than the limit of {limit} bytes"
            )));
        }
        cause = c.source();
    }
    None
}

/// A writer into memory that refuses to grow past `limit` bytes: the work that writes an
/// answer stops at the limit instead of holding whatever it would have grown to.
pub(crate) struct Capped {
    buffer: Vec<u8>,
    limit: u64,
}

impl Capped {
    /// A writer of at most `limit` bytes, with room for `expected` at the start: an answer
    /// that grows by doubling leaves each smaller copy behind in the allocator's free lists,
    /// resident until reused.
    pub(crate) fn new(limit: u64, expected: u64) -> Capped {
        let room = usize::try_from(expected.min(limit)).unwrap_or(0);
        Capped {
            buffer: Vec::with_capacity(room),
            limit,
        }
    }

    pub(crate) fn into_inner(self) -> Vec<u8> {
        self.buffer
    }
}

impl Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if (self.buffer.len() + bytes.len()) as u64 > self.limit {
            let limit = self.limit;
            return Err(io::Error::other(AnswerTooLarge { limit }));
        }
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes handed to the connection at a time: what it holds beyond the answer's room.
const CHUNK_BYTES: usize = 64 * 1024;

/// An answer's body that holds its room among the answers held (`State::hold`) until it is
/// dropped: sent, or its connection gone. The connection takes copies of one chunk at a time
/// as it can write them, so an answer a client does not read stays counted.
pub(crate) struct Held {
    bytes: Vec<u8>,
    sent: usize,
    _room: OwnedSemaphorePermit,
}

impl Held {
    pub(crate) fn new(bytes: Vec<u8>, room: OwnedSemaphorePermit) -> Held {
        Held {
            bytes,
            sent: 0,
            _room: room,
        }
    }
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let rest = &this.bytes[this.sent..];
        if rest.is_empty() {
            return Poll::Ready(None);
        }
        let chunk = &rest[..rest.len().min(CHUNK_BYTES)];
        this.sent += chunk.len();
        Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(chunk)))))
    }

    fn is_end_stream(&self) -> bool {
        self.sent == self.bytes.len()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact((self.bytes.len() - self.sent) as u64)
    }
}

/// The steps of an API request that read it without pricing, for the fuzz target: the JSON
/// into a request, its scenario, cost settings and sweep axes through their flags' parsers,
/// its chips' names counted (`all` expanded), and the budget of each answer for a workload
/// of `ops` ops. `Ok` with the largest answer's estimated bytes, or the refusal's message;
/// never a panic.
pub fn parse_request(json: &[u8], ops: u64) -> Result<u64, String> {
    use super::request::ScenarioRequest;
    let refused = |e: ApiError| e.message;
    let request: ScenarioRequest = serde_json::from_slice(json).map_err(|e| e.to_string())?;
    request.spec().map_err(refused)?;
    request.cost().map_err(refused)?;
    let params = request.sweep_params().map_err(refused)?;
    let types = request.sweep_types().map_err(refused)?;
    let chips = super::state::chip_names(&request).map_err(refused)?.len() as u64;
    let axes = (params.iter().map(|(_, values)| values.len()))
        .chain(types.iter().map(|(_, types)| types.len()))
        .try_fold(1u64, |product, n| product.checked_mul(n as u64))
        .unwrap_or(u64::MAX);
    let answers = [
        (Answer::Verdicts, 1),
        (Answer::Roofline, 1),
        (Answer::Rows { row_bytes: 64 * 32 }, axes),
        (Answer::Chart { row_bytes: 64 * 12 }, axes),
    ];
    let limits = Limits::default();
    let mut largest = 0;
    for (answer, scenarios) in answers {
        let budget = Budget::counted(answer, ops, 2, chips, scenarios);
        if budget.check(&limits).is_ok() {
            largest = largest.max(budget.answer_bytes);
        }
    }
    Ok(largest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_work_and_answer_bytes() {
        // 26 chips of a 3,000-op workload with one fusion plan besides `none`.
        let b = Budget::counted(Answer::Verdicts, 3000, 2, 26, 1);
        assert_eq!(b.work, 26 * (1 + 32 + 2) * 3000);
        assert_eq!(b.answer_bytes, 26 * 4096 + 65536);
        assert_eq!(b.prices, 26 * 3000);
        let b = Budget::counted(Answer::Roofline, 3000, 2, 26, 1);
        assert_eq!(b.work, 26 * 3000);
        assert_eq!(b.answer_bytes, 26 * (4096 + 3000 * 256) + 65536);
        let row = row_bytes(["chip", "batch"], true);
        assert_eq!(row, 12 + 4 + 3 + 12 + 5 + 3);
        assert_eq!(row_bytes(["chip", "batch"], false), 24);
        let b = Budget::counted(Answer::Rows { row_bytes: row }, 10, 1, 2, 100);
        assert_eq!(b.answer_bytes, 200 * row + 65536);
        // Counts past u64 saturate, and so are past every limit.
        let b = Budget::counted(Answer::Roofline, u64::MAX, 1, 64, u64::MAX);
        assert_eq!((b.work, b.answer_bytes), (u64::MAX, u64::MAX));
    }

    #[test]
    fn a_capped_writer_refuses_past_its_limit() {
        let mut out = Capped::new(4, 2);
        out.write_all(b"abcd").unwrap();
        let error = out.write_all(b"e").unwrap_err();
        assert_eq!(out.into_inner(), b"abcd");
        assert!(past_limit(&error).is_some(), "{error}");
    }
}
