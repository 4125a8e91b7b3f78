//! Power capping (`--power-cap W`, as `nvidia-smi -pl` sets a board power limit): the chip's
//! compute clock falls so that its power fits the cap, read off a measured perf-vs-power
//! curve in the chip file (`power_curve`), and the chip's power figure falls by what the cap
//! takes off its TDP. Only the clock of the compute units moves: matrix, vector and
//! special-function peaks and the on-chip cache's bandwidth (in the same clock domain) scale
//! by the curve's clock, while HBM runs on its own clock, which the cap does not lower, so
//! the bandwidth stays. A step's compute-bound work slows by the clock; its memory-bound work
//! does not; a mixed step in between, by how much of its time sits on the compute roof. This
//! split is derived from the physics the curve's source states, not measured per op.
//! A chip without a curve refuses the flag, naming why: no figure is guessed.

use serde::Deserialize;
use serde_saphyr::Spanned;

use indexmap::IndexMap;

use super::load::Checker;
use super::{Chip, Support};
use crate::base::diagnostic::Origin;
use crate::base::ranges;
use crate::base::units::QuantityKind;

/// A chip file's `power_curve` section as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PowerCurveFile {
    /// The source of the points (an id in docs/sources.md).
    source: Spanned<String>,
    /// The board power limit at which the clock is the datasheet's: the chip's TDP.
    tdp: Spanned<String>,
    /// Board power limit -> compute clock (or compute-bound throughput) over the TDP's.
    points: Spanned<IndexMap<String, Spanned<f64>>>,
}

/// A measured perf-vs-power curve: compute clock over the TDP's at each board power limit,
/// ordered by power, each clock at most the next's.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerCurve {
    source: String,
    tdp_w: f64,
    /// (power limit in W, relative clock), by power, the TDP's (tdp, 1) last.
    points: Vec<(f64, f64)>,
}

impl PowerCurve {
    /// The source of the points, as docs/sources.md names it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The board power limit at which the clock is the datasheet's, in W.
    pub fn tdp_w(&self) -> f64 {
        self.tdp_w
    }

    /// The measured points, (W, clock over the TDP's), by power; the TDP's own (tdp, 1) last.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The compute clock over the TDP's under a cap of `cap_w`, linear between the two
    /// points around it; 1 at or above the TDP; `None` below the lowest point measured.
    pub fn clock_at(&self, cap_w: f64) -> Option<f64> {
        if cap_w >= self.tdp_w {
            return Some(1.0);
        }
        let above = self.points.iter().position(|(w, _)| *w >= cap_w)?;
        let (w1, c1) = self.points[above];
        if above == 0 {
            return (w1 == cap_w).then_some(c1);
        }
        let (w0, c0) = self.points[above - 1];
        Some(c0 + (c1 - c0) * (cap_w - w0) / (w1 - w0))
    }
}

/// Why a chip cannot be held to a power cap.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PowerCapError {
    /// The chip file gives no measured perf-vs-power curve.
    #[error(
        "--power-cap: `{chip}` ({family}) has no measured perf-vs-power curve: no public \
         figures of its compute clock under a power limit were found, and stepcost does not \
         guess one (a chip file's `power_curve` section gives one, with its source)"
    )]
    NoCurve {
        /// The chip's id.
        chip: String,
        /// Its family, or `no family`.
        family: String,
    },
    /// The cap is below the lowest power the curve measured.
    #[error(
        "--power-cap {cap_w} W: `{chip}`'s power curve ({curve_source}) starts at {lowest_w} W; \
         below it there is no measured clock"
    )]
    BelowCurve {
        /// The chip's id.
        chip: String,
        /// The cap asked for, in W.
        cap_w: f64,
        /// The lowest power limit measured, in W.
        lowest_w: f64,
        /// The curve's source.
        curve_source: String,
    },
}

impl Chip {
    /// The chip's measured perf-vs-power curve, where its file gives one.
    pub fn power_curve(&self) -> Option<&PowerCurve> {
        self.power_curve.as_ref()
    }

    /// The chip held to a board power limit of `cap_w`, or why it cannot be: no curve, or a
    /// cap below the curve. Its compute peaks and cache bandwidth scale by the curve's clock
    /// at the cap, its HBM bandwidth stays, and its power falls by the TDP less the cap. A cap
    /// at or above the TDP leaves the chip as it is.
    pub fn with_power_cap(mut self, cap_w: f64) -> Result<Chip, PowerCapError> {
        let Some(curve) = self.power_curve.clone() else {
            return Err(PowerCapError::NoCurve {
                chip: self.id.clone(),
                family: self.family.clone().unwrap_or_else(|| "no family".into()),
            });
        };
        let clock = curve
            .clock_at(cap_w)
            .ok_or_else(|| PowerCapError::BelowCurve {
                chip: self.id.clone(),
                cap_w,
                lowest_w: curve.points[0].0,
                curve_source: curve.source.clone(),
            })?;
        if cap_w >= curve.tdp_w {
            return Ok(self);
        }
        for table in [&mut self.matrix, &mut self.vector] {
            for support in table.0.iter_mut().flatten() {
                if let Support::Peak(p) = support {
                    *p *= clock;
                }
            }
        }
        self.sfu_ops_per_s = self.sfu_ops_per_s.map(|s| s * clock);
        if let Some(bw) = self
            .cache
            .as_mut()
            .and_then(|c| c.bandwidth_bytes_per_s.as_mut())
        {
            *bw *= clock;
        }
        // The cap takes (TDP - cap) off the accelerator; a system figure keeps its host share.
        self.power_w = self.power_w.map(|w| w - (curve.tdp_w - cap_w));
        Ok(self)
    }
}

