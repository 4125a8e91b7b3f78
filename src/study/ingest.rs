//! Serving benchmarks' own results as serving cases (`stepcost ingest`): the JSON `vllm bench
//! serve --save-result` writes (and `benchmark_serving.py` before it), the JSON lines of SGLang's
//! `bench_serving --output-file`, and GenAI-Perf's (or AIPerf's) `profile_export_*.json`. Each
//! run becomes one row per metric it reports (output tokens/s, requests/s, TTFT, TPOT, end to
//! end), with its request shape (the mean input and output tokens, rounded) and its load (the
//! concurrency where the run capped it, else the request rate), in `validate`'s serving format.
//! What a result does not say (the chip, the workload, the tensor-parallel size) comes from
//! the caller.

use serde_json::{Map, Value};

use crate::base::error::Error;

/// The benchmark a result comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    /// `vllm bench serve --save-result` (and `benchmark_serving.py --save-result`).
    VllmBenchServe,
    /// SGLang's `python -m sglang.bench_serving --output-file` (JSON lines).
    SglangBenchServing,
    /// GenAI-Perf's `profile_export_genai_perf.json`, or AIPerf's `profile_export_aiperf.json`.
    GenaiPerf,
}

impl Harness {
    /// Its name, as a row's `harness` column writes it.
    pub fn name(self) -> &'static str {
        match self {
            Harness::VllmBenchServe => "vllm bench serve",
            Harness::SglangBenchServing => "sglang.bench_serving",
            Harness::GenaiPerf => "genai-perf profile",
        }
    }

    /// The built-in engine its results are taken to come from where the caller names none.
    pub fn engine(self, result: &Map<String, Value>) -> &'static str {
        match self {
            Harness::VllmBenchServe => "vllm",
            Harness::SglangBenchServing
                if result.get("backend").and_then(Value::as_str) == Some("sglang") =>
            {
                "sglang"
            }
            _ => "unknown",
        }
    }

    /// Which harness wrote `result`: GenAI-Perf's nests each metric (`{"unit", "avg"}`) and
    /// keeps its flags in `input_config`; vLLM's names a `model_id`; SGLang's a
    /// `dataset_name` and no model.
    fn of(result: &Map<String, Value>) -> Option<Harness> {
        if result.contains_key("input_config")
            || result
                .get("request_throughput")
                .is_some_and(Value::is_object)
        {
            Some(Harness::GenaiPerf)
        } else if result.contains_key("model_id") {
            Some(Harness::VllmBenchServe)
        } else if result.contains_key("dataset_name") || result.contains_key("backend") {
            Some(Harness::SglangBenchServing)
        } else {
            None
        }
    }
}

/// A run's load: requests in flight, or requests per second (infinite: all at once).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// At most this many requests in flight.
    Concurrency(u64),
    /// Requests arriving at this rate per second (`f64::INFINITY`: all queued at once).
    Rate(f64),
}

impl Load {
    /// The `params` column's text (`concurrency=64`, `rate=4`, `rate=inf`).
    pub fn param(self) -> String {
        match self {
            Load::Concurrency(n) => format!("concurrency={n}"),
            Load::Rate(r) if r.is_infinite() => "rate=inf".to_owned(),
            Load::Rate(r) => format!("rate={r}"),
        }
    }
}

/// One measured figure of a run, as a serving row's `metric` and `measured` columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The serving metric's name (`output_tokens_per_s`, `ttft_ms`).
    pub metric: &'static str,
    /// Its value, in the metric's unit.
    pub value: f64,
    /// Which statistic of the run it is (`mean`, `median`).
    pub statistic: &'static str,
}

/// One benchmark run: what the rows of its figures share.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The harness that wrote it.
    pub harness: Harness,
    /// The engine it names (a built-in engine's id, or `unknown`).
    pub engine: &'static str,
    /// The model it names, where it names one.
    pub model: Option<String>,
    /// Its load.
    pub load: Load,
    /// Mean input and output tokens per request, rounded (each at least 1).
    pub request: (u64, u64),
    /// Requests completed, where the result says.
    pub completed: Option<u64>,
    /// Its figures, in a fixed order: throughputs, then latencies.
    pub figures: Vec<Figure>,
}

