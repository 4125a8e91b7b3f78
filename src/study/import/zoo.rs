//! The families imported beside the first ones, and the config fields they need read apart:
//! Kimi-K2 (DeepSeek-V3's shapes), GLM-4.5, Llama-4 (its text decoder, nested under
//! `text_config`), Phi-3 (fused q/k/v and gate/up projections, the dense template's shapes),
//! and Nemotron-H (the hybrid-ssm template, its layers counted from the config's pattern).
//! Also what every family shares and the first families did not read: the position limit
//! (`max_position_embeddings`, extended by RoPE scaling), tied embeddings, the
//! group-limited routing fields, and the module names a quantisation's lists are matched
//! against.

use serde_json::{Map, Value};

use super::quant::Refusal;
use super::Family;
use crate::base::types::WeightGroup as Group;

/// DeepSeek-V3's fields (MLA and routed experts), which Kimi-K2 and DeepSeek-V3.2 keep.
pub(super) const MLA_MOE_FIELDS: [(&str, &str); 11] = [
    ("dense_layers", "first_k_dense_replace"),
    ("q_lora_rank", "q_lora_rank"),
    ("kv_lora_rank", "kv_lora_rank"),
    ("qk_nope_dim", "qk_nope_head_dim"),
    ("qk_rope_dim", "qk_rope_head_dim"),
    ("v_head_dim", "v_head_dim"),
    ("ffn", "intermediate_size"),
    ("experts", "n_routed_experts"),
    ("top_k", "num_experts_per_tok"),
    ("shared_experts", "n_shared_experts"),
    ("moe_ffn", "moe_intermediate_size"),
];

/// DeepSeek-V3.2's: DeepSeek-V3's and its lightning indexer's.
pub(super) const MLA_SPARSE_FIELDS: [(&str, &str); 14] = {
    let indexer = [
        ("index_heads", "index_n_heads"),
        ("index_head_dim", "index_head_dim"),
        ("index_topk", "index_topk"),
    ];
    let mut fields = [("", ""); 14];
    let mut i = 0;
    while i < fields.len() {
        fields[i] = match i < MLA_MOE_FIELDS.len() {
            true => MLA_MOE_FIELDS[i],
            false => indexer[i - MLA_MOE_FIELDS.len()],
        };
        i += 1;
    }
    fields
};

/// The families this module adds; the importer looks here after its first list.
pub(super) const FAMILIES: &[Family] = &[
    Family {
        model_types: &["kimi_k2"],
        template: "mla-moe",
        groups: &Group::ALL,
        ignores: &["num_key_value_heads"],
        fields: &MLA_MOE_FIELDS,
    },
    Family {
        model_types: &["glm4_moe"],
        template: "moe-shared",
        groups: &Group::ALL,
        // RoPE on half of each head: 3 FLOPs per rotated element over fewer elements, a
        // rounding error of a step.
        ignores: &["partial_rotary_factor"],
        fields: &[
            ("dense_layers", "first_k_dense_replace"),
            ("ffn", "intermediate_size"),
            ("experts", "n_routed_experts"),
            ("top_k", "num_experts_per_tok"),
            ("shared_experts", "n_shared_experts"),
            ("moe_ffn", "moe_intermediate_size"),
        ],
    },
    Family {
        model_types: &["llama4"],
        template: "moe-shared",
        groups: &Group::ALL,
        ignores: &[
            "no_rope_layers",
            "no_rope_layer_interval",
            "attn_temperature_tuning",
            "floor_scale",
            "attn_scale",
            "for_llm_compressor",
            "router_aux_loss_coef",
            "_attn_implementation_autoset",
            "boi_token_index",
            "eoi_token_index",
            "image_token_index",
        ],
        // `dense_layers`, `shared_experts` and the chunked layers: see `llama4`.
        fields: &[
            ("ffn", "intermediate_size_mlp"),
            ("experts", "num_local_experts"),
            ("top_k", "num_experts_per_tok"),
            ("moe_ffn", "intermediate_size"),
        ],
    },
    Family {
        model_types: &["phi3"],
        template: "dense",
        groups: &[Group::Embed, Group::Attention, Group::Ffn],
        // Phi-3's reference attention attends to every position whatever `sliding_window`
        // says (Phi3Attention passes no window), so no layer slides.
        ignores: &["sliding_window", "resid_pdrop", "embd_pdrop"],
        fields: &[("ffn", "intermediate_size")],
    },
    Family {
        model_types: &["nemotron_h"],
        template: "hybrid-ssm",
        groups: &[Group::Embed, Group::Attention, Group::Ffn],
        ignores: &[
            "mamba_hidden_act",
            "mamba_proj_bias",
            "mamba_conv_bias",
            "use_conv_bias",
            "use_bias",
            "mlp_bias",
            "mlp_hidden_act",
            "residual_in_fp32",
            "rescale_prenorm_residual",
            "time_step_min",
            "time_step_max",
            "time_step_floor",
            "time_step_limit",
            "num_logits_to_keep",
            "expand",
            "mamba_chunk_size",
            "hybrid_override_pattern",
            "hidden_dropout",
            "layer_norm_epsilon",
            // Null in Nemotron-H's configs: its attention layers see every position.
            "sliding_window",
        ],
        // Read apart: see `hybrid`.
        fields: &[],
    },
];

