//! Bounded nonlinear least squares: Levenberg-Marquardt with a forward-difference Jacobian,
//! steps clamped into the box, and variables held at a bound the gradient pushes them past.
//! Deterministic: a fixed start, a fixed order of evaluations, no threads, no randomness.

/// Most outer iterations (each one Jacobian); a fit of a chip's constants needs 5-30.
const MAX_ITERATIONS: usize = 200;
/// Relative step of the forward differences.
const DIFF_STEP: f64 = 1e-7;
/// An accepted step whose largest move is below this has converged.
const STEP_TOLERANCE: f64 = 1e-11;
/// An accepted step that lowers the cost by less than this share of it has converged (the
/// search is then crawling along a valley no row constrains further).
const COST_TOLERANCE: f64 = 1e-10;

/// Where the search ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Solution {
    pub x: Vec<f64>,
    /// Half the sum of squared residuals at `x`.
    pub cost: f64,
    /// Whether any residual depended on each variable (a variable none reach keeps its start).
    pub reached: Vec<bool>,
    /// Residual evaluations made.
    pub evaluations: usize,
}

/// Minimises half the sum of squares of `residuals(x)` over `lower <= x <= upper`, from
/// `start` (clamped into the box). Only the first `data` residuals make a variable
/// [`Solution::reached`]: those past them are a prior's pull, which every variable may have.
/// An error from `residuals` ends the search with it.
pub(super) fn least_squares<E>(
    start: &[f64],
    lower: &[f64],
    upper: &[f64],
    data: usize,
    mut residuals: impl FnMut(&[f64]) -> Result<Vec<f64>, E>,
) -> Result<Solution, E> {
    let n = start.len();
    let clamp = |x: &mut [f64]| {
        for j in 0..n {
            x[j] = x[j].clamp(lower[j], upper[j]);
        }
    };
    let mut x = start.to_vec();
    clamp(&mut x);
    let mut r = residuals(&x)?;
    let mut cost = half_squares(&r);
    let mut evaluations = 1;
    let mut reached = vec![false; n];
    let mut lambda = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        if cost == 0.0 {
            break;
        }
        let jacobian = forward_jacobian(&x, upper, &r, &mut residuals)?;
        evaluations += n;
        let gradient: Vec<f64> = (0..n).map(|j| dot(&jacobian[j], &r)).collect();
        let free: Vec<usize> = (0..n)
            .filter(|&j| {
                let column = dot(&jacobian[j], &jacobian[j]);
                reached[j] |= jacobian[j].iter().take(data).any(|d| *d != 0.0);
                let held = (x[j] <= lower[j] && gradient[j] > 0.0)
                    || (x[j] >= upper[j] && gradient[j] < 0.0);
                column > 0.0 && !held
            })
            .collect();
        if free.is_empty() {
            break;
        }
        let mut accepted = None;
        while lambda <= 1e12 {
            let Some(step) = damped_step(&jacobian, &gradient, &free, lambda) else {
                lambda *= 10.0;
                continue;
            };
            let mut trial = x.clone();
            for (k, &j) in free.iter().enumerate() {
                trial[j] += step[k];
            }
            clamp(&mut trial);
            let trial_r = residuals(&trial)?;
            evaluations += 1;
            let trial_cost = half_squares(&trial_r);
            if trial_cost < cost {
                lambda = (lambda / 10.0).max(1e-12);
                accepted = Some((trial, trial_r, trial_cost));
                break;
            }
            lambda *= 10.0;
        }
        let Some((trial, trial_r, trial_cost)) = accepted else {
            break; // no step lowers the cost: a minimum to the precision of the differences
        };
        let moved = (0..n)
            .map(|j| (trial[j] - x[j]).abs() / (1.0 + x[j].abs()))
            .fold(0.0, f64::max);
        let gained = cost - trial_cost;
        (x, r, cost) = (trial, trial_r, trial_cost);
        if moved < STEP_TOLERANCE || gained <= COST_TOLERANCE * cost {
            break;
        }
    }
    Ok(Solution {
        x,
        cost,
        reached,
        evaluations,
    })
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// Half the sum of squares; infinite where a residual is not finite, so no such step is taken.
fn half_squares(r: &[f64]) -> f64 {
    let cost = 0.5 * dot(r, r);
    if cost.is_finite() {
        cost
    } else {
        f64::INFINITY
    }
}

