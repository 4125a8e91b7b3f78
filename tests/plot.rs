//! Pictures and reports: the SVG read back as XML, checked against hand-computed geometry.

use crate::common::stepcost;

use stepcost::internals::lever::levers;
use stepcost::{price, Mode, Scenario, ScenarioSpec};

/// A text element of the picture: its content, anchor point, font size and colour.
struct Label {
    text: String,
    x: f64,
    y: f64,
    size: f64,
    fill: String,
}

/// What the tests read from an SVG.
struct Picture {
    labels: Vec<Label>,
    /// `(fill, opacity)` of every circle.
    circles: Vec<(String, String)>,
    lines: Vec<Line>,
    polygons: Vec<Polygon>,
}

/// A filled polygon: a marker past the palette's first round.
struct Polygon {
    fill: String,
    points: Vec<(f64, f64)>,
}

/// A polyline: its stroke colour, stroke width and points.
struct Line {
    stroke: String,
    width: String,
    points: Vec<(f64, f64)>,
}

fn read(svg: &str) -> Picture {
    let doc = roxmltree::Document::parse(svg).expect("the picture is well-formed XML");
    let attr = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap_or("").to_owned();
    let number = |n: &roxmltree::Node, a: &str| attr(n, a).parse::<f64>().unwrap();
    let points = |text: &str| -> Vec<(f64, f64)> {
        text.split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    };
    let mut picture = Picture {
        labels: Vec::new(),
        circles: Vec::new(),
        lines: Vec::new(),
        polygons: Vec::new(),
    };
    for node in doc.descendants() {
        match node.tag_name().name() {
            "text" => picture.labels.push(Label {
                text: node.text().unwrap_or("").trim().to_owned(),
                x: number(&node, "x"),
                y: number(&node, "y"),
                size: number(&node, "font-size"),
                fill: attr(&node, "fill"),
            }),
            "polygon" => picture.polygons.push(Polygon {
                fill: attr(&node, "fill"),
                points: points(&attr(&node, "points")),
            }),
            "circle" => picture
                .circles
                .push((attr(&node, "fill"), attr(&node, "opacity"))),
            "polyline" => picture.lines.push(Line {
                stroke: attr(&node, "stroke"),
                width: attr(&node, "stroke-width"),
                points: points(&attr(&node, "points")),
            }),
            _ => {}
        }
    }
    picture
}

impl Picture {
    fn has_text(&self, text: &str) -> bool {
        self.labels.iter().any(|l| l.text == text)
    }

    /// Kernel markers: the only circles filled at the marker opacity.
    fn markers(&self) -> usize {
        let opacity = stepcost::internals::svg::MARKER_OPACITY.to_string();
        self.circles
            .iter()
            .filter(|(fill, o)| fill != "none" && *o == opacity)
            .count()
    }

    /// Pixel position of `value` on a log axis, from two of its tick labels: ticks on the x
    /// axis share a `y`, ticks on the y axis share an `x`.
    fn log_axis(&self, ticks: [(&str, f64); 2], horizontal: bool) -> impl Fn(f64) -> f64 {
        let at = |text: &str| {
            let found = self.labels.iter().filter(|l| l.text == text);
            // the x axis's tick sits lowest, the y axis's leftmost
            let l = if horizontal {
                found.max_by(|a, b| a.y.total_cmp(&b.y))
            } else {
                found.min_by(|a, b| a.x.total_cmp(&b.x))
            }
            .unwrap_or_else(|| panic!("no tick `{text}`"));
            if horizontal {
                l.x
            } else {
                l.y
            }
        };
        let (p0, p1) = (at(ticks[0].0), at(ticks[1].0));
        let (v0, v1) = (ticks[0].1.log10(), ticks[1].1.log10());
        move |v: f64| p0 + (v.log10() - v0) * (p1 - p0) / (v1 - v0)
    }
}

