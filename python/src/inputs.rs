//! Chips, workloads and scenario choices as Python gives them, made into the library's
//! types: a chip or workload is a loaded object or a spec (YAML text if it holds a line
//! break, else an existing path, else a built-in name); params, types and modes are checked by
//! the library's own parsers, so a bad one is told as the command line tells it.

use pyo3::prelude::*;

use stepcost::{types::Format, types::TypeKey, workload::FileKind, Chip, Mode, Source, Workload};

use crate::errors::{input, OrRaise};

/// A chip loaded from Python: the chip and how it was given (so that it can be pickled and
/// loaded again on another process, as a cluster's workers do).
#[pyclass(name = "Chip", module = "stepcost", frozen)]
pub struct PyChip {
    pub chip: Chip,
    spec: String,
    name: Option<String>,
}

/// A workload loaded from Python, with how it was given.
#[pyclass(name = "Workload", module = "stepcost", frozen)]
pub struct PyWorkload {
    pub workload: Workload,
    spec: String,
    name: Option<String>,
}

/// What pickling keeps of a loaded chip or workload: its class and how it was given.
type Reduced = (Py<PyAny>, (String, Option<String>));

/// The source `spec` names: YAML text if it holds a line break (errors call it `name`), else
/// an existing path, else a built-in name.
fn source(spec: &str, name: Option<&str>, kind: FileKind) -> PyResult<Source> {
    match spec.contains('\n') {
        true => Ok(Source::from_text(name.unwrap_or("<text>"), spec)),
        false => Source::resolve(spec, kind).or_raise(),
    }
}

#[pymethods]
impl PyChip {
    #[new]
    #[pyo3(signature = (spec, name = None))]
    pub fn new(py: Python<'_>, spec: String, name: Option<String>) -> PyResult<PyChip> {
        let source = source(&spec, name.as_deref(), FileKind::Chip)?;
        let chip = py.detach(|| Chip::load(&source)).or_raise()?;
        Ok(PyChip { chip, spec, name })
    }

    /// The file stem (`h100-sxm`), or the name given with YAML text.
    #[getter]
    fn id(&self) -> &str {
        self.chip.id()
    }

    /// The product name (`NVIDIA H100 SXM`).
    #[getter]
    fn name(&self) -> &str {
        self.chip.name()
    }

    /// Usable memory in bytes: what the device reports to software.
    #[getter]
    fn capacity_bytes(&self) -> f64 {
        self.chip.capacity_bytes()
    }

    /// HBM bandwidth in bytes per second.
    #[getter]
    fn bandwidth_bytes_per_s(&self) -> f64 {
        self.chip.bandwidth_bytes_per_s()
    }

    /// Cloud price per chip-hour in USD on the chip's price basis, if it has one.
    #[getter]
    fn usd_per_hour(&self) -> Option<f64> {
        self.chip.price_usd_per_hour()
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<Reduced> {
        let class = py.get_type::<PyChip>().into_any().unbind();
        Ok((class, (self.spec.clone(), self.name.clone())))
    }

    fn __repr__(&self) -> String {
        format!("<stepcost.Chip {} ({})>", self.chip.id(), self.chip.name())
    }
}

#[pymethods]
impl PyWorkload {
    #[new]
    #[pyo3(signature = (spec, name = None))]
    pub fn new(py: Python<'_>, spec: String, name: Option<String>) -> PyResult<PyWorkload> {
        let source = source(&spec, name.as_deref(), FileKind::Workload)?;
        let workload = py.detach(|| Workload::load(&source)).or_raise()?;
        Ok(PyWorkload {
            workload,
            spec,
            name,
        })
    }

    /// The file stem (`llama-3.1-70b`), or the name given with YAML text.
    #[getter]
    fn id(&self) -> &str {
        self.workload.id()
    }

    /// The model's name (`Llama-3.1-70B`).
    #[getter]
    fn name(&self) -> &str {
        self.workload.name()
    }

    /// The params' names, in the file's order.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.workload.param_names().map(str::to_owned).collect()
    }

