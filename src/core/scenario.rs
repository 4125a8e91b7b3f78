//! One thing to price: a workload's param overrides, the data type of each role, a fusion
//! plan and a pricing mode. Names are resolved against the workload once, so a sweep can
//! build many scenarios cheaply; a [`Scenario`] is changed only through setters that check
//! what it promises, a [`ScenarioSpec`] (names as a person gives them) promises nothing
//! until it is resolved.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::ranges;
use crate::base::types::{TypeKey, Types};
use crate::core::chip::Chip;
use crate::core::engine::{Engine, KernelPath};
use crate::core::timing::DEFAULT_MEMORY_UTILIZATION;
use crate::core::workload::Workload;

/// How op times are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// What real kernels achieve: achievable fractions of peak and bandwidth, a fixed cost per
    /// kernel, GEMM tile and wave quantization, on-chip cache hits, dequantization.
    #[default]
    Expected,
    /// `max(FLOPs / peak, bytes / bandwidth)` with datasheet peaks: the ceiling.
    Roofline,
}

impl Mode {
    /// `expected` or `roofline`, as the `mode` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Expected => "expected",
            Mode::Roofline => "roofline",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scenario resolved against one workload: param overrides, the format of every slot, a
/// fusion plan, a pricing mode, whether collectives overlap, and the share of memory the
/// serving engine uses.
///
/// Its fields are private so that what it documents holds for every scenario that exists:
/// each override names one of the workload's params (at most once, with a finite value), the
/// fusion plan is one of the workload's, and the memory utilisation lies in the range
/// `--memory-utilization` accepts (0.01 to 1). It is built by [`Scenario::defaults`] or
/// [`Scenario::resolve`] and changed by setters that refuse what breaks those promises with an
/// [`Error`], never a panic. It remembers how many params and fusion plans its workload has, so
/// that a setter given an index checks it without the workload, and pricing refuses a scenario
/// resolved against a workload of another shape ([`Scenario::check_against`]).
///
/// ```
/// use stepcost::{Mode, Scenario, Workload};
///
/// let workload = Workload::named("llama-3.1-8b")?;
/// let mut scenario = Scenario::defaults(&workload);
/// scenario.set(&workload, "batch", 32.0)?;
/// scenario.set(&workload, "batch", 64.0)?; // replaces the 32
/// scenario.set_fusion(&workload, "none")?;
/// scenario.set_mode(Mode::Roofline);
/// assert_eq!(scenario.overrides(), [(workload.param_index("batch")?, 64.0)]);
/// assert!(scenario.set_fusion_index(99).is_err());
/// assert!(scenario.set_param(9999, 1.0).is_err());
/// assert!(scenario.set_memory_utilization(7.5).is_err());
/// # Ok::<(), stepcost::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `(param index, value)`: each param at most once, each value finite.
    overrides: Vec<(usize, f64)>,
    /// The format of every slot: the workload's checkpoint types with the scenario's over them.
    dtypes: Types,
    /// Index into `Workload::fusion_plans`, below `plans`.
    fusion: usize,
    mode: Mode,
    overlap_comm: bool,
    /// In the range of `--memory-utilization` (`ranges::MEMORY_UTILIZATION`).
    memory_utilization: f64,
    /// The serving software expected mode prices for; `None`: the abstract stack of the chip
    /// file's fitted constants.
    engine: Option<Arc<Engine>>,
    /// The kernel path every GEMM runs in, ahead of the engine's choice (a measured kernel
    /// row's own library); `None`: the engine's, else the chip file's section.
    gemm_path: Option<KernelPath>,
    /// The workload's params: every override's index is below it.
    params: usize,
    /// The workload's fusion plans: `fusion` is below it.
    plans: usize,
}

