//! Statistics with exact or distribution-free intervals, deterministic (no resampling), shared
//! by `tune` (its decisions) and `live` (the fidelity report): log-gamma, the regularized
//! incomplete gamma and beta functions (Numerical Recipes: Lanczos; series and continued
//! fractions), the Garwood interval on a Poisson count, the Clopper–Pearson interval on a
//! share, binomial probabilities, the one sample quantile (and median) and the order-statistic
//! ranks of its interval, and the two-sample Kolmogorov–Smirnov test. Every interval is two-sided 95 % ([`ALPHA`]); each
//! function is tested against published values.

#![warn(missing_docs)]

/// Two-sided level: 2.5 % in each tail.
pub const ALPHA: f64 = 0.05;

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

/// The `q` quantile (0 ≤ q ≤ 1, clamped) of ascending `sorted` values: fencesim's one sample
/// quantile. Linear interpolation between order statistics at position q·(n − 1) (Hyndman
/// and Fan's type 7, R's and NumPy's default), so q = 0 is the smallest value, 1 the largest
/// and 0.5 the [`median`]; between two values it moves with q instead of jumping, which a
/// profile's table (`profile::fit`) needs. Its distribution-free interval is
/// [`quantile_ranks`]'s. NaN for no values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return f64::NAN;
    };
    let position = last as f64 * q.clamp(0.0, 1.0);
    let below = position.floor() as usize;
    let (low, high) = (sorted[below], sorted[position.ceil() as usize]);
    if low == high {
        // Also two equal infinities (censored values), whose difference is NaN.
        return low;
    }
    low + (high - low) * (position - below as f64)
}

/// The median of `values` (any order): [`quantile`] at 0.5, the middle value or the mean of
/// the two middle ones. `None` for no values.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (!sorted.is_empty()).then(|| quantile(&sorted, 0.5))
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

/// The two-sample Kolmogorov–Smirnov test: the largest distance between the empirical
/// distribution functions, and its asymptotic p-value (Numerical Recipes' `kstwo`, with
/// Stephens' small-sample correction). `None` when a sample is empty.
pub fn ks_two_sample(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (n, m) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0, 0, 0.0_f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / n - j as f64 / m).abs());
    }
    let effective = (n * m / (n + m)).sqrt();
    let lambda = (effective + 0.12 + 0.11 / effective) * d;
    Some((d, kolmogorov_q(lambda)))
}

/// Q_KS(λ) = 2 Σ (−1)^(k−1) exp(−2 k² λ²), the Kolmogorov distribution's upper tail.
fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda < 1e-3 {
        return 1.0;
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for k in 1..=100 {
        let k = f64::from(k);
        let term = sign * 2.0 * (-2.0 * k * k * lambda * lambda).exp();
        sum += term;
        if term.abs() < 1e-12 {
            break;
        }
        sign = -sign;
    }
    sum.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantile_interpolates_between_order_statistics() {
        // R: quantile(c(1, 2, 4, 8, 16), c(0, .1, .25, .5, .9, 1)) (type 7).
        let x = [1.0, 2.0, 4.0, 8.0, 16.0];
        for (q, want) in [
            (0.0, 1.0),
            (0.1, 1.4),
            (0.25, 2.0),
            (0.5, 4.0),
            (0.9, 12.8),
            (1.0, 16.0),
        ] {
            assert!((quantile(&x, q) - want).abs() < 1e-12, "q {q}");
        }
        // Out of range clamps; one value is every quantile; none is NaN.
        assert_eq!(quantile(&x, 1.5), 16.0);
        assert_eq!(quantile(&x, -1.0), 1.0);
        assert_eq!(quantile(&[7.0], 0.99), 7.0);
        assert!(quantile(&[], 0.5).is_nan());
        // Not the nearest rank: the p99 of 1..=10 is 9.91, not 10.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((quantile(&ten, 0.99) - 9.91).abs() < 1e-12);
    }

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_two_middles() {
        assert_eq!(median(&[9.0, 1.0, 4.0]), Some(4.0));
        assert_eq!(median(&[6.0, 4.0]), Some(5.0));
        assert_eq!(median(&[]), None);
        // A censored value (infinite) sorts last: it is the median only when half are.
        assert_eq!(median(&[3.0, f64::INFINITY, 5.0]), Some(5.0));
        assert_eq!(median(&[3.0, f64::INFINITY]), Some(f64::INFINITY));
        assert_eq!(
            median(&[1.0, f64::INFINITY, f64::INFINITY, 2.0]),
            Some(f64::INFINITY)
        );
    }

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
    }

    #[test]
    fn clopper_pearson_matches_published_intervals() {
        // Reference values (R: binom.test(k, n)$conf.int).
        let close = |(lo, hi): (f64, f64), (want_lo, want_hi): (f64, f64)| {
            (lo - want_lo).abs() < 5e-4 && (hi - want_hi).abs() < 5e-4
        };
        assert!(close(clopper_pearson(0, 20), (0.0, 0.1684)));
        assert!(close(clopper_pearson(19, 20), (0.7513, 0.9987)));
        assert!(close(clopper_pearson(5, 10), (0.1871, 0.8129)));
        assert!(close(clopper_pearson(20, 20), (0.8316, 1.0)));
    }

    #[test]
    fn the_ks_test_separates_shifted_samples_and_not_equal_ones() {
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        let (d, p) = ks_two_sample(&a, &a).unwrap();
        assert_eq!(d, 0.0);
        assert!(p > 0.99);
        let b: Vec<f64> = (0..50).map(|x| f64::from(x) + 25.0).collect();
        let (d, p) = ks_two_sample(&a, &b).unwrap();
        assert!((d - 0.5).abs() < 1e-9, "{d}");
        assert!(p < 0.001, "{p}");
        // Bimodal live windows against a spread: D large, p small (the phase problem).
        let live = [
            2_050.0, 2_060.0, 2_055.0, 2_540.0, 2_545.0, 2_550.0, 2_052.0, 2_548.0,
        ];
        let sim: Vec<f64> = (0..200).map(|k| 2_000.0 + 2.5 * f64::from(k)).collect();
        let (_, p) = ks_two_sample(&live, &sim).unwrap();
        assert!(p < 0.05, "{p}");
        assert!(ks_two_sample(&[], &sim).is_none());
    }

    #[test]
    fn order_statistic_ranks_match_the_tables_and_refuse_too_few_samples() {
        // The median of 100 samples: x(40)..x(61) (coverage 96.5 %).
        assert_eq!(quantile_ranks(100, 0.5), (Some(40), Some(61)));
        // A p99 upper bound needs P(B ≤ n − 1) ≥ 97.5 %: 1 − 0.99^n ≥ 0.975, n ≥ 368.
        assert_eq!(quantile_ranks(367, 0.99).1, None);
        assert!(quantile_ranks(368, 0.99).1.is_some());
    }
}
