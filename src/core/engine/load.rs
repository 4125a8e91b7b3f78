//! From an engine file to a validated [`Engine`]: every quantity parsed into SI units, every
//! number checked against its range, every name against its closed set, and every problem
//! found reported at its place in the file (file, line, field, what was expected), all of
//! them at once. The built-in engines are read once per process and shared.

use std::sync::{Arc, OnceLock};

use serde_saphyr::Spanned;

use crate::base::builtin;
use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::parse::parse_values;
use crate::base::ranges::Range;
use crate::base::source::{FileKind, Source};
use crate::base::units::{parse_quantity, QuantityKind};

use super::file::{AllReduceFile, EngineFile, GraphsFile, HostFile, PipelineFile};
use super::{
    Admission, AllReduceAlgorithm, AllReduceRule, BatchLimits, Engine, EngineTerms, GemmPaths,
    HostWork, KernelPath, KvDequant, LaunchFamily, Launches, PipelineSchedule, QuantChoices,
    SpecCycle,
};

/// Host work per step: a Python scheduler's milliseconds, never a second.
const HOST_STEP: Range = Range {
    field: "host.step",
    unit: "s",
    min: 0.0,
    max: 0.1,
    why: "a serving engine's host work per step, 0.1-3 ms today",
};
/// Host work per sequence per step.
const HOST_SEQUENCE: Range = Range {
    field: "host.sequence",
    unit: "s",
    min: 0.0,
    max: 1e-3,
    why: "host work per sequence per step, tens of microseconds today",
};
/// An eager kernel launch from the host.
const EAGER_LAUNCH: Range = Range {
    field: "graphs.eager_launch",
    unit: "s",
    min: 1e-7,
    max: 1e-3,
    why: "a kernel launched from a framework's host code, 3-20 us today",
};
/// The largest message an all-reduce rule takes.
const ALL_REDUCE_UP_TO: Range = Range {
    field: "all_reduce.up_to",
    unit: "B",
    min: 1.0,
    max: 1e12,
    why: "a message size per rank, kilobytes to a few megabytes for custom kernels",
};
/// A share of something (host work hidden, `engine_host`).
const SHARE: Range = Range {
    field: "",
    unit: "",
    min: 0.0,
    max: 1.0,
    why: "a share, from 0 (none) to 1 (all)",
};
/// Vector operations per cached element a quantised KV cache costs to widen.
const DEQUANT_OPS: Range = Range {
    field: "kv_dequant",
    unit: "",
    min: 0.0,
    max: 1000.0,
    why: "a few vector operations per cached element",
};
/// Scheduler limits and page sizes.
const LIMIT: Range = Range {
    field: "limits",
    unit: "",
    min: 1.0,
    max: 1e9,
    why: "sequences, tokens or tokens per page, above zero",
};

impl Engine {
    /// Parses and validates an engine file, its id the file's stem (`vllm@0.7`); every
    /// problem found is reported.
    pub fn load(source: &Source) -> Result<Engine, Error> {
        let file: EngineFile = source.parse().map_err(Error::Invalid)?;
        let mut check = Checker {
            source,
            problems: Vec::new(),
        };
        let terms = check.terms(&file);
        let launch = check.launch(&file.launch);
        let name = file.name.value.trim();
        if name.is_empty() {
            check.problem(&Origin::of("name", &file.name), "must not be empty");
        }
        if !check.problems.is_empty() {
            return Err(Error::Invalid(Diagnostics(check.problems)));
        }
        // Ranges were checked field by field above; `new` checks the id and the orders.
        let engine = Engine::new(&source.id, name, terms).map_err(|e| {
            Error::Invalid(Diagnostics(vec![
                source.problem(&Origin::default(), e.to_string())
            ]))
        })?;
        Ok(engine.with_launch(launch))
    }
}

/// The built-in engine `id`, read once per process; an unknown id names the closest.
pub fn builtin(id: &str) -> Result<Arc<Engine>, Error> {
    match all_builtin().iter().find(|e| e.id() == id) {
        Some(engine) => Ok(Arc::clone(engine)),
        // The error names the closest built-in and lists them.
        None => Source::builtin(id, FileKind::Engine).and_then(|s| Engine::load(&s).map(Arc::new)),
    }
}

/// The ids of the built-in engines, sorted.
pub fn builtin_ids() -> impl Iterator<Item = &'static str> {
    builtin::ENGINES.iter().map(|(id, _)| *id)
}

/// An engine given on the command line: a built-in id (`vllm`, `vllm@0.7`), else an engine
/// file's path.
pub fn resolve(spec: &str) -> Result<Arc<Engine>, Error> {
    if builtin_ids().any(|id| id == spec) {
        return builtin(spec);
    }
    Engine::load(&Source::resolve(spec, FileKind::Engine)?).map(Arc::new)
}