impl Checker<'_> {
    /// A `power_curve` section: its TDP and points parsed and checked (each point below the
    /// TDP, its clock in range and no higher than a higher power's).
    pub(super) fn power_curve(&mut self, file: &PowerCurveFile) -> Option<PowerCurve> {
        let before = self.problem_count();
        let tdp_w = self.quantity(&ranges::POWER, &file.tdp, QuantityKind::Power);
        let mut points = Vec::new();
        for (power, clock) in &file.points.value {
            let at = Spanned::new(power.clone(), clock.referenced, clock.defined);
            let Some(w) = self.quantity(&ranges::POWER, &at, QuantityKind::Power) else {
                continue;
            };
            if let Err(e) = ranges::POWER_CURVE_CLOCK.check(clock.value) {
                let origin = Origin::of("power_curve.points", clock);
                self.problem(&origin, format!("`{}` is {e}", clock.value));
                continue;
            }
            points.push((w, clock.value));
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let tdp_w = tdp_w?;
        let origin = Origin::of("power_curve.points", &file.points);
        if points.is_empty() {
            self.problem(
                &origin,
                "a power curve needs at least one point below the TDP",
            );
        }
        if points.iter().any(|(w, _)| *w >= tdp_w) {
            self.problem(
                &origin,
                "every point's power must be below the curve's `tdp`",
            );
        }
        points.push((tdp_w, 1.0));
        if points.windows(2).any(|p| p[0].1 > p[1].1) {
            self.problem(&origin, "a lower power limit cannot give a higher clock");
        }
        (self.problem_count() == before).then(|| PowerCurve {
            source: file.source.value.trim().to_owned(),
            tdp_w,
            points,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::base::source::Source;
    use crate::core::chip::Chip;

    fn chip(curve: &str) -> Chip {
        let text = format!(
            "name: t\nfamily: test-family\nmemory: {{capacity: 80 GB, bandwidth: 2 TB/s}}\n\
             matrix: {{bf16: 1 PFLOPS}}\nvector: {{bf16: 100 TFLOPS}}\npower: 700 W\n{curve}"
        );
        Chip::load(&Source::from_text("t.yaml", &text)).unwrap()
    }

    const CURVE: &str = "power_curve: {source: X1, tdp: 700 W, points: {400 W: 0.6, 550 W: 0.9}}\n";

    #[test]
    fn the_clock_is_read_off_the_curve_and_only_compute_slows() {
        let c = chip(CURVE);
        let curve = c.power_curve().unwrap();
        assert_eq!(curve.clock_at(550.0), Some(0.9));
        assert_eq!(curve.clock_at(400.0), Some(0.6));
        // halfway between 400 W (0.6) and 550 W (0.9)
        assert!((curve.clock_at(475.0).unwrap() - 0.75).abs() < 1e-12);
        // between 550 W (0.9) and the TDP (1.0)
        assert!((curve.clock_at(625.0).unwrap() - 0.95).abs() < 1e-12);
        assert_eq!(curve.clock_at(800.0), Some(1.0));
        assert_eq!(curve.clock_at(399.0), None);
        let capped = c.clone().with_power_cap(475.0).unwrap();
        let bf16 = crate::base::dtype::DType::Bf16;
        assert!((capped.matrix_peak(bf16).unwrap() - 0.75e15).abs() < 1.0);
        assert!((capped.vector_peak(bf16).unwrap().1 - 0.75e14).abs() < 1.0);
        assert_eq!(capped.bandwidth_bytes_per_s(), c.bandwidth_bytes_per_s());
        assert_eq!(capped.power_w(), Some(475.0));
        assert_eq!(c.clone().with_power_cap(900.0).unwrap(), c);
    }

    #[test]
    fn a_chip_without_a_curve_or_below_it_refuses_naming_why() {
        let none = chip("").with_power_cap(500.0).unwrap_err();
        assert!(none.to_string().contains("`t` (test-family)"), "{none}");
        assert!(none.to_string().contains("no public figures"), "{none}");
        let below = chip(CURVE).with_power_cap(300.0).unwrap_err();
        assert!(below.to_string().contains("starts at 400 W"), "{below}");
    }

    #[test]
    fn a_bad_curve_is_reported() {
        let text =
            "name: t\nmemory: {capacity: 80 GB, bandwidth: 2 TB/s}\nmatrix: {bf16: 1 PFLOPS}\n\
                    power_curve: {source: X1, tdp: 700 W, points: {400 W: 0.9, 550 W: 0.6}}\n";
        let err = Chip::load(&Source::from_text("t.yaml", text)).unwrap_err();
        assert!(err.to_string().contains("higher clock"), "{err}");
        let text = text.replace("0.9, 550 W: 0.6", "1.5");
        let err = Chip::load(&Source::from_text("t.yaml", &text)).unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }
}
