//! Expected-mode fractions per kernel path: libraries on one chip reach different shares of
//! its peaks (DeepGEMM's fp8 GEMMs, a framework's generic linear layer at small M), so a chip
//! file's `expected.paths` gives a path its own matrix fraction per type and its own small-M
//! bandwidth fraction where rows measured it. A path or type without one takes the section's
//! (the chip family's fit), then the type's lookup of [`Achievable::matrix`]. Which path a GEMM
//! runs in is the measured row's own library, else the engine's path for its weight format.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::base::diagnostic::Origin;
use crate::base::dtype::DType;
use crate::base::format::Format;
use crate::base::ranges;
use crate::core::engine::{Engine, KernelPath};

use super::load::Checker;
use super::Achievable;

/// The fractions one kernel path reaches where they differ from the section's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathFractions {
    /// Fraction of the matrix peak per data type; `None`: the section's.
    pub matrix: [Option<f64>; DType::ALL.len()],
    /// Fraction of the stream bandwidth the path's GEMMs reach at small M; `None`: the
    /// section's `small_m_memory`.
    pub small_m_memory: Option<f64>,
}

impl PathFractions {
    /// Whether it sets nothing (and so is not written).
    pub fn is_empty(&self) -> bool {
        self.matrix.iter().all(Option::is_none) && self.small_m_memory.is_none()
    }
}

/// One path's entry of `expected.paths` as the file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PathFile {
    #[serde(default)]
    pub(super) matrix: IndexMap<String, Spanned<f64>>,
    pub(super) small_m_memory: Option<Spanned<f64>>,
}

impl Achievable {
    /// Fraction of the matrix peak a GEMM in `dtype` reaches on `path`: the path's own where
    /// the section gives one, else [`Achievable::matrix`].
    pub fn matrix_on(&self, path: Option<KernelPath>, dtype: DType) -> f64 {
        self.path(path)
            .and_then(|p| p.matrix[dtype as usize])
            .unwrap_or_else(|| self.matrix(dtype))
    }

    /// Fraction of the stream bandwidth a GEMM on `path` reaches at small M: the path's own
    /// where the section gives one, else `small_m_memory`.
    pub fn small_m_memory_on(&self, path: Option<KernelPath>) -> f64 {
        self.path(path)
            .and_then(|p| p.small_m_memory)
            .unwrap_or(self.small_m_memory)
    }

    /// The fractions the section gives `path`, if any.
    pub fn path(&self, path: Option<KernelPath>) -> Option<&PathFractions> {
        let path = path?;
        self.paths.iter().find(|(p, _)| *p == path).map(|(_, f)| f)
    }

    /// The fractions of `path`, added (empty) where the section has none.
    pub fn path_mut(&mut self, path: KernelPath) -> &mut PathFractions {
        let i = match self.paths.iter().position(|(p, _)| *p == path) {
            Some(i) => i,
            None => {
                self.paths.push((path, PathFractions::default()));
                self.paths.sort_by_key(|(p, _)| *p);
                self.paths.iter().position(|(p, _)| *p == path).unwrap_or(0)
            }
        };
        &mut self.paths[i].1
    }
}

/// The kernel path a GEMM whose weights are stored in `weight` runs in: `row`'s (a measured
/// kernel row's own library) where given, else the engine's path for the format; `None` (the
/// section's fractions) where neither says.
pub fn gemm_path(
    row: Option<KernelPath>,
    engine: Option<&Engine>,
    weight: Option<Format>,
) -> Option<KernelPath> {
    if row.is_some() {
        return row;
    }
    let paths = engine?.terms().gemm_paths;
    match weight?.element() {
        DType::Bf16 | DType::Fp16 | DType::Fp32 => Some(paths.bf16),
        DType::Fp8 => Some(paths.fp8),
        DType::Fp4 => Some(paths.fp4),
        DType::Int4 => Some(paths.int4),
        _ => None,
    }
}

impl Checker<'_> {
    /// `expected.paths`: each key a kernel path, each fraction inside its range.
    pub(super) fn paths(
        &mut self,
        entries: &IndexMap<String, Spanned<PathFile>>,
    ) -> Vec<(KernelPath, PathFractions)> {
        let mut paths: Vec<(KernelPath, PathFractions)> = Vec::new();
        for (name, entry) in entries {
            let field = format!("expected.paths.{name}");
            let Some(path) = KernelPath::from_name(name) else {
                let names: Vec<&str> = KernelPath::ALL.iter().map(|p| p.name()).collect();
                self.problem(
                    &Origin::of(&field, entry),
                    format!(
                        "unknown kernel path `{name}`; expected one of {}",
                        names.join(", ")
                    ),
                );
                continue;
            };
            let mut fractions = PathFractions::default();
            for (key, value) in &entry.value.matrix {
                let field = format!("{field}.matrix.{key}");
                match key.parse::<DType>() {
                    Ok(d) => {
                        fractions.matrix[d as usize] =
                            Some(self.fraction(&field, &ranges::EXPECTED_MATRIX, value))
                    }
                    Err(e) => self.problem(&Origin::of(&field, value), e),
                }
            }
            if let Some(v) = entry.value.small_m_memory.as_ref() {
                let field = format!("{field}.small_m_memory");
                fractions.small_m_memory =
                    Some(self.fraction(&field, &ranges::EXPECTED_SMALL_M_MEMORY, v));
            }
            paths.push((path, fractions));
        }
        paths.sort_by_key(|(p, _)| *p);
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::Source;

    fn section(text: &str) -> Result<Achievable, crate::base::error::Error> {
        Achievable::load(&Source::from_text("fragment.yaml", text))
    }

    #[test]
    fn a_path_takes_its_own_fraction_then_the_sections() {
        let a = section(
            "expected:\n  matrix: {bf16: 0.8, fp8: 0.6}\n  memory: 0.9\n  small_m_memory: 0.7\n  \
             paths: {deepgemm: {matrix: {fp8: 0.75}}, framework-linear: {small_m_memory: 0.5}}\n",
        )
        .unwrap();
        let (dg, fl) = (
            Some(KernelPath::Deepgemm),
            Some(KernelPath::FrameworkLinear),
        );
        assert_eq!(a.matrix_on(dg, DType::Fp8), 0.75);
        assert_eq!(a.matrix_on(dg, DType::Bf16), 0.8);
        assert_eq!(a.matrix_on(None, DType::Fp8), 0.6);
        assert_eq!(a.matrix_on(Some(KernelPath::Cutlass), DType::Fp8), 0.6);
        assert_eq!(a.small_m_memory_on(fl), 0.5);
        assert_eq!(a.small_m_memory_on(dg), 0.7);
    }

    #[test]
    fn an_unknown_path_or_a_fraction_out_of_range_is_refused_at_its_field() {
        let e = section("expected:\n  matrix: {bf16: 0.8}\n  memory: 0.9\n  paths: {cublas: {}}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected.paths.cublas") && e.contains("cublaslt"),
            "{e}"
        );
        let e = section(
            "expected:\n  matrix: {bf16: 0.8}\n  memory: 0.9\n  paths: {marlin: {small_m_memory: 1.5}}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("expected.paths.marlin.small_m_memory"), "{e}");
    }

    #[test]
    fn a_row_path_wins_over_no_engine() {
        let fmt = Some(Format::from(DType::Fp8));
        assert_eq!(
            gemm_path(Some(KernelPath::Deepgemm), None, fmt),
            Some(KernelPath::Deepgemm)
        );
        assert_eq!(gemm_path(None, None, fmt), None);
    }
}
