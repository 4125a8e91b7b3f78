//! The columns of a what-if sweep's chip fields (`--chip-set`): one per field swept, named
//! `chip_` and the field, in the column table's units (`chip_memory_bandwidth_tb_s`,
//! `chip_matrix_fp8_tflops`, `chip_launch_us`), as the chip list writes the same figures.

use super::Value;
use crate::base::chip_field::ChipField;
use crate::core::chip::Chip;

/// The column of one swept chip field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChipColumn {
    name: String,
    field: ChipField,
}

impl ChipColumn {
    pub(crate) fn of(field: ChipField) -> ChipColumn {
        let name = match field {
            ChipField::MemoryCapacity => "chip_memory_capacity_bytes".to_owned(),
            ChipField::MemoryBandwidth => "chip_memory_bandwidth_tb_s".to_owned(),
            ChipField::Matrix(d) => format!("chip_matrix_{d}_tflops"),
            ChipField::Vector(d) => format!("chip_vector_{d}_tflops"),
            ChipField::CacheSize => "chip_cache_size_bytes".to_owned(),
            ChipField::CacheBandwidth => "chip_cache_bandwidth_tb_s".to_owned(),
            ChipField::InterconnectBandwidth => "chip_interconnect_bandwidth_tb_s".to_owned(),
            ChipField::Launch => "chip_launch_us".to_owned(),
            ChipField::PriceCloud => "chip_price_cloud_usd_per_hour".to_owned(),
            ChipField::PricePurchase => "chip_price_purchase_usd".to_owned(),
            ChipField::Power => "chip_power_w".to_owned(),
        };
        ChipColumn { name, field }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The chip's value of the field in the column's unit; empty where it has none.
    pub(crate) fn value(&self, chip: &Chip) -> Value<'static> {
        let si = chip.field(self.field);
        let column = match self.field {
            ChipField::MemoryBandwidth
            | ChipField::CacheBandwidth
            | ChipField::InterconnectBandwidth
            | ChipField::Matrix(_)
            | ChipField::Vector(_) => si.map(|v| v / 1e12),
            ChipField::Launch => si.map(|s| s * 1e6),
            ChipField::MemoryCapacity
            | ChipField::CacheSize
            | ChipField::PriceCloud
            | ChipField::PricePurchase
            | ChipField::Power => si,
        };
        column.into()
    }
}

/// The swept chip fields' cells of a row: the columns and the row's chip.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WhatIfCells<'a> {
    pub columns: &'a [ChipColumn],
    /// `None` for the sample row a header and a filter are made from: its cells are numbers
    /// (0), as a param's are.
    pub chip: Option<&'a Chip>,
}

impl WhatIfCells<'_> {
    /// No swept field: no column.
    pub(crate) const NONE: WhatIfCells<'static> = WhatIfCells {
        columns: &[],
        chip: None,
    };

    pub(super) fn visit<F: FnMut(&str, Value<'_>) + ?Sized>(&self, f: &mut F) {
        for column in self.columns {
            let value = self.chip.map_or(Value::Num(0.0), |c| column.value(c));
            f(column.name(), value);
        }
    }
}
