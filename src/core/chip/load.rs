//! From a chip file to a validated [`Chip`]: every quantity parsed into SI units, every
//! number checked against its physical range (`base::ranges`), and every problem found
//! reported at its place in the file, all of them at once.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use crate::base::diagnostic::{did_you_mean, Diagnostic, Diagnostics, Origin};
use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::base::ranges::{self, Range};
use crate::base::source::Source;
use crate::base::units::{parse_quantity, QuantityKind};
use crate::core::engine::Engine;

use super::file::{CacheFile, ChipFile, ExpectedFragment, MemoryFile, NetworkFile};
use super::DEFAULT_RUNTIME_RESERVE_BYTES;
use super::{Achievable, Cache, CapacityBasis, Chip, ChipStatus, Network, PeakTable, Support};

impl Chip {
    /// Parses and validates a chip file; every problem found is reported. A built-in file is
    /// held to the catalogue's rules too ([`Chip::load_catalogue`]).
    pub fn load(source: &Source) -> Result<Chip, Error> {
        Chip::load_checked(source, source.name.ends_with(" (built-in)"))
    }

    /// [`Chip::load`] with the built-in catalogue's rules, whatever the file's name: its
    /// purchase price and power must name their basis (`price.purchase_basis`, `power_basis`).
    pub fn load_catalogue(source: &Source) -> Result<Chip, Error> {
        Chip::load_checked(source, true)
    }

    fn load_checked(source: &Source, catalogue: bool) -> Result<Chip, Error> {
        let file: ChipFile = source.parse().map_err(Error::Invalid)?;
        let mut check = Checker {
            source,
            problems: Vec::new(),
            catalogue,
        };
        let memory = check.memory(&file.memory);
        let cache = file.cache.as_ref().and_then(|c| check.cache(c));
        let [launch_s, eager_launch_s] = [
            (&ranges::LAUNCH, &file.launch),
            (&ranges::EAGER_LAUNCH, &file.eager_launch),
        ]
        .map(|(range, field)| check.optional(range, field.as_ref(), QuantityKind::Time));
        let sfu_ops_per_s = check.optional(&ranges::SFU, file.sfu.as_ref(), QuantityKind::Rate);
        let interconnect = (file.interconnect.as_ref()).and_then(|i| check.interconnect(i));
        let network = file.network.as_ref().and_then(|n| check.network(n));
        let power_w = check.optional(&ranges::POWER, file.power.as_ref(), QuantityKind::Power);
        let prices = check.prices(file.price.as_ref());
        let prices = check.bases(&file, prices);
        let reserve_bytes = check
            .optional(
                &ranges::MEMORY_RESERVE,
                file.memory.reserve.as_ref(),
                QuantityKind::Bytes,
            )
            .unwrap_or(DEFAULT_RUNTIME_RESERVE_BYTES);
        let (matrix, vector) = check.units(&file);
        check.counts_and_name(&file);
        let status = check.status(&file);
        let engine = check.engine(&file);
        let expected = file.expected.as_ref().and_then(|e| check.achievable(e));
        let power_curve = (file.power_curve.as_ref()).and_then(|c| check.power_curve(c));
        let (Some((capacity_bytes, marketed_capacity_bytes, bandwidth_bytes_per_s)), true) =
            (memory, check.problems.is_empty())
        else {
            return Err(Error::Invalid(Diagnostics(check.problems)));
        };
        let name = file.name.value.trim().to_owned();
        // A `None` inside an optional section was reported above, so no value is dropped.
        Ok(Chip {
            id: source.id.clone(),
            sku: file
                .sku
                .map_or_else(|| name.clone(), |s| s.value.trim().to_owned()),
            name,
            family: file.family.map(|f| f.value),
            engine,
            status,
            capacity_bytes,
            marketed_capacity_bytes,
            capacity_basis: (file.memory.capacity_basis)
                .map_or(CapacityBasis::default(), |b| b.value),
            reserve_bytes,
            bandwidth_bytes_per_s,
            matrix,
            vector,
            sfu_ops_per_s,
            cache,
            compute_units: file.compute_units.map(|c| c.value),
            launch_s,
            eager_launch_s,
            interconnect,
            network,
            power_w,
            prices,
            cost: Default::default(),
            expected,
            power_curve,
        })
    }
}