/// A config's fields with a nested `text_config` (Llama-4's) lifted to the top: the text
/// decoder's fields are the model's; the wrapper's own (`quantization_config`,
/// `torch_dtype`, `vision_config`) stay, and a field in both keeps the wrapper's.
pub(super) fn lift_text_config(fields: &mut Map<String, Value>) {
    let Some(Value::Object(text)) = fields.get("text_config").cloned() else {
        return;
    };
    for (key, value) in text {
        if !fields.contains_key(&key) {
            fields.insert(key, value);
        }
    }
}

/// Llama-4's params that no one field holds: `interleave_moe_layer_step` puts a MoE layer
/// every that many layers (the rest dense); every MoE layer has one shared expert; the
/// layers with RoPE attend within chunks of `attention_chunk_size` (NoPE layers, one in
/// `no_rope_layer_interval`, default 4, attend to every position).
pub(super) fn llama4(
    config: &Map<String, Value>,
    layers: f64,
    used: &mut Vec<&'static str>,
    params: &mut Vec<(&'static str, f64)>,
) -> Result<(), Refusal> {
    used.extend([
        "interleave_moe_layer_step",
        "moe_layers",
        "attention_chunk_size",
        "text_config",
    ]);
    let number = |key: &str, default: f64| -> Result<f64, Refusal> {
        match config.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_f64()
                .filter(|x| *x >= 1.0 && x.fract() == 0.0)
                .ok_or(Refusal {
                    field: key.to_owned(),
                    message: format!("expected a whole number from 1, found {v}"),
                }),
        }
    };
    let moe_layers = match config.get("moe_layers") {
        Some(Value::Array(list)) => list.len() as f64,
        _ => (layers / number("interleave_moe_layer_step", 1.0)?).floor(),
    };
    params.push(("dense_layers", layers - moe_layers));
    params.push(("shared_experts", 1.0));
    let local = match config.get("attention_chunk_size") {
        None | Some(Value::Null) => 0.0,
        Some(_) => layers - (layers / number("no_rope_layer_interval", 4.0)?).floor(),
    };
    set(params, "local_layers", local);
    if local > 0.0 {
        set(params, "window", number("attention_chunk_size", 1.0)?);
    }
    Ok(())
}

