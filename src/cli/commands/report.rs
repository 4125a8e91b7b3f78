//! `report`: a self-contained report of one scenario on one or more chips (summary, every
//! kernel, what bounds the step, which lever moves it, the roofline picture), as Markdown
//! with its SVG beside it or as one HTML file.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::cli::flags::{ChipsScenario, Given};
use crate::cli::output::emit;
use crate::cli::scenario;
use crate::export::atomic::Target;
use crate::export::document::{self, Kind};
use crate::export::svg;
use crate::study::lever;

#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    scenario: ChipsScenario,
    /// The report: FILE.md (the roofline written beside it as FILE.svg) or FILE.html (the
    /// roofline inline); both files are written only when the whole report is made, and
    /// never to stdout
    #[arg(long, value_name = "FILE.md|FILE.html")]
    out: PathBuf,
    /// Also list the levers whose change would not fit the chip's memory
    #[arg(long)]
    include_unfit: bool,
}

/// `report`: the Markdown file with its SVG beside it, or one HTML file; both files of a
/// Markdown report are written only when the whole report is made. Not to stdout: a
/// Markdown report is two files, and its kind is told by the file's extension.
pub(crate) fn run(mut args: ReportArgs, given: &Given) -> Result<()> {
    if Target::from_out(Some(&args.out)) == Target::Stdout {
        anyhow::bail!(
            "--out -: a report is written to files (FILE.md with FILE.svg beside it, or FILE.html), not to stdout"
        );
    }
    let kind = match args.out.extension().and_then(|e| e.to_str()) {
        Some("md") => Kind::Markdown,
        Some("html" | "htm") => Kind::Html,
        _ => anyhow::bail!(
            "--out {}: the report is Markdown or HTML; name the file FILE.md or FILE.html",
            args.out.display()
        ),
    };
    let svg_path = args.out.with_extension("svg");
    let targets = match kind {
        Kind::Markdown => vec![
            Target::File(svg_path.clone()),
            Target::File(args.out.clone()),
        ],
        Kind::Html => vec![Target::File(args.out.clone())],
    };
    let settled = scenario::chips_scenario(&mut args.scenario, given, "report")?;
    let (priced, plan, saver) = scenario::price_on_chips(args.scenario, settled, targets)?;
    let svg = svg::roofline(&priced.pairs())?;
    let mut sections = Vec::new();
    for (chip, report) in &priced.reports {
        let mut levers = lever::levers(&priced.workload, chip, &priced.scenario, report)?;
        levers.retain(|l| l.fits || args.include_unfit);
        sections.push((report, levers));
    }
    let svg_name = svg_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match kind {
        Kind::Markdown => {
            let text = document::markdown(&sections, &svg_name);
            plan.commit(&[svg.as_bytes(), text.as_bytes()])?
        }
        Kind::Html => emit(plan, document::html(&sections, &svg).as_bytes())?,
    }
    saver.commit()
}
