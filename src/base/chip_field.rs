//! The fields of a chip that a what-if sweep may change (`--chip-set memory.bandwidth=...`):
//! named as the chip file writes them, each with the kind of quantity it takes (and so its
//! units) and its physical range.

use std::fmt;
use std::str::FromStr;

use crate::base::dtype::DType;
use crate::base::ranges::{self, Range};
use crate::base::suggest::did_you_mean;
use crate::base::units::QuantityKind;

/// A chip field a what-if chip may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChipField {
    /// Usable (reported) memory; the memory utilisation and the reserve apply to it.
    MemoryCapacity,
    /// `memory.bandwidth`: the datasheet memory (HBM) bandwidth.
    MemoryBandwidth,
    /// The matrix unit's dense peak in one type.
    Matrix(DType),
    /// The vector unit's peak in one type.
    Vector(DType),
    /// `cache.size`: the on-chip last-level cache.
    CacheSize,
    /// `cache.bandwidth`: the last-level cache's bandwidth.
    CacheBandwidth,
    /// `interconnect.bandwidth`: the scale-up fabric's rate per chip and direction.
    InterconnectBandwidth,
    /// `launch`: the fixed cost of one kernel inside a CUDA graph.
    Launch,
    /// Cloud price per chip-hour.
    PriceCloud,
    /// Purchase price per GPU.
    PricePurchase,
    /// Power per chip, in watts.
    Power,
}

/// The fields without a data type, in the chip file's order.
const PLAIN: [ChipField; 9] = [
    ChipField::MemoryCapacity,
    ChipField::MemoryBandwidth,
    ChipField::CacheSize,
    ChipField::CacheBandwidth,
    ChipField::InterconnectBandwidth,
    ChipField::Launch,
    ChipField::PriceCloud,
    ChipField::PricePurchase,
    ChipField::Power,
];

impl ChipField {
    /// Every field, as the chip file writes it (`matrix.TYPE` for each type), for a list of
    /// what is supported.
    pub fn names() -> Vec<String> {
        let typed = ["matrix", "vector"]
            .into_iter()
            .flat_map(|unit| DType::ALL.map(|d| format!("{unit}.{}", d.name())));
        PLAIN.iter().map(|f| f.to_string()).chain(typed).collect()
    }

    /// What the field measures, and so the units it takes.
    pub fn kind(self) -> QuantityKind {
        match self {
            ChipField::MemoryCapacity | ChipField::CacheSize => QuantityKind::Bytes,
            ChipField::MemoryBandwidth
            | ChipField::CacheBandwidth
            | ChipField::InterconnectBandwidth => QuantityKind::Bandwidth,
            ChipField::Matrix(_) | ChipField::Vector(_) => QuantityKind::Rate,
            ChipField::Launch => QuantityKind::Time,
            ChipField::PriceCloud => QuantityKind::Price,
            ChipField::PricePurchase => QuantityKind::Money,
            ChipField::Power => QuantityKind::Power,
        }
    }

    /// The field's physical range, as a chip file's value is checked against.
    pub fn range(self) -> &'static Range {
        match self {
            ChipField::MemoryCapacity => &ranges::MEMORY_CAPACITY,
            ChipField::MemoryBandwidth => &ranges::MEMORY_BANDWIDTH,
            ChipField::Matrix(_) => &ranges::MATRIX_PEAK,
            ChipField::Vector(_) => &ranges::VECTOR_PEAK,
            ChipField::CacheSize => &ranges::CACHE_SIZE,
            ChipField::CacheBandwidth => &ranges::CACHE_BANDWIDTH,
            ChipField::InterconnectBandwidth => &ranges::INTERCONNECT_BANDWIDTH,
            ChipField::Launch => &ranges::LAUNCH,
            ChipField::PriceCloud => &ranges::PRICE_CLOUD,
            // A what-if purchase price is per GPU: the same bounds as a system's.
            ChipField::PricePurchase => &ranges::PRICE_PURCHASE,
            ChipField::Power => &ranges::POWER,
        }
    }
}

impl fmt::Display for ChipField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ChipField::Matrix(d) => return write!(f, "matrix.{d}"),
            ChipField::Vector(d) => return write!(f, "vector.{d}"),
            ChipField::MemoryCapacity => "memory.capacity",
            ChipField::MemoryBandwidth => "memory.bandwidth",
            ChipField::CacheSize => "cache.size",
            ChipField::CacheBandwidth => "cache.bandwidth",
            ChipField::InterconnectBandwidth => "interconnect.bandwidth",
            ChipField::Launch => "launch",
            ChipField::PriceCloud => "price.cloud",
            ChipField::PricePurchase => "price.purchase",
            ChipField::Power => "power",
        };
        f.write_str(name)
    }
}

impl FromStr for ChipField {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(field) = PLAIN.into_iter().find(|f| f.to_string() == s) {
            return Ok(field);
        }
        let typed = match s.split_once('.') {
            Some(("matrix", t)) => t.parse().ok().map(ChipField::Matrix),
            Some(("vector", t)) => t.parse().ok().map(ChipField::Vector),
            _ => None,
        };
        typed.ok_or_else(|| {
            let names = ChipField::names();
            let plain: Vec<String> = PLAIN.iter().map(|f| f.to_string()).collect();
            format!(
                "unknown chip field `{s}`{}; a what-if chip may set: {}, matrix.TYPE, vector.TYPE (TYPE: {})",
                did_you_mean(s, names.iter().map(String::as_str)),
                plain.join(", "),
                DType::ALL.map(DType::name).join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for name in ChipField::names() {
            assert_eq!(name.parse::<ChipField>().unwrap().to_string(), name);
        }
        assert_eq!(
            "matrix.fp8".parse::<ChipField>(),
            Ok(ChipField::Matrix(DType::Fp8))
        );
    }

    #[test]
    fn unknown_fields_suggest_the_closest() {
        let e = "memory.bandwith".parse::<ChipField>().unwrap_err();
        assert!(e.contains("did you mean `memory.bandwidth`?"), "{e}");
        assert!(e.contains("price.purchase"), "{e}");
        let e = "matrix.fp9".parse::<ChipField>().unwrap_err();
        assert!(e.contains("did you mean `matrix.fp8`?"), "{e}");
    }
}
