//! What `stepcost fit` and `validate --cross-validate` write: the standalone `expected:`
//! fragment of a fit (a chip file's section, loadable on its own), and the tables of errors
//! per kind before and after a fit, in sample and held out.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::style::{align_right, new_table};
use crate::base::dtype::DType;
use crate::base::units::{percent, signed_percent as signed};
use crate::core::chip::Achievable;
use crate::study::fit::cross::{group_stats, CrossValidation, MIN_FAMILY_ROWS};
use crate::study::fit::{ChipFit, Constant, Prior};
use crate::study::validate::{stats_of, ErrorStats, Outcome};

/// The fitted `expected:` section as YAML, with the cases it was fitted to as comments. Every
/// number is written in full (shortest form that reads back to the same value), so the
/// fragment loads to exactly the constants the fit reports.
pub fn fragment(fit: &ChipFit, cases_name: &str) -> String {
    let a = &fit.fitted.constants;
    let mut text = String::new();
    let used = match &fit.family {
        Some(f) => format!("cases of chip family `{f}`"),
        None => "cases".into(),
    };
    let _ = writeln!(
        text,
        "# Expected-mode constants of `{}` ({}), fitted by `stepcost fit` to {} {used} of {cases_name}:\n\
         # soft-L1 least squares on ln(predicted / measured), each source's rows together weighing as one,\n\
         # from the middle of each constant's physical bounds, inside them;\n\
         # {};\n\
         # a constant no case depends on takes that fit's value where it fitted one, else the file's.",
        fit.chip.id(),
        fit.chip.name(),
        fit.before.len(),
        prior(fit),
    );
    let ids: Vec<&str> = fit.before.iter().map(|o| o.case.id.as_str()).collect();
    for line in wrapped(&ids, 88) {
        let _ = writeln!(text, "# cases: {line}");
    }
    constant_lines(&mut text, fit);
    let matrix: Vec<String> = DType::ALL
        .iter()
        .filter_map(|d| a.matrix[*d as usize].map(|v| format!("{d}: {v}")))
        .collect();
    let _ = writeln!(text, "expected:");
    let _ = writeln!(text, "  matrix: {{{}}}", matrix.join(", "));
    let _ = writeln!(text, "  vector: {}", a.vector);
    let _ = writeln!(text, "  memory: {}", a.memory);
    let _ = writeln!(text, "  small_m_memory: {}", a.small_m_memory);
    if let Some(v) = a.attention_memory {
        let _ = writeln!(text, "  attention_memory: {v}");
    }
    if let Some(v) = a.exp_overlap {
        let _ = writeln!(text, "  exp_overlap: {v}");
    }
    if a.weight_only_memory < 1.0 {
        let _ = writeln!(text, "  weight_only_memory: {}", a.weight_only_memory);
    }
    if a.fp4_memory < 1.0 {
        let _ = writeln!(text, "  fp4_memory: {}", a.fp4_memory);
    }
    if let Some(line) = paths_line(a) {
        let _ = writeln!(text, "  paths: {line}");
    }
    tile_lines(&mut text, a);
    if a.dram_latency_s > 0.0 {
        let _ = writeln!(text, "  dram_latency: {:e} s", a.dram_latency_s);
    }
    if a.host_step_s > 0.0 {
        let _ = writeln!(text, "  host_step: {:e} s", a.host_step_s);
    }
    if a.host_sequence_s > 0.0 {
        let _ = writeln!(text, "  host_sequence: {:e} s", a.host_sequence_s);
    }
    text
}

/// The `paths` value, in flow style on one line: `{deepgemm: {matrix: {fp8: 0.8}}}`; `None`
/// where the fit gives no path a fraction of its own.
fn paths_line(a: &Achievable) -> Option<String> {
    let entries: Vec<String> = (a.paths.iter())
        .filter(|(_, f)| !f.is_empty())
        .map(|(p, f)| {
            let mut parts = Vec::new();
            let matrix: Vec<String> = (DType::ALL.iter())
                .filter_map(|d| f.matrix[*d as usize].map(|v| format!("{d}: {v}")))
                .collect();
            if !matrix.is_empty() {
                parts.push(format!("matrix: {{{}}}", matrix.join(", ")));
            }
            if let Some(v) = f.small_m_memory {
                parts.push(format!("small_m_memory: {v}"));
            }
            format!("{}: {{{}}}", p.name(), parts.join(", "))
        })
        .collect();
    (!entries.is_empty()).then(|| format!("{{{}}}", entries.join(", ")))
}

