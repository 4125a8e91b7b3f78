//! A config's `quantization_config` as the checkpoint's weight format per tensor group. Each
//! scheme stepcost reads maps to one named format; anything else is refused, so that a
//! quantised checkpoint is never priced as bf16 by accident. Modules a scheme leaves
//! unquantised (`modules_to_not_convert`, `ignore`) keep the checkpoint's 16-bit type: a name
//! or glob by the parts of the names it holds, a compressed-tensors `re:` pattern by the
//! modules of each group it matches (all of a group's, or it is refused: a group has one
//! format).

use serde_json::{Map, Value};

use super::modules::{module_groups, module_names, one_layer};
use crate::base::format::Format;
use crate::base::types::WeightGroup as Group;

/// The weight formats of a checkpoint: one per group, and what the importer noted on the way.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Checkpoint {
    /// The format of `weight`: the quantised one where most groups have it, else the
    /// unquantised type.
    pub quantised: Format,
    /// Groups whose format differs from `quantised`.
    pub exceptions: Vec<(Group, Format)>,
    /// The KV cache's format where the checkpoint fixes one (compressed-tensors' `kv_cache_scheme`).
    pub kv: Option<Format>,
    /// Lines for the workload's comment: what was read, and what is left to the user.
    pub notes: Vec<String>,
    /// Keys of `quantization_config` that change nothing counted, as `quantization_config.KEY`.
    pub ignored: Vec<String>,
}

/// What went wrong, with the field (dotted, from the config's top) it concerns.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refusal {
    pub field: String,
    pub message: String,
}

fn refuse(field: impl Into<String>, message: impl Into<String>) -> Refusal {
    Refusal {
        field: field.into(),
        message: message.into(),
    }
}

/// The schemes read, for the message that refuses another.
const SCHEMES: &str = "fp8 (per tensor, or weight_block_size [128, 128]), fbgemm_fp8, awq and \
                       gptq (4 bits, groups of 32, 64 or 128; gptq also 8 bits), mxfp4, \
                       compressed-tensors";

/// The unquantised type of the checkpoint: `torch_dtype` (or `dtype`), bf16 when absent.
/// float32 checkpoints are served in 16 bits (vLLM's `dtype: auto` loads them as bf16), so
/// they are priced as bf16, and the comment says so.
pub(super) fn unquantised(config: &Map<String, Value>, notes: &mut Vec<String>) -> Format {
    let dtype = (config.get("torch_dtype").or_else(|| config.get("dtype"))).and_then(Value::as_str);
    match dtype {
        Some("float16") => Format::Fp16,
        Some("float32") => {
            notes.push(
                "torch_dtype float32: priced as bf16, the 16-bit type it is served in (an assumption)"
                    .into(),
            );
            Format::Bf16
        }
        None | Some("bfloat16") => Format::Bf16,
        Some(other) => {
            notes.push(format!(
                "torch_dtype `{other}` is not a type stepcost reads: priced as bf16 (an assumption)"
            ));
            Format::Bf16
        }
    }
}

/// The checkpoint's formats, from `quantization_config` when the config has one. `groups` are
/// the template's weight groups.
pub(super) fn checkpoint(
    config: &Map<String, Value>,
    model_type: &str,
    groups: &[Group],
) -> Result<Checkpoint, Refusal> {
    let mut notes = Vec::new();
    let base = unquantised(config, &mut notes);
    let Some(q) = config.get("quantization_config") else {
        return Ok(Checkpoint {
            quantised: base,
            exceptions: Vec::new(),
            kv: None,
            notes,
            ignored: Vec::new(),
        });
    };
    let Value::Object(q) = q else {
        return Err(refuse("quantization_config", "expected an object"));
    };
    let mut read = Reader {
        q,
        used: Vec::new(),
        notes,
        kv: None,
    };
    let (format, keep) = read.scheme()?;
    // A quantised checkpoint keeps its embedding and lm_head in 16 bits; so do the modules
    // it names as left out.
    let mut formats: Vec<(Group, Format)> = groups.iter().map(|g| (*g, format)).collect();
    let mut unconverted = vec![Group::Embed];
    let (patterns, names): (Vec<_>, Vec<_>) =
        keep.iter().partition(|(_, name)| name.starts_with("re:"));
    for (field, name) in names {
        unconverted.extend(read.groups_of(field, name, groups)?);
    }
    unconverted.extend(read.matched_groups(&patterns, model_type, groups)?);
    for (group, f) in &mut formats {
        if unconverted.contains(group) {
            *f = base;
        }
    }
    // `weight` takes the format most groups have (it also types the norms, which no scheme
    // quantises); the other groups are listed apart, as the shipped gpt-oss file does.
    let count = formats.iter().filter(|(_, f)| *f == format).count();
    let quantised = if 2 * count > formats.len() {
        format
    } else {
        base
    };
    let ignored = q
        .keys()
        .filter(|k| !read.used.contains(&k.as_str()))
        .map(|k| format!("quantization_config.{k}"))
        .collect();
    Ok(Checkpoint {
        quantised,
        exceptions: formats
            .into_iter()
            .filter(|(_, f)| *f != quantised)
            .collect(),
        kv: read.kv,
        notes: read.notes,
        ignored,
    })
}

