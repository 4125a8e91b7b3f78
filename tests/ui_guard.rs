//! `stepcost ui` against hostile clients and other sites, on a real server on 127.0.0.1:
//! cross-site posts, rebinding `Host` names, the token, the security headers, idle and
//! slow connections (which must neither pile up nor hold the slots of requests), answers
//! left unread, and Ctrl-C while work runs. Each test asserts the status, the message, and
//! that no work was done (the body was never read: a body that would be a 400 or a 413 gets
//! the refusal instead) or that the server kept serving. The load test (200 clients for 30 s
//! beside 100 idle and 20 slow connections) is ignored here; `scripts/browser-tests` runs it.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::server::{answer, answer_with_head, chain, error_of, Server};

const GOOD: &str = r#"{"workload": "llama-3.1-8b", "chips": "h200"}"#;

/// A request with exactly these headers and body, and `Connection: close`.
fn raw(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    text.into_bytes()
}

/// Whether the server has closed `stream` (EOF or reset) within `limit`, reading and
/// dropping anything it sent first.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// Whether nothing has arrived on `stream` yet (no answer, no close); reads nothing.
fn still_waiting(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0u8; 1];
    let waiting = matches!(stream.peek(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock);
    stream.set_nonblocking(false).unwrap();
    waiting
}

#[test]
fn a_cross_site_post_is_refused_before_its_body_is_read() {
    let server = Server::start(&[]);
    let host = format!("127.0.0.1:{}", server.port);
    // A plain HTML form of another site: text/plain, its Origin, a body that would be a 400.
    let form = raw(
        "POST",
        "/api/run",
        &[
            ("Host", &host),
            ("Origin", "https://evil.example"),
            ("Content-Type", "text/plain"),
        ],
        "workload=llama-3.1-8b",
    );
    let (status, _, body) = server.exchange(&form);
    assert_eq!(status, 403);
    assert_eq!(
        error_of(&body),
        format!(
            "Origin `https://evil.example`: this server answers only its own page \
             (http://{host}) and requests with no Origin; a page of another site may not use it"
        )
    );
    // Even declared JSON, and a body over the limit (a 413 if it were read): refused first.
    let big = "x".repeat(2 << 20);
    let json_post = raw(
        "POST",
        "/api/sweep",
        &[
            ("Host", &host),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
        ],
        &big,
    );
    assert_eq!(server.exchange(&json_post).0, 403);
    // The page's own origin under another port is another site.
    let other_port = raw(
        "POST",
        "/api/run",
        &[
            ("Host", &host),
            ("Origin", "http://127.0.0.1:1"),
            ("Content-Type", "application/json"),
        ],
        GOOD,
    );
    assert_eq!(server.exchange(&other_port).0, 403);
    // With no Origin, text/plain is still refused (415), saying what to send.
    let plain = raw(
        "POST",
        "/api/run",
        &[("Host", &host), ("Content-Type", "text/plain")],
        "workload=x",
    );
    let (status, _, body) = server.exchange(&plain);
    assert_eq!(status, 415);
    assert_eq!(
        error_of(&body),
        "send the request as JSON, with the header `Content-Type: application/json` (the \
         request's Content-Type: `text/plain`)"
    );
    let untyped = raw("POST", "/api/run", &[("Host", &host)], GOOD);
    let (status, _, body) = server.exchange(&untyped);
    assert_eq!(status, 415);
    assert!(error_of(&body).ends_with("(the request's Content-Type: none)"));
    // The page's own requests (its Origin, JSON with a charset) and scripts' (no Origin).
    let own = raw(
        "POST",
        "/api/run",
        &[
            ("Host", &host),
            ("Origin", &format!("http://{host}")),
            ("Content-Type", "application/json; charset=utf-8"),
        ],
        GOOD,
    );
    assert_eq!(server.exchange(&own).0, 200);
    assert_eq!(server.send("POST", "/api/run", GOOD.as_bytes()).0, 200);
}

