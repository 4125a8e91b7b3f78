//! The row of the chip list: a chip and one data type of its matrix unit.

use super::{Row, Value};
use crate::core::chip::Chip;

/// A chip and one data type of its matrix unit.
pub(crate) struct ChipRow<'a> {
    pub chip: &'a Chip,
    pub dtype: crate::base::dtype::DType,
    pub peak_flop_per_s: f64,
}

impl Row for ChipRow<'_> {
    fn visit(&self, f: &mut dyn FnMut(&str, Value<'_>)) {
        let c = self.chip;
        let bw = c.bandwidth_bytes_per_s;
        f("chip", Value::Text(&c.id));
        f("name", Value::Text(&c.name));
        f("sku", Value::Text(&c.sku));
        f("dtype", Value::Text(self.dtype.name()));
        f("peak_tflops", Value::Num(self.peak_flop_per_s / 1e12));
        f("bandwidth_tb_s", Value::Num(bw / 1e12));
        f("ridge_flop_per_byte", Value::Num(self.peak_flop_per_s / bw));
        f("capacity_bytes", Value::Num(c.capacity_bytes));
        f("capacity_basis", Value::Text(c.capacity_basis.name()));
        f("marketed_capacity_bytes", c.marketed_capacity_bytes.into());
        f("reserve_bytes", Value::Num(c.reserve_bytes));
        let vector = c.vector_peak(self.dtype).ok().map(|(_, p)| p / 1e12);
        f("vector_tflops", vector.into());
        f("cache_bytes", c.cache.as_ref().map(|x| x.size_bytes).into());
        f("launch_us", c.launch_s.map(|s| s * 1e6).into());
        f("usd_per_hour", c.price_usd_per_hour().into());
        f("price_basis", Value::Text(c.cloud_basis().unwrap_or("")));
        f("purchase_usd", c.purchase_usd().into());
        f(
            "purchase_basis",
            Value::Text(c.purchase_basis().map_or("", |b| b.name())),
        );
        f("power_w", c.power_w.into());
        f(
            "power_basis",
            Value::Text(c.power_basis().map_or("", |b| b.name())),
        );
        f("status", Value::Text(c.status().name()));
        let link = c.interconnect();
        f("fabric", Value::Text(link.map_or("", |l| l.fabric.name())));
        f(
            "interconnect_gb_s",
            link.map(|l| l.bandwidth_bytes_per_s / 1e9).into(),
        );
        f(
            "domain",
            link.and_then(|l| l.domain).map(|d| d as f64).into(),
        );
    }
}
