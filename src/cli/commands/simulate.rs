//! `simulate`: serving simulated request by request (arrivals at a rate or from a trace, a
//! continuous-batching scheduler, every iteration priced), with latency percentiles,
//! throughput and goodput, each with its 80 % band in expected mode.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use crate::base::param::ScenarioParam;
use crate::base::parse::parse_set;
use crate::base::ranges::{self, Range};
use crate::base::source::{FileKind, Source};
use crate::cli::flags::{OutputArgs, ScenarioArgs};
use crate::cli::output::{self, emit, Inputs};
use crate::core::chip::Chip;
use crate::core::scenario::{Scenario, ScenarioSpec};
use crate::core::workload::Workload;
use crate::export::simulate::write_simulate;
use crate::study::serving::KvLink;
use crate::study::simulate::{
    self, Arrivals, Horizon, LatencyBounds, Lengths, PrefillApart, Router, SimConfig,
};
use crate::study::validate::parse_request;

#[derive(Args)]
pub(crate) struct SimulateArgs {
    /// Workload: built-in name or YAML file
    workload: String,
    /// Chip of each instance: built-in name or YAML file (with --set tp=N for a layout)
    #[arg(long)]
    chip: String,
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Requests per second arriving (Poisson unless --arrival uniform), from 1e-6 to 10^9
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    rate: Option<f64>,
    /// How requests arrive at --rate: a Poisson process, or evenly spaced
    #[arg(long, value_enum, default_value_t = ArrivalArg::Poisson)]
    arrival: ArrivalArg,
    /// Gaps from a gamma distribution of this shape, as vLLM's `bench serve --burstiness`:
    /// 1 is Poisson, larger more evenly paced, smaller burstier (0.001 to 1000)
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    burstiness: f64,
    /// Requests from a CSV file with the columns arrival_s,input_tokens,output_tokens
    /// (instead of --rate and --request); arrival_s from 0 to 10^10 s on any clock, the run
    /// counted from the first arrival
    #[arg(long, value_name = "FILE.csv", conflicts_with_all = ["rate", "request", "duration", "requests"])]
    trace: Option<PathBuf>,
    /// Nominal request: in=I,out=O tokens
    #[arg(long, value_name = "in=I,out=O", value_parser = parse_request, default_value = "in=1024,out=256")]
    request: (u64, u64),
    /// Lengths uniform within this ratio of the nominal request, as vLLM's benchmark's
    /// --random-range-ratio: [floor(X (1 - F)), ceil(X (1 + F))]; in [0, 1)
    #[arg(
        long,
        value_name = "F",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    range_ratio: f64,
    /// Simulated seconds of arrivals (default 600 unless --requests), from 0.001 to 10^9
    #[arg(
        long,
        value_name = "S",
        conflicts_with = "requests",
        allow_negative_numbers = true
    )]
    duration: Option<f64>,
    /// Number of requests arriving (instead of --duration), at most 2e7
    #[arg(long, value_name = "N")]
    requests: Option<u64>,
    /// Seed of the arrivals and lengths: the same seed gives the same bytes out
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Most sequences running per instance (default: vLLM's max_num_seqs for the chip,
    /// 1024 with 70 GiB or more, else 256)
    #[arg(long, value_name = "N")]
    max_seqs: Option<u64>,
    /// Instances behind the router (the decode instances, with --disagg), at most 10^6;
    /// only those a request reaches take memory
    #[arg(long, value_name = "N", default_value_t = 1)]
    instances: u32,
    /// How requests are spread over instances (over each pool's, with --disagg)
    #[arg(long, value_enum, default_value_t = RouterArg::RoundRobin)]
    router: RouterArg,
    /// SLO: most milliseconds to the first token (for goodput)
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    max_ttft_ms: Option<f64>,
    /// SLO: most milliseconds per output token after the first (for goodput)
    #[arg(long, value_name = "L", allow_negative_numbers = true)]
    max_ms_per_token: Option<f64>,
    /// Price every iteration exactly instead of from the cache of step times
    #[arg(long)]
    exact: bool,
    /// Prefill prompts apart, on --prefill-instances of their own, each prompt's KV cache
    /// then sent over the network to one of the --instances, which only decode
    #[arg(long)]
    disagg: bool,
    /// Prefill instances, with --disagg, at most 10^6
    #[arg(long, value_name = "N", default_value_t = 1, requires = "disagg")]
    prefill_instances: u32,
    /// The prefill instances' layout, with --disagg, e.g. --prefill-set tp=2 (repeatable;
    /// degrees not named are 1); without it the decode instances' layout
    #[arg(long = "prefill-set", value_name = "NAME=VALUE", value_parser = parse_set, requires = "disagg")]
    prefill_sets: Vec<(String, f64)>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum ArrivalArg {
    Poisson,
    Uniform,
}

#[derive(Clone, Copy, ValueEnum)]
enum RouterArg {
    RoundRobin,
    LeastLoaded,
}

/// `simulate`: the run's report, or the first input that was wrong.
pub(crate) fn run(args: SimulateArgs) -> Result<()> {
    let config = config(&args)?;
    let mut inputs = Inputs::default();
    let source = Source::resolve(&args.workload, FileKind::Workload)?;
    inputs.workload(&args.workload, &source);
    inputs.named(&[&args.chip]);
    if let Some(trace) = &args.trace {
        inputs.path(trace);
    }
    let plan = output::plan(args.output.out.as_deref(), &inputs)?;
    let workload = Workload::load(&source)?;
    let chip = Chip::named(&args.chip)?;
    let spec = args.scenario.spec()?;
    let scenario = Scenario::resolve(&workload, &spec)?;
    let mut config = config;
    if args.disagg {
        let scenario = Scenario::resolve(
            &workload,
            &prefill_spec(&workload, spec, &args.prefill_sets)?,
        )?;
        config.prefill = Some(PrefillApart {
            instances: args.prefill_instances,
            scenario,
            link: KvLink::Priced,
        });
    }
    let report = simulate::simulate(&workload, &chip, &scenario, &config)?;
    let band = simulate::simulate_band(&workload, &chip, &scenario, &config)?;
    let arrivals = match (&args.trace, args.arrival) {
        (Some(t), _) => format!("requests from {}", t.display()),
        (None, a) => format!(
            "{} arrivals at {} requests/s, in={},out={}{}",
            match a {
                ArrivalArg::Poisson if args.burstiness == 1.0 => "Poisson".to_string(),
                ArrivalArg::Poisson => format!("gamma (burstiness {})", args.burstiness),
                ArrivalArg::Uniform => "evenly spaced".to_string(),
            },
            args.rate.unwrap_or(0.0),
            args.request.0,
            args.request.1,
            if args.range_ratio > 0.0 {
                format!(" within {}", args.range_ratio)
            } else {
                String::new()
            }
        ),
    };
    let title = format!(
        "{} on {}: {arrivals}, seed {}",
        workload.name,
        chip.name(),
        args.seed
    );
    let (format, shape) = (&args.output.format, args.output.format.shape()?);
    let mut buffer = Vec::new();
    write_simulate(
        &mut buffer,
        &workload.name,
        (chip.id(), scenario.engine_id_on(&chip)),
        &title,
        (&report, band.as_ref()),
        format.into(),
        &shape,
    )?;
    emit(plan, &buffer)
}

/// The prefill instances' scenario: the decode instances', with the layout `--prefill-set`
/// names (its other degrees 1) where it names one.
fn prefill_spec(
    workload: &Workload,
    mut spec: ScenarioSpec,
    prefill_sets: &[(String, f64)],
) -> Result<ScenarioSpec> {
    if prefill_sets.is_empty() {
        return Ok(spec);
    }
    for p in ScenarioParam::LAYOUT {
        if workload.param(p).is_some() {
            spec.sets.push((p.name().to_owned(), 1.0));
        }
    }
    for (name, value) in prefill_sets {
        let layout = (ScenarioParam::LAYOUT.iter()).any(|p| p.name() == name);
        if !layout {
            bail!("--prefill-set {name}={value}: a prefill layout sets only tp, pp or ep");
        }
        spec.sets.push((name.clone(), *value));
    }
    Ok(spec)
}

/// The run the flags ask for, checked before any file is read but the trace.
fn config(args: &SimulateArgs) -> Result<SimConfig> {
    let within = |flag: &str, v: Option<f64>, range: &Range| -> Result<Option<f64>> {
        match v.map(|x| (x, range.check(x))) {
            Some((x, Err(e))) => bail!("{flag} {}: {e}", ranges::quoted(x)),
            _ => Ok(v),
        }
    };
    let rate = within("--rate", args.rate, &ranges::REQUEST_RATE)?;
    let duration = within("--duration", args.duration, &ranges::SIM_DURATION)?;
    let max_ttft_s = within("--max-ttft-ms", args.max_ttft_ms, &ranges::MAX_TTFT_MS)?;
    let max_tpot_s = within(
        "--max-ms-per-token",
        args.max_ms_per_token,
        &ranges::MAX_MS_PER_TOKEN,
    )?;
    let (max_ttft_s, max_tpot_s) = (max_ttft_s.map(|m| m / 1e3), max_tpot_s.map(|m| m / 1e3));
    let lengths = Lengths::new(args.request.0, args.request.1, args.range_ratio)?;
    if args.disagg && args.prefill_instances == 0 {
        bail!("--prefill-instances 0: prompts prefilled apart need at least one prefill instance");
    }
    if args.disagg {
        let n = args.prefill_instances;
        let range = &ranges::SIM_PREFILL_INSTANCES;
        ranges::whole(f64::from(n), range, format_args!("{} {n}", range.field))
            .map_err(anyhow::Error::msg)?;
    }
    if args.burstiness != 1.0
        && (args.trace.is_some() || matches!(args.arrival, ArrivalArg::Uniform))
    {
        bail!("--burstiness {}: it shapes Poisson arrivals at --rate, not evenly spaced or traced ones", args.burstiness);
    }
    let arrivals = match (&args.trace, rate) {
        (Some(path), _) => Arrivals::Trace(simulate::read_trace(&Source::read(path)?)?),
        (None, Some(rate_per_s)) => match args.arrival {
            ArrivalArg::Poisson if args.burstiness == 1.0 => Arrivals::Poisson { rate_per_s },
            ArrivalArg::Poisson => Arrivals::Gamma {
                rate_per_s,
                burstiness: args.burstiness,
            },
            ArrivalArg::Uniform => Arrivals::Uniform { rate_per_s },
        },
        (None, None) => bail!("give --rate R (requests per second) or --trace FILE.csv"),
    };
    let horizon = match (args.requests, duration) {
        (Some(0), _) => bail!("--requests 0: a run needs at least one request"),
        (Some(n), _) => {
            let what = format_args!("--requests {n}");
            ranges::whole(n as f64, &ranges::SIM_REQUESTS, what).map_err(anyhow::Error::msg)?;
            Horizon::Requests { n }
        }
        (None, s) => Horizon::Duration {
            s: s.unwrap_or(600.0),
        },
    };
    let config = SimConfig {
        arrivals,
        horizon,
        lengths,
        seed: args.seed,
        max_seqs: args.max_seqs,
        instances: args.instances,
        router: match args.router {
            RouterArg::RoundRobin => Router::RoundRobin,
            RouterArg::LeastLoaded => Router::LeastLoaded,
        },
        slo: LatencyBounds {
            max_ttft_s,
            max_tpot_s,
        },
        exact: args.exact,
        audit: false,
        prefill: None,
    };
    simulate::check_config(&config)?;
    Ok(config)
}