/// Every built-in engine, read on first use. A built-in that does not load is a bug the
/// tests catch; here it is left out rather than taking the process down.
fn all_builtin() -> &'static [Arc<Engine>] {
    static ENGINES: OnceLock<Vec<Arc<Engine>>> = OnceLock::new();
    ENGINES.get_or_init(|| {
        builtin_ids()
            .filter_map(|id| Source::builtin(id, FileKind::Engine).ok())
            .filter_map(|s| Engine::load(&s).ok().map(Arc::new))
            .collect()
    })
}

/// Validates an engine file's sections, collecting every problem found.
struct Checker<'a> {
    source: &'a Source,
    problems: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn problem(&mut self, origin: &Origin, message: impl Into<String>) {
        self.problems.push(self.source.problem(origin, message));
    }

    fn terms(&mut self, file: &EngineFile) -> EngineTerms {
        let host = file.host.as_ref().and_then(|h| self.host(h));
        let host_overlap = file
            .host_overlap
            .as_ref()
            .map_or(0.0, |v| self.share("host_overlap", v));
        let engine_host = file
            .engine_host
            .as_ref()
            .map_or(1.0, |v| self.share("engine_host", v));
        let paths = &file.gemm_paths;
        let limits = &file.limits;
        EngineTerms {
            host,
            host_overlap,
            engine_host,
            launches: self.graphs(&file.graphs),
            all_reduce: file
                .all_reduce
                .iter()
                .enumerate()
                .filter_map(|(i, r)| self.all_reduce(i, r))
                .collect(),
            admission: self.admission(&file.admission),
            limits: BatchLimits {
                max_sequences: self.count("limits.max_sequences", &limits.max_sequences),
                max_batched_tokens: self
                    .count("limits.max_batched_tokens", &limits.max_batched_tokens),
                block_tokens: self.count("limits.block_tokens", &limits.block_tokens),
                chunked_prefill: limits.chunked_prefill.value,
            },
            prompt_buckets: (file.prompt_buckets.as_ref())
                .map_or_else(Vec::new, |b| self.sizes("prompt_buckets", b)),
            quant: QuantChoices {
                fp8_activations: file.quant.fp8_activations.value,
                fp8_kv_cache: file.quant.fp8_kv_cache.value,
            },
            gemm_paths: GemmPaths {
                bf16: self.path("gemm_paths.bf16", &paths.bf16),
                fp8: self.path("gemm_paths.fp8", &paths.fp8),
                fp4: self.path("gemm_paths.fp4", &paths.fp4),
                int4: self.path("gemm_paths.int4", &paths.int4),
            },
            kv_dequant: KvDequant {
                fp8_ops_per_element: self.ops("kv_dequant.fp8", &file.kv_dequant.fp8),
                int4_ops_per_element: self.ops("kv_dequant.int4", &file.kv_dequant.int4),
            },
            spec: SpecCycle {
                draft_host_once: file.spec.draft_host_once.value,
                absorbed_mla_verify: file.spec.absorbed_mla_verify.value,
            },
            pipeline: self.pipeline(&file.pipeline),
            fusion: file.fusion.as_ref().map(|f| f.value.trim().to_owned()),
        }
    }

    /// A quantity of `kind` inside `range`, named `field`; 0 when reported.
    fn quantity(
        &mut self,
        field: &str,
        range: &Range,
        value: &Spanned<String>,
        kind: QuantityKind,
    ) -> f64 {
        let checked = parse_quantity(&value.value, kind)
            .map_err(|e| e.to_string())
            .and_then(|v| {
                range
                    .check(v)
                    .map(|()| v)
                    .map_err(|e| format!("`{}` is {e}", value.value.trim()))
            });
        checked
            .map_err(|e| self.problem(&Origin::of(field, value), e))
            .unwrap_or(0.0)
    }

    fn share(&mut self, field: &str, value: &Spanned<f64>) -> f64 {
        self.number(field, &SHARE, value)
    }

    fn ops(&mut self, field: &str, value: &Spanned<f64>) -> f64 {
        self.number(field, &DEQUANT_OPS, value)
    }

    fn number(&mut self, field: &str, range: &Range, value: &Spanned<f64>) -> f64 {
        match range.check(value.value) {
            Ok(()) => value.value,
            Err(e) => {
                let message = format!("{} is {e}", value.value);
                self.problem(&Origin::of(field, value), message);
                0.0
            }
        }
    }

    fn count(&mut self, field: &str, value: &Spanned<u64>) -> u64 {
        match LIMIT.check(value.value as f64) {
            Ok(()) => value.value,
            Err(e) => {
                let message = format!("{} is {e}", value.value);
                self.problem(&Origin::of(field, value), message);
                1
            }
        }
    }

    fn host(&mut self, host: &HostFile) -> Option<HostWork> {
        let basis = host.basis.value.trim();
        if !matches!(basis, "derived" | "fitted") {
            let message = format!(
                "`{basis}` is not a basis: expected derived (from documentation) or fitted \
                 (from measured rows)"
            );
            self.problem(&Origin::of("host.basis", &host.basis), message);
        }
        Some(HostWork {
            step_s: self.quantity("host.step", &HOST_STEP, &host.step, QuantityKind::Time),
            sequence_s: self.quantity(
                "host.sequence",
                &HOST_SEQUENCE,
                &host.sequence,
                QuantityKind::Time,
            ),
            overlap: self.share("host.overlap", &host.overlap),
        })
    }

    fn graphs(&mut self, graphs: &GraphsFile) -> Launches {
        let sizes = if graphs.sizes.value.trim() == "none" {
            Vec::new()
        } else {
            self.sizes("graphs.sizes", &graphs.sizes)
        };
        Launches {
            graph_batch_sizes: sizes,
            eager_launch_s: self.quantity(
                "graphs.eager_launch",
                &EAGER_LAUNCH,
                &graphs.eager_launch,
                QuantityKind::Time,
            ),
        }
    }

    /// Whole sizes above zero in ascending order, written as an axis (`1, 2, 4, 8..=64:+8`).
    fn sizes(&mut self, field: &str, value: &Spanned<String>) -> Vec<u64> {
        let parsed = parse_values(&value.value).and_then(|values| {
            let whole = values
                .iter()
                .all(|v| v.fract() == 0.0 && *v >= 1.0 && *v <= 1e9);
            let ascending = values.windows(2).all(|w| w[0] < w[1]);
            match (whole, ascending) {
                (true, true) => Ok(values.iter().map(|v| *v as u64).collect()),
                _ => Err(format!(
                    "`{}`: expected whole sizes from 1 in ascending order, as an axis is \
                     written (`1, 2, 4, 8..=256:+8`)",
                    value.value.trim()
                )),
            }
        });
        parsed
            .map_err(|e| self.problem(&Origin::of(field, value), e))
            .unwrap_or_default()
    }

    fn all_reduce(&mut self, i: usize, rule: &AllReduceFile) -> Option<AllReduceRule> {
        let field = format!("all_reduce[{i}]");
        let algorithm = match rule.algorithm.value.trim() {
            "one-shot" => AllReduceAlgorithm::OneShot,
            "two-shot" => AllReduceAlgorithm::TwoShot,
            "ring" => AllReduceAlgorithm::Ring,
            "tree" => AllReduceAlgorithm::Tree,
            other => {
                let message = format!(
                    "`{other}` is not an all-reduce algorithm: expected one-shot, two-shot, \
                     ring or tree"
                );
                self.problem(
                    &Origin::of(format!("{field}.algorithm"), &rule.algorithm),
                    message,
                );
                return None;
            }
        };
        let up_to_bytes = rule.up_to.as_ref().map(|u| {
            let range = Range {
                field: "all_reduce.up_to",
                ..ALL_REDUCE_UP_TO
            };
            self.quantity(&format!("{field}.up_to"), &range, u, QuantityKind::Bytes)
        });
        let up_to_ranks = rule
            .ranks
            .as_ref()
            .map(|r| self.count(&format!("{field}.ranks"), r));
        Some(AllReduceRule {
            up_to_bytes,
            up_to_ranks,
            algorithm,
        })
    }

    fn admission(&mut self, value: &Spanned<String>) -> Admission {
        match value.value.trim() {
            "on-demand" => Admission::OnDemand,
            "reserve-whole" => Admission::ReserveWhole,
            other => {
                let message = format!(
                    "`{other}` is not an admission policy: expected on-demand (pages as \
                     tokens arrive, preempting) or reserve-whole (prompt + output reserved on \
                     admission)"
                );
                self.problem(&Origin::of("admission", value), message);
                Admission::OnDemand
            }
        }
    }

    fn path(&mut self, field: &str, value: &Spanned<String>) -> KernelPath {
        KernelPath::from_name(value.value.trim()).unwrap_or_else(|| {
            let known: Vec<&str> = KernelPath::ALL.iter().map(|p| p.name()).collect();
            let message = format!(
                "`{}` is not a kernel path: expected one of {}",
                value.value.trim(),
                known.join(", ")
            );
            self.problem(&Origin::of(field, value), message);
            KernelPath::Cublaslt
        })
    }

    fn launch(&mut self, value: &Spanned<String>) -> LaunchFamily {
        let found = LaunchFamily::ALL
            .into_iter()
            .find(|f| f.name() == value.value.trim());
        found.unwrap_or_else(|| {
            let message = format!(
                "`{}` is not a launch-command family: expected vllm, sglang, trtllm or none",
                value.value.trim()
            );
            self.problem(&Origin::of("launch", value), message);
            LaunchFamily::None
        })
    }

    fn pipeline(&mut self, pipeline: &PipelineFile) -> PipelineSchedule {
        let text = pipeline.micro_batches.value.trim();
        let micro_batches = match text.parse::<u64>() {
            _ if text == "stages" => None,
            Ok(n) if n >= 1 => Some(n),
            _ => {
                let message = format!(
                    "`{text}` is not a count of micro-batches: expected a whole number from 1, \
                     or `stages` (as many as the pipeline has stages)"
                );
                let origin = Origin::of("pipeline.micro_batches", &pipeline.micro_batches);
                self.problem(&origin, message);
                None
            }
        };
        PipelineSchedule {
            micro_batches,
            flush: pipeline.flush.value,
        }
    }
}

#[cfg(test)]
mod tests;
