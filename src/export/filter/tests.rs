use super::*;

/// A row of typed cells, for tests.
struct Typed(Vec<Cell<'static>>);

impl Cells for Typed {
    fn cell(&self, column: usize, _: Kind) -> Cell<'_> {
        self.0[column]
    }
}

const COLUMNS: [(&str, Kind); 5] = [
    ("chip", Kind::Text),
    ("batch", Kind::Num),
    ("fits", Kind::Bool),
    ("a", Kind::Bool),
    ("ms_per_token", Kind::Num),
];

fn row(chip: &'static str, batch: f64, fits: Option<bool>, a: bool, ms: Option<f64>) -> Typed {
    Typed(vec![
        Cell::Text(chip),
        Cell::Num(batch),
        fits.map_or(Cell::Empty, Cell::Bool),
        Cell::Bool(a),
        ms.map_or(Cell::Empty, Cell::Num),
    ])
}

fn passes(text: &str, row: &Typed) -> bool {
    Filter::compile(text, COLUMNS)
        .unwrap()
        .matches(row)
        .unwrap()
}

fn refused(text: &str) -> String {
    Filter::compile(text, COLUMNS).unwrap_err().to_string()
}

#[test]
fn and_binds_tighter_than_or_and_not_tightest() {
    let r = row("h200", 8.0, Some(false), true, Some(20.0));
    // true || (false && false): true; (true || false) && false would be false.
    assert!(passes("a || fits && batch > 100", &r));
    assert!(!passes("(a || fits) && batch > 100", &r));
    // !fits && a: (!false) && true.
    assert!(passes("!fits && a", &r));
    assert!(!passes("!(fits || a)", &r));
    assert!(passes("!!a", &r));
}

#[test]
fn numbers_strings_and_booleans_compare_by_kind() {
    let r = row("h200", 8.0, Some(true), false, Some(20.0));
    for (text, expected) in [
        ("batch == 8", true),
        ("batch != 8", false),
        ("batch < 8", false),
        ("batch <= 8", true),
        ("batch > 7.5", true),
        ("batch >= 8e0", true),
        ("batch > -1", true),
        ("ms_per_token < 50 && batch >= 4", true),
        ("chip == \"h200\"", true),
        ("chip != \"h200\"", false),
        ("chip < \"h300\"", true),
        ("\"b200\" < chip", true),
        ("fits == true", true),
        ("fits", true),
        ("fits != a", true),
        ("true", true),
        ("false || batch == 8", true),
    ] {
        assert_eq!(passes(text, &r), expected, "{text}");
    }
}

#[test]
fn a_comparison_with_an_empty_cell_is_false() {
    let r = row("h200", 8.0, None, false, None);
    for text in [
        "ms_per_token < 50",
        "ms_per_token >= 50",
        "ms_per_token != 1",
        "fits",
        "fits == false",
    ] {
        assert!(!passes(text, &r), "{text}");
    }
    assert!(passes("!fits", &r));
    assert!(passes("!(ms_per_token < 50)", &r));
}

#[test]
fn strings_take_escapes() {
    let r = Typed(vec![
        Cell::Text("a \"b\" \\ c"),
        Cell::Num(0.0),
        Cell::Empty,
        Cell::Empty,
        Cell::Empty,
    ]);
    assert!(passes(r#"chip == "a \"b\" \\ c""#, &r));
}

#[test]
fn errors_say_where_and_what() {
    assert!(refused("chp == \"h200\"").contains("no column `chp` (did you mean `chip`?)"));
    assert!(refused("batch = 8").contains("did you mean `==`"));
    assert!(refused("chip < 3").contains("cannot compare text with a number"));
    assert!(refused("fits < true").contains("only with `==` and `!=`"));
    assert!(refused("batch").contains("a number is not a condition"));
    assert!(refused("1 < batch < 3").contains("do not chain"));
    assert!(refused("(batch > 1").contains("at character 1: this `(` is never closed"));
    assert!(refused("batch > 1)").contains("`)` without its `(`"));
    assert!(refused("batch >").contains("found the end"));
    assert!(refused("chip == \"h2").contains("no closing"));
    assert!(refused("").contains("empty"));
    assert!(refused("batch > 1 batch").contains("at character 11"));
    assert!(refused("batch > 1e999").contains("not a finite number"));
}

#[test]
fn untyped_csv_cells_are_read_as_the_other_side_asks() {
    let header = ["chip", "batch", "fits", "error"];
    let filter = |text: &str| Filter::compile(text, header.map(|h| (h, Kind::Any))).unwrap();
    let record = csv::StringRecord::from(vec!["4090", "16", "true", ""]);
    assert!(filter("chip == \"4090\"").matches(&record).unwrap());
    assert!(filter("batch >= 16 && fits").matches(&record).unwrap());
    assert!(!filter("error == \"\"").matches(&record).unwrap());
    let mismatch = filter("fits > 3").matches(&record).unwrap_err();
    assert!(
        mismatch
            .to_string()
            .contains("cannot compare a boolean with a number"),
        "{mismatch}"
    );
}
