//! Data types, the roles tensors play (weight, activation, KV cache) and the choice of a data
//! type per role that a scenario makes.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A numeric format a tensor is stored in or an op computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// 32-bit IEEE float, 4 bytes.
    Fp32,
    /// NVIDIA's 19-bit TensorFloat: a matrix-unit compute type, stored as fp32 (4 bytes).
    Tf32,
    /// bfloat16: 8 exponent bits, 7 mantissa bits, 2 bytes.
    Bf16,
    /// 16-bit IEEE half float, 2 bytes.
    Fp16,
    /// 8-bit float (E4M3 or E5M2), 1 byte.
    Fp8,
    /// 6-bit float, 4 values packed in 3 bytes.
    Fp6,
    /// 8-bit integer, 1 byte; its peaks are OP/s.
    Int8,
    /// 4-bit float (E2M1), half a byte.
    Fp4,
    /// 4-bit integer, half a byte.
    Int4,
}

impl DType {
    /// Every data type, in the order tables list them.
    pub const ALL: [DType; 9] = [
        DType::Fp32,
        DType::Tf32,
        DType::Bf16,
        DType::Fp16,
        DType::Fp8,
        DType::Fp6,
        DType::Int8,
        DType::Fp4,
        DType::Int4,
    ];

    /// Bytes one element occupies in memory (tf32 is stored as fp32; fp6 packs 4 values in 3 bytes).
    pub fn bytes(self) -> f64 {
        match self {
            DType::Fp32 | DType::Tf32 => 4.0,
            DType::Bf16 | DType::Fp16 => 2.0,
            DType::Fp8 | DType::Int8 => 1.0,
            DType::Fp6 => 0.75,
            DType::Fp4 | DType::Int4 => 0.5,
        }
    }

    /// The lowercase name files and flags write (`bf16`), which `Display` and `FromStr` use.
    pub fn name(self) -> &'static str {
        match self {
            DType::Fp32 => "fp32",
            DType::Tf32 => "tf32",
            DType::Bf16 => "bf16",
            DType::Fp16 => "fp16",
            DType::Fp8 => "fp8",
            DType::Fp6 => "fp6",
            DType::Int8 => "int8",
            DType::Fp4 => "fp4",
            DType::Int4 => "int4",
        }
    }

    /// The type two operands are computed in: the wider one. Two different types of the same
    /// width (fp8 with int8, bf16 with fp16) meet in the next wider floating type, since neither
    /// unit computes the other's format.
    pub fn compute_with(self, other: DType) -> DType {
        if self == other {
            return self;
        }
        match self.bytes().total_cmp(&other.bytes()) {
            std::cmp::Ordering::Greater => self,
            std::cmp::Ordering::Less => other,
            std::cmp::Ordering::Equal => match self.bytes() {
                w if w >= 2.0 => DType::Fp32,
                _ => DType::Bf16,
            },
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown data type `{s}`; expected one of {}",
                    DType::ALL.map(DType::name).join(", ")
                )
            })
    }
}

/// The part a tensor plays in the step; each role gets its own data type per scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A model weight: what a checkpoint stores.
    Weight,
    /// A value computed in the step: GEMM inputs and outputs, the residual stream.
    Activation,
    /// The attention KV cache.
    Kv,
}

impl Role {
    /// Every role, in the order tables list them.
    pub const ALL: [Role; 3] = [Role::Weight, Role::Activation, Role::Kv];

    /// `weight`, `activation` or `kv`, as `--dtype` keys write it.
    pub fn name(self) -> &'static str {
        match self {
            Role::Weight => "weight",
            Role::Activation => "activation",
            Role::Kv => "kv",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| format!("unknown role `{s}`; expected one of weight, activation, kv"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widest_operand_wins() {
        assert_eq!(DType::Fp8.compute_with(DType::Bf16), DType::Bf16);
        assert_eq!(DType::Fp8.compute_with(DType::Fp8), DType::Fp8);
        assert_eq!(DType::Int4.compute_with(DType::Bf16), DType::Bf16);
        assert_eq!(DType::Fp8.compute_with(DType::Int8), DType::Bf16);
        assert_eq!(DType::Bf16.compute_with(DType::Fp16), DType::Fp32);
    }
}