    /// The fusion plans' names, `none` first.
    #[getter]
    fn fusion_plans(&self) -> Vec<String> {
        self.workload
            .fusion_plan_names()
            .map(str::to_owned)
            .collect()
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<Reduced> {
        let class = py.get_type::<PyWorkload>().into_any().unbind();
        Ok((class, (self.spec.clone(), self.name.clone())))
    }

    fn __repr__(&self) -> String {
        format!(
            "<stepcost.Workload {} ({})>",
            self.workload.id(),
            self.workload.name()
        )
    }
}

/// A chip as an argument: loaded, or a spec.
#[derive(FromPyObject)]
pub enum ChipArg<'py> {
    Loaded(PyRef<'py, PyChip>),
    Spec(String),
}

/// A workload as an argument: loaded, or a spec.
#[derive(FromPyObject)]
pub enum WorkloadArg<'py> {
    Loaded(PyRef<'py, PyWorkload>),
    Spec(String),
}

impl ChipArg<'_> {
    /// The one chip given, as `run --chip` loads it (`all` names no chip here).
    pub fn load(&self, py: Python<'_>) -> PyResult<Chip> {
        match self {
            ChipArg::Loaded(c) => Ok(c.chip.clone()),
            ChipArg::Spec(spec) => Ok(PyChip::new(py, spec.clone(), None)?.chip),
        }
    }
}

impl WorkloadArg<'_> {
    pub fn load(&self, py: Python<'_>) -> PyResult<Workload> {
        match self {
            WorkloadArg::Loaded(w) => Ok(w.workload.clone()),
            WorkloadArg::Spec(spec) => Ok(PyWorkload::new(py, spec.clone(), None)?.workload),
        }
    }
}

/// Refuses an empty list of chips, as the command line refuses `--chip` left out: `call`
/// (`compare`, `a plan`) prices at least one.
pub fn some_chips(args: &[ChipArg], call: &str) -> PyResult<()> {
    match args.is_empty() {
        true => Err(input(format!(
            "{call} needs at least one chip, and `chips` is empty; give a chip's name, path or \
             YAML text, a loaded chip, a list of them, or `all`"
        ))),
        false => Ok(()),
    }
}

/// The chips of `args`; the spec `all` is every built-in chip.
pub fn chips(py: Python<'_>, args: &[ChipArg]) -> PyResult<Vec<Chip>> {
    let mut chips = Vec::new();
    for arg in args {
        match arg {
            ChipArg::Loaded(c) => chips.push(c.chip.clone()),
            ChipArg::Spec(all) if all == "all" => {
                chips.extend(py.detach(|| Chip::load_all(&["all"])).or_raise()?)
            }
            ChipArg::Spec(spec) => chips.push(PyChip::new(py, spec.clone(), None)?.chip),
        }
    }
    Ok(chips)
}

/// `expected` or `roofline`.
pub fn mode(name: &str) -> PyResult<Mode> {
    match name {
        "expected" => Ok(Mode::Expected),
        "roofline" => Ok(Mode::Roofline),
        other => Err(input(format!(
            "unknown mode `{other}`; expected `expected` or `roofline`"
        ))),
    }
}

/// A type key (`weight`, `kv`, `experts.weight`).
pub fn type_key(name: &str) -> PyResult<TypeKey> {
    name.parse().map_err(input)
}

/// A storage format (`bf16`, `fp8`, `int4-g128`).
pub fn format(name: &str) -> PyResult<Format> {
    name.parse().map_err(input)
}

/// `(key, format)` pairs in the order given.
pub fn dtypes(pairs: &[(String, String)]) -> PyResult<Vec<(TypeKey, Format)>> {
    (pairs.iter())
        .map(|(k, f)| Ok((type_key(k)?, format(f)?)))
        .collect()
}

/// `(key, formats)` axes in the order given; a key without formats is refused, as a sweep's
/// grid refuses it.
pub fn dtype_axes(axes: &[(String, Vec<String>)]) -> PyResult<Vec<(TypeKey, Vec<Format>)>> {
    (axes.iter())
        .map(|(k, fs)| {
            if fs.is_empty() {
                return Err(input(format!("`{}` has no data types", k.trim())));
            }
            let formats = fs.iter().map(|f| format(f)).collect::<PyResult<_>>()?;
            Ok((type_key(k)?, formats))
        })
        .collect()
}
