//! The 80 % band of a serving point's times and rates (expected mode; none in roofline mode).
//!
//! The rule: each number takes the band of the measured rows that measure it, so that the band
//! was calibrated on errors of that very quantity. The measured set files time-to-first-token
//! rows as prefills and per-output-token rows as decode steps, and whole requests (end-to-end
//! latency, output tokens/s of a batch) as `request`. So TTFT takes the prefill band, TPOT
//! (and tokens/s per user, its inverse) the decode band, and the end-to-end latency and the
//! rates and costs that follow from it (output tokens/s, per chip, requests/s, $ per million
//! tokens) the request band. Where the request kind's rows come from too few sources for a band of its
//! own ([`crate::study::band::MIN_SOURCES`]), the end-to-end latency is derived from its parts,
//! `e2e = TTFT + (O - 1) TPOT` exactly (`Server::steady_state`), each part at its band's
//! end: both ends move together, which is the wider (and safer) reading of two bands.

use std::sync::OnceLock;

use crate::core::scenario::Mode;
use crate::core::timing::RequestSummary;
use crate::study::band::{shipped, Band, BandKind, Calibration, Scope};

use super::ServingPoint;

/// The bands of one chip's serving numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServingBand {
    /// Time to first token's (the prefill band).
    pub prefill: Band,
    /// Time per output token's (the decode band).
    pub decode: Band,
    /// A whole request's, where the measured set has enough request rows for one.
    pub request: Option<Band>,
}

impl ServingBand {
    /// The shipped bands of a point priced in `mode` on a chip of `family` (none in roofline
    /// mode, a ceiling). Worked out once per process for every family: a sweep looks them up
    /// for each row that priced a request.
    pub fn of(mode: Mode, family: Option<&str>) -> Option<ServingBand> {
        match mode {
            Mode::Roofline => None,
            Mode::Expected => Shipped::get().of(family),
        }
    }

    /// The bands `calibration` gives a chip of `family`.
    pub fn from_calibration(
        calibration: &Calibration,
        family: Option<&str>,
    ) -> Option<ServingBand> {
        let own = |kind: BandKind| {
            (calibration.groups.iter()).any(|g| match &g.scope {
                Scope::Kind(k) | Scope::KindFamily(k, _) => *k == kind,
                Scope::All => false,
            })
        };
        Some(ServingBand {
            prefill: calibration.band(BandKind::Prefill, family)?,
            decode: calibration.band(BandKind::Decode, family)?,
            request: own(BandKind::Request)
                .then(|| calibration.band(BandKind::Request, family))
                .flatten(),
        })
    }

    /// The band of a point's TTFT, in seconds.
    pub fn ttft_s(&self, p: &ServingPoint) -> (f64, f64) {
        self.prefill.time(p.ttft_s)
    }

    /// The band of a point's TPOT, in seconds.
    pub fn tpot_s(&self, p: &ServingPoint) -> (f64, f64) {
        self.decode.time(p.tpot_s)
    }

    /// The multipliers of a point's end-to-end latency: the request band, or the band of its
    /// TTFT and its `output_tokens - 1` TPOTs, each at its end.
    pub fn e2e(&self, p: &ServingPoint, output_tokens: u64) -> Band {
        self.e2e_of(p.ttft_s, p.tpot_s, output_tokens)
    }

    /// [`ServingBand::e2e`] of a request with this TTFT and TPOT.
    pub fn e2e_of(&self, ttft_s: f64, tpot_s: f64, output_tokens: u64) -> Band {
        if let Some(b) = self.request {
            return b;
        }
        let later = (output_tokens as f64 - 1.0) * tpot_s;
        let (t_low, t_high) = self.prefill.time(ttft_s);
        let (d_low, d_high) = self.decode.time(later);
        let whole = ttft_s + later;
        Band {
            low: (t_low + d_low) / whole,
            high: (t_high + d_high) / whole,
        }
    }

