//! Module names: which weight group a name in a quantisation's lists covers. A name or glob
//! (`model.layers.*.self_attn`, AWQ-Mixtral's bare `gate`) by the parts it holds; a
//! compressed-tensors `re:` pattern by matching it against representative names of each
//! group's modules, as each family's modelling code names them.

use crate::base::types::WeightGroup as Group;

/// Representative names of each group's modules in a family's checkpoints, as its modelling
/// code names them: `(model types, group, names)`, the first row that fits wins, the last
/// four (any model type) are Llama's names. What a quantisation's `re:` patterns are matched
/// against: a pattern that matches some of a group's modules and not others would give the
/// group two formats, which a workload cannot hold. DeepSeek-V3's router (`mlp.gate`) is a
/// parameter of its own module, not a Linear layer, so no scheme quantises it and it is not
/// listed: its ffn group is the dense and shared MLPs.
const MODULES: &[(&[&str], Group, &[&str])] = &[
    (
        &["llama4"],
        Group::Embed,
        &[
            "language_model.model.embed_tokens",
            "language_model.lm_head",
        ],
    ),
    (
        &["llama4"],
        Group::Attention,
        &[
            "language_model.model.layers.0.self_attn.q_proj",
            "language_model.model.layers.0.self_attn.k_proj",
            "language_model.model.layers.0.self_attn.v_proj",
            "language_model.model.layers.0.self_attn.o_proj",
        ],
    ),
    (
        &["llama4"],
        Group::Ffn,
        &[
            "language_model.model.layers.0.feed_forward.router",
            "language_model.model.layers.0.feed_forward.shared_expert.gate_proj",
            "language_model.model.layers.0.feed_forward.shared_expert.up_proj",
            "language_model.model.layers.0.feed_forward.shared_expert.down_proj",
        ],
    ),
    (
        &["llama4"],
        Group::Experts,
        &["language_model.model.layers.0.feed_forward.experts"],
    ),
    (
        &["deepseek_v3", "kimi_k2"],
        Group::Attention,
        &[
            "model.layers.0.self_attn.q_a_proj",
            "model.layers.0.self_attn.q_b_proj",
            "model.layers.0.self_attn.kv_a_proj_with_mqa",
            "model.layers.0.self_attn.kv_b_proj",
            "model.layers.0.self_attn.o_proj",
        ],
    ),
    (
        &["deepseek_v3", "kimi_k2", "glm4_moe"],
        Group::Ffn,
        &[
            "model.layers.0.mlp.gate_proj",
            "model.layers.0.mlp.up_proj",
            "model.layers.0.mlp.down_proj",
            "model.layers.3.mlp.shared_experts.gate_proj",
            "model.layers.3.mlp.shared_experts.up_proj",
            "model.layers.3.mlp.shared_experts.down_proj",
        ],
    ),
    (
        &["mixtral"],
        Group::Ffn,
        &["model.layers.0.block_sparse_moe.gate"],
    ),
    (
        &["mixtral"],
        Group::Experts,
        &[
            "model.layers.0.block_sparse_moe.experts.0.w1",
            "model.layers.0.block_sparse_moe.experts.0.w2",
            "model.layers.0.block_sparse_moe.experts.0.w3",
        ],
    ),
    (
        &["qwen2_moe", "qwen3_moe"],
        Group::Ffn,
        &["model.layers.0.mlp.gate"],
    ),
    (&["gpt_oss"], Group::Ffn, &["model.layers.0.mlp.router"]),
    (
        &["phi3"],
        Group::Attention,
        &[
            "model.layers.0.self_attn.qkv_proj",
            "model.layers.0.self_attn.o_proj",
        ],
    ),
    (
        &["phi3"],
        Group::Ffn,
        &[
            "model.layers.0.mlp.gate_up_proj",
            "model.layers.0.mlp.down_proj",
        ],
    ),
    (
        &["nemotron_h"],
        Group::Embed,
        &["backbone.embeddings", "lm_head"],
    ),
    (
        &["nemotron_h"],
        Group::Attention,
        &[
            "backbone.layers.0.mixer.in_proj",
            "backbone.layers.0.mixer.out_proj",
            "backbone.layers.7.mixer.q_proj",
            "backbone.layers.7.mixer.k_proj",
            "backbone.layers.7.mixer.v_proj",
            "backbone.layers.7.mixer.o_proj",
        ],
    ),
    (
        &["nemotron_h"],
        Group::Ffn,
        &[
            "backbone.layers.1.mixer.up_proj",
            "backbone.layers.1.mixer.down_proj",
        ],
    ),
    (&[], Group::Embed, &["model.embed_tokens", "lm_head"]),
    (
        &[],
        Group::Attention,
        &[
            "model.layers.0.self_attn.q_proj",
            "model.layers.0.self_attn.k_proj",
            "model.layers.0.self_attn.v_proj",
            "model.layers.0.self_attn.o_proj",
        ],
    ),
    (
        &[],
        Group::Ffn,
        &[
            "model.layers.0.mlp.gate_proj",
            "model.layers.0.mlp.up_proj",
            "model.layers.0.mlp.down_proj",
        ],
    ),
    (
        &[],
        Group::Experts,
        &[
            "model.layers.3.mlp.experts.0.gate_proj",
            "model.layers.3.mlp.experts.0.up_proj",
            "model.layers.3.mlp.experts.0.down_proj",
        ],
    ),
];

