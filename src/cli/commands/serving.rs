//! `serving`: continuous batching in steady state, per chip and concurrency (or each chip's
//! Pareto frontier), with speculative decoding, a prefix cache and prefill apart as asked.

use anyhow::Result;
use clap::Args;

use crate::base::format::Format as DataFormat;
use crate::base::param::ScenarioParam;
use crate::base::parse::{number_in, parse_dtype_axis, parse_set};
use crate::base::ranges;
use crate::base::source::{FileKind, Source};
use crate::base::types::{TypeKey, Types};
use crate::cli::flags::{engines, AnnouncedArg, CostArgs, DisaggArg, ModeArg, OutputArgs};
use crate::cli::launch::{batched_tokens, emit_serving_bench};
use crate::cli::output::{self, Inputs};
use crate::core::chip::Chip;
use crate::core::scenario::{Scenario, ScenarioSpec};
use crate::core::workload::Workload;
use crate::export::atomic::Target;
use crate::export::rows::Shape;
use crate::export::serving::{write_serving, ServingHeader};
use crate::export::{svg, OutputFormat};
use crate::study::plan;
use crate::study::serving::{
    self, Draft, KvLink, LayoutChoice, RequestShape, ServingOptions, Speculation,
};
use crate::study::validate::parse_request;

#[derive(Args)]
pub(crate) struct ServingArgs {
    /// Workload: built-in name or YAML file (it needs `batch`, `tokens` and `context` params,
    /// and the prefill params to mix prompts into decode steps)
    workload: String,
    /// Chips to serve on, comma-separated, or `all`
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "h100-sxm,h200,b200,mi300x"
    )]
    chip: Vec<String>,
    #[command(flatten)]
    announced: AnnouncedArg,
    /// Prompt and output tokens of every request
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request, default_value = "in=1024,out=1024")]
    request: (u64, u64),
    /// Requests in flight, comma-separated; each is priced (one whose KV cache does not fit
    /// is priced at the most that does, marked `*`)
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64,256")]
    concurrency: Vec<u64>,
    /// Every parallel layout within each chip's scale-up domain, every concurrency and type
    /// choice, and keep each chip's Pareto frontier of tokens/s per user against tokens/s per
    /// chip (without it: the given layout, or the fewest chips one request fits on, tensor
    /// parallelism first)
    #[arg(long)]
    frontier: bool,
    /// Draw tokens/s per chip against tokens/s per user, one curve per chip, as SVG, each
    /// point labelled with its layout where that changes along the curve
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,
    /// Data types to try: ROLE=LIST (repeatable; default the checkpoint's own); every
    /// combination on every chip
    #[arg(long = "dtype", value_name = "KEY=LIST", value_parser = parse_dtype_axis)]
    dtypes: Vec<(TypeKey, Vec<DataFormat>)>,
    /// Override a param, e.g. --set tp=4 (repeatable); a layout param fixes the layout
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = parse_set)]
    sets: Vec<(String, f64)>,
    /// Serving engines to search, comma-separated (built-in ids such as vllm, sglang,
    /// trtllm, or engine files), or `all`, each on every chip; an fp8 weight choice runs as
    /// each engine runs it (W8A8 with its KV cache type where the chip multiplies in fp8)
    /// unless --dtype names the activation or KV type (default: each chip file's engine;
    /// roofline mode prices under none)
    #[arg(long, value_delimiter = ',', value_name = "NAME[@VERSION],...")]
    engine: Vec<String>,
    /// Share of each prompt already in the prefix cache, whose prefill is skipped
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    prefix_hit: f64,
    /// Speculative decoding: tokens drafted per verify step
    #[arg(long, value_name = "K", requires_all = ["spec_accept", "draft"])]
    spec_k: Option<u32>,
    /// Speculative decoding: the chance each drafted token is accepted
    #[arg(long, value_name = "A", requires_all = ["spec_k", "draft"])]
    spec_accept: Option<f64>,
    /// The drafting model: `mtp` (one layer of the served model with its head, as
    /// DeepSeek-V3's multi-token prediction) or a workload
    #[arg(long, value_name = "WORKLOAD|mtp", requires_all = ["spec_k", "spec_accept"])]
    draft: Option<String>,
    /// Prefill where sequences decode (off), on instances of its own whose KV cache is sent
    /// over the network (on), or both, each point priced both ways (auto)
    #[arg(long, value_enum, default_value_t = DisaggArg::Off)]
    disagg: DisaggArg,
    /// The prefill pool's layout where prefill is apart, e.g. --prefill-set tp=2
    /// (repeatable; degrees not named are 1); without it the smallest layout one prompt
    /// fits on, the given layout with --set tp=N, or every one with --frontier
    #[arg(long = "prefill-set", value_name = "NAME=VALUE", value_parser = parse_set)]
    prefill_sets: Vec<(String, f64)>,
    /// Fusion plan of the workload
    #[arg(long)]
    fusion: Option<String>,
    /// Pricing mode: expected (each number with its 80 % band: TTFT the prefill band's,
    /// TPOT the decode band's, e2e and the rates and costs the request band's) or roofline
    /// (a ceiling, no band)
    #[arg(long, value_enum, default_value_t = ModeArg::Expected)]
    mode: ModeArg,
    /// Share of the chip's reported memory the serving engine uses, as vLLM's
    /// gpu_memory_utilization (default 0.9)
    #[arg(long, value_name = "F", value_parser = |t: &str| number_in(t, &ranges::MEMORY_UTILIZATION))]
    memory_utilization: Option<f64>,
    /// Write the first row that fits as a benchmark into DIR (new or empty): each serving
    /// engine's launch command for its layout and concurrency, its own serving benchmark's
    /// command at the request shape and concurrency, and a README of what to compare
    #[arg(long, value_name = "DIR")]
    emit_bench: Option<std::path::PathBuf>,
    #[command(flatten)]
    cost: CostArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// `serving`: the steady state of every chip at every concurrency, or each chip's frontier.
