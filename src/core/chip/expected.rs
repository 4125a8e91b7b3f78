//! The `expected` section of a chip file (or a standalone one, as `stepcost fit` writes it):
//! each fraction inside its range, the tiles and counts checked, every problem reported at its
//! place.

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use crate::base::diagnostic::Origin;
use crate::base::dtype::DType;
use crate::base::ranges::{self, Range};
use crate::base::units::QuantityKind;

use super::file::ExpectedFile;
use super::load::Checker;
use super::Achievable;

impl Checker<'_> {
    /// The `expected` section; `None` when it has a problem.
    pub(super) fn achievable(&mut self, file: &ExpectedFile) -> Option<Achievable> {
        let before = self.problem_count();
        let matrix = self.matrix_fractions(&file.matrix);
        let mut fraction = |range: &Range, v: Option<&Spanned<f64>>| {
            v.map_or(1.0, |v| self.fraction(range.field, range, v))
        };
        let vector = fraction(&ranges::EXPECTED_VECTOR, file.vector.as_ref());
        let memory = fraction(&ranges::EXPECTED_MEMORY, Some(&file.memory));
        let small_m_memory = fraction(
            &ranges::EXPECTED_SMALL_M_MEMORY,
            file.small_m_memory.as_ref(),
        );
        let attention_memory = (file.attention_memory.as_ref())
            .map(|v| fraction(&ranges::EXPECTED_ATTENTION_MEMORY, Some(v)));
        let exp_overlap =
            (file.exp_overlap.as_ref()).map(|v| fraction(&ranges::EXPECTED_EXP_OVERLAP, Some(v)));
        let weight_only_memory = fraction(
            &ranges::EXPECTED_WEIGHT_ONLY_MEMORY,
            file.weight_only_memory.as_ref(),
        );
        let fp4_memory = fraction(&ranges::EXPECTED_FP4_MEMORY, file.fp4_memory.as_ref());
        let fp16_clock = fraction(&ranges::EXPECTED_FP16_CLOCK, file.fp16_clock.as_ref());
        if let Some(s) = file.split_k.as_ref() {
            self.count(&ranges::EXPECTED_SPLIT_K, s);
        }
        if let Some(r) = file.cta_pair_rows.as_ref() {
            self.count(&ranges::EXPECTED_CTA_PAIR_ROWS, r);
        }
        let row_tile = file.row_tile.as_ref().map_or(1, |t| t.value);
        let cta_tiles = self.cta_tiles(file.cta_tiles.as_ref());
        if let Some(t) = file.row_tile.as_ref() {
            match t.value {
                0 => self.problem(&Origin::of("expected.row_tile", t), "must be at least 1"),
                _ => self.count(&ranges::EXPECTED_ROW_TILE, t),
            }
        }
        let mut time = |range: &Range, v: Option<&Spanned<String>>| {
            self.optional(range, v, QuantityKind::Time).unwrap_or(0.0)
        };
        let dram_latency_s = time(&ranges::EXPECTED_DRAM_LATENCY, file.dram_latency.as_ref());
        let host_step_s = time(&ranges::EXPECTED_HOST_STEP, file.host_step.as_ref());
        let host_sequence_s = time(&ranges::EXPECTED_HOST_SEQUENCE, file.host_sequence.as_ref());
        let paths = self.paths(&file.paths);
        (self.problem_count() == before).then_some(Achievable {
            matrix,
            vector,
            memory,
            small_m_memory,
            attention_memory,
            exp_overlap,
            row_tile,
            cta_tiles,
            stream_k: file.stream_k,
            cta_pair_rows: file.cta_pair_rows.as_ref().map(|r| r.value),
            split_k: file.split_k.as_ref().map_or(1, |s| s.value),
            weight_only_memory,
            fp4_memory,
            fp16_clock,
            dram_latency_s,
            host_step_s,
            host_sequence_s,
            paths,
        })
    }

    /// A fraction of a peak at `field`: above 0 and at most 1, and inside `range` (reported
    /// otherwise).
    pub(super) fn fraction(&mut self, field: &str, range: &Range, v: &Spanned<f64>) -> f64 {
        if !(v.value > 0.0 && v.value <= 1.0) {
            self.problem(
                &Origin::of(field, v),
                format!(
                    "{} is not a fraction: expected a number above 0 and at most 1",
                    v.value
                ),
            );
        } else if let Err(e) = range.check(v.value) {
            self.problem(&Origin::of(field, v), format!("{} is {e}", v.value));
        }
        v.value
    }

    /// The matrix unit's achievable fraction per data type.
    fn matrix_fractions(
        &mut self,
        entries: &IndexMap<String, Spanned<f64>>,
    ) -> [Option<f64>; DType::ALL.len()] {
        let mut matrix = [None; DType::ALL.len()];
        for (key, value) in entries {
            let field = format!("expected.matrix.{key}");
            match key.parse::<DType>() {
                Ok(d) => {
                    matrix[d as usize] =
                        Some(self.fraction(&field, &ranges::EXPECTED_MATRIX, value))
                }
                Err(e) => self.problem(&Origin::of(&field, value), e),
            }
        }
        matrix
    }

    /// The CTA tiles a library may pick from (`[128, 128]` when the file names none).
    fn cta_tiles(&mut self, tiles: Option<&Spanned<Vec<Vec<u64>>>>) -> Vec<[u64; 2]> {
        let Some(t) = tiles else {
            return vec![[128, 128]];
        };
        let range = &ranges::EXPECTED_CTA_TILES;
        let side = |v: u64| range.contains(v as f64);
        let tiles: Option<Vec<[u64; 2]>> = t
            .value
            .iter()
            .map(|tile| match tile.as_slice() {
                [m, n] if side(*m) && side(*n) => Some([*m, *n]),
                _ => None,
            })
            .collect();
        match tiles.filter(|t| !t.is_empty()) {
            Some(tiles) => tiles,
            None => {
                self.problem(
                    &Origin::of("expected.cta_tiles", t),
                    format!(
                        "expected a list of [rows, columns] pairs of whole numbers from 1 to {}",
                        range.max
                    ),
                );
                vec![[128, 128]]
            }
        }
    }
}
