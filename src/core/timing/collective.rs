//! A collective's cost: the bytes each chip of its group sends over the interconnect, and in
//! expected mode a latency per algorithm step, the choice between a ring and a tree, and the
//! kernel's launch. A group that spans more than one scale-up domain runs hierarchically, as
//! NCCL does across nodes: a reduction inside each node over the link, the exchange of each
//! chip's shard with its peers in the other nodes over the network, a gather inside the node.

use crate::base::dtype::DType;
use crate::base::error::{Error, Unsupported};
use crate::base::types::Slot;
use crate::core::chip::{Chip, Interconnect};
use crate::core::engine::{AllReduceAlgorithm, AllReduceRule};
use crate::core::scenario::Mode;
use crate::core::workload::{Algorithm, Collective, Kernel, Op, OpKind, Ref};

use super::{Basis, Bound, Context, KernelCost, Unit};

/// Prices a collective on the interconnect: roofline mode counts the bytes each chip must send
/// over its link (a ring's `2 (n - 1) / n` of the buffer for an all-reduce, `(n - 1) / n` for the
/// others); expected mode adds a latency per algorithm step and takes the faster of a ring and
/// a tree (all-reduce), plus the kernel's launch. A group laid over more than one scale-up
/// domain is priced as its phases inside and across the nodes ([`Phases::hierarchical`]), each
/// on its own wire. A group of one chip is no collective at all.
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
    let (dtype, bytes_per_element) = wire(cx, i, collective);
    let bytes = match collective {
        Collective::ReduceScatter => cx.ev.out_elements[i] * n,
        _ => cx.ev.out_elements[i],
    } * bytes_per_element;
    // The group's chips lie over `span` chips: past one scale-up domain, each node holds
    // group / nodes of them.
    let span = cx.ev.span[i];
    let domain = (cx.chip.interconnect.as_ref()).and_then(|link| link.domain);
    // An engine's custom all-reduce kernels need peer access among the ranks: they run only
    // within one scale-up domain; a hierarchical collective is NCCL's.
    let mut rules: &[AllReduceRule] = cx.engine.map_or(&[], |e| &e.terms().all_reduce);
    let phases = match domain {
        Some(d) if span > d as f64 => {
            rules = &[];
            let nodes = (span / d as f64).ceil().min(n);
            let link = route(cx.chip, op, dtype, n / nodes)?;
            Phases::hierarchical(
                collective,
                bytes,
                (n / nodes, nodes),
                (link, network(cx.chip, op, dtype, span)?),
            )
        }
        _ => Phases::flat(Transfer {
            collective,
            bytes,
            chips: n,
            route: route(cx.chip, op, dtype, n)?,
        }),
    };
    let roofline = phases.time_s(Transfer::roofline_s);
    let (time_s, launch_s) = match cx.mode {
        Mode::Roofline => (roofline, 0.0),
        Mode::Expected => {
            let launch = cx.launch_s;
            (
                launch + phases.time_s(|t| t.expected_s(algorithm, rules)),
                launch,
            )
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
        memory_fraction: 1.0,
        causal_share: 1.0,
        act_quant_s: 0.0,
        special_s: 0.0,
        scheme: None,
        basis: Basis {
            expected: cx.mode == Mode::Expected,
            network: matches!(domain, Some(d) if span > d as f64),
            ..Basis::default()
        },
    })
}

/// Bytes of an fp8 value sent with its scale: one fp32 scale per 128 values, as DeepEP
/// quantizes a token's hidden state before dispatch (docs/sources.md, X2).
const FP8_WIRE_BYTES: f64 = 1.0 + 4.0 / 128.0;

