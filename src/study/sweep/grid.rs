//! A sweep's grid: the axes as given ([`Axes`]), checked against the workload into a
//! [`Grid`], whose scenario `i` is decoded from `i` in mixed radix so that no scenario list is
//! ever built.

use std::sync::Arc;

use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::types::TypeKey;
use crate::core::chip::Chip;
use crate::core::engine::Engine;
use crate::core::scenario::{self, Mode, Scenario};
use crate::core::timing::DEFAULT_MEMORY_UTILIZATION;
use crate::core::workload::Workload;

/// The axes of a sweep as a person gives them, before they are checked against the workload.
#[derive(Debug, Clone, Default)]
pub struct Axes {
    /// The chips, the most significant axis.
    pub chips: Vec<Chip>,
    /// The engines (`--engine vllm,sglang`), the next axis; none: each chip's default
    /// engine (one value of the axis). Roofline mode prices every engine alike.
    pub engines: Vec<Arc<Engine>>,
    /// `(param name, values)`, in the order given.
    pub params: Vec<(String, Vec<f64>)>,
    /// `(role, types)`, in the order given.
    pub dtypes: Vec<(TypeKey, Vec<Format>)>,
    /// Fusion plans by name: none for the workload's default plan, `all` for every plan.
    pub fusions: Vec<String>,
    /// The mode every scenario is priced in (default: expected).
    pub mode: Mode,
    /// Default: [`DEFAULT_MEMORY_UTILIZATION`].
    pub memory_utilization: Option<f64>,
}

/// The axes of a sweep, checked: at least one chip, no empty axis, no param or role given
/// twice, every param and plan one the workload has, every value finite, the memory
/// utilisation in its range. Every scenario of their product is
/// priced.
#[derive(Debug, Clone)]
pub struct Grid<'a> {
    workload: &'a Workload,
    chips: Vec<Chip>,
    /// The engine axis; `[None]`: each chip's default engine.
    engines: Vec<Option<Arc<Engine>>>,
    /// `(param index, values)`, in the order given.
    params: Vec<(usize, Vec<f64>)>,
    /// `(role, types)`, in the order given.
    dtypes: Vec<(TypeKey, Vec<Format>)>,
    /// Fusion plan indices.
    fusions: Vec<usize>,
    mode: Mode,
    memory_utilization: f64,
}

/// Scenarios of the grid of `workload` whose axes have these lengths: `chips` (times the
/// engines, where an engine axis is given), each param's
/// values, each role's types, and the fusion plans `fusions` names as [`Axes::fusions`] does;
/// `None` past 2^64. A sweep checks it against its limit before any axis is expanded.
pub fn grid_len(
    workload: &Workload,
    chips: usize,
    params: impl IntoIterator<Item = usize>,
    dtypes: impl IntoIterator<Item = usize>,
    fusions: &[String],
) -> Option<u64> {
    let plans = match fusions {
        [] => 1,
        [all] if all == "all" => workload.fusion_plans.len(),
        names => names.len(),
    };
    std::iter::once(chips)
        .chain(params)
        .chain(dtypes)
        .chain(std::iter::once(plans))
        .try_fold(1u64, |acc, n| acc.checked_mul(n as u64))
}

