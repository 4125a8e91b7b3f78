//! Storage formats: a data type and the layout of its scales, and the scheme a weight format
//! is multiplied in.
//!
//! A format's bytes per element include its scales, so a block-scaled checkpoint costs what it
//! really holds: `fp8-b128` one fp32 scale per 128 x 128 block, `mxfp4` an E8M0 scale per 32
//! values, `nvfp4` an E4M3 scale per 16 (and an fp32 scale per tensor, 4 bytes however large
//! the tensor, left out), `int4-g128` an fp16 scale and a 4-bit zero point per 128 values
//! (docs/sources.md, formats). The grouped int4 formats come symmetric (a 16-bit scale per
//! group, no zero point: `int4-g32`, `int4-g64`, `int4-g128-sym`) and asymmetric (a 16-bit
//! scale and a 4-bit zero point per group: `int4-g32-asym`, `int4-g64-asym`, and `int4-g128`,
//! the AWQ layout, which kept its name from before the others).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::dtype::DType;

/// How a tensor is stored: its element type and its scale layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// fp32 values, no scales: 4 bytes an element.
    Fp32,
    /// tf32 values, stored as fp32: 4 bytes an element.
    Tf32,
    /// bf16 values, no scales: 2 bytes an element.
    Bf16,
    /// fp16 values, no scales: 2 bytes an element.
    Fp16,
    /// E4M3 values and one scale per tensor.
    Fp8,
    /// E4M3 values, an fp32 scale per 128 x 128 block (DeepSeek-V3's checkpoints).
    Fp8B128,
    /// fp6 values, 4 packed in 3 bytes.
    Fp6,
    /// int8 values, a scale per tensor or per channel (a few bytes per row, left out).
    Int8,
    /// OCP microscaling: E2M1 values, an E8M0 scale per 32.
    Mxfp4,
    /// E2M1 values, an E4M3 scale per 16, an fp32 scale per tensor.
    Nvfp4,
    /// E2M1 values without scales: the bare element type.
    Fp4,
    /// int4 values without scales: the bare element type.
    Int4,
    /// int4 values, an fp16 scale and a 4-bit zero point per group of 128 (AWQ, GPTQ).
    Int4G128,
    /// int4 values, a 16-bit scale per group of 128, no zero point (symmetric GPTQ).
    Int4G128Sym,
    /// int4 values, a 16-bit scale per group of 64, no zero point.
    Int4G64,
    /// int4 values, a 16-bit scale and a 4-bit zero point per group of 64.
    Int4G64Asym,
    /// int4 values, a 16-bit scale per group of 32, no zero point (Kimi-K2-Thinking's
    /// experts: compressed-tensors, symmetric, bf16 scales).
    Int4G32,
    /// int4 values, a 16-bit scale and a 4-bit zero point per group of 32.
    Int4G32Asym,
}

impl Format {
    /// Every format, in the order tables list them.
    pub const ALL: [Format; 18] = [
        Format::Fp32,
        Format::Tf32,
        Format::Bf16,
        Format::Fp16,
        Format::Fp8,
        Format::Fp8B128,
        Format::Fp6,
        Format::Int8,
        Format::Mxfp4,
        Format::Nvfp4,
        Format::Fp4,
        Format::Int4,
        Format::Int4G128,
        Format::Int4G128Sym,
        Format::Int4G64,
        Format::Int4G64Asym,
        Format::Int4G32,
        Format::Int4G32Asym,
    ];

