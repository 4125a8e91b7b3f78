//! The requests a run serves: when each arrives and its prompt and output lengths, drawn from
//! a seed or read from a trace file.

use crate::base::diagnostic::{Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::ranges;
use crate::base::source::Source;

use super::rng::SplitMix64;

/// One request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// When it arrives, seconds of simulated time (as read, a trace's own clock; a run
    /// counts from its first arrival).
    pub arrival_s: f64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Output tokens, the first from the prefill; at least 2.
    pub output_tokens: u64,
}

/// How requests arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// A Poisson process: exponential gaps of mean `1 / rate`.
    Poisson {
        /// Mean requests per second.
        rate_per_s: f64,
    },
    /// Evenly spaced, `1 / rate` apart, the first at time 0.
    Uniform {
        /// Requests per second.
        rate_per_s: f64,
    },
    /// Gaps drawn from a gamma distribution of shape `burstiness` and mean `1 / rate`, as
    /// vLLM's `vllm bench serve --burstiness` draws them (docs/sources.md, SE-6): 1 is
    /// Poisson, larger is more evenly paced (the gaps' coefficient of variation is
    /// `1 / sqrt(burstiness)`) while the phase against the engine's iterations stays random,
    /// smaller is burstier.
    Gamma {
        /// Mean requests per second.
        rate_per_s: f64,
        /// The gamma distribution's shape: 1 is Poisson, above 1 more even, below burstier.
        burstiness: f64,
    },
    /// Every request read from a trace, in its order (arrival times not decreasing).
    Trace(Vec<Request>),
}

/// When the arrivals stop (a trace stops at its end).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Horizon {
    /// Arrivals within this many simulated seconds.
    Duration {
        /// The arrival window, seconds.
        s: f64,
    },
    /// This many requests.
    Requests {
        /// Requests that arrive.
        n: u64,
    },
}

/// Request lengths: the nominal shape, or uniform integers around it as vLLM's benchmark
/// draws them with `--random-range-ratio r`: prompt in `[floor(I (1 - r)), ceil(I (1 + r))]`,
/// output in `[max(1, floor(O (1 - r))), ceil(O (1 + r))]` (docs/sources.md, SE-3). Prompts
/// are kept at least 1 token and outputs at least 2 here (one from the prefill, one decoded),
/// as `RequestShape` requires.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lengths {
    input_tokens: u64,
    output_tokens: u64,
    range_ratio: f64,
}

impl Lengths {
    /// Lengths around `in=input,out=output`; the ratio is in [0, 1), as vLLM requires.
    pub fn new(input_tokens: u64, output_tokens: u64, range_ratio: f64) -> Result<Lengths, Error> {
        crate::study::request::RequestShape::new(input_tokens, output_tokens)?;
        if !(0.0..1.0).contains(&range_ratio) {
            return Err(Error::value(format!(
                "--range-ratio {range_ratio}: a range ratio is at least 0 and below 1 (as vLLM's --random-range-ratio)"
            )));
        }
        Ok(Lengths {
            input_tokens,
            output_tokens,
            range_ratio,
        })
    }

    /// The most tokens a drawn request may hold.
    pub fn most_tokens(&self) -> u64 {
        let r = self.range_ratio;
        (self.input_tokens as f64 * (1.0 + r)).ceil() as u64
            + (self.output_tokens as f64 * (1.0 + r)).ceil() as u64
    }

    fn draw(&self, rng: &mut SplitMix64) -> (u64, u64) {
        if self.range_ratio == 0.0 {
            return (self.input_tokens, self.output_tokens);
        }
        let r = self.range_ratio;
        let bounds = |x: u64, least: u64| {
            let low = ((x as f64 * (1.0 - r)).floor() as u64).max(least);
            let high = ((x as f64 * (1.0 + r)).ceil() as u64).max(low);
            (low, high)
        };
        let (il, ih) = bounds(self.input_tokens, 1);
        let (ol, oh) = bounds(self.output_tokens, 2);
        (rng.between(il, ih), rng.between(ol, oh))
    }
}