/// Sets `param` in `params`, in its place if it is there, else at the end.
fn set(params: &mut Vec<(&'static str, f64)>, param: &'static str, value: f64) {
    match params.iter_mut().find(|(p, _)| *p == param) {
        Some(entry) => entry.1 = value,
        None => params.push((param, value)),
    }
}

/// `(param, config field)` of the hybrid-ssm template read as they are, after the layers.
pub(super) const HYBRID_FIELDS: &[(&str, &str)] = &[
    ("hidden", "hidden_size"),
    ("heads", "num_attention_heads"),
    ("kv_heads", "num_key_value_heads"),
    ("head_dim", "head_dim|attention_head_dim"),
    ("ffn", "intermediate_size"),
    ("vocab", "vocab_size"),
    ("mamba_heads", "mamba_num_heads"),
    ("mamba_head_dim", "mamba_head_dim"),
    ("ssm_state", "ssm_state_size"),
    ("n_groups", "n_groups"),
    ("conv_kernel", "conv_kernel"),
    ("chunk", "chunk_size"),
];

/// Nemotron-H's layers of each kind, counted from `hybrid_override_pattern` (one character a
/// layer: `M` Mamba-2, `*` attention, `-` MLP). A pattern with another kind of layer (`E`, a
/// mixture of experts) is refused: the template has none.
pub(super) fn hybrid_layers(
    config: &Map<String, Value>,
    used: &mut Vec<&'static str>,
) -> Result<Vec<(&'static str, f64)>, Refusal> {
    used.extend(["hybrid_override_pattern", "num_hidden_layers"]);
    let refuse = |message: String| Refusal {
        field: "hybrid_override_pattern".into(),
        message,
    };
    let pattern = (config
        .get("hybrid_override_pattern")
        .and_then(Value::as_str))
    .ok_or_else(|| refuse("missing: it says which layers are Mamba, attention and MLP".into()))?;
    if let Some(other) = pattern.chars().find(|c| !matches!(c, 'M' | '*' | '-')) {
        return Err(refuse(format!(
            "layer kind `{}` is not one the hybrid-ssm template has (M Mamba-2, * attention, \
             - MLP)",
            other.escape_debug()
        )));
    }
    let total = pattern.chars().count() as f64;
    if let Some(layers) = config.get("num_hidden_layers").and_then(Value::as_f64) {
        if layers != total {
            return Err(refuse(format!(
                "has {total} layers, and num_hidden_layers says {layers}"
            )));
        }
    }
    let count = |c: char| pattern.chars().filter(|x| *x == c).count() as f64;
    Ok(vec![
        ("mamba_layers", count('M')),
        ("attn_layers", count('*')),
        ("mlp_layers", count('-')),
    ])
}

/// Whether the family's template ties the lm_head to the embedding matrix by construction
/// (`Some(true)`: gemma2), holds them apart (`Some(false)`), or takes either (`None`: the
/// dense template's `tied` param).
fn template_ties(template: &str) -> Option<bool> {
    match template {
        "gemma2" => Some(true),
        "dense" => None,
        _ => Some(false),
    }
}

/// `tie_word_embeddings` read: absent, its config class's default (true for Gemma's, false
/// for every other family here). The dense template takes a tied model as `tied: 1`; a
/// template that cannot hold the config's choice refuses it rather than count the
/// embedding twice or once too few.
pub(super) fn tied(
    config: &Map<String, Value>,
    template: &str,
    params: &mut Vec<(&'static str, f64)>,
) -> Result<(), Refusal> {
    let fixed = template_ties(template);
    let tied = match config.get("tie_word_embeddings") {
        None | Some(Value::Null) => fixed.unwrap_or(false),
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(Refusal {
                field: "tie_word_embeddings".into(),
                message: format!("expected true or false, found {v}"),
            })
        }
    };
    match fixed {
        None if tied => params.push(("tied", 1.0)),
        Some(t) if t != tied => {
            return Err(Refusal {
                field: "tie_word_embeddings".into(),
                message: format!(
                    "is {tied}, and the {template} template's embeddings are {}: the \
                     embedding matrix would be counted {}",
                    if t { "tied" } else { "untied" },
                    if t { "once too few" } else { "twice" }
                ),
            })
        }
        _ => {}
    }
    Ok(())
}

/// The positions the model attends over at most, and how it was read: `max_position_embeddings`,
/// or the RoPE scaling's reach where that is longer (`factor` times its
/// `original_max_position_embeddings`, YaRN's and Llama-3's way; `linear` and `dynamic`
/// scaling stretch `max_position_embeddings` itself by `factor`). `None` without the field.
pub(super) fn max_positions(
    config: &Map<String, Value>,
    used: &mut Vec<&'static str>,
) -> Result<Option<(u64, String)>, Refusal> {
    used.extend([
        "max_position_embeddings",
        "rope_scaling",
        "original_max_position_embeddings",
    ]);
    let Some(v) = config
        .get("max_position_embeddings")
        .filter(|v| !v.is_null())
    else {
        return Ok(None);
    };
    let limit = v
        .as_f64()
        .filter(|x| *x >= 1.0 && x.fract() == 0.0)
        .ok_or(Refusal {
            field: "max_position_embeddings".into(),
            message: format!("expected a whole number of positions from 1, found {v}"),
        })?;
    let scaling = config.get("rope_scaling").and_then(Value::as_object);
    let factor = scaling
        .and_then(|s| s.get("factor"))
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f >= 1.0);
    let kind = scaling
        .and_then(|s| s.get("rope_type").or_else(|| s.get("type")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let original = (scaling.and_then(|s| s.get("original_max_position_embeddings")))
        .or_else(|| config.get("original_max_position_embeddings"))
        .and_then(Value::as_f64);
    let reach = match (factor, original, kind) {
        (Some(f), _, "linear" | "dynamic") => Some((limit * f, format!("{kind} factor {f}"))),
        (Some(f), Some(o), _) => Some((o * f, format!("{kind} factor {f} over {o}"))),
        _ => None,
    };
    Ok(Some(match reach {
        Some((r, how)) if r > limit => (
            r.min(1e15) as u64,
            format!("max_position_embeddings {limit} extended by RoPE scaling ({how})"),
        ),
        _ => (limit as u64, format!("max_position_embeddings {limit}")),
    }))
}

/// Group-limited routing (DeepSeek-V3's `n_group` and `topk_group`: each token's experts come
/// from its best `topk_group` of `n_group` groups) as a note for the file: it changes which
/// experts a token reaches, which the serving study's routing reads, not the step's count.
pub(super) fn routing(config: &Map<String, Value>) -> Option<String> {
    let get = |k: &str| config.get(k).and_then(Value::as_u64);
    let (groups, top) = (get("n_group")?, get("topk_group")?);
    Some(format!(
        "routing: n_group {groups}, topk_group {top} (each token's experts from its best {top} \
         of {groups} expert groups); recorded for routing studies, the step counts top_k \
         experts a token either way"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn rope_scaling_extends_the_limit_where_it_reaches_further() {
        let mut used = Vec::new();
        // Llama-3.1: 8192 x 8 = 65536 is below the stated 131072.
        let llama = fields(json!({"max_position_embeddings": 131072, "rope_scaling":
            {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}));
        assert_eq!(max_positions(&llama, &mut used).unwrap().unwrap().0, 131072);
        // Qwen2.5 with YaRN added as its model card says: 32768 x 4.
        let qwen = fields(json!({"max_position_embeddings": 32768, "rope_scaling":
            {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}));
        assert_eq!(max_positions(&qwen, &mut used).unwrap().unwrap().0, 131072);
        // Linear scaling stretches the stated positions.
        let linear = fields(json!({"max_position_embeddings": 4096, "rope_scaling":
            {"type": "linear", "factor": 2.0}}));
        assert_eq!(max_positions(&linear, &mut used).unwrap().unwrap().0, 8192);
        assert_eq!(max_positions(&fields(json!({})), &mut used).unwrap(), None);
    }

    #[test]
    fn tying_follows_the_template() {
        let mut params = Vec::new();
        let yes = fields(json!({"tie_word_embeddings": true}));
        tied(&yes, "dense", &mut params).unwrap();
        assert_eq!(params, [("tied", 1.0)]);
        assert!(tied(&yes, "moe", &mut params).is_err());
        assert!(tied(&fields(json!({})), "gemma2", &mut params).is_ok());
        let no = fields(json!({"tie_word_embeddings": false}));
        assert!(tied(&no, "gemma2", &mut params).is_err());
    }
}
