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
//! The special functions (log-gamma, the regularized incomplete gamma and beta functions)
//! follow Numerical Recipes (Lanczos; series and continued fractions) and are tested
//! against published values.

use crate::report::{round, MeanCi, Quantiles, Rate, SeedShare};

/// Two-sided level: 2.5 % in each tail.
pub const ALPHA: f64 = 0.05;
const Z: f64 = 1.959_963_984_540_054;

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 coefficients; relative error below 1e-13).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized lower incomplete gamma function P(a, x), a > 0, x ≥ 0.
pub fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let ln_front = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        // Series.
        let (mut sum, mut term, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (sum.ln() + ln_front).exp().min(1.0)
    } else {
        // Continued fraction for Q (modified Lentz).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (1.0 - (ln_front.exp() * h)).max(0.0)
    }
}

/// The regularized incomplete beta function I_x(a, b), a, b > 0, 0 ≤ x ≤ 1.
pub fn beta_i(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    let tiny = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = 1.0 + aa / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The x in [low, high] where the increasing function `f` crosses `target` (bisection to
/// the last bit).
fn solve_increasing(f: impl Fn(f64) -> f64, target: f64, mut low: f64, mut high: f64) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            break;
        }
        if f(mid) < target {
            low = mid;
        } else {
            high = mid;
        }
    }
    0.5 * (low + high)
}

/// The exact (Garwood) 95 % interval on the mean of a Poisson count `k`:
/// [Γ⁻¹(α/2; k), Γ⁻¹(1 − α/2; k + 1)] (the chi-square quantiles χ²(α/2, 2k)/2 and
/// χ²(1 − α/2, 2k + 2)/2).
pub fn poisson_interval(k: u64) -> (f64, f64) {
    let k = k as f64;
    let span = k + 20.0 * (k + 1.0).sqrt() + 50.0;
    let low = if k == 0.0 {
        0.0
    } else {
        solve_increasing(|mu| gamma_p(k, mu), ALPHA / 2.0, 0.0, span)
    };
    let high = solve_increasing(|mu| gamma_p(k + 1.0, mu), 1.0 - ALPHA / 2.0, 0.0, span);
    (low, high)
}

/// The Clopper–Pearson 95 % interval on a share `k / n`:
/// [B⁻¹(α/2; k, n − k + 1), B⁻¹(1 − α/2; k + 1, n − k)].
pub fn clopper_pearson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (kf, nf) = (k as f64, n as f64);
    let low = if k == 0 {
        0.0
    } else {
        solve_increasing(|p| beta_i(kf, nf - kf + 1.0, p), ALPHA / 2.0, 0.0, 1.0)
    };
    let high = if k == n {
        1.0
    } else {
        solve_increasing(
            |p| beta_i(kf + 1.0, nf - kf, p),
            1.0 - ALPHA / 2.0,
            0.0,
            1.0,
        )
    };
    (low, high)
}

/// P(B ≤ k) for B ~ Binomial(n, p).
pub fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    beta_i((n - k) as f64, k as f64 + 1.0, 1.0 - p)
}

