//! Layouts past one scale-up domain, for a model no node holds, as practitioners run them:
//! tensor parallelism within the node times pipeline stages or expert-parallel groups across
//! the nodes (vLLM's `tp 8, pp 2` over two 8-GPU nodes), and data-parallel attention with wide
//! expert parallelism, one expert-parallel group per chip (SGLang's and DeepSeek's own
//! deployments of DeepSeek-V3; docs/sources.md, X4).

use crate::base::param::ScenarioParam;

/// Node counts a plan tries past one node, fewest first: it offers the fewest at which a
/// layout fits, and twice as many beside them.
pub(crate) const NODE_COUNTS: [u64; 4] = [2, 4, 8, 16];

/// Most chips a tensor-parallel group spans: one 8-GPU board, as serving engines split a
/// model's heads (a larger scale-up domain still holds whole 8-way groups).
const MOST_TP: u64 = 8;

/// The multi-node layouts over `nodes` scale-up domains of `domain` chips for a workload
/// whose parallel dimensions are `dims` (in its layout order), each a size per dimension.
/// Each node holds the largest power of two of chips its domain has. A family needing a
/// dimension the workload lacks is left out.
pub(crate) fn layouts_over(dims: &[ScenarioParam], domain: u64, nodes: u64) -> Vec<Vec<u64>> {
    let per_node = 1u64 << (63 - domain.max(1).leading_zeros());
    let chips = per_node * nodes;
    let tp = per_node.min(MOST_TP);
    let families: [&[(ScenarioParam, u64)]; 3] = [
        &[(ScenarioParam::Tp, tp), (ScenarioParam::Pp, chips / tp)],
        &[(ScenarioParam::Tp, tp), (ScenarioParam::Ep, chips / tp)],
        &[(ScenarioParam::Ep, chips)],
    ];
    let mut layouts: Vec<Vec<u64>> = Vec::new();
    for family in families {
        let named = family.iter().filter(|(_, size)| *size > 1);
        if !named.clone().all(|(p, _)| dims.contains(p)) {
            continue;
        }
        let layout: Vec<u64> = (dims.iter())
            .map(|d| named.clone().find(|(p, _)| p == d).map_or(1, |(_, s)| *s))
            .collect();
        if !layouts.contains(&layout) {
            layouts.push(layout);
        }
    }
    layouts
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScenarioParam::{Ep, Pp, Tp};

    #[test]
    fn two_eight_gpu_nodes_run_tp_8_with_pp_or_ep_2_or_ep_16() {
        assert_eq!(
            layouts_over(&[Tp, Pp, Ep], 8, 2),
            [vec![8, 2, 1], vec![8, 1, 2], vec![1, 1, 16]]
        );
        // a dense model has no expert parallelism: only the pipeline across the nodes
        assert_eq!(layouts_over(&[Tp, Pp], 8, 4), [vec![8, 4]]);
        // a 72-GPU rack holds 64 chips of a layout, in tensor-parallel groups of 8
        assert_eq!(layouts_over(&[Tp, Pp], 72, 2), [vec![8, 16]]);
        assert!(layouts_over(&[Ep], 8, 2) == [vec![16]]);
    }
}
