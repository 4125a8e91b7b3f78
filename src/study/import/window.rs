//! Which layers attend through a sliding window, by each family's own fields, read as Hugging
//! Face transformers reads them (docs/sources.md: HF-CFG). An explicit `layer_types` list
//! wins wherever the family has one; otherwise:
//! - Mistral, Mixtral: `sliding_window` on every layer; `null` is none.
//! - Qwen2, Qwen3 and their MoE: only with `use_sliding_window: true` (default false), and
//!   then only the layers from index `max_window_layers` on; the layers below it attend fully.
//! - Gemma-2, gpt-oss: layer i slides when i is even (every other layer, the first sliding).
//! - Gemma-3: layer i slides unless (i + 1) is a multiple of `sliding_window_pattern` (6).

use serde_json::{Map, Value};

use super::quant::Refusal;

/// The sliding-window layers and their window, or none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Windows {
    pub local_layers: u64,
    pub window: Option<u64>,
}

const NONE: Windows = Windows {
    local_layers: 0,
    window: None,
};

/// The windows of a config of `model_type` with `layers` layers; the fields read are added
/// to `used`.
pub(super) fn windows(
    config: &Map<String, Value>,
    model_type: &str,
    layers: u64,
    used: &mut Vec<&'static str>,
) -> Result<Windows, Refusal> {
    let family = match model_type {
        "mistral" | "mixtral" => Rule::EveryLayer,
        "qwen2" | "qwen3" | "qwen2_moe" | "qwen3_moe" => Rule::FromMaxWindowLayers,
        "gemma2" | "gpt_oss" => Rule::Pattern(2),
        "gemma3_text" => Rule::Pattern(0),
        _ => return Ok(NONE),
    };
    used.push("sliding_window");
    let window = match config.get("sliding_window") {
        None | Some(Value::Null) => return Ok(NONE),
        Some(v) => v.as_u64().filter(|w| *w > 0).ok_or_else(|| Refusal {
            field: "sliding_window".into(),
            message: format!("expected a positive whole number of positions or null, found {v}"),
        })?,
    };
    if family == Rule::FromMaxWindowLayers {
        used.extend(["use_sliding_window", "max_window_layers"]);
        // Qwen2Config sets sliding_window to None unless use_sliding_window is true.
        if config.get("use_sliding_window").and_then(Value::as_bool) != Some(true) {
            return Ok(NONE);
        }
    }
    used.push("layer_types");
    let local = match config.get("layer_types") {
        Some(types) => listed(types, layers)?,
        None => family.local_layers(config, layers, used)?,
    };
    Ok(Windows {
        local_layers: local,
        window: (local > 0).then_some(window),
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    EveryLayer,
    FromMaxWindowLayers,
    /// Every layer but each `n`th slides (`0`: `n` from `sliding_window_pattern`, default 6).
    Pattern(u64),
}

impl Rule {
    fn local_layers(
        self,
        config: &Map<String, Value>,
        layers: u64,
        used: &mut Vec<&'static str>,
    ) -> Result<u64, Refusal> {
        Ok(match self {
            Rule::EveryLayer => layers,
            Rule::FromMaxWindowLayers => {
                // Qwen2Config's default is 28.
                let full = whole(config, "max_window_layers")?.unwrap_or(28);
                layers.saturating_sub(full)
            }
            Rule::Pattern(n) => {
                let n = if n == 0 {
                    used.push("sliding_window_pattern");
                    whole(config, "sliding_window_pattern")?.unwrap_or(6)
                } else {
                    n
                };
                if n == 0 {
                    return Err(Refusal {
                        field: "sliding_window_pattern".into(),
                        message: "expected a positive whole number".into(),
                    });
                }
                // Layer i slides unless (i + 1) is a multiple of n.
                layers - layers / n
            }
        })
    }
}

fn whole(config: &Map<String, Value>, key: &str) -> Result<Option<u64>, Refusal> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| Refusal {
            field: key.into(),
            message: format!("expected a whole number, found {v}"),
        }),
    }
}

/// The sliding layers a `layer_types` list marks; it must list every layer.
fn listed(types: &Value, layers: u64) -> Result<u64, Refusal> {
    let refuse = |message: String| Refusal {
        field: "layer_types".into(),
        message,
    };
    let Value::Array(types) = types else {
        return Err(refuse(format!(
            "expected a list of layer types, found {types}"
        )));
    };
    if types.len() as u64 != layers {
        return Err(refuse(format!(
            "lists {} layers; num_hidden_layers is {layers}",
            types.len()
        )));
    }
    let mut local = 0;
    for t in types {
        match t.as_str() {
            Some("sliding_attention") => local += 1,
            Some("full_attention") => {}
            _ => {
                return Err(refuse(format!(
                    "{t} is not a layer type stepcost prices (sliding_attention, full_attention)"
                )))
            }
        }
    }
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(json: &str, model_type: &str, layers: u64) -> Windows {
        let Value::Object(config) = serde_json::from_str(json).unwrap() else {
            panic!("not an object")
        };
        windows(&config, model_type, layers, &mut Vec::new()).unwrap()
    }

    #[test]
    fn each_family_reads_its_own_fields() {
        // Qwen2: off unless use_sliding_window; then layers 20..27 of 28 slide.
        let qwen = r#"{"sliding_window": 4096, "max_window_layers": 20}"#;
        assert_eq!(of(qwen, "qwen2", 28).local_layers, 0);
        let on = r#"{"sliding_window": 4096, "max_window_layers": 20, "use_sliding_window": true}"#;
        assert_eq!(
            of(on, "qwen2", 28),
            Windows {
                local_layers: 8,
                window: Some(4096)
            }
        );
        // Mistral: every layer, or none when null.
        assert_eq!(
            of(r#"{"sliding_window": 4096}"#, "mistral", 32).local_layers,
            32
        );
        assert_eq!(of(r#"{"sliding_window": null}"#, "mistral", 32), NONE);
        // Gemma-2 with an odd layer count: layers 0, 2, 4 of 5 slide.
        assert_eq!(
            of(r#"{"sliding_window": 4096}"#, "gemma2", 5).local_layers,
            3
        );
        // Gemma-3: 62 layers, pattern 6: layers 5, 11, ..., 59 are global (10 of them).
        let g3 = r#"{"sliding_window": 1024, "sliding_window_pattern": 6}"#;
        assert_eq!(of(g3, "gemma3_text", 62).local_layers, 52);
        // An explicit list wins.
        let listed = r#"{"sliding_window": 128,
            "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]}"#;
        assert_eq!(of(listed, "gpt_oss", 3).local_layers, 2);
        assert_eq!(of(r#"{"sliding_window": 4096}"#, "llama", 32), NONE);
    }
}
