//! The serving engines' launch settings of a planned fleet (`plan --rate`), and the step's
//! token budget that both `plan --rate` and `serving` state in their header, and the
//! benchmark `--emit-bench` writes of an answer. A leaf: it imports no other module of the
//! command line.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::base::dtype::{DType, Role};
use crate::base::param::ScenarioParam;
use crate::base::types::Types;
use crate::core::chip::Chip;
use crate::core::scenario::Scenario;
use crate::core::workload::Workload;
use crate::export::bench::{bench_files, BenchAnswer, BenchLoad};
use crate::export::launch::{launch, Launch, LaunchLayout, Vendor};
use crate::study::plan;
use crate::study::serving::{Fleet, FleetEntry, RequestShape, ServingQuery, ServingRow};

/// The workload's `max_batched_tokens` at `scenario`, as the header's `assumes:` shows it.
pub(crate) fn batched_tokens(
    workload: &Workload,
    scenario: &Scenario,
) -> Result<Vec<(String, f64)>> {
    Ok(plan::assumptions(workload, scenario)?
        .into_iter()
        .filter(|(n, _)| n == ScenarioParam::MaxBatchedTokens.name())
        .collect())
}

/// The launch settings of the fleet's instances: one set, or with prefill apart one per
/// pool under its name.
pub(crate) fn launches(
    decode: LaunchLayout,
    fleet: &Fleet,
    shape: RequestShape,
) -> Result<Vec<(Option<&'static str>, LaunchLayout, Launch)>> {
    if fleet.prefill_instances == 0 {
        let settings = launch(&decode)?;
        return Ok(vec![(None, decode, settings)]);
    }
    let prefill = prefill_launch(&decode, fleet, shape);
    let (p, d) = (launch(&prefill)?, launch(&decode)?);
    Ok(vec![
        (Some("prefill pool"), prefill, p),
        (Some("decode pool"), decode, d),
    ])
}

/// The prefill pool's launch settings: the decode pool's with the prefill layout, its
/// instances, and as many sequences as prompts fit a step's token budget.
fn prefill_launch(decode: &LaunchLayout, fleet: &Fleet, shape: RequestShape) -> LaunchLayout {
    let prompts = (decode.max_batched_tokens / shape.input_tokens.max(1)).max(1);
    LaunchLayout {
        tp: fleet.prefill_tp,
        pp: fleet.prefill_pp,
        ep: fleet.prefill_ep,
        dp: fleet.prefill_instances,
        max_seqs: prompts,
        ..decode.clone()
    }
}

/// The fleet's instance as serving engines' launch settings: its layout, the most requests in
/// flight within the bounds, the step's token budget, the types and the chip's vendor.
pub(crate) fn launch_layout(
    workload: &Workload,
    chips: &[Chip],
    fleet: &Fleet,
    checkpoint: Types,
    budget: f64,
    query: &ServingQuery,
) -> LaunchLayout {
    let chip = chips.iter().find(|c| c.id() == fleet.chip);
    LaunchLayout {
        model_name: workload.name.clone(),
        model_id: None,
        checkpoint: checkpoint.role(Role::Weight),
        weight: fleet.dtypes.role(Role::Weight),
        kv: fleet.dtypes.role(Role::Kv),
        activation: fleet.dtypes.role(Role::Activation),
        fp8_math: chip.is_some_and(|c| c.matrix_peak(DType::Fp8).is_ok()),
        tp: fleet.tp,
        pp: fleet.pp,
        ep: fleet.ep,
        dp: fleet.instances,
        moe: workload.param(ScenarioParam::Ep).is_some(),
        max_seqs: fleet.max_concurrency,
        max_batched_tokens: budget as u64,
        memory_utilization: query.scenario.memory_utilization(),
        vendor: Vendor::of_family(chip.and_then(|c| c.family())),
    }
}

/// The answer `plan --rate` found (the fleet's instance, the engine it was priced under) as
/// the benchmark `--emit-bench` writes: one instance at its share of `rate` (prefill
/// together), or the whole rate (prefill apart: the benchmark then drives the fleet's router).
pub(crate) fn bench_answer(
    workload: &str,
    fleet: &Fleet,
    engine: &str,
    rate: f64,
    shape: RequestShape,
) -> BenchAnswer {
    let t = fleet.dtypes;
    let (load, note) = if fleet.prefill_instances == 0 {
        let share = rate / fleet.instances.max(1) as f64;
        let note = (fleet.instances > 1).then(|| {
            format!(
                "The fleet has {} instances; each is benchmarked alone at its share of the {rate} requests/s.",
                fleet.instances
            )
        });
        (BenchLoad::Rate(share), note)
    } else {
        let note = "Prefill runs on instances of its own: the benchmark drives the whole fleet (its router's address in place of one server's) at the whole rate.".to_owned();
        (BenchLoad::Rate(rate), Some(note))
    };
    let p = &fleet.point;
    BenchAnswer {
        workload: workload.to_owned(),
        chip: fleet.chip.clone(),
        engine: engine.to_owned(),
        chips_per_instance: fleet.tp * fleet.pp * fleet.ep,
        dtypes: format!(
            "weight={};activation={};kv={}",
            t.role(Role::Weight),
            t.role(Role::Activation),
            t.role(Role::Kv)
        ),
        input_tokens: shape.input_tokens,
        output_tokens: shape.output_tokens,
        load,
        ttft_s: p.ttft_s,
        tpot_s: p.tpot_s,
        output_tokens_per_s: p.output_tokens_per_s,
        requests_per_s: p.requests_per_s,
        note,
    }
}

