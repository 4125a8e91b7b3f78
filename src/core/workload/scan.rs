//! The state-space scan op (`scan`): Mamba-2's selective state-space layer, its FLOPs and what
//! it writes, counted from its sizes (Dao and Gu, "Transformers are SSMs", arXiv 2405.21060,
//! section 6, the SSD algorithm; docs/sources.md, M17).
//!
//! Each of `heads` heads carries, per sequence, a `head_dim x state` recurrent state h. Per
//! token t: h = a_t h + x_t B_t^T (a scalar decay a_t per head, x_t the head's `head_dim`
//! inputs, B_t the `state`-wide input projection its group shares), and y_t = h C_t (C_t the
//! group's output projection); `groups` groups share B and C among their heads.
//!
//! - One token a step (decode, `selective_state_update`): per head the state is decayed
//!   (1 multiply per state element), x dt is formed (1 per channel) and its outer product
//!   with B added (2 per state element), and y = h C read off (2 per state element), plus the
//!   skip D x (2 per channel): 5 head_dim state + 3 head_dim FLOPs.
//! - Several tokens (prefill, the chunked SSD kernel) in chunks of q = min(tokens, chunk):
//!   per chunk and head, the diagonal block (C B^T masked by the decays) times X, 2 q^2
//!   head_dim; the chunk's state B^T X, 2 q state head_dim; the output from the carried
//!   state C h, 2 q state head_dim; passing the state to the next chunk, 2 state head_dim; and
//!   per chunk and group C B^T itself, 2 q^2 state; tokens / q chunks (a last, partial chunk
//!   counted as its fraction). The decay masks' exponentials and
//!   the skip (O(q) and O(1) per token and head) are left out.
//!
//! The kernel reads its inputs (x, B, C, dt and each sequence's state) and writes y and each
//! sequence's updated state; the chunk states of a prefill stay on chip (one fused kernel).
//!
//! A gated delta rule ([`ScanRule::GatedDelta`]: Gated DeltaNet, Yang, Kautz and Hatamizadeh,
//! arXiv 2412.06464; Qwen3-Next's linear attention, docs/sources.md, M19) keeps the same
//! state, `head_dim` values by `state` keys per head, with the keys (B) and queries (C) shared
//! by the heads of a group, but writes it by the delta rule: S = a_t S (I - beta_t k_t k_t^T)
//! + beta_t v_t k_t^T, and reads o_t = S q_t.
//!
//! - One token a step (`fused_recurrent_gated_delta_rule`): per head the state is decayed
//!   (1 per state element), its prediction S k read off (2 per state element), the error
//!   beta (v - S k) formed (2 per value channel), its outer product with k added (2 per state
//!   element) and the output S q read off (2 per state element): 7 head_dim state + 2
//!   head_dim FLOPs.
//! - Several tokens (`chunk_gated_delta_rule`, the WY form) in chunks of q = min(tokens,
//!   chunk): per chunk and head, the masked K K^T 2 q^2 state, the triangular solve of
//!   (I + A) T = I q^3 / 3 multiply-adds (2 q^3 / 3 FLOPs), W = T K 2 q^2 state and U = T V
//!   2 q^2 head_dim, the new values U - W S 2 q state head_dim, the masked Q K^T 2 q^2 state,
//!   the output from the carried state Q S 2 q state head_dim and from the chunk (Q K^T) V'
//!   2 q^2 head_dim, the state's update K^T V' 2 q state head_dim and its decay state head_dim.
//!   Keys and queries are expanded to every head of a group, as the kernels do. The decays'
//!   cumulative sums and exponentials (O(q) per chunk and head) are left out.

use super::Field;

/// The recurrence a scan runs: Mamba-2's selective state update, or a gated delta rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScanRule {
    /// Mamba-2's SSD: h = a h + x B^T, y = h C.
    #[default]
    Mamba2,
    /// Gated DeltaNet: S = a S (I - beta k k^T) + beta v k^T, o = S q.
    GatedDelta,
}

