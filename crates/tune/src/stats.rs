//! Confidence intervals, all deterministic (no resampling):
//! - a mean over seeds: mean ± 1.96·s/√n (normal approximation; s the sample standard
//!   deviation), clamped at 0 for non-negative quantities;
//! - a share of seeds: the Wilson score interval at 95 %;
//! - a quantile of samples pooled over seeds: the nearest-rank estimate and the
//!   distribution-free order-statistic interval [x₍ₗ₎, x₍ᵤ₎] with
//!   l = ⌊nq − 1.96·√(nq(1−q))⌋, u = ⌈nq + 1.96·√(nq(1−q))⌉ + 1, clamped to 1..=n.
//!   Pooling treats samples as independent, which they nearly are (crashes are rare).

use fencesim_report::tune::{round, MeanCi, Quantiles, SeedShare};

const Z: f64 = 1.96;

/// Mean with its 95 % interval; `non_negative` clamps the low end at 0.
pub fn mean_ci(values: &[f64], non_negative: bool) -> MeanCi {
    let n = values.len() as f64;
    if values.is_empty() {
        return MeanCi::default();
    }
    let mean = values.iter().sum::<f64>() / n;
    let half = if values.len() < 2 {
        0.0
    } else {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        Z * (var / n).sqrt()
    };
    let low = mean - half;
    MeanCi {
        mean: round(mean),
        low: round(if non_negative { low.max(0.0) } else { low }),
        high: round(mean + half),
    }
}

/// `seeds` of `of` with the Wilson score interval on the share.
pub fn seed_share(seeds: u64, of: u64) -> SeedShare {
    if of == 0 {
        return SeedShare::default();
    }
    let n = of as f64;
    let p = seeds as f64 / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    SeedShare {
        seeds,
        of,
        low: round((centre - half).max(0.0)),
        high: round((centre + half).min(1.0)),
    }
}

/// Nearest-rank quantile `q` of sorted `x` and its interval, as 1-based ranks.
fn quantile(sorted: &[f64], q: f64) -> (f64, f64, f64) {
    let n = sorted.len() as f64;
    let rank = ((q * n).ceil() as usize).clamp(1, sorted.len());
    let spread = Z * (n * q * (1.0 - q)).sqrt();
    let low = ((n * q - spread).floor() as isize).clamp(1, sorted.len() as isize) as usize;
    let high = (((n * q + spread).ceil() as isize) + 1).clamp(1, sorted.len() as isize) as usize;
    (sorted[rank - 1], sorted[low - 1], sorted[high - 1])
}

/// p50 and p99 of `samples` with their intervals.
pub fn quantiles(samples: &[f64]) -> Quantiles {
    if samples.is_empty() {
        return Quantiles::default();
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (p50, p50_low, p50_high) = quantile(&sorted, 0.5);
    let (p99, p99_low, p99_high) = quantile(&sorted, 0.99);
    Quantiles {
        count: sorted.len() as u64,
        p50: Some(round(p50)),
        p50_low: Some(round(p50_low)),
        p50_high: Some(round(p50_high)),
        p99: Some(round(p99)),
        p99_low: Some(round(p99_low)),
        p99_high: Some(round(p99_high)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_interval_shrinks_with_more_seeds() {
        let few = mean_ci(&[0.0, 4.0], true);
        let many = mean_ci(&[0.0, 4.0].repeat(50), true);
        assert_eq!(few.mean, 2.0);
        assert_eq!(many.mean, 2.0);
        assert!(many.high - many.low < few.high - few.low);
        assert_eq!(few.low, 0.0, "clamped at zero");
        assert_eq!(
            mean_ci(&[5.0], false),
            MeanCi {
                mean: 5.0,
                low: 5.0,
                high: 5.0
            }
        );
    }

    #[test]
    fn wilson_interval_of_zero_is_not_degenerate() {
        let s = seed_share(0, 100);
        assert_eq!(s.low, 0.0);
        assert!(s.high > 0.0 && s.high < 0.05, "{}", s.high);
        let half = seed_share(50, 100);
        assert!(half.low < 0.5 && half.high > 0.5);
    }

    #[test]
    fn quantiles_use_nearest_rank_and_order_statistics() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let q = quantiles(&samples);
        assert_eq!(q.count, 100);
        assert_eq!(q.p50, Some(50.0));
        assert_eq!(q.p99, Some(99.0));
        assert!(q.p50_low.unwrap() < 50.0 && q.p50_high.unwrap() > 50.0);
        assert_eq!(q.p99_high, Some(100.0));
        assert_eq!(quantiles(&[]).p99, None);
        assert_eq!(quantiles(&[7.0]).p99_low, Some(7.0));
    }
}
