//! Hugging Face `config.json` to workload file: the config's family picks a built-in template
//! and its fields become the template's params. Fields that change nothing stepcost counts
//! (token ids, norm epsilons, RoPE scaling) are understood and skipped; any other field is
//! reported as not understood, so a user knows what the workload leaves out.

use serde_json::{Map, Value};

use crate::base::diagnostic::{Diagnostic, Diagnostics, Origin};
use crate::base::error::Error;
use crate::base::text::shown_as_is;

/// A workload file made from a config.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The workload file's text (YAML).
    pub yaml: String,
    /// The built-in template it names.
    pub template: &'static str,
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
    "tie_word_embeddings",
    "use_cache",
    "rms_norm_eps",
    "layer_norm_eps",
    "initializer_range",
    "hidden_act",
    "hidden_activation",
    "rope_theta",
    "rope_scaling",
    "rope_type",
    "max_position_embeddings",
    "attention_dropout",
    "attention_bias",
    "mlp_bias",
    "pretraining_tp",
    "output_router_logits",
    "router_aux_loss_coef",
    "router_z_loss_coef",
    "router_jitter_noise",
    "auto_map",
    "quantization_config",
    "original_max_position_embeddings",
    "bos_token",
    "eos_token",
    "use_sliding_window",
    "max_window_layers",
    "qkv_bias",
    "norm_topk_prob",
    "routed_scaling_factor",
    "scoring_func",
    "topk_method",
    "n_group",
    "topk_group",
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
    "layer_types",
    "decoder_sparse_step",
    "mlp_only_layers",
    "rope_scaling_factor",
    "head_dim",
    "sliding_window",
    "num_key_value_heads",
    "use_qk_norm",
    "qk_layernorm",
];

/// How a family's fields map to a template's params.
struct Family {
    model_types: &'static [&'static str],
    template: &'static str,
    /// `(param, config field)`; a field may be `a|b` (the first present wins).
    fields: &'static [(&'static str, &'static str)],
}

const SHAPE: &[(&str, &str)] = &[
    ("layers", "num_hidden_layers"),
    ("hidden", "hidden_size"),
    ("heads", "num_attention_heads"),
    ("vocab", "vocab_size"),
];

const FAMILIES: &[Family] = &[
    Family {
        model_types: &["llama", "mistral", "qwen2", "qwen3"],
        template: "dense",
        fields: &[("ffn", "intermediate_size")],
    },
    Family {
        model_types: &["mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss"],
        template: "moe",
        fields: &[
            ("experts", "num_local_experts|num_experts"),
            ("top_k", "num_experts_per_tok|experts_per_token"),
            ("moe_ffn", "moe_intermediate_size|intermediate_size"),
        ],
    },
    Family {
        model_types: &["deepseek_v3"],
        template: "mla-moe",
        fields: &[
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
        ],
    },
    Family {
        model_types: &["gemma2"],
        template: "gemma2",
        fields: &[("ffn", "intermediate_size")],
    },
];

fn problem(file: &str, text: &str, line: u64, column: u64, field: &str, message: String) -> Error {
    Error::Invalid(Diagnostics(vec![Diagnostic::at(
        file,
        Some(text),
        &Origin::new(field, line, column),
        message,
    )]))
}

/// Turns the config in `text` (read from `file`) into a workload file.
pub fn import(text: &str, file: &str) -> Result<Imported, Error> {
    let config = Config::parse(text, file)?;
    let model_type = config.model_type()?;
    let family = config.family(model_type)?;
    let mut used: Vec<&str> = Vec::new();
    let params = config.params(family, model_type, &mut used)?;
    let not_understood: Vec<String> = config
        .fields
        .keys()
        .filter(|k| !used.contains(&k.as_str()) && !IRRELEVANT.contains(&k.as_str()))
        .cloned()
        .collect();
    let yaml = workload_yaml(
        &config.name(),
        model_type,
        family.template,
        &not_understood,
        &params,
    );
    Ok(Imported {
        yaml,
        template: family.template,
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
        let Value::Object(fields) = value else {
            return Err(unquoted(1, 1, "expected a JSON object".into()));
        };
        Ok(Config { file, text, fields })
    }

    /// A problem with `field`, which the config lacks or holds wrongly.
    fn missing(&self, field: &str, why: &str) -> Error {
        problem(self.file, self.text, 0, 0, field, why.to_owned())
    }

    fn model_type(&self) -> Result<&str, Error> {
        self.fields
            .get("model_type")
            .and_then(Value::as_str)
            .ok_or_else(|| self.missing("model_type", "missing: it names the model family"))
    }

    /// The family `model_type` belongs to.
    fn family(&self, model_type: &str) -> Result<&'static Family, Error> {
        FAMILIES
            .iter()
            .find(|f| f.model_types.contains(&model_type))
            .ok_or_else(|| {
                let known: Vec<&str> = FAMILIES
                    .iter()
                    .flat_map(|f| f.model_types.iter().copied())
                    .collect();
                self.missing(
                    "model_type",
                    &format!(
                        "`{model_type}` is not a family stepcost imports; it imports: {}",
                        known.join(", ")
                    ),
                )
            })
    }

    /// The number in `fields` (`a|b`: the first present), adding the fields to `used`.
    fn number(&self, fields: &'static str, used: &mut Vec<&str>) -> Result<f64, Error> {
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
        used: &mut Vec<&str>,
    ) -> Result<Vec<(&'static str, f64)>, Error> {
        let mut params: Vec<(&str, f64)> = Vec::new();
        for &(param, field) in SHAPE.iter().chain(family.fields) {
            params.push((param, self.number(field, used)?));
        }
        if family.template != "mla-moe" {
            let heads = self.number("num_attention_heads", used)?;
            let hidden = self.number("hidden_size", used)?;
            let layers = self.number("num_hidden_layers", used)?;
            self.attention(model_type, (heads, hidden, layers), &mut params);
        }
        Ok(params)
    }

    /// The params of grouped-query attention, for every template but MLA's: KV heads, head
    /// width, and the sliding-window layers, from the attention heads, hidden width and layers.
    fn attention(
        &self,
        model_type: &str,
        (heads, hidden, layers): (f64, f64, f64),
        params: &mut Vec<(&'static str, f64)>,
    ) {
        let number = |field: &str| self.fields.get(field).and_then(Value::as_f64);
        params.push(("kv_heads", number("num_key_value_heads").unwrap_or(heads)));
        params.push(("head_dim", number("head_dim").unwrap_or(hidden / heads)));
        let window = number("sliding_window");
        let enabled = self
            .fields
            .get("use_sliding_window")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if let (Some(window), true) = (window, enabled) {
            let local = local_layers(&self.fields, model_type, layers);
            params.push(("local_layers", local));
            params.push(("window", window));
        } else {
            params.push(("local_layers", 0.0));
        }
    }

    /// The model's name: the last part of `_name_or_path`, else the file's stem.
    fn name(&self) -> String {
        self.fields
            .get("_name_or_path")
            .and_then(Value::as_str)
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| {
                std::path::Path::new(self.file)
                    .file_stem()
                    .map_or("imported".into(), |s| s.to_string_lossy().into_owned())
            })
    }
}

