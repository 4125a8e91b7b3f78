//! What a chip file's purchase price and power figure stand for (`price.purchase_basis`,
//! `power_basis`): the system the accelerator is sold and run in, or the accelerator alone.
//! The cost model puts every chip on the system basis from these (`core::cost`), so that no
//! part of a system is counted twice or left out.

use serde::{Deserialize, Serialize};

/// What `price.purchase` buys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PurchaseBasis {
    /// A server or rack as sold: its host (CPUs, memory, storage), its scale-up fabric
    /// (NVLink switches, a baseboard) and its scale-out NICs, over its accelerators.
    System,
    /// The accelerator alone (a card, a module, or a baseboard's share without a host): the
    /// TCO adds the host share per accelerator ([`crate::core::cost::HOST_USD`]).
    Accelerator,
    /// Not sold: rented only (a hyperscaler's own chip), so there is no purchase price.
    NotSold,
}

impl PurchaseBasis {
    /// As the chip file and the `purchase_basis` column write it.
    pub fn name(self) -> &'static str {
        match self {
            PurchaseBasis::System => "system",
            PurchaseBasis::Accelerator => "accelerator",
            PurchaseBasis::NotSold => "not-sold",
        }
    }
}

/// What `power` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PowerBasis {
    /// The system's maximum input power over its accelerators: host, fans and switches
    /// included.
    System,
    /// The accelerator's own TDP or TGP: the cost model adds the host's share per
    /// accelerator ([`crate::core::cost::HOST_W`]).
    Accelerator,
}

impl PowerBasis {
    /// As the chip file and the `power_basis` column write it.
    pub fn name(self) -> &'static str {
        match self {
            PowerBasis::System => "system",
            PowerBasis::Accelerator => "accelerator",
        }
    }
}
