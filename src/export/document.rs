//! A self-contained report of one scenario on one or more chips, as Markdown or HTML: the
//! summary side by side, what bounds the step and which lever moves it, every kernel, and the
//! roofline picture. Built once as blocks, then written in either markup.

use std::fmt::Write as _;

use crate::base::units::{human, three_significant};
use crate::engine::price::{Bound, StepReport};
use crate::engine::scenario::Mode;
use crate::study::lever::Lever;

/// The markup of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Markdown, the picture referenced as a file beside it.
    Markdown,
    /// One HTML file, the picture inline.
    Html,
}

enum Block {
    Heading(String),
    Subheading(String),
    Paragraph(String),
    Table {
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    Picture,
}

fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn ratio(x: f64) -> String {
    format!("x{x:.2}")
}

/// The blocks of a report on each chip's report with its levers.
fn blocks(sections: &[(&StepReport, Vec<Lever>)]) -> Vec<Block> {
    let mut out = Vec::new();
    let Some((first, _)) = sections.first() else {
        return out;
    };
    out.extend(scenario_blocks(sections, first));
    out.push(Block::Subheading("Summary".into()));
    out.push(summary_table(sections, first));
    out.push(Block::Subheading("What bounds the step".into()));
    for (report, levers) in sections {
        out.push(Block::Paragraph(bound_sentence(report)));
        if !levers.is_empty() {
            out.push(lever_table(levers));
        }
    }
    out.push(Block::Subheading("Roofline".into()));
    out.push(Block::Paragraph(
        "Each kernel at its arithmetic intensity and attained rate; marker area is its share \
         of the step time. Solid lines are the datasheet roofs, dashed ones (expected mode) \
         what real kernels achieve."
            .into(),
    ));
    out.push(Block::Picture);
    for (report, _) in sections {
        out.push(Block::Subheading(format!(
            "Kernels on {}",
            report.chip_name
        )));
        out.push(kernel_table(report));
    }
    out
}

/// The heading (workload and chips) and what was priced, from the first report.
fn scenario_blocks(sections: &[(&StepReport, Vec<Lever>)], first: &StepReport) -> [Block; 2] {
    let chips: Vec<&str> = sections.iter().map(|(r, _)| r.chip.as_str()).collect();
    let heading = Block::Heading(format!("{} on {}", first.workload_name, chips.join(", ")));
    let params: Vec<String> = first
        .params
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let d = first.dtypes;
    let scenario = Block::Paragraph(format!(
        "Scenario: {}; weight {}, activation {}, KV cache {}; fusion plan `{}`; {} mode{}.",
        params.join(" "),
        d.weight,
        d.activation,
        d.kv,
        first.fusion,
        first.mode,
        match first.mode {
            Mode::Expected => " (what real kernels achieve)",
            Mode::Roofline => " (the datasheet ceiling)",
        }
    ));
    [heading, scenario]
}

/// The summaries side by side, a column per chip; the largest batch that fits when the first
/// report has one.
fn summary_table(sections: &[(&StepReport, Vec<Lever>)], first: &StepReport) -> Block {
    let mut header = vec![String::new()];
    header.extend(sections.iter().map(|(r, _)| r.chip_name.clone()));
    let row = |name: &str, f: &dyn Fn(&StepReport) -> String| {
        let mut row = vec![name.to_owned()];
        row.extend(sections.iter().map(|(r, _)| f(r)));
        row
    };
    let optional =
        |x: Option<f64>, unit: &str| x.map_or("-".to_owned(), |v| human(v, unit).trim().to_owned());
    let mut rows = vec![
        row("step time", &|r| human(r.summary.step_time_s, "s")),
        row("on the datasheet roofline", &|r| {
            human(r.summary.roofline_step_time_s, "s")
        }),
        row("tokens per second", &|r| {
            optional(r.summary.tokens_per_s, "")
        }),
        row("ms per output token", &|r| {
            r.summary.ms_per_token.map_or("-".into(), three_significant)
        }),
        row("chips per replica", &|r| r.summary.chips.to_string()),
        row("USD per million tokens", &|r| {
            r.summary
                .usd_per_million_tokens
                .map_or("-".into(), three_significant)
        }),
        row("MFU", &|r| percent(r.summary.mfu)),
        row("MBU", &|r| percent(r.summary.mbu)),
        row("FLOPs", &|r| human(r.summary.flops, "FLOP")),
        row("bytes moved", &|r| human(r.summary.bytes, "B")),
        row("intensity (FLOP/B)", &|r| {
            three_significant(r.summary.intensity_flop_per_byte)
        }),
        row("kernels per step", &|r| r.summary.kernels.to_string()),
        row("memory", &|r| {
            format!(
                "{} of {}{}",
                human(r.summary.footprint_bytes, "B"),
                human(r.capacity_bytes, "B"),
                if r.summary.fits {
                    ""
                } else {
                    " (DOES NOT FIT)"
                }
            )
        }),
    ];
    if first.summary.max_batch.is_some() {
        rows.push(row("largest batch that fits", &|r| {
            r.summary.max_batch.map_or("-".into(), |b| b.to_string())
        }));
    }
    Block::Table { header, rows }
}

/// What each lever does to throughput, latency and fit.
fn lever_table(levers: &[Lever]) -> Block {
    Block::Table {
        header: ["lever", "throughput", "ms per token", "fits"]
            .map(String::from)
            .to_vec(),
        rows: levers
            .iter()
            .map(|l| {
                vec![
                    l.change.clone(),
                    ratio(l.throughput_ratio),
                    l.ms_per_token_ratio.map_or("-".into(), ratio),
                    if l.fits { "yes" } else { "no" }.into(),
                ]
            })
            .collect(),
    }
}

/// Every kernel of a report with its share of the step.
fn kernel_table(report: &StepReport) -> Block {
    let header = [
        "kernel", "block", "kind", "count", "FLOPs", "bytes", "FLOP/B", "dtype", "bound", "time",
        "share",
    ]
    .map(String::from)
    .to_vec();
    let rows = report
        .prices
        .iter()
        .map(|p| {
            let mut row = super::table::kernel_cells(p);
            row.push(percent(p.share));
            row
        })
        .collect();
    Block::Table { header, rows }
}

/// Where the step's time goes by bound, and its largest kernel.
fn bound_sentence(report: &StepReport) -> String {
    let mut shares = [
        (Bound::Memory, 0.0),
        (Bound::Compute, 0.0),
        (Bound::Launch, 0.0),
        (Bound::Interconnect, 0.0),
    ];
    for p in &report.prices {
        if let Some(entry) = shares.iter_mut().find(|(b, _)| *b == p.cost.bound) {
            entry.1 += p.share;
        }
    }
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    let parts: Vec<String> = shares
        .iter()
        .filter(|(_, s)| *s > 0.0)
        .map(|(b, s)| format!("{} {}-bound", percent(*s), b.name()))
        .collect();
    let largest = report
        .prices
        .iter()
        .max_by(|a, b| a.share.total_cmp(&b.share))
        .map(|p| {
            format!(
                " The largest kernel is `{}` ({} of the step, {}-bound).",
                p.name,
                percent(p.share),
                p.cost.bound.name()
            )
        })
        .unwrap_or_default();
    let s = &report.summary;
    let memory = if s.fits {
        String::new()
    } else {
        format!(
            " It does not fit: {} of weights, KV cache and activations against {} of memory; \
             more chips (tensor or pipeline parallel) or narrower data types are needed.",
            human(s.footprint_bytes, "B"),
            human(report.capacity_bytes, "B")
        )
    };
    format!(
        "On {}, the step's time is {}.{largest}{memory}",
        report.chip_name,
        parts.join(", ")
    )
}

/// The report as Markdown; the picture is referenced as `svg_name`, a file beside it.
pub fn markdown(sections: &[(&StepReport, Vec<Lever>)], svg_name: &str) -> String {
    let cell = |c: &str| c.replace('|', "\\|");
    let mut out = String::new();
    for block in blocks(sections) {
        match block {
            Block::Heading(t) => writeln!(out, "# {t}\n"),
            Block::Subheading(t) => writeln!(out, "## {t}\n"),
            Block::Paragraph(t) => writeln!(out, "{t}\n"),
            Block::Table { header, rows } => {
                let line = |cells: &[String]| {
                    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
                    format!("| {} |", cells.join(" | "))
                };
                let rule: Vec<&str> = (0..header.len())
                    .map(|i| if i == 0 { "---" } else { "---:" })
                    .collect();
                let mut text = format!("{}\n| {} |\n", line(&header), rule.join(" | "));
                for row in &rows {
                    text.push_str(&line(row));
                    text.push('\n');
                }
                writeln!(out, "{text}")
            }
            Block::Picture => writeln!(out, "![roofline]({svg_name})\n"),
        }
        .expect("writing to a String cannot fail");
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The report as one HTML file with the picture (SVG text) inline.
pub fn html(sections: &[(&StepReport, Vec<Lever>)], svg: &str) -> String {
    let blocks = blocks(sections);
    let title = match blocks.first() {
        Some(Block::Heading(t)) => escape(t),
        _ => "stepcost report".into(),
    };
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
         <style>\nbody {{ font-family: sans-serif; margin: 2em auto; max-width: 1150px; padding: 0 1em; }}\n\
         table {{ border-collapse: collapse; margin-bottom: 1.5em; }}\n\
         th, td {{ border-bottom: 1px solid #ddd; padding: 0.25em 0.7em; text-align: right; }}\n\
         th:first-child, td:first-child {{ text-align: left; }}\n\
         svg {{ max-width: 100%; height: auto; }}\n</style>\n</head>\n<body>\n"
    );
    for block in blocks {
        match block {
            Block::Heading(t) => writeln!(out, "<h1>{}</h1>", escape(&t)),
            Block::Subheading(t) => writeln!(out, "<h2>{}</h2>", escape(&t)),
            Block::Paragraph(t) => writeln!(out, "<p>{}</p>", escape(&t)),
            Block::Table { header, rows } => {
                let cells = |tag: &str, cells: &[String]| {
                    cells
                        .iter()
                        .map(|c| format!("<{tag}>{}</{tag}>", escape(c)))
                        .collect::<String>()
                };
                let mut text = format!("<table>\n<tr>{}</tr>\n", cells("th", &header));
                for row in &rows {
                    text.push_str(&format!("<tr>{}</tr>\n", cells("td", row)));
                }
                writeln!(out, "{text}</table>")
            }
            Block::Picture => writeln!(out, "<figure>\n{svg}\n</figure>"),
        }
        .expect("writing to a String cannot fail");
    }
    out.push_str("</body>\n</html>\n");
    out
}