/// The comment lines that say what became of each constant: fitted, kept, set by the wider
/// fit, shared by every chip, or tied to another.
fn constant_lines(text: &mut String, fit: &ChipFit) {
    let names = |cs: &[Constant]| {
        let n: Vec<String> = cs.iter().map(|c| c.name()).collect();
        if n.is_empty() {
            "none".into()
        } else {
            n.join(", ")
        }
    };
    let (shared, kept): (Vec<Constant>, Vec<Constant>) =
        fit.fitted.kept.iter().partition(|c| c.is_shared());
    let _ = writeln!(text, "# fitted: {}", names(&fit.fitted.fitted));
    let _ = writeln!(text, "# kept (no case depends on them): {}", names(&kept));
    let wider: Vec<Constant> = (kept.iter().copied())
        .filter(|c| fit.fitted.informed.contains(c))
        .collect();
    let _ = writeln!(text, "# of those, the wider fit's: {}", names(&wider));
    if !shared.is_empty() {
        let _ = writeln!(
            text,
            "# every chip's (a serving engine's, fitted to every chip's model steps and requests): {}",
            names(&shared)
        );
    }
    for c in &fit.fitted.fitted {
        if let Some(t) = c.tied(&fit.fitted.constants) {
            let (t, c) = (t.name(), c.name());
            let clock = fit.fitted.constants.fp16_clock;
            let times = match clock < 1.0 {
                true => format!(" times fp16_clock ({clock}), its sustained clock"),
                false => String::new(),
            };
            let _ = writeln!(
                text,
                "# {t} is {c}'s{times}: the two run the same MMA instructions at one peak"
            );
        }
    }
}

/// The section's lines a fit keeps as the file has them: GEMM tiles and scheduling, and
/// fp16's clock beside bf16's.
fn tile_lines(text: &mut String, a: &Achievable) {
    let tiles: Vec<String> = (a.cta_tiles.iter())
        .map(|[m, n]| format!("[{m}, {n}]"))
        .collect();
    let _ = writeln!(text, "  row_tile: {}", a.row_tile);
    let _ = writeln!(text, "  cta_tiles: [{}]", tiles.join(", "));
    let _ = writeln!(text, "  stream_k: {}", a.stream_k);
    if let Some(rows) = a.cta_pair_rows {
        let _ = writeln!(text, "  cta_pair_rows: {rows}");
    }
    if a.split_k > 1 {
        let _ = writeln!(text, "  split_k: {}", a.split_k);
    }
    if a.fp16_clock < 1.0 {
        let _ = writeln!(text, "  fp16_clock: {}", a.fp16_clock);
    }
}

/// `items` joined by `, ` into lines of at most about `width` characters.
fn wrapped(items: &[&str], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        match lines.last_mut() {
            Some(line) if line.len() + item.len() + 2 <= width => {
                line.push_str(", ");
                line.push_str(item);
            }
            _ => lines.push((*item).to_owned()),
        }
    }
    lines
}