pub(crate) fn run(args: ServingArgs) -> Result<()> {
    let source = Source::resolve(&args.workload, FileKind::Workload)?;
    let mut inputs = Inputs::default();
    inputs.workload(&args.workload, &source);
    inputs.named(&args.chip);
    if let Some(d) = args.draft.as_deref().filter(|d| *d != "mtp") {
        inputs.named(&[d]);
    }
    inputs.optional(args.cost.book());
    let target = Target::from_out(args.output.out.as_deref());
    let mut targets = vec![target];
    targets.extend(args.plot.clone().map(Target::File));
    let plan_out = output::plan_all(targets, &inputs)?;
    let workload = Workload::load(&source)?;
    let spec = |sets: Vec<(String, f64)>| ScenarioSpec {
        sets,
        dtypes: Vec::new(),
        fusion: args.fusion.clone(),
        mode: args.mode.into(),
        overlap_comm: false,
        memory_utilization: args.memory_utilization,
        engine: None,
    };
    let scenario = Scenario::resolve(&workload, &spec(args.sets.clone()))?;
    let draft_workload = match args.draft.as_deref() {
        Some(d) if d != "mtp" => {
            let w = Workload::load(&Source::resolve(d, FileKind::Workload)?)?;
            let s = Scenario::resolve(&w, &spec(Vec::new()))?;
            Some((w, s))
        }
        _ => None,
    };
    let draft = match (args.draft.as_deref(), &draft_workload) {
        (Some("mtp"), _) => Some(Draft::OneLayer),
        (_, Some((w, s))) => Some(Draft::Workload(w, s)),
        _ => None,
    };
    let options = serving_options(&args)?;
    let shape = RequestShape::new(args.request.0, args.request.1)?;
    let query = serving::ServingQuery {
        shape,
        concurrency: args.concurrency.clone(),
        dtype_choices: dtype_choices(*scenario.dtypes(), &args.dtypes),
        layouts: layout_choice(&args),
        options,
        draft,
        disagg: args.disagg.into(),
        kv_link: KvLink::Priced,
        prefill_sets: args.prefill_sets.clone(),
        scenario,
    };
    let chips = args.cost.apply(args.announced.load(&args.chip)?)?;
    let engines = engines(&args.engine)?;
    let searched = (
        engines.as_slice(),
        plan::leaves_types_to_engine(&args.dtypes),
    );
    let mut survey = serving::survey_engines(&workload, &chips, &query, searched)?;
    if args.frontier {
        survey.rows = serving::frontier_rows(&survey.rows);
    }
    emit(&args, &workload, &chips, &survey, &query)?;
    let assumed = batched_tokens(&workload, &query.scenario)?;
    let header = ServingHeader {
        workload: &workload.name,
        shape,
        options,
        assumed: &assumed,
        frontier: args.frontier,
    };
    let mut buffer = Vec::new();
    let format = &args.output.format;
    let shape = format.shape()?;
    write_serving(&mut buffer, &header, &survey, format.into(), &shape)?;
    let mut contents = vec![buffer];
    if args.plot.is_some() {
        contents.push(frontier_chart(&header, &survey)?);
    }
    let contents: Vec<&[u8]> = contents.iter().map(Vec::as_slice).collect();
    Ok(plan_out.commit(&contents)?)
}