fn workload_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("three.yaml");
    std::fs::write(
        &path,
        "name: three kernels\n\
         params: {m: 4096, n: 4096, k: 4096}\n\
         tensors:\n  x: {role: activation, shape: [m, k]}\n\
         blocks:\n  - name: b\n    ops:\n\
         \x20     - gemm: {name: up, of: [x], m: m, n: n, k: k}\n\
         \x20     - elementwise: {name: scale, of: [x], flops_per_element: 1}\n\
         \x20     - gemv: {name: probe, of: [x], m: 1, n: n, k: k}\n",
    )
    .unwrap();
    path
}

fn plot(args: &[&str]) -> Picture {
    let out = stepcost().args(args).assert().success();
    read(&String::from_utf8(out.get_output().stdout.clone()).unwrap())
}

#[test]
fn roofline_has_one_marker_per_kernel_per_chip() {
    let dir = tempfile::tempdir().unwrap();
    let file = workload_file(dir.path());
    let file = file.to_str().unwrap();
    // three ops, no fusion: three kernels
    let one = plot(&["plot", "roofline", file, "--chip", "h100-sxm"]);
    assert_eq!(one.markers(), 3);
    let two = plot(&["plot", "roofline", file, "--chip", "h100-sxm,h200"]);
    assert_eq!(two.markers(), 6);
}

#[test]
fn roofs_meet_at_the_hand_computed_ridge() {
    let picture = plot(&[
        "plot", "roofline", "gemm", "--chip", "h100-sxm", "--mode", "roofline",
    ]);
    // H100 SXM: 989 TFLOP/s bf16 over 3.35 TB/s
    let ridge = 989e12 / 3.35e12;
    assert!(picture.has_text(&format!("bf16 ridge {ridge:.0}")));
    let x = picture.log_axis([("10", 10.0), ("1k", 1e3)], true);
    let y = picture.log_axis([("10", 10.0), ("1k", 1e3)], false);
    let (ridge_x, roof_y) = (x(ridge), y(989.0));
    let blue = "#1F77B4";
    // the chip's two-point solid lines, told apart by how they run (y grows downwards)
    let line = |runs: fn(f64, f64) -> bool, what: &str| {
        picture
            .lines
            .iter()
            .find(|l| {
                l.stroke == blue
                    && l.width == "2"
                    && l.points.len() == 2
                    && runs(l.points[0].1, l.points[1].1)
            })
            .unwrap_or_else(|| panic!("no {what}"))
    };
    let roof = line(|y0, y1| y0 == y1, "horizontal compute roof");
    let slope = line(|y0, y1| y0 > y1, "rising memory slope");
    // pixel coordinates are whole numbers: within a pixel and a half of the exact spot
    for (px, py) in [roof.points[0], slope.points[1]] {
        assert!(
            (px - ridge_x).abs() < 1.5,
            "ridge at x={px}, expected {ridge_x}"
        );
        assert!(
            (py - roof_y).abs() < 1.5,
            "roof at y={py}, expected {roof_y}"
        );
    }
    // the slope is the bandwidth: at 10 FLOP/B it is at 33.5 TFLOP/s (3.35 TB/s x 10)
    let (x0, y0) = slope.points[0];
    let (x1, y1) = slope.points[1];
    let at_10 = y0 + (x(10.0) - x0) * (y1 - y0) / (x1 - x0);
    assert!((at_10 - y(33.5)).abs() < 1.5);
}

#[test]
fn roofline_has_axis_titles_and_a_legend_entry_per_chip() {
    let picture = plot(&[
        "plot",
        "roofline",
        "llama-3.1-70b",
        "--chip",
        "h100-sxm,h200",
        "--set",
        "batch=32",
    ]);
    assert!(picture.has_text("arithmetic intensity (FLOP/byte)"));
    assert!(picture.has_text("attainable (TFLOP/s)"));
    // datasheet bandwidths: 3.35 TB/s and 4.8 TB/s
    assert!(picture.has_text("h100-sxm (3.35 TB/s)"));
    assert!(picture.has_text("h200 (4.80 TB/s)"));
    // expected mode draws the achievable roofs, and says so
    assert!(picture.has_text("achievable roofs (dashed)"));
}