/// Reads one `quantization_config`, remembering the keys it used.
struct Reader<'a> {
    q: &'a Map<String, Value>,
    used: Vec<&'static str>,
    notes: Vec<String>,
    kv: Option<Format>,
}

impl Reader<'_> {
    fn get(&mut self, key: &'static str) -> Option<&Value> {
        self.used.push(key);
        self.q.get(key).filter(|v| !v.is_null())
    }

    fn whole(&mut self, key: &'static str) -> Option<u64> {
        self.get(key).and_then(Value::as_u64)
    }

    /// The format of the quantised weights, and the module names the scheme leaves out
    /// (each with the field that listed it).
    fn scheme(&mut self) -> Result<(Format, Vec<(String, String)>), Refusal> {
        let method = self
            .get("quant_method")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                refuse(
                    "quantization_config.quant_method",
                    "missing: it names the quantisation scheme",
                )
            })?;
        let method = method.to_owned();
        let format = match method.as_str() {
            "fp8" => self.fp8()?,
            "fbgemm_fp8" => {
                self.notes.push(
                    "fbgemm_fp8: fp8 weights with a scale per output channel (priced as fp8)"
                        .into(),
                );
                Format::Fp8
            }
            "awq" | "gptq" => self.int(&method)?,
            "mxfp4" => Format::Mxfp4,
            "compressed-tensors" => return self.compressed_tensors(),
            other => {
                return Err(refuse(
                    "quantization_config.quant_method",
                    format!(
                        "`{}` is not a quantisation stepcost imports (it would be priced wrongly); \
                         it imports: {SCHEMES}",
                        other.escape_debug()
                    ),
                ))
            }
        };
        let scheme = self
            .get("activation_scheme")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(scheme) = scheme {
            self.notes.push(format!(
                "activations are quantised to fp8 at run time (activation_scheme {}); the \
                 workload keeps them in bf16: add `--dtype activation=fp8` to price fp8 x fp8 GEMMs",
                scheme.escape_debug()
            ));
        }
        let keep = self.names("modules_to_not_convert")?;
        Ok((format, keep))
    }

    /// `quant_method: fp8`: per tensor, or with 128 x 128 block scales.
    fn fp8(&mut self) -> Result<Format, Refusal> {
        match self.get("weight_block_size") {
            None => Ok(Format::Fp8),
            Some(v) if *v == serde_json::json!([128, 128]) => Ok(Format::Fp8B128),
            Some(v) => Err(refuse(
                "quantization_config.weight_block_size",
                format!("{v} is not a block stepcost prices; it prices [128, 128] (fp8-b128)"),
            )),
        }
    }

    /// AWQ and GPTQ: 4 bits in groups of 32, 64 or 128, with a zero point (AWQ's
    /// `zero_point`, GPTQ's `sym: false`) or without; GPTQ's 8 bits.
    fn int(&mut self, method: &str) -> Result<Format, Refusal> {
        let bits = self.whole("bits");
        let group = self.whole("group_size");
        // AWQ stores a zero point unless `zero_point: false`; GPTQ is symmetric unless
        // `sym: false` (AutoAWQ's and AutoGPTQ's defaults).
        let (key, default) = match method {
            "awq" => ("zero_point", true),
            _ => ("sym", true),
        };
        let flag = match self.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(refuse(
                    format!("quantization_config.{key}"),
                    format!("expected true or false, found {v}"),
                ))
            }
        };
        let asymmetric = if method == "awq" { flag } else { !flag };
        match (bits, group) {
            (Some(4), Some(g)) => {
                int4_group(g, asymmetric).ok_or_else(|| int_refusal(method, bits, group))
            }
            (Some(8), _) if method == "gptq" => Ok(Format::Int8),
            _ => Err(int_refusal(method, bits, group)),
        }
    }

    /// compressed-tensors: every config group's weights must name the same format, and its
    /// targets must be whole layers (`Linear`).
    fn compressed_tensors(&mut self) -> Result<(Format, Vec<(String, String)>), Refusal> {
        self.used
            .extend(["format", "quantization_status", "global_compression_ratio"]);
        let groups = match self.get("config_groups") {
            Some(Value::Object(g)) if !g.is_empty() => g.clone(),
            _ => {
                return Err(refuse(
                    "quantization_config.config_groups",
                    "missing or empty: it says how the weights are quantised",
                ))
            }
        };
        let mut format = None;
        for (name, group) in &groups {
            let field = format!("quantization_config.config_groups.{name}");
            let targets = group.get("targets").and_then(Value::as_array);
            if targets.is_none_or(|t| t.iter().any(|x| x.as_str() != Some("Linear"))) {
                return Err(refuse(
                    format!("{field}.targets"),
                    "stepcost imports groups that target every `Linear` layer; per-module \
                     targets would give one group of weights several formats",
                ));
            }
            let f = weights_format(group.get("weights"), &field)?;
            if format.is_some_and(|x| x != f) {
                return Err(refuse(field, "config groups with different formats"));
            }
            format = Some(f);
            if group.get("input_activations").is_some_and(|a| !a.is_null()) {
                self.notes.push(format!(
                    "{name}: activations are quantised too; the workload keeps them in bf16 \
                     (add `--dtype activation=...` to price that)"
                ));
            }
        }
        if let Some(kv) = self.get("kv_cache_scheme").cloned() {
            self.kv = Some(weights_format(
                Some(&kv),
                "quantization_config.kv_cache_scheme",
            )?);
        }
        let keep = self.names("ignore")?;
        Ok((format.unwrap_or(Format::Bf16), keep))
    }

    /// The module names listed under `key`, each with its field.
    fn names(&mut self, key: &'static str) -> Result<Vec<(String, String)>, Refusal> {
        let field = format!("quantization_config.{key}");
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(|s| (field.clone(), s.to_owned()))
                        .ok_or_else(|| refuse(&field, format!("expected module names, found {v}")))
                })
                .collect(),
            Some(v) => Err(refuse(
                field,
                format!("expected a list of module names, found {v}"),
            )),
        }
    }

    /// The groups compressed-tensors' `re:` patterns leave unquantised between them: those
    /// whose every module (by [`module_names`]) one of the patterns matches from its
    /// start, as Python's `re.match` does. A group some patterns match in part is refused;
    /// a pattern that matches no module of any group is noted.
    fn matched_groups(
        &mut self,
        patterns: &[&(String, String)],
        model_type: &str,
        groups: &[Group],
    ) -> Result<Vec<Group>, Refusal> {
        let mut compiled = Vec::new();
        for (field, name) in patterns {
            let body = &name["re:".len()..];
            let regex = regex::RegexBuilder::new(&format!("^(?:{body})"))
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    refuse(
                        field,
                        format!(
                            "`{}` is not a pattern stepcost reads: {e}",
                            name.escape_debug()
                        ),
                    )
                })?;
            compiled.push((field, name, regex, false));
        }
        let mut kept = Vec::new();
        for &group in groups {
            let modules = module_names(model_type, group);
            let matched: Vec<&str> = (modules.iter().copied())
                .filter(|m| compiled.iter().any(|(_, _, r, _)| r.is_match(m)))
                .collect();
            for (_, _, r, used) in &mut compiled {
                *used |= modules.iter().any(|m| r.is_match(m));
            }
            if matched.is_empty() {
                continue;
            }
            if matched.len() < modules.len() && group != Group::Embed {
                let missed: Vec<&str> = (modules.iter().copied())
                    .filter(|m| !matched.contains(m))
                    .collect();
                let (field, _, _, _) = compiled
                    .iter()
                    .find(|(_, _, r, _)| modules.iter().any(|m| r.is_match(m)))
                    .expect("a pattern matched");
                return Err(refuse(
                    field.as_str(),
                    format!(
                        "the patterns leave {} unquantised but not {}: one group of weights \
                         ({}) would hold two formats, which a workload cannot price",
                        matched.join(", "),
                        missed.join(", "),
                        group.name()
                    ),
                ));
            }
            kept.push(group);
        }
        for (_, name, _, used) in &compiled {
            if !used {
                self.notes.push(format!(
                    "`{}` matches no module of a weight group stepcost prices (left as it is)",
                    name.escape_debug()
                ));
            }
        }
        Ok(kept)
    }

    /// The groups a module name (a name, or a glob with `*`) covers.
    /// A name for one layer's module is noted, not applied: a group has one format.
    fn groups_of(
        &mut self,
        field: &str,
        name: &str,
        groups: &[Group],
    ) -> Result<Vec<Group>, Refusal> {
        let found = module_groups(name);
        if found.is_empty() {
            return Err(refuse(
                field,
                format!(
                    "`{}` names no weight group stepcost knows (embedding and lm_head, \
                     attention, FFN and router, experts)",
                    name.escape_debug()
                ),
            ));
        }
        if one_layer(name) {
            self.notes.push(format!(
                "`{}` stays unquantised in one layer only; its group is priced in the \
                 quantised format",
                name.escape_debug()
            ));
            return Ok(Vec::new());
        }
        Ok(found.into_iter().filter(|g| groups.contains(g)).collect())
    }
}