    /// The name files and `--dtype` write: the element type's (`bf16`, `fp8`) where the format
    /// has no block or group scales, else its own (`fp8-b128`, `mxfp4`, `nvfp4`, `int4-g128`,
    /// `int4-g32`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Fp8B128 => "fp8-b128",
            Format::Mxfp4 => "mxfp4",
            Format::Nvfp4 => "nvfp4",
            Format::Int4G128 => "int4-g128",
            Format::Int4G128Sym => "int4-g128-sym",
            Format::Int4G64 => "int4-g64",
            Format::Int4G64Asym => "int4-g64-asym",
            Format::Int4G32 => "int4-g32",
            Format::Int4G32Asym => "int4-g32-asym",
            other => other.element().name(),
        }
    }

    /// The type of the values, which the matrix unit computes in where it has it.
    pub fn element(self) -> DType {
        match self {
            Format::Fp32 => DType::Fp32,
            Format::Tf32 => DType::Tf32,
            Format::Bf16 => DType::Bf16,
            Format::Fp16 => DType::Fp16,
            Format::Fp8 | Format::Fp8B128 => DType::Fp8,
            Format::Fp6 => DType::Fp6,
            Format::Int8 => DType::Int8,
            Format::Mxfp4 | Format::Nvfp4 | Format::Fp4 => DType::Fp4,
            Format::Int4
            | Format::Int4G128
            | Format::Int4G128Sym
            | Format::Int4G64
            | Format::Int4G64Asym
            | Format::Int4G32
            | Format::Int4G32Asym => DType::Int4,
        }
    }

    /// The matrix math a scaled format's kernels use where the chip has it: the type the
    /// chip must support, and the type whose peak they run at. `fp8-b128` multiplies fp8
    /// weights by activations quantized per 1 x 128 tile (W8A8); `nvfp4` by NVFP4 activations
    /// (W4A4); `mxfp4` by MXFP8 activations (W4A8, the Blackwell MoE kernels for gpt-oss), or,
    /// where the `activation` format is `mxfp4` too, by MXFP4 activations at the fp4 rate
    /// (W4A4: Blackwell's block-scaled MMA has a kind for MXF4 x MXF4, apart from the mixed
    /// MXF8F6F4 kind that runs 4-bit operands at the 8-bit rate; PTX ISA `tcgen05.mma`,
    /// docs/sources.md, kernel physics 12). The other formats have none: they compute in the
    /// widest type of the op's operands, so fp8 weights with bf16 activations are widened to
    /// bf16, and `int4-g128` is weight-only (W4A16) as AWQ and GPTQ kernels run it.
    pub fn math(self, activation: Format) -> Option<(DType, DType)> {
        match self {
            Format::Fp8B128 => Some((DType::Fp8, DType::Fp8)),
            Format::Nvfp4 => Some((DType::Fp4, DType::Fp4)),
            Format::Mxfp4 if activation == Format::Mxfp4 => Some((DType::Fp4, DType::Fp4)),
            Format::Mxfp4 => Some((DType::Fp4, DType::Fp8)),
            _ => None,
        }
    }

    /// Bytes of scales per element.
    pub fn scale_bytes(self) -> f64 {
        match self {
            Format::Fp8B128 => 4.0 / (128.0 * 128.0),
            Format::Mxfp4 => 1.0 / 32.0,
            Format::Nvfp4 => 1.0 / 16.0,
            Format::Int4G128 => (2.0 + 0.5) / 128.0,
            Format::Int4G128Sym => 2.0 / 128.0,
            Format::Int4G64 => 2.0 / 64.0,
            Format::Int4G64Asym => (2.0 + 0.5) / 64.0,
            Format::Int4G32 => 2.0 / 32.0,
            Format::Int4G32Asym => (2.0 + 0.5) / 32.0,
            _ => 0.0,
        }
    }

    /// Bytes per element in memory, scales included.
    pub fn bytes(self) -> f64 {
        self.element().bytes() + self.scale_bytes()
    }
}

impl From<DType> for Format {
    fn from(dtype: DType) -> Format {
        match dtype {
            DType::Fp32 => Format::Fp32,
            DType::Tf32 => Format::Tf32,
            DType::Bf16 => Format::Bf16,
            DType::Fp16 => Format::Fp16,
            DType::Fp8 => Format::Fp8,
            DType::Fp6 => Format::Fp6,
            DType::Int8 => Format::Int8,
            DType::Fp4 => Format::Fp4,
            DType::Int4 => Format::Int4,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown data type `{s}`; expected one of {}",
                    Format::ALL.map(Format::name).join(", ")
                )
            })
    }
}
/// A weight format and the type the matrix unit multiplies it in: `W4A16` where a 4-bit
/// checkpoint is widened to bf16 (weight-only), `W8A8` where fp8 weights meet fp8 activations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scheme {
    /// How the weights are stored.
    pub weight: Format,
    /// The type the matrix unit multiplies them in.
    pub compute: DType,
}

