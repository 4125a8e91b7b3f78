//! Hostile inputs, round three, for `stepcost ui`'s API: one budget per request. Chips are
//! counted after `all` is expanded and repeats removed; work and answer bytes are counted
//! before any pricing and refused past their limits; the time limit stops the work itself
//! (the server's CPU time stops growing after the 408); answers clients do not read are held
//! within a bound (the server's RSS); a pasted workload's `template:` never reads a file of
//! the server's working folder. Each runs a real server on 127.0.0.1 (Linux: /proc).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::server::{chain, Server};

/// The server's CPU time so far (user and system), in clock ticks.
fn cpu_ticks(server: &Server) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", server.child.id())).unwrap();
    // Fields after the command's `(name)`: state is the 3rd field, utime the 14th, stime the 15th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn ticks_per_s() -> u64 {
    // SAFETY: sysconf reads a constant of the system.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }) as u64
}

/// The server's resident memory, in bytes (`VmRSS`).
fn rss_bytes(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// A `stepcost ui` on a free port whose working folder is `dir`.
fn start_in(dir: &Path, flags: &[&str]) -> Server {
    Server::start_in(Some(dir), flags)
}

fn rows(server: &Server, request: &Value) -> Vec<String> {
    let answer: Value = serde_json::from_str(&server.ok("/api/compare", request)).unwrap();
    (answer["rows"].as_array().unwrap().iter())
        .map(|row| row["chip"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn all_and_repeats_count_each_chip_once() {
    let server = Server::start(&[]);
    let once = rows(&server, &json!({"workload": "gemm", "chips": "all"}));
    // Every built-in chip that ships: the list of chips, announced ones apart.
    let (status, list) = server.send("GET", "/api/chips", b"");
    assert_eq!(status, 200);
    let listed: Vec<Value> = serde_json::from_slice(&list).unwrap();
    // A row per chip and data type: the chips' names, once each.
    let mut shipping: Vec<&str> = (listed.iter())
        .filter(|c| c["status"].as_str() != Some("announced"))
        .map(|c| c["chip"].as_str().unwrap())
        .collect();
    shipping.dedup();
    let shipping = shipping.len();
    assert_eq!(once.len(), shipping);
    assert!(shipping < 64, "{shipping} chips");
    // `all` 64 times, and a chip named again, price each chip once, in the order first named.
    let repeated = rows(
        &server,
        &json!({"workload": "gemm", "chips": vec!["all"; 64]}),
    );
    assert_eq!(repeated, once);
    let named = rows(
        &server,
        &json!({"workload": "gemm", "chips": ["h200", "all", "h200", "all"]}),
    );
    assert_eq!(named.len(), shipping);
    assert_eq!(named[0], "h200");
}

#[test]
fn work_and_answers_past_the_budget_are_refused_before_pricing() {
    let server = Server::start(&["--max-answer-bytes", "1048576"]);
    // 26-odd chips × 3,000 kernels on the roofline: about 20 MB of SVG, past 1 MiB.
    let big = chain(3000);
    let request = json!({"workload_yaml": big, "chips": "all"});
    let (status, message) = server.refused("/api/plot/roofline", &request);
    assert_eq!(status, 413, "{message}");
    assert!(
        message.starts_with("the answer would take about ")
            && message.contains("bytes per answer; name fewer chips, narrow the sweep's axes"),
        "{message}"
    );
    // Every chip's report on a 6,000-op workload: 144,000 kernel prices held at once.
    let wide = chain(6000);
    let request = json!({"workload_yaml": wide, "chips": "all"});
    let (status, message) = server.refused("/api/compare", &request);
    assert_eq!(status, 422, "{message}");
    let chips = (6000..)
        .step_by(6000)
        .take(64)
        .position(|n| message.starts_with(&format!("the request would hold {n} kernel prices (")));
    assert!(
        chips.is_some_and(|c| c + 1 > 16)
            && message.ends_with(
                " chips × the workload's ops), more than the limit of 100000 per request; \
                 name fewer chips, or run the command line"
            ),
        "{message}"
    );
    // A sweep of 10,000 scenarios on a 6,000-op workload: 60 million op pricings.
    let request = json!({"workload_yaml": wide, "chips": "h200,b200",
        "sweep": {"set": ["n=1..=5000"]}});
    let (status, message) = server.refused("/api/sweep", &request);
    assert_eq!(status, 422, "{message}");
    assert_eq!(
        message,
        "the request asks for about 60000000 op pricings (2 chips × 5000 scenarios × the \
         workload's ops), more than the limit of 50000000 per request; name fewer chips, \
         narrow the sweep's axes, or run the command line"
    );
    // A sweep's rows are written through the answer's cap too.
    let request = json!({"workload": "llama-3.1-8b", "chips": "h200",
        "sweep": {"set": ["batch=1..=2000"]}, "format": "json"});
    let (status, message) = server.refused("/api/sweep", &request);
    assert_eq!(status, 413, "{message}");
}

/// [`chain`] with `plans` fusion plans besides `none`, each fusing two ops: each is a lever
/// that a chip's verdict prices.
fn fused_chain(ops: usize, plans: usize) -> String {
    let mut text = chain(ops);
    text.push_str("fusion:\n");
    let step = ops / plans;
    for p in 0..plans {
        text.push_str(&format!("  f{p}: [[e{}, e{}]]\n", p * step, p * step + 1));
    }
    text
}

/// Waits until the server's CPU time stays put for half a second (its work done), at most 60 s.
fn settled(server: &Server) -> u64 {
    let mut last = cpu_ticks(server);
    for _ in 0..120 {
        std::thread::sleep(Duration::from_millis(500));
        let now = cpu_ticks(server);
        if now == last {
            return now;
        }
        last = now;
    }
    panic!("the server kept working for a minute");
}

#[test]
fn the_time_limit_stops_the_work_not_only_the_answer() {
    let server = Server::start(&["--time-limit", "1"]);
    // Every chip's verdict on a 3,600-op workload with 40 fusion plans: each verdict prices
    // the scenario about 75 times; in all, about 7 million op pricings (within the budget),
    // many seconds of CPU in a debug build. The workload is loaded (and kept in the cache)
    // first, so that the time limit falls in the pricing.
    let request = json!({"workload_yaml": fused_chain(3600, 40), "chips": "all"});
    let _ = server.post("/api/workload", &request);
    settled(&server);
    let (status, message) = server.refused("/api/compare", &request);
    assert_eq!(status, 408, "{message}");
    assert!(message.starts_with("the request took longer than the time limit of 1 s"));
    // The work stops within one chip's verdict of the 408: the server's CPU time levels off
    // (and it keeps serving: the next request is answered).
    // Before the change the work went on for seconds of CPU after the 408 (165 ticks of
    // this window, on a loaded machine).
    std::thread::sleep(Duration::from_millis(1000));
    let later = cpu_ticks(&server);
    std::thread::sleep(Duration::from_millis(3000));
    let spent = cpu_ticks(&server) - later;
    assert!(
        spent <= ticks_per_s() / 4,
        "the server spent {spent} ticks 1 to 4 s after the 408"
    );
    server.ok("/api/run", &json!({"workload": "gemm", "chips": "h200"}));
}

#[test]
fn answers_not_read_are_held_within_a_bound() {
    // Answers of at most 16 MiB, 64 MiB of them held for clients at once.
    let server = Server::start(&["--max-answer-bytes", "16777216"]);
    // 8,000 rows of JSON Lines: about 12 MB.
    let request = json!({"workload": "gemm", "chips": "h200", "format": "json",
        "sweep": {"set": ["m=1..=8000"]}})
    .to_string();
    let (status, rows) = server.send("POST", "/api/sweep", request.as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&rows));
    assert!(rows.len() > 10 << 20, "{} bytes", rows.len());
    let baseline = rss_bytes(&server);
    // 60 clients ask for it and never read: held whole, the answers would take 700 MB, less
    // what the sockets' buffers take in.
    let mut clients = Vec::new();
    for _ in 0..60 {
        let mut stream = server.connect();
        let head = format!(
            "POST /api/sweep HTTP/1.1\r\nHost: localhost\r\nContent-Type: \
             application/json\r\nContent-Length: {}\r\n\r\n",
            request.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        clients.push(stream);
    }
    // Past the time limit (10 s), every request is answered or refused (408 while waiting
    // for room among the answers held).
    std::thread::sleep(Duration::from_secs(12));
    // 64 MiB of answers held, and what the connections and the allocator keep besides
    // (measured: 15 MB).
    let held = rss_bytes(&server);
    assert!(
        held < baseline + (64 << 20) + (48 << 20),
        "RSS {} MB after 60 unread answers (from {} MB)",
        held >> 20,
        baseline >> 20
    );
    drop(clients);
    server.ok("/api/run", &json!({"workload": "gemm", "chips": "h200"}));
}

#[test]
fn a_pasted_template_is_never_a_file_of_the_working_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bad = "name: FROM-THE-FOLDER\nparams: {secret: 42}\nblocks: []\n";
    for name in ["dense", "dense.yaml"] {
        std::fs::write(dir.path().join(name), bad).unwrap();
    }
    let here = start_in(dir.path(), &[]);
    let empty = tempfile::tempdir().unwrap();
    let elsewhere = start_in(empty.path(), &[]);
    let request = json!({"workload_yaml": "name: t\ntemplate: dense\nparams: {layers: 2}\n",
        "chips": "h200"});
    for path in ["/api/workload", "/api/run"] {
        let answer = here.ok(path, &request);
        assert!(
            !answer.contains("FROM-THE-FOLDER") && !answer.contains("secret"),
            "{answer}"
        );
        // The built-in template's answer, as in a folder without those files.
        assert_eq!(answer, elsewhere.ok(path, &request));
    }
    let facts: Value = serde_json::from_str(&here.ok("/api/workload", &request)).unwrap();
    assert!(facts.to_string().contains("kv_heads"), "{facts}");
}
