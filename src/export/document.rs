//! A self-contained report of one scenario on one or more chips, as Markdown or HTML: the
//! summary side by side, what bounds the step and which lever moves it, every kernel, and the
//! roofline picture. Built once as blocks, then written in either markup.
//!
//! A block's text is made of spans that say whose words they are: stepcost's own, written as
//! they are, or a name that came from a file or the command line (a chip's, a workload's, a
//! kernel's, a param's), which the `escape` module turns into inert text in each markup, so a
//! name can never end a table cell, a line or a heading, nor open a tag or a link.

use std::fmt::Write as _;

use crate::base::units::{human, percent, three_significant};
use crate::core::scenario::Mode;
use crate::core::timing::{Bound, StepReport};
use crate::study::lever::Lever;

use super::escape::{html_name, link_target, markdown_code, markdown_name};
use super::numbers::{banded_human_rate, banded_time};
use super::rows::band_of;

/// The markup of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Markdown, the picture referenced as a file beside it.
    Markdown,
    /// One HTML file, the picture inline.
    Html,
}

/// A piece of a block's text.
enum Span {
    /// stepcost's own words, written as they are.
    Own(String),
    /// A name from a file or the command line: inert text in either markup.
    Name(String),
    /// A name shown as code.
    Code(String),
}

/// A block's text: its spans in order.
type Text = Vec<Span>;

fn own(text: impl Into<String>) -> Text {
    vec![Span::Own(text.into())]
}

fn name(text: impl Into<String>) -> Text {
    vec![Span::Name(text.into())]
}

enum Block {
    Heading(Text),
    Subheading(Text),
    Paragraph(Text),
    Table {
        header: Vec<Text>,
        rows: Vec<Vec<Text>>,
    },
    Picture,
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
    out.push(Block::Subheading(own("Summary")));
    out.push(summary_table(sections, first));
    out.push(Block::Subheading(own("What bounds the step")));
    for (report, levers) in sections {
        out.push(Block::Paragraph(bound_sentence(report)));
        if !levers.is_empty() {
            out.push(lever_table(levers));
        }
    }
    out.push(Block::Subheading(own("Roofline")));
    out.push(Block::Paragraph(own(
        "Each kernel at its arithmetic intensity and attained rate; marker area is its share \
         of the step time. Solid lines are the datasheet roofs, dashed ones (expected mode) \
         what real kernels achieve.",
    )));
    out.push(Block::Picture);
    for (report, _) in sections {
        out.push(Block::Subheading(vec![
            Span::Own("Kernels on ".into()),
            Span::Name(report.chip_name.clone()),
        ]));
        out.push(kernel_table(report));
    }
    out
}

/// The heading (workload and chips) and what was priced, from the first report.
fn scenario_blocks(sections: &[(&StepReport, Vec<Lever>)], first: &StepReport) -> [Block; 2] {
    let mut heading = vec![
        Span::Name(first.workload_name.clone()),
        Span::Own(" on ".into()),
    ];
    for (i, (report, _)) in sections.iter().enumerate() {
        if i > 0 {
            heading.push(Span::Own(", ".into()));
        }
        heading.push(Span::Name(report.chip.clone()));
    }
    let mut scenario = vec![Span::Own("Scenario: ".into())];
    for (i, (n, v)) in first.params.iter().enumerate() {
        if i > 0 {
            scenario.push(Span::Own(" ".into()));
        }
        scenario.push(Span::Name(format!("{n}={v}")));
    }
    scenario.push(Span::Own(format!("; types {}; fusion plan ", first.dtypes)));
    scenario.push(Span::Code(first.fusion.clone()));
    scenario.push(Span::Own(format!(
        "; {} mode{}; memory utilisation {}; {}.",
        first.mode,
        match first.mode {
            Mode::Expected => " (what real kernels achieve)",
            Mode::Roofline => " (the datasheet ceiling)",
        },
        three_significant(first.summary.usable_bytes / first.capacity_bytes),
        super::costs::cost_line(
            &first.costing.model,
            sections
                .iter()
                .map(|(r, _)| r.costing.price_basis.as_deref())
        )
    )));
    [Block::Heading(heading), Block::Paragraph(scenario)]
}

