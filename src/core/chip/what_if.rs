//! What-if chips: a chip with one of its own fields changed ([`ChipField`]), checked against
//! the field's physical range as a chip file's value is. Everything else, the expected-mode
//! fractions included, stays the base chip's.

use crate::base::chip_field::ChipField;
use crate::base::error::Error;
use crate::base::ranges;

use super::{Cache, CapacityBasis, Chip, Interconnect, Support};

/// The cloud price basis of a what-if price on a chip whose file names none.
pub(super) const WHAT_IF_BASIS: &str = "what-if";

impl Chip {
    /// The chip's value of `field` in SI units (bytes, bytes/s, FLOP/s, s, USD/h, USD, W);
    /// `None` where the chip has none (no cache, no price, a type its unit lacks).
    pub fn field(&self, field: ChipField) -> Option<f64> {
        let peak = |s: Option<Support>| match s {
            Some(Support::Peak(p)) => Some(p),
            _ => None,
        };
        match field {
            ChipField::MemoryCapacity => Some(self.capacity_bytes),
            ChipField::MemoryBandwidth => Some(self.bandwidth_bytes_per_s),
            ChipField::Matrix(d) => peak(self.matrix.get(d)),
            ChipField::Vector(d) => peak(self.vector.get(d)),
            ChipField::CacheSize => self.cache.as_ref().map(|c| c.size_bytes),
            ChipField::CacheBandwidth => self.cache.as_ref()?.bandwidth_bytes_per_s,
            ChipField::InterconnectBandwidth => {
                self.interconnect.as_ref().map(|i| i.bandwidth_bytes_per_s)
            }
            ChipField::Launch => self.launch_s,
            ChipField::PriceCloud => self.prices.cloud_usd_per_hour,
            ChipField::PricePurchase => self.purchase_usd(),
            ChipField::Power => self.power_w,
        }
    }

    /// The chip with `field` at `value` (SI units, as [`Chip::field`] gives them), or why
    /// not: a value outside the field's physical range, or a cache bandwidth for a chip
    /// without a cache. A capacity is the usable (reported) figure: the marketed one no
    /// longer describes the chip and is dropped.
    pub fn with_field(mut self, field: ChipField, value: f64) -> Result<Chip, Error> {
        let range = field.range();
        range.check(value).map_err(|e| {
            Error::value(format!(
                "{field}={} for a what-if `{}` is {e}",
                ranges::show(value, range.unit),
                self.id
            ))
        })?;
        match field {
            ChipField::MemoryCapacity => {
                self.capacity_bytes = value;
                self.marketed_capacity_bytes = None;
                self.capacity_basis = CapacityBasis::Reported;
            }
            ChipField::MemoryBandwidth => self.bandwidth_bytes_per_s = value,
            ChipField::Matrix(d) => self.matrix.0[d as usize] = Some(Support::Peak(value)),
            ChipField::Vector(d) => self.vector.0[d as usize] = Some(Support::Peak(value)),
            ChipField::CacheSize => match self.cache.as_mut() {
                Some(cache) => cache.size_bytes = value,
                None => {
                    self.cache = Some(Cache {
                        size_bytes: value,
                        bandwidth_bytes_per_s: None,
                    })
                }
            },
            ChipField::CacheBandwidth => match self.cache.as_mut() {
                Some(cache) => cache.bandwidth_bytes_per_s = Some(value),
                None => {
                    return Err(Error::value(format!(
                        "`{}` has no cache, so cache.bandwidth has nothing to apply to: set cache.size before it",
                        self.id
                    )))
                }
            },
            ChipField::InterconnectBandwidth => match self.interconnect.as_mut() {
                Some(link) => link.bandwidth_bytes_per_s = value,
                None => {
                    self.interconnect = Some(Interconnect::switch(value))
                }
            },
            ChipField::Launch => self.launch_s = Some(value),
            ChipField::PriceCloud => {
                let basis = self.cloud_basis().unwrap_or(WHAT_IF_BASIS).to_owned();
                return Ok(self.with_cloud_price(value, &basis));
            }
            // The file's figure per GPU, on the file's own purchase basis (a buyer's quote,
            // `with_purchase_price`, names none).
            ChipField::PricePurchase => {
                self.prices.purchase_system_usd = Some(value);
                self.prices.purchase_gpus = 1;
            }
            ChipField::Power => self.power_w = Some(value),
        }
        Ok(self)
    }

    /// The chip under another id: a what-if chip's names its derivation
    /// (`h200{memory.bandwidth=9.6TB/s}`).
    pub fn with_id(mut self, id: String) -> Chip {
        self.id = id;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dtype::DType;
    use crate::base::source::Source;

    fn chip(text: &str) -> Chip {
        Chip::load(&Source::from_text("c.yaml", text)).unwrap()
    }

    const BASE: &str = "name: C\nmemory: {capacity: 80 GB, marketed_capacity: 80 GB, bandwidth: 3 TB/s}\nmatrix: {bf16: 1000 TFLOPS, fp4: unsupported}\n";

    #[test]
    fn a_field_set_reads_back_and_the_rest_stays() {
        let base = chip(BASE);
        let c = base.clone().with_field(ChipField::MemoryBandwidth, 8e12);
        let c = c.unwrap();
        assert_eq!(c.field(ChipField::MemoryBandwidth), Some(8e12));
        assert_eq!(c.matrix, base.matrix);
        let c = base.clone().with_field(ChipField::Matrix(DType::Fp4), 5e15);
        assert_eq!(c.unwrap().matrix_peak(DType::Fp4), Ok(5e15));
        let c = base.clone().with_field(ChipField::MemoryCapacity, 96e9);
        let c = c.unwrap();
        assert_eq!((c.capacity_bytes, c.marketed_capacity_bytes), (96e9, None));
        assert_eq!(c.field(ChipField::CacheSize), None);
        let c = base.clone().with_field(ChipField::PriceCloud, 2.5).unwrap();
        assert_eq!(
            (c.field(ChipField::PriceCloud), c.cloud_basis()),
            (Some(2.5), Some("what-if"))
        );
    }

    #[test]
    fn out_of_range_and_missing_cache_are_refused() {
        let base = chip(BASE);
        let e = base.clone().with_field(ChipField::MemoryBandwidth, 1e16);
        let e = e.unwrap_err().to_string();
        assert!(e.contains("memory.bandwidth=10 PB/s"), "{e}");
        assert!(e.contains("out of range"), "{e}");
        let e = base
            .with_field(ChipField::CacheBandwidth, 1e13)
            .unwrap_err();
        assert!(e.to_string().contains("no cache"), "{e}");
    }
}
