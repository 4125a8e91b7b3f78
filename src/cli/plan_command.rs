//! `plan`: its flags and its one function.

use anyhow::Result;
use clap::{Args, ValueEnum};

use super::args::{CostArgs, ModeArg, OutputArgs, ScenarioFileArgs};
use super::output::{self, emit};
use super::scenario;
use crate::base::format::Format as DataFormat;
use crate::base::param::ScenarioParam;
use crate::base::parse::{number_in, parse_dtype_axis, parse_set, whole_in};
use crate::base::ranges;
use crate::base::source::{FileKind, Source};
use crate::base::types::TypeKey;
use crate::core::scenario::{Scenario, ScenarioSpec};
use crate::core::workload::Workload;
use crate::export::atomic::Target;
use crate::export::{self as exporter};
use crate::study::plan;

#[derive(Args)]
pub(crate) struct PlanArgs {
    /// Workload: built-in name or YAML file (it needs a `batch` param), or the --scenario
    /// file's `workload`
    #[arg(required_unless_present = "scenario")]
    pub(crate) workload: Option<String>,
    /// Output tokens per second of decode steps the deployment must serve, its $/M the chips'
    /// hours over them (prompts unpriced: --rate with --request prices whole requests; without
    /// it: one replica per chip and types, ranked by what a million tokens cost)
    #[arg(long, value_name = "N", value_parser = |t: &str| number_in(t, &ranges::TARGET_TOKENS_PER_S))]
    pub(crate) target_tokens_per_s: Option<f64>,
    /// Most milliseconds per output token a sequence may see
    #[arg(long, value_name = "L", value_parser = |t: &str| number_in(t, &ranges::MAX_MS_PER_TOKEN))]
    pub(crate) max_ms_per_token: Option<f64>,
    /// Requests per second a fleet must serve: per chip, the cheapest layout and instances
    /// that serve them within --max-ttft-ms and --max-ms-per-token, each instance in
    /// continuous-batching steady state, with its launch settings (needs --request)
    #[arg(long, value_name = "R", requires = "request")]
    pub(crate) rate: Option<f64>,
    /// Prompt and output tokens of every request (with --rate)
    #[arg(long, value_name = "in=I,out=O", value_parser = crate::study::validate::parse_request, requires = "rate")]
    pub(crate) request: Option<(u64, u64)>,
    /// Most milliseconds to a request's first token (with --rate)
    #[arg(long, value_name = "T", requires = "rate")]
    pub(crate) max_ttft_ms: Option<f64>,
    /// With --rate: prefill where sequences decode (off), on instances of its own (on), or
    /// whichever is cheaper (auto)
    #[arg(long, value_enum, default_value_t = super::serving_command::DisaggArg::Off, requires = "rate")]
    pub(crate) disagg: super::serving_command::DisaggArg,
    /// With --rate and prefill apart: the prefill pool's layout, e.g. --prefill-set tp=2
    /// (repeatable; degrees not named are 1); without it every layout one prompt fits on
    #[arg(long = "prefill-set", value_name = "NAME=VALUE", value_parser = parse_set, requires = "rate")]
    pub(crate) prefill_sets: Vec<(String, f64)>,
    /// Tokens already in each sequence's KV cache (the workload's `context` param)
    #[arg(long, value_name = "C", value_parser = |t: &str| whole_in(t, &ranges::CONTEXT).map(|c| c as f64))]
    pub(crate) context: Option<f64>,
    /// Chips to consider, comma-separated, or `all`
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub(crate) chip: Vec<String>,
    #[command(flatten)]
    pub(crate) announced: super::announced::AnnouncedArg,
    /// Data types to try: ROLE=LIST (repeatable; default weight=bf16,fp8); every combination
    /// is tried on every chip
    #[arg(long = "dtype", value_name = "KEY=LIST", value_parser = parse_dtype_axis)]
    pub(crate) dtypes: Vec<(TypeKey, Vec<DataFormat>)>,
    /// Override a param, e.g. --set tokens=1 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    pub(crate) sets: Vec<(String, f64)>,
    /// Fusion plan of the workload
    #[arg(long)]
    pub(crate) fusion: Option<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    pub(crate) mode: ModeArg,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    pub(crate) memory_utilization: Option<f64>,
    /// Rank by cost ($ per million tokens, or per hour for a target), chips (fewest for the
    /// target; needs --target-tokens-per-s) or latency (ms per token)
    #[arg(long, value_enum, default_value_t = PlanSortArg::Cost)]
    pub(crate) sort: PlanSortArg,
    /// Plan on the pessimistic end of each step's 80 % band (expected mode): every step
    /// taken as slow as the high end of its band (the low end of its tokens per second) for
    /// the latency bound, the replicas a target needs, the costs and the ranking. With
    /// --rate: TTFT at the high end of the prefill band and TPOT of the decode band within
    /// their bounds, instances counted at requests/s at the low end of the request band
    #[arg(long)]
    pub(crate) conservative: bool,
    /// Also list the chip and type choices that cannot meet the request (nothing fits, or
    /// too slow), with why
    #[arg(long)]
    pub(crate) include_unfit: bool,
    #[command(flatten)]
    pub(crate) cost: CostArgs,
    #[command(flatten)]
    pub(crate) file: ScenarioFileArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum PlanSortArg {
    Cost,
    Chips,
    Latency,
}

impl From<PlanSortArg> for crate::study::plan::PlanSort {
    fn from(s: PlanSortArg) -> Self {
        match s {
            PlanSortArg::Cost => Self::Cost,
            PlanSortArg::Chips => Self::Chips,
            PlanSortArg::Latency => Self::Latency,
        }
    }
}

/// `plan`: every chip and combination of the data types asked for (weight bf16 and fp8 when
/// none are), at the cheapest layout.
pub(crate) fn plan_command(mut args: PlanArgs, given: &scenario::Given) -> Result<()> {
    let settled = scenario::plan(&mut args, given)?;
    if args.rate.is_some() {
        return super::serving_command::fleet_command(args, &settled.workload);
    }
    let source = Source::resolve(&settled.workload, FileKind::Workload)?;
    let inputs = settled.command_inputs(&source, &args.chip, &args.cost);
    let target = Target::from_out(args.output.out.as_deref());
    let saver = settled.saver(&inputs, std::slice::from_ref(&target))?;
    let output = output::plan_all(vec![target], &inputs)?;
    let workload = Workload::load(&source)?;
    let mut sets = args.sets;
    if let Some(context) = args.context {
        sets.push((ScenarioParam::Context.name().into(), context));
    }
    let spec = ScenarioSpec {
        sets,
        dtypes: Vec::new(),
        fusion: args.fusion,
        mode: args.mode.into(),
        overlap_comm: false,
        memory_utilization: args.memory_utilization,
    };
    let scenario = Scenario::resolve(&workload, &spec)?;
    let request = plan::PlanRequest {
        target_tokens_per_s: args.target_tokens_per_s,
        max_ms_per_token: args.max_ms_per_token,
        dtype_choices: plan::dtype_choices(scenario.dtypes, &args.dtypes),
        sort: args.sort.into(),
        conservative: args.conservative,
        include_unfit: args.include_unfit,
        assumed: plan::assumptions(&workload, &scenario)?,
        scenario,
    };
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let entries = plan::plan(&workload, &chips, &request)?;
    let mut buffer = Vec::new();
    let (format, shape) = (&args.output.format, args.output.format.shape()?);
    exporter::write_plan(
        &mut buffer,
        &workload.name,
        &request,
        &entries,
        format.into(),
        &shape,
    )?;
    emit(output, &buffer)?;
    saver.commit()
}