/// The representative module names of `group` in a checkpoint of `model_type` ([`MODULES`]).
pub(super) fn module_names(model_type: &str, group: Group) -> &'static [&'static str] {
    MODULES
        .iter()
        .find(|(types, g, _)| *g == group && (types.is_empty() || types.contains(&model_type)))
        .map_or(&[], |(_, _, names)| names)
}

/// The groups a module name covers, by the names Hugging Face models give their modules.
pub(super) fn module_groups(name: &str) -> Vec<Group> {
    let n = name.to_ascii_lowercase();
    let has = |parts: &[&str]| parts.iter().any(|p| n.contains(p));
    if has(&["embed", "lm_head", "wte", "output_layer"]) {
        return vec![Group::Embed];
    }
    if has(&[
        "attn",
        "attention",
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "qkv",
    ]) {
        return vec![Group::Attention];
    }
    // A router: `router`, DeepSeek's and Qwen's `mlp.gate`, Mixtral's `block_sparse_moe.gate`
    // (AWQ-Mixtral lists it as a bare `gate`, which transformers matches as a part of the name).
    let router = n == "gate" || n.ends_with(".gate") || n.ends_with(".gate$");
    if router || (has(&["shared_expert", "router", "mlp.gate"]) && !n.ends_with("gate_proj")) {
        return vec![Group::Ffn];
    }
    if has(&["experts"]) {
        return vec![Group::Experts];
    }
    if has(&["mlp", "gate_proj", "up_proj", "down_proj", "ffn"]) {
        return vec![Group::Ffn, Group::Experts];
    }
    Vec::new()
}

/// Whether a module name names one layer's module (`model.layers.3.mlp`), not every layer's.
pub(super) fn one_layer(name: &str) -> bool {
    name.split('.')
        .any(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_map_to_groups() {
        assert_eq!(
            module_groups("model.layers.*.self_attn"),
            [Group::Attention]
        );
        assert_eq!(module_groups("model.layers.*.mlp.router"), [Group::Ffn]);
        assert_eq!(module_groups("model.embed_tokens"), [Group::Embed]);
        assert_eq!(module_groups("lm_head"), [Group::Embed]);
        assert_eq!(module_groups("re:.*mlp.experts.*"), [Group::Experts]);
        assert_eq!(module_groups("re:.*mlp.gate$"), [Group::Ffn]);
        assert_eq!(module_groups("gate"), [Group::Ffn]);
        assert_eq!(
            module_groups("model.layers.*.block_sparse_moe.gate"),
            [Group::Ffn]
        );
        assert!(module_groups("model.norm").is_empty());
        assert!(one_layer("model.layers.0.mlp.down_proj"));
        assert!(!one_layer("model.layers.*.mlp"));
        // Each family's own names, Llama's for the rest.
        let mla = module_names("kimi_k2", Group::Attention);
        assert!(mla.contains(&"model.layers.0.self_attn.kv_a_proj_with_mqa"));
        assert_eq!(module_names("llama", Group::Ffn).len(), 3);
        assert_eq!(
            module_names("mixtral", Group::Ffn),
            ["model.layers.0.block_sparse_moe.gate"]
        );
    }
}
