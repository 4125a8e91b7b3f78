//! `Scenario` through its public API with any values: a change that would break what the type
//! promises (a param or fusion plan the workload lacks, a number that is not finite, a memory
//! utilisation outside its range) is refused with a typed error and leaves the scenario as it
//! was; whatever is accepted prices without a panic and never fits a step in more memory than
//! the chip has.

use proptest::prelude::*;
use stepcost::{
    price, sweep::Axes, sweep::Grid, types::Format, types::Role, types::TypeKey, Chip, Error, Mode,
    Scenario, Workload,
};

use crate::common::{chip, workload};

/// Any number, the hostile ones often: not finite, negative, zero, tiny, huge, and the
/// issue's 7.5, 99 and 9999.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            0.005,
            0.01,
            0.5,
            1.0,
            7.5,
            99.0,
            9999.0,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
        ]),
        any::<f64>(),
        -2.0f64..2.0,
        1.0f64..100_000.0,
    ]
}

/// Any index, the workload's own often.
fn index() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..40, Just(99), Just(9999), any::<usize>()]
}

/// Names a workload has, names near them, and any text.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "batch",
            "context",
            "tokens",
            "tp",
            "layers",
            "hidden",
            "ffn_local",
            "bach",
            "",
            "none",
            "flash",
            "full",
            "flsh",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{0,12}",
    ]
}

/// One call of a setter.
#[derive(Debug, Clone)]
enum Change {
    Set(String, f64),
    Param(usize, f64),
    FusionIndex(usize),
    Fusion(String),
    MemoryUtilization(f64),
    Mode(bool),
    Overlap(bool),
    Type(Role, Format),
}

fn change() -> impl Strategy<Value = Change> {
    let role = prop::sample::select(Role::ALL.to_vec());
    let format = prop::sample::select(vec![Format::Bf16, Format::Fp8, Format::Fp4, Format::Int4]);
    prop_oneof![
        (name(), number()).prop_map(|(n, v)| Change::Set(n, v)),
        (index(), number()).prop_map(|(i, v)| Change::Param(i, v)),
        index().prop_map(Change::FusionIndex),
        name().prop_map(Change::Fusion),
        number().prop_map(Change::MemoryUtilization),
        any::<bool>().prop_map(Change::Mode),
        any::<bool>().prop_map(Change::Overlap),
        (role, format).prop_map(|(r, f)| Change::Type(r, f)),
    ]
}

/// Applies `change` to `s`; returns whether the type's promises allow it, and the result.
fn apply(w: &Workload, s: &mut Scenario, change: &Change) -> (bool, Result<(), Error>) {
    let params = w.param_names().count();
    let plans = w.fusion_plan_names().count();
    let in_range = |u: f64| (0.01..=1.0).contains(&u);
    match change {
        Change::Set(n, v) => (
            w.settable_param_index(n).is_ok() && v.is_finite(),
            s.set(w, n, *v),
        ),
        Change::Param(i, v) => (*i < params && v.is_finite(), s.set_param(*i, *v)),
        Change::FusionIndex(i) => (*i < plans, s.set_fusion_index(*i)),
        Change::Fusion(n) => (w.fusion_index(n).is_ok(), s.set_fusion(w, n)),
        Change::MemoryUtilization(u) => (in_range(*u), s.set_memory_utilization(*u)),
        Change::Mode(roofline) => {
            s.set_mode(if *roofline {
                Mode::Roofline
            } else {
                Mode::Expected
            });
            (true, Ok(()))
        }
        Change::Overlap(on) => {
            s.set_overlap_comm(*on);
            (true, Ok(()))
        }
        Change::Type(role, format) => {
            s.set_type(TypeKey::Role(*role), *format);
            (true, Ok(()))
        }
    }
}

/// What a scenario promises, read through its accessors.
fn check_promises(w: &Workload, s: &Scenario) -> Result<(), TestCaseError> {
    let params = w.param_names().count();
    let overrides = s.overrides();
    for (k, (i, v)) in overrides.iter().enumerate() {
        prop_assert!(*i < params, "override of param {i} of {params}");
        prop_assert!(v.is_finite(), "override {v}");
        prop_assert!(
            overrides[..k].iter().all(|(j, _)| j != i),
            "param {i} twice"
        );
    }
    prop_assert!(s.fusion() < w.fusion_plan_names().count());
    let u = s.memory_utilization();
    prop_assert!((0.01..=1.0).contains(&u), "memory utilization {u}");
    prop_assert!(s.check_against(w).is_ok());
    Ok(())
}

