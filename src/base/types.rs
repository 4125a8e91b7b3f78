//! The groups a model's weights fall in, the slots a tensor's format comes from, what
//! `--dtype KEY=TYPE` sets, and the format of every slot one scenario chooses.

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
    pub const ALL: [WeightGroup; 4] = [
        WeightGroup::Embed,
        WeightGroup::Attention,
        WeightGroup::Ffn,
        WeightGroup::Experts,
    ];

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
/// in no group, such as a norm's scale, which follows `weight`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slot {
    Weight(Option<WeightGroup>),
    Activation,
    Kv,
}

impl Slot {
    /// Every slot, in the order of [`Types`]'s array.
    pub const ALL: [Slot; 7] = [
        Slot::Weight(None),
        Slot::Weight(Some(WeightGroup::Embed)),
        Slot::Weight(Some(WeightGroup::Attention)),
        Slot::Weight(Some(WeightGroup::Ffn)),
        Slot::Weight(Some(WeightGroup::Experts)),
        Slot::Activation,
        Slot::Kv,
    ];

    /// Position in [`Slot::ALL`].
    pub fn index(self) -> usize {
        match self {
            Slot::Weight(None) => 0,
            Slot::Weight(Some(g)) => 1 + g as usize,
            Slot::Activation => 5,
            Slot::Kv => 6,
        }
    }

    pub fn role(self) -> Role {
        match self {
            Slot::Weight(_) => Role::Weight,
            Slot::Activation => Role::Activation,
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
/// of weights, the activations or the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKey {
    Role(Role),
    Group(WeightGroup),
}

impl TypeKey {
    /// How many distinct keys there are: three roles and four groups.
    pub const COUNT: usize = 7;

    /// `weight`, `experts.weight`, `activation`, `kv`.
    pub fn name(self) -> String {
        match self {
            TypeKey::Role(r) => r.name().to_owned(),
            TypeKey::Group(g) => format!("{}.weight", g.name()),
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
            None => s.parse::<Role>().map(TypeKey::Role).map_err(|_| {
                format!(
                    "unknown type key `{s}`; expected weight, activation, kv or GROUP.weight \
                     (embed, attention, ffn, experts)"
                )
            }),
        }
    }
}

/// The format of every slot in one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Types {
    slots: [Format; 7],
}

impl Default for Types {
    /// bf16 everywhere.
    fn default() -> Self {
        Types {
            slots: [Format::Bf16; 7],
        }
    }
}

impl Types {
    pub fn get(&self, slot: Slot) -> Format {
        self.slots[slot.index()]
    }

    /// The format of a role's ungrouped tensors (for `weight`, weights in no group).
    pub fn role(&self, role: Role) -> Format {
        self.get(role.into())
    }

    /// Sets what `key` names: `weight` sets every weight group.
    pub fn set(&mut self, key: TypeKey, format: Format) {
        match key {
            TypeKey::Role(Role::Weight) => self.slots[..5].fill(format),
            TypeKey::Role(role) => self.slots[Slot::from(role).index()] = format,
            TypeKey::Group(g) => self.slots[Slot::Weight(Some(g)).index()] = format,
        }
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
    /// format: `bf16+experts:mxfp4/bf16/bf16`.
    pub fn brief(&self) -> String {
        let keys = self.keys();
        let mut weight = self.slots[0].name().to_owned();
        for (key, format) in &keys[1..keys.len() - 2] {
            if let TypeKey::Group(g) = key {
                weight.push_str(&format!("+{}:{format}", g.name()));
            }
        }
        format!("{weight}/{}/{}", self.slots[5], self.slots[6])
    }

    /// The settings that give these types, shortest first: `weight` (the ungrouped weights'
    /// format), each group that differs from it, `activation`, `kv`.
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

/// Parses `KEY=FORMAT`, as `--dtype experts.weight=mxfp4` writes it.
pub fn parse_type(text: &str) -> Result<(TypeKey, Format), String> {
    let (key, format) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=TYPE (e.g. weight=fp8), found `{text}`"))?;
    Ok((key.parse()?, format.parse()?))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