    /// A priced request's numbers at an end of their bands, by the rule of serving points
    /// ([`ServingBand::at_end`]): TTFT at the prefill band's, TPOT at the decode band's, the
    /// end-to-end latency at [`ServingBand::e2e_of`]'s and the output rate with it.
    pub fn request_at_end(&self, r: &RequestSummary, high: bool) -> RequestSummary {
        let pick = |b: Band| if high { b.high } else { b.low };
        let e2e = pick(self.e2e_of(r.ttft_s, r.tpot_s, r.output_tokens));
        RequestSummary {
            ttft_s: r.ttft_s * pick(self.prefill),
            tpot_s: r.tpot_s * pick(self.decode),
            e2e_s: r.e2e_s * e2e,
            output_tokens_per_s: r.output_tokens_per_s / e2e,
            ..*r
        }
    }

    /// A point's numbers at an end of their bands: `high` the slow end (times at their
    /// band's high end, rates at their low end), else the fast end. Costs per token follow
    /// the rate.
    pub fn at_end(&self, p: &ServingPoint, output_tokens: u64, high: bool) -> ServingPoint {
        let pick = |b: Band| if high { b.high } else { b.low };
        let e2e = pick(self.e2e(p, output_tokens));
        let tpot = pick(self.decode);
        let cost = |usd: Option<f64>| usd.map(|u| u * e2e);
        ServingPoint {
            ttft_s: p.ttft_s * pick(self.prefill),
            tpot_s: p.tpot_s * tpot,
            e2e_s: p.e2e_s * e2e,
            output_tokens_per_s: p.output_tokens_per_s / e2e,
            output_tokens_per_s_per_chip: p.output_tokens_per_s_per_chip / e2e,
            tokens_per_s_per_user: p.tokens_per_s_per_user / tpot,
            requests_per_s: p.requests_per_s / e2e,
            cloud_usd_per_million_tokens: cost(p.cloud_usd_per_million_tokens),
            tco_usd_per_million_tokens: cost(p.tco_usd_per_million_tokens),
            tokens_per_kwh: p.tokens_per_kwh.map(|t| t / e2e),
            ..p.clone()
        }
    }
}

/// The shipped serving bands: those of each family the measured set has rows of, and the one
/// every other family (or none) takes, which is the calibration's kind-wide or overall band.
struct Shipped {
    families: Vec<(String, Option<ServingBand>)>,
    other: Option<ServingBand>,
}