#[test]
fn sweep_chart_draws_a_line_per_series() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let mut text = String::from("chip,batch,tokens_per_s,error\n");
    for (chip, rate) in [("a", 10.0), ("b", 20.0), ("c", 30.0)] {
        for batch in [1.0, 2.0, 4.0] {
            text.push_str(&format!("{chip},{batch},{},\n", rate * batch));
        }
    }
    text.push_str("d,8,,out of memory\n"); // an error row: no number, no line
    std::fs::write(&csv, text).unwrap();
    let csv = csv.to_str().unwrap();
    let picture = plot(&[
        "plot",
        "sweep",
        csv,
        "--x",
        "batch",
        "--y",
        "tokens_per_s",
        "--series",
        "chip",
        "--log-x",
    ]);
    assert!(picture.has_text("batch"));
    assert!(picture.has_text("tokens per second"));
    for chip in ["a", "b", "c"] {
        assert!(picture.has_text(chip), "legend entry `{chip}`");
    }
    assert!(!picture.has_text("d"));
    let curves = picture
        .lines
        .iter()
        .filter(|l| l.width == "2" && l.points.len() == 3)
        .count();
    assert_eq!(curves, 3);

    stepcost()
        .args([
            "plot",
            "sweep",
            csv,
            "--x",
            "batch",
            "--y",
            "tokens_per_sec",
        ])
        .assert()
        .failure()
        .stderr(predicates::str::contains("no column `tokens_per_sec`"))
        .stderr(predicates::str::contains("tokens_per_s"));
}

#[test]
fn sweep_labels_show_where_the_column_changes_along_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    // rows out of x order: sorted by batch, line a reads tp=1 tp=1 tp=2 tp=2 tp=1 and
    // line b reads (empty) tp=8 tp=8 `x<&y`
    let rows = "chip,batch,rate,layout\n\
                a,4,4,tp=2\na,1,1,tp=1\na,2,2,tp=1\na,8,8,tp=2\na,16,16,tp=1\n\
                b,1,3,\nb,2,6,tp=8\nb,4,12,tp=8\nb,8,24,x<&y\n";
    std::fs::write(&csv, rows).unwrap();
    let csv = csv.to_str().unwrap();
    let base = ["plot", "sweep", csv, "--x", "batch", "--y", "rate"];
    let args = |extra: &[&'static str]| [&base[..], &["--series", "chip"], extra].concat();
    let picture = plot(&args(&["--label", "layout"]));
    let count = |text: &str| picture.labels.iter().filter(|l| l.text == text).count();
    // a: first point and two changes; b: the empty first label draws nothing
    assert_eq!(count("tp=1"), 2);
    assert_eq!(count("tp=2"), 1);
    assert_eq!(count("tp=8"), 1);
    assert_eq!(
        count("x<&y"),
        1,
        "the label is escaped, and read back whole"
    );
    // without --label: the same picture less those five texts
    let plain = plot(&args(&[]));
    assert_eq!(picture.labels.len(), plain.labels.len() + 5);
    assert!(!plain.labels.iter().any(|l| l.text.starts_with("tp=")));

    stepcost()
        .args(args(&["--label", "layuot"]))
        .assert()
        .failure()
        .stderr(predicates::str::contains("no column `layuot`"))
        .stderr(predicates::str::contains(
            "its columns: chip, batch, rate, layout",
        ));
}

#[test]
fn levers_are_priced_against_the_scenario() {
    let w = crate::common::workload("gemv");
    let chip = crate::common::chip("h100-sxm");
    let spec = ScenarioSpec {
        mode: Mode::Roofline,
        ..ScenarioSpec::default()
    };
    let scenario = Scenario::resolve(&w, &spec).unwrap();
    let base = price(&w, &chip, &scenario).unwrap();
    let found = levers(&w, &chip, &scenario, &base).unwrap();
    let ratio = |change: &str| {
        found
            .iter()
            .find(|l| l.change == change)
            .unwrap_or_else(|| panic!("no lever `{change}` in {found:?}"))
            .throughput_ratio
    };
    // memory-bound gemv 1 x 8192 x 8192: bytes = weights 2*8192^2 + input 2*8192*b + output 2*8192*b
    let bytes = |b: f64, weight: f64| weight * 8192.0 * 8192.0 + 2.0 * 2.0 * 8192.0 * b;
    let doubled = 2.0 * bytes(1.0, 2.0) / bytes(2.0, 2.0);
    assert!((ratio("batch 1 -> 2") - doubled).abs() < 1e-9);
    let fp8 = bytes(1.0, 2.0) / bytes(1.0, 1.0);
    assert!((ratio("weight bf16 -> fp8") - fp8).abs() < 1e-9);
    // fastest first
    assert!(found
        .windows(2)
        .all(|p| p[0].throughput_ratio >= p[1].throughput_ratio));
}

