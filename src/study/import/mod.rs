//! Hugging Face `config.json` to workload file: the config's family picks a built-in template,
//! its fields become the template's params, its `quantization_config` the checkpoint's type
//! per weight group (`quant`), and its sliding-window fields the windowed layers (`window`).
//! What cannot be priced faithfully is refused: an unknown quantisation, a head width that
//! does not divide, tied embeddings a template holds apart. Fields that change nothing
//! stepcost counts (token ids, norm epsilons) are listed as ignored; any other field is listed
//! as not understood, so a user knows what the workload leaves out. The position limit
//! (`max_position_embeddings`, with the RoPE scaling that extends it) becomes the workload's
//! `max_positions`.

mod modules;
mod quant;
mod window;
mod yaml;
mod zoo;

use serde_json::{Map, Value};

use crate::base::types::WeightGroup as Group;
use quant::Refusal;

use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;

/// A workload file made from a config.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The workload file's text (YAML).
    pub yaml: String,
    /// The built-in template it names.
    pub template: &'static str,
    /// The model's name, from `_name_or_path` or the folder the config is in.
    pub name: String,
    /// Config fields read and found to change nothing counted, in the config's order.
    pub ignored: Vec<String>,
    /// Config fields that were not understood, in the config's order.
    pub not_understood: Vec<String>,
}

/// Fields that do not change FLOPs, bytes or memory, in any family.
const IRRELEVANT: &[&str] = &[
    "_name_or_path",
    "architectures",
    "model_type",
    "torch_dtype",
    "dtype",
    "transformers_version",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "use_cache",
    "rms_norm_eps",
    "layer_norm_eps",
    "initializer_range",
    "hidden_act",
    "hidden_activation",
    "rope_theta",
    "rope_type",
    "attention_dropout",
    "attention_bias",
    "mlp_bias",
    "pretraining_tp",
    "output_router_logits",
    "router_aux_loss_coef",
    "router_z_loss_coef",
    "router_jitter_noise",
    "auto_map",
    "bos_token",
    "eos_token",
    "qkv_bias",
    "norm_topk_prob",
    "routed_scaling_factor",
    "scoring_func",
    "topk_method",
    "aux_loss_alpha",
    "seq_aux",
    "ep_size",
    "moe_layer_freq",
    "num_nextn_predict_layers",
    "query_pre_attn_scalar",
    "attn_logit_softcapping",
    "final_logit_softcapping",
    "cache_implementation",
    "swiglu_limit",
    "experts_per_token",
    "initial_context_length",
    "decoder_sparse_step",
    "mlp_only_layers",
    "rope_scaling_factor",
    "use_qk_norm",
    "qk_layernorm",
    "sliding_window_size",
    "rope_ntk_alpha",
    "rope_ntk_beta",
    "use_bfloat16",
];

/// The default `context` of every template's step.
const TEMPLATE_CONTEXT: u64 = 4096;

/// How a family's fields map to a template's params.
struct Family {
    model_types: &'static [&'static str],
    template: &'static str,
    /// The template's weight groups.
    groups: &'static [Group],
    /// Fields this family's template has no use for (MLA caches a latent, not KV heads).
    ignores: &'static [&'static str],
    /// `(param, config field)`; a field may be `a|b` (the first present wins).
    fields: &'static [(&'static str, &'static str)],
}

const SHAPE: &[(&str, &str)] = &[
    ("layers", "num_hidden_layers"),
    ("hidden", "hidden_size"),
    ("heads", "num_attention_heads"),
    ("vocab", "vocab_size"),
];

const DENSE: &[Group] = &[Group::Embed, Group::Attention, Group::Ffn];

