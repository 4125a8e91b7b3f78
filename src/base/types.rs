//! The groups a model's weights fall in, the slots a tensor's format comes from, what
//! `--dtype KEY=TYPE` sets, and the format of every slot one scenario chooses.
//!
//! `activation` is the format a GEMM's activation input is stored in (what W8A8 serving
//! quantises to); `output` is the format of every other activation value: what GEMMs write
//! (fp8 GEMMs of vLLM, SGLang and TensorRT-LLM write bf16), the residual stream, attention's
//! and norms' inputs. Unset, `output` follows `activation` where that is 16 bits or wider and
//! is bf16 otherwise, so a bf16 or fp16 scenario is one format throughout.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::dtype::Role;
use super::format::Format;

/// A group of a model's weights that a checkpoint may store in its own format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightGroup {
    /// The embedding table and the lm_head.
    Embed,
    /// q, k, v and output projections.
    Attention,
    /// Dense and shared feed-forward layers, and the router.
    Ffn,
    /// Routed experts.
    Experts,
}

impl WeightGroup {
    /// Every group, in the order of their slots in [`Slot::ALL`].
    pub const ALL: [WeightGroup; 4] = [
        WeightGroup::Embed,
        WeightGroup::Attention,
        WeightGroup::Ffn,
        WeightGroup::Experts,
    ];

    /// `embed`, `attention`, `ffn` or `experts`, as a `GROUP.weight` key writes it.
    pub fn name(self) -> &'static str {
        match self {
            WeightGroup::Embed => "embed",
            WeightGroup::Attention => "attention",
            WeightGroup::Ffn => "ffn",
            WeightGroup::Experts => "experts",
        }
    }
}

impl FromStr for WeightGroup {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WeightGroup::ALL
            .into_iter()
            .find(|g| g.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown weight group `{s}`; expected one of embed, attention, ffn, experts"
                )
            })
    }
}

/// Where a tensor's format comes from: its role, and for a weight its group (`None`: a weight
/// in no group, such as a norm's scale, which follows `weight`). An activation value is in
/// `Activation` where a GEMM with a weight reads it (a quantised GEMM input) and in `Output`
/// otherwise (a GEMM's output, the residual stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    /// A weight: of one group, or (`None`) of no group, such as a norm's scale, which follows
    /// `weight`.
    Weight(Option<WeightGroup>),
    /// A GEMM's activation input, which a quantised GEMM reads in its own format.
    Activation,
    /// The KV cache.
    Kv,
    /// Every other activation value: GEMM outputs, the residual stream, attention's and norms'
    /// inputs.
    Output,
}

impl Slot {
    /// Every slot, in the order of [`Types`]'s array.
    pub const ALL: [Slot; 8] = [
        Slot::Weight(None),
        Slot::Weight(Some(WeightGroup::Embed)),
        Slot::Weight(Some(WeightGroup::Attention)),
        Slot::Weight(Some(WeightGroup::Ffn)),
        Slot::Weight(Some(WeightGroup::Experts)),
        Slot::Activation,
        Slot::Kv,
        Slot::Output,
    ];

    /// Position in [`Slot::ALL`].
    pub fn index(self) -> usize {
        match self {
            Slot::Weight(None) => 0,
            Slot::Weight(Some(g)) => 1 + g as usize,
            Slot::Activation => 5,
            Slot::Kv => 6,
            Slot::Output => 7,
        }
    }

    /// The role the slot's tensors play (`Output` is an activation).
    pub fn role(self) -> Role {
        match self {
            Slot::Weight(_) => Role::Weight,
            Slot::Activation | Slot::Output => Role::Activation,
            Slot::Kv => Role::Kv,
        }
    }
}

impl From<Role> for Slot {
    fn from(role: Role) -> Slot {
        match role {
            Role::Weight => Slot::Weight(None),
            Role::Activation => Slot::Activation,
            Role::Kv => Slot::Kv,
        }
    }
}

