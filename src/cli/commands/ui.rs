//! `ui`: the flags of the web page's server, and its start (the server is `crate::ui`).

use std::net::IpAddr;

use anyhow::Result;
use clap::Args;

use crate::base::parse::whole_in;
use crate::base::ranges;
use crate::ui::{Access, Limits, Options, Stop};

/// Serve the web page (and its JSON API) on this machine until Ctrl-C
#[derive(Args)]
pub(crate) struct UiArgs {
    /// Port to listen on (0: a free one, printed)
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on; anything but a loopback address lets other machines use the page
    /// (with a random access token, printed in the page's address, unless --token gives one)
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Open the page in the default browser
    #[arg(long)]
    open: bool,
    /// Seconds a request may take once its body is read, waiting for a slot included
    #[arg(long, value_name = "S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    time_limit: u64,
    /// Most scenarios of one sweep request
    #[arg(long, default_value_t = 10_000,
          value_parser = |t: &str| whole_in(t, &ranges::MAX_SCENARIOS))]
    max_scenarios: u64,
    /// Most requests in flight at once (their bodies read); more wait for a slot
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    max_requests: u32,
    /// Most connections open at once; more wait to be accepted
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=65536))]
    max_connections: u32,
    /// A host name requests may be addressed to, besides the defaults (localhost and the
    /// loopback addresses; any IP address when --host is not loopback); repeatable
    #[arg(long, value_name = "NAME", value_parser = host_name)]
    allow_host: Vec<String>,
    /// The access token every API request must carry (the page takes it from its address,
    /// `?token=...`); 8 to 256 letters, digits, `-`, `_`, `.` or `~`
    #[arg(long, value_name = "TOKEN", value_parser = token)]
    token: Option<String>,
    /// Most bytes of one answer (from 64 KiB to 1 GiB); answers that clients have not read
    /// yet are held up to 4 times this in all
    #[arg(long, value_name = "BYTES", default_value_t = 32 << 20,
          value_parser = clap::value_parser!(u64).range(65_536..=1 << 30))]
    max_answer_bytes: u64,
}

/// `ui`: serves the page until Ctrl-C; stopped before open connections finished, it exits
/// with 130, as a command interrupted by Ctrl-C does.
pub(crate) fn run(args: UiArgs) -> Result<()> {
    let limits = Limits {
        time_limit: std::time::Duration::from_secs(args.time_limit),
        max_scenarios: args.max_scenarios,
        max_requests: args.max_requests as usize,
        max_connections: args.max_connections as usize,
        answer_bytes: args.max_answer_bytes,
        ..Limits::default()
    };
    let stop = crate::ui::serve(&Options {
        host: args.host,
        port: args.port,
        open: args.open,
        limits,
        access: Access {
            allow_hosts: args.allow_host,
            token: args.token,
        },
    })?;
    if stop == Stop::Cut {
        eprintln!("stepcost ui: stopped before every open connection finished");
        std::process::exit(130);
    }
    Ok(())
}

/// A name as a `Host` header carries it (without port): letters, digits, `-` and `.`.
fn host_name(text: &str) -> Result<String, String> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
    if text.is_empty() || text.len() > 253 || !text.bytes().all(plain) {
        return Err("expected a host name: letters, digits, `-` and `.` (no port)".to_owned());
    }
    Ok(text.to_ascii_lowercase())
}

/// A token that travels in an address and a header unchanged.
fn token(text: &str) -> Result<String, String> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-_.~".contains(&b);
    if !(8..=256).contains(&text.len()) || !text.bytes().all(plain) {
        return Err("expected 8 to 256 letters, digits, `-`, `_`, `.` or `~`".to_owned());
    }
    Ok(text.to_owned())
}
