//! The ranges of a serving case's load: requests in flight, or arriving per second.

use super::{range, Range};

/// A serving case's `concurrency=N`: requests in flight at once.
pub const SERVING_CONCURRENCY: Range = range(
    "concurrency",
    "requests",
    1.0,
    1e9,
    "requests in flight at once, up to a billion, beyond any engine's batch",
);
/// A serving case's `rate=R` (`rate=inf` is all requests at once, apart from the range).
pub const REQUEST_RATE: Range = range(
    "rate",
    "requests/s",
    1e-6,
    1e9,
    "requests arriving per second, one in eleven days to a billion a second",
);
