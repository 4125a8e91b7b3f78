//! One thing to price: a workload's param overrides, the data type of each role, a fusion
//! plan and a pricing mode. Names are resolved against the workload once, so a sweep can
//! build many scenarios cheaply.

use std::fmt;

use serde::Serialize;

use crate::base::error::Error;
use crate::base::format::Format;
use crate::base::types::{TypeKey, Types};
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

/// A scenario resolved against one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `(param index, value)`; later entries win.
    pub overrides: Vec<(usize, f64)>,
    /// The format of every slot: the workload's checkpoint types with the scenario's over them.
    pub dtypes: Types,
    /// Index into `Workload::fusion_plans`.
    pub fusion: usize,
    pub mode: Mode,
    /// Whether a collective's transfer overlaps the kernel before it (off by default).
    pub overlap_comm: bool,
    /// The share of the chip's reported memory the serving engine uses (vLLM's
    /// `gpu_memory_utilization`); in (0, 1].
    pub memory_utilization: f64,
}

/// A scenario as a person names it: param and plan names, before they are checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioSpec {
    pub sets: Vec<(String, f64)>,
    /// `--dtype` settings in order (`weight=fp8` then `embed.weight=bf16`).
    pub dtypes: Vec<(TypeKey, Format)>,
    pub fusion: Option<String>,
    pub mode: Mode,
    pub overlap_comm: bool,
    /// Default: [`DEFAULT_MEMORY_UTILIZATION`].
    pub memory_utilization: Option<f64>,
}

impl Scenario {
    /// The workload's defaults: its default dtypes and fusion plan, no overrides.
    pub fn defaults(workload: &Workload) -> Scenario {
        Scenario {
            overrides: Vec::new(),
            dtypes: workload.default_dtypes,
            fusion: workload.default_fusion,
            mode: Mode::default(),
            overlap_comm: false,
            memory_utilization: DEFAULT_MEMORY_UTILIZATION,
        }
    }

    /// Resolves `spec` against `workload`: unknown params or plans are errors naming the
    /// known ones; a value must be finite.
    pub fn resolve(workload: &Workload, spec: &ScenarioSpec) -> Result<Scenario, Error> {
        let mut scenario = Scenario::defaults(workload);
        for (name, value) in &spec.sets {
            let index = workload.settable_param_index(name)?;
            if !value.is_finite() {
                return Err(Error::value(format!(
                    "param `{name}` must be a finite number, found {value}"
                )));
            }
            scenario.overrides.push((index, *value));
        }
        scenario.dtypes.apply(spec.dtypes.iter().copied());
        if let Some(plan) = &spec.fusion {
            scenario.fusion = workload.fusion_index(plan)?;
        }
        scenario.mode = spec.mode;
        scenario.overlap_comm = spec.overlap_comm;
        if let Some(u) = spec.memory_utilization {
            if !(u > 0.0 && u <= 1.0) {
                return Err(Error::value(format!(
                    "memory utilization must be above 0 and at most 1, found {u}"
                )));
            }
            scenario.memory_utilization = u;
        }
        Ok(scenario)
    }
}