/// The type op `i` travels in, and its bytes per element: its output's format, except that an
/// all-to-all feeding a GEMM whose weight format multiplies fp8 activations on this chip
/// (`fp8-b128`'s W8A8, `Format::math`) sends them already quantized to fp8 with their scales,
/// as DeepEP dispatches. What comes back from the experts (the combine) stays in its format.
fn wire(cx: &Context, i: usize, collective: Collective) -> (DType, f64) {
    let op = &cx.workload.ops[i];
    let format = cx.dtypes.get(op.out_slot);
    let fed = |o: &Op| (o.inputs.iter()).any(|input| input.source == Ref::Op(i));
    let fp8_math = |o: &Op| {
        let activation = cx.dtypes.get(Slot::Activation);
        let math = (o.weight_format(cx.dtypes)).and_then(|w| w.math(activation));
        math.is_some_and(|(needs, at)| {
            at == DType::Fp8
                && cx.chip.matrix_peak(needs).is_ok()
                && cx.chip.matrix_peak(at).is_ok()
        })
    };
    let block = &cx.workload.blocks[op.block];
    let quantized = collective == Collective::AllToAll
        && format.bytes() > FP8_WIRE_BYTES
        && (cx.workload.ops[block.ops.clone()].iter())
            .any(|o| matches!(o.kind, OpKind::Gemm { .. }) && fed(o) && fp8_math(o));
    match quantized {
        true => (DType::Fp8, FP8_WIRE_BYTES),
        false => (format.element(), format.bytes()),
    }
}

/// The path between the chips of a group: its bandwidth per chip and its latency per step.
#[derive(Clone, Copy)]
struct Route {
    bandwidth_bytes_per_s: f64,
    latency_s: f64,
    /// Measured share of the bandwidth a collective reaches (expected mode).
    expected_fraction: f64,
}

/// The interconnect for a group of `n` chips within one scale-up domain (a group past it is
/// priced by phases, each within a domain or across the network); an error when the chip has
/// no interconnect.
fn route(chip: &Chip, op: &Op, dtype: DType, n: f64) -> Result<Route, Error> {
    let link = chip.interconnect.as_ref().ok_or_else(|| {
        Error::Unsupported(Box::new(Unsupported {
            op: op.name.clone(),
            dtype,
            chip: chip.id.clone(),
            reason: format!(
                "spans {n} chips, but chip `{}` has no interconnect",
                chip.id
            ),
        }))
    })?;
    Ok(within_domain(link, n))
}

/// The network between scale-up domains, for a group of `n` chips that spans them; an error
/// when the chip has none.
fn network(chip: &Chip, op: &Op, dtype: DType, n: f64) -> Result<Route, Error> {
    let net = chip.network.as_ref().ok_or_else(|| {
        Error::Unsupported(Box::new(Unsupported {
            op: op.name.clone(),
            dtype,
            chip: chip.id.clone(),
            reason: format!(
                "spans {n} chips, more than one scale-up domain of chip `{}`, which has no \
                 `network` beyond it",
                chip.id
            ),
        }))
    })?;
    Ok(Route {
        bandwidth_bytes_per_s: net.bandwidth_bytes_per_s,
        latency_s: net.latency_s,
        expected_fraction: 1.0,
    })
}

/// A collective as the transfers it runs: one over the whole group, or the phases of a
/// hierarchical one, each a flat transfer over the chips of one node or one chip per node.
struct Phases {
    phases: [Option<Transfer>; 3],
    /// Whether the phases run at once on their different wires (an all-to-all's transfers
    /// inside and across nodes), so the slowest decides, rather than one after the other.
    concurrent: bool,
}

impl Phases {
    fn flat(transfer: Transfer) -> Phases {
        Phases {
            phases: [Some(transfer), None, None],
            concurrent: false,
        }
    }