/// A priced step never claims more memory than the chip has.
fn check_fit(c: &Chip, priced: &Result<stepcost::StepReport, Error>) -> Result<(), TestCaseError> {
    if let Ok(r) = priced {
        let s = &r.summary;
        prop_assert!(
            s.usable_bytes <= c.capacity_bytes(),
            "{} usable",
            s.usable_bytes
        );
        prop_assert!(!s.fits || s.footprint_bytes <= c.capacity_bytes());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Any sequence of setter calls: each is accepted exactly when the type's promises allow
    /// it (and then takes effect), refused with a typed error otherwise (and then changes
    /// nothing); the scenario prices without a panic.
    #[test]
    fn setters_refuse_what_breaks_a_promise(
        model in prop::sample::select(vec!["llama-3.1-70b", "mixtral-8x7b", "gemm"]),
        changes in proptest::collection::vec(change(), 1..10),
    ) {
        let w = workload(model);
        let c = chip("h100-sxm");
        let mut s = Scenario::defaults(&w);
        for change in &changes {
            let before = s.clone();
            let (allowed, result) = apply(&w, &mut s, change);
            match result {
                Ok(()) => {
                    prop_assert!(allowed, "{change:?} accepted");
                    if let Change::Param(i, v) = change {
                        prop_assert!(s.overrides().contains(&(*i, *v)));
                    }
                    if let Change::MemoryUtilization(u) = change {
                        prop_assert_eq!(s.memory_utilization(), *u);
                    }
                }
                Err(e) => {
                    prop_assert!(!allowed, "{change:?} refused: {e}");
                    prop_assert!(
                        matches!(e, Error::Value(_) | Error::NotInWorkload(_)),
                        "{e:?}"
                    );
                    prop_assert_eq!(&s, &before);
                }
            }
            check_promises(&w, &s)?;
        }
        check_fit(&c, &price(&w, &c, &s))?;
    }

    /// Llama-3.1-70B in bf16 (141 GB of weights) fits one H100 (80 GB) at no memory
    /// utilisation: one outside (0.01, 1] is refused, one inside leaves the step unfit.
    #[test]
    fn no_memory_utilization_fits_a_70b_model_on_one_h100(u in number()) {
        let w = workload("llama-3.1-70b");
        let c = chip("h100-sxm");
        let mut s = Scenario::defaults(&w);
        let accepted = s.set_memory_utilization(u).is_ok();
        prop_assert_eq!(accepted, (0.01..=1.0).contains(&u), "{}", u);
        let r = price(&w, &c, &s).unwrap();
        prop_assert!(!r.summary.fits, "fits at memory utilization {}", s.memory_utilization());
        prop_assert!(r.summary.footprint_bytes > c.capacity_bytes());
    }
}

/// The three: fusion plan 99, override index 9999, memory utilisation 7.5, each
/// refused with an error where they used to panic or report a fit.
#[test]
fn the_three_reported_values_are_refused() {
    let w = workload("llama-3.1-70b");
    let c = chip("h100-sxm");
    let mut s = Scenario::defaults(&w);
    let e = s.set_fusion_index(99).unwrap_err();
    assert!(matches!(e, Error::Value(_)), "{e:?}");
    assert!(e
        .to_string()
        .starts_with("fusion plan index 99 is out of range"));
    let e = s.set_param(9999, 1.0).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("param index 9999 is out of range"));
    let e = s.set_memory_utilization(7.5).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("memory utilization 7.5 is out of range"));
    assert_eq!(s, Scenario::defaults(&w));
    assert!(!price(&w, &c, &s).unwrap().summary.fits);
    // The evaluator beneath refuses an index its workload lacks, too.
    let e = w
        .evaluate(&[(9999, 1.0)], &mut w.new_evaluation())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("param index 9999 is out of range"),
        "{e}"
    );
    // A sweep's memory utilisation is the scenario's: refused when its grid is built.
    let axes = Axes {
        chips: vec![c.clone()],
        memory_utilization: Some(7.5),
        ..Axes::default()
    };
    let e = Grid::new(&w, axes).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("memory utilization 7.5 is out of range"));
}

/// A scenario resolved against one workload is refused by another's pricing, whose params
/// and plans its indices do not name.
#[test]
fn a_scenario_prices_only_its_own_workload() {
    let (gemm, llama) = (workload("gemm"), workload("llama-3.1-70b"));
    let mut s = Scenario::defaults(&llama);
    s.set(&llama, "batch", 8.0).unwrap();
    let e = price(&gemm, &chip("h100-sxm"), &s).unwrap_err();
    assert!(matches!(e, Error::Value(_)), "{e:?}");
    assert!(e.to_string().contains("not workload `gemm`"), "{e}");
    assert!(s.set(&gemm, "m", 1.0).is_err());
}
