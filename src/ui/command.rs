//! The `stepcost` command line that gives what a request gave: the page shows it beside the
//! table, so a view can be rerun (and scripted) without the page.

use super::request::{CostName, ModeName, ScenarioRequest, PASTED_CONFIG, PASTED_YAML};

/// A word as a POSIX shell reads it back: as it is when it holds only safe characters, else
/// in single quotes.
fn quoted(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-.,=:/+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The workload as the command line names it: the built-in, or the file the pasted text
/// would be saved as (a config is imported first).
fn workload(request: &ScenarioRequest) -> (String, Option<String>) {
    match (
        &request.workload,
        &request.workload_yaml,
        &request.hf_config,
    ) {
        (Some(name), _, _) => (name.clone(), None),
        (_, Some(_), _) => (PASTED_YAML.to_owned(), None),
        _ => (
            "config.yaml".to_owned(),
            Some(format!(
                "stepcost import {PASTED_CONFIG} --out config.yaml && "
            )),
        ),
    }
}

/// `stepcost VERB WORKLOAD --chip ...` with every flag the request sets, in the order the
/// server applies them; `sets` and `dtypes` are the `--set` and `--dtype` values.
fn line(
    verb: &str,
    request: &ScenarioRequest,
    (sets, dtypes): (&[String], &[String]),
    (fusions, engines): (&[String], &[String]),
) -> String {
    let (name, before) = workload(request);
    let mut words = vec!["stepcost".to_owned(), verb.to_owned(), name];
    let mut flag = |flag: &str, value: String| {
        words.push(format!("--{flag}"));
        words.push(value);
    };
    flag("chip", request.chips.names().join(","));
    sets.iter().for_each(|s| flag("set", s.clone()));
    dtypes.iter().for_each(|d| flag("dtype", d.clone()));
    if !fusions.is_empty() {
        flag("fusion", fusions.join(","));
    }
    if request.mode == ModeName::Roofline {
        flag("mode", "roofline".to_owned());
    }
    if !engines.is_empty() {
        flag("engine", engines.join(","));
    }
    if let Some(u) = request.memory_utilization {
        flag("memory-utilization", u.to_string());
    }
    if request.cost == CostName::Tco {
        flag("cost", "tco".to_owned());
    }
    for (name, value) in [
        ("years", request.years),
        ("pue", request.pue),
        ("usd-per-kwh", request.usd_per_kwh),
        ("rate-of-capital", request.rate_of_capital),
        ("usd-per-kw-month", request.usd_per_kw_month),
        ("tco-utilization", request.tco_utilization),
        ("network-usd-per-gbps", request.network_usd_per_gbps),
    ] {
        if let Some(v) = value {
            flag(name, v.to_string());
        }
    }
    request.price.iter().for_each(|p| flag("price", p.clone()));
    if request.overlap_comm && verb != "sweep" {
        words.push("--overlap-comm".to_owned());
    }
    let words: Vec<String> = words.iter().map(|w| quoted(w)).collect();
    format!("{}{}", before.unwrap_or_default(), words.join(" "))
}

/// The `run` (one chip) or `compare` (several) command of the request's scenario.
pub(crate) fn scenario(request: &ScenarioRequest) -> String {
    let verb = match request.chips.names().len() {
        1 => "run",
        _ => "compare",
    };
    let fusions: Vec<String> = request.fusion.iter().cloned().collect();
    let engines: Vec<String> = request.engine.iter().cloned().collect();
    line(
        verb,
        request,
        (&request.set, &request.dtype),
        (&fusions, &engines),
    )
}

/// The `sweep` command of the request's grid (CSV on stdout; `--format` added for others).
pub(crate) fn sweep(request: &ScenarioRequest, format: Option<&str>) -> String {
    let engines = match request.sweep.engine.is_empty() {
        true => request.engine.iter().cloned().collect(),
        false => request.sweep.engine.clone(),
    };
    let mut text = line(
        "sweep",
        request,
        (&request.sweep_sets(), &request.sweep_dtypes()),
        (&request.sweep_fusions(), &engines),
    );
    if let Some(format) = format {
        text.push_str(&format!(" --format {format} --out sweep.{format}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_a_shell_would_split_or_expand() {
        assert_eq!(quoted("batch=1..=256:x2"), "batch=1..=256:x2");
        assert_eq!(quoted("a b"), "'a b'");
        assert_eq!(quoted("it's"), r"'it'\''s'");
        assert_eq!(quoted("$(x)"), "'$(x)'");
        assert_eq!(quoted(""), "''");
    }
}
