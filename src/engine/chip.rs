//! One accelerator: peak FLOP/s per data type and unit, memory, cache, overheads and price.
//! `ChipFile` mirrors the YAML (unknown fields denied); `Chip` is the validated form the
//! engine uses, in SI units.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::base::builtin;
use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::dtype::DType;
use crate::base::error::Error;
use crate::base::source::{FileKind, Source};
use crate::base::units::{parse_quantity, QuantityKind};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChipFile {
    name: Spanned<String>,
    memory: MemoryFile,
    matrix: IndexMap<String, Spanned<String>>,
    #[serde(default)]
    vector: IndexMap<String, Spanned<String>>,
    cache: Option<CacheFile>,
    compute_units: Option<Spanned<u64>>,
    launch: Option<Spanned<String>>,
    interconnect: Option<InterconnectFile>,
    network: Option<NetworkFile>,
    power: Option<Spanned<String>>,
    price_per_hour: Option<Spanned<String>>,
    expected: Option<ExpectedFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectedFile {
    matrix: IndexMap<String, Spanned<f64>>,
    #[serde(default)]
    vector: Option<Spanned<f64>>,
    memory: Spanned<f64>,
    row_tile: Option<Spanned<u64>>,
    cta_tiles: Option<Spanned<Vec<Vec<u64>>>>,
    #[serde(default)]
    stream_k: bool,
    small_m_memory: Option<Spanned<f64>>,
    dram_latency: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryFile {
    capacity: Spanned<String>,
    marketed_capacity: Option<Spanned<String>>,
    bandwidth: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheFile {
    size: Spanned<String>,
    bandwidth: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InterconnectFile {
    bandwidth: Spanned<String>,
    domain: Option<Spanned<u64>>,
    latency: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkFile {
    bandwidth: Spanned<String>,
    latency: Option<Spanned<String>>,
}

/// A unit's support for one data type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Support {
    /// Dense peak, FLOP/s (OP/s for integer types).
    Peak(f64),
    /// The chip file says the unit lacks this type.
    Unsupported,
}

/// Peaks of one unit (matrix or vector), per data type; a type absent from the file is `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeakTable([Option<Support>; DType::ALL.len()]);

impl PeakTable {
    pub fn get(&self, dtype: DType) -> Option<Support> {
        self.0[dtype as usize]
    }

    /// The data types with a peak, with that peak in FLOP/s, in [`DType::ALL`] order.
    pub fn peaks(&self) -> impl Iterator<Item = (DType, f64)> + '_ {
        DType::ALL.into_iter().filter_map(|d| match self.get(d) {
            Some(Support::Peak(p)) => Some((d, p)),
            _ => None,
        })
    }

    fn listed(&self) -> String {
        let names: Vec<&str> = self.peaks().map(|(d, _)| d.name()).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }
}

/// On-chip last-level cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    pub size_bytes: f64,
    pub bandwidth_bytes_per_s: Option<f64>,
}

/// Scale-up link of one chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Interconnect {
    /// Per direction, per chip.
    pub bandwidth_bytes_per_s: f64,
    /// Chips in one scale-up domain (an 8-GPU NVLink node, a 72-GPU NVL72 rack).
    pub domain: Option<u64>,
    /// Time one step of a collective algorithm takes beyond its bytes (0 when not given).
    pub latency_s: f64,
}

/// The scale-out network between domains, per chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    pub bandwidth_bytes_per_s: f64,
    pub latency_s: f64,
}

/// GEMMs with fewer rows than this are decode-shaped (docs/sources.md, kernel physics 2: the decode grid is
/// M = 1..256).
pub const SMALL_M: f64 = 256.0;

/// What real kernels achieve on a chip: the constants of expected mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Achievable {
    /// Fraction of the matrix unit's peak a large GEMM reaches, per data type (types without
    /// a figure use the chip's lowest).
    pub matrix: [Option<f64>; DType::ALL.len()],
    /// Fraction of the vector unit's peak elementwise work reaches.
    pub vector: f64,
    /// Fraction of HBM bandwidth a large stream reaches.
    pub memory: f64,
    /// Fraction of that stream bandwidth library GEMMs reach when M is small (decode: M below
    /// [`SMALL_M`]), whose tiles and split-K leave the memory system partly idle.
    pub small_m_memory: f64,
    /// Rows a GEMM's M is padded to (the matrix instruction's M).
    pub row_tile: u64,
    /// Output tiles a CTA / workgroup may compute, `[rows, columns]`: the library is taken to
    /// pick the one that wastes the least of the last wave.
    pub cta_tiles: Vec<[u64; 2]>,
    /// Whether GEMM libraries spread the last wave's work over every compute unit (Stream-K,
    /// persistent kernels), so no wave is left part-empty.
    pub stream_k: bool,
    /// Time to first byte from HBM, paid when a kernel starts loading and again when its
    /// last stores drain.
    pub dram_latency_s: f64,
}