/// Writes the benchmark's files into `dir`, a new or empty directory (anything in it is
/// never written over): into a temporary sibling first, then renamed, so that a failure
/// leaves no half-written directory. Scripts are made executable.
pub(crate) fn write_bench_dir(dir: &Path, files: &[(String, String)]) -> Result<()> {
    if dir.exists() {
        let is_empty = std::fs::read_dir(dir)
            .with_context(|| format!("--emit-bench {}: not a directory", dir.display()))?
            .next()
            .is_none();
        if !is_empty {
            bail!(
                "--emit-bench {}: the directory is not empty; name a new or empty one (nothing in it is written over)",
                dir.display()
            );
        }
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = dir
        .file_name()
        .map_or("bench".into(), |n| n.to_string_lossy().into_owned());
    let tmp = parent.join(format!(".{name}.tmp{}", std::process::id()));
    let written = (|| -> Result<()> {
        std::fs::create_dir(&tmp)?;
        for (file, text) in files {
            let path = tmp.join(file);
            std::fs::write(&path, text)?;
            #[cfg(unix)]
            if file.ends_with(".sh") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
            }
        }
        if dir.exists() {
            std::fs::remove_dir(dir)?;
        }
        std::fs::rename(&tmp, dir)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written.with_context(|| format!("--emit-bench {}: writing the benchmark", dir.display()))
}

/// `--emit-bench DIR`: the first fleet that meets the targets, its engine's and the other
/// engines' launch commands and benchmarks, written into `dir`.
pub(crate) fn emit_bench(
    dir: &Path,
    workload: &str,
    entries: &[FleetEntry],
    launches: &[(Option<&'static str>, LaunchLayout, Launch)],
    rate: f64,
    shape: RequestShape,
) -> Result<()> {
    let found = entries
        .iter()
        .find_map(|e| e.outcome.as_ref().ok().map(|f| (e, f)));
    let (Some((entry, fleet)), Some((_, layout, settings))) = (found, launches.last()) else {
        bail!("--emit-bench: no fleet meets the targets, so there is no answer to benchmark");
    };
    let answer = bench_answer(workload, fleet, &entry.engine, rate, shape);
    write_bench_dir(
        dir,
        &bench_files(&answer, settings, layout.model_id.as_deref()),
    )
}

/// `serving --emit-bench DIR`: the first row that fits (its chip, types, layout and
/// concurrency), launched as each engine takes it and benchmarked at its concurrency; nothing
/// without a `dir`.
pub(crate) fn emit_serving_bench(
    dir: Option<&Path>,
    spec: &str,
    workload: &Workload,
    chips: &[Chip],
    rows: &[ServingRow],
    query: &ServingQuery,
) -> Result<()> {
    let Some(dir) = dir else {
        return Ok(());
    };
    let Some(row) = rows.iter().find(|r| r.point.fits) else {
        bail!("--emit-bench: no row fits, so there is no answer to benchmark");
    };
    let layout = serving_layout(workload, chips, row, query)?;
    let settings = launch(&layout)?;
    let t = row.dtypes;
    let p = &row.point;
    let answer = BenchAnswer {
        workload: spec.to_owned(),
        chip: row.chip.clone(),
        engine: row.engine.clone(),
        chips_per_instance: p.chips,
        dtypes: format!(
            "weight={};activation={};kv={}",
            t.role(Role::Weight),
            t.role(Role::Activation),
            t.role(Role::Kv)
        ),
        input_tokens: query.shape.input_tokens,
        output_tokens: query.shape.output_tokens,
        load: BenchLoad::Concurrency(p.concurrency.max(1)),
        ttft_s: p.ttft_s,
        tpot_s: p.tpot_s,
        output_tokens_per_s: p.output_tokens_per_s,
        requests_per_s: p.requests_per_s,
        note: Some(format!(
            "The first row of `serving` that fits: {} requests in flight{}.",
            p.concurrency,
            row.prefill_layout
                .as_ref()
                .map_or(String::new(), |l| format!(
                    "; prefill on instances of its own ({l}), whose launch is not written here"
                ))
        )),
    };
    write_bench_dir(dir, &bench_files(&answer, &settings, None))
}

/// A `serving` row's instance as serving engines' launch settings: its layout (from the row's
/// `tp=4 pp=2`), its concurrency as the sequences in flight, the step's token budget.
fn serving_layout(
    workload: &Workload,
    chips: &[Chip],
    row: &ServingRow,
    query: &ServingQuery,
) -> Result<LaunchLayout> {
    let degree = |name: &str| {
        (row.layout.split_whitespace())
            .find_map(|kv| {
                kv.strip_prefix(name)?
                    .strip_prefix('=')?
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(1)
    };
    let (tp, pp, ep) = (degree("tp"), degree("pp"), degree("ep"));
    let chip = chips.iter().find(|c| c.id() == row.chip);
    let budget = batched_tokens(workload, &query.scenario)?
        .first()
        .map_or(8192.0, |(_, v)| *v);
    let checkpoint = *query.scenario.dtypes();
    Ok(LaunchLayout {
        model_name: workload.name.clone(),
        model_id: None,
        checkpoint: checkpoint.role(Role::Weight),
        weight: row.dtypes.role(Role::Weight),
        kv: row.dtypes.role(Role::Kv),
        activation: row.dtypes.role(Role::Activation),
        fp8_math: chip.is_some_and(|c| c.matrix_peak(DType::Fp8).is_ok()),
        tp,
        pp,
        ep,
        dp: 1,
        moe: workload.param(ScenarioParam::Ep).is_some(),
        max_seqs: row.point.concurrency.max(1),
        max_batched_tokens: budget as u64,
        memory_utilization: query.scenario.memory_utilization(),
        vendor: Vendor::of_family(chip.and_then(|c| c.family())),
    })
}
