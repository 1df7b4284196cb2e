//! Confidence intervals, all exact or distribution-free and deterministic (no resampling,
//! no normal approximation where a count is small):
//! - a count of events over an exposure (false expiries, stand-downs): the exact Poisson
//!   (Garwood) interval on the count pooled over every seed, divided by the total exposure —
//!   not a mean of per-seed rates;
//! - a share of seeds (unsafe seeds, seeds failing an outage): the Clopper–Pearson
//!   interval, the one method for proportions in every output;
//! - a quantile of samples pooled over seeds: the nearest-rank estimate and the
//!   distribution-free order-statistic interval [x₍ₗ₎, x₍ᵤ₎] whose binomial coverage is at
//!   least 95 %; when there are too few samples for an end (a p99 upper bound needs at
//!   least 368 samples) that end is absent, never the sample maximum;
//! - a mean of a bounded per-seed quantity (unavailability, renewals): mean ± 1.96·s/√n,
//!   used for display only, never for a decision.
//!
//! Every interval is two-sided 95 %; a decision compares its upper end with a target.
//! The intervals themselves and the special functions under them are `fencesim-stats`'s
//! (re-exported here), shared with live mode's fidelity report; this module turns them into
//! the tuning report's types.

use crate::report::{round, MeanCi, Quantiles, Rate, SeedShare};
pub use fencesim_stats::{
    beta_i, binomial_cdf, clopper_pearson, gamma_p, ln_gamma, poisson_interval, quantile_ranks,
    ALPHA,
};

const Z: f64 = 1.959_963_984_540_054;

/// A count over an exposure in ms, as a rate per hour with its Garwood interval.
pub fn rate(count: u64, exposure_ms: f64) -> Rate {
    let hours = exposure_ms / 3_600_000.0;
    if hours <= 0.0 {
        return Rate {
            count,
            ..Rate::default()
        };
    }
    let (low, high) = poisson_interval(count);
    Rate {
        count,
        exposure_h: round(hours),
        per_hour: round(count as f64 / hours),
        low: round(low / hours),
        high: round(high / hours),
        exact: Some([count as f64 / hours, low / hours, high / hours]),
    }
}

/// `seeds` of `of` with the Clopper–Pearson interval on the share.
pub fn seed_share(seeds: u64, of: u64) -> SeedShare {
    if of == 0 {
        return SeedShare::default();
    }
    let (low, high) = clopper_pearson(seeds, of);
    SeedShare {
        seeds,
        of,
        low: round(low),
        high: round(high),
    }
}

/// Mean with its 95 % normal interval (display only); `non_negative` clamps the low end.
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

/// Nearest-rank quantile `q` of sorted `x` and its order-statistic interval.
fn quantile(sorted: &[f64], q: f64) -> (f64, Option<f64>, Option<f64>) {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    let (low, high) = quantile_ranks(n as u64, q);
    (
        sorted[rank - 1],
        low.map(|l| sorted[l as usize - 1]),
        high.map(|u| sorted[u as usize - 1]),
    )
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
        p50_low: p50_low.map(round),
        p50_high: p50_high.map(round),
        p99: Some(round(p99)),
        p99_low: p99_low.map(round),
        p99_high: p99_high.map(round),
    }
}

