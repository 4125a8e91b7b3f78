//! Percentiles of residuals clustered by source, each source weighing as one.
//!
//! A source's rows share a method, a clock and a software release, so their errors move
//! together: a held-out source is a fresh draw of a source offset plus its rows' own spread.
//! Two things follow. The band is the percentiles of the pooled distribution, the average of
//! each source's own (R. Dunn, L. Wasserman and A. Ramdas, "Distribution-free prediction sets
//! for two-layer hierarchical models", JASA 118 (2023), 2491-2502, arXiv:1809.07441, "CDF
//! pooling"): each row weighs `1 / rows of its source`, so a source with 22 rows counts as one
//! with 2. And a group's sample size is its number of sources `k`, not its rows: the `p`
//! percentile sits at source rank `(k + 1) p` (Weibull's plotting position, definition 6 of
//! R. J. Hyndman and Y. Fan, "Sample quantiles in statistical packages", The American
//! Statistician 50(4), 361-365 (1996); NumPy's `percentile(method="weibull")`, R's
//! `quantile(type = 6)`), the rank at which a fresh source falls below it with probability `p`
//! on average (the `j`-th of `k` exchangeable draws has expected distribution value
//! `j / (k + 1)`). The definition-7 rank `1 + (k - 1) p` would cover a fresh source only
//! `0.8 (k - 1) / (k + 1)` of the time between its 10th and 90th percentiles: 75 % at 29
//! sources, 65 % at 10.

/// The `p` percentile of `rows`, pairs of (value, source), sorted by value, each source
/// weighing as one. Every source's weight `1` is split evenly among its rows; a row stands at
/// the middle of its share of the cumulative weight `c`, at position `(c + 1/2) / (k + 1)`
/// for `k` sources, so that with one row per source the `j`-th row is at `j / (k + 1)`.
/// Linear between positions; below the first or above the last, the end row (NaN for no rows).
pub fn pooled_quantile(rows: &[(f64, &str)], p: f64) -> f64 {
    let mut names: Vec<&str> = rows.iter().map(|r| r.1).collect();
    names.sort_unstable();
    let rows_of = |s: &str| names.partition_point(|x| *x <= s) - names.partition_point(|x| *x < s);
    let k = source_count(rows) as f64;
    let mut before = 0.0;
    let mut last: Option<(f64, f64)> = None; // (position, value)
    for &(value, source) in rows {
        let w = 1.0 / rows_of(source) as f64;
        let at = (before + w / 2.0 + 0.5) / (k + 1.0);
        before += w;
        match last {
            None if p <= at => return value,
            Some((pos, v)) if p <= at => return v + (p - pos) / (at - pos) * (value - v),
            _ => last = Some((at, value)),
        }
    }
    last.map_or(f64::NAN, |(_, v)| v)
}

/// How many sources `rows` come from.
pub fn source_count(rows: &[(f64, &str)]) -> usize {
    let mut names: Vec<&str> = rows.iter().map(|r| r.1).collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}