/// The workload file's text: a comment saying where it came from and what it leaves out, then
/// the template and its params. Text from the config goes into the comment through
/// [`comment_text`] and into the `name` field through [`yaml_quoted`], so that no name or key
/// can end the comment early or add a field, and the name reads back exactly as it was.
fn workload_yaml(
    name: &str,
    model_type: &str,
    template: &str,
    not_understood: &[String],
    params: &[(&str, f64)],
) -> String {
    let mut yaml = format!(
        "# {}: imported from a Hugging Face config.json (model_type `{}`).\n",
        comment_text(name),
        comment_text(model_type)
    );
    if !not_understood.is_empty() {
        let keys: Vec<String> = not_understood.iter().map(|k| comment_text(k)).collect();
        yaml.push_str(&format!(
            "# Fields not understood (left out of the step): {}\n",
            keys.join(", ")
        ));
    }
    yaml.push_str(&format!(
        "name: {}\ntemplate: {}\nparams:\n",
        yaml_quoted(name),
        template
    ));
    for (param, value) in params {
        yaml.push_str(&format!("  {param}: {value}\n"));
    }
    yaml
}

/// `text` for a YAML comment: `\`, and every character [`yaml_quoted`] would escape (controls,
/// line and paragraph separators, ...) written as its Rust escape (`\\`, `\n`, `\u{2028}`),
/// so the comment is one line whatever the text holds and reads unambiguously.
fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' || !shown_as_is(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a YAML double-quoted scalar that reads back as exactly `text`: `"` and `\`
/// escaped, and every character YAML would not keep as it is (controls, the line breaks of
/// YAML 1.1 and Unicode, bidirectional overrides, the byte order mark, noncharacters)
/// written as a `\u` or `\U` escape. Printable text is written as it is, so the name of an
/// ordinary model is the same as its JSON string.
fn yaml_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if shown_as_is(c) => out.push(c),
            c if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08X}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// Layers with sliding-window attention: those `layer_types` marks, else every layer for
/// Mistral and Qwen2 (a window on all layers) and every other layer for the families that
/// alternate (Gemma-2, gpt-oss).
fn local_layers(config: &Map<String, Value>, model_type: &str, layers: f64) -> f64 {
    if let Some(Value::Array(types)) = config.get("layer_types") {
        return types
            .iter()
            .filter(|t| t.as_str() == Some("sliding_attention"))
            .count() as f64;
    }
    match model_type {
        "gemma2" | "gpt_oss" => (layers / 2.0).floor(),
        _ => layers,
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
        let imported = import(config, "config.json").unwrap();
        assert_eq!(imported.template, "dense");
        assert_eq!(imported.not_understood, ["some_new_field"]);
        assert!(
            imported.yaml.contains("  head_dim: 128\n"),
            "{}",
            imported.yaml
        );
        assert!(imported.yaml.contains("  kv_heads: 8\n"));
        assert!(imported.yaml.contains("  local_layers: 0\n"));
        assert!(imported
            .yaml
            .contains("Fields not understood (left out of the step): some_new_field"));
    }

    #[test]
    fn bad_configs_are_named() {
        let err = import("{\"model_type\": \"llama\",", "c.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.json:1:"), "{err}");
        let err = import("{\"model_type\": \"bert\"}", "c.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`bert` is not a family"), "{err}");
        let err = import("{\"model_type\": \"llama\"}", "c.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("num_hidden_layers"), "{err}");
    }
}
