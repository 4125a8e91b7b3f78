//! `stepcost ui`'s API against the command line: the same scenario gives the same bytes, a bad
//! input the same message; and the server's limits: paths refused, oversized bodies, huge
//! sweeps and malformed JSON each answered with a 4xx while it keeps serving. Slow and idle
//! clients, other sites, the token and the load test are `ui_guard`'s.

use std::io::Write;

use serde_json::{json, Value};

use crate::common::server::{answer, error_of, Server};
use crate::common::stepcost;

/// The command line's stdout for `args`.
fn cli(args: &[&str]) -> String {
    let out = stepcost().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The command line's error message for `args` run in `dir` (without `error: `).
fn cli_error(args: &[&str], dir: Option<&std::path::Path>) -> String {
    let mut command = stepcost();
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let out = command.args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stderr).unwrap();
    text.trim_end().strip_prefix("error: ").unwrap().to_owned()
}

/// The words of a command line the API gave (no quoted words in these tests), less `stepcost`.
fn words(command: &str) -> Vec<&str> {
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[0], "stepcost");
    words[1..].to_vec()
}

#[test]
fn run_and_compare_give_the_command_lines_rows() {
    let server = Server::start(&[]);
    let request = json!({"workload": "llama-3.1-70b", "chips": "b200",
        "set": ["batch=2"], "dtype": ["weight=fp8"], "cost": "tco"});
    let answer: Value = serde_json::from_str(&server.ok("/api/run", &request)).unwrap();
    let command = answer["command"].as_str().unwrap();
    assert_eq!(
        command,
        "stepcost run llama-3.1-70b --chip b200 --set batch=2 --dtype weight=fp8 --cost tco"
    );
    let json_args = [&words(command)[..], &["--format", "json"]].concat();
    let run: Value = serde_json::from_str(&cli(&json_args)).unwrap();
    assert_eq!(answer["rows"][0], run);
    // It fits, with a next step worth taking: the line under the CLI's table.
    assert_eq!(answer["verdicts"][0]["fits"], json!(true));
    let advice = answer["verdicts"][0]["advice"].as_str().unwrap();
    let table = cli(&words(command));
    assert!(advice.starts_with("next step: batch 2 -> "), "{advice}");
    assert!(
        table.ends_with(&format!("{advice}\n")),
        "{advice} not under\n{table}"
    );

    let request = json!({"workload": "llama-3.1-70b", "chips": ["h200", "b200"],
        "set": ["batch=32"], "format": "csv"});
    let csv = server.ok("/api/compare", &request);
    let expected = cli(&[
        "compare",
        "llama-3.1-70b",
        "--chip",
        "h200,b200",
        "--set",
        "batch=32",
        "--format",
        "csv",
    ]);
    assert_eq!(csv, expected);
    // Neither fits at bf16: each verdict is the CLI's warning, with the fixes priced.
    let request =
        json!({"workload": "llama-3.1-70b", "chips": ["h200", "b200"], "set": ["batch=32"]});
    let answer: Value = serde_json::from_str(&server.ok("/api/compare", &request)).unwrap();
    let table = cli(&words(answer["command"].as_str().unwrap()));
    for verdict in answer["verdicts"].as_array().unwrap() {
        assert_eq!(verdict["fits"], json!(false));
        let warning = verdict["advice"].as_str().unwrap();
        assert!(
            warning.starts_with("warning: on ") && table.contains(warning),
            "{warning}"
        );
    }
}

#[test]
fn the_engine_is_an_input_as_on_the_command_line() {
    let server = Server::start(&[]);
    let (status, body) = server.send("GET", "/api/engines", b"");
    assert_eq!(status, 200);
    let engines: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        engines,
        serde_json::from_str::<Value>(&cli(&["engines", "--format", "json"])).unwrap()
    );
    let request = json!({"workload": "llama-3.1-8b", "chips": "h100-sxm", "engine": "sglang"});
    let answer: Value = serde_json::from_str(&server.ok("/api/run", &request)).unwrap();
    let command = answer["command"].as_str().unwrap();
    assert_eq!(
        command,
        "stepcost run llama-3.1-8b --chip h100-sxm --engine sglang"
    );
    assert_eq!(answer["rows"][0]["engine"], json!("sglang"));
    let request = json!({"workload": "gemm", "chips": "h100-sxm",
        "sweep": {"engine": ["vllm", "trtllm"]}});
    let csv = server.ok("/api/sweep", &request);
    let expected = cli(&[
        "sweep",
        "gemm",
        "--chip",
        "h100-sxm",
        "--engine",
        "vllm,trtllm",
    ]);
    assert_eq!(csv, expected);
    let request = json!({"workload": "gemm", "chips": "h100-sxm", "engine": "vlm"});
    let (status, message) = server.refused("/api/run", &request);
    assert_eq!(status, 400);
    assert!(message.contains("`vllm`?"), "{message}");
}