#[test]
fn report_is_written_as_html_or_markdown_beside_its_picture() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    stepcost()
        .args([
            "report",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm,h200",
            "--set",
            "batch=32",
            "--include-unfit",
            "--out",
        ])
        .arg(&html)
        .assert()
        .success();
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<svg"), "picture inline");
    assert!(text.contains("What bounds the step"));
    assert!(text.contains("batch 32 -&gt; 64"));
    assert!(text.contains("Kernels on NVIDIA H200"));

    let md = dir.path().join("r.md");
    stepcost()
        .args(["report", "gemm", "--chip", "h100-sxm", "--out"])
        .arg(&md)
        .assert()
        .success();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("![roofline](r.svg)"));
    assert!(text.contains("| gemm |"));
    read(&std::fs::read_to_string(dir.path().join("r.svg")).unwrap());

    stepcost()
        .args(["report", "gemm", "--chip", "h100-sxm", "--out"])
        .arg(dir.path().join("r.pdf"))
        .assert()
        .failure()
        .stderr(predicates::str::contains("FILE.md or FILE.html"));
}

/// The book's pictures are what the commands beside them produce today (the roofline and the
/// sweep in docs/book/src/pictures-and-reports.md, the frontier in docs/book/src/serving.md).
#[test]
fn book_pictures_are_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let svg = |args: &[&str]| {
        let out = stepcost().args(args).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let committed = |name: &str| std::fs::read_to_string(root.join("docs").join(name)).unwrap();
    let roofline = svg(&[
        "plot",
        "roofline",
        "llama-3.1-70b",
        "--chip",
        "h200,b200",
        "--set",
        "batch=32",
        "--dtype",
        "weight=fp8",
    ]);
    assert!(
        roofline == committed("roofline-llama-3.1-70b-decode.svg"),
        "docs/roofline-llama-3.1-70b-decode.svg is stale: rerun the command in \
         docs/book/src/pictures-and-reports.md"
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sweep.csv");
    stepcost()
        .args([
            "sweep",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm,h200,mi300x",
            "--set",
            "batch=1..=256:x2",
        ])
        .args(["--dtype", "weight=fp8", "--quiet", "--out"])
        .arg(&csv)
        .assert()
        .success();
    let curves = svg(&[
        "plot",
        "sweep",
        csv.to_str().unwrap(),
        "--x",
        "batch",
        "--y",
        "tokens_per_s",
        "--series",
        "chip",
        "--log-x",
        "--log-y",
    ]);
    assert!(
        curves == committed("tokens-per-s-vs-batch.svg"),
        "docs/tokens-per-s-vs-batch.svg is stale: rerun the commands in \
         docs/book/src/pictures-and-reports.md"
    );
    let frontier = dir.path().join("frontier.svg");
    stepcost()
        .args([
            "serving",
            "llama-3.1-70b",
            "--chip",
            "h100-sxm,h200,b200,mi300x",
        ])
        .args(["--dtype", "weight=fp8", "--frontier"])
        .args(["--concurrency", "1,2,4,8,16,32,64,128,256,512", "--plot"])
        .arg(&frontier)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(&frontier).unwrap() == committed("frontier-llama-3.1-70b.svg"),
        "docs/frontier-llama-3.1-70b.svg is stale: rerun the command in docs/book/src/serving.md"
    );
}