impl Achievable {
    /// Parses and validates a standalone `expected:` section (what `stepcost fit` writes).
    pub fn load(source: &Source) -> Result<Achievable, Error> {
        let file: ExpectedFragment = source.parse().map_err(Error::Invalid)?;
        let mut check = Checker {
            source,
            problems: Vec::new(),
            catalogue: false,
        };
        match check.achievable(&file.expected) {
            Some(a) if check.problems.is_empty() => Ok(a),
            _ => Err(Error::Invalid(Diagnostics(check.problems))),
        }
    }
}

/// Validates a chip file's sections, collecting every problem found.
pub(super) struct Checker<'a> {
    source: &'a Source,
    problems: Vec<Diagnostic>,
    /// Whether the catalogue's rules apply (a built-in file).
    catalogue: bool,
}

impl Checker<'_> {
    pub(super) fn problem(&mut self, origin: &Origin, message: impl Into<String>) {
        self.problems.push(self.source.problem(origin, message));
    }

    /// Whether the file is one of the built-in catalogue's, which must name what its prices and
    /// power stand for.
    pub(super) fn builtin(&self) -> bool {
        self.catalogue
    }

    /// Problems found so far: a section checks whether it added any.
    pub(super) fn problem_count(&self) -> usize {
        self.problems.len()
    }

    /// Parses a quantity of `kind` inside `range` (whose field is the one named), or reports
    /// why it is not one.
    pub(super) fn quantity(
        &mut self,
        range: &Range,
        value: &Spanned<String>,
        kind: QuantityKind,
    ) -> Option<f64> {
        let checked = parse_quantity(&value.value, kind)
            .map_err(|e| e.to_string())
            .and_then(|v| {
                range
                    .check(v)
                    .map(|()| v)
                    .map_err(|e| format!("`{}` is {e}", value.value.trim()))
            });
        checked
            .map_err(|e| self.problem(&Origin::of(range.field, value), e))
            .ok()
    }

    /// An optional field's quantity: `None` when absent, and when reported.
    pub(super) fn optional(
        &mut self,
        range: &Range,
        value: Option<&Spanned<String>>,
        kind: QuantityKind,
    ) -> Option<f64> {
        value.and_then(|v| self.quantity(range, v, kind))
    }

    /// Capacity, marketed capacity and bandwidth; `None` when a required one is missing.
    fn memory(&mut self, memory: &MemoryFile) -> Option<(f64, Option<f64>, f64)> {
        let capacity = self.quantity(
            &ranges::MEMORY_CAPACITY,
            &memory.capacity,
            QuantityKind::Bytes,
        );
        let marketed = self.optional(
            &ranges::MEMORY_MARKETED_CAPACITY,
            memory.marketed_capacity.as_ref(),
            QuantityKind::Bytes,
        );
        let bandwidth = self.quantity(
            &ranges::MEMORY_BANDWIDTH,
            &memory.bandwidth,
            QuantityKind::Bandwidth,
        );
        Some((capacity?, marketed, bandwidth?))
    }

    fn cache(&mut self, cache: &CacheFile) -> Option<Cache> {
        let size = self.quantity(&ranges::CACHE_SIZE, &cache.size, QuantityKind::Bytes);
        let bandwidth = self.optional(
            &ranges::CACHE_BANDWIDTH,
            cache.bandwidth.as_ref(),
            QuantityKind::Bandwidth,
        );
        Some(Cache {
            size_bytes: size?,
            bandwidth_bytes_per_s: bandwidth,
        })
    }

    fn network(&mut self, network: &NetworkFile) -> Option<Network> {
        let bandwidth = self.quantity(
            &ranges::NETWORK_BANDWIDTH,
            &network.bandwidth,
            QuantityKind::Bandwidth,
        );
        let latency = self.optional(
            &ranges::NETWORK_LATENCY,
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
        let matrix = self.peak_table("matrix", &ranges::MATRIX_PEAK, &file.matrix);
        let vector = self.peak_table("vector", &ranges::VECTOR_PEAK, &file.vector);
        if matrix.peaks().next().is_none() && !file.matrix.is_empty() {
            self.problem(
                &Origin::new("matrix", 0, 0),
                "the matrix unit lists no data type with a peak",
            );
        }
        (matrix, vector)
    }

    fn peak_table(
        &mut self,
        unit: &str,
        range: &Range,
        entries: &IndexMap<String, Spanned<String>>,
    ) -> PeakTable {
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
                    Ok(p) => match range.check(p) {
                        Ok(()) => Support::Peak(p),
                        Err(e) => {
                            self.problem(&origin, format!("`{}` is {e}", value.value.trim()));
                            continue;
                        }
                    },
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

    /// Counts must be whole numbers inside their ranges, and the name must not be empty.
    fn counts_and_name(&mut self, file: &ChipFile) {
        for (range, count) in [
            (&ranges::COMPUTE_UNITS, file.compute_units.as_ref()),
            (
                &ranges::INTERCONNECT_DOMAIN,
                file.interconnect.as_ref().and_then(|i| i.domain.as_ref()),
            ),
        ] {
            if let Some(count) = count {
                self.count(range, count);
            }
        }
        if file.name.value.trim().is_empty() {
            self.problem(&Origin::of("name", &file.name), "must not be empty");
        }
        if let Some(family) = file.family.as_ref().filter(|f| !is_family(&f.value)) {
            self.problem(
                &Origin::of("family", family),
                format!(
                    "`{}` is not a family name: expected lowercase letters, digits and dashes, vendor then generation (`nvidia-hopper`)",
                    family.value
                ),
            );
        }
        if let Some(sku) = file.sku.as_ref().filter(|s| s.value.trim().is_empty()) {
            self.problem(
                &Origin::of("sku", sku),
                "must not be empty (omit it to use the name)",
            );
        }
    }

    /// The built-in engine the file names as its vendor's default.
    fn engine(&mut self, file: &ChipFile) -> Option<Arc<Engine>> {
        let id = file.engine.as_ref()?;
        match crate::core::engine::builtin(id.value.trim()) {
            Ok(engine) => Some(engine),
            Err(_) => {
                let known: Vec<&str> = crate::core::engine::builtin_ids().collect();
                let message = format!(
                    "`{}` is not a built-in engine{}: expected one of {}",
                    id.value.trim(),
                    did_you_mean(id.value.trim(), known.iter().copied()),
                    known.join(", ")
                );
                self.problem(&Origin::of("engine", id), message);
                None
            }
        }
    }

    /// `available` (the default) or `announced`.
    fn status(&mut self, file: &ChipFile) -> ChipStatus {
        let Some(status) = file.status.as_ref() else {
            return ChipStatus::Available;
        };
        match status.value.trim() {
            "available" => ChipStatus::Available,
            "announced" => ChipStatus::Announced,
            other => {
                self.problem(
                    &Origin::of("status", status),
                    format!("`{other}` is not a status: expected available or announced"),
                );
                ChipStatus::Available
            }
        }
    }

    /// A whole number from the file: above zero, and inside `range`.
    pub(super) fn count(&mut self, range: &Range, count: &Spanned<u64>) {
        let origin = Origin::of(range.field, count);
        if count.value == 0 {
            self.problem(&origin, "must be a whole number greater than zero");
        } else if let Err(e) = range.check(count.value as f64) {
            self.problem(&origin, format!("{} is {e}", count.value));
        }
    }
}

/// A family name: lowercase letters, digits and dashes, starting with a letter.
fn is_family(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
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