#[test]
fn sweeps_and_pictures_are_the_command_lines_bytes() {
    let server = Server::start(&[]);
    let request = json!({"workload": "llama-3.1-8b", "chips": ["h200", "l40s"],
        "set": ["context=8192", "batch=4"], "dtype": ["kv=fp8"],
        "sweep": {"set": ["batch=1..=64:x2"], "dtype": ["weight=bf16,fp8"]}});
    let answer: Value = serde_json::from_str(&server.ok("/api/compare", &request)).unwrap();
    let command = answer["sweep_command"].as_str().unwrap();
    assert_eq!(
        command,
        "stepcost sweep llama-3.1-8b --chip h200,l40s --set context=8192 --set batch=1..=64:x2 \
         --dtype kv=fp8 --dtype weight=bf16,fp8"
    );
    let csv = server.ok("/api/sweep", &request);
    assert_eq!(csv, cli(&words(command)));
    assert_eq!(csv.lines().count(), 1 + 2 * 7 * 2);

    let svg = server.ok("/api/plot/roofline", &request);
    let expected = cli(&[
        "plot",
        "roofline",
        "llama-3.1-8b",
        "--chip",
        "h200,l40s",
        "--set",
        "context=8192",
        "--set",
        "batch=4",
        "--dtype",
        "kv=fp8",
    ]);
    assert_eq!(svg, expected);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sweep.csv");
    std::fs::write(&path, &csv).unwrap();
    let chart = json!({"workload": "llama-3.1-8b", "chips": ["h200", "l40s"],
        "set": ["context=8192", "batch=4"], "dtype": ["kv=fp8"],
        "sweep": {"set": ["batch=1..=64:x2"], "dtype": ["weight=bf16,fp8"]},
        "chart": {"series": ["chip", "weight_dtype"], "log_x": true}});
    let drawn = server.ok("/api/plot/sweep", &chart);
    let expected = cli(&[
        "plot",
        "sweep",
        path.to_str().unwrap(),
        "--x",
        "batch",
        "--y",
        "tokens_per_s",
        "--series",
        "chip,weight_dtype",
        "--log-x",
    ]);
    // The CLI names the CSV by its path in the chart; the server calls it `sweep`.
    assert_eq!(drawn.lines().count(), expected.lines().count());
}

#[test]
fn the_tco_terms_are_the_flags_and_their_messages() {
    let server = Server::start(&[]);
    let request = json!({"workload": "llama-3.1-70b", "chips": "h200", "cost": "tco",
        "rate_of_capital": 0.05, "usd_per_kw_month": 150, "tco_utilization": 0.8,
        "network_usd_per_gbps": 20});
    let answer: Value = serde_json::from_str(&server.ok("/api/run", &request)).unwrap();
    let command = answer["command"].as_str().unwrap();
    assert_eq!(
        command,
        "stepcost run llama-3.1-70b --chip h200 --cost tco --rate-of-capital 0.05 \
         --usd-per-kw-month 150 --tco-utilization 0.8 --network-usd-per-gbps 20"
    );
    let json_args = [&words(command)[..], &["--format", "json"]].concat();
    let run: Value = serde_json::from_str(&cli(&json_args)).unwrap();
    assert_eq!(answer["rows"][0], run);
    let (status, message) = server.refused(
        "/api/run",
        &json!({"workload": "llama-3.1-70b", "chips": "h200", "tco_utilization": 1.5}),
    );
    assert_eq!(status, 400);
    let flags = [
        "run",
        "llama-3.1-70b",
        "--chip",
        "h200",
        "--tco-utilization",
        "1.5",
    ];
    // The command line adds clap's pointer to --help after a blank line.
    assert_eq!(message, cli_error(&flags, None).lines().next().unwrap());
}

