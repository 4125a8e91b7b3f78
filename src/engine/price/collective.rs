//! A collective's cost: the bytes each chip of its group sends over the interconnect (or, past
//! the scale-up domain, the network), and in expected mode a latency per algorithm step, the
//! choice between a ring and a tree, and the kernel's launch.

use crate::base::dtype::DType;
use crate::base::error::{Error, Unsupported};
use crate::engine::chip::{Chip, Interconnect};
use crate::engine::scenario::Mode;
use crate::engine::workload::{Algorithm, Collective, Kernel, Op};

use super::{Bound, Context, KernelCost, Unit};

/// Prices a collective on the interconnect: roofline mode counts the bytes each chip must send
/// over its link (a ring's `2 (n - 1) / n` of the buffer for an all-reduce, `(n - 1) / n` for the
/// others); expected mode adds a latency per algorithm step and takes the faster of a ring and
/// a tree (all-reduce), plus the kernel's launch. A group of one chip is no collective at all.
pub(super) fn price_collective(
    cx: &Context,
    kernel: &Kernel,
    collective: Collective,
    algorithm: Option<Algorithm>,
) -> Result<KernelCost, Error> {
    let i = kernel.members[0];
    let op = &cx.workload.ops[i];
    let n = cx.ev.group[i];
    if n <= 1.0 {
        return Ok(KernelCost::ABSENT);
    }
    let format = cx.dtypes.role(op.out_role);
    let dtype = format.element();
    let bytes = match collective {
        Collective::ReduceScatter => cx.ev.out_elements[i] * n,
        _ => cx.ev.out_elements[i],
    } * format.bytes();
    let transfer = Transfer {
        collective,
        bytes,
        chips: n,
        route: route(cx.chip, op, dtype, n)?,
    };
    let roofline = transfer.roofline_s();
    let (time_s, launch_s) = match cx.mode {
        Mode::Roofline => (roofline, 0.0),
        Mode::Expected => {
            let launch = cx.chip.launch_s.unwrap_or(0.0);
            (launch + transfer.expected_s(algorithm), launch)
        }
    };
    Ok(KernelCost {
        count: cx.ev.repeats[kernel.block],
        flops: 0.0,
        bytes,
        compute_dtype: dtype,
        unit: Unit::Vector,
        compute_time_s: 0.0,
        memory_time_s: roofline,
        time_s,
        bound: Bound::Interconnect,
        activation_bytes: 2.0 * bytes,
        roofline_time_s: roofline,
        expected_compute_s: 0.0,
        expected_memory_s: time_s - launch_s,
        launch_s,
        quantization: 1.0,
        cache_hit_bytes: 0.0,
        scale_bytes: 0.0,
        dequant_s: 0.0,
        scheme: None,
    })
}

/// The path between the chips of a group: its bandwidth per chip and its latency per step.
#[derive(Clone, Copy)]
struct Route {
    bandwidth_bytes_per_s: f64,
    latency_s: f64,
    /// Measured share of the bandwidth a collective reaches (expected mode).
    expected_fraction: f64,
}

/// The interconnect for a group of `n` chips within the scale-up domain, the network beyond
/// it; an error when the chip has neither that reaches.
fn route(chip: &Chip, op: &Op, dtype: DType, n: f64) -> Result<Route, Error> {
    let unreachable = || {
        Error::Unsupported(Box::new(Unsupported {
            op: op.name.clone(),
            dtype,
            chip: chip.id.clone(),
            reason: format!(
                "spans {n} chips, but chip `{}` has no interconnect{}",
                chip.id,
                if chip.interconnect.is_some() {
                    " domain that large and no `network` beyond it"
                } else {
                    ""
                }
            ),
        }))
    };
    let link = chip.interconnect.as_ref().ok_or_else(unreachable)?;
    Ok(match link.domain {
        Some(domain) if n > domain as f64 => {
            let net = chip.network.as_ref().ok_or_else(unreachable)?;
            Route {
                bandwidth_bytes_per_s: net.bandwidth_bytes_per_s,
                latency_s: net.latency_s,
                expected_fraction: 1.0,
            }
        }
        _ => within_domain(link, n),
    })
}

/// A group of `n` chips inside one scale-up domain: the bandwidth its fabric gives each chip
/// (a switch all of it, a mesh the links to the group, a torus a ring per dimension spanned),
/// and the share of it measured on real collectives.
fn within_domain(link: &Interconnect, n: f64) -> Route {
    Route {
        bandwidth_bytes_per_s: link.group_bandwidth_bytes_per_s(n),
        latency_s: link.latency_s,
        expected_fraction: link.expected_fraction(n),
    }
}

/// One collective's buffer moved among its group.
struct Transfer {
    collective: Collective,
    /// The buffer, in bytes.
    bytes: f64,
    chips: f64,
    route: Route,
}

impl Transfer {
    /// A ring's share of the buffer each chip sends, and its algorithm steps.
    fn ring(&self) -> (f64, f64) {
        let n = self.chips;
        match self.collective {
            Collective::AllReduce => (2.0 * (n - 1.0) / n, 2.0 * (n - 1.0)),
            Collective::AllGather | Collective::ReduceScatter | Collective::AllToAll => {
                ((n - 1.0) / n, n - 1.0)
            }
            Collective::SendRecv => (1.0, 1.0),
        }
    }

    /// The bytes each chip sends over its link, at the link's bandwidth.
    fn roofline_s(&self) -> f64 {
        let (share, _) = self.ring();
        share * self.bytes / self.route.bandwidth_bytes_per_s
    }

    /// Expected mode: a latency per algorithm step on top of the bytes; an all-reduce runs as a
    /// ring, a tree, or (no algorithm named) the faster of the two.
    fn expected_s(&self, algorithm: Option<Algorithm>) -> f64 {
        let Route {
            bandwidth_bytes_per_s: roofline_bandwidth,
            latency_s: latency,
            expected_fraction,
        } = self.route;
        let bandwidth = roofline_bandwidth * expected_fraction;
        let (share, steps) = self.ring();
        let ring = share * self.bytes / bandwidth + steps * latency;
        let tree = 2.0 * self.bytes / bandwidth + 2.0 * self.chips.log2().ceil() * latency;
        match (self.collective, algorithm) {
            (Collective::AllReduce, None) => ring.min(tree),
            (Collective::AllReduce, Some(Algorithm::Tree)) => tree,
            _ => ring,
        }
    }
}

/// Hides a collective's transfer behind the kernel before it, which took `previous_s` (chunked,
/// as overlapping implementations pipeline it); only what sticks out, and the launch, remain.
pub(super) fn hide_transfer(cost: &mut KernelCost, previous_s: f64) {
    let transfer = cost.time_s - cost.launch_s;
    cost.time_s = cost.launch_s + (transfer - previous_s).max(0.0);
}