impl Achievable {
    /// Fraction of the matrix peak reached in `dtype`.
    pub fn matrix(&self, dtype: DType) -> f64 {
        self.matrix[dtype as usize]
            .or_else(|| self.matrix.iter().flatten().copied().reduce(f64::min))
            .unwrap_or(1.0)
    }
}

/// A validated accelerator: every number finite and positive.
#[derive(Debug, Clone, PartialEq)]
pub struct Chip {
    /// File stem (`h100-sxm`).
    pub id: String,
    /// Product name (`NVIDIA H100 SXM`).
    pub name: String,
    /// Usable HBM.
    pub capacity_bytes: f64,
    pub marketed_capacity_bytes: Option<f64>,
    pub bandwidth_bytes_per_s: f64,
    /// Tensor/matrix unit: GEMMs and attention.
    pub matrix: PeakTable,
    /// Vector unit: elementwise work.
    pub vector: PeakTable,
    pub cache: Option<Cache>,
    pub compute_units: Option<u64>,
    /// Fixed cost of one kernel launch.
    pub launch_s: Option<f64>,
    pub interconnect: Option<Interconnect>,
    pub network: Option<Network>,
    pub power_w: Option<f64>,
    /// Indicative on-demand price.
    pub price_usd_per_hour: Option<f64>,
    /// Constants of expected mode; `None` for a chip file without an `expected` section.
    pub expected: Option<Achievable>,
}

impl Chip {
    /// Loads a built-in chip by name, or a chip file by path.
    pub fn named(name: &str) -> Result<Chip, Error> {
        Chip::load(&Source::resolve(name, FileKind::Chip)?)
    }

    /// Parses and validates a chip file; every problem found is reported.
    /// Loads each chip named: a built-in name or a YAML file; `all` is every built-in chip.
    pub fn load_all(names: &[impl AsRef<str>]) -> Result<Vec<Chip>, Error> {
        let mut chips = Vec::new();
        for name in names.iter().map(AsRef::as_ref) {
            if name == "all" {
                for (id, _) in builtin::CHIPS {
                    chips.push(Chip::load(&Source::resolve(id, FileKind::Chip)?)?);
                }
            } else {
                chips.push(Chip::load(&Source::resolve(name, FileKind::Chip)?)?);
            }
        }
        Ok(chips)
    }

