//! The throughput-interactivity frontier: of many serving points, those no other beats on
//! both tokens per second per user and tokens per second per chip.

/// Indices of the Pareto-optimal `points` when both `x` and `y` are better larger, ordered
/// by `x` rising (so `y` falls strictly along them). Of points equal on both, the first
/// stays; points with a NaN coordinate never do.
pub fn frontier<T>(points: &[T], x: impl Fn(&T) -> f64, y: impl Fn(&T) -> f64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&i| !x(&points[i]).is_nan() && !y(&points[i]).is_nan())
        .collect();
    // Best x first, then best y, then the earlier point: a sweep keeps each point that beats
    // every point before it on y.
    order.sort_by(|&a, &b| {
        let (pa, pb) = (&points[a], &points[b]);
        x(pb)
            .total_cmp(&x(pa))
            .then(y(pb).total_cmp(&y(pa)))
            .then(a.cmp(&b))
    });
    let mut kept = Vec::new();
    let mut best_y = f64::NEG_INFINITY;
    for i in order {
        if y(&points[i]) > best_y {
            best_y = y(&points[i]);
            kept.push(i);
        }
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use super::frontier;

    #[test]
    fn keeps_the_undominated_in_rising_x() {
        // (x, y): (1, 10) (2, 8) (2, 9) (3, 3) (1.5, 7) (4, 1) (4, 1)
        let p = [
            (1.0, 10.0),
            (2.0, 8.0),
            (2.0, 9.0),
            (3.0, 3.0),
            (1.5, 7.0),
            (4.0, 1.0),
            (4.0, 1.0),
            (f64::NAN, 100.0),
        ];
        let kept = frontier(&p, |p| p.0, |p| p.1);
        // (2, 8) loses to (2, 9); (1.5, 7) to (2, 9); the second (4, 1) repeats the first.
        assert_eq!(kept, vec![0, 2, 3, 5]);
    }

    #[test]
    fn empty_and_single() {
        let none: [(f64, f64); 0] = [];
        assert!(frontier(&none, |p| p.0, |p| p.1).is_empty());
        assert_eq!(frontier(&[(1.0, 1.0)], |p| p.0, |p| p.1), vec![0]);
    }
}