/// The summaries side by side, a column per chip; the largest batch that fits when the first
/// report has one.
fn summary_table(sections: &[(&StepReport, Vec<Lever>)], first: &StepReport) -> Block {
    let mut header = vec![own("")];
    header.extend(sections.iter().map(|(r, _)| name(r.chip_name.clone())));
    let row = |label: &str, f: &dyn Fn(&StepReport) -> String| {
        let mut row = vec![own(label)];
        row.extend(sections.iter().map(|(r, _)| own(f(r))));
        row
    };
    let mut rows = vec![
        row("step time", &|r| {
            banded_time(r.summary.step_time_s, band_of(r))
        }),
        row("on the datasheet roofline", &|r| {
            human(r.summary.roofline_step_time_s, "s")
        }),
        row("tokens per second", &|r| {
            (r.summary.tokens_per_s).map_or("-".into(), |t| banded_human_rate(t, band_of(r)))
        }),
        row("ms per output token", &|r| {
            r.summary.ms_per_token.map_or("-".into(), three_significant)
        }),
        row("chips per replica", &|r| r.summary.chips.to_string()),
        row("USD per million tokens", &|r| {
            r.summary
                .cost
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
                "{} of {} usable{}",
                human(r.summary.footprint_bytes, "B"),
                human(r.summary.usable_bytes, "B"),
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
            .into_iter()
            .map(own)
            .collect(),
        rows: levers
            .iter()
            .map(|l| {
                vec![
                    change(&l.change),
                    own(ratio(l.throughput_ratio)),
                    own(l.ms_per_token_ratio.map_or("-".into(), ratio)),
                    own(if l.fits { "yes" } else { "no" }),
                ]
            })
            .collect(),
    }
}

/// A lever's change, `what from -> to`: its sides hold names (a param's, a fusion plan's).
fn change(text: &str) -> Text {
    match text.split_once(" -> ") {
        Some((from, to)) => vec![
            Span::Name(from.into()),
            Span::Own(" -> ".into()),
            Span::Name(to.into()),
        ],
        None => name(text),
    }
}

/// Every kernel of a report with its share of the step.
fn kernel_table(report: &StepReport) -> Block {
    let header = [
        "kernel", "block", "kind", "count", "FLOPs", "bytes", "FLOP/B", "dtype", "bound", "time",
        "share",
    ]
    .into_iter()
    .map(own)
    .collect();
    // Every cell as a name: the kernel's and block's are, and numbers escape to themselves.
    let rows = report
        .prices
        .iter()
        .map(|p| {
            let mut row: Vec<Text> = super::step::kernel_cells(p).into_iter().map(name).collect();
            row.push(own(percent(p.share)));
            row
        })
        .collect();
    Block::Table { header, rows }
}

/// Where the step's time goes by bound, and its largest kernel.
fn bound_sentence(report: &StepReport) -> Text {
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
        .max_by(|a, b| a.share.total_cmp(&b.share));
    let s = &report.summary;
    let memory = if s.fits {
        String::new()
    } else {
        format!(
            " It does not fit: {} of weights, KV cache, activation workspace and runtime \
             reserve against the {} a serving engine uses; more chips (tensor or pipeline \
             parallel) or narrower data types are needed.",
            human(s.footprint_bytes, "B"),
            human(s.usable_bytes, "B")
        )
    };
    let mut text = vec![
        Span::Own("On ".into()),
        Span::Name(report.chip_name.clone()),
        Span::Own(format!(", the step's time is {}.", parts.join(", "))),
    ];
    if let Some(p) = largest {
        text.push(Span::Own(" The largest kernel is ".into()));
        text.push(Span::Code(p.name.clone()));
        text.push(Span::Own(format!(
            " ({} of the step, {}-bound).",
            percent(p.share),
            p.cost.bound.name()
        )));
    }
    text.push(Span::Own(memory));
    text
}

/// The report as Markdown; the picture is referenced as `svg_name`, a file beside it.
pub fn markdown(sections: &[(&StepReport, Vec<Lever>)], svg_name: &str) -> String {
    let mut out = String::new();
    for block in blocks(sections) {
        match block {
            Block::Heading(t) => writeln!(out, "# {}\n", markdown_text(&t, false)),
            Block::Subheading(t) => writeln!(out, "## {}\n", markdown_text(&t, false)),
            Block::Paragraph(t) => writeln!(out, "{}\n", markdown_text(&t, false)),
            Block::Table { header, rows } => {
                let line = |cells: &[Text]| {
                    let cells: Vec<String> = cells.iter().map(|c| markdown_text(c, true)).collect();
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
            Block::Picture => writeln!(out, "![roofline]({})\n", link_target(svg_name)),
        }
        .expect("writing to a String cannot fail");
    }
    out
}

/// A block's text as Markdown; in a table, `|` ends a cell, so stepcost's own text has it
/// escaped too.
fn markdown_text(text: &Text, in_table: bool) -> String {
    let mut out = String::new();
    for span in text {
        match span {
            Span::Own(t) if in_table => out.push_str(&t.replace('|', "\\|")),
            Span::Own(t) => out.push_str(t),
            Span::Name(t) => out.push_str(&markdown_name(t)),
            Span::Code(t) if in_table => out.push_str(&markdown_code(t).replace('|', "\\|")),
            Span::Code(t) => out.push_str(&markdown_code(t)),
        }
    }
    out
}

/// stepcost's own text for HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A block's text as HTML (code between backticks, as in the Markdown source).
fn html_text(text: &Text) -> String {
    let mut out = String::new();
    for span in text {
        match span {
            Span::Own(t) => out.push_str(&escape(t)),
            Span::Name(t) => out.push_str(&html_name(t)),
            Span::Code(t) => {
                out.push('`');
                out.push_str(&html_name(t));
                out.push('`');
            }
        }
    }
    out
}

/// The report as one HTML file with the picture (SVG text) inline.
pub fn html(sections: &[(&StepReport, Vec<Lever>)], svg: &str) -> String {
    let blocks = blocks(sections);
    let title = match blocks.first() {
        Some(Block::Heading(t)) => html_text(t),
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
            Block::Heading(t) => writeln!(out, "<h1>{}</h1>", html_text(&t)),
            Block::Subheading(t) => writeln!(out, "<h2>{}</h2>", html_text(&t)),
            Block::Paragraph(t) => writeln!(out, "<p>{}</p>", html_text(&t)),
            Block::Table { header, rows } => {
                let cells = |tag: &str, cells: &[Text]| {
                    cells
                        .iter()
                        .map(|c| format!("<{tag}>{}</{tag}>", html_text(c)))
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
