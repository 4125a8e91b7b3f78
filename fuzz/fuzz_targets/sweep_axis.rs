//! Any text as a sweep axis (`1,2,8..=64:x2`): a list of finite values or a reason.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(values) = stepcost::internals::sweep::parse_values(text) {
        assert!(values.iter().all(|v| v.is_finite()));
    }
});
