//! Causal attention: the share of a block's score matrix a causal mask leaves to compute.

use super::{Evaluation, Field};

/// A block's attention is causal: each sequence's `queries` new tokens attend to the
/// `context` positions cached before them and to their own up to themselves, at most
/// `window` positions in all. The block's score and mix GEMMs count the whole
/// `queries x min(context + queries, window)` matrix (the roofline's count); a fused attention
/// kernel skips the tiles the mask empties (docs/sources.md, kernel physics 11), which expected
/// mode prices through `Causal::share_in`.
#[derive(Debug, Clone, PartialEq)]
pub struct Causal {
    /// New tokens per sequence: the score matrix's rows.
    pub queries: Field,
    /// Positions cached before the new tokens.
    pub context: Field,
    /// Most positions a query attends to (sliding-window attention); unbounded when `None`.
    pub window: Option<Field>,
}

impl Causal {
    /// The share of the counted score matrix the mask leaves, in the evaluation `ev`.
    pub(crate) fn share_in(&self, ev: &Evaluation) -> f64 {
        let window = self
            .window
            .as_ref()
            .map_or(f64::INFINITY, |w| ev.exprs[w.id]);
        share(ev.exprs[self.queries.id], ev.exprs[self.context.id], window)
    }
}

/// Of `q` queries at positions `c .. c + q` (c cached before them), query `i` attends to
/// `min(c + i + 1, w)` positions: the `n1 = clamp(w - c, 0, q)` first ones to all before them,
/// the rest to a full window. Their sum over `q x min(c + q, w)`; 1 where that is empty.
/// Without a window this is `(q c + q (q + 1) / 2) / (q (c + q))`, i.e. `q c' - q (q - 1) / 2`
/// of `q c'` with `c' = c + q`.
pub(super) fn share(q: f64, c: f64, w: f64) -> f64 {
    let (q, c) = (q.max(0.0), c.max(0.0));
    let whole = q * (c + q).min(w);
    if !(whole > 0.0 && whole.is_finite()) {
        return 1.0;
    }
    let n1 = (w - c).clamp(0.0, q);
    let pairs = n1 * c + n1 * (n1 + 1.0) / 2.0 + (q - n1) * w.min(c + q);
    (pairs / whole).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn a_prompt_computes_the_lower_triangle_and_decode_the_whole_row() {
        // 4 queries, nothing cached: 1 + 2 + 3 + 4 = 10 of 16 pairs.
        assert_eq!(share(4.0, 0.0, f64::INFINITY), 10.0 / 16.0);
        // 4 queries after 6 cached: 7 + 8 + 9 + 10 = 34 of 4 x 10.
        assert_eq!(share(4.0, 6.0, f64::INFINITY), 34.0 / 40.0);
        // The brief's form: q c - q (q - 1) / 2 of q c, c = 10 attended positions.
        assert_eq!(share(4.0, 6.0, f64::INFINITY), (40.0 - 6.0) / 40.0);
        // Decode: one query sees every position.
        assert_eq!(share(1.0, 4095.0, f64::INFINITY), 1.0);
        // A window of 3 over 4 queries, nothing cached: 1 + 2 + 3 + 3 = 9 of 4 x 3.
        assert_eq!(share(4.0, 0.0, 3.0), 9.0 / 12.0);
        // Past the window every query sees a full window.
        assert_eq!(share(4.0, 100.0, 3.0), 1.0);
    }
}
