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
fn quantiles_interpolate_between_ranks() {
    // NumPy: np.percentile([0, 1, 2, 3, 4], [10, 90]) is [0.4, 3.6].
    let values = [0.0, 1.0, 2.0, 3.0, 4.0];
    assert!((quantile(&values, 0.1) - 0.4).abs() < 1e-12);
    assert!((quantile(&values, 0.9) - 3.6).abs() < 1e-12);
    assert_eq!(quantile(&[7.0], 0.9), 7.0);
}

#[test]
fn a_band_by_hand() {
    let calibration = Calibration::of(&kernels());
    // Ranks 0..10: the 10th percentile is rank 1 (-0.4), the 90th rank 9 (+0.4).
    let band = calibration.band(BandKind::Kernel, Some("f")).unwrap();
    let (low, high) = band.time(100.0);
    assert!((low - 67.032_004_6).abs() < 1e-6, "{low}");
    assert!((high - 149.182_469_8).abs() < 1e-6, "{high}");
    // 1000 tokens/s: a step up to e^0.4 slower is a rate down to 1000 / e^0.4.
    let (low, high) = band.rate(1000.0);
    assert!((low - 670.320_046).abs() < 1e-5, "{low}");
    assert!((high - 1_491.824_698).abs() < 1e-5, "{high}");
}

#[test]
fn a_small_group_takes_the_band_of_a_larger_one() {
    let mut rows = kernels();
    // Three decode rows: too few for a band of their own, so decode takes every row's.
    for (i, v) in [1.0, 2.0, 3.0].into_iter().enumerate() {
        rows.push(residual(&format!("D{i}-1"), BandKind::Decode, "f", v));
    }
    let calibration = Calibration::of(&rows);
    let all = calibration.band(BandKind::Decode, Some("f")).unwrap();
    // 14 rows sorted: -0.5 .. 0.5, 1, 2, 3. Rank 1.3: -0.4 + 0.3 * 0.1; rank 11.7: 1 + 0.7.
    assert!((all.low.ln() - (-0.37)).abs() < 1e-12, "{}", all.low.ln());
    assert!((all.high.ln() - 1.7).abs() < 1e-12, "{}", all.high.ln());
    // A family without rows of its own takes its kind's band.
    let kind = calibration.band(BandKind::Kernel, Some("g")).unwrap();
    assert!((kind.low.ln() - (-0.4)).abs() < 1e-12);
    assert_eq!(Calibration::of(&[]).band(BandKind::Kernel, None), None);
}

#[test]
fn nested_coverage_leaves_each_source_out() {
    // Held out, -0.5 meets the band of the other ten (-0.4 .. 0.5): rank 0.9 is -0.31, rank
    // 8.1 is 0.41, so it lies below. Held out, -0.4 meets -0.5 + 0.9 * 0.2 = -0.32 and lies
    // below too; +0.4 and +0.5 likewise above. The middle seven lie inside.
    let coverage = nested_coverage(&kernels());
    assert_eq!(coverage.len(), 2);
    let all = &coverage[0];
    assert_eq!(
        (all.kind, all.rows, all.inside, all.above),
        (None, 11, 7, 2)
    );
    assert_eq!(coverage[1].kind, Some(BandKind::Kernel));
    assert!((all.share() - 7.0 / 11.0).abs() < 1e-12);
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