/// Reads a result file's text: one JSON object (vLLM, GenAI-Perf) or JSON lines (SGLang, one
/// run a line); every run it holds, in file order. `name` is what errors cite.
pub fn read_results(text: &str, name: &str) -> Result<Vec<Run>, Error> {
    // vLLM writes an infinite rate as Python's `Infinity`, which is not JSON.
    let text = text.replace(": Infinity", ": \"inf\"");
    let objects: Vec<(usize, Value)> = match serde_json::from_str::<Value>(&text) {
        Ok(v) => vec![(1, v)],
        Err(_) => {
            let mut all = Vec::new();
            for (i, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let v = serde_json::from_str(line).map_err(|e| {
                    Error::value(format!(
                        "{name}:{}: not JSON ({e}); expected the JSON of `vllm bench serve --save-result`, the JSON lines of `sglang.bench_serving --output-file`, or GenAI-Perf's profile_export_genai_perf.json",
                        i + 1
                    ))
                })?;
                all.push((i + 1, v));
            }
            all
        }
    };
    if objects.is_empty() {
        return Err(Error::value(format!(
            "{name}: empty; no benchmark run in it"
        )));
    }
    objects
        .into_iter()
        .map(|(line, v)| {
            let at = format!("{name}:{line}");
            let object = v
                .as_object()
                .ok_or_else(|| Error::value(format!("{at}: expected a JSON object")))?;
            run_of(object, &at)
        })
        .collect()
}

/// One run from its result object.
fn run_of(o: &Map<String, Value>, at: &str) -> Result<Run, Error> {
    let harness = Harness::of(o).ok_or_else(|| {
        Error::value(format!(
            "{at}: not a result this reads: no `model_id` (vllm bench serve), `dataset_name` (sglang.bench_serving) or `input_config` (genai-perf)"
        ))
    })?;
    let missing = |key: &str| {
        Error::value(format!(
            "{at}: field `{key}`: missing or not a positive number ({} result)",
            harness.name()
        ))
    };
    let (load, request, completed, model) = match harness {
        Harness::GenaiPerf => {
            let config = o.get("input_config").and_then(Value::as_object);
            let concurrency = config.and_then(|c| number(c.get("concurrency")));
            let rate = config.and_then(|c| rate(c.get("request_rate")));
            let load = match (concurrency, rate) {
                (_, Some(r)) => Load::Rate(r),
                (Some(c), None) => Load::Concurrency(c.round() as u64),
                (None, None) => return Err(missing("input_config.concurrency")),
            };
            let tokens = |keys: [&str; 2]| {
                keys.iter()
                    .find_map(|k| stat(o.get(*k), "avg"))
                    .ok_or_else(|| missing(keys[0]))
            };
            let input = tokens(["input_sequence_length", "num_input_token"])?;
            let output = tokens(["output_sequence_length", "num_output_token"])?;
            let model = config
                .and_then(|c| c.get("model"))
                .and_then(|m| m.get(0).or(Some(m)))
                .and_then(Value::as_str)
                .map(str::to_owned);
            (load, (input, output), None, model)
        }
        Harness::VllmBenchServe | Harness::SglangBenchServing => {
            let concurrency = number(o.get("max_concurrency"));
            let load = match (concurrency, rate(o.get("request_rate"))) {
                (Some(c), _) => Load::Concurrency(c.round() as u64),
                (None, Some(r)) => Load::Rate(r),
                (None, None) => return Err(missing("request_rate")),
            };
            let completed = number(o.get("completed")).ok_or_else(|| missing("completed"))?;
            let per = |key: &str| {
                number(o.get(key))
                    .map(|t| t / completed)
                    .ok_or_else(|| missing(key))
            };
            let request = (per("total_input_tokens")?, per("total_output_tokens")?);
            let model = o.get("model_id").and_then(Value::as_str).map(str::to_owned);
            (load, request, Some(completed.round() as u64), model)
        }
    };
    let figures = figures(o, harness);
    if figures.is_empty() {
        return Err(Error::value(format!(
            "{at}: no figure to compare: none of output throughput, request throughput, TTFT, TPOT or end-to-end latency is there"
        )));
    }
    Ok(Run {
        harness,
        engine: harness.engine(o),
        model,
        load,
        request: (rounded(request.0), rounded(request.1)),
        completed,
        figures,
    })
}