#[test]
fn a_rebinding_host_is_refused_under_every_host() {
    let loopback = Server::start(&["--host", "127.0.0.1"]);
    let (status, _, body) =
        loopback.exchange(&raw("GET", "/api/chips", &[("Host", "evil.example")], ""));
    assert_eq!(status, 403);
    assert_eq!(
        error_of(&body),
        "Host `evil.example`: this server listens on a loopback address and answers only \
         requests addressed to localhost or 127.0.0.1 (a page of another site must not read it)"
    );
    // On every address, from this very machine too (the tests connect to 127.0.0.1).
    let any = Server::start(&["--host", "0.0.0.0", "--allow-host", "Stepcost.LAN"]);
    let token = any.token.clone().expect("a random token, printed");
    for host in ["evil.example", "evil.example:8080", "127.0.0.1.nip.io", ""] {
        let request = raw(
            "POST",
            "/api/run",
            &[
                ("Host", host),
                ("X-Stepcost-Token", &token),
                ("Content-Type", "application/json"),
            ],
            "{not json",
        );
        let (status, _, body) = any.exchange(&request);
        assert_eq!(status, 403, "{host}");
        assert_eq!(
            error_of(&body),
            format!(
                "Host `{host}`: this server answers only requests addressed to an IP address, \
                 localhost or a name given with --allow-host (a page of another site must not \
                 read it)"
            )
        );
    }
    // IP addresses (nothing to rebind), localhost, and the names given are answered.
    for host in [
        "127.0.0.1",
        "192.168.1.20:8080",
        "[::1]:80",
        "localhost",
        "stepcost.lan",
    ] {
        let request = raw(
            "POST",
            "/api/run",
            &[
                ("Host", host),
                ("X-Stepcost-Token", &token),
                ("Content-Type", "application/json"),
            ],
            GOOD,
        );
        assert_eq!(any.exchange(&request).0, 200, "{host}");
    }
}

#[test]
fn the_token_is_required_when_set_and_accepted_when_right() {
    let server = Server::start(&["--token", "sesame-0123"]);
    assert_eq!(server.token.as_deref(), Some("sesame-0123"));
    let with = |token: Option<&str>| {
        let mut headers = vec![("Host", "localhost"), ("Content-Type", "application/json")];
        headers.extend(token.map(|t| ("X-Stepcost-Token", t)));
        server.exchange(&raw("POST", "/api/run", &headers, "{not json"))
    };
    let (status, _, body) = with(None);
    assert_eq!(status, 401);
    assert_eq!(
        error_of(&body),
        "this server requires its access token: send it in the `X-Stepcost-Token` header (the \
         page takes it from the address printed at start, `?token=...`)"
    );
    for wrong in ["sesame-0124", "sesame-01234", "", "SESAME-0123"] {
        let (status, _, body) = with(Some(wrong));
        assert_eq!(status, 403, "{wrong}");
        assert_eq!(
            error_of(&body),
            "the `X-Stepcost-Token` header is not this server's access token"
        );
    }
    // The right token lets the request in: its malformed body is then read (400).
    let (status, _, body) = with(Some("sesame-0123"));
    assert_eq!(status, 400);
    assert!(error_of(&body).starts_with("malformed request"));
    // The page itself needs none (it holds no data; its script sends the token).
    assert_eq!(server.send("GET", "/", b"").0, 200);
    assert_eq!(server.send("GET", "/api/chips", b"").0, 401);
}

#[test]
fn a_server_other_machines_reach_prints_a_random_token_and_a_warning() {
    let (mut child, line) = spawn_ui_line(&["--host", "0.0.0.0"]);
    child.kill().unwrap();
    child.wait().unwrap();
    let token = line
        .strip_prefix("stepcost ui: http://0.0.0.0:")
        .and_then(|rest| rest.split("/?token=").nth(1))
        .and_then(|rest| rest.strip_suffix(" (Ctrl-C stops it)\n"))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token}"
    );
    let mut warning = String::new();
    (child.stderr.take().unwrap())
        .read_to_string(&mut warning)
        .unwrap();
    assert!(
        warning.starts_with("warning: listening on 0.0.0.0:")
            && warning.contains("has the address with its token"),
        "{warning}"
    );
    assert_eq!(
        stepcost_error(&["ui", "--token", "short"]),
        "error: invalid value 'short' for '--token <TOKEN>': expected 8 to 256 letters, \
         digits, `-`, `_`, `.` or `~`"
    );
}

