//! A chip file's `price` section: the cloud price on its basis and the purchase price, each
//! checked against its range, every problem reported at its place.

use crate::base::diagnostic::Origin;
use crate::base::ranges;
use crate::base::units::QuantityKind;

use super::file::{ChipFile, PriceFile};
use super::load::Checker;
use super::{ChipPrices, PurchaseBasis};

impl Checker<'_> {
    /// The `price` section; an empty [`ChipPrices`] when the file has none.
    pub(super) fn prices(&mut self, file: Option<&PriceFile>) -> ChipPrices {
        let Some(file) = file else {
            return ChipPrices {
                purchase_gpus: 1,
                ..ChipPrices::default()
            };
        };
        let basis = file.basis.as_ref().map(|b| b.value.trim());
        if let Some(b) = file.basis.as_ref().filter(|b| b.value.trim().is_empty()) {
            self.problem(
                &Origin::of("price.basis", b),
                "must name the provider, tier and date",
            );
        }
        let cloud = file.cloud.as_ref().filter(|c| c.value.trim() != "none");
        if let (Some(c), None) = (file.cloud.as_ref(), basis) {
            self.problem(
                &Origin::of("price.cloud", c),
                "a cloud price needs its basis: add `basis:` (provider, tier and date) to `price`",
            );
        }
        let cloud_usd_per_hour = self.optional(&ranges::PRICE_CLOUD, cloud, QuantityKind::Price);
        let purchase_system_usd = self.optional(
            &ranges::PRICE_PURCHASE,
            file.purchase.as_ref(),
            QuantityKind::Money,
        );
        let mut purchase_gpus = 1;
        if let Some(gpus) = file.purchase_gpus.as_ref() {
            self.count(&ranges::PRICE_PURCHASE_GPUS, gpus);
            purchase_gpus = gpus.value.max(1);
            if file.purchase.is_none() {
                self.problem(
                    &Origin::of("price.purchase_gpus", gpus),
                    "counts the GPUs of a purchase price: add `purchase:` (the system's price)",
                );
            }
        }
        ChipPrices {
            cloud_basis: basis.filter(|b| !b.is_empty()).map(Into::into),
            cloud_usd_per_hour,
            purchase_system_usd,
            purchase_gpus,
            ..ChipPrices::default()
        }
    }
}

impl Checker<'_> {
    /// `price.purchase_basis` and `power_basis`: what the purchase price buys and what the
    /// power measures. A built-in file must name both, so that the catalogue's costs are on
    /// one basis; a user's file may leave them out, and its TCO then says which part it lacks.
    pub(super) fn bases(&mut self, file: &ChipFile, prices: ChipPrices) -> ChipPrices {
        let purchase_basis = file.price.as_ref().and_then(|p| p.purchase_basis.as_ref());
        let power_basis = file.power_basis.as_ref();
        if self.builtin() {
            let purchase = file.price.as_ref().and_then(|p| p.purchase.as_ref());
            if let (Some(p), None) = (purchase, purchase_basis) {
                self.problem(
                    &Origin::of("price.purchase_basis", p),
                    "a built-in chip file must say what its purchase price buys: add \
                     `purchase_basis: system` (a server or rack with its host, scale-up fabric \
                     and NICs, over its accelerators) or `accelerator` (the accelerator alone)",
                );
            }
            if let (Some(p), None) = (file.power.as_ref(), power_basis) {
                self.problem(
                    &Origin::of("power_basis", p),
                    "a built-in chip file must say what its power measures: add `power_basis: \
                     system` (a system's input over its accelerators) or `accelerator` (TDP)",
                );
            }
        }
        if let Some(b) = purchase_basis {
            let purchase = file.price.as_ref().and_then(|p| p.purchase.as_ref());
            if (b.value == PurchaseBasis::NotSold) == purchase.is_some() {
                self.problem(
                    &Origin::of("price.purchase_basis", b),
                    "`not-sold` goes with no `purchase`, and `system` or `accelerator` with one",
                );
            }
        }
        if let (Some(b), None) = (power_basis, file.power.as_ref()) {
            self.problem(
                &Origin::of("power_basis", b),
                "says what `power` measures: add `power:`",
            );
        }
        ChipPrices {
            purchase_basis: purchase_basis.map(|b| b.value),
            power_basis: power_basis.map(|b| b.value),
            ..prices
        }
    }
}
