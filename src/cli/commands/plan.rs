//! `plan`: the chips and data types that serve a throughput target within a latency bound,
//! ranked by cost; with `--rate`, the cheapest fleet per chip that serves whole requests
//! within their bounds, with its launch settings.

use anyhow::Result;
use clap::{Args, ValueEnum};

use crate::base::format::Format as DataFormat;
use crate::base::param::ScenarioParam;
use crate::base::parse::{number_in, parse_dtype_axis, parse_set, whole_in};
use crate::base::ranges;
use crate::base::source::{FileKind, Source};
use crate::base::types::TypeKey;
use crate::cli::flags::{
    engines, AnnouncedArg, CostArgs, DisaggArg, Given, ModeArg, OutputArgs, ScenarioFileArgs,
};
use crate::cli::launch::{batched_tokens, emit_bench, launch_layout, launches};
use crate::cli::output::{self, emit, Inputs};
use crate::cli::scenario::save::{cost_keys, number_pairs, texts, type_lists_key, Doc, Node};
use crate::cli::scenario::{has, Merge, Settled};
use crate::core::cost::CostView;
use crate::core::scenario::{Mode, Scenario, ScenarioSpec};
use crate::core::workload::Workload;
use crate::export::atomic::Target;
use crate::export::serving::{write_fleet, FleetHeader};
use crate::export::{self as exporter};
use crate::study::plan::{self, PlanSort};
use crate::study::serving::{self, KvLink, LayoutChoice, RequestShape, ServingOptions, Slo};
use crate::study::validate::parse_request;

