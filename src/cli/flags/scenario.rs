//! One scenario's flags (`--set`, `--dtype`, `--fusion`, `--mode`, ...), the chips it is
//! priced on (`--chip`, `--include-announced`), the scenario file's (`--scenario`,
//! `--save-scenario`), `--disagg`, and which of them a person typed.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{ArgMatches, Args, ValueEnum};

use super::cost::CostArgs;
use crate::base::error::Error;
use crate::base::format::Format as DataFormat;
use crate::base::parse::{number_in, parse_set};
use crate::base::ranges;
use crate::base::types::{parse_type, TypeKey};
use crate::core::chip::{Announced, Chip};
use crate::core::engine::{self, Engine};
use crate::core::scenario::{Mode, ScenarioSpec};
use crate::study::serving::Disagg;

/// One scenario's choices, as `run`, `compare`, `plot roofline` and `report` take them.
#[derive(Args)]
pub(crate) struct ScenarioArgs {
    /// Override a param, e.g. --set batch=32 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub(crate) sets: Vec<(String, f64)>,
    /// Format of every weight, one weight group, the activations (GEMM inputs), the GEMM
    /// outputs or the KV cache (repeatable, later wins): keys weight, embed.weight,
    /// attention.weight, ffn.weight, experts.weight, activation, output (default: activation
    /// where 16 bits or wider, else bf16), kv; types fp32, tf32, bf16, fp16, fp8, fp8-b128,
    /// fp6, int8, mxfp4, nvfp4, fp4, int4, int4-g128, int4-g128-sym, int4-g64, int4-g64-asym,
    /// int4-g32, int4-g32-asym. E.g. --dtype weight=fp8 --dtype embed.weight=bf16
    #[arg(long = "dtype", value_name = "KEY=TYPE", value_parser = parse_type)]
    pub(crate) dtypes: Vec<(TypeKey, DataFormat)>,
    /// Fusion plan of the workload (default: the workload's default_fusion, else `none`)
    #[arg(long)]
    pub(crate) fusion: Option<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    pub(crate) mode: ModeArg,
    /// Let each collective's transfer overlap the kernel before it (off: they run in turn)
    #[arg(long)]
    pub(crate) overlap_comm: bool,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    pub(crate) memory_utilization: Option<f64>,
    /// Serving engine expected mode prices under: a built-in id (vllm, vllm@0.7, sglang,
    /// trtllm, trtllm-cpp, lmdeploy, compiled, jetstream, neuronx, vllm-hpu, or fitted: the
    /// chip's fitted constants alone; `stepcost engines`) or an engine file (default: each
    /// chip file's engine; roofline mode prices under none)
    #[arg(long, value_name = "NAME[@VERSION]")]
    pub(crate) engine: Option<String>,
}

impl ScenarioArgs {
    /// The scenario as the library takes it, the engine read (an unknown one is an error
    /// naming the closest).
    pub(crate) fn spec(self) -> Result<ScenarioSpec, Error> {
        let engine = self.engine.as_deref().map(engine::resolve).transpose()?;
        Ok(ScenarioSpec {
            sets: self.sets,
            dtypes: self.dtypes,
            fusion: self.fusion,
            mode: self.mode.into(),
            overlap_comm: self.overlap_comm,
            memory_utilization: self.memory_utilization,
            engine,
        })
    }
}

/// The engines a list names (`vllm,sglang`, or `all` for every built-in), each read once;
/// empty for none given.
pub(crate) fn engines(names: &[String]) -> Result<Vec<Arc<Engine>>, Error> {
    match names {
        [all] if all == "all" => engine::builtin_ids().map(engine::builtin).collect(),
        names => names.iter().map(|n| engine::resolve(n.trim())).collect(),
    }
}

/// A workload, one scenario and the chips to price it on.
#[derive(Args)]
pub(crate) struct ChipsScenario {
    /// Workload: built-in name or YAML file (or the --scenario file's `workload`)
    #[arg(required_unless_present = "scenario")]
    pub(crate) workload: Option<String>,
    /// Chips, comma-separated (built-in names or YAML files), or `all`
    #[arg(long, value_delimiter = ',', required_unless_present = "scenario")]
    pub(crate) chip: Vec<String>,
    #[command(flatten)]
    pub(crate) announced: AnnouncedArg,
    #[command(flatten)]
    pub(crate) scenario: ScenarioArgs,
    #[command(flatten)]
    pub(crate) cost: CostArgs,
    #[command(flatten)]
    pub(crate) file: ScenarioFileArgs,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    /// What real kernels achieve: achievable fractions of peak and bandwidth, a fixed cost per
    /// kernel, tile and wave quantization, cache hits, dequantization
    Expected,
    /// max(FLOPs / peak, bytes / bandwidth) with datasheet peaks: the ceiling
    Roofline,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Expected => Mode::Expected,
            ModeArg::Roofline => Mode::Roofline,
        }
    }
}

/// `--include-announced`: whether `--chip all` takes in the roadmap chips. The flag of every
/// command that takes `--chip` and may be given `all`.
#[derive(Args, Clone, Copy)]
pub(crate) struct AnnouncedArg {
    /// With `--chip all`: the announced (roadmap) chips too, which `all` leaves out otherwise
    #[arg(long)]
    include_announced: bool,
}

impl AnnouncedArg {
    /// The chips `names` names, `all` with or without the announced ones as the flag says.
    pub(crate) fn load(self, names: &[String]) -> Result<Vec<Chip>, Error> {
        let announced = if self.include_announced {
            Announced::Include
        } else {
            Announced::Exclude
        };
        Chip::load_selected(names, announced)
    }
}

/// `--scenario` and `--save-scenario`.
#[derive(Args, Clone, Default)]
pub(crate) struct ScenarioFileArgs {
    /// YAML scenario file: workload, chips, sets, types, fusion, engine, mode, context, request,
    /// memory_utilization, cost, prices (see the README's "Scenario files"); flags given
    /// override its keys, `--set` and `--dtype` one key at a time
    #[arg(long, value_name = "FILE")]
    pub(crate) scenario: Option<PathBuf>,
    /// Write the scenario as priced (the file's keys under the flags) to FILE, whole or not
    /// at all, once the command succeeds; `--scenario FILE` reads it back to the same numbers
    #[arg(long, value_name = "FILE")]
    pub(crate) save_scenario: Option<PathBuf>,
}

/// The flags a person typed, by clap's id (a field's name): a flag with a default counts
/// as given only when typed. A scenario file's key gives way only to them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Given(Vec<String>);

impl Given {
    /// The ids of `matches` whose values came from the command line.
    pub(crate) fn of(matches: &ArgMatches) -> Given {
        let typed = |id: &&clap::Id| {
            matches.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine)
        };
        Given(
            matches
                .ids()
                .filter(typed)
                .map(|id| id.to_string())
                .collect(),
        )
    }

    /// Whether the flag whose id is `id` was typed.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.0.iter().any(|g| g == id)
    }
}

/// `--disagg` of `serving` and `plan --rate`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum DisaggArg {
    Off,
    On,
    Auto,
}

impl From<DisaggArg> for Disagg {
    fn from(d: DisaggArg) -> Disagg {
        match d {
            DisaggArg::Off => Disagg::Off,
            DisaggArg::On => Disagg::On,
            DisaggArg::Auto => Disagg::Auto,
        }
    }
}