/// What a `--dtype KEY=FORMAT` (or a workload's `dtypes:` entry) sets: every weight, one group
/// of weights, the activations (GEMM inputs), the GEMM outputs or the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKey {
    /// A role's key (`weight`, `activation`, `kv`): `weight` sets every weight slot.
    Role(Role),
    /// One group's weights: `GROUP.weight`.
    Group(WeightGroup),
    /// What GEMMs write, and the activations no GEMM with a weight reads.
    Output,
}

impl TypeKey {
    /// How many distinct keys there are: three roles, four groups and `output`.
    pub const COUNT: usize = 8;

    /// The positions in [`Slot::ALL`] the key sets (`weight`: every weight slot); `None` for
    /// `output`, which follows `activation` until set.
    fn slots(self) -> Option<std::ops::Range<usize>> {
        let one = |slot: Slot| slot.index()..slot.index() + 1;
        match self {
            TypeKey::Role(Role::Weight) => Some(0..5),
            TypeKey::Role(role) => Some(one(Slot::from(role))),
            TypeKey::Group(g) => Some(one(Slot::Weight(Some(g)))),
            TypeKey::Output => None,
        }
    }

    /// `weight`, `experts.weight`, `activation`, `kv`, `output`.
    pub fn name(self) -> String {
        match self {
            TypeKey::Role(r) => r.name().to_owned(),
            TypeKey::Group(g) => format!("{}.weight", g.name()),
            TypeKey::Output => "output".to_owned(),
        }
    }
}

impl From<Role> for TypeKey {
    fn from(role: Role) -> TypeKey {
        TypeKey::Role(role)
    }
}

impl fmt::Display for TypeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for TypeKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s.split_once('.') {
            Some((group, "weight")) => Ok(TypeKey::Group(group.parse()?)),
            Some(_) => Err(format!(
                "unknown type key `{s}`; a group's key is GROUP.weight (embed.weight, \
                 attention.weight, ffn.weight, experts.weight)"
            )),
            None if s == "output" => Ok(TypeKey::Output),
            None => s.parse::<Role>().map(TypeKey::Role).map_err(|_| {
                format!(
                    "unknown type key `{s}`; expected weight, activation, kv, output or \
                     GROUP.weight (embed, attention, ffn, experts)"
                )
            }),
        }
    }
}

/// The format of every slot in one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Types {
    slots: [Format; 7],
    /// `output` as set; `None` follows `activation` ([`Types::default_output`]).
    output: Option<Format>,
}

impl Default for Types {
    /// bf16 everywhere.
    fn default() -> Self {
        Types {
            slots: [Format::Bf16; 7],
            output: None,
        }
    }
}

impl Types {
    /// The format of `slot`'s tensors; `Output`, unset, follows `activation` where that is 16 bits
    /// or wider and is bf16 otherwise.
    pub fn get(&self, slot: Slot) -> Format {
        match slot {
            Slot::Output => self.output.unwrap_or_else(|| self.default_output()),
            _ => self.slots[slot.index()],
        }
    }

    /// What GEMMs write when `output` is not set: the activations' format where it is 16 bits
    /// or wider, else bf16 (fp8 and int8 W8A8 GEMMs of vLLM, SGLang and TensorRT-LLM write
    /// bf16; docs/sources.md, "fp8 serving").
    fn default_output(&self) -> Format {
        let activation = self.slots[Slot::Activation.index()];
        if activation.element().bytes() >= 2.0 {
            activation
        } else {
            Format::Bf16
        }
    }

    /// The format of a role's ungrouped tensors (for `weight`, weights in no group).
    pub fn role(&self, role: Role) -> Format {
        self.get(role.into())
    }

    /// Sets what `key` names: `weight` sets every weight group.
    pub fn set(&mut self, key: TypeKey, format: Format) {
        match key.slots() {
            Some(slots) => self.slots[slots].fill(format),
            None => self.output = Some(format),
        }
    }