    /// The phases of `collective` over `inner` chips in each of `nodes` scale-up domains, with
    /// `bytes` the buffer as [`Transfer`] counts it for the whole group. An all-reduce is a
    /// reduce-scatter inside the node, an all-reduce of each chip's 1/inner shard with its
    /// peers in the other nodes, and an all-gather inside the node (NCCL's hierarchical
    /// algorithms, docs/sources.md X1); an all-gather and a reduce-scatter keep the half they
    /// need; an all-to-all sends the 1/n share for each chip of its own node over the link and
    /// the others over the network at once (DeepEP's internode kernels, X2); a send goes over
    /// the network.
    fn hierarchical(
        collective: Collective,
        bytes: f64,
        (inner, nodes): (f64, f64),
        (link, net): (Route, Route),
    ) -> Phases {
        let phase = |collective, bytes, chips, route| {
            Some(Transfer {
                collective,
                bytes,
                chips,
                route,
            })
        };
        let shard = bytes / inner;
        let phases = match collective {
            Collective::AllReduce => [
                phase(Collective::ReduceScatter, bytes, inner, link),
                phase(Collective::AllReduce, shard, nodes, net),
                phase(Collective::AllGather, bytes, inner, link),
            ],
            Collective::AllGather => [
                phase(Collective::AllGather, shard, nodes, net),
                phase(Collective::AllGather, bytes, inner, link),
                None,
            ],
            Collective::ReduceScatter => [
                phase(Collective::ReduceScatter, bytes, inner, link),
                phase(Collective::ReduceScatter, shard, nodes, net),
                None,
            ],
            // Each chip's buffer holds a 1/(inner x nodes) share for every chip: `inner` of
            // them in its own node (the link's all-to-all over inner / n of the buffer), the
            // rest beyond it (the network's over nodes chips, (nodes - 1) / nodes of it).
            Collective::AllToAll => [
                phase(Collective::AllToAll, bytes / nodes, inner, link),
                phase(Collective::AllToAll, bytes, nodes, net),
                None,
            ],
            Collective::SendRecv => [phase(Collective::SendRecv, bytes, 2.0, net), None, None],
        };
        Phases {
            phases,
            concurrent: collective == Collective::AllToAll,
        }
    }

    /// The collective's time, with `time_s` the time of one phase: the phases' sum, or where
    /// they run at once, the longest.
    fn time_s(&self, time_s: impl Fn(&Transfer) -> f64) -> f64 {
        let times = self.phases.iter().flatten().map(time_s);
        match self.concurrent {
            true => times.fold(0.0, f64::max),
            false => times.sum(),
        }
    }
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
    /// ring, a tree, or (no algorithm named) the first of the engine's `rules` that admits the
    /// buffer and the group, else the faster of a ring and a tree (NCCL's choice). A one-shot
    /// all-reduce reads every other rank's buffer in one step, `(n - 1) x bytes` into each
    /// rank; a two-shot one reduce-scatters and all-gathers over peer buffers in two steps,
    /// moving a ring's `2 (n - 1) / n x bytes`.
    fn expected_s(&self, algorithm: Option<Algorithm>, rules: &[AllReduceRule]) -> f64 {
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
            (Collective::AllReduce, None) => match self.engine_choice(rules) {
                None => ring.min(tree),
                Some(AllReduceAlgorithm::Ring) => ring,
                Some(AllReduceAlgorithm::Tree) => tree,
                Some(AllReduceAlgorithm::OneShot) => {
                    (self.chips - 1.0) * self.bytes / bandwidth + latency
                }
                Some(AllReduceAlgorithm::TwoShot) => share * self.bytes / bandwidth + 2.0 * latency,
            },
            (Collective::AllReduce, Some(Algorithm::Tree)) => tree,
            _ => ring,
        }
    }

    /// The algorithm of the first rule that admits this buffer (bytes per rank) over this
    /// many chips; `None` where none does.
    fn engine_choice(&self, rules: &[AllReduceRule]) -> Option<AllReduceAlgorithm> {
        let admits = |r: &&AllReduceRule| {
            r.up_to_bytes.is_none_or(|b| self.bytes <= b)
                && r.up_to_ranks.is_none_or(|n| self.chips <= n as f64)
        };
        rules.iter().find(admits).map(|r| r.algorithm)
    }
}

/// Hides a collective's transfer behind the kernel before it, which took `previous_s` (chunked,
/// as overlapping implementations pipeline it); only what sticks out, and the launch, remain.
pub(super) fn hide_transfer(cost: &mut KernelCost, previous_s: f64) {
    let transfer = cost.time_s - cost.launch_s;
    cost.time_s = cost.launch_s + (transfer - previous_s).max(0.0);
}