/// Ten series: past the palette's six colours, each line takes a marker and a dash of its
/// own, so that no two of the ten look alike. Read from the legend, where each swatch shows
/// its line's stroke (one, two or four segments) and, past the first round, its marker.
#[test]
fn ten_series_differ_in_colour_marker_or_dash() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let mut text = String::from("chip,batch,rate\n");
    for (i, chip) in "abcdefghij".chars().enumerate() {
        for batch in [1, 2, 4] {
            text.push_str(&format!("{chip},{batch},{}\n", (i + 1) * batch));
        }
    }
    std::fs::write(&csv, text).unwrap();
    let csv = csv.to_str().unwrap();
    let picture = plot(&[
        "plot", "sweep", csv, "--x", "batch", "--y", "rate", "--series", "chip",
    ]);
    let keys: Vec<&Label> = (picture.labels.iter())
        .filter(|l| l.text.len() == 1 && "abcdefghij".contains(&l.text))
        .collect();
    assert_eq!(keys.len(), 10, "a legend entry per series");
    // A swatch lies left of its entry's text, centred a little under the text's top.
    let in_row = |key: &Label, x: f64, y: f64| {
        x < key.x && x > key.x - 40.0 && (y - (key.y + 5.0)).abs() <= 5.0
    };
    let mut looks = Vec::new();
    for key in &keys {
        let strokes: Vec<&Line> = (picture.lines.iter())
            .filter(|l| l.points.iter().all(|&(x, y)| in_row(key, x, y)))
            .collect();
        let flat: Vec<&&Line> = (strokes.iter())
            .filter(|l| l.points.windows(2).all(|w| w[0].1 == w[1].1))
            .collect();
        let colour = flat.first().map(|l| l.stroke.clone()).unwrap();
        let marker = match (picture.polygons.iter())
            .find(|p| p.points.iter().all(|&(x, y)| in_row(key, x, y)))
        {
            Some(p) => format!("polygon of {}", p.points.len()),
            None if strokes.len() > flat.len() => "cross".to_owned(),
            None => "circle".to_owned(),
        };
        looks.push((colour, marker, flat.len()));
    }
    for (i, a) in looks.iter().enumerate() {
        for b in &looks[i + 1..] {
            assert_ne!(a, b, "two series drawn alike");
        }
    }
    // The palette's first round as before: solid, a circle on each point.
    assert!(looks[..6]
        .iter()
        .all(|(_, m, segments)| m == "circle" && *segments == 1));
    // Each marker is on its line's points too, in its colour: the 4 series past the first
    // round have a square on each of their 3 points (and one in the legend), the seventh
    // in the first series' colour.
    let squares = (picture.polygons.iter()).filter(|p| p.points.len() == 4);
    assert_eq!(squares.clone().count(), 4 * 3 + 4);
    let seventh = squares.filter(|p| p.fill == looks[6].0).count();
    assert_eq!(seventh, 3 + 1);
}

/// The frontier's layout labels are placed where no two overlap, even boxed at a whole font
/// size per character. Read from the book's frontier (docs/frontier-llama-3.1-70b.svg), which
/// `book_pictures_are_current` holds to what `serving --plot` draws today.
#[test]
fn frontier_labels_do_not_overlap() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let svg = std::fs::read_to_string(root.join("docs/frontier-llama-3.1-70b.svg")).unwrap();
    let picture = read(&svg);
    let layout = |t: &str| t == "1 chip" || t.starts_with("tp=") || t.starts_with("pp=");
    let boxes: Vec<(f64, f64, f64, f64)> = (picture.labels.iter())
        .filter(|l| layout(&l.text) && l.fill != "#000000")
        .map(|l| {
            let size = l.size.max(11.0);
            (l.x, l.y, size * l.text.chars().count() as f64, size)
        })
        .collect();
    assert!(
        boxes.len() >= 8,
        "the layouts are labelled: {} labels",
        boxes.len()
    );
    let apart = |a: &(f64, f64, f64, f64), b: &(f64, f64, f64, f64)| {
        a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1
    };
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(apart(a, b), "labels at {a:?} and {b:?} overlap");
        }
    }
}
