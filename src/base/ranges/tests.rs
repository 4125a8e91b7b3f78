//! The ranges' own checks: ordered, named once, shown as people write them.

use super::*;

#[test]
fn every_range_is_ordered_finite_and_named_once() {
    let all: Vec<&Range> = CHIP.iter().chain(COUNTS).chain(FLAGS).collect();
    for r in &all {
        assert!(
            r.min.is_finite() && r.max.is_finite() && r.min < r.max,
            "{r:?}"
        );
        assert!(r.min >= 0.0 && r.max <= 1e20, "{r:?}");
        assert!(!r.why.is_empty());
        assert_eq!(all.iter().filter(|o| o.field == r.field).count(), 1);
    }
}

#[test]
fn bounds_read_as_people_write_them() {
    assert_eq!(show(1e9, "B/s"), "1 GB/s");
    assert_eq!(show(1e-9, "s"), "1 ns");
    assert_eq!(show(1e-3, "s"), "1 ms");
    assert_eq!(show(1e19, "FLOP/s"), "10 EFLOP/s");
    assert_eq!(show(1e6, ""), "10^6");
    assert_eq!(show(4096.0, ""), "4096");
    assert_eq!(show(0.01, ""), "0.01");
    assert_eq!(show(1e-3, "USD/h"), "0.001 USD/h");
    assert_eq!(show(1e4, "USD/h"), "10000 USD/h");
    assert_eq!(show(1e12, "tokens/s"), "10^12 tokens/s");
    assert_eq!(show(0.001, "ms"), "0.001 ms");
    assert_eq!(show(MAX_COUNT, ""), "2^53");
    assert_eq!(
        EXPECTED_DRAM_LATENCY.check(1e300).unwrap_err(),
        "out of range: expected from 1 ns to 1 ms: time to first byte from memory, 100-800 ns today"
    );
}

#[test]
fn refused_values_are_quoted_short() {
    let quoted: Vec<String> = [0.0, 0.5, 600.0, -2.0, 2e9, 1e-7, 1e300]
        .into_iter()
        .map(quoted)
        .collect();
    assert_eq!(quoted, ["0", "0.5", "600", "-2", "2e9", "1e-7", "1e300"]);
}

#[test]
fn a_bound_in_ms_typed_at_its_end_is_inside_it_in_seconds() {
    assert_eq!(MAX_MS_PER_TOKEN.check_ms_as_s(0.001 / 1e3), Ok(()));
    assert_eq!(MAX_MS_PER_TOKEN.check_ms_as_s(1e6 / 1e3), Ok(()));
    assert!(MAX_MS_PER_TOKEN.check_ms_as_s(2e6 / 1e3).is_err());
    assert!(MAX_TTFT_MS.check_ms_as_s(f64::NAN).is_err());
}

#[test]
fn counts_are_whole_and_never_saturate() {
    assert_eq!(whole(8.0, &WORKLOAD_CHIPS, "chips"), Ok(8));
    let big = whole(1e300, &WORKLOAD_CHIPS, "chips").unwrap_err();
    assert!(big.contains("too large"), "{big}");
    assert!(whole(f64::NAN, &WORKLOAD_CHIPS, "chips").is_err());
    assert!(whole(2.5, &WORKLOAD_CHIPS, "chips").is_err());
    assert!(whole(0.0, &WORKLOAD_CHIPS, "chips")
        .unwrap_err()
        .contains("too small"));
    let open = Range {
        max: 1e300,
        ..WORKLOAD_CHIPS
    };
    assert!(whole(1e17, &open, "x").unwrap_err().contains("too large"));
}