/// The 1-based ranks (l, u) of the order statistics bracketing the q-quantile of n samples
/// with coverage at least 95 %: l the largest rank with P(B ≤ l − 1) ≤ α/2, u the smallest
/// with P(B ≤ u − 1) ≥ 1 − α/2, B ~ Binomial(n, q). `None` for an end that would fall
/// outside 1..=n (too few samples for that bound).
pub fn quantile_ranks(n: u64, q: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 {
        return (None, None);
    }
    let cdf = |k: u64| binomial_cdf(k, n, q);
    // l − 1: the largest k with P(B ≤ k) ≤ α/2 (the CDF increases with k).
    let low = (cdf(0) <= ALPHA / 2.0).then(|| {
        let (mut lo, mut hi) = (0, n - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if cdf(mid) <= ALPHA / 2.0 {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo + 1
    });
    // u − 1: the smallest k ≤ n − 1 with P(B ≤ k) ≥ 1 − α/2.
    let high = (cdf(n - 1) >= 1.0 - ALPHA / 2.0).then(|| {
        let (mut lo, mut hi) = (0, n - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cdf(mid) >= 1.0 - ALPHA / 2.0 {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo + 1
    });
    (low, high)
}

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
    fn special_functions_match_published_values() {
        assert!(close(ln_gamma(0.5), 0.572_364_942_924_700_1, 1e-12));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-12));
        assert!(close(ln_gamma(100.0), 359.134_205_369_575_4, 1e-12));
        // P(1, x) = 1 − e^−x; P(a, a) near ½ for large a; χ²(0.95, 10) = 18.307.
        assert!(close(gamma_p(1.0, 2.0), 1.0 - (-2f64).exp(), 1e-12));
        assert!(close(gamma_p(5.0, 18.307_038 / 2.0), 0.95, 1e-6));
        // I_x(a, 1) = x^a; I_½(a, a) = ½.
        assert!(close(beta_i(3.0, 1.0, 0.4), 0.064, 1e-12));
        assert!(close(beta_i(7.5, 7.5, 0.5), 0.5, 1e-12));
        // Binomial(10, 0.5): P(B ≤ 2) = 56/1024.
        assert!(close(binomial_cdf(2, 10, 0.5), 56.0 / 1024.0, 1e-12));
    }

    #[test]
    fn garwood_intervals_match_the_tables() {
        // Garwood (1936) / Ulm (1990) tables, 95 % two-sided.
        let cases = [
            (0, 0.0, 3.689),
            (1, 0.0253, 5.572),
            (5, 1.623, 11.67),
            (10, 4.795, 18.39),
            (34, 23.55, 47.51),
        ];
        for (k, low, high) in cases {
            let (l, h) = poisson_interval(k);
            assert!(close(l, low, 2e-3) || (low == 0.0 && l == 0.0), "{k}: {l}");
            assert!(close(h, high, 2e-3), "{k}: {h}");
        }
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
    fn clopper_pearson_matches_the_tables() {
        let cases = [
            (0, 10, 0.0, 0.3085),
            (1, 10, 0.002_529, 0.4450),
            (5, 10, 0.1871, 0.8129),
            (17, 2000, 0.004_957, 0.01357),
        ];
        for (k, n, low, high) in cases {
            let (l, h) = clopper_pearson(k, n);
            assert!(
                close(l, low, 3e-3) || (low == 0.0 && l == 0.0),
                "{k}/{n}: {l}"
            );
            assert!(close(h, high, 3e-3), "{k}/{n}: {h}");
        }
        // 0 of n: upper bound 1 − (α/2)^(1/n).
        let (_, h) = clopper_pearson(0, 300);
        assert!(close(h, 1.0 - 0.025f64.powf(1.0 / 300.0), 1e-9));
        assert_eq!(seeds_to_exclude(0.01), 368);
        let zero = seed_share(0, 200);
        assert!(zero.high > 0.018 && zero.high < 0.019, "{}", zero.high);
    }

    #[test]
    fn order_statistic_ranks_match_the_tables_and_refuse_too_few_samples() {
        // The median of 100 samples: x(40)..x(61) (coverage 96.5 %).
        assert_eq!(quantile_ranks(100, 0.5), (Some(40), Some(61)));
        // A p99 upper bound needs P(B ≤ n − 1) ≥ 97.5 %: 1 − 0.99^n ≥ 0.975, n ≥ 368.
        assert_eq!(quantile_ranks(367, 0.99).1, None);
        assert!(quantile_ranks(368, 0.99).1.is_some());
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
    fn display_means_shrink_with_more_seeds() {
        let few = mean_ci(&[0.0, 4.0], true);
        let many = mean_ci(&[0.0, 4.0].repeat(50), true);
        assert_eq!(few.mean, 2.0);
        assert!(many.high - many.low < few.high - few.low);
        assert_eq!(few.low, 0.0, "clamped at zero");
    }
}
