//! `stepcost ui`: a local web page over the engine, and the JSON API under `/api/` that it
//! uses (described in `docs/api.md`). The handlers turn a request into the library's own
//! values, ask the study, and hand the result to an exporter, as the command line does; the
//! pictures are the exporters' SVG. Nothing is read from the file system on a request's
//! behalf: workloads and chips are built-in names or pasted text. The page's HTML, CSS and
//! JavaScript are compiled into the binary. Every request is bounded (`guard`: who may ask,
//! then its body, then a slot and a time limit) and so is every connection (`listen`: a
//! cap, and timeouts on its head, on an idle connection and on an answer left unread).

mod api;
mod assets;
pub(crate) mod budget;
mod command;
mod error;
mod guard;
mod listen;
mod origin;
mod request;
mod state;
mod sweep;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::routing::{get, post};
use axum::Router;

pub(crate) use listen::Stop;
pub(crate) use origin::Access;

/// Where the server listens and what it allows a request.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub host: IpAddr,
    /// 0: a free port the system picks (printed).
    pub port: u16,
    /// Open the page in the default browser once the server listens.
    pub open: bool,
    pub limits: Limits,
    /// Host names and the token; a server on an address that is not loopback and given no
    /// token gets a random one.
    pub access: Access,
}

/// What one request may take (documented in docs/api.md).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Bytes of a request body: room for any built-in-sized workload file or config pasted.
    pub body_bytes: usize,
    /// Scenarios of one sweep.
    pub max_scenarios: u64,
    /// From a request's read body to its answer, waiting for a slot included.
    pub time_limit: Duration,
    /// Requests in flight (their bodies read); more wait for a slot.
    pub max_requests: usize,
    /// Open connections; past it the server accepts no more until one ends (the system
    /// queues them). Below the usual 1024 open files a process may have; with
    /// [`Limits::body_bytes`] it also bounds the bodies being read (512 MiB at most).
    pub max_connections: usize,
    /// From a connection's opening, or its previous answer, to the end of its next request's
    /// head: a connection idle for longer (or sending its head too slowly) is closed.
    pub header_timeout: Duration,
    /// From a request's head to the last byte of its body: a body sent more slowly gets 408
    /// and holds no slot meanwhile.
    pub body_timeout: Duration,
    /// How long an answer may stall (its client reading less than 64 KiB of it, and not its
    /// end) before the connection is dropped.
    pub write_timeout: Duration,
    /// After the first Ctrl-C, how long open connections get to finish.
    pub shutdown_grace: Duration,
    /// Bytes of one answer (`--max-answer-bytes`); answers not yet read by their clients are
    /// held up to 4 times this in all (see `budget`).
    pub answer_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body_bytes: 1 << 20,
            max_scenarios: 10_000,
            time_limit: Duration::from_secs(10),
            max_requests: 64,
            max_connections: 512,
            header_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(5),
            answer_bytes: 32 << 20,
        }
    }
}

/// The routes: the page, its assets, and the API, every one under the guard's limits, and
/// every answer with the headers that keep it out of other sites' frames.
fn router(limits: Limits, host: IpAddr, access: &Access) -> Router {
    let state = Arc::new(state::State::new(limits));
    let guard = Arc::new(guard::Guard::new(state, host, access));
    Router::new()
        .route("/", get(assets::index))
        .route("/app.js", get(assets::script))
        .route("/style.css", get(assets::style))
        .route("/api/chips", get(api::chips))
        .route("/api/engines", get(api::engines))
        .route("/api/workloads", get(api::workloads))
        .route("/api/workload", post(api::workload))
        .route("/api/run", post(api::run))
        .route("/api/compare", post(api::compare_chips))
        .route("/api/sweep", post(api::sweep))
        .route("/api/plot/roofline", post(api::plot_roofline))
        .route("/api/plot/sweep", post(api::plot_sweep))
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&guard),
            guard::limit,
        ))
        .layer(axum::middleware::from_fn(origin::headers))
        .with_state(guard)
}

/// Serves the page until Ctrl-C (see [`listen::run`] for how it stops). Prints the address
/// it listens on (the port the system picked, for `--port 0`), with the access token when
/// there is one, and a warning when that is not a loopback address.
pub(crate) fn serve(options: &Options) -> Result<Stop> {
    let mut access = options.access.clone();
    if access.token.is_none() && !options.host.is_loopback() {
        access.token = Some(origin::random_token()?);
    }
    bound_allocator_arenas();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the server's threads")?;
    let stop = runtime.block_on(async {
        let address = SocketAddr::new(options.host, options.port);
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address}"))?;
        let bound = listener.local_addr()?;
        let interrupts = listen::Interrupts::new()?;
        let url = match &access.token {
            Some(token) => format!("http://{bound}/?token={token}"),
            None => format!("http://{bound}/"),
        };
        if !options.host.is_loopback() {
            let _ = writeln!(
                std::io::stderr(),
                "warning: listening on {bound}, which other machines can reach: anyone who can \
                 reach it and has the address with its token can use the page and its API"
            );
        }
        let mut stdout = std::io::stdout();
        writeln!(stdout, "stepcost ui: {url} (Ctrl-C stops it)")?;
        stdout.flush()?;
        if options.open {
            open_browser(&url);
        }
        let router = router(options.limits, options.host, &access);
        listen::run(listener, router, &options.limits, interrupts).await
    });
    // Work a dropped request left on a blocking thread is not waited for: it ends with the
    // process (dropping the runtime would wait for it).
    runtime.shutdown_background();
    stop
}

/// Caps glibc's malloc arenas at two per core. Each request's work runs on one of tokio's
/// blocking threads, and glibc gives each new thread its own arena, up to eight per core,
/// each keeping its freed pages. In the load test (`ui_load`, 200 clients, debug build) the
/// server's peak RSS was 150-220 MiB with the default and 90-114 MiB with this cap, serving
/// about a tenth fewer requests (the threads share fewer arenas).
fn bound_allocator_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let arenas = libc::c_int::try_from(2 * cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a tunable of the allocator; called before the server's
        // threads start. Its failure (0) leaves the default, which is only more memory.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}

/// Opens `url` in the default browser; a system without one gets a note, not an error.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        let _ = writeln!(
            std::io::stderr(),
            "note: cannot open a browser ({opener}: {e}); open {url} yourself"
        );
    }
}