/// The grouped int4 format of `group` values with or without a zero point.
fn int4_group(group: u64, asymmetric: bool) -> Option<Format> {
    Some(match (group, asymmetric) {
        (32, false) => Format::Int4G32,
        (32, true) => Format::Int4G32Asym,
        (64, false) => Format::Int4G64,
        (64, true) => Format::Int4G64Asym,
        (128, false) => Format::Int4G128Sym,
        (128, true) => Format::Int4G128,
        _ => return None,
    })
}

fn int_refusal(method: &str, bits: Option<u64>, group: Option<u64>) -> Refusal {
    refuse(
        "quantization_config.bits",
        format!(
            "{method} with bits {} and group_size {} is not a format stepcost prices; it prices \
             4 bits in groups of 32, 64 or 128 (int4-g32, int4-g64, int4-g128, each symmetric \
             or with a zero point){}",
            show(bits),
            show(group),
            if method == "gptq" {
                " and 8 bits (int8)"
            } else {
                ""
            }
        ),
    )
}

/// The format a compressed-tensors `weights` (or `kv_cache_scheme`) entry describes.
fn weights_format(weights: Option<&Value>, field: &str) -> Result<Format, Refusal> {
    let field = format!("{field}.weights");
    let w = weights
        .and_then(Value::as_object)
        .ok_or_else(|| refuse(&field, "missing: it says how the weights are quantised"))?;
    let bits = w.get("num_bits").and_then(Value::as_u64);
    let kind = w.get("type").and_then(Value::as_str).unwrap_or("");
    let strategy = w.get("strategy").and_then(Value::as_str).unwrap_or("");
    let group = w.get("group_size").and_then(Value::as_u64);
    let block = w.get("block_structure").filter(|b| !b.is_null());
    let format = match (bits, kind, strategy) {
        (Some(8), "float", "block") if block == Some(&serde_json::json!([128, 128])) => {
            Some(Format::Fp8B128)
        }
        (Some(8), "float", "tensor" | "channel" | "") => Some(Format::Fp8),
        (Some(8), "int", "tensor" | "channel" | "") => Some(Format::Int8),
        // `symmetric` is compressed-tensors' own default (true): no zero point.
        (Some(4), "int", "group") => {
            let symmetric = w.get("symmetric").and_then(Value::as_bool).unwrap_or(true);
            group.and_then(|g| int4_group(g, !symmetric))
        }
        (Some(4), "float", _) if group == Some(16) => Some(Format::Nvfp4),
        _ => None,
    };
    format.ok_or_else(|| {
        refuse(
            field,
            format!(
                "num_bits {}, type `{}`, strategy `{}`, group_size {} is not a format stepcost \
                 prices; it prices fp8 (tensor or channel), fp8 blocks of [128, 128], int8, \
                 int4 in groups of 32, 64 or 128 (symmetric or not), and nvfp4 (4-bit float in \
                 groups of 16)",
                show(bits),
                kind.escape_debug(),
                strategy.escape_debug(),
                show(group)
            ),
        )
    })
}

fn show<T: ToString>(v: Option<T>) -> String {
    v.map_or("(none)".into(), |v| v.to_string())
}
