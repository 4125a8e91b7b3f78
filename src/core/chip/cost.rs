//! A chip file's `price` section: the cloud price on its basis and the purchase price, each
//! checked against its range, every problem reported at its place.

use crate::base::diagnostic::Origin;
use crate::base::ranges;
use crate::base::units::QuantityKind;

use super::file::PriceFile;
use super::load::Checker;
use super::ChipPrices;

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
        }
    }
}