    /// Loads a chip file.
    pub fn load(source: &Source) -> Result<Chip, Error> {
        let file: ChipFile = source.parse().map_err(Error::Invalid)?;
        let mut problems = Vec::new();
        let mut quantity = |field: &str, value: &Spanned<String>, kind: QuantityKind| {
            parse_quantity(&value.value, kind)
                .map_err(|e| {
                    problems.push(source.problem(&Origin::of(field, value), e.to_string()))
                })
                .ok()
        };
        let capacity = quantity(
            "memory.capacity",
            &file.memory.capacity,
            QuantityKind::Bytes,
        );
        let marketed = file
            .memory
            .marketed_capacity
            .as_ref()
            .map(|v| quantity("memory.marketed_capacity", v, QuantityKind::Bytes));
        let bandwidth = quantity(
            "memory.bandwidth",
            &file.memory.bandwidth,
            QuantityKind::Bandwidth,
        );
        let cache = file.cache.as_ref().map(|c| {
            (
                quantity("cache.size", &c.size, QuantityKind::Bytes),
                c.bandwidth
                    .as_ref()
                    .map(|b| quantity("cache.bandwidth", b, QuantityKind::Bandwidth)),
            )
        });
        let launch = file
            .launch
            .as_ref()
            .map(|v| quantity("launch", v, QuantityKind::Time));
        let link = file.interconnect.as_ref().map(|i| {
            quantity(
                "interconnect.bandwidth",
                &i.bandwidth,
                QuantityKind::Bandwidth,
            )
        });
        let link_latency = file
            .interconnect
            .as_ref()
            .and_then(|i| i.latency.as_ref())
            .map(|v| quantity("interconnect.latency", v, QuantityKind::Time));
        let network = file.network.as_ref().map(|n| {
            let bandwidth = quantity("network.bandwidth", &n.bandwidth, QuantityKind::Bandwidth);
            let latency = n
                .latency
                .as_ref()
                .map(|v| quantity("network.latency", v, QuantityKind::Time));
            (bandwidth, latency)
        });
        let power = file
            .power
            .as_ref()
            .map(|v| quantity("power", v, QuantityKind::Power));
        let price = file
            .price_per_hour
            .as_ref()
            .map(|v| quantity("price_per_hour", v, QuantityKind::Price));

        let matrix = peak_table(source, "matrix", &file.matrix, &mut problems);
        let vector = peak_table(source, "vector", &file.vector, &mut problems);
        if matrix.peaks().next().is_none() && !file.matrix.is_empty() {
            problems.push(source.problem(
                &Origin::new("matrix", 0, 0),
                "the matrix unit lists no data type with a peak",
            ));
        }
        for (field, count) in [
            ("compute_units", file.compute_units.as_ref()),
            (
                "interconnect.domain",
                file.interconnect.as_ref().and_then(|i| i.domain.as_ref()),
            ),
        ] {
            if let Some(count) = count.filter(|c| c.value == 0) {
                problems.push(source.problem(
                    &Origin::of(field, count),
                    "must be a whole number greater than zero",
                ));
            }
        }
        if file.name.value.trim().is_empty() {
            problems.push(source.problem(&Origin::of("name", &file.name), "must not be empty"));
        }
        let expected = file
            .expected
            .as_ref()
            .and_then(|e| achievable(source, e, &mut problems));
        let (Some(capacity_bytes), Some(bandwidth_bytes_per_s), true) =
            (capacity, bandwidth, problems.is_empty())
        else {
            return Err(Error::Invalid(Diagnostics(problems)));
        };
        // A `None` inside an optional section was reported above, so `flatten` drops nothing.
        Ok(Chip {
            id: source.id.clone(),
            name: file.name.value.trim().to_owned(),
            capacity_bytes,
            marketed_capacity_bytes: marketed.flatten(),
            bandwidth_bytes_per_s,
            matrix,
            vector,
            cache: cache.and_then(|(size, bw)| {
                Some(Cache {
                    size_bytes: size?,
                    bandwidth_bytes_per_s: bw.flatten(),
                })
            }),
            compute_units: file.compute_units.map(|c| c.value),
            launch_s: launch.flatten(),
            interconnect: link.flatten().map(|bw| Interconnect {
                bandwidth_bytes_per_s: bw,
                domain: file
                    .interconnect
                    .as_ref()
                    .and_then(|i| i.domain.as_ref().map(|d| d.value)),
                latency_s: link_latency.flatten().unwrap_or(0.0),
            }),
            network: network.and_then(|(bw, latency)| {
                Some(Network {
                    bandwidth_bytes_per_s: bw?,
                    latency_s: latency.flatten().unwrap_or(0.0),
                })
            }),
            power_w: power.flatten(),
            price_usd_per_hour: price.flatten(),
            expected,
        })
    }

    /// Peak of the matrix unit in `dtype`, or why there is none.
    pub fn matrix_peak(&self, dtype: DType) -> Result<f64, String> {
        match self.matrix.get(dtype) {
            Some(Support::Peak(p)) => Ok(p),
            Some(Support::Unsupported) => Err(format!(
                "`{}` ({}) has no {dtype} support in its matrix unit (the chip file marks it unsupported); it computes in: {}",
                self.id,
                self.name,
                self.matrix.listed()
            )),
            None => Err(format!(
                "`{}` ({}) lists no {dtype} peak for its matrix unit; it lists: {}",
                self.id,
                self.name,
                self.matrix.listed()
            )),
        }
    }

