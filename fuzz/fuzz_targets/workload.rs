//! Any text as a workload file: it loads and its default scenario prices on a built-in chip
//! to finite numbers, or it is refused with a reason; never a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use stepcost::{price, Chip, workload::FileKind, Scenario, Source, Workload};

fn chip() -> &'static Chip {
    static CHIP: OnceLock<Chip> = OnceLock::new();
    CHIP.get_or_init(|| {
        Chip::load(&Source::resolve("h100-sxm", FileKind::Chip).expect("built-in"))
            .expect("the built-in chip loads")
    })
}

fuzz_target!(|text: &str| {
    let Ok(workload) = Workload::load(&Source::from_text("fuzz.yaml", text)) else {
        return;
    };
    if let Ok(report) = price(&workload, chip(), &Scenario::defaults(&workload)) {
        let s = &report.summary;
        for x in [s.step_time_s, s.flops, s.bytes, s.mfu, s.mbu, s.footprint_bytes] {
            assert!(x.is_finite(), "a priced step has only finite numbers: {s:?}");
        }
    }
});
