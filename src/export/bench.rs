//! What `plan --rate ... --emit-bench DIR` and `serving ... --emit-bench DIR` write: for the
//! answer's instance, each serving engine's launch command (the launch settings `plan` prints)
//! and the command of that engine's own serving benchmark (`vllm bench serve`, SGLang's
//! `bench_serving`, GenAI-Perf for `trtllm-serve`) with the answer's request shape and load,
//! and a README of what to compare and how to bring the results back (`stepcost ingest`).
//! The files' text only; the command line writes them.

use std::fmt::Write as _;

use super::launch::{Engine, Launch};

/// The load one instance is benchmarked at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BenchLoad {
    /// Requests per second arriving at the instance (Poisson, as the benchmarks draw them).
    Rate(f64),
    /// Requests in flight at once.
    Concurrency(u64),
}

/// The answer a benchmark checks: where it runs, what it serves, and what stepcost predicts.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchAnswer {
    /// The workload as `stepcost ingest --workload` takes it (a built-in name or a path).
    pub workload: String,
    /// The chip's id.
    pub chip: String,
    /// The engine the answer was priced under (`trtllm`, `none` in roofline mode).
    pub engine: String,
    /// Chips of one instance (tp x pp x ep).
    pub chips_per_instance: u64,
    /// The data types as a case file's `dtypes` column writes them.
    pub dtypes: String,
    /// Prompt tokens of every request.
    pub input_tokens: u64,
    /// Output tokens of every request.
    pub output_tokens: u64,
    /// The load one instance is given.
    pub load: BenchLoad,
    /// Predicted time to first token, in seconds.
    pub ttft_s: f64,
    /// Predicted time per output token after the first, in seconds.
    pub tpot_s: f64,
    /// Predicted output tokens per second of the instance.
    pub output_tokens_per_s: f64,
    /// Predicted requests per second the instance completes.
    pub requests_per_s: f64,
    /// A note the README carries (how the load was derived), where there is one.
    pub note: Option<String>,
}

/// The model argument the commands name: `MODEL` where stepcost knows no checkpoint id.
const MODEL: &str = "MODEL";

/// Requests each benchmark sends: two minutes of arrivals at a rate, ten rounds of a
/// concurrency; at least 100 and at most 5000.
pub fn prompts(load: BenchLoad) -> u64 {
    let n = match load {
        BenchLoad::Rate(r) => (r * 120.0).ceil() as u64,
        BenchLoad::Concurrency(c) => c.saturating_mul(10),
    };
    n.clamp(100, 5000)
}

/// The directory's files (name, text), in the order a reader takes them: the README first.
pub fn bench_files(
    answer: &BenchAnswer,
    launch: &Launch,
    model_id: Option<&str>,
) -> Vec<(String, String)> {
    let model = model_id.unwrap_or(MODEL);
    let mut files = vec![("README.md".to_owned(), readme(answer, launch, model))];
    for e in &launch.engines {
        let Some(argv) = &e.argv else { continue };
        let name = engine_name(e.engine);
        files.push((
            format!("launch-{name}.sh"),
            script(&argv.join(" "), e.version),
        ));
        let bench = bench_command(e.engine, answer, model);
        files.push((
            format!("bench-{name}.sh"),
            script(&bench, bench_title(e.engine)),
        ));
    }
    files
}

fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "vllm",
        Engine::Sglang => "sglang",
        Engine::Trtllm => "trtllm",
    }
}

fn bench_title(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "vLLM's serving benchmark (vllm bench serve)",
        Engine::Sglang => "SGLang's serving benchmark (python -m sglang.bench_serving)",
        Engine::Trtllm => "GenAI-Perf (genai-perf profile) against trtllm-serve's OpenAI endpoint",
    }
}

/// The result file each benchmark writes, which `stepcost ingest` reads.
fn result_file(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "vllm-result.json",
        Engine::Sglang => "sglang-result.jsonl",
        Engine::Trtllm => "artifacts/*/profile_export_genai_perf.json",
    }
}

/// A shell script of one command, with a title comment.
fn script(command: &str, title: &str) -> String {
    format!(
        "#!/bin/sh\n# {title}: written by stepcost; {}\nset -e\n{command}\n",
        super::launch::CAVEAT
    )
}