/// `--emit-bench DIR`: the first row that fits as a benchmark (nothing without the flag).
fn emit(
    args: &ServingArgs,
    workload: &Workload,
    chips: &[Chip],
    survey: &serving::Survey,
    query: &serving::ServingQuery,
) -> Result<()> {
    let dir = args.emit_bench.as_deref();
    emit_serving_bench(dir, &args.workload, workload, chips, &survey.rows, query)
}

/// Speculation and the prefix cache as the flags give them.
fn serving_options(args: &ServingArgs) -> Result<ServingOptions> {
    let speculation = match (args.spec_k, args.spec_accept) {
        (Some(k), Some(a)) => Some(Speculation::new(k, a)?),
        _ => None,
    };
    Ok(ServingOptions {
        prefix_hit: args.prefix_hit,
        speculation,
    })
}

/// Every layout for a frontier; the one `--set` fixes; else the fewest chips that serve.
fn layout_choice(args: &ServingArgs) -> LayoutChoice {
    let fixed =
        (ScenarioParam::LAYOUT.iter()).any(|p| args.sets.iter().any(|(n, _)| n == p.name()));
    match (args.frontier, fixed) {
        (true, _) => LayoutChoice::All,
        (false, true) => LayoutChoice::Given,
        (false, false) => LayoutChoice::Smallest,
    }
}

/// Tokens/s per chip against tokens/s per user, one curve per chip, as SVG.
fn frontier_chart(header: &ServingHeader, survey: &serving::Survey) -> Result<Vec<u8>> {
    let mut csv = Vec::new();
    write_serving(
        &mut csv,
        header,
        survey,
        OutputFormat::Csv,
        &Shape::default(),
    )?;
    let chart = svg::SweepChart {
        x: "tokens_per_s_per_user".into(),
        y: "output_tokens_per_s_per_chip".into(),
        series: vec!["chip".into()],
        log_y: true,
        // the layout a point needs (`tp=4`), where it changes along the frontier
        label: Some("layout".into()),
        ..Default::default()
    };
    Ok(svg::sweep(csv.as_slice(), "serving", &chart)?.into_bytes())
}

/// The type choices: the checkpoint's own, or every combination of the axes given.
fn dtype_choices(base: Types, axes: &[(TypeKey, Vec<DataFormat>)]) -> Vec<Types> {
    if axes.is_empty() {
        vec![base]
    } else {
        plan::dtype_choices(base, axes)
    }
}