/// The first line of a refused command line's stderr.
fn stepcost_error(args: &[&str]) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("stepcost"))
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success());
    String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn every_answer_carries_the_security_headers() {
    let server = Server::start(&[]);
    let answers = [
        raw("GET", "/", &[("Host", "localhost")], ""),
        raw("GET", "/app.js", &[("Host", "localhost")], ""),
        raw("GET", "/api/chips", &[("Host", "localhost")], ""),
        raw("GET", "/api/nothing", &[("Host", "localhost")], ""),
        raw("GET", "/", &[("Host", "evil.example")], ""),
        raw("POST", "/api/run", &[("Host", "localhost")], GOOD),
    ];
    let mut statuses = Vec::new();
    for request in answers {
        let (status, head, _) = server.exchange(&request);
        statuses.push(status);
        for header in [
            "x-frame-options: deny",
            "content-security-policy: default-src 'self'; img-src 'self' data:; object-src \
             'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
        ] {
            assert!(
                head.contains(&format!("\r\n{header}\r\n")),
                "{header}: {head}"
            );
        }
    }
    assert_eq!(statuses, [200, 200, 200, 404, 403, 415]);
}

#[test]
fn idle_connections_are_closed_after_the_header_timeout() {
    let server = Server::start(&[]);
    let mut idle: Vec<TcpStream> = (0..20).map(|_| server.connect()).collect();
    // One that sent half a head, and one kept alive after an answer.
    let mut half = server.connect();
    half.write_all(b"GET / HTTP/1.1\r\nHost: local").unwrap();
    idle.push(half);
    let mut kept = server.connect();
    kept.write_all(b"GET /style.css HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    idle.push(kept);
    // The header timeout is 5 s: each is closed well within 15.
    for (i, stream) in idle.iter_mut().enumerate() {
        assert!(
            closed_within(stream, Duration::from_secs(15)),
            "connection {i}"
        );
    }
    assert_eq!(server.send("GET", "/api/chips", b"").0, 200);
    // A head past 64 KiB is refused whole (431, from hyper), and the connection closed.
    let cookie = format!("a={}", "x".repeat(70_000));
    let long = raw(
        "GET",
        "/",
        &[("Host", "localhost"), ("Cookie", &cookie)],
        "",
    );
    let mut stream = server.connect();
    let _ = stream.write_all(&long);
    // The server may reset the connection over the head's unread end: read what came first.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{}",
        String::from_utf8_lossy(&got)
    );
}

