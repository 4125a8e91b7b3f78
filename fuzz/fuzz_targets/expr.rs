//! Any text as an expression over three params: compiles or says why; evaluates to a finite
//! number or says why, at ordinary values and at zero and extreme ones.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepcost::internals::expr::Expr;

fuzz_target!(|text: &str| {
    let resolve = |name: &str| match name {
        "a" => Ok(0),
        "b" => Ok(1),
        "c" => Ok(2),
        _ => Err(format!("unknown `{name}`")),
    };
    if let Ok(expr) = Expr::parse(text, &resolve) {
        for values in [[1.0, 2.0, 3.0], [0.0, -1.0, 1e308], [1e-300, 4096.0, -0.0]] {
            if let Ok(v) = expr.eval(&values) {
                assert!(v.is_finite(), "`{text}` gave {v} at {values:?}");
            }
        }
    }
});