/// The Jacobian's columns, by forward differences (backward at the upper bound).
fn forward_jacobian<E>(
    x: &[f64],
    upper: &[f64],
    r: &[f64],
    residuals: &mut impl FnMut(&[f64]) -> Result<Vec<f64>, E>,
) -> Result<Vec<Vec<f64>>, E> {
    let mut columns = Vec::with_capacity(x.len());
    for j in 0..x.len() {
        let mut h = DIFF_STEP * x[j].abs().max(1.0);
        if x[j] + h > upper[j] {
            h = -h;
        }
        let mut probe = x.to_vec();
        probe[j] += h;
        let rj = residuals(&probe)?;
        columns.push(rj.iter().zip(r).map(|(a, b)| (a - b) / h).collect());
    }
    Ok(columns)
}

/// Solves `(JᵀJ + λ diag(JᵀJ)) δ = -g` over the free variables; `None` when singular.
fn damped_step(
    jacobian: &[Vec<f64>],
    gradient: &[f64],
    free: &[usize],
    lambda: f64,
) -> Option<Vec<f64>> {
    let m = free.len();
    let mut a = vec![vec![0.0; m + 1]; m];
    for (p, &i) in free.iter().enumerate() {
        for (q, &j) in free.iter().enumerate() {
            a[p][q] = dot(&jacobian[i], &jacobian[j]);
        }
        a[p][p] *= 1.0 + lambda;
        a[p][m] = -gradient[i];
    }
    solve(a)
}

/// Gaussian elimination with partial pivoting on an augmented matrix `[A | b]`.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let m = a.len();
    for col in 0..m {
        let pivot = (col..m).max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 || !a[pivot][col].is_finite() {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for row in a.iter_mut().skip(col + 1) {
            let factor = row[col] / pivot_row[col];
            for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                *x -= factor * p;
            }
        }
    }
    let mut x = vec![0.0; m];
    for row in (0..m).rev() {
        let known: f64 = (row + 1..m).map(|k| a[row][k] * x[k]).sum();
        x[row] = (a[row][m] - known) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Never = std::convert::Infallible;

    #[test]
    fn finds_the_rosenbrock_minimum() {
        // r = (10 (y - x^2), 1 - x): the one minimum is (1, 1), at the end of a curved valley.
        let f = |v: &[f64]| Ok::<_, Never>(vec![10.0 * (v[1] - v[0] * v[0]), 1.0 - v[0]]);
        let s = least_squares(&[-1.2, 1.0], &[-5.0, -5.0], &[5.0, 5.0], 2, f).unwrap();
        assert!(
            (s.x[0] - 1.0).abs() < 1e-9 && (s.x[1] - 1.0).abs() < 1e-9,
            "{s:?}"
        );
        assert!(s.cost < 1e-18);
        assert_eq!(s.reached, [true, true]);
    }

    #[test]
    fn stops_at_a_bound_the_minimum_lies_beyond() {
        // (x - 3)^2 + (y + 1)^2 over [0, 2] x [0, 2]: the nearest point is (2, 0).
        let f = |v: &[f64]| Ok::<_, Never>(vec![v[0] - 3.0, v[1] + 1.0]);
        let s = least_squares(&[1.0, 1.0], &[0.0, 0.0], &[2.0, 2.0], 2, f).unwrap();
        assert_eq!(s.x, [2.0, 0.0]);
        assert!((s.cost - 1.0).abs() < 1e-12);
    }

    #[test]
    fn keeps_a_variable_no_residual_depends_on() {
        let f = |v: &[f64]| Ok::<_, Never>(vec![v[0] - 0.5, 2.0 * (v[0] - 0.5)]);
        let s = least_squares(&[0.9, 0.7], &[0.0, 0.0], &[1.0, 1.0], 2, f).unwrap();
        assert!((s.x[0] - 0.5).abs() < 1e-12);
        assert_eq!(s.x[1], 0.7);
        assert_eq!(s.reached, [true, false]);
    }

    #[test]
    fn an_error_ends_the_search() {
        let f = |v: &[f64]| {
            if v[0] > 0.6 {
                Err("too far")
            } else {
                Ok(vec![v[0] - 1.0])
            }
        };
        assert_eq!(least_squares(&[0.5], &[0.0], &[2.0], 1, f), Err("too far"));
    }
}