/// The errors of `outcomes` overall and per kind, in that order.
fn per_kind(outcomes: &[Outcome]) -> Vec<ErrorStats> {
    let mut groups = vec![("all".to_owned(), Vec::new())];
    for o in outcomes {
        let Some(e) = o.row_error() else { continue };
        groups[0].1.push(e);
        let kind = format!("kind {}", o.case.kind);
        match groups.iter_mut().find(|(g, _)| *g == kind) {
            Some((_, errors)) => errors.push(e),
            None => groups.push((kind, vec![e])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, e)| !e.is_empty())
        .map(|(g, e)| stats_of(g, e))
        .collect()
}

/// The fit's report: what was fitted to what, the error per kind before and after, and each
/// constant's start and fitted value.
pub fn write_fit(out: &mut dyn Write, fit: &ChipFit, cases_name: &str) -> io::Result<()> {
    let family = fit
        .family
        .as_ref()
        .map_or(String::new(), |f| format!(" and of chip family `{f}`"));
    writeln!(
        out,
        "`{}` ({}): expected-mode constants fitted to {} cases of {cases_name} measured on it{family} ({} evaluations), {}",
        fit.chip.id(),
        fit.chip.name(),
        fit.before.len(),
        fit.fitted.evaluations,
        prior(fit)
    )?;
    let mut table = new_table(&[
        "group",
        "cases",
        "before median",
        "p90",
        "signed",
        "after median",
        "p90",
        "signed",
    ]);
    for (b, a) in per_kind(&fit.before).iter().zip(per_kind(&fit.after)) {
        table.add_row(vec![
            b.group.clone(),
            b.cases.to_string(),
            percent(b.median_abs),
            percent(b.p90_abs),
            signed(b.signed_median),
            percent(a.median_abs),
            percent(a.p90_abs),
            signed(a.signed_median),
        ]);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")?;
    let mut constants = new_table(&["constant", "chip file", "fitted"]);
    let mut row = |c: Constant, why: Option<&str>| {
        let fitted = value(c, c.get(&fit.fitted.constants));
        constants.add_row(vec![
            c.name(),
            value(c, c.get(&fit.start)),
            match why {
                Some(w) => format!("{fitted} ({w})"),
                None => fitted,
            },
        ]);
        // A tied constant (fp16's fraction) shows the value it took.
        if let Some(t) = c.tied(&fit.start) {
            let why = match fit.start.fp16_clock < 1.0 {
                true => format!("{}'s x fp16_clock", c.name()),
                false => format!("{}'s: one MMA rate", c.name()),
            };
            constants.add_row(vec![
                t.name(),
                value(t, t.get(&fit.start)),
                format!("{} ({why})", value(t, t.get(&fit.fitted.constants))),
            ]);
        }
    };
    for c in &fit.fitted.fitted {
        row(*c, None);
    }
    for c in &fit.fitted.kept {
        let why = match c.is_shared() {
            true => "every chip's fit: a serving engine's",
            false => "no case depends on it",
        };
        row(*c, Some(why));
    }
    align_right(&mut constants, 1);
    writeln!(out, "{constants}")?;
    write_engine_hosts(out, fit)
}

/// Each engine's host work, fitted to every chip's model steps and requests naming it (the
/// figures an engine file's host terms take, marked `# fitted` there).
fn write_engine_hosts(out: &mut dyn Write, fit: &ChipFit) -> io::Result<()> {
    if fit.engines.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "host work per engine, fitted to every chip's model steps and requests naming it \
         (-: no row depends on it, the engine's rows leaving the host nothing to wait for):"
    )?;
    let mut table = new_table(&["engine", "rows", "host_step", "host_sequence"]);
    let shown = |c: Constant, v: Option<f64>| v.map_or("-".into(), |v| value(c, v));
    for e in &fit.engines {
        table.add_row(vec![
            e.engine.clone(),
            e.rows.to_string(),
            shown(Constant::HostStep, e.host_step_s),
            shown(Constant::HostSequence, e.host_sequence_s),
        ]);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")
}

/// What the fit was pulled towards, in words.
fn prior(fit: &ChipFit) -> String {
    let towards = match (fit.prior, fit.chip.family()) {
        (Prior::Family, Some(f)) => format!("its family `{f}`'s fit"),
        _ => "every chip's fit".to_owned(),
    };
    format!(
        "pulled towards {towards} ({} cases) as hard as one source's rows",
        fit.prior_cases
    )
}

/// A constant as the fragment writes it: a fraction as it is, a time in seconds.
fn value(c: Constant, v: f64) -> String {
    // To 7 significant digits, as the fit keeps them (a file's `0.4 us` is 4.0000000000000003e-7 s).
    let v: f64 = format!("{v:.6e}").parse().unwrap_or(v);
    match c {
        Constant::DramLatency | Constant::HostStep | Constant::HostSequence => format!("{v:e} s"),
        _ => format!("{v}"),
    }
}

/// Cross-validation's report: each source held out, then the errors per group in sample and
/// held out.
pub fn write_cross_validation(out: &mut dyn Write, cv: &CrossValidation) -> io::Result<()> {
    writeln!(
        out,
        "leave-one-source-out: each source's rows predicted with the constants of their chips fitted to the other sources' rows,\n\
         each chip's fit pulled towards its family's, each family's towards every chip's (as `stepcost fit` fits)"
    )?;
    for f in &cv.folds {
        let rows = if f.rows == 1 { "row" } else { "rows" };
        let mut line = format!("  {} ({} {rows}):", f.source, f.rows);
        let mut parts = Vec::new();
        if !f.refit.is_empty() {
            parts.push(format!("refit {}", f.refit.join(", ")));
        }
        for (chip, family) in &f.family {
            parts.push(format!("refit {chip} with family {family}"));
        }
        if !f.unfitted.is_empty() {
            parts.push(format!(
                "{} from every chip's fit (no other source measured the family)",
                f.unfitted.join(", ")
            ));
        }
        let _ = write!(line, " {}", parts.join("; "));
        writeln!(out, "{line}")?;
    }
    let mut table = new_table(&[
        "group",
        "cases",
        "in-sample median",
        "p90",
        "signed",
        "cross-validated median",
        "p90",
        "signed",
    ]);
    for g in group_stats(cv) {
        let (i, h) = (&g.in_sample, &g.held_out);
        table.add_row(vec![
            i.group.clone(),
            i.cases.to_string(),
            percent(i.median_abs),
            percent(i.p90_abs),
            signed(i.signed_median),
            percent(h.median_abs),
            percent(h.p90_abs),
            signed(h.signed_median),
        ]);
    }
    align_right(&mut table, 1);
    writeln!(out, "{table}")?;
    writeln!(
        out,
        "|error| medians and 90th percentiles, signed medians of predicted / measured time - 1 (negative: too fast); families with {MIN_FAMILY_ROWS} rows or more"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_wrap_into_lines() {
        assert_eq!(wrapped(&["A-1", "B-22", "C-3"], 9), ["A-1, B-22", "C-3"]);
        assert!(wrapped(&[], 9).is_empty());
    }

    #[test]
    fn a_constant_shows_seven_digits() {
        assert_eq!(value(Constant::DramLatency, 0.4e-6), "4e-7 s");
        assert_eq!(value(Constant::Memory, 0.123456789), "0.1234568");
    }
}