/// The run's requests in arrival order, times counted from the first arrival (a trace's
/// clock may start anywhere in [`ranges::TRACE_ARRIVAL`]: a Unix time keeps its
/// microseconds). The arrival stream and the lengths draw from separate generators seeded
/// from `seed`, so changing the lengths' ratio leaves arrival times as they were.
pub(super) fn requests(
    arrivals: &Arrivals,
    horizon: Horizon,
    lengths: &Lengths,
    seed: u64,
) -> Result<Vec<Request>, Error> {
    let rate = match arrivals {
        Arrivals::Trace(list) => return from_first(list),
        Arrivals::Poisson { rate_per_s }
        | Arrivals::Uniform { rate_per_s }
        | Arrivals::Gamma { rate_per_s, .. } => *rate_per_s,
    };
    check_horizon(horizon)?;
    if let Arrivals::Gamma { burstiness, .. } = arrivals {
        (ranges::SIM_BURSTINESS.check(*burstiness)).map_err(|e| {
            Error::value(format!("--burstiness {}: {e}", ranges::quoted(*burstiness)))
        })?;
    }
    ranges::REQUEST_RATE
        .check(rate)
        .map_err(|e| Error::value(format!("--rate {}: {e}", ranges::quoted(rate))))?;
    let mut seeds = SplitMix64::new(seed);
    let (mut gaps, mut sizes) = (
        SplitMix64::new(seeds.next_u64()),
        SplitMix64::new(seeds.next_u64()),
    );
    let mut out = Vec::new();
    // Far more than a run holds, on average: refused before any is drawn.
    if let Horizon::Duration { s } = horizon {
        if rate * s > 2.0 * MAX_REQUESTS as f64 {
            return Err(Error::value(format!(
                "the run would hold about {:.3e} requests, more than {MAX_REQUESTS}; shorten --duration or lower --rate",
                rate * s
            )));
        }
    }
    // Drawn gaps accumulate; evenly spaced arrivals place the n-th at n / rate.
    let mut drawn_t = 0.0;
    let full = loop {
        let t = match arrivals {
            Arrivals::Uniform { .. } => out.len() as f64 / rate,
            _ => drawn_t,
        };
        let done = match horizon {
            Horizon::Duration { s } => t >= s,
            Horizon::Requests { n } => out.len() as u64 >= n,
        };
        if done || out.len() >= MAX_REQUESTS {
            break !done;
        }
        let (input_tokens, output_tokens) = lengths.draw(&mut sizes);
        out.push(Request {
            arrival_s: t,
            input_tokens,
            output_tokens,
        });
        match arrivals {
            Arrivals::Poisson { .. } => drawn_t += gaps.exponential(rate),
            Arrivals::Gamma { burstiness, .. } => {
                drawn_t += gaps.gamma(*burstiness) / (rate * burstiness)
            }
            Arrivals::Uniform { .. } | Arrivals::Trace(_) => {}
        }
    };
    if full {
        return Err(Error::value(format!(
            "the run would hold more than {MAX_REQUESTS} requests; shorten --duration or lower --rate"
        )));
    }
    Ok(out)
}

/// The most requests one run holds (a bound on memory: 24 bytes each in, more out):
/// [`ranges::SIM_REQUESTS`]'s largest.
pub const MAX_REQUESTS: usize = ranges::SIM_REQUESTS.max as usize;

/// Refuses an arrival window or a count of requests outside its range, before any is drawn.
fn check_horizon(horizon: Horizon) -> Result<(), Error> {
    let checked = match horizon {
        Horizon::Duration { s } => (ranges::SIM_DURATION.check(s))
            .map_err(|e| format!("--duration {}: {e}", ranges::quoted(s))),
        Horizon::Requests { n } => ranges::whole(
            n as f64,
            &ranges::SIM_REQUESTS,
            format_args!("--requests {n}"),
        )
        .map(|_| ()),
    };
    checked.map_err(Error::value)
}