#[test]
fn idle_connections_past_the_cap_do_not_lock_others_out() {
    let server = Server::start(&["--max-connections", "8"]);
    let mut idle: Vec<TcpStream> = (0..24).map(|_| server.connect()).collect();
    std::thread::sleep(Duration::from_millis(200));
    // Queued behind them, a well-formed client is answered once they time out (the cap
    // makes it wait, never refuses it): three rounds of the 5-s header timeout, within the
    // connection's 30-s read timeout.
    let (status, body) = server.send("POST", "/api/run", GOOD.as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    for (i, stream) in idle.iter_mut().enumerate() {
        assert!(
            closed_within(stream, Duration::from_secs(30)),
            "connection {i}"
        );
    }
}

#[test]
fn slow_bodies_hold_no_request_slot() {
    let server = Server::start(&["--max-requests", "2"]);
    // Three times the slots, each with half its body sent: they hold connections only.
    let mut slow: Vec<TcpStream> = (0..6)
        .map(|_| {
            let mut stream = server.connect();
            stream
                .write_all(
                    b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"workl",
                )
                .unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    server.ok(
        "/api/run",
        &json!({"workload": "llama-3.1-8b", "chips": "h200"}),
    );
    // Answered while every slow body is still being waited for (their timeout is 10 s).
    for (i, stream) in slow.iter_mut().enumerate() {
        assert!(still_waiting(stream), "slow client {i} was answered first");
    }
    for stream in slow {
        let (status, body) = answer(stream);
        assert_eq!(status, 408);
        assert_eq!(
            error_of(&body),
            "the request body did not arrive within the body-read timeout of 10 s (it was sent \
             too slowly); nothing was done"
        );
    }
}

#[test]
fn a_client_that_never_reads_its_answers_is_dropped() {
    const REQUESTS: usize = 2000;
    let server = Server::start(&[]);
    // 2000 pipelined requests for the page's script (20 KB each, 40 MB in all, far past the
    // sockets' buffers), never read.
    let one = b"GET /app.js HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut greedy: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut stream = server.connect();
            stream.write_all(&one.repeat(REQUESTS)).unwrap();
            stream
        })
        .collect();
    // Others are served meanwhile.
    assert_eq!(server.send("GET", "/api/chips", b"").0, 200);
    server.ok(
        "/api/run",
        &json!({"workload": "llama-3.1-8b", "chips": "h200"}),
    );
    // Two of them read their answers 100 bytes at a time, twice a second (200 B/s, far below
    // the 64 KiB per write timeout that keeps an answer going). Past the write timeout
    // (10 s) the server has given up on all four: what they can still read ends before the
    // last answer.
    let mut crumb = [0u8; 100];
    for _ in 0..28 {
        for stream in &mut greedy[..2] {
            let _ = stream.read(&mut crumb);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    for stream in &mut greedy {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut got = Vec::new();
        let _ = stream.read_to_end(&mut got);
        let answers = got.windows(15).filter(|w| w == b"HTTP/1.1 200 OK").count();
        assert!(answers < REQUESTS, "{answers} answers");
    }
    assert_eq!(server.send("GET", "/api/chips", b"").0, 200);
}

/// `stepcost ui` with `flags`, its stderr kept, and the line it printed its address on.
fn spawn_ui_line(flags: &[&str]) -> (Child, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("stepcost"))
        .args(["ui", "--port", "0"])
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line)
}

/// `stepcost ui` with `flags`, its stderr kept, and its port.
fn spawn_ui(flags: &[&str]) -> (Child, u16) {
    let (child, line) = spawn_ui_line(flags);
    let port = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    (child, port)
}

/// Sends SIGINT to `child`.
#[cfg(unix)]
fn interrupt(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for `child` to exit, at most `limit`; its exit code and stderr.
fn exit_within(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    (child.stderr.take().unwrap())
        .read_to_string(&mut stderr)
        .unwrap();
    (status.code(), stderr)
}

/// A sweep whose work is near the server's budget: 12,000 scenarios of a pasted chain of
/// 4,000 ops (48 million op pricings, seconds of work even in a release build), its answer
/// not come yet.
fn start_long_sweep(port: u16) -> TcpStream {
    let body = json!({"workload_yaml": chain(4000), "chips": "h200", "format": "csv",
        "sweep": {"set": ["n=1..=12000"]}})
    .to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(&raw(
            "POST",
            "/api/sweep",
            &[("Host", "localhost"), ("Content-Type", "application/json")],
            &body,
        ))
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    assert!(still_waiting(&mut stream), "the sweep answered already");
    stream
}

#[cfg(unix)]
#[test]
fn two_ctrl_cs_stop_the_server_while_work_runs() {
    let flags = ["--time-limit", "3600", "--max-scenarios", "1000000000"];
    // Twice: stopped at once, the sweep's thread not waited for.
    let (child, port) = spawn_ui(&flags);
    let mut sweep = start_long_sweep(port);
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&child);
    let (code, stderr) = exit_within(child, Duration::from_secs(10));
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        stderr,
        "stepcost ui: stopping; 1 open connection(s) get up to 5 s to finish (Ctrl-C again \
         stops at once)\nstepcost ui: stopped before every open connection finished\n"
    );
    assert!(closed_within(&mut sweep, Duration::from_secs(5)));
    // Once: the grace period (5 s), then the same.
    let (child, port) = spawn_ui(&flags);
    let _sweep = start_long_sweep(port);
    interrupt(&child);
    let (code, stderr) = exit_within(child, Duration::from_secs(20));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.ends_with("stopped before every open connection finished\n"));
    // Nothing in flight: the first stops it, exit 0.
    let (child, _) = spawn_ui(&[]);
    interrupt(&child);
    let (code, stderr) = exit_within(child, Duration::from_secs(10));
    assert_eq!(code, Some(0), "{stderr}");
}