#[test]
fn errors_are_the_command_lines() {
    let server = Server::start(&[]);
    let (status, message) = server.refused(
        "/api/run",
        &json!({"workload": "llama-3.1-70b", "chips": "h2000"}),
    );
    assert_eq!(status, 400);
    assert_eq!(
        message,
        cli_error(&["run", "llama-3.1-70b", "--chip", "h2000"], None)
    );
    let (_, message) = server.refused(
        "/api/run",
        &json!({"workload": "llama-3.1-70b", "chips": "h200", "set": ["batch=lots"]}),
    );
    assert_eq!(message, "invalid value 'batch=lots' for '--set <NAME=VALUE>': `lots` is not a number (in `batch=lots`)");
    let (_, message) = server.refused(
        "/api/run",
        &json!({"workload": "llama-3.1-70b", "chips": "h200", "set": ["q_heads=8"]}),
    );
    assert_eq!(
        message,
        cli_error(
            &[
                "run",
                "llama-3.1-70b",
                "--chip",
                "h200",
                "--set",
                "q_heads=8"
            ],
            None
        )
    );

    let dir = tempfile::tempdir().unwrap();
    let broken = "name: x\nparams: {batch: 1}\nblocks:\n  - name: layer\n    ops: [{gemm: {name: g, of: nothing, n: 8}}]\n";
    std::fs::write(dir.path().join("pasted.yaml"), broken).unwrap();
    let (status, message) = server.refused(
        "/api/run",
        &json!({"workload_yaml": broken, "chips": "h200"}),
    );
    assert_eq!(status, 400);
    assert_eq!(
        message,
        cli_error(&["run", "pasted.yaml", "--chip", "h200"], Some(dir.path()))
    );

    // A pasted config is imported as `stepcost import` does.
    let config = std::fs::read_to_string("tests/configs/Mistral-7B-v0.1/config.json").unwrap();
    let answer: Value = serde_json::from_str(
        &server.ok("/api/run", &json!({"hf_config": config, "chips": "h200"})),
    )
    .unwrap();
    std::fs::write(dir.path().join("config.json"), &config).unwrap();
    let command = answer["command"].as_str().unwrap();
    let (import, run) = command.split_once(" && ").unwrap();
    assert_eq!(import, "stepcost import config.json --out config.yaml");
    stepcost()
        .current_dir(dir.path())
        .args(words(import))
        .assert()
        .success();
    let out = stepcost()
        .current_dir(dir.path())
        .args(words(run))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        answer["rows"][0],
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    );
}

#[test]
fn no_path_is_taken_from_a_request() {
    let server = Server::start(&[]);
    for (request, needle) in [
        (json!({"workload": "llama-3.1-70b", "chips": "hardware/h200.yaml"}), "unknown chip `hardware/h200.yaml`"),
        (json!({"workload": "workloads/llama-3.1-70b.yaml", "chips": "h200"}), "unknown workload"),
        (json!({"workload": "Cargo.toml", "chips": "h200"}), "unknown workload"),
        (json!({"workload_yaml": "name: x\ntemplate: ../workloads/templates/dense.yaml\n", "chips": "h200"}),
            "pasted.yaml: template `../workloads/templates/dense.yaml`: a pasted workload may name only a built-in template"),
        (json!({"workload_yaml": "name: x\ntemplate: Cargo.toml\n", "chips": "h200"}), "only a built-in template"),
    ] {
        let (status, message) = server.refused("/api/run", &request);
        assert_eq!(status, 400);
        assert!(message.contains(needle), "{message}");
    }
}

#[test]
fn hostile_requests_get_a_4xx_and_the_server_keeps_serving() {
    let server = Server::start(&["--time-limit", "2"]);
    let good = json!({"workload": "llama-3.1-8b", "chips": "h200"});
    let big = vec![b' '; 2 << 20];
    assert_eq!(server.send("POST", "/api/run", &big).0, 413);
    let (status, body) = server.send("POST", "/api/run", b"{\"workload\": ");
    assert_eq!(status, 400);
    assert!(error_of(&body).starts_with("malformed request: EOF while parsing"));
    let (status, message) = server.refused(
        "/api/run",
        &json!({"workload": "llama-3.1-8b", "chip": "h200"}),
    );
    assert_eq!(status, 400);
    assert!(message.contains("unknown field `chip`"), "{message}");
    let huge =
        json!({"workload": "llama-3.1-8b", "chips": "all", "sweep": {"set": ["batch=1..=100000"]}});
    let (status, message) = server.refused("/api/sweep", &huge);
    assert_eq!(status, 400);
    assert_eq!(message, "the sweep has 2600000 scenarios, more than the limit of 10000 per request; narrow an axis, or run `stepcost sweep` on the command line");
    let capped = json!({"workload": "llama-3.1-8b", "chips": "h200", "sweep": {"set": ["batch=1..=20"], "max_scenarios": 10}});
    assert_eq!(server.refused("/api/sweep", &capped).0, 400);
    assert_eq!(server.send("GET", "/api/nothing", b"").0, 404);
    // A page of another site whose name resolves here is not answered (DNS rebinding).
    let mut other = server.connect();
    other
        .write_all(
            b"GET /api/chips HTTP/1.1\r\nHost: attacker.example:80\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
    let (status, body) = answer(other);
    assert_eq!(status, 403);
    assert!(error_of(&body)
        .starts_with("Host `attacker.example:80`: this server listens on a loopback address"));
    server.ok("/api/run", &good);
    let (status, page) = server.send("GET", "/", b"");
    assert_eq!(status, 200);
    assert!(String::from_utf8(page)
        .unwrap()
        .contains("<title>stepcost</title>"));
}
