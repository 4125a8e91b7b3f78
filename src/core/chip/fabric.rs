//! What a chip's scale-up fabric is, and the bandwidth a group of its chips gets from it: a
//! switch gives every chip its full link to any peer, a point-to-point mesh only the links to
//! the group's other members, a torus a ring per dimension the group spans, PCIe each card's
//! slot. `interconnect` in a chip file says which; this module reads and checks it.

use indexmap::IndexMap;
use serde_saphyr::Spanned;

use crate::base::diagnostic::Origin;
use crate::base::ranges::{self, Range};
use crate::base::units::QuantityKind;

use super::file::InterconnectFile;
use super::load::Checker;

/// The wires of a scale-up domain.
#[derive(Debug, Clone, PartialEq)]
pub enum Fabric {
    /// Links into a switch (NVLink + NVSwitch): full per-chip bandwidth between any pair.
    Switch,
    /// One link per pair of chips (AMD Infinity Fabric, an NVLink bridge pair): a collective
    /// over `g` chips uses the `g - 1` links each has to the group.
    Mesh {
        /// One peer link, per direction.
        link_bytes_per_s: f64,
    },
    /// Nearest-neighbour links in a 2D or 3D torus (TPU ICI): a ring per dimension.
    Torus {
        /// Chips along each dimension (`[16, 16]`).
        dims: Vec<u64>,
    },
    /// Each card's PCIe slot, peer to peer through a switch or staged through the host; the
    /// domain is the GPUs of one server.
    Pcie,
}

impl Fabric {
    /// As the chip file writes it.
    pub fn name(&self) -> &'static str {
        match self {
            Fabric::Switch => "switch",
            Fabric::Mesh { .. } => "mesh",
            Fabric::Torus { .. } => "torus",
            Fabric::Pcie => "pcie",
        }
    }
}

/// The fabric names a chip file may give.
const FABRICS: &str = "switch, mesh, torus or pcie";

/// Scale-up link of one chip.
#[derive(Debug, Clone, PartialEq)]
pub struct Interconnect {
    /// Per direction, per chip: everything the chip can send at once into its fabric.
    pub bandwidth_bytes_per_s: f64,
    /// Chips in one scale-up domain (an 8-GPU NVLink node, a 72-GPU NVL72 rack, the GPUs of a
    /// PCIe server).
    pub domain: Option<u64>,
    /// Time one step of a collective algorithm takes beyond its bytes (0 when not given).
    pub latency_s: f64,
    /// How the domain's chips are wired, which decides what a collective's bytes cross.
    pub fabric: Fabric,
    /// Measured share of the group's bandwidth a collective reaches, by group size (sorted
    /// by chips); expected mode applies it.
    pub measured: Vec<(u64, f64)>,
}

impl Interconnect {
    /// A switched link of `bandwidth_bytes_per_s` per direction, with no domain size.
    pub fn switch(bandwidth_bytes_per_s: f64) -> Interconnect {
        Interconnect {
            bandwidth_bytes_per_s,
            domain: None,
            latency_s: 0.0,
            fabric: Fabric::Switch,
            measured: Vec::new(),
        }
    }

    /// Per direction, per chip: what a collective over `chips` chips of one domain can send
    /// at once on the datasheet's link rates.
    pub fn group_bandwidth_bytes_per_s(&self, chips: f64) -> f64 {
        let all = self.bandwidth_bytes_per_s;
        match &self.fabric {
            Fabric::Switch | Fabric::Pcie => all,
            Fabric::Mesh { link_bytes_per_s } => {
                ((chips - 1.0).max(1.0) * link_bytes_per_s).min(all)
            }
            Fabric::Torus { dims } => {
                // Two links per dimension (a bidirectional ring); the group spans the first
                // dimensions whose product holds it.
                let link = all / (2 * dims.len()) as f64;
                let mut held = 1.0;
                let spanned = dims
                    .iter()
                    .take_while(|d| {
                        let short = held < chips;
                        held *= **d as f64;
                        short
                    })
                    .count()
                    .max(1);
                (2.0 * spanned as f64 * link).min(all)
            }
        }
    }