/// A scenario as a person names it: param and plan names, before they are checked. Its
/// fields are public, as a front end's flags are: [`Scenario::resolve`] checks them all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioSpec {
    /// Param overrides (`--set name=value`) in order; a param set twice takes the later value.
    pub sets: Vec<(String, f64)>,
    /// `--dtype` settings in order (`weight=fp8` then `embed.weight=bf16`).
    pub dtypes: Vec<(TypeKey, Format)>,
    /// The fusion plan's name (`--fusion`); the workload's default plan when `None`.
    pub fusion: Option<String>,
    /// The pricing mode.
    pub mode: Mode,
    /// Whether a collective's transfer overlaps the kernel before it (`--overlap-comm`).
    pub overlap_comm: bool,
    /// Default: [`DEFAULT_MEMORY_UTILIZATION`].
    pub memory_utilization: Option<f64>,
    /// The serving software (`--engine`); `None`: the chip file's fitted constants.
    pub engine: Option<Arc<Engine>>,
}

impl Scenario {
    /// The workload's defaults: its default dtypes and fusion plan, no overrides, expected
    /// mode, no overlap, [`DEFAULT_MEMORY_UTILIZATION`].
    pub fn defaults(workload: &Workload) -> Scenario {
        Scenario {
            overrides: Vec::new(),
            dtypes: workload.default_dtypes,
            fusion: workload.default_fusion,
            mode: Mode::default(),
            overlap_comm: false,
            memory_utilization: DEFAULT_MEMORY_UTILIZATION,
            engine: None,
            gemm_path: None,
            params: workload.params.len(),
            plans: workload.fusion_plans.len(),
        }
    }

    /// Resolves `spec` against `workload`: unknown params or plans are errors naming the
    /// known ones; a value must be finite (a param set twice takes the later value), the
    /// memory utilisation inside its range.
    pub fn resolve(workload: &Workload, spec: &ScenarioSpec) -> Result<Scenario, Error> {
        let mut scenario = Scenario::defaults(workload);
        for (name, value) in &spec.sets {
            scenario.set(workload, name, *value)?;
        }
        scenario.apply_types(spec.dtypes.iter().copied());
        if let Some(plan) = &spec.fusion {
            scenario.set_fusion(workload, plan)?;
        }
        scenario.set_mode(spec.mode);
        scenario.set_overlap_comm(spec.overlap_comm);
        if let Some(u) = spec.memory_utilization {
            scenario.set_memory_utilization(u)?;
        }
        scenario.set_engine(spec.engine.clone());
        if spec.fusion.is_none() {
            scenario.use_engine_fusion(workload);
        }
        Ok(scenario)
    }

    /// `(param index, value)` for each param the scenario sets, each param once.
    pub fn overrides(&self) -> &[(usize, f64)] {
        &self.overrides
    }

    /// The format of every slot.
    pub fn dtypes(&self) -> &Types {
        &self.dtypes
    }

    /// The fusion plan's index among the workload's (`Workload::fusion_plan_names`).
    pub fn fusion(&self) -> usize {
        self.fusion
    }

    /// The pricing mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether a collective's transfer overlaps the kernel before it (off by default).
    pub fn overlap_comm(&self) -> bool {
        self.overlap_comm
    }

    /// The share of the chip's reported memory the serving engine uses (vLLM's
    /// `gpu_memory_utilization`), from 0.01 to 1.
    pub fn memory_utilization(&self) -> f64 {
        self.memory_utilization
    }

    /// The serving software expected mode prices for; `None`: the chip file's fitted
    /// constants (an abstract stack). Roofline mode reads none of it.
    pub fn engine(&self) -> Option<&Engine> {
        self.engine.as_deref()
    }

    /// The engine pricing reads: the scenario's in expected mode, none in roofline mode
    /// (where every engine prices alike).
    pub fn pricing_engine(&self) -> Option<&Engine> {
        self.engine().filter(|_| self.mode == Mode::Expected)
    }

    /// The engine as it is shared, for what keeps it beside priced costs.
    pub(crate) fn engine_shared(&self) -> Option<&Arc<Engine>> {
        self.engine.as_ref()
    }

    /// Chooses the serving software expected mode prices for.
    pub fn set_engine(&mut self, engine: Option<Arc<Engine>>) {
        self.engine = engine;
    }