/// The load test of the web suite: 200 clients sending `/api/run` requests one after another
/// for 30 s, while 100 idle connections and 20 that trickle their bodies are kept open (each
/// reopened when the server closes it). No well-formed request fails; the server's peak
/// memory stays under a cap; the latencies' percentiles are printed (figures, not
/// assertions).
#[test]
#[ignore = "30 s of load; scripts/browser-tests runs it"]
fn ui_load() {
    const CLIENTS: usize = 200;
    const IDLE: usize = 100;
    const SLOW: usize = 20;
    /// The server's peak resident memory must stay under this.
    const RSS_CAP_KB: u64 = 256 * 1024;
    let server = Server::start(&[]);
    let duration = Duration::from_secs(30);
    let start = Instant::now();
    let running = || start.elapsed() < duration;
    let (latencies, idle_closed, slow_refused) = std::thread::scope(|scope| {
        let server = &server;
        let idle: Vec<_> = (0..IDLE)
            .map(|_| {
                scope.spawn(move || {
                    let mut closed = 0;
                    while running() {
                        let mut stream = server.connect();
                        closed += usize::from(closed_within(&mut stream, duration));
                    }
                    closed
                })
            })
            .collect();
        let slow: Vec<_> = (0..SLOW)
            .map(|_| {
                scope.spawn(move || {
                    let mut refused = 0;
                    while running() {
                        let mut stream = server.connect();
                        let head = "POST /api/run HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
                        let _ = stream.write_all(head.as_bytes());
                        while running() && stream.write_all(b" ").is_ok() && still_waiting(&mut stream) {
                            std::thread::sleep(Duration::from_millis(500));
                        }
                        if running() {
                            refused += usize::from(answer_with_head(stream).0 == 408);
                        }
                    }
                    refused
                })
            })
            .collect();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                scope.spawn(move || {
                    let mut seen = Vec::new();
                    let mut i = 0;
                    while running() {
                        let batch = 1 + (client * 7 + i) % 256;
                        let body = json!({"workload": "llama-3.1-70b", "chips": "h200",
                            "set": [format!("batch={batch}")], "dtype": ["weight=fp8"]});
                        let sent = Instant::now();
                        let (status, bytes) = server.post("/api/run", &body);
                        seen.push(sent.elapsed());
                        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
                        i += 1;
                    }
                    seen
                })
            })
            .collect();
        let latencies: Vec<Duration> = clients
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let idle_closed: usize = idle.into_iter().map(|h| h.join().unwrap()).sum();
        let slow_refused: usize = slow.into_iter().map(|h| h.join().unwrap()).sum();
        (latencies, idle_closed, slow_refused)
    });
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()));
    let peak_kb = status.ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    let mut sorted = latencies;
    sorted.sort();
    let at =
        |q: f64| sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1];
    println!(
        "load: {CLIENTS} clients for {} s beside {IDLE} idle and {SLOW} slow-body connections: \
         {} requests to /api/run, none failed; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} \
         ms; {idle_closed} idle connections closed by the server, {slow_refused} slow bodies \
         refused (408); server peak RSS {}",
        duration.as_secs(),
        sorted.len(),
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        sorted[sorted.len() - 1].as_secs_f64() * 1e3,
        peak_kb.map_or("unknown (no /proc)".to_owned(), |kb| format!(
            "{} MiB",
            kb / 1024
        )),
    );
    assert!(idle_closed >= IDLE, "idle connections were not closed");
    assert!(slow_refused >= SLOW, "slow bodies were not refused");
    if let Some(kb) = peak_kb {
        assert!(kb < RSS_CAP_KB, "peak RSS {kb} kB");
    }
}