/// Seeds with no unsafe outcome needed before the Clopper–Pearson upper bound on the unsafe
/// share falls to `share` (368 for 1 %).
pub fn seeds_to_exclude(share: f64) -> u64 {
    let mut n = 1;
    while clopper_pearson(0, n).1 > share && n < 10_000_000 {
        n = (n as f64 * 1.01).ceil() as u64 + 1;
    }
    // Step back to the smallest n.
    while n > 1 && clopper_pearson(0, n - 1).1 <= share {
        n -= 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1e-12)
    }

    #[test]
    fn a_zero_count_has_a_positive_upper_bound() {
        // 0 events in 9.66 simulated hours: upper bound 3.689 / 9.66 ≈ 0.38 per hour.
        let r = rate(0, 9.66 * 3_600_000.0);
        assert_eq!(r.per_hour, 0.0);
        assert_eq!(r.low, 0.0);
        assert!(close(r.high, 0.3819, 1e-3), "{}", r.high);
        // The rate pools the count over the exposure: 34 in 200 × 300 s = 2.04 per hour.
        let r = rate(34, 200.0 * 300_000.0);
        assert_eq!(r.per_hour, 2.04);
        assert!(r.low < 2.04 && r.high > 2.04);
    }

    #[test]
    fn seed_shares_use_clopper_pearson() {
        assert_eq!(seeds_to_exclude(0.01), 368);
        let zero = seed_share(0, 200);
        assert!(zero.high > 0.018 && zero.high < 0.019, "{}", zero.high);
    }

    #[test]
    fn quantiles_refuse_a_bound_too_few_samples_can_give() {
        let samples: Vec<f64> = (1..=50).map(f64::from).collect();
        let q = quantiles(&samples);
        assert_eq!(q.p99, Some(50.0));
        assert_eq!(q.p99_high, None, "not the sample maximum at n = 50");
        let samples: Vec<f64> = (1..=1000).map(f64::from).collect();
        let q = quantiles(&samples);
        assert_eq!(q.p99, Some(990.0));
        assert!(q.p99_low.unwrap() < 990.0 && q.p99_high.unwrap() > 990.0);
        assert!(q.p99_high.unwrap() < 1000.0);
        assert_eq!(quantiles(&[]).p99, None);
    }

    #[test]
    fn rates_match_published_garwood_bounds() {
        // Garwood 95 % for 34 events: [23.546, 47.512] (χ²(0.025; 68)/2, χ²(0.975; 70)/2),
        // over 200 × 300 s = 16.667 h.
        let r = rate(34, 200.0 * 300_000.0);
        assert_eq!(r.count, 34);
        assert_eq!(r.exposure_h, 16.67);
        assert_eq!((r.low, r.high), (1.413, 2.851));
        // 0 events: [0, 3.689] over 2 h.
        let r = rate(0, 7_200_000.0);
        assert_eq!((r.per_hour, r.low, r.high), (0.0, 0.0, 1.844));
        // No exposure: the count alone, no rate.
        let r = rate(3, 0.0);
        assert_eq!(
            r,
            Rate {
                count: 3,
                ..Rate::default()
            }
        );
    }

    #[test]
    fn seed_shares_match_published_clopper_pearson_bounds() {
        // 1 of 4: [0.006309, 0.8059]; 2 of 400: [0.000606, 0.01794] (rounded to 6 places).
        let s = seed_share(1, 4);
        assert_eq!((s.seeds, s.of, s.low, s.high), (1, 4, 0.006309, 0.8059));
        let s = seed_share(2, 400);
        assert_eq!((s.low, s.high), (0.000606, 0.01794));
        assert_eq!(seed_share(0, 0), SeedShare::default());
        // 5 % needs 72 seeds without an unsafe one (1 − 0.025^(1/72) ≤ 5 % < 1 − 0.025^(1/71)).
        assert_eq!(seeds_to_exclude(0.05), 72);
        assert_eq!(seeds_to_exclude(0.99), 1);
    }

    #[test]
    fn quantile_intervals_are_the_published_order_statistics() {
        // n = 1000, p99: rank 990, interval [x₍₉₈₃₎, x₍₉₉₇₎] (binomial coverage ≥ 95 %).
        let samples: Vec<f64> = (1..=1000).rev().map(f64::from).collect();
        let q = quantiles(&samples);
        assert_eq!(q.count, 1000);
        assert_eq!(
            (q.p99, q.p99_low, q.p99_high),
            (Some(990.0), Some(983.0), Some(997.0))
        );
        // n = 100, p50: rank 50, interval [x₍₄₀₎, x₍₆₁₎].
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let q = quantiles(&samples);
        assert_eq!(
            (q.p50, q.p50_low, q.p50_high),
            (Some(50.0), Some(40.0), Some(61.0))
        );
        // One sample: it is every quantile, with no interval.
        let q = quantiles(&[7.0]);
        assert_eq!(
            (q.p50, q.p99, q.p50_low, q.p99_high),
            (Some(7.0), Some(7.0), None, None)
        );
    }

    #[test]
    fn display_means_are_mean_plus_minus_1_96_standard_errors() {
        // 1..5: mean 3, s² = 2.5, half-width 1.96 × √(2.5/5) = 1.386.
        let m = mean_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], false);
        assert_eq!((m.mean, m.low, m.high), (3.0, 1.614, 4.386));
        // -1, 1: mean 0, s² = 2, half-width 1.96; unclamped below zero.
        let m = mean_ci(&[-1.0, 1.0], false);
        assert_eq!((m.mean, m.low, m.high), (0.0, -1.96, 1.96));
        let m = mean_ci(&[-1.0, 1.0], true);
        assert_eq!((m.low, m.high), (0.0, 1.96));
        // One value: no spread to estimate.
        let m = mean_ci(&[5.0], false);
        assert_eq!((m.mean, m.low, m.high), (5.0, 5.0, 5.0));
        assert_eq!(mean_ci(&[], false), MeanCi::default());
    }

    #[test]
    fn display_means_shrink_with_more_seeds() {
        let few = mean_ci(&[0.0, 4.0], true);
        let many = mean_ci(&[0.0, 4.0].repeat(50), true);
        assert_eq!(few.mean, 2.0);
        assert!(many.high - many.low < few.high - few.low);
        assert_eq!(few.low, 0.0, "clamped at zero");
    }
}
