use super::*;

fn residual(id: &str, kind: BandKind, family: &str, ln_time_ratio: f64) -> Residual {
    Residual {
        id: id.into(),
        kind,
        family: family.into(),
        ln_time_ratio,
    }
}

/// Eleven kernel rows of family `f`, one per source, at -0.5, -0.4, ..., 0.5.
fn kernels() -> Vec<Residual> {
    (0..11)
        .map(|i| {
            let id = format!("S{i}-1");
            residual(&id, BandKind::Kernel, "f", -0.5 + 0.1 * f64::from(i))
        })
        .collect()
}

#[test]
fn one_row_per_source_is_weibull_s_percentile() {
    // Eleven sources 0..10: the 10th percentile at rank 12 * 0.1 = 1.2 (counted from 1), 0.2;
    // the 90th at 10.8, 9.8. NumPy: np.percentile(np.arange(11), [10, 90], method="weibull").
    let names: Vec<String> = (0..11).map(|i| format!("S{i}")).collect();
    let rows: Vec<(f64, &str)> = (0..11)
        .map(|i| (f64::from(i), names[i as usize].as_str()))
        .collect();
    assert!((pooled_quantile(&rows, 0.1) - 0.2).abs() < 1e-12);
    assert!((pooled_quantile(&rows, 0.9) - 9.8).abs() < 1e-12);
    assert_eq!(source_count(&rows), 11);
    // One row: itself at every level.
    assert_eq!(pooled_quantile(&[(7.0, "A")], 0.9), 7.0);
}

#[test]
fn each_source_weighs_as_one() {
    // Source A's two rows weigh 1/2 each, B's and C's one row 1 each; k = 3 sources. Cumulative
    // weight at each row's middle: 0.25, 1, 1.75, 2.5; positions (c + 1/2) / 4: 0.1875,
    // 0.375, 0.5625, 0.75.
    let rows = [(0.0, "A"), (0.1, "B"), (0.2, "A"), (0.4, "C")];
    assert_eq!(source_count(&rows), 3);
    // 0.25: a third of the way from 0.1875 to 0.375, so a third of the way from 0.0 to 0.1.
    assert!((pooled_quantile(&rows, 0.25) - 0.1 / 3.0).abs() < 1e-12);
    // 0.5: two thirds of the way from 0.375 to 0.5625 (0.1 to 0.2). Four rows weighing
    // alike would put it half way, at 0.15.
    assert!((pooled_quantile(&rows, 0.5) - (0.1 + 0.2 / 3.0)).abs() < 1e-12);
    // Outside the first and last positions: the end rows.
    assert_eq!(pooled_quantile(&rows, 0.1), 0.0);
    assert_eq!(pooled_quantile(&rows, 0.9), 0.4);
}

#[test]
fn a_band_by_hand() {
    let calibration = Calibration::of(&kernels());
    // Eleven sources, one row each: positions j / 12. The 10th percentile at 1.2, -0.5 + 0.2 *
    // 0.1 = -0.48; the 90th at 10.8, 0.4 + 0.8 * 0.1 = 0.48.
    let band = calibration.band(BandKind::Kernel, Some("f")).unwrap();
    let (low, high) = band.time(100.0);
    assert!((low - 61.878_339_2).abs() < 1e-6, "{low}");
    assert!((high - 161.607_440_2).abs() < 1e-6, "{high}");
    // 1000 tokens/s: a step up to e^0.48 slower is a rate down to 1000 / e^0.48.
    let (low, high) = band.rate(1000.0);
    assert!((low - 618.783_392).abs() < 1e-5, "{low}");
    assert!((high - 1_616.074_402).abs() < 1e-5, "{high}");
}