/// The benchmark's command: fixed request lengths (every request `in` and `out` tokens, no
/// early stop), the answer's rate or concurrency, the result saved where `ingest` finds it.
pub fn bench_command(engine: Engine, a: &BenchAnswer, model: &str) -> String {
    let (i, o, n) = (a.input_tokens, a.output_tokens, prompts(a.load));
    match engine {
        Engine::Vllm => {
            let load = match a.load {
                BenchLoad::Rate(r) => format!("--request-rate {r}"),
                BenchLoad::Concurrency(c) => format!("--request-rate inf --max-concurrency {c}"),
            };
            format!(
                "vllm bench serve --backend vllm --model {model} --dataset-name random \
                 --random-input-len {i} --random-output-len {o} --random-range-ratio 0 --ignore-eos \
                 --num-prompts {n} {load} --percentile-metrics ttft,tpot,itl,e2el \
                 --save-result --result-filename vllm-result.json"
            )
        }
        Engine::Sglang => {
            let load = match a.load {
                BenchLoad::Rate(r) => format!("--request-rate {r}"),
                BenchLoad::Concurrency(c) => format!("--max-concurrency {c}"),
            };
            format!(
                "python3 -m sglang.bench_serving --backend sglang --model {model} --dataset-name random \
                 --random-input-len {i} --random-output-len {o} --random-range-ratio 1 \
                 --num-prompts {n} {load} --output-file sglang-result.jsonl"
            )
        }
        Engine::Trtllm => {
            let load = match a.load {
                BenchLoad::Rate(r) => format!("--request-rate {r}"),
                BenchLoad::Concurrency(c) => format!("--concurrency {c}"),
            };
            format!(
                "genai-perf profile -m {model} --endpoint-type chat --streaming --url localhost:8000 \
                 --synthetic-input-tokens-mean {i} --synthetic-input-tokens-stddev 0 \
                 --output-tokens-mean {o} --output-tokens-stddev 0 --extra-inputs ignore_eos:true \
                 --extra-inputs max_tokens:{o} {load} --request-count {n}"
            )
        }
    }
}

/// The README's figures to compare, and the way back into `validate`.
fn compare(t: &mut String, a: &BenchAnswer) {
    let _ = writeln!(t, "\n## Compare\n");
    let _ = writeln!(
        t,
        "| figure | stepcost predicts | benchmark's name |\n| --- | --- | --- |"
    );
    let _ = writeln!(
        t,
        "| output tokens/s of the instance | {:.1} | output throughput |",
        a.output_tokens_per_s
    );
    let _ = writeln!(
        t,
        "| requests/s | {:.3} | request throughput |",
        a.requests_per_s
    );
    let _ = writeln!(t, "| mean TTFT | {:.1} ms | TTFT |", a.ttft_s * 1e3);
    let _ = writeln!(
        t,
        "| mean TPOT | {:.2} ms | TPOT (GenAI-Perf: inter-token latency) |",
        a.tpot_s * 1e3
    );
    let _ = writeln!(
        t,
        "\nThe prediction is expected mode's, for the engine it was priced under; the 80 % band `plan` prints beside it is the range a measurement should usually fall in.\n"
    );
    let _ = writeln!(t, "## Bring the results back\n");
    let _ = writeln!(
        t,
        "```\nstepcost ingest RESULT --chip {} --workload {} --tp {} --dtypes '{}' --engine ENGINE --out measured.csv\nstepcost validate measured.csv\n```\n\nRESULT is the file the benchmark wrote, ENGINE the engine that served it (`vllm`, `sglang` or `trtllm`).\n",
        a.chip, a.workload, a.chips_per_instance, a.dtypes
    );
    let _ = writeln!(
        t,
        "`validate` prices every row under the row's engine and prints predicted beside measured; the rows then join a case file for `stepcost fit`."
    );
}

/// The README: the answer, what each pair of scripts does, the figures to compare, and the
/// way back into `validate` and `fit`.
fn readme(a: &BenchAnswer, launch: &Launch, model: &str) -> String {
    let mut t = String::new();
    let load = match a.load {
        BenchLoad::Rate(r) => format!("{r} requests/s arriving (Poisson)"),
        BenchLoad::Concurrency(c) => format!("{c} requests in flight"),
    };
    let _ = writeln!(t, "# Benchmark of a stepcost answer\n");
    let _ = writeln!(
        t,
        "One instance of {} on {} chip(s) `{}` ({}), priced under engine `{}`, serving requests of {} prompt and {} output tokens at {load}. The scripts are {}.\n",
        a.workload, a.chips_per_instance, a.chip, a.dtypes, a.engine, a.input_tokens, a.output_tokens, launch.caveat
    );
    if let Some(note) = &a.note {
        let _ = writeln!(t, "{note}\n");
    }
    if model == MODEL {
        let _ = writeln!(
            t,
            "Replace `MODEL` in every script with the checkpoint's Hugging Face id or path.\n"
        );
    }
    let _ = writeln!(t, "## Run\n");
    for e in &launch.engines {
        let name = engine_name(e.engine);
        match &e.argv {
            Some(_) => {
                let _ = writeln!(
                    t,
                    "- {}: start `sh launch-{name}.sh`, wait for it to serve, then `sh bench-{name}.sh` ({}); it writes `{}`.",
                    e.version,
                    bench_title(e.engine),
                    result_file(e.engine)
                );
            }
            None => {
                let _ = writeln!(
                    t,
                    "- {}: no command for this layout ({}).",
                    e.version,
                    e.notes.join("; ")
                );
            }
        }
    }
    compare(&mut t, a);
    t
}
