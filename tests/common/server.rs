//! A `stepcost ui` server on a free port for the web tests, and the plain-TCP client they
//! talk to it with (raw requests, so that a test controls every header and byte).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A `stepcost ui` on a free port, stopped when dropped.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) port: u16,
    /// The access token in the address it printed, if any.
    pub(crate) token: Option<String>,
}

impl Server {
    /// The server is this build's binary, or `STEPCOST_BIN` (the load test is timed on a
    /// release binary, whichever profile the test itself was built in).
    pub(crate) fn start(flags: &[&str]) -> Server {
        Server::start_in(None, flags)
    }

    /// [`Server::start`] with `dir` as its working folder (the test's own when `None`).
    pub(crate) fn start_in(dir: Option<&std::path::Path>, flags: &[&str]) -> Server {
        let binary = std::env::var_os("STEPCOST_BIN")
            .map_or_else(|| assert_cmd::cargo::cargo_bin("stepcost"), Into::into);
        let mut command = Command::new(binary);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command
            .args(["ui", "--port", "0"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("stepcost ui starts");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("its stdout");
        BufReader::new(stdout).read_line(&mut line).unwrap();
        // `stepcost ui: http://HOST:PORT/[?token=TOKEN] (...)`; the tests connect to 127.0.0.1
        // whatever the host.
        let address = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        let port = (address.split('/').next())
            .and_then(|host| host.rsplit(':').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        let token = address.split("?token=").nth(1).map(str::to_owned);
        Server { child, port, token }
    }

    /// Sends `raw` bytes as they are, and reads the whole answer: status, head, body.
    pub(crate) fn exchange(&self, raw: &[u8]) -> (u16, String, Vec<u8>) {
        let mut stream = self.connect();
        // A server that answers before the whole request is sent may close: that is its answer.
        let _ = stream.write_all(raw);
        answer_with_head(stream)
    }

    pub(crate) fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream
    }

    /// Sends one request and reads the whole answer: its status and body.
    pub(crate) fn send(&self, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let headers = [("Host", "localhost"), ("Content-Type", "application/json")];
        self.send_with(method, path, &headers, body)
    }

    /// [`Server::send`] with exactly these headers (and `Content-Length`, `Connection: close`).
    pub(crate) fn send_with(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (u16, Vec<u8>) {
        let mut stream = self.connect();
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ));
        stream.write_all(head.as_bytes()).unwrap();
        // A server that answers before the whole body is sent may close: that is its answer.
        let _ = stream.write_all(body);
        answer(stream)
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Vec<u8>) {
        self.send("POST", path, body.to_string().as_bytes())
    }

    /// A 200's body as text.
    pub(crate) fn ok(&self, path: &str, body: &Value) -> String {
        let (status, bytes) = self.post(path, body);
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(status, 200, "{text}");
        text
    }

    /// A refusal's status and message.
    pub(crate) fn refused(&self, path: &str, body: &Value) -> (u16, String) {
        let (status, bytes) = self.post(path, body);
        (status, error_of(&bytes))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn error_of(bytes: &[u8]) -> String {
    let value: Value = serde_json::from_slice(bytes)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(bytes)));
    value["error"]
        .as_str()
        .expect("an `error` field")
        .to_owned()
}

/// Reads an HTTP/1.1 answer to its end: status, and body (de-chunked where chunked).
pub(crate) fn answer(stream: TcpStream) -> (u16, Vec<u8>) {
    let (status, _, body) = answer_with_head(stream);
    (status, body)
}

/// [`answer`], with the head (its status line and headers, in lower case).
pub(crate) fn answer_with_head(mut stream: TcpStream) -> (u16, String, Vec<u8>) {
    let mut raw = Vec::new();
    // A server that answered before reading the whole request may reset the connection
    // after its answer: what came before the reset is the answer.
    if let Err(e) = stream.read_to_end(&mut raw) {
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}");
    }
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status = head[9..12].parse().unwrap();
    let mut body = raw[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        let (mut out, mut rest) = (Vec::new(), &body[..]);
        loop {
            let end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..end]).unwrap(), 16).unwrap();
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[end + 2..end + 2 + size]);
            rest = &rest[end + 4 + size..];
        }
        body = out;
    }
    (status, head, body)
}

/// A workload of `ops` elementwise ops in a chain, each reading the one before.
pub(crate) fn chain(ops: usize) -> String {
    let mut text = String::from(
        "name: chain\nparams:\n  n: 1024\ntensors:\n  x: {role: activation, shape: [n]}\n\
         blocks:\n  - name: k\n    ops:\n",
    );
    let mut before = "x".to_owned();
    for i in 0..ops {
        text.push_str(&format!(
            "      - elementwise: {{name: e{i}, of: [{before}], flops_per_element: 1}}\n"
        ));
        before = format!("e{i}");
    }
    text
}