    /// Sets `keys` in order, as a scenario's `--dtype` settings are applied over the workload's
    /// defaults; then, where the roles and groups they set name one 16-bit float (fp16 or bf16)
    /// and not the other, every slot they leave unset that holds the other one takes it.
    /// `--dtype activation=fp16` over a bf16 checkpoint is then an fp16 model throughout, as an
    /// engine's `--dtype float16` casts the checkpoint at load, not bf16 weights and KV cache
    /// computed with fp16 activations in fp32 ([`DType::compute_with`]). Setting both keeps the
    /// mix asked for; `output` alone sets only itself.
    ///
    /// [`DType::compute_with`]: super::dtype::DType::compute_with
    pub fn apply(&mut self, keys: impl IntoIterator<Item = (TypeKey, Format)>) {
        let mut named = [false; 7];
        let mut sixteen: Option<Format> = None;
        let mut both = false;
        for (key, format) in keys {
            self.set(key, format);
            let Some(slots) = key.slots() else { continue };
            named[slots].fill(true);
            if is_sixteen_bit_float(format) {
                both |= sixteen.is_some_and(|f| f != format);
                sixteen = Some(format);
            }
        }
        if let (Some(format), false) = (sixteen, both) {
            for (slot, named) in self.slots.iter_mut().zip(named) {
                if !named && is_sixteen_bit_float(*slot) {
                    *slot = format;
                }
            }
        }
    }

    /// `output`'s format where it was set to other than what it follows by default.
    fn set_output(&self) -> Option<Format> {
        self.output.filter(|f| *f != self.default_output())
    }

    /// The weights' one format, or `None` when groups differ.
    pub fn uniform_weight(&self) -> Option<Format> {
        let first = self.slots[0];
        self.slots[1..5]
            .iter()
            .all(|f| *f == first)
            .then_some(first)
    }

    /// `fp8/bf16/bf16` (weight/activation/kv), with the groups typed apart after the weights'
    /// format: `bf16+experts:mxfp4/bf16/bf16`, and `output` after the KV cache's where it was
    /// set apart from its default: `fp8/fp8/bf16/fp8`.
    pub fn brief(&self) -> String {
        let mut weight = self.slots[0].name().to_owned();
        for (key, format) in self.keys() {
            if let TypeKey::Group(g) = key {
                weight.push_str(&format!("+{}:{format}", g.name()));
            }
        }
        let output = self.set_output().map_or(String::new(), |f| format!("/{f}"));
        format!("{weight}/{}/{}{output}", self.slots[5], self.slots[6])
    }

    /// The settings that give these types, shortest first: `weight` (the ungrouped weights'
    /// format), each group that differs from it, `activation`, `kv`, and `output` where it
    /// differs from what it follows.
    pub fn keys(&self) -> Vec<(TypeKey, Format)> {
        let weight = self.slots[0];
        let mut keys = vec![(TypeKey::Role(Role::Weight), weight)];
        for group in WeightGroup::ALL {
            let f = self.get(Slot::Weight(Some(group)));
            if f != weight {
                keys.push((TypeKey::Group(group), f));
            }
        }
        keys.push((TypeKey::Role(Role::Activation), self.slots[5]));
        keys.push((TypeKey::Role(Role::Kv), self.slots[6]));
        if let Some(f) = self.set_output() {
            keys.push((TypeKey::Output, f));
        }
        keys
    }
}

impl fmt::Display for Types {
    /// `weight=fp8 embed.weight=bf16 activation=bf16 kv=bf16`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, format)) in self.keys().into_iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            write!(f, "{sep}{key}={format}")?;
        }
        Ok(())
    }
}

impl Serialize for Types {
    /// A map from key to format, as [`Types::keys`] lists them.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let keys = self.keys();
        let mut map = serializer.serialize_map(Some(keys.len()))?;
        for (key, format) in keys {
            map.serialize_entry(&key.name(), &format)?;
        }
        map.end()
    }
}

/// A model's own 16-bit float: the formats a checkpoint is stored and served in unquantised.
fn is_sixteen_bit_float(format: Format) -> bool {
    matches!(format, Format::Bf16 | Format::Fp16)
}