const FAMILIES: &[Family] = &[
    Family {
        model_types: &["llama", "mistral", "qwen2", "qwen3"],
        template: "dense",
        groups: DENSE,
        ignores: &[],
        fields: &[("ffn", "intermediate_size")],
    },
    Family {
        model_types: &["mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss"],
        template: "moe",
        groups: &Group::ALL,
        ignores: &[],
        fields: &[
            ("experts", "num_local_experts|num_experts"),
            ("top_k", "num_experts_per_tok|experts_per_token"),
            ("moe_ffn", "moe_intermediate_size|intermediate_size"),
        ],
    },
    Family {
        model_types: &["deepseek_v3"],
        template: "mla-moe",
        groups: &Group::ALL,
        ignores: &["num_key_value_heads"],
        fields: &zoo::MLA_MOE_FIELDS,
    },
    Family {
        model_types: &["deepseek_v32"],
        template: "mla-sparse-moe",
        groups: &Group::ALL,
        ignores: &["num_key_value_heads"],
        fields: &zoo::MLA_SPARSE_FIELDS,
    },
    Family {
        model_types: &["qwen3_next"],
        template: "gdn-moe",
        groups: &Group::ALL,
        // The dense width serves only `mlp_only_layers`, refused below unless empty.
        ignores: &["intermediate_size"],
        fields: &[
            ("full_attention_interval", "full_attention_interval"),
            ("linear_key_heads", "linear_num_key_heads"),
            ("linear_value_heads", "linear_num_value_heads"),
            ("linear_key_dim", "linear_key_head_dim"),
            ("linear_value_dim", "linear_value_head_dim"),
            ("conv_kernel", "linear_conv_kernel_dim"),
            ("experts", "num_experts"),
            ("top_k", "num_experts_per_tok"),
            ("moe_ffn", "moe_intermediate_size"),
            ("shared_ffn", "shared_expert_intermediate_size"),
        ],
    },
    Family {
        model_types: &["gemma2", "gemma3_text"],
        template: "gemma2",
        groups: DENSE,
        ignores: &[],
        fields: &[("ffn", "intermediate_size")],
    },
];

/// A problem with `field` of the config: at the line where the field's key first appears,
/// else at none.
fn problem(file: &str, text: &str, field: &str, message: String) -> Error {
    let key = field.rsplit('.').next().unwrap_or(field);
    let (line, column) = text
        .find(&format!("\"{key}\""))
        .map(|at| {
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
            (line as u64, column as u64)
        })
        .unwrap_or((0, 0));
    Error::Invalid(Diagnostics(vec![Diagnostic::at(
        file,
        Some(text),
        &Origin::new(field, line, column),
        message,
    )]))
}

/// Turns the config in `text` (read from `file`) into a workload file. `folder` is the name
/// of the folder the config is in, the model's name when the config has no `_name_or_path`
/// and the file is the generic `config.json`.
pub fn import(text: &str, file: &str, folder: Option<&str>) -> Result<Imported, Error> {
    let config = Config::parse(text, file)?;
    let model_type = config.model_type()?;
    let family = config.family(model_type)?;
    let mut used: Vec<&'static str> = vec![
        "model_type",
        "_name_or_path",
        "quantization_config",
        "torch_dtype",
        "dtype",
    ];
    let mut params = config.params(family, model_type, &mut used)?;
    used.push("tie_word_embeddings");
    zoo::tied(&config.fields, family.template, &mut params).map_err(|r| config.refused(r))?;
    let limit = zoo::max_positions(&config.fields, &mut used).map_err(|r| config.refused(r))?;
    let mut checkpoint = quant::checkpoint(&config.fields, model_type, family.groups)
        .map_err(|r| config.refused(r))?;
    // The templates' default step decodes at context 4096: a model that holds no more
    // positions decodes by default at its last one.
    if let Some((n, _)) = limit.as_ref().filter(|(n, _)| *n <= TEMPLATE_CONTEXT) {
        params.push(("context", (n - 1) as f64));
    }
    if let Some((_, how)) = &limit {
        checkpoint.notes.push(format!("max_positions: {how}"));
    }
    used.extend(["n_group", "topk_group"]);
    checkpoint.notes.extend(zoo::routing(&config.fields));
    let mut ignored: Vec<String> = Vec::new();
    let mut not_understood: Vec<String> = Vec::new();
    for key in config.fields.keys() {
        if used.contains(&key.as_str()) {
            continue;
        }
        if IRRELEVANT.contains(&key.as_str()) || family.ignores.contains(&key.as_str()) {
            ignored.push(key.clone());
        } else {
            not_understood.push(key.clone());
        }
    }
    ignored.extend(checkpoint.ignored.iter().cloned());
    let name = config.name(folder);
    let yaml = yaml::Draft {
        name: &name,
        model_type,
        template: family.template,
        params: &params,
        max_positions: limit.map(|(n, _)| n),
        checkpoint: &checkpoint,
        ignored: &ignored,
        not_understood: &not_understood,
    }
    .yaml();
    Ok(Imported {
        yaml,
        template: family.template,
        name,
        ignored,
        not_understood,
    })
}

