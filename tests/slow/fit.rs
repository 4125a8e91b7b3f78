//! `stepcost fit` on the whole measured set: the shipped chip files are its fit, and two fits
//! of the same inputs write the same bytes (the fit's other tests are in the `tests` target's
//! `fit` module).

use std::path::Path;

use stepcost::internals::fit::{fit_chip, shipped_family};
use stepcost::internals::validate::read_cases;
use stepcost::{Chip, Source};

use crate::common::stepcost;

fn relative(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for name in ["a.yaml", "b.yaml"] {
        let out = dir.path().join(name);
        let assert = stepcost()
            .args([
                "fit",
                "validation/measured.csv",
                "--chip",
                "a100-80gb",
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        outputs.push((
            std::fs::read(&out).unwrap(),
            assert.get_output().stdout.clone(),
        ));
    }
    assert_eq!(outputs[0], outputs[1]);
}

/// The shipped chip files' `expected:` sections are `stepcost fit --family auto` on the
/// measured set (`scripts/refit` writes them): every constant a measurement set, whether the
/// chip's own rows, its family's or every chip's, equals the fit's to 1e-6. A chip whose
/// family no row measures keeps its sourced section, and the fit says so, but for the
/// constants every chip shares, which every file holds at every chip's fit. One fit per chip,
/// each pricing the measured set's rows some hundred times: a minute or more in a debug build.
#[test]
fn the_shipped_chip_files_are_the_fit_of_the_measured_set() {
    use rayon::prelude::*;
    let path = Path::new("validation/measured.csv");
    let cases = read_cases(&Source::read(path).unwrap()).unwrap();
    let mut chips: Vec<String> = std::fs::read_dir("hardware")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    chips.sort();
    let unfitted: Vec<String> = chips
        .par_iter()
        .filter_map(|name| {
            let chip = Chip::named(name).unwrap();
            let family = shipped_family(&cases, path, &chip);
            let fit = match fit_chip(cases.clone(), path, chip.clone(), family.as_deref()) {
                Ok(fit) => fit,
                Err(e) if e.to_string().contains("no case in") => return Some(name.clone()),
                Err(e) => panic!("{name}: {e}"),
            };
            let file = chip.expected().unwrap();
            for c in &fit.fitted.informed {
                let (want, got) = (c.get(&fit.fitted.constants), c.get(file));
                assert!(
                    relative(got, want) < 1e-6,
                    "{name}: {} is {got} in the file, {want} fitted: run scripts/refit",
                    c.name()
                );
            }
            None
        })
        .collect();
    // Families no row measures yet.
    assert_eq!(
        unfitted,
        [
            "gaudi3",
            "mi455x",
            "rtx-pro-6000",
            "tpu7x",
            "trainium2",
            "trainium3",
            "vr200"
        ]
    );
    // The constants every chip shares (checked against the fit above) are in every file,
    // the unfitted chips' too, at the same value.
    let host_s: Vec<f64> = (chips.iter())
        .map(|n| Chip::named(n).unwrap().expected().unwrap().host_step_s)
        .collect();
    assert!(
        host_s.iter().all(|h| *h > 0.0 && *h == host_s[0]),
        "{host_s:?}"
    );
}