impl ScanRule {
    /// The rules as a file writes them.
    pub const NAMES: [&'static str; 2] = ["mamba2", "gated_delta"];

    /// Reads a file's `rule:`; the error names every rule there is.
    pub fn parse(text: &str) -> Result<ScanRule, String> {
        match text.trim() {
            "mamba2" => Ok(ScanRule::Mamba2),
            "gated_delta" => Ok(ScanRule::GatedDelta),
            other => Err(format!(
                "unknown scan rule `{other}`; expected one of {}",
                ScanRule::NAMES.join(", ")
            )),
        }
    }
}

/// The sizes of a scan as the file writes them (expressions over params).
#[derive(Debug, Clone, PartialEq)]
pub struct ScanDims {
    /// Sequences in the step, each with its own recurrent state.
    pub sequences: Field,
    /// New tokens per sequence.
    pub tokens: Field,
    /// Heads, each with its own state.
    pub heads: Field,
    /// Channels per head.
    pub head_dim: Field,
    /// Width of the recurrent state per channel (the B and C projections' size).
    pub state: Field,
    /// Groups of heads sharing one B and C.
    pub groups: Field,
    /// Tokens per chunk of the chunked kernel.
    pub chunk: Field,
    /// The recurrence: Mamba-2's (the default) or a gated delta rule.
    pub rule: ScanRule,
}

/// The sizes of a scan in one scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanSizes {
    /// Sequences in the step, each with its own recurrent state.
    pub sequences: f64,
    /// New tokens per sequence.
    pub tokens: f64,
    /// Heads, each with its own state.
    pub heads: f64,
    /// Channels per head.
    pub head_dim: f64,
    /// Width of the recurrent state per channel (the B and C projections' size).
    pub state: f64,
    /// Groups of heads sharing one B and C.
    pub groups: f64,
    /// Tokens per chunk of the chunked kernel.
    pub chunk: f64,
    /// The recurrence: Mamba-2's or a gated delta rule.
    pub rule: ScanRule,
}

impl ScanSizes {
    /// The FLOPs of the step: the recurrent update at one token a sequence, the chunked
    /// kernel otherwise (see the module's counts).
    pub fn flops(&self) -> f64 {
        let ScanSizes {
            sequences,
            tokens,
            heads,
            head_dim: p,
            state: n,
            groups,
            chunk,
            rule,
        } = *self;
        if rule == ScanRule::GatedDelta {
            return self.delta_flops();
        }
        if tokens <= 1.0 {
            return sequences * tokens * heads * (5.0 * p * n + 3.0 * p);
        }
        let q = tokens.min(chunk);
        let per_chunk =
            heads * (2.0 * q * q * p + 4.0 * q * n * p + 2.0 * n * p) + groups * 2.0 * q * q * n;
        sequences * (tokens / q) * per_chunk
    }

    /// The gated delta rule's FLOPs (see the module's counts): `head_dim` values by `state`
    /// keys per head.
    fn delta_flops(&self) -> f64 {
        let (p, n) = (self.head_dim, self.state);
        if self.tokens <= 1.0 {
            return self.sequences * self.tokens * self.heads * (7.0 * p * n + 2.0 * p);
        }
        let q = self.tokens.min(self.chunk);
        let per_chunk = 2.0 * q * q * n // masked K K^T
            + 2.0 * q * q * q / 3.0 // (I + A)^-1 by forward substitution
            + 2.0 * q * q * n + 2.0 * q * q * p // W = T K, U = T V
            + 2.0 * q * n * p // V' = U - W S
            + 2.0 * q * q * n + 2.0 * q * n * p + 2.0 * q * q * p // Q K^T, Q S, (Q K^T) V'
            + 2.0 * q * n * p + n * p; // S = a S + K^T V'
        self.sequences * (self.tokens / q) * self.heads * per_chunk
    }

    /// The elements one sequence's recurrent state holds: heads x head_dim x state.
    pub fn state_elements(&self) -> f64 {
        self.heads * self.head_dim * self.state
    }

    /// What the kernel writes: each token's output (heads x head_dim) and each sequence's
    /// updated state.
    pub fn out_elements(&self) -> f64 {
        self.sequences * (self.tokens * self.heads * self.head_dim + self.state_elements())
    }
}

#[cfg(test)]
mod tests {
    use super::{ScanRule, ScanSizes};

    /// Nemotron-H-8B's Mamba-2 layer (128 heads of 64, state 128, 8 groups, chunk 128).
    fn nemotron(sequences: f64, tokens: f64) -> ScanSizes {
        ScanSizes {
            sequences,
            tokens,
            heads: 128.0,
            head_dim: 64.0,
            state: 128.0,
            groups: 8.0,
            chunk: 128.0,
            rule: ScanRule::Mamba2,
        }
    }

