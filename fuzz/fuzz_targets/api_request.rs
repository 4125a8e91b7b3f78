//! Any bytes as the body of a web API request (`stepcost ui`): the JSON read into a request,
//! its fields through their flags' parsers, its chips counted and its answers' budgets
//! estimated, none of it priced. A refusal is a message; nothing panics, and an answer that
//! passes the budget is within the answer limit.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the workload's size in ops (1 to 2^16), the rest is the body.
    let Some((first, body)) = data.split_first() else {
        return;
    };
    let ops = 1u64 << (first % 17);
    if let Ok(bytes) = stepcost::internals::parse_request(body, ops) {
        assert!(bytes <= 32 << 20, "{bytes} bytes passed the budget");
    }
});