    /// The measured share of [`Interconnect::group_bandwidth_bytes_per_s`] a collective over
    /// `chips` reaches: the figure for the largest measured group not above it (the smallest
    /// group's below all of them), 1 where nothing is measured.
    pub fn expected_fraction(&self, chips: f64) -> f64 {
        let below = self.measured.iter().rev().find(|(g, _)| *g as f64 <= chips);
        below.or(self.measured.first()).map_or(1.0, |(_, f)| *f)
    }
}

impl Checker<'_> {
    /// The `interconnect` section: its rates, its fabric and what that fabric needs.
    pub(super) fn interconnect(&mut self, link: &InterconnectFile) -> Option<Interconnect> {
        let before = self.problem_count();
        let bandwidth = self.quantity(
            &ranges::INTERCONNECT_BANDWIDTH,
            &link.bandwidth,
            QuantityKind::Bandwidth,
        );
        let latency = self.optional(
            &ranges::INTERCONNECT_LATENCY,
            link.latency.as_ref(),
            QuantityKind::Time,
        );
        let fabric = self.fabric(link);
        let measured = self.measured(link.expected.as_ref());
        let checked = self.problem_count() == before;
        checked.then_some(Interconnect {
            bandwidth_bytes_per_s: bandwidth?,
            domain: link.domain.as_ref().map(|d| d.value),
            latency_s: latency.unwrap_or(0.0),
            fabric: fabric?,
            measured,
        })
    }

    /// The fabric named (a switch where none is), with the field it needs and no field it
    /// does not take.
    fn fabric(&mut self, link: &InterconnectFile) -> Option<Fabric> {
        let name = link.fabric.as_ref().map_or("switch", |f| f.value.trim());
        let stray = |field: &str, given: bool| given.then(|| field.to_owned());
        let mut strays = Vec::new();
        let fabric = match name {
            "switch" | "pcie" => {
                strays.extend(stray("link_bandwidth", link.link_bandwidth.is_some()));
                strays.extend(stray("torus", link.torus.is_some()));
                if name == "pcie" && link.domain.is_none() {
                    self.missing(link, "domain", "the GPUs of one server");
                }
                Some(if name == "pcie" {
                    Fabric::Pcie
                } else {
                    Fabric::Switch
                })
            }
            "mesh" => {
                strays.extend(stray("torus", link.torus.is_some()));
                let Some(rate) = link.link_bandwidth.as_ref() else {
                    self.missing(
                        link,
                        "link_bandwidth",
                        "one peer link's rate, per direction",
                    );
                    return None;
                };
                let range = &ranges::INTERCONNECT_LINK_BANDWIDTH;
                self.quantity(range, rate, QuantityKind::Bandwidth)
                    .map(|link_bytes_per_s| Fabric::Mesh { link_bytes_per_s })
            }
            "torus" => {
                strays.extend(stray("link_bandwidth", link.link_bandwidth.is_some()));
                self.torus(link).map(|dims| Fabric::Torus { dims })
            }
            other => {
                let origin = link
                    .fabric
                    .as_ref()
                    .map(|f| Origin::of("interconnect.fabric", f));
                self.problem(
                    &origin.unwrap_or_else(|| Origin::new("interconnect.fabric", 0, 0)),
                    format!("`{other}` is not a fabric: expected {FABRICS}"),
                );
                return None;
            }
        };
        for field in strays {
            let origin = link
                .fabric
                .as_ref()
                .map(|f| Origin::of("interconnect.fabric", f));
            self.problem(
                &origin.unwrap_or_else(|| Origin::of("interconnect.bandwidth", &link.bandwidth)),
                format!("interconnect.{field} is for another fabric than `{name}`: remove it"),
            );
        }
        fabric
    }

    /// A torus's dimensions: two or three, each at least 2 chips, their product the domain.
    fn torus(&mut self, link: &InterconnectFile) -> Option<Vec<u64>> {
        let Some(dims) = link.torus.as_ref() else {
            self.missing(
                link,
                "torus",
                "the chips along each dimension, e.g. [16, 16]",
            );
            return None;
        };
        let origin = Origin::of("interconnect.torus", dims);
        let chips: f64 = dims.value.iter().map(|d| *d as f64).product();
        if !(2..=3).contains(&dims.value.len()) || dims.value.iter().any(|d| *d < 2) {
            self.problem(
                &origin,
                "expected two or three dimensions of at least 2 chips each, e.g. [16, 16]",
            );
            return None;
        }
        if let Err(e) = ranges::INTERCONNECT_DOMAIN.check(chips) {
            self.problem(&origin, format!("the torus's {chips} chips are {e}"));
            return None;
        }
        match link.domain.as_ref() {
            Some(d) if d.value as f64 != chips => {
                self.problem(
                    &origin,
                    format!(
                        "holds {chips} chips, but interconnect.domain says {}",
                        d.value
                    ),
                );
                None
            }
            _ => Some(dims.value.clone()),
        }
    }

    /// Measured fractions by group size, sorted by chips.
    fn measured(&mut self, entries: Option<&Spanned<IndexMap<u64, f64>>>) -> Vec<(u64, f64)> {
        let Some(entries) = entries else {
            return Vec::new();
        };
        let range: &Range = &ranges::INTERCONNECT_EXPECTED;
        let origin = Origin::of(range.field, entries);
        let mut measured = Vec::new();
        for (chips, fraction) in &entries.value {
            if *chips < 2 {
                let why = "a group of at least 2 chips";
                self.problem(&origin, format!("{chips} chips: expected {why}"));
            } else if let Err(e) = range.check(*fraction) {
                self.problem(&origin, format!("{fraction} for {chips} chips is {e}"));
            } else {
                measured.push((*chips, *fraction));
            }
        }
        measured.sort_by_key(|(chips, _)| *chips);
        measured
    }

    /// Reports a field the fabric needs and the file lacks, at the fabric's line.
    fn missing(&mut self, link: &InterconnectFile, field: &str, what: &str) {
        let name = link.fabric.as_ref().map_or("switch", |f| f.value.trim());
        let at = link
            .fabric
            .as_ref()
            .map_or_else(|| Origin::of("", &link.bandwidth), |f| Origin::of("", f));
        let origin = Origin::new(format!("interconnect.{field}"), at.line, at.column);
        self.problem(
            &origin,
            format!("a `{name}` fabric needs interconnect.{field}: {what}"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(fabric: Fabric, measured: Vec<(u64, f64)>) -> Interconnect {
        Interconnect {
            fabric,
            measured,
            ..Interconnect::switch(400e9)
        }
    }

    #[test]
    fn a_torus_group_gets_two_links_per_dimension_it_spans() {
        // 3D 4x4x4: 6 links of 400/6 GB/s each.
        let cube = link(
            Fabric::Torus {
                dims: vec![4, 4, 4],
            },
            Vec::new(),
        );
        let one = 400e9 / 6.0;
        for (chips, dims) in [
            (2.0, 1.0),
            (4.0, 1.0),
            (5.0, 2.0),
            (16.0, 2.0),
            (17.0, 3.0),
            (64.0, 3.0),
        ] {
            let got = cube.group_bandwidth_bytes_per_s(chips);
            assert!((got - 2.0 * dims * one).abs() < 1.0, "{chips} chips: {got}");
        }
    }

    #[test]
    fn a_mesh_is_capped_by_the_chip_total() {
        let mesh = link(
            Fabric::Mesh {
                link_bytes_per_s: 64e9,
            },
            Vec::new(),
        );
        assert_eq!(mesh.group_bandwidth_bytes_per_s(2.0), 64e9);
        assert_eq!(mesh.group_bandwidth_bytes_per_s(8.0), 400e9); // 7 x 64 = 448, capped
    }

    #[test]
    fn the_measured_share_is_the_largest_group_not_above() {
        let measured = link(Fabric::Switch, vec![(2, 0.7), (8, 0.5)]);
        let at = |g| measured.expected_fraction(g);
        assert_eq!(
            (at(1.0), at(2.0), at(4.0), at(8.0), at(64.0)),
            (0.7, 0.7, 0.7, 0.5, 0.5)
        );
        assert_eq!(link(Fabric::Pcie, Vec::new()).expected_fraction(4.0), 1.0);
    }
}