impl<'a> Grid<'a> {
    /// Checks `axes` against `workload`.
    pub fn new(workload: &'a Workload, axes: Axes) -> Result<Grid<'a>, Error> {
        if axes.chips.is_empty() {
            return Err(Error::value("a sweep needs at least one chip"));
        }
        let mut params: Vec<(usize, Vec<f64>)> = Vec::new();
        for (name, values) in axes.params {
            let index = workload.settable_param_index(&name)?;
            if params.iter().any(|(i, _)| *i == index) {
                return Err(Error::value(format!(
                    "param `{name}` is set twice; give all its values in one --set"
                )));
            }
            if values.is_empty() {
                return Err(Error::value(format!("param `{name}` has no values")));
            }
            if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
                return Err(Error::value(format!(
                    "param `{name}` must be a finite number, found {bad}"
                )));
            }
            params.push((index, values));
        }
        let mut dtypes: Vec<(TypeKey, Vec<Format>)> = Vec::new();
        for (key, types) in axes.dtypes {
            if dtypes.iter().any(|(k, _)| *k == key) {
                return Err(Error::value(format!(
                    "`{key}` is set twice; give all its types in one --dtype"
                )));
            }
            if types.is_empty() {
                return Err(Error::value(format!("`{key}` has no data types")));
            }
            dtypes.push((key, types));
        }
        let fusions = match axes.fusions.as_slice() {
            [] => vec![workload.default_fusion],
            [all] if all == "all" => (0..workload.fusion_plans.len()).collect(),
            names => names
                .iter()
                .map(|n| workload.fusion_index(n))
                .collect::<Result<Vec<_>, _>>()?,
        };
        for (i, e) in axes.engines.iter().enumerate() {
            if axes.engines[..i].iter().any(|f| f.id() == e.id()) {
                return Err(Error::value(format!(
                    "engine `{}` is given twice; give each engine once in --engine",
                    e.id()
                )));
            }
        }
        let engines = match axes.engines.is_empty() {
            true => vec![None],
            false => axes.engines.into_iter().map(Some).collect(),
        };
        Ok(Grid {
            workload,
            chips: axes.chips,
            engines,
            params,
            dtypes,
            fusions,
            mode: axes.mode,
            memory_utilization: match axes.memory_utilization {
                Some(u) => scenario::memory_utilization(u)?,
                None => DEFAULT_MEMORY_UTILIZATION,
            },
        })
    }