impl Scheme {
    /// The bits of the weights' elements and of the type they are multiplied in: the
    /// numbers of its name.
    pub fn bits(self) -> (u32, u32) {
        (bits(self.weight.element()), bits(self.compute))
    }

    /// Whether the weights are widened before they are multiplied.
    pub fn weight_only(self) -> bool {
        self.weight.element().bytes() < self.compute.bytes()
    }
}

impl fmt::Display for Scheme {
    /// `W8A16`: the bits of the weights and of the type they are multiplied in, as
    /// quantization schemes are named.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (weight, compute) = self.bits();
        write!(f, "W{weight}A{compute}")
    }
}

impl Serialize for Scheme {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

fn bits(dtype: DType) -> u32 {
    match dtype {
        DType::Tf32 => 19,
        other => (other.bytes() * 8.0) as u32,
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_include_the_scales() {
        // 128 x 128 values share one 4-byte scale.
        assert_eq!(Format::Fp8B128.bytes(), 1.0 + 4.0 / 16384.0);
        // 32 half-byte values share one byte.
        assert_eq!(Format::Mxfp4.bytes(), (32.0 * 0.5 + 1.0) / 32.0);
        // 16 half-byte values share one byte.
        assert_eq!(Format::Nvfp4.bytes(), (16.0 * 0.5 + 1.0) / 16.0);
        // 128 half-byte values share 2 bytes of scale and half a byte of zero point.
        assert_eq!(Format::Int4G128.bytes(), (128.0 * 0.5 + 2.5) / 128.0);
        assert_eq!(Format::Bf16.bytes(), 2.0);
        // Symmetric groups: 32 (64, 128) half-byte values share one 2-byte scale.
        assert_eq!(Format::Int4G32.bytes(), 0.5625);
        assert_eq!(Format::Int4G32.bytes(), (32.0 * 0.5 + 2.0) / 32.0);
        assert_eq!(Format::Int4G64.bytes(), (64.0 * 0.5 + 2.0) / 64.0);
        assert_eq!(Format::Int4G128Sym.bytes(), (128.0 * 0.5 + 2.0) / 128.0);
        // Asymmetric: and half a byte of zero point.
        assert_eq!(Format::Int4G32Asym.bytes(), 0.578125);
        assert_eq!(Format::Int4G64Asym.bytes(), 0.5390625);
    }

    #[test]
    fn every_name_reads_back() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
    }

    #[test]
    fn mxfp4_runs_at_the_fp4_rate_only_against_mxfp4_activations() {
        // MXFP4 weights meet MXFP8 activations (W4A8) unless the activations are MXFP4 too.
        assert_eq!(
            Format::Mxfp4.math(Format::Bf16),
            Some((DType::Fp4, DType::Fp8))
        );
        assert_eq!(
            Format::Mxfp4.math(Format::Mxfp4),
            Some((DType::Fp4, DType::Fp4))
        );
        assert_eq!(
            Format::Nvfp4.math(Format::Bf16),
            Some((DType::Fp4, DType::Fp4))
        );
        assert_eq!(Format::Int4G128.math(Format::Mxfp4), None);
    }

    #[test]
    fn schemes_name_weight_and_compute_bits() {
        let w4 = Scheme {
            weight: Format::Mxfp4,
            compute: DType::Bf16,
        };
        assert_eq!(w4.to_string(), "W4A16");
        assert!(w4.weight_only());
        let w8 = Scheme {
            weight: Format::Fp8B128,
            compute: DType::Fp8,
        };
        assert_eq!(w8.to_string(), "W8A8");
        assert!(!w8.weight_only());
    }
}
