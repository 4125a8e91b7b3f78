//! From a chip file to a validated [`Chip`]: every quantity parsed into SI units, every count
//! and fraction checked, and every problem found reported at its place in the file, all of
//! them at once.

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::base::source::Source;
use crate::base::units::{parse_quantity, QuantityKind};

use super::file::{CacheFile, ChipFile, ExpectedFile, InterconnectFile, MemoryFile, NetworkFile};
use super::{Achievable, Cache, Chip, Interconnect, Network, PeakTable, Support};

impl Chip {
    /// Parses and validates a chip file; every problem found is reported.
    pub fn load(source: &Source) -> Result<Chip, Error> {
        let file: ChipFile = source.parse().map_err(Error::Invalid)?;
        let mut check = Checker {
            source,
            problems: Vec::new(),
        };
        let memory = check.memory(&file.memory);
        let cache = file.cache.as_ref().and_then(|c| check.cache(c));
        let launch_s = check.optional("launch", file.launch.as_ref(), QuantityKind::Time);
        let interconnect = (file.interconnect.as_ref()).and_then(|i| check.interconnect(i));
        let network = file.network.as_ref().and_then(|n| check.network(n));
        let power_w = check.optional("power", file.power.as_ref(), QuantityKind::Power);
        let price_usd_per_hour = check.optional(
            "price_per_hour",
            file.price_per_hour.as_ref(),
            QuantityKind::Price,
        );
        let (matrix, vector) = check.units(&file);
        check.counts_and_name(&file);
        let expected = file.expected.as_ref().and_then(|e| check.achievable(e));
        let (Some((capacity_bytes, marketed_capacity_bytes, bandwidth_bytes_per_s)), true) =
            (memory, check.problems.is_empty())
        else {
            return Err(Error::Invalid(Diagnostics(check.problems)));
        };
        // A `None` inside an optional section was reported above, so no value is dropped.
        Ok(Chip {
            id: source.id.clone(),
            name: file.name.value.trim().to_owned(),
            capacity_bytes,
            marketed_capacity_bytes,
            bandwidth_bytes_per_s,
            matrix,
            vector,
            cache,
            compute_units: file.compute_units.map(|c| c.value),
            launch_s,
            interconnect,
            network,
            power_w,
            price_usd_per_hour,
            expected,
        })
    }
}