    /// The workload the grid was checked against.
    pub fn workload(&self) -> &'a Workload {
        self.workload
    }

    /// The chip axis, in the order given.
    pub fn chips(&self) -> &[Chip] {
        &self.chips
    }

    /// The mode every scenario is priced in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Sizes of the axes, most significant first: chips, engines, params, dtypes, fusion
    /// plans.
    fn radices(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.chips.len())
            .chain(std::iter::once(self.engines.len()))
            .chain(self.params.iter().map(|(_, v)| v.len()))
            .chain(self.dtypes.iter().map(|(_, v)| v.len()))
            .chain(std::iter::once(self.fusions.len()))
    }

    /// Scenarios in the grid, or `None` if the count does not fit in 64 bits.
    pub fn len(&self) -> Option<u64> {
        self.radices()
            .try_fold(1u64, |acc, n| acc.checked_mul(n as u64))
    }

    /// Whether the grid has no scenario (never, once built; kept for the `len` convention).
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Sets `scenario` (one of the grid's workload, from [`Scenario::defaults`]) to scenario
    /// `index` of the grid and returns its chip's index. Allocates nothing once the
    /// scenario's overrides have grown to the grid's params: a sweep calls it per scenario.
    pub fn scenario(&self, mut index: u64, scenario: &mut Scenario) -> Result<usize, Error> {
        scenario.check_against(self.workload)?;
        let mut digit = |n: usize| {
            let d = (index % n as u64) as usize;
            index /= n as u64;
            d
        };
        scenario.set_fusion_index(self.fusions[digit(self.fusions.len())])?;
        // Digits are taken least significant first, but keys are set in the order given, so
        // that `weight` then `embed.weight` keeps the embeddings apart.
        let mut picks = [0; TypeKey::COUNT];
        for (pick, (_, types)) in picks.iter_mut().zip(&self.dtypes).rev() {
            *pick = digit(types.len());
        }
        // From the workload's defaults each time: which 16-bit float the slots left unset
        // follow depends on this scenario's picks (`Types::apply`).
        scenario.set_types(self.workload.default_dtypes);
        scenario.apply_types(
            picks
                .iter()
                .zip(&self.dtypes)
                .map(|(pick, (key, types))| (*key, types[*pick])),
        );
        scenario.clear_overrides();
        for (param, values) in self.params.iter().rev() {
            scenario.set_param(*param, values[digit(values.len())])?;
        }
        scenario.set_mode(self.mode);
        scenario.set_memory_utilization(self.memory_utilization)?;
        let engine = &self.engines[digit(self.engines.len())];
        if scenario.engine().map(Engine::id) != engine.as_deref().map(Engine::id) {
            scenario.set_engine(engine.clone());
        }
        Ok(digit(self.chips.len()))
    }

    /// The chip's index of scenario `index`: its most significant digit.
    pub(crate) fn chip_of(&self, index: u64) -> usize {
        let rest = self.radices().skip(1);
        rest.fold(index, |index, n| index / n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dtype::Role;

    fn axes() -> Axes {
        Axes {
            chips: vec![Chip::named("h100-sxm").unwrap()],
            params: vec![("batch".into(), vec![1.0, 2.0])],
            ..Axes::default()
        }
    }

    fn refused(change: impl FnOnce(&mut Axes)) -> String {
        let w = Workload::named("llama-3.1-8b").unwrap();
        let mut axes = axes();
        change(&mut axes);
        Grid::new(&w, axes).unwrap_err().to_string()
    }

    #[test]
    fn a_grid_that_exists_is_valid() {
        let w = Workload::named("llama-3.1-8b").unwrap();
        let grid = Grid::new(&w, axes()).unwrap();
        assert_eq!(grid.len(), Some(2));
        assert_eq!(grid_len(&w, 1, [2], [], &[]), Some(2));
        assert!(refused(|a| a.chips.clear()).contains("at least one chip"));
        assert!(refused(|a| a.params[0].1.clear()).contains("no values"));
        assert!(refused(|a| a.params.push(("batch".into(), vec![4.0]))).contains("set twice"));
        assert!(refused(|a| a.params.push(("batchh".into(), vec![4.0]))).contains("`batch`?"));
        assert!(refused(|a| a.params[0].1.push(f64::NAN)).contains("finite"));
        assert!(
            refused(|a| a.dtypes.push((TypeKey::Role(Role::Weight), vec![])))
                .contains("no data types")
        );
        let twice = |a: &mut Axes| {
            a.dtypes.push((TypeKey::Role(Role::Kv), vec![Format::Fp8]));
            a.dtypes.push((TypeKey::Role(Role::Kv), vec![Format::Bf16]));
        };
        assert!(refused(twice).contains("set twice"));
        assert!(refused(|a| a.fusions.push("flsh".into())).contains("`flash`?"));
        for bad in [7.5, 0.0, f64::NAN] {
            let e = refused(|a| a.memory_utilization = Some(bad));
            assert!(e.starts_with(&format!("memory utilization {bad} is out of range")));
        }
    }

    #[test]
    fn a_scenario_is_set_whole_and_its_chip_is_the_top_digit() {
        let w = Workload::named("llama-3.1-8b").unwrap();
        let mut axes = axes();
        axes.chips.push(Chip::named("h200").unwrap());
        axes.fusions = vec!["all".into()];
        axes.memory_utilization = Some(0.5);
        let grid = Grid::new(&w, axes).unwrap();
        let plans = w.fusion_plans.len();
        let batch = w.param_index("batch").unwrap();
        // A scenario with an override of its own: the grid's scenario replaces it whole.
        let mut s = Scenario::defaults(&w);
        s.set(&w, "context", 7.0).unwrap();
        // chips x batch x plans, the chip most significant: index 2 * plans + plans + 1 is
        // chip 1, batch 2, plan 1.
        let index = (2 * plans + plans + 1) as u64;
        assert_eq!(grid.scenario(index, &mut s).unwrap(), 1);
        assert_eq!(grid.chip_of(index), 1);
        assert_eq!(s.overrides(), [(batch, 2.0)]);
        assert_eq!((s.fusion(), s.memory_utilization()), (1, 0.5));
        assert_eq!(grid.chip_of(0), 0);
        // A scenario of another workload is refused, not priced.
        let mut other = Scenario::defaults(&Workload::named("gemm").unwrap());
        assert!(grid.scenario(0, &mut other).is_err());
    }

    #[test]
    fn the_length_from_axis_lengths_is_the_grid_s() {
        let w = Workload::named("llama-3.1-8b").unwrap();
        for fusions in [
            vec![],
            vec!["all".to_owned()],
            vec!["none".into(), "flash".into()],
        ] {
            let mut axes = axes();
            axes.chips.push(Chip::named("h200").unwrap());
            axes.params.push(("context".into(), vec![1.0, 2.0, 3.0]));
            axes.dtypes
                .push((TypeKey::Role(Role::Kv), vec![Format::Fp8, Format::Bf16]));
            axes.fusions = fusions.clone();
            let grid = Grid::new(&w, axes).unwrap();
            assert_eq!(grid_len(&w, 2, [2, 3], [2], &fusions), grid.len());
        }
        assert_eq!(grid_len(&w, 2, [usize::MAX; 3], [], &[]), None);
    }
}