/// A trace's requests with their times counted from its first arrival; each time inside
/// [`ranges::TRACE_ARRIVAL`] and in order.
fn from_first(list: &[Request]) -> Result<Vec<Request>, Error> {
    let Some(first) = list.first() else {
        return Err(Error::value("a trace needs at least one request"));
    };
    let mut before = first.arrival_s;
    let mut out = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        let t = r.arrival_s;
        let bad = |why: String| {
            let t = ranges::quoted(t);
            Error::value(format!("trace request {}: arrival_s {t}: {why}", i + 1))
        };
        ranges::TRACE_ARRIVAL.check(t).map_err(bad)?;
        if t < before {
            return Err(bad(
                "comes before the request above it; a trace is in arrival order".into(),
            ));
        }
        before = t;
        out.push(Request {
            arrival_s: t - first.arrival_s,
            ..*r
        });
    }
    Ok(out)
}

/// Reads a trace: a CSV with the columns `arrival_s,input_tokens,output_tokens` (others are
/// ignored), one request a row, arrival times not decreasing.
pub fn read_trace(source: &Source) -> Result<Vec<Request>, Error> {
    let bad = |line: u64, field: &str, message: String| {
        Error::Invalid(Diagnostics(vec![
            source.unquoted_problem(&Origin::new(field, line, 0), message)
        ]))
    };
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(source.text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(1, "", format!("not a CSV trace: {e}")))?
        .iter()
        .map(str::to_owned)
        .collect();
    let column = |name: &str| header.iter().position(|h| h == name);
    let (Some(a), Some(i), Some(o)) = (
        column("arrival_s"),
        column("input_tokens"),
        column("output_tokens"),
    ) else {
        return Err(bad(
            1,
            "",
            "a trace has the columns arrival_s,input_tokens,output_tokens".into(),
        ));
    };
    let mut out: Vec<Request> = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            bad(line, "", format!("not a CSV row: {e}"))
        })?;
        let line = row.position().map_or(0, |p| p.line());
        let field = |k: usize| row.get(k).unwrap_or("");
        let (arrival_s, input_tokens, output_tokens) =
            parse_row([field(a), field(i), field(o)]).map_err(|(f, m)| bad(line, f, m))?;
        if out.last().is_some_and(|p| p.arrival_s > arrival_s) {
            return Err(bad(
                line,
                "arrival_s",
                format!("{arrival_s} comes before the row above it; a trace is in arrival order"),
            ));
        }
        if out.len() >= MAX_REQUESTS {
            return Err(bad(
                line,
                "",
                format!("a trace holds at most {MAX_REQUESTS} requests"),
            ));
        }
        out.push(Request {
            arrival_s,
            input_tokens,
            output_tokens,
        });
    }
    if out.is_empty() {
        return Err(bad(1, "", "a trace needs at least one request".into()));
    }
    Ok(out)
}

/// One trace row's arrival, prompt and output, or the field that is wrong and why.
fn parse_row(fields: [&str; 3]) -> Result<(f64, u64, u64), (&'static str, String)> {
    let [a, i, o] = fields;
    let arrival_s: f64 = (a.parse().ok())
        .filter(|t: &f64| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| {
            let why = format!("`{a}` is not a time in seconds (a number, at least 0)");
            ("arrival_s", why)
        })?;
    (ranges::TRACE_ARRIVAL.check(arrival_s)).map_err(|e| ("arrival_s", format!("`{a}` is {e}")))?;
    let count = |text: &str, name: &'static str, least: u64| {
        (text.parse::<u64>().ok())
            .filter(|n| *n >= least)
            .ok_or_else(|| {
                let why = format!("`{text}` is not a whole number of tokens of at least {least}");
                (name, why)
            })
    };
    Ok((
        arrival_s,
        count(i, "input_tokens", 1)?,
        count(o, "output_tokens", 2)?,
    ))
}