/// The figures a result reports, each under the serving metric it is.
fn figures(o: &Map<String, Value>, harness: Harness) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut push = |metric, found: Option<(f64, &'static str)>, scale: f64| {
        if let Some((value, statistic)) = found {
            out.push(Figure {
                metric,
                value: value * scale,
                statistic,
            });
        }
    };
    if harness == Harness::GenaiPerf {
        let avg = |key: &str| stat(o.get(key), "avg").map(|v| (v, "mean"));
        push("output_tokens_per_s", avg("output_token_throughput"), 1.0);
        push("requests_per_s", avg("request_throughput"), 1.0);
        push("ttft_ms", avg("time_to_first_token"), 1.0);
        // GenAI-Perf's inter-token latency is (latency - TTFT) / (output tokens - 1) per
        // request: time per output token after the first.
        push("tpot_ms", avg("inter_token_latency"), 1.0);
        push("e2e_s", avg("request_latency"), 1e-3);
    } else {
        let first = |keys: [(&str, &'static str); 2]| {
            keys.iter()
                .find_map(|(k, s)| number(o.get(*k)).map(|v| (v, *s)))
        };
        let flat = |key: &str| number(o.get(key)).map(|v| (v, "mean"));
        push("output_tokens_per_s", flat("output_throughput"), 1.0);
        push("requests_per_s", flat("request_throughput"), 1.0);
        push(
            "ttft_ms",
            first([("mean_ttft_ms", "mean"), ("median_ttft_ms", "median")]),
            1.0,
        );
        push(
            "tpot_ms",
            first([("mean_tpot_ms", "mean"), ("median_tpot_ms", "median")]),
            1.0,
        );
        push(
            "e2e_s",
            first([("mean_e2e_latency_ms", "mean"), ("mean_e2el_ms", "mean")]),
            1e-3,
        );
    }
    out
}

/// A positive finite number (JSON number or numeric string).
fn number(v: Option<&Value>) -> Option<f64> {
    let x = match v? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    (x.is_finite() && x > 0.0).then_some(x)
}

/// A request rate: a positive number, or `inf` (all requests at once).
fn rate(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::String(s) if s.trim().eq_ignore_ascii_case("inf") => Some(f64::INFINITY),
        other => number(Some(other)),
    }
}

/// A GenAI-Perf metric's statistic (`{"unit": "ms", "avg": 12.3}`), as a positive number.
fn stat(v: Option<&Value>, key: &str) -> Option<f64> {
    number(v?.as_object()?.get(key))
}

/// Tokens per request, rounded to the nearest whole token and at least 1.
fn rounded(tokens: f64) -> u64 {
    (tokens.round() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vllm_result_with_an_infinite_rate_and_a_cap_reads_as_its_concurrency() {
        let text = r#"{"model_id": "m", "request_rate": Infinity, "max_concurrency": 8, "completed": 4, "total_input_tokens": 402, "total_output_tokens": 398, "output_throughput": 10.5}"#;
        let runs = read_results(text, "r.json").unwrap();
        assert_eq!(runs[0].load, Load::Concurrency(8));
        assert_eq!(runs[0].request, (101, 100)); // 100.5 rounds up, 99.5 up
        assert_eq!(runs[0].figures.len(), 1);
        let uncapped = text.replace("\"max_concurrency\": 8", "\"max_concurrency\": null");
        assert_eq!(
            read_results(&uncapped, "r").unwrap()[0].load.param(),
            "rate=inf"
        );
    }

    #[test]
    fn a_file_of_something_else_is_refused_with_its_line() {
        let err = read_results("{\"a\": 1}\n", "x.json")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("x.json:1") && err.contains("model_id"),
            "{err}"
        );
        let err = read_results("{}\nnot json\n", "x.jsonl")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("x.jsonl:2") && err.contains("not JSON"),
            "{err}"
        );
        let err = read_results("{\"model_id\": \"m\", \"request_rate\": 1}", "y")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`completed`"), "{err}");
    }
}
