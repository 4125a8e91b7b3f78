//! The ranges of a chip's scale-up fabric beyond its total rate: a mesh's peer link and the
//! measured share of a group's bandwidth a collective reaches.

use super::{range, Range};

/// A chip file's `interconnect.link_bandwidth`: a mesh's one peer link, per direction; bounded as
/// `INTERCONNECT_BANDWIDTH`.
pub const INTERCONNECT_LINK_BANDWIDTH: Range = Range {
    field: "interconnect.link_bandwidth",
    ..super::INTERCONNECT_BANDWIDTH
};
/// A chip file's `interconnect.expected`: the measured share of a group's bandwidth a collective
/// reaches, per group size.
pub const INTERCONNECT_EXPECTED: Range = range(
    "interconnect.expected",
    "",
    0.01,
    1.0,
    "the share of a datasheet link rate a collective reaches, at least 1% and at most all of it",
);
