//! The 80 % band's residual file against a fresh cross-validation of the measured set: 29
//! folds, each refitting a chip (the band's other tests, on the file as it is, are in the
//! `tests` target's `band` module).

use std::path::Path;

use stepcost::internals::band::parse_residuals;
use stepcost::internals::fit::cross::{cross_validate, residuals_of};
use stepcost::internals::validate::read_cases;
use stepcost::Source;

/// The residuals the shipped band is taken from.
fn shipped() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/band.csv");
    std::fs::read_to_string(path).unwrap()
}

/// The file is what `validate --cross-validate --residuals` writes for the measured set today:
/// a change to pricing, a chip file or a row that moves a held-out prediction fails here until
/// the file is written again (README, "The 80 % band"). Each fold refits a chip; in a debug build
/// the whole run takes minutes on two cores, seconds on a release build.
#[test]
fn the_band_file_is_the_measured_set_s_cross_validation() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/measured.csv");
    let cases = read_cases(&Source::read(&path).unwrap()).unwrap();
    let fresh = residuals_of(&cross_validate(cases, &path).unwrap());
    let file = parse_residuals(&shipped()).unwrap();
    assert_eq!(fresh.len(), file.len());
    for (a, b) in fresh.iter().zip(&file) {
        assert_eq!((&a.id, a.kind, &a.family), (&b.id, b.kind, &b.family));
        assert!(
            (a.ln_time_ratio - b.ln_time_ratio).abs() < 1e-9,
            "{}: {} against the file's {}",
            a.id,
            a.ln_time_ratio,
            b.ln_time_ratio
        );
    }
}