#[derive(Args)]
pub(crate) struct PlanArgs {
    /// Workload: built-in name or YAML file (it needs a `batch` param), or the --scenario
    /// file's `workload`
    #[arg(required_unless_present = "scenario")]
    workload: Option<String>,
    /// Output tokens per second of decode steps the deployment must serve, its $/M the chips'
    /// hours over them (prompts unpriced: --rate with --request prices whole requests; without
    /// it: one replica per chip and types, ranked by what a million tokens cost)
    #[arg(long, value_name = "N", value_parser = |t: &str| number_in(t, &ranges::TARGET_TOKENS_PER_S))]
    target_tokens_per_s: Option<f64>,
    /// Most milliseconds per output token a sequence may see
    #[arg(long, value_name = "L", value_parser = |t: &str| number_in(t, &ranges::MAX_MS_PER_TOKEN))]
    max_ms_per_token: Option<f64>,
    /// Power at the wall the fleet may draw (system power per chip x --pue): per chip, the
    /// most whole replicas within it, their tokens/s and $/M; with --target-tokens-per-s or
    /// --rate, whether the fleet fits and the most it serves within it (latency bounds hold)
    #[arg(long, value_name = "MW",
          value_parser = |t: &str| number_in(t, &ranges::POWER_BUDGET_MW))]
    power_budget_mw: Option<f64>,
    /// Requests per second a fleet must serve: per chip, the cheapest layout and instances
    /// that serve them within --max-ttft-ms and --max-ms-per-token, each instance in
    /// continuous-batching steady state, with its launch settings (needs --request); from
    /// 1e-6 to 10^9
    #[arg(long, value_name = "R", requires = "request", value_parser = |t: &str| number_in(t, &ranges::REQUEST_RATE))]
    rate: Option<f64>,
    /// Prompt and output tokens of every request (with --rate)
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request, requires = "rate")]
    request: Option<(u64, u64)>,
    /// Most milliseconds to a request's first token (with --rate)
    #[arg(long, value_name = "T", requires = "rate", value_parser = |t: &str| number_in(t, &ranges::MAX_TTFT_MS))]
    max_ttft_ms: Option<f64>,
    /// With --rate: prefill where sequences decode (off), on instances of its own (on), or
    /// whichever is cheaper (auto)
    #[arg(long, value_enum, default_value_t = DisaggArg::Off, requires = "rate")]
    disagg: DisaggArg,
    /// With --rate and prefill apart: the prefill pool's layout, e.g. --prefill-set tp=2
    /// (repeatable; degrees not named are 1); without it every layout one prompt fits on
    #[arg(long = "prefill-set", value_name = "NAME=VALUE", value_parser = parse_set, requires = "rate")]
    prefill_sets: Vec<(String, f64)>,
    /// Tokens already in each sequence's KV cache (the workload's `context` param)
    #[arg(long, value_name = "C", value_parser = |t: &str| whole_in(t, &ranges::CONTEXT).map(|c| c as f64))]
    context: Option<f64>,
    /// Chips to consider, comma-separated, or `all`
    #[arg(long, value_delimiter = ',', default_value = "all")]
    chip: Vec<String>,
    #[command(flatten)]
    announced: AnnouncedArg,
    /// Data types to try: ROLE=LIST (repeatable; default weight=bf16,fp8); every combination
    /// is tried on every chip
    #[arg(long = "dtype", value_name = "KEY=LIST", value_parser = parse_dtype_axis)]
    dtypes: Vec<(TypeKey, Vec<DataFormat>)>,
    /// Override a param, e.g. --set tokens=1 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, f64)>,
    /// Serving engines to search, comma-separated (built-in ids such as vllm, sglang,
    /// trtllm, or engine files), or `all`, each on every chip; the fp8 choice runs as each
    /// engine runs it (W8A8 with its KV cache type where the chip multiplies in fp8)
    /// unless --dtype names the activation or KV type (default: each chip file's engine;
    /// roofline mode prices under none)
    #[arg(long, value_delimiter = ',', value_name = "NAME[@VERSION],...")]
    engine: Vec<String>,
    /// Fusion plan of the workload
    #[arg(long)]
    fusion: Option<String>,
    /// Pricing mode
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    memory_utilization: Option<f64>,
    /// Rank by cost ($ per million tokens, or per hour for a target), chips (fewest for the
    /// target; needs --target-tokens-per-s) or latency (ms per token)
    #[arg(long, value_enum, default_value_t = PlanSortArg::Cost)]
    sort: PlanSortArg,
    /// Plan on the pessimistic end of each step's 80 % band (expected mode): every step
    /// taken as slow as the high end of its band (the low end of its tokens per second) for
    /// the latency bound, the replicas a target needs, the costs and the ranking. With
    /// --rate: TTFT at the high end of the prefill band and TPOT of the decode band within
    /// their bounds, instances counted at requests/s at the low end of the request band
    #[arg(long)]
    conservative: bool,
    /// Also list the chip and type choices that cannot meet the request (nothing fits, or
    /// too slow), with why
    #[arg(long)]
    include_unfit: bool,
    /// With --rate: write the answer's benchmark into DIR (new or empty): each serving
    /// engine's launch command, its own serving benchmark's command at the answer's request
    /// shape and rate, and a README of what to compare and how to `ingest` the results
    #[arg(long, value_name = "DIR", requires = "rate")]
    emit_bench: Option<std::path::PathBuf>,
    #[command(flatten)]
    cost: CostArgs,
    #[command(flatten)]
    file: ScenarioFileArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum PlanSortArg {
    Cost,
    Chips,
    Latency,
}

impl From<PlanSortArg> for PlanSort {
    fn from(s: PlanSortArg) -> Self {
        match s {
            PlanSortArg::Cost => Self::Cost,
            PlanSortArg::Chips => Self::Chips,
            PlanSortArg::Latency => Self::Latency,
        }
    }
}