/// A config's fields, and where they came from for the problems reported.
struct Config<'a> {
    file: &'a str,
    text: &'a str,
    fields: Map<String, Value>,
}

impl<'a> Config<'a> {
    /// Reads `text`, which must hold a JSON object. Until it does, a problem quotes none of
    /// its lines (the rule of `base::diagnostic`).
    fn parse(text: &'a str, file: &'a str) -> Result<Self, Error> {
        let unquoted = |line: usize, column: usize, message: String| {
            let origin = Origin::new("", line as u64, column as u64);
            Error::Invalid(Diagnostics(vec![Diagnostic::at(
                file, None, &origin, message,
            )]))
        };
        let value: Value = serde_json::from_str(text)
            .map_err(|e| unquoted(e.line(), e.column(), format!("not a JSON config: {e}")))?;
        let Value::Object(mut fields) = value else {
            return Err(unquoted(1, 1, "expected a JSON object".into()));
        };
        // Llama-4's text decoder is nested under `text_config`; it is the model priced.
        if fields.get("model_type").and_then(Value::as_str) == Some("llama4") {
            zoo::lift_text_config(&mut fields);
        }
        Ok(Config { file, text, fields })
    }

    /// A problem with `field`, which the config lacks or holds wrongly.
    fn missing(&self, field: &str, why: &str) -> Error {
        problem(self.file, self.text, field, why.to_owned())
    }

    fn refused(&self, refusal: Refusal) -> Error {
        problem(self.file, self.text, &refusal.field, refusal.message)
    }

    fn model_type(&self) -> Result<&str, Error> {
        self.fields
            .get("model_type")
            .and_then(Value::as_str)
            .ok_or_else(|| self.missing("model_type", "missing: it names the model family"))
    }