impl Shipped {
    fn get() -> &'static Shipped {
        static SHIPPED: OnceLock<Shipped> = OnceLock::new();
        SHIPPED.get_or_init(|| {
            let calibration = shipped();
            let mut names: Vec<&str> = (calibration.groups.iter())
                .filter_map(|g| match &g.scope {
                    Scope::KindFamily(_, family) => Some(family.as_str()),
                    Scope::Kind(_) | Scope::All => None,
                })
                .collect();
            names.sort_unstable();
            names.dedup();
            Shipped {
                families: (names.into_iter())
                    .map(|f| {
                        (
                            f.to_owned(),
                            ServingBand::from_calibration(calibration, Some(f)),
                        )
                    })
                    .collect(),
                other: ServingBand::from_calibration(calibration, None),
            }
        })
    }

    fn of(&self, family: Option<&str>) -> Option<ServingBand> {
        let own = family.and_then(|f| self.families.iter().find(|(name, _)| name == f));
        own.map_or(self.other, |(_, band)| *band)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::band::Residual;

    /// `n` residuals of `kind` at `first`, `first + 0.1`, ...
    fn rows(kind: BandKind, first: f64, n: usize) -> Vec<Residual> {
        (0..n)
            .map(|i| Residual {
                id: format!("S{i}-{}", kind.name()),
                kind,
                family: "f".into(),
                ln_time_ratio: first + 0.1 * i as f64,
            })
            .collect()
    }

    #[test]
    fn without_request_rows_a_request_s_band_is_its_parts_at_their_ends() {
        // Ten decode residuals 0.0 to 0.9, one per source: the j-th smallest sits at
        // percentile j / 11, so the 10th percentile is at j = 1.1 (0.01) and the 90th at
        // j = 9.9 (0.89). Ten prefill residuals -0.45 to 0.45: -0.44 and 0.44.
        let mut residuals = rows(BandKind::Decode, 0.0, 10);
        residuals.extend(rows(BandKind::Prefill, -0.45, 10));
        let band = ServingBand::from_calibration(&Calibration::of(&residuals), None).unwrap();
        assert_eq!(band.request, None);
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12, "{a} against {b}");
        close(band.decode.high, 0.89f64.exp());
        close(band.prefill.low, (-0.44f64).exp());
        // TTFT 100 ms, TPOT 20 ms, 11 output tokens: 300 ms end to end, of which 100 ms at
        // the prefill band and 200 ms at the decode band.
        let e2e = band.e2e_of(0.1, 0.02, 11);
        close(
            e2e.low,
            (0.1 * (-0.44f64).exp() + 0.2 * 0.01f64.exp()) / 0.3,
        );
        close(e2e.high, (0.1 * 0.44f64.exp() + 0.2 * 0.89f64.exp()) / 0.3);
        // With ten request rows, 0.2 to 1.1, the request band: 0.21 and 1.09.
        residuals.extend(rows(BandKind::Request, 0.2, 10));
        let band = ServingBand::from_calibration(&Calibration::of(&residuals), None).unwrap();
        let e2e = band.e2e_of(0.1, 0.02, 11);
        close(e2e.low, 0.21f64.exp());
        close(e2e.high, 1.09f64.exp());
    }

    #[test]
    fn a_priced_request_s_ends_follow_the_serving_rule() {
        // Decode band e^0.01 to e^0.89 and prefill band e^-0.44 to e^0.44, as above, no
        // request band. A request of 11 output tokens at TTFT 100 ms and TPOT 20 ms: 300 ms
        // end to end, 4 sequences so 4 x 11 / 0.3 tokens/s.
        let mut residuals = rows(BandKind::Decode, 0.0, 10);
        residuals.extend(rows(BandKind::Prefill, -0.45, 10));
        let band = ServingBand::from_calibration(&Calibration::of(&residuals), None).unwrap();
        let r = RequestSummary {
            input_tokens: 512,
            output_tokens: 11,
            ttft_s: 0.1,
            tpot_s: 0.02,
            e2e_s: 0.3,
            output_tokens_per_s: 4.0 * 11.0 / 0.3,
            footprint_bytes: 1e9,
            fits: true,
        };
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-12 * b, "{a} against {b}");
        let slow = band.request_at_end(&r, true);
        close(slow.ttft_s, 0.1 * 0.44f64.exp());
        close(slow.tpot_s, 0.02 * 0.89f64.exp());
        let e2e_s = 0.1 * 0.44f64.exp() + 0.2 * 0.89f64.exp();
        close(slow.e2e_s, e2e_s);
        close(slow.output_tokens_per_s, 4.0 * 11.0 / e2e_s);
        let fast = band.request_at_end(&r, false);
        close(fast.ttft_s, 0.1 * (-0.44f64).exp());
        close(fast.e2e_s, 0.1 * (-0.44f64).exp() + 0.2 * 0.01f64.exp());
        assert_eq!((fast.input_tokens, fast.output_tokens), (512, 11));
    }

    #[test]
    fn the_shipped_bands_of_a_family_are_its_calibration_s() {
        let families = [
            "nvidia-hopper",
            "nvidia-ampere",
            "amd-cdna3",
            "no-such-family",
        ];
        for family in families.into_iter().map(Some).chain([None]) {
            assert_eq!(
                ServingBand::of(Mode::Expected, family),
                ServingBand::from_calibration(shipped(), family),
                "{family:?}"
            );
            assert_eq!(ServingBand::of(Mode::Roofline, family), None);
        }
    }
}