    #[test]
    fn decode_is_the_recurrent_update() {
        // Per head: decay 64 x 128, outer product x B^T added 2 x 64 x 128, y = h C
        // 2 x 64 x 128, x dt 64, skip D x 2 x 64.
        let per_head = 8192.0 + 16384.0 + 16384.0 + 64.0 + 128.0;
        let s = nemotron(3.0, 1.0);
        assert_eq!(s.flops(), 3.0 * 128.0 * per_head);
        // Each sequence's output (128 x 64) and its updated state (128 x 64 x 128).
        assert_eq!(s.out_elements(), 3.0 * (8192.0 + 1_048_576.0));
        assert_eq!(s.state_elements(), 1_048_576.0);
    }

    #[test]
    fn prefill_is_the_chunked_kernel() {
        // 512 tokens in 4 chunks of 128. Per chunk and head: the diagonal block times X
        // 2 x 128^2 x 64, the chunk state 2 x 128 x 128 x 64, the output from the carried
        // state 2 x 128 x 128 x 64, passing the state 2 x 128 x 64; per chunk and group
        // C B^T 2 x 128^2 x 128.
        let per_chunk_head = 2_097_152.0 + 2_097_152.0 + 2_097_152.0 + 16_384.0;
        let per_chunk_group = 4_194_304.0;
        let s = nemotron(2.0, 512.0);
        let per_sequence = 4.0 * (128.0 * per_chunk_head + 8.0 * per_chunk_group);
        assert_eq!(s.flops(), 2.0 * per_sequence);
        // A prompt shorter than a chunk is one chunk of its length: 100 tokens.
        let short = nemotron(1.0, 100.0);
        let head = 2.0 * 100.0 * 100.0 * 64.0 + 2.0 * (2.0 * 100.0 * 128.0 * 64.0);
        let passing = 2.0 * 128.0 * 64.0;
        let group = 2.0 * 100.0 * 100.0 * 128.0;
        assert_eq!(short.flops(), 128.0 * (head + passing) + 8.0 * group);
    }

    /// Qwen3-Next-80B-A3B's gated DeltaNet layer (32 value heads of 128, keys of 128 shared by
    /// 16 key heads, chunk 64).
    fn qwen3_next(sequences: f64, tokens: f64) -> ScanSizes {
        ScanSizes {
            sequences,
            tokens,
            heads: 32.0,
            head_dim: 128.0,
            state: 128.0,
            groups: 16.0,
            chunk: 64.0,
            rule: ScanRule::GatedDelta,
        }
    }

    #[test]
    fn a_delta_rule_decode_reads_its_prediction_back() {
        // Per head: decay 128 x 128, S k 2 x 128 x 128, beta (v - S k) 2 x 128, outer product
        // added 2 x 128 x 128, S q 2 x 128 x 128.
        let per_head = 16384.0 + 32768.0 + 256.0 + 32768.0 + 32768.0;
        let s = qwen3_next(4.0, 1.0);
        assert_eq!(s.flops(), 4.0 * 32.0 * per_head);
        // The state: 32 heads x 128 x 128 per sequence, as Mamba's is counted.
        assert_eq!(s.state_elements(), 524_288.0);
        assert_eq!(s.out_elements(), 4.0 * (32.0 * 128.0 + 524_288.0));
        assert_eq!(ScanRule::parse("gated_delta"), Ok(ScanRule::GatedDelta));
        assert!(ScanRule::parse("delta")
            .unwrap_err()
            .contains("mamba2, gated_delta"));
    }

    #[test]
    fn a_delta_rule_prefill_is_the_chunked_wy_kernel() {
        // 256 tokens in 4 chunks of 64, per chunk and head (d = 128 keys and values):
        // K K^T, W, Q K^T: 3 x 2 x 64^2 x 128; U, (Q K^T) V': 2 x 2 x 64^2 x 128; the solve
        // 2 x 64^3 / 3; W S, Q S, K^T V': 3 x 2 x 64 x 128^2; the decay 128^2.
        let gemms = 5.0 * 2.0 * 4096.0 * 128.0 + 3.0 * 2.0 * 64.0 * 16384.0 + 16384.0;
        let solve = 2.0 * 262_144.0 / 3.0;
        let s = qwen3_next(2.0, 256.0);
        let expected = 2.0 * 4.0 * 32.0 * (gemms + solve);
        assert!(
            (s.flops() - expected).abs() <= 1e-9 * expected,
            "{}",
            s.flops()
        );
    }
}
