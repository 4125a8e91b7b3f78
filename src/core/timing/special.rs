//! Expected mode's special-function work in a fused attention kernel: the softmax takes one
//! exponential per score (a soft-cap one tanh), and those run on the special-function units,
//! which are far slower than the matrix unit. FlashAttention-3 puts H100 SXM5 at 989 TFLOPS
//! of fp16 matmul against 3.9 TFLOPS of special functions (arXiv 2407.08608, section 3): a
//! score costs `4 x head_dim` matrix FLOPs and one exponential, so at head dim 64 the two
//! take about as long, at 128 the exponentials half as long as the GEMMs. Its kernels run one
//! warpgroup's softmax under another's GEMMs, which hides part of it (`exp_overlap`;
//! docs/sources.md, kernel physics 13).

use crate::core::chip::Achievable;

use super::Context;

/// The time op `i`, a vector op of a fused attention kernel, keeps the special-function units
/// busy: one evaluation per output element, at `share` of them (the causal mask's share);
/// 0 for a chip file without a special-function rate.
pub(super) fn special_function_s(cx: &Context, i: usize, share: f64) -> f64 {
    cx.chip
        .sfu_ops_per_s
        .map_or(0.0, |rate| cx.ev.out_elements[i] * share / rate)
}

/// What `special_s` of special-function work adds to a kernel whose matrix work takes
/// `matrix_s`: all of it, less the overlapped share of the shorter of the two.
pub(super) fn special_added_s(a: &Achievable, special_s: f64, matrix_s: f64) -> f64 {
    special_s - a.exp_overlap.unwrap_or(0.0) * special_s.min(matrix_s)
}