    /// Peak of the vector unit for values of `dtype`, and the type it computes them in: the
    /// type itself when listed, else the narrowest wider floating type the unit lists (vector
    /// units convert fp8 or int4 values before they compute).
    pub fn vector_peak(&self, dtype: DType) -> Result<(DType, f64), String> {
        std::iter::once(dtype)
            .chain([DType::Bf16, DType::Fp16, DType::Fp32])
            .filter(|d| d.bytes() >= dtype.bytes())
            .find_map(|d| match self.vector.get(d) {
                Some(Support::Peak(p)) => Some((d, p)),
                _ => None,
            })
            .ok_or_else(|| {
                format!(
                    "`{}` ({}) lists no vector-unit peak for {dtype} or a wider type; it lists: {}",
                    self.id,
                    self.name,
                    self.vector.listed()
                )
            })
    }

    /// Intensity (FLOP per byte of HBM traffic) where the matrix unit's `dtype` roof meets the
    /// memory slope.
    pub fn ridge_flop_per_byte(&self, dtype: DType) -> Option<f64> {
        match self.matrix.get(dtype) {
            Some(Support::Peak(p)) => Some(p / self.bandwidth_bytes_per_s),
            _ => None,
        }
    }
}

fn achievable(
    source: &Source,
    file: &ExpectedFile,
    problems: &mut Vec<Diagnostic>,
) -> Option<Achievable> {
    let before = problems.len();
    let fraction = |problems: &mut Vec<Diagnostic>, field: &str, v: &Spanned<f64>| {
        if !(v.value > 0.0 && v.value <= 1.0) {
            problems.push(source.problem(
                &Origin::of(field, v),
                format!(
                    "{} is not a fraction: expected a number above 0 and at most 1",
                    v.value
                ),
            ));
        }
        v.value
    };
    let mut matrix = [None; DType::ALL.len()];
    for (key, value) in &file.matrix {
        let field = format!("expected.matrix.{key}");
        match key.parse::<DType>() {
            Ok(d) => matrix[d as usize] = Some(fraction(problems, &field, value)),
            Err(e) => problems.push(source.problem(&Origin::of(&field, value), e)),
        }
    }
    let vector = file
        .vector
        .as_ref()
        .map_or(1.0, |v| fraction(problems, "expected.vector", v));
    let memory = fraction(problems, "expected.memory", &file.memory);
    let small_m_memory = file
        .small_m_memory
        .as_ref()
        .map_or(1.0, |v| fraction(problems, "expected.small_m_memory", v));
    let row_tile = file.row_tile.as_ref().map_or(1, |t| t.value);
    let cta_tiles = match &file.cta_tiles {
        None => vec![[128, 128]],
        Some(t) => {
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
                    problems.push(source.problem(
                        &Origin::of("expected.cta_tiles", t),
                        "expected a list of [rows, columns] pairs of whole numbers above 0",
                    ));
                    vec![[128, 128]]
                }
            }
        }
    };
    if let Some(t) = file.row_tile.as_ref().filter(|t| t.value == 0) {
        problems.push(source.problem(&Origin::of("expected.row_tile", t), "must be at least 1"));
    }
    let dram_latency_s = match &file.dram_latency {
        None => 0.0,
        Some(v) => parse_quantity(&v.value, QuantityKind::Time)
            .map_err(|e| {
                problems
                    .push(source.problem(&Origin::of("expected.dram_latency", v), e.to_string()))
            })
            .unwrap_or(0.0),
    };
    (problems.len() == before).then_some(Achievable {
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

fn peak_table(
    source: &Source,
    unit: &str,
    entries: &IndexMap<String, Spanned<String>>,
    problems: &mut Vec<Diagnostic>,
) -> PeakTable {
    let mut table = PeakTable::default();
    for (key, value) in entries {
        let field = format!("{unit}.{key}");
        let origin = Origin::of(&field, value);
        let dtype = match key.parse::<DType>() {
            Ok(d) => d,
            Err(e) => {
                problems.push(source.problem(&origin, e));
                continue;
            }
        };
        let support = if value.value.trim() == "unsupported" {
            Support::Unsupported
        } else {
            match parse_quantity(&value.value, QuantityKind::Rate) {
                Ok(p) => Support::Peak(p),
                Err(e) => {
                    problems.push(source.problem(
                        &origin,
                        format!("{e}, or `unsupported` when the unit lacks {dtype}"),
                    ));
                    continue;
                }
            }
        };
        table.0[dtype as usize] = Some(support);
    }
    table
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