    /// The engine this scenario prices under on `chip`: none in roofline mode (every engine
    /// prices alike there), else the scenario's own (`--engine`), else the chip file's
    /// default (`engine:`). Pricing and every row's `engine` column read this one answer.
    pub fn engine_on<'a>(&'a self, chip: &'a Chip) -> Option<&'a Engine> {
        match self.mode {
            Mode::Roofline => None,
            Mode::Expected => self.engine().or(chip.default_engine().map(|e| &**e)),
        }
    }

    /// The id of [`Scenario::engine_on`], `none` where there is none (the `engine` column).
    pub fn engine_id_on<'a>(&'a self, chip: &'a Chip) -> &'a str {
        self.engine_on(chip).map_or("none", Engine::id)
    }

    /// The kernel path every GEMM runs in where one is set (a measured kernel row's
    /// library): it wins over the engine's choice. Roofline mode reads none of it.
    pub fn gemm_path(&self) -> Option<KernelPath> {
        self.gemm_path
    }

    /// Sets the kernel path every GEMM runs in (`None`: the engine's choice).
    pub fn set_gemm_path(&mut self, path: Option<KernelPath>) {
        self.gemm_path = path;
    }

    /// `Ok` where `workload` has the params and fusion plans the scenario was resolved against
    /// (the checks of every index it holds); pricing calls it first.
    pub fn check_against(&self, workload: &Workload) -> Result<(), Error> {
        let (params, plans) = (workload.params.len(), workload.fusion_plans.len());
        if (params, plans) == (self.params, self.plans) {
            return Ok(());
        }
        Err(Error::value(format!(
            "the scenario was resolved against a workload of {} params and {} fusion plans, \
             not workload `{}` ({params} params, {plans} fusion plans)",
            self.params,
            self.plans,
            workload.id()
        )))
    }

    /// Sets the param called `name` to `value`, replacing an earlier value: the param must be
    /// one the workload has and a scenario may set ([`Workload::settable_param_index`]), the
    /// value finite.
    pub fn set(&mut self, workload: &Workload, name: &str, value: f64) -> Result<(), Error> {
        self.check_against(workload)?;
        let index = workload.settable_param_index(name)?;
        if !value.is_finite() {
            return Err(Error::value(format!(
                "param `{name}` must be a finite number, found {value}"
            )));
        }
        self.replace(index, value);
        Ok(())
    }

    /// Sets param `index` (from [`Workload::param_index`] or [`Workload::param`]) to `value`,
    /// replacing an earlier value: the index must be one of the workload's params, the value
    /// finite. Unlike [`Scenario::set`] it may set a param derived from others, as a caller
    /// that knows the workload's layout does (a one-layer draft sets `layers`).
    pub fn set_param(&mut self, index: usize, value: f64) -> Result<(), Error> {
        if index >= self.params {
            return Err(Error::value(format!(
                "param index {index} is out of range: the workload has {} params",
                self.params
            )));
        }
        if !value.is_finite() {
            return Err(Error::value(format!(
                "param {index} must be a finite number, found {value}"
            )));
        }
        self.replace(index, value);
        Ok(())
    }

    /// Drops every override: each param back to the workload's default (the overrides keep
    /// their room, so a sweep that sets them again allocates nothing).
    pub fn clear_overrides(&mut self) {
        self.overrides.clear();
    }

    /// Sets a checked param's value in place, or adds it: no allocation once the overrides
    /// have grown to the params a caller sets.
    fn replace(&mut self, index: usize, value: f64) {
        match self.overrides.iter_mut().find(|(i, _)| *i == index) {
            Some(entry) => entry.1 = value,
            None => self.overrides.push((index, value)),
        }
    }

    /// Chooses the fusion plan called `name`, one the workload has.
    pub fn set_fusion(&mut self, workload: &Workload, name: &str) -> Result<(), Error> {
        self.check_against(workload)?;
        self.fusion = workload.fusion_index(name)?;
        Ok(())
    }

