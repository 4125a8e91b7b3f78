//! Any text as a chip file: loads or says why, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepcost::{Chip, Source};

fuzz_target!(|text: &str| {
    if let Ok(chip) = Chip::load(&Source::from_text("fuzz.yaml", text)) {
        for dtype in stepcost::types::DType::ALL {
            let _ = chip.matrix_peak(dtype);
            let _ = chip.vector_peak(dtype);
            let _ = chip.ridge_flop_per_byte(dtype);
        }
    }
});