/// `plan`: every chip and combination of the data types asked for (weight bf16 and fp8 when
/// none are), at the cheapest layout; with `--rate`, the fleets.
pub(crate) fn run(mut args: PlanArgs, given: &Given) -> Result<()> {
    let settled = settle(&mut args, given)?;
    if args.rate.is_some() {
        return fleet(args, &settled.workload);
    }
    let source = Source::resolve(&settled.workload, FileKind::Workload)?;
    let inputs = settled.command_inputs(&source, &args.chip, &args.cost);
    let target = Target::from_out(args.output.out.as_deref());
    let saver = settled.saver(&inputs, std::slice::from_ref(&target))?;
    let output = output::plan_all(vec![target], &inputs)?;
    let workload = Workload::load(&source)?;
    let scenario = Scenario::resolve(&workload, &spec(&args))?;
    let request = plan::PlanRequest {
        target_tokens_per_s: args.target_tokens_per_s,
        max_ms_per_token: args.max_ms_per_token,
        dtype_choices: plan::dtype_choices(*scenario.dtypes(), &args.dtypes),
        engines: engines(&args.engine)?,
        engine_types: plan::leaves_types_to_engine(&args.dtypes),
        sort: args.sort.into(),
        conservative: args.conservative,
        include_unfit: args.include_unfit,
        assumed: plan::assumptions(&workload, &scenario)?,
        power_budget_mw: args.power_budget_mw,
        scenario,
    };
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let entries = plan::plan(&workload, &chips, &request)?;
    let unpriced = (entries.iter())
        .filter(|e| {
            let view = e.costing.model.view();
            let cost = |p: &plan::PlanPoint| match view {
                CostView::Cloud => p.cloud_usd_per_million_tokens,
                CostView::Tco => p.tco_usd_per_million_tokens,
            };
            e.outcome.as_ref().is_ok_and(|p| cost(p).is_none())
        })
        .count();
    if unpriced > 0 && request.sort == PlanSort::Cost {
        let priced = (entries.iter()).filter(|e| e.outcome.is_ok()).count() - unpriced;
        eprintln!(
            "note: {priced} chip and type choices ranked by cost; {unpriced} without a cost in this view listed after them, by chips (their notes below the table say why)"
        );
    }
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

/// The scenario the flags describe: `--set`s, then `--context`.
fn spec(args: &PlanArgs) -> ScenarioSpec {
    let mut sets = args.sets.clone();
    if let Some(context) = args.context {
        sets.push((ScenarioParam::Context.name().into(), context));
    }
    ScenarioSpec {
        sets,
        dtypes: Vec::new(),
        fusion: args.fusion.clone(),
        mode: args.mode.into(),
        overlap_comm: false,
        memory_utilization: args.memory_utilization,
        engine: None,
    }
}

/// `plan --rate`: per chip and types, the cheapest fleet that serves the rate within the
/// latency bounds, and the first one's launch settings.
fn fleet(args: PlanArgs, workload_name: &str) -> Result<()> {
    let source = Source::resolve(workload_name, FileKind::Workload)?;
    let mut inputs = Inputs::default();
    inputs.workload(workload_name, &source);
    inputs.named(&args.chip);
    inputs.optional(args.cost.book());
    let plan_out = output::plan(args.output.out.as_deref(), &inputs)?;
    let workload = Workload::load(&source)?;
    let scenario = Scenario::resolve(&workload, &spec(&args))?;
    let (input, output_tokens) = args.request.unwrap_or((1024, 1024));
    let shape = RequestShape::new(input, output_tokens)?;
    let slo = Slo::new(
        args.rate.unwrap_or(0.0),
        args.max_ttft_ms.map(|t| t / 1e3),
        args.max_ms_per_token.map(|t| t / 1e3),
    )?
    .with_conservative(args.conservative);
    let checkpoint = *scenario.dtypes();
    let query = serving::ServingQuery {
        shape,
        concurrency: vec![1],
        dtype_choices: plan::dtype_choices(*scenario.dtypes(), &args.dtypes),
        layouts: LayoutChoice::All,
        options: ServingOptions::default(),
        draft: None,
        disagg: args.disagg.into(),
        kv_link: KvLink::Priced,
        prefill_sets: args.prefill_sets.clone(),
        scenario,
    };
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let view = chips
        .first()
        .map_or(CostView::Cloud, |c| c.cost_model().view());
    let engines = engines(&args.engine)?;
    let searched = (
        engines.as_slice(),
        plan::leaves_types_to_engine(&args.dtypes),
    );
    let mut entries = serving::plan_fleet_engines(&workload, &chips, &query, searched, &slo, view)?;
    if let Some(mw) = args.power_budget_mw {
        serving::fit_power_budget(&mut entries, &chips, &slo, mw);
    }
    note_unpriced(&entries, view);
    let assumed = batched_tokens(&workload, &query.scenario)?;
    let budget = assumed.first().map_or(8192.0, |(_, v)| *v);
    let launch = match (entries.iter()).find_map(|e| e.outcome.as_ref().ok()) {
        Some(fleet) => {
            let decode = launch_layout(&workload, &chips, fleet, checkpoint, budget, &query);
            launches(decode, fleet, shape)?
        }
        None => Vec::new(),
    };
    if let Some(dir) = &args.emit_bench {
        let rate = args.rate.unwrap_or(0.0);
        emit_bench(dir, workload_name, &entries, &launch, rate, shape)?;
    }
    let header = FleetHeader {
        workload: &workload.name,
        shape,
        slo: &slo,
        assumed: &assumed,
        view: view.name(),
        launch: &launch,
        power_budget_mw: args.power_budget_mw,
    };
    let mut buffer = Vec::new();
    let format = &args.output.format;
    write_fleet(
        &mut buffer,
        &header,
        &entries,
        format.into(),
        &format.shape()?,
    )?;
    Ok(plan_out.commit(&[&buffer])?)
}

/// A note on stderr of how many fleets have no cost in `view` and so are listed after the
/// ranked ones.
fn note_unpriced(entries: &[serving::FleetEntry], view: CostView) {
    let cost = |f: &serving::Fleet| match view {
        CostView::Cloud => f.cloud_usd_per_hour,
        CostView::Tco => f.tco_usd_per_hour,
    };
    let fleets = entries.iter().filter_map(|e| e.outcome.as_ref().ok());
    let unpriced = fleets.clone().filter(|f| cost(f).is_none()).count();
    if unpriced > 0 {
        let priced = fleets.count() - unpriced;
        eprintln!(
            "note: {priced} fleets ranked by cost; {unpriced} without a cost in this view listed after them, by chips"
        );
    }
}

/// The scenario file's keys under the flags: chips (all by default), one value per param,
/// lists of types.
fn settle(args: &mut PlanArgs, given: &Given) -> Result<Settled> {
    let file = Merge::load(&args.file)?;
    let m = Merge::new(file.as_ref(), given, "plan");
    let workload = m.workload(args.workload.take())?;
    m.chips(&mut args.chip, given.has("chip"))?;
    m.sets(&mut args.sets)?;
    m.type_lists(&mut args.dtypes)?;
    m.fusion(&mut args.fusion)?;
    m.engines(&mut args.engine);
    m.mode(&mut args.mode)?;
    m.memory_utilization(&mut args.memory_utilization)?;
    m.cost(&mut args.cost)?;
    m.unused(&[
        ("request", has(&file, |f| f.request.is_some())),
        ("chip_sets", has(&file, |f| !f.chip_sets.is_empty())),
        ("images", has(&file, |f| f.images.is_some())),
        ("image_tokens", has(&file, |f| f.image_tokens.is_some())),
    ]);
    let mut doc = Doc::default();
    doc.push("workload", Node::Text(workload.clone()));
    doc.push("chips", texts(&args.chip));
    let mut sets = number_pairs(&args.sets);
    if let Some(context) = args.context {
        sets.push(("context".to_owned(), Node::Number(context)));
    }
    doc.push("sets", Node::last_wins(sets));
    type_lists_key(&mut doc, &args.dtypes);
    if let Some(fusion) = &args.fusion {
        doc.push("fusion", Node::Text(fusion.clone()));
    }
    if !args.engine.is_empty() {
        doc.push("engine", texts(&args.engine));
    }
    doc.push("mode", Node::Text(Mode::from(args.mode).name().to_owned()));
    if let Some(u) = args.memory_utilization {
        doc.push("memory_utilization", Node::Number(u));
    }
    cost_keys(&mut doc, &args.cost);
    m.settled(workload, &args.file, &doc)
}