    /// The family `model_type` belongs to.
    fn family(&self, model_type: &str) -> Result<&'static Family, Error> {
        let all = || FAMILIES.iter().chain(zoo::FAMILIES);
        all()
            .find(|f| f.model_types.contains(&model_type))
            .ok_or_else(|| {
                let known: Vec<&str> = all().flat_map(|f| f.model_types.iter().copied()).collect();
                self.missing(
                    "model_type",
                    &format!(
                        "`{}` is not a family stepcost imports; it imports: {}",
                        model_type.escape_debug(),
                        known.join(", ")
                    ),
                )
            })
    }

    /// The number in `fields` (`a|b`: the first present), adding the fields to `used`.
    fn number(&self, fields: &'static str, used: &mut Vec<&'static str>) -> Result<f64, Error> {
        for field in fields.split('|') {
            if let Some(v) = self.fields.get(field) {
                // The alternatives are understood too (Qwen3-MoE's dense width goes unused).
                used.extend(fields.split('|'));
                return v
                    .as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        self.missing(field, &format!("expected a non-negative number, found {v}"))
                    });
            }
        }
        Err(self.missing(fields, "missing: the workload needs it"))
    }

    /// The template's params, in the order the workload file lists them; the fields they
    /// come from are added to `used`.
    fn params(
        &self,
        family: &Family,
        model_type: &str,
        used: &mut Vec<&'static str>,
    ) -> Result<Vec<(&'static str, f64)>, Error> {
        let mut params: Vec<(&str, f64)> = Vec::new();
        if family.template == "hybrid-ssm" {
            params = zoo::hybrid_layers(&self.fields, used).map_err(|r| self.refused(r))?;
            for &(param, field) in zoo::HYBRID_FIELDS {
                params.push((param, self.number(field, used)?));
            }
            return Ok(params);
        }
        for &(param, field) in SHAPE.iter().chain(family.fields) {
            params.push((param, self.number(field, used)?));
        }
        if !family.template.starts_with("mla-") {
            self.attention(model_type, used, &mut params)?;
        }
        match family.template {
            "mla-sparse-moe" => {
                // The indexer's Hadamard rotation: log2(index_head_dim) butterfly stages.
                let width = self.number("index_head_dim", used)?;
                params.push(("index_hadamard_stages", width.max(1.0).log2().ceil()));
            }
            "gdn-moe" => self.linear_hybrid(used, &mut params)?,
            _ => {}
        }
        if model_type == "llama4" {
            let layers = self.number("num_hidden_layers", used)?;
            zoo::llama4(&self.fields, layers, used, &mut params).map_err(|r| self.refused(r))?;
        }
        // A Gemma without soft-capping (Gemma-3) prices the gemma2 template's cap passes at 0
        // FLOPs. Absent, `attn_logit_softcapping` is its config class's default (HF-CFG):
        // 50 for Gemma-2, none for Gemma-3.
        let capped = match self.fields.get("attn_logit_softcapping") {
            Some(v) => !v.is_null(),
            None => model_type == "gemma2",
        };
        if family.template == "gemma2" && !capped {
            params.push(("softcap_flops", 0.0));
        }
        Ok(params)
    }

    /// What the gated-DeltaNet hybrid (Qwen3-Next) adds to the attention params: the rotated
    /// width of a head (`partial_rotary_factor`, 0.25 when absent, its config class's
    /// default); a sliding window or dense-FFN layers, which the template has none of, are
    /// refused by name.
    fn linear_hybrid(
        &self,
        used: &mut Vec<&'static str>,
        params: &mut Vec<(&'static str, f64)>,
    ) -> Result<(), Error> {
        if params.iter().any(|&(p, v)| p == "local_layers" && v > 0.0) {
            return Err(self.missing(
                "sliding_window",
                "a Qwen3-Next with sliding-window layers: the gdn-moe template has none",
            ));
        }
        if self.fields.get("use_sliding_window") == Some(&Value::Bool(true)) {
            return Err(self.missing(
                "use_sliding_window",
                "a Qwen3-Next with sliding-window layers: the gdn-moe template has none",
            ));
        }
        used.push("use_sliding_window");
        params.retain(|&(p, _)| p != "local_layers" && p != "window");
        let dense_layers = self.fields.get("mlp_only_layers");
        if dense_layers.is_some_and(|v| v.as_array().is_none_or(|a| !a.is_empty())) {
            return Err(self.missing(
                "mlp_only_layers",
                "dense-FFN layers: the gdn-moe template has a MoE FFN on every layer",
            ));
        }
        let step = self.fields.get("decoder_sparse_step");
        if step.is_some_and(|v| v.as_f64() != Some(1.0)) {
            return Err(self.missing(
                "decoder_sparse_step",
                "MoE on only some layers: the gdn-moe template has a MoE FFN on every layer",
            ));
        }
        let head_dim = (params.iter())
            .find(|(p, _)| *p == "head_dim")
            .map_or(0.0, |&(_, v)| v);
        let factor = match self.fields.get("partial_rotary_factor") {
            Some(v) if !v.is_null() => self.number("partial_rotary_factor", used)?,
            _ => 0.25,
        };
        used.push("partial_rotary_factor");
        params.push(("rotary_dim", head_dim * factor));
        Ok(())
    }

    /// The params of grouped-query attention, for every template but MLA's: KV heads, head
    /// width, and the sliding-window layers.
    fn attention(
        &self,
        model_type: &str,
        used: &mut Vec<&'static str>,
        params: &mut Vec<(&'static str, f64)>,
    ) -> Result<(), Error> {
        let heads = self.number("num_attention_heads", used)?;
        let hidden = self.number("hidden_size", used)?;
        let layers = self.number("num_hidden_layers", used)?;
        let kv_heads = match self.fields.get("num_key_value_heads") {
            Some(Value::Null) | None => heads,
            Some(_) => self.number("num_key_value_heads", used)?,
        };
        used.push("num_key_value_heads");
        params.push(("kv_heads", kv_heads));
        let head_dim = match self.fields.get("head_dim") {
            Some(v) if !v.is_null() => self.number("head_dim", used)?,
            // hidden / heads is the head width only when it divides; a model whose heads are
            // narrower or wider (Gemma, gpt-oss) states head_dim.
            _ if heads > 0.0 && (hidden / heads).fract() == 0.0 => hidden / heads,
            _ => {
                return Err(self.missing(
                    "head_dim",
                    &format!(
                        "missing, and hidden_size / num_attention_heads = {hidden} / {heads} \
                         is not a whole number: the head width cannot be known"
                    ),
                ))
            }
        };
        used.push("head_dim");
        params.push(("head_dim", head_dim));
        let windows = window::windows(&self.fields, model_type, layers as u64, used)
            .map_err(|r| self.refused(r))?;
        params.push(("local_layers", windows.local_layers as f64));
        if let Some(window) = windows.window {
            params.push(("window", window as f64));
        }
        Ok(())
    }

    /// The model's name: the last part of `_name_or_path`, else the file's stem unless it is
    /// the generic `config`, else the folder the config is in.
    fn name(&self, folder: Option<&str>) -> String {
        let last = |p: &str| {
            p.trim_end_matches('/')
                .rsplit('/')
                .next()
                .map(str::to_owned)
                .filter(|n| !n.is_empty() && n != "." && n != "..")
        };
        let stem = std::path::Path::new(self.file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty() && s != "config");
        self.fields
            .get("_name_or_path")
            .and_then(Value::as_str)
            .and_then(last)
            .or(stem)
            .or_else(|| folder.and_then(last))
            .unwrap_or_else(|| "imported model".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_llama_config_becomes_the_dense_template() {
        let config = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
            "vocab_size": 128256, "rms_norm_eps": 1e-5, "some_new_field": 3}"#;
        let imported = import(config, "config.json", None).unwrap();
        assert_eq!(imported.template, "dense");
        assert_eq!(imported.not_understood, ["some_new_field"]);
        assert_eq!(imported.ignored, ["rms_norm_eps"]);
        assert!(
            imported.yaml.contains("  head_dim: 128\n"),
            "{}",
            imported.yaml
        );
        assert!(imported.yaml.contains("  kv_heads: 8\n"));
        assert!(imported.yaml.contains("  local_layers: 0\n"));
        assert!(imported
            .yaml
            .contains("# Not understood (left out of the step): some_new_field\n"));
    }

    #[test]
    fn bad_configs_are_named() {
        let err = import("{\"model_type\": \"llama\",", "c.json", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.json:1:"), "{err}");
        let err = import("{\"model_type\": \"bert\"}", "c.json", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`bert` is not a family"), "{err}");
        let err = import("{\"model_type\": \"llama\"}", "c.json", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("num_hidden_layers"), "{err}");
    }
}
