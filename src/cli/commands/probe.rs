//! `probe`: times the kernels stepcost prices on this machine by running the Python package's
//! probe (`python3 -m stepcost.probe`), and writes its case file. Python, the backend's package
//! (numpy or torch) and the stepcost package are checked first: a missing one is named with
//! the command that installs it, and the command fails.

use std::io::{self, ErrorKind};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::cli::output::{self, emit, Inputs};

/// The probe's backends.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// CPU GEMMs, GEMVs, a copy stream and elementwise adds through numpy
    Numpy,
    /// Whatever device torch sees (CUDA, ROCm, else the CPU): GEMMs per data type (fp8 where
    /// the device runs it), GEMVs, streams, attention, all-reduce over local devices
    Torch,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Numpy => "numpy",
            Backend::Torch => "torch",
        }
    }

    /// How to install the backend's package.
    fn install(self) -> &'static str {
        match self {
            Backend::Numpy => "`python3 -m pip install numpy`",
            Backend::Torch => {
                "torch, the build for this machine's driver (https://pytorch.org/get-started)"
            }
        }
    }
}

/// `stepcost probe`'s arguments.
#[derive(clap::Args, Debug)]
pub(crate) struct ProbeArgs {
    /// What times the kernels
    #[arg(long, value_enum, default_value = "numpy")]
    backend: Backend,
    /// The run's time budget in seconds: kernels that no longer fit are left out (named on
    /// stderr)
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    budget_s: f64,
    /// The chip id the rows name (default: the built-in chip the device is, else a new id made
    /// of its name, such as `cpu-amd-epyc-7b13`)
    #[arg(long)]
    chip: Option<String>,
    /// The torch device (`cuda:1`, `cpu`; default: the first GPU torch sees, else the CPU)
    #[arg(long)]
    device: Option<String>,
    /// CPU threads the BLAS and torch may use (default: theirs, every core); 1 gives steadier
    /// times on a machine others share
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    threads: Option<u64>,
    /// The Python interpreter that has the stepcost package (default: `STEPCOST_PYTHON` where
    /// it is set, else `python3`)
    #[arg(long, value_name = "PATH")]
    python: Option<String>,
    /// Where the case file goes (default: stdout)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Asks the interpreter which of the modules the probe needs it lacks (one name a line).
const CHECK: &str = r#"
import importlib.util, sys
for name in sys.argv[1:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except Exception:
        found = False
    if not found:
        print(name)
"#;

/// Runs the probe and writes its case file.
pub(crate) fn run(args: ProbeArgs) -> Result<()> {
    if !(args.budget_s.is_finite() && args.budget_s > 0.0) {
        bail!(
            "--budget-s: `{}` is not a positive number of seconds",
            args.budget_s
        );
    }
    let plan = output::plan(args.out.as_deref(), &Inputs::default())?;
    let python = (args.python.clone())
        .or_else(|| {
            std::env::var("STEPCOST_PYTHON")
                .ok()
                .filter(|p| !p.is_empty())
        })
        .unwrap_or_else(|| "python3".to_owned());
    check_modules(&python, args.backend)?;
    let mut command = Command::new(&python);
    command.args(["-m", "stepcost.probe", "--backend", args.backend.name()]);
    command.args(["--budget-s", &args.budget_s.to_string(), "--out", "-"]);
    command.args(["--progress", "auto"]);
    if let Some(chip) = &args.chip {
        command.args(["--chip", chip]);
    }
    if let Some(device) = &args.device {
        command.args(["--device", device]);
    }
    if let Some(threads) = args.threads {
        command.args(["--threads", &threads.to_string()]);
    }
    // The bar and the probe's notes go to this process's stderr as they come.
    let done = (command.stdin(Stdio::null()).stderr(Stdio::inherit()))
        .output()
        .with_context(|| format!("running `{python} -m stepcost.probe`"))?;
    if !done.status.success() {
        bail!(
            "`{python} -m stepcost.probe` failed ({}); its reason is above",
            done.status
        );
    }
    emit(plan, &done.stdout)
}

/// Fails, naming what to install, where the interpreter is missing or lacks the backend's
/// package or stepcost's.
fn check_modules(python: &str, backend_kind: Backend) -> Result<()> {
    let backend = backend_kind.name();
    let done = match Command::new(python)
        .args(["-c", CHECK, backend, "stepcost", "stepcost.probe"])
        .stdin(Stdio::null())
        .output()
    {
        Ok(done) => done,
        Err(e) if e.kind() == ErrorKind::NotFound => bail!(
            "no Python interpreter `{python}`: install Python 3.9 or later, or name one with --python (or STEPCOST_PYTHON)"
        ),
        Err(e) => return Err(io::Error::new(e.kind(), e).into()),
    };
    if !done.status.success() {
        bail!(
            "`{python}` could not check for its packages ({}): {}",
            done.status,
            String::from_utf8_lossy(&done.stderr).trim()
        );
    }
    let missing: Vec<String> = (String::from_utf8_lossy(&done.stdout).lines())
        .map(str::to_owned)
        .collect();
    let mut needs = Vec::new();
    if missing.iter().any(|m| m == backend) {
        needs.push(format!(
            "the {backend} backend needs {}",
            backend_kind.install()
        ));
    }
    if missing.iter().any(|m| m.starts_with("stepcost")) {
        needs.push(
            "the probe is in stepcost's Python package: install its wheel (from a checkout: `maturin build -m python/Cargo.toml`, then `pip install target/wheels/stepcost-*.whl`)"
                .to_owned(),
        );
    }
    if !needs.is_empty() {
        bail!("`{python}` cannot run the probe: {}", needs.join("; "));
    }
    Ok(())
}