#[test]
fn a_small_group_takes_the_band_of_a_larger_one() {
    let mut rows = kernels();
    // Three decode sources: too few for a band of their own, so decode takes every row's.
    for (i, v) in [1.0, 2.0, 3.0].into_iter().enumerate() {
        rows.push(residual(&format!("D{i}-1"), BandKind::Decode, "f", v));
    }
    let calibration = Calibration::of(&rows);
    let all = calibration.band(BandKind::Decode, Some("f")).unwrap();
    // 14 sources sorted: -0.5 .. 0.5, 1, 2, 3, at positions j / 15. Rank 1.5: -0.5 + 0.5 *
    // 0.1; rank 13.5: 2 + 0.5 * 1.
    assert!((all.low.ln() - (-0.45)).abs() < 1e-12, "{}", all.low.ln());
    assert!((all.high.ln() - 2.5).abs() < 1e-12, "{}", all.high.ln());
    // A family without rows of its own takes its kind's band.
    let kind = calibration.band(BandKind::Kernel, Some("g")).unwrap();
    assert!((kind.low.ln() - (-0.48)).abs() < 1e-12);
    assert_eq!(Calibration::of(&[]).band(BandKind::Kernel, None), None);
}

#[test]
fn many_rows_from_one_source_are_no_group() {
    // Twelve rows of family g, all from source G at 0: 12 rows but 1 source, so g takes the
    // kernel band, of 12 sources. G's rows weigh 1/12 each, together as one source at 0.
    let mut rows = kernels();
    for i in 0..12 {
        rows.push(residual(&format!("G-{i}"), BandKind::Kernel, "g", 0.0));
    }
    let calibration = Calibration::of(&rows);
    let g = calibration.band(BandKind::Kernel, Some("g")).unwrap();
    assert_eq!(Some(g), calibration.band(BandKind::Kernel, None));
    let kind = (calibration.groups.iter())
        .find(|c| c.scope == Scope::Kind(BandKind::Kernel))
        .unwrap();
    assert_eq!((kind.rows, kind.sources), (23, 12));
    // Positions (c + 1/2) / 13: -0.5 at 1/13, -0.4 at 2/13; 0.1 = 1.3/13 lies 0.3 of the
    // way, -0.47. The top mirrors it: 0.47. (Counted by rows, G's twelve zeros would pull both
    // ends in: definition 7 over 23 rows puts the 10th percentile at rank 2.2, -0.28.)
    assert!((g.low.ln() - (-0.47)).abs() < 1e-12, "{}", g.low.ln());
    assert!((g.high.ln() - 0.47).abs() < 1e-12, "{}", g.high.ln());
}

#[test]
fn nested_coverage_leaves_each_source_out() {
    // Held out, -0.5 meets the band of the other ten (-0.4 .. 0.5, positions j / 11): rank 1.1
    // is -0.39, so it lies below; +0.5 likewise meets 0.3 + 0.9 * 0.1 = 0.39 and lies above.
    // Held out, -0.4 meets -0.5 + 0.1 * 0.2 = -0.48 and lies inside, as +0.4 meets 0.48. The
    // other seven lie inside too: 9 of 11.
    let coverage = nested_coverage(&kernels());
    assert_eq!(coverage.len(), 2);
    let all = &coverage[0];
    assert_eq!(
        (all.kind, all.rows, all.inside, all.above),
        (None, 11, 9, 1)
    );
    assert_eq!(coverage[1].kind, Some(BandKind::Kernel));
    assert!((all.share() - 9.0 / 11.0).abs() < 1e-12);
}

#[test]
fn roofline_has_no_band() {
    assert_eq!(of_step(Mode::Roofline, Some(1.0), None), None);
    assert!(of_step(Mode::Expected, Some(1.0), None).is_some());
    assert_eq!(BandKind::of_step(None), BandKind::Kernel);
    assert_eq!(BandKind::of_step(Some(1.0)), BandKind::Decode);
    assert_eq!(BandKind::of_step(Some(2048.0)), BandKind::Prefill);
}

#[test]
fn the_residual_file_reads_back_and_names_bad_lines() {
    let text = "# comment\nid,kind,family,ln_time_ratio\nA-1,kernel,f,0.25\n";
    let rows = parse_residuals(text).unwrap();
    assert_eq!(rows, [residual("A-1", BandKind::Kernel, "f", 0.25)]);
    assert_eq!(rows[0].source(), "A");
    let bad = parse_residuals("id,kind,family,ln_time_ratio\nA-1,step,f,0\n").unwrap_err();
    assert!(bad.contains("line 2") && bad.contains("step"), "{bad}");
    assert!(parse_residuals("A-1,kernel,f,0\n").is_err());
    assert!(parse_residuals(SHIPPED_RESIDUALS).is_ok());
}