    /// Chooses the fusion plan the engine runs (its `fusion`) where the workload has a plan of
    /// that name and the scenario is in expected mode (roofline mode reads no engine term);
    /// otherwise leaves the plan as it is. [`Scenario::resolve`] calls it when no plan was
    /// named, after the mode and the engine are set; a caller that sets the engine later and
    /// chose no plan calls it then.
    pub fn use_engine_fusion(&mut self, workload: &Workload) {
        let named = (self.pricing_engine()).and_then(|e| e.terms().fusion.as_deref());
        let index = named.and_then(|name| workload.fusion_plan_names().position(|p| p == name));
        if let Some(i) = index.filter(|&i| i < self.plans) {
            self.fusion = i;
        }
    }

    /// Chooses fusion plan `index` (from [`Workload::fusion_index`]), one the workload has.
    pub fn set_fusion_index(&mut self, index: usize) -> Result<(), Error> {
        if index >= self.plans {
            return Err(Error::value(format!(
                "fusion plan index {index} is out of range: the workload has {} fusion plans",
                self.plans
            )));
        }
        self.fusion = index;
        Ok(())
    }

    /// Chooses the pricing mode.
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Chooses whether a collective's transfer overlaps the kernel before it.
    pub fn set_overlap_comm(&mut self, overlap: bool) {
        self.overlap_comm = overlap;
    }

    /// Sets the share of the chip's memory the engine uses: a number from 0.01 to 1, what
    /// `--memory-utilization` accepts (one range, `ranges::MEMORY_UTILIZATION`).
    pub fn set_memory_utilization(&mut self, utilization: f64) -> Result<(), Error> {
        self.memory_utilization = memory_utilization(utilization)?;
        Ok(())
    }

    /// Replaces the format of every slot (a sweep's or a plan's types, built from the
    /// workload's defaults).
    pub fn set_types(&mut self, types: Types) {
        self.dtypes = types;
    }

    /// Sets what `key` names, and only that ([`Types::set`]).
    pub fn set_type(&mut self, key: TypeKey, format: Format) {
        self.dtypes.set(key, format);
    }

    /// Applies `--dtype` settings in order over the scenario's types ([`Types::apply`]).
    pub fn apply_types(&mut self, keys: impl IntoIterator<Item = (TypeKey, Format)>) {
        self.dtypes.apply(keys);
    }
}

