//! `ui`: the flags of the web page's server, and its start (the server is `crate::ui`).

use std::net::IpAddr;

use anyhow::Result;
use clap::Args;

use crate::base::parse::whole_in;
use crate::base::ranges;
use crate::ui::{Limits, Options};

/// Serve the web page (and its JSON API) on this machine until Ctrl-C
#[derive(Args)]
pub(crate) struct UiArgs {
    /// Port to listen on (0: a free one, printed)
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on; anything but a loopback address lets other machines use the page
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Open the page in the default browser
    #[arg(long)]
    open: bool,
    /// Seconds a request may take, waiting for a slot included
    #[arg(long, value_name = "S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    time_limit: u64,
    /// Most scenarios of one sweep request
    #[arg(long, default_value_t = 10_000,
          value_parser = |t: &str| whole_in(t, &ranges::MAX_SCENARIOS))]
    max_scenarios: u64,
    /// Most bytes of one answer (from 64 KiB to 1 GiB); answers that clients have not read
    /// yet are held up to 4 times this in all
    #[arg(long, value_name = "BYTES", default_value_t = 32 << 20,
          value_parser = clap::value_parser!(u64).range(65_536..=1 << 30))]
    max_answer_bytes: u64,
}

/// `ui`: serves the page until Ctrl-C.
pub(crate) fn run(args: UiArgs) -> Result<()> {
    let limits = Limits {
        time_limit: std::time::Duration::from_secs(args.time_limit),
        max_scenarios: args.max_scenarios,
        answer_bytes: args.max_answer_bytes,
        ..Limits::default()
    };
    crate::ui::serve(&Options {
        host: args.host,
        port: args.port,
        open: args.open,
        limits,
    })
}