/// Parses `KEY=FORMAT`, as `--dtype experts.weight=mxfp4` writes it.
pub(crate) fn parse_type(text: &str) -> Result<(TypeKey, Format), String> {
    let (key, format) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=TYPE (e.g. weight=fp8), found `{text}`"))?;
    Ok((key.parse()?, format.parse()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sixteen_bit_float_named_is_the_models_type() {
        let key = |k: &str| k.parse::<TypeKey>().unwrap();
        // Over bf16 defaults, `activation=fp16` alone: every unset slot follows it.
        let mut t = Types::default();
        t.apply([(key("activation"), Format::Fp16)]);
        assert_eq!(t.to_string(), "weight=fp16 activation=fp16 kv=fp16");
        // Quantised weights stay as set; the KV cache follows the 16-bit activations.
        let mut t = Types::default();
        t.apply([
            (key("weight"), Format::Fp8),
            (key("activation"), Format::Fp16),
        ]);
        assert_eq!(t.to_string(), "weight=fp8 activation=fp16 kv=fp16");
        // Naming both 16-bit floats keeps the mix asked for.
        let mut t = Types::default();
        t.apply([
            (key("weight"), Format::Bf16),
            (key("activation"), Format::Fp16),
        ]);
        assert_eq!(t.to_string(), "weight=bf16 activation=fp16 kv=bf16");
        // A quantised group stays as set; the activations and KV cache follow fp16 weights.
        let mut t = Types::default();
        t.apply([
            (key("weight"), Format::Fp16),
            (key("experts.weight"), Format::Mxfp4),
        ]);
        assert_eq!(
            t.to_string(),
            "weight=fp16 experts.weight=mxfp4 activation=fp16 kv=fp16"
        );
        // `output` sets only itself; no setting changes nothing.
        let mut t = Types::default();
        t.apply([(key("output"), Format::Fp16)]);
        assert_eq!(t.role(Role::Kv), Format::Bf16);
        assert_eq!(t.get(Slot::Output), Format::Fp16);
        let mut t = Types::default();
        t.apply([]);
        assert_eq!(t, Types::default());
    }

    #[test]
    fn keys_set_one_group_or_all() {
        let mut t = Types::default();
        t.set("weight".parse().unwrap(), Format::Fp8);
        t.set("embed.weight".parse().unwrap(), Format::Bf16);
        assert_eq!(t.get(Slot::Weight(Some(WeightGroup::Experts))), Format::Fp8);
        assert_eq!(t.get(Slot::Weight(Some(WeightGroup::Embed))), Format::Bf16);
        assert_eq!(t.uniform_weight(), None);
        assert_eq!(
            t.to_string(),
            "weight=fp8 embed.weight=bf16 activation=bf16 kv=bf16"
        );
        assert!(parse_type("expert.weight=fp8")
            .unwrap_err()
            .contains("unknown weight group"));
        assert!(parse_type("experts.bias=fp8")
            .unwrap_err()
            .contains("GROUP.weight"));
        assert!(parse_type("kv=fp9")
            .unwrap_err()
            .contains("unknown data type"));
    }

    #[test]
    fn output_follows_activation_down_to_16_bits() {
        let mut t = Types::default();
        t.set("activation".parse().unwrap(), Format::Fp16);
        assert_eq!(t.get(Slot::Output), Format::Fp16);
        t.set("activation".parse().unwrap(), Format::Fp8);
        assert_eq!(t.get(Slot::Output), Format::Bf16);
        assert_eq!(t.to_string(), "weight=bf16 activation=fp8 kv=bf16");
        t.set("output".parse().unwrap(), Format::Fp8);
        assert_eq!(t.get(Slot::Output), Format::Fp8);
        assert_eq!(t.brief(), "bf16/fp8/bf16/fp8");
        assert_eq!(
            t.to_string(),
            "weight=bf16 activation=fp8 kv=bf16 output=fp8"
        );
    }
}