/// `utilization` where it is a memory utilisation (the range of `--memory-utilization`),
/// else the error that says what was expected.
pub(crate) fn memory_utilization(utilization: f64) -> Result<f64, Error> {
    let range = &ranges::MEMORY_UTILIZATION;
    match range.check(utilization) {
        Ok(()) => Ok(utilization),
        Err(e) => Err(Error::value(format!(
            "memory utilization {utilization} is {e}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dtype::Role;
    use crate::base::source::Source;

    /// Three params (`double` derived from `hidden`) and two fusion plans (`none`, `fused`).
    const TINY: &str = "\
name: tiny
params: {batch: 1, hidden: 64, double: hidden * 2}
tensors:
  x: {role: activation, shape: [batch, hidden]}
blocks:
  - name: b
    ops:
      - elementwise: {name: norm, of: [x], flops_per_element: 4}
      - gemm: {name: up, of: [norm], m: batch, n: double, k: hidden}
fusion:
  fused: [[norm, up]]
";

    fn tiny() -> Workload {
        Workload::load(&Source::from_text("tiny.yaml", TINY)).unwrap()
    }

    /// The error of `f` on a copy of `s`, and that the copy is left as it was.
    fn refused(s: &Scenario, f: impl FnOnce(&mut Scenario) -> Result<(), Error>) -> String {
        let mut changed = s.clone();
        let e = f(&mut changed).unwrap_err();
        assert_eq!(
            &changed, s,
            "a refused change leaves the scenario as it was"
        );
        e.to_string()
    }

    #[test]
    fn defaults_are_the_workload_s() {
        let w = tiny();
        let s = Scenario::defaults(&w);
        assert_eq!(s.overrides(), []);
        assert_eq!(*s.dtypes(), w.default_dtypes);
        assert_eq!(s.fusion(), w.default_fusion);
        assert_eq!(s.mode(), Mode::Expected);
        assert!(!s.overlap_comm());
        assert_eq!(s.memory_utilization(), 0.9);
        assert!(s.check_against(&w).is_ok());
    }

    #[test]
    fn the_engines_fusion_plan_is_used_where_none_was_named() {
        use crate::core::engine::EngineTerms;
        let w = tiny();
        let fused = w.fusion_index("fused").unwrap();
        assert_ne!(w.default_fusion, fused);
        let engine = |plan: &str| {
            let mut t = EngineTerms::neutral();
            t.fusion = Some(plan.into());
            Some(t.engine())
        };
        let resolve = |engine, fusion: Option<&str>, mode| {
            let spec = ScenarioSpec {
                engine,
                fusion: fusion.map(str::to_owned),
                mode,
                ..ScenarioSpec::default()
            };
            Scenario::resolve(&w, &spec).unwrap().fusion()
        };
        assert_eq!(resolve(engine("fused"), None, Mode::Expected), fused);
        // A plan named wins; roofline mode reads no engine term; a plan the workload lacks
        // leaves its default.
        let none = w.fusion_index("none").unwrap();
        assert_eq!(resolve(engine("fused"), Some("none"), Mode::Expected), none);
        assert_eq!(
            resolve(engine("fused"), None, Mode::Roofline),
            w.default_fusion
        );
        assert_eq!(
            resolve(engine("flash"), None, Mode::Expected),
            w.default_fusion
        );
        assert_eq!(resolve(None, None, Mode::Expected), w.default_fusion);
    }

    #[test]
    fn set_by_name_replaces_and_refuses_what_the_workload_lacks() {
        let w = tiny();
        let mut s = Scenario::defaults(&w);
        s.set(&w, "batch", 8.0).unwrap();
        s.set(&w, "hidden", 128.0).unwrap();
        s.set(&w, "batch", 16.0).unwrap();
        assert_eq!(s.overrides(), [(0, 16.0), (1, 128.0)]);
        let e = refused(&s, |s| s.set(&w, "bach", 1.0));
        assert!(
            e.contains("has no param `bach` (did you mean `batch`?)"),
            "{e}"
        );
        let e = refused(&s, |s| s.set(&w, "double", 1.0));
        assert!(e.contains("is derived from `hidden`"), "{e}");
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let e = refused(&s, |s| s.set(&w, "batch", bad));
            assert_eq!(
                e,
                format!("param `batch` must be a finite number, found {bad}")
            );
        }
        let other = Workload::named("gemm").unwrap();
        let e = refused(&s, |s| s.set(&other, "m", 1.0));
        assert!(e.contains("not workload `gemm`"), "{e}");
    }

    #[test]
    fn set_by_index_checks_the_index_and_replaces() {
        let w = tiny();
        let mut s = Scenario::defaults(&w);
        s.set_param(1, 256.0).unwrap();
        s.set_param(1, 512.0).unwrap();
        // A derived param is settable by index, as a caller that knows the layout does.
        s.set_param(2, 7.0).unwrap();
        assert_eq!(s.overrides(), [(1, 512.0), (2, 7.0)]);
        for index in [3, 9999, usize::MAX] {
            let e = refused(&s, |s| s.set_param(index, 1.0));
            assert_eq!(
                e,
                format!("param index {index} is out of range: the workload has 3 params")
            );
        }
        let e = refused(&s, |s| s.set_param(0, f64::NAN));
        assert_eq!(e, "param 0 must be a finite number, found NaN");
        s.clear_overrides();
        assert_eq!(s.overrides(), []);
    }

    #[test]
    fn fusion_plans_are_the_workload_s() {
        let w = tiny();
        let mut s = Scenario::defaults(&w);
        s.set_fusion(&w, "fused").unwrap();
        assert_eq!(s.fusion(), 1);
        s.set_fusion_index(0).unwrap();
        assert_eq!(s.fusion(), 0);
        let e = refused(&s, |s| s.set_fusion_index(99));
        assert_eq!(
            e,
            "fusion plan index 99 is out of range: the workload has 2 fusion plans"
        );
        let e = refused(&s, |s| s.set_fusion(&w, "fusd"));
        assert!(
            e.contains("has no fusion plan `fusd` (did you mean `fused`?)"),
            "{e}"
        );
    }

    #[test]
    fn mode_and_overlap_are_set() {
        let w = tiny();
        let mut s = Scenario::defaults(&w);
        s.set_mode(Mode::Roofline);
        s.set_overlap_comm(true);
        assert_eq!((s.mode(), s.overlap_comm()), (Mode::Roofline, true));
    }

    #[test]
    fn memory_utilization_stays_in_its_range() {
        let w = tiny();
        let mut s = Scenario::defaults(&w);
        for good in [0.01, 0.5, 1.0] {
            s.set_memory_utilization(good).unwrap();
            assert_eq!(s.memory_utilization(), good);
        }
        for bad in [7.5, 1.0 + 1e-12, 0.0, 0.005, -0.5, f64::NAN, f64::INFINITY] {
            let e = refused(&s, |s| s.set_memory_utilization(bad));
            assert!(
                e.starts_with(&format!(
                    "memory utilization {bad} is out of range: expected from 0.01 to 1"
                )),
                "{e}"
            );
        }
    }

    #[test]
    fn types_are_set_one_key_or_applied_as_dtype_flags() {
        let w = tiny();
        let mut s = Scenario::defaults(&w);
        // `set_type` sets the key alone; `apply_types` also moves the slots left on the
        // other 16-bit float (`Types::apply`).
        s.set_type(TypeKey::Role(Role::Activation), Format::Fp16);
        assert_eq!(s.dtypes().role(Role::Weight), Format::Bf16);
        s.set_types(w.default_dtypes);
        s.apply_types([(TypeKey::Role(Role::Activation), Format::Fp16)]);
        assert_eq!(s.dtypes().role(Role::Weight), Format::Fp16);
        assert_eq!(s.dtypes().role(Role::Activation), Format::Fp16);
        s.set_types(Types::default());
        assert_eq!(*s.dtypes(), Types::default());
    }

    #[test]
    fn resolve_checks_every_value() {
        let w = tiny();
        let spec = ScenarioSpec {
            sets: vec![("batch".into(), 2.0), ("batch".into(), 4.0)],
            fusion: Some("fused".into()),
            mode: Mode::Roofline,
            overlap_comm: true,
            memory_utilization: Some(0.5),
            ..ScenarioSpec::default()
        };
        let s = Scenario::resolve(&w, &spec).unwrap();
        assert_eq!(s.overrides(), [(0, 4.0)]);
        assert_eq!(
            (s.fusion(), s.mode(), s.overlap_comm()),
            (1, Mode::Roofline, true)
        );
        assert_eq!(s.memory_utilization(), 0.5);
        let refuse = |change: fn(&mut ScenarioSpec)| {
            let mut spec = spec.clone();
            change(&mut spec);
            Scenario::resolve(&w, &spec).unwrap_err().to_string()
        };
        assert!(refuse(|s| s.memory_utilization = Some(7.5)).contains("out of range"));
        assert!(refuse(|s| s.sets.push(("batch".into(), f64::INFINITY))).contains("finite"));
        assert!(refuse(|s| s.fusion = Some("flash".into())).contains("no fusion plan"));
    }

    #[test]
    fn a_scenario_of_another_workload_is_refused_by_pricing() {
        let (w, gemm) = (tiny(), Workload::named("gemm").unwrap());
        let s = Scenario::defaults(&gemm);
        let e = s.check_against(&w).unwrap_err().to_string();
        assert!(
            e.starts_with("the scenario was resolved against a workload of "),
            "{e}"
        );
        assert!(
            e.ends_with("not workload `tiny` (3 params, 2 fusion plans)"),
            "{e}"
        );
        let chip = crate::core::chip::Chip::named("h100-sxm").unwrap();
        let priced = crate::core::timing::price(&w, &chip, &s);
        assert_eq!(priced.unwrap_err().to_string(), e);
    }
}