/// Validates a chip file's sections, collecting every problem found.
struct Checker<'a> {
    source: &'a Source,
    problems: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn problem(&mut self, origin: &Origin, message: impl Into<String>) {
        self.problems.push(self.source.problem(origin, message));
    }

    /// Parses a quantity of `kind`, or reports why it is not one.
    fn quantity(
        &mut self,
        field: &str,
        value: &Spanned<String>,
        kind: QuantityKind,
    ) -> Option<f64> {
        parse_quantity(&value.value, kind)
            .map_err(|e| self.problem(&Origin::of(field, value), e.to_string()))
            .ok()
    }

    /// An optional field's quantity: `None` when absent, and when reported.
    fn optional(
        &mut self,
        field: &str,
        value: Option<&Spanned<String>>,
        kind: QuantityKind,
    ) -> Option<f64> {
        value.and_then(|v| self.quantity(field, v, kind))
    }

    /// Capacity, marketed capacity and bandwidth; `None` when a required one is missing.
    fn memory(&mut self, memory: &MemoryFile) -> Option<(f64, Option<f64>, f64)> {
        let capacity = self.quantity("memory.capacity", &memory.capacity, QuantityKind::Bytes);
        let marketed = self.optional(
            "memory.marketed_capacity",
            memory.marketed_capacity.as_ref(),
            QuantityKind::Bytes,
        );
        let bandwidth = self.quantity(
            "memory.bandwidth",
            &memory.bandwidth,
            QuantityKind::Bandwidth,
        );
        Some((capacity?, marketed, bandwidth?))
    }

    fn cache(&mut self, cache: &CacheFile) -> Option<Cache> {
        let size = self.quantity("cache.size", &cache.size, QuantityKind::Bytes);
        let bandwidth = self.optional(
            "cache.bandwidth",
            cache.bandwidth.as_ref(),
            QuantityKind::Bandwidth,
        );
        Some(Cache {
            size_bytes: size?,
            bandwidth_bytes_per_s: bandwidth,
        })
    }

    fn interconnect(&mut self, link: &InterconnectFile) -> Option<Interconnect> {
        let bandwidth = self.quantity(
            "interconnect.bandwidth",
            &link.bandwidth,
            QuantityKind::Bandwidth,
        );
        let latency = self.optional(
            "interconnect.latency",
            link.latency.as_ref(),
            QuantityKind::Time,
        );
        Some(Interconnect {
            bandwidth_bytes_per_s: bandwidth?,
            domain: link.domain.as_ref().map(|d| d.value),
            latency_s: latency.unwrap_or(0.0),
        })
    }

    fn network(&mut self, network: &NetworkFile) -> Option<Network> {
        let bandwidth = self.quantity(
            "network.bandwidth",
            &network.bandwidth,
            QuantityKind::Bandwidth,
        );
        let latency = self.optional(
            "network.latency",
            network.latency.as_ref(),
            QuantityKind::Time,
        );
        Some(Network {
            bandwidth_bytes_per_s: bandwidth?,
            latency_s: latency.unwrap_or(0.0),
        })
    }

    /// The matrix and vector units' peak tables; the matrix unit must list a peak.
    fn units(&mut self, file: &ChipFile) -> (PeakTable, PeakTable) {
        let matrix = self.peak_table("matrix", &file.matrix);
        let vector = self.peak_table("vector", &file.vector);
        if matrix.peaks().next().is_none() && !file.matrix.is_empty() {
            self.problem(
                &Origin::new("matrix", 0, 0),
                "the matrix unit lists no data type with a peak",
            );
        }
        (matrix, vector)
    }

    fn peak_table(&mut self, unit: &str, entries: &IndexMap<String, Spanned<String>>) -> PeakTable {
        let mut table = PeakTable::default();
        for (key, value) in entries {
            let field = format!("{unit}.{key}");
            let origin = Origin::of(&field, value);
            let dtype = match key.parse::<DType>() {
                Ok(d) => d,
                Err(e) => {
                    self.problem(&origin, e);
                    continue;
                }
            };
            let support = if value.value.trim() == "unsupported" {
                Support::Unsupported
            } else {
                match parse_quantity(&value.value, QuantityKind::Rate) {
                    Ok(p) => Support::Peak(p),
                    Err(e) => {
                        self.problem(
                            &origin,
                            format!("{e}, or `unsupported` when the unit lacks {dtype}"),
                        );
                        continue;
                    }
                }
            };
            table.0[dtype as usize] = Some(support);
        }
        table
    }

    /// Counts must be whole numbers above zero, and the name must not be empty.
    fn counts_and_name(&mut self, file: &ChipFile) {
        for (field, count) in [
            ("compute_units", file.compute_units.as_ref()),
            (
                "interconnect.domain",
                file.interconnect.as_ref().and_then(|i| i.domain.as_ref()),
            ),
        ] {
            if let Some(count) = count.filter(|c| c.value == 0) {
                self.problem(
                    &Origin::of(field, count),
                    "must be a whole number greater than zero",
                );
            }
        }
        if file.name.value.trim().is_empty() {
            self.problem(&Origin::of("name", &file.name), "must not be empty");
        }
    }

    /// The `expected` section; `None` when it has a problem.
    fn achievable(&mut self, file: &ExpectedFile) -> Option<Achievable> {
        let before = self.problems.len();
        let matrix = self.matrix_fractions(&file.matrix);
        let vector = (file.vector.as_ref()).map_or(1.0, |v| self.fraction("expected.vector", v));
        let memory = self.fraction("expected.memory", &file.memory);
        let small_m_memory = (file.small_m_memory.as_ref())
            .map_or(1.0, |v| self.fraction("expected.small_m_memory", v));
        let row_tile = file.row_tile.as_ref().map_or(1, |t| t.value);
        let cta_tiles = self.cta_tiles(file.cta_tiles.as_ref());
        if let Some(t) = file.row_tile.as_ref().filter(|t| t.value == 0) {
            self.problem(&Origin::of("expected.row_tile", t), "must be at least 1");
        }
        let dram_latency_s = self
            .optional(
                "expected.dram_latency",
                file.dram_latency.as_ref(),
                QuantityKind::Time,
            )
            .unwrap_or(0.0);
        (self.problems.len() == before).then_some(Achievable {
            matrix,
            vector,
            memory,
            small_m_memory,
            row_tile,
            cta_tiles,
            stream_k: file.stream_k,
            dram_latency_s,
        })
    }

    /// A fraction of a peak: above 0 and at most 1 (reported otherwise).
    fn fraction(&mut self, field: &str, v: &Spanned<f64>) -> f64 {
        if !(v.value > 0.0 && v.value <= 1.0) {
            self.problem(
                &Origin::of(field, v),
                format!(
                    "{} is not a fraction: expected a number above 0 and at most 1",
                    v.value
                ),
            );
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
                Ok(d) => matrix[d as usize] = Some(self.fraction(&field, value)),
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
        let tiles: Option<Vec<[u64; 2]>> = t
            .value
            .iter()
            .map(|tile| match tile.as_slice() {
                [m, n] if *m > 0 && *n > 0 => Some([*m, *n]),
                _ => None,
            })
            .collect();
        match tiles.filter(|t| !t.is_empty()) {
            Some(tiles) => tiles,
            None => {
                self.problem(
                    &Origin::of("expected.cta_tiles", t),
                    "expected a list of [rows, columns] pairs of whole numbers above 0",
                );
                vec![[128, 128]]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: &str = "name: NVIDIA H100 SXM
memory: {capacity: 80 GB, bandwidth: 3.35 TB/s}
matrix: {bf16: 989 TFLOPS, fp8: 1979 TFLOPS, fp4: unsupported}
vector: {fp32: 67 TFLOPS, bf16: 134 TFLOPS}
cache: {size: 50 MB}
launch: 2.5 us
";

    fn load(text: &str) -> Result<Chip, Error> {
        Chip::load(&Source::from_text("h100.yaml", text))
    }

    #[test]
    fn loads_and_computes_ridge() {
        let chip = load(H100).unwrap();
        assert_eq!(chip.id, "h100");
        assert_eq!(chip.capacity_bytes, 80e9);
        assert_eq!(
            chip.ridge_flop_per_byte(DType::Bf16),
            Some(989e12 / 3.35e12)
        );
        assert_eq!(chip.matrix_peak(DType::Fp8), Ok(1979e12));
        assert!(chip
            .matrix_peak(DType::Fp4)
            .unwrap_err()
            .contains("marks it unsupported"));
        assert!(chip
            .matrix_peak(DType::Int8)
            .unwrap_err()
            .contains("lists no int8"));
        assert_eq!(chip.vector_peak(DType::Fp8), Ok((DType::Bf16, 134e12)));
        assert_eq!(chip.vector_peak(DType::Fp32), Ok((DType::Fp32, 67e12)));
        assert_eq!(chip.launch_s, Some(2.5e-6));
    }

    #[test]
    fn reports_every_bad_quantity() {
        let text = H100
            .replace("3.35 TB/s", "3.35 TB")
            .replace("989 TFLOPS", "-989 TFLOPS")
            .replace("fp4: unsupported", "fp5: 1 TFLOPS");
        let Err(Error::Invalid(d)) = load(&text) else {
            panic!("expected problems")
        };
        let fields: Vec<&str> = d.0.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, ["memory.bandwidth", "matrix.bf16", "matrix.fp5"]);
        assert!(d.0.iter().all(|p| p.line == 2 || p.line == 3));
    }
}
