//! From data to a profile: an empirical quantile table (all samples up to the table limit,
//! else a fixed grid of quantiles dense in the tail), the fit summary (p50/p90/p99/max of the
//! data against draws from the profile) and the draws themselves.

use fencesim_scenario::{empirical_quantile, limits::MAX_EMPIRICAL_POINTS, Dist};

/// Draws from a profile for its fit summary and picture.
pub const FIT_DRAWS: usize = 100_000;

/// The quantiles the fit summary compares.
pub const SUMMARY_PS: [f64; 4] = [0.5, 0.9, 0.99, 1.0];

/// What the data is: individual values, or a cumulative histogram.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// Observed values (ms), sorted ascending.
    Samples(Vec<f64>),
    /// A histogram's cumulative points `(upper bound ms, share at or below it)`, from
    /// (lower bound, 0) to the point where the share reaches 1.
    Cdf(Vec<(f64, f64)>),
}

impl Data {
    /// The data's `p`-quantile: for samples, fencesim's one sample quantile
    /// (`fencesim_stats::quantile`: linear between order statistics); for a histogram, linear within its bucket (as
    /// Prometheus' `histogram_quantile`).
    pub fn quantile(&self, p: f64) -> f64 {
        match self {
            Data::Samples(sorted) => fencesim_stats::quantile(sorted, p),
            Data::Cdf(points) => {
                let table: Vec<[f64; 2]> = points.iter().map(|&(ms, p)| [p, ms]).collect();
                empirical_quantile(&table, p)
            }
        }
    }
}

/// Rounds to a millionth: values in a printed table are what the profile holds, bit for bit.
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Rounds to six significant digits: a rate of a few outages a year is 0.0000228 per minute.
pub fn round_significant(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let digits = 5 - x.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// The quantile levels a large sample is reduced to: every 0.2 %, every 0.01 % above p99 and
/// every 0.001 % above p99.9 — 686 levels, 0.5/0.9/0.99/1 among them exactly.
pub fn quantile_grid() -> Vec<f64> {
    let mut grid: Vec<f64> = (0..=500).map(|k| k as f64 / 500.0).collect();
    grid.extend((1..100).map(|k| 0.99 + k as f64 / 10_000.0));
    grid.extend((1..100).map(|k| 0.999 + k as f64 / 100_000.0));
    grid.iter_mut().for_each(|p| *p = round6(*p));
    grid.sort_by(f64::total_cmp);
    grid.dedup();
    grid
}

/// The empirical table of sorted samples: every sample when they fit the table limit
/// (`p = i / (n - 1)`), else the samples' type-7 quantiles on [`quantile_grid`]. Either way
/// the table's quantile function is the samples' at every grid level. Values and levels are
/// rounded to a millionth.
pub fn table_from_samples(sorted: &[f64]) -> Dist {
    let quantiles = match sorted.len() {
        0 => vec![[0.0, 0.0], [1.0, 0.0]],
        1 => vec![[0.0, round6(sorted[0])], [1.0, round6(sorted[0])]],
        n if n <= MAX_EMPIRICAL_POINTS => {
            let last = (n - 1) as f64;
            sorted
                .iter()
                .enumerate()
                .map(|(i, &ms)| [round6(i as f64 / last), round6(ms)])
                .collect()
        }
        _ => quantile_grid()
            .into_iter()
            .map(|p| [p, round6(fencesim_stats::quantile(sorted, p))])
            .collect(),
    };
    Dist::Empirical { quantiles }
}

/// `count` draws from `dist`, sorted, from the ChaCha stream named `profile-fit` of seed 0:
/// the very sampler a simulation uses, so the fit shows what a run would draw.
pub fn draws(dist: &Dist, count: usize) -> Vec<f64> {
    let mut rng = fencesim_model::rng::stream(0, "profile-fit");
    let mut out: Vec<f64> = (0..count).map(|_| dist.sample(&mut rng)).collect();
    out.sort_by(f64::total_cmp);
    out
}

/// One compared quantile: the data's and the profile draws'.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compared {
    /// The level (0.5, 0.9, 0.99, 1 for the max).
    pub p: f64,
    /// The data's quantile (ms).
    pub data_ms: f64,
    /// The quantile of [`FIT_DRAWS`] draws from the profile (ms).
    pub drawn_ms: f64,
}

/// The fit summary of `data` against sorted `draws`.
pub fn compare(data: &Data, draws: &[f64]) -> Vec<Compared> {
    SUMMARY_PS
        .iter()
        .map(|&p| Compared {
            p,
            data_ms: data.quantile(p),
            drawn_ms: fencesim_stats::quantile(draws, p),
        })
        .collect()
}

/// `p50 4.1/4.1 ms, p90 …, max 80/79.8 ms (data/profile)` in one line.
pub fn summary_line(compared: &[Compared]) -> String {
    let parts: Vec<String> = compared
        .iter()
        .map(|c| {
            let name = match c.p {
                p if p >= 1.0 => "max".to_string(),
                p => format!("p{}", round6(p * 100.0)),
            };
            format!("{name} {}/{} ms", short(c.data_ms), short(c.drawn_ms))
        })
        .collect();
    format!("{} (data/profile)", parts.join(", "))
}

/// A number in an error: as Rust writes it, or with an exponent when huge (`1e300`, not 301
/// digits); `+Inf` as Prometheus writes it.
pub fn plain(x: f64) -> String {
    if x == f64::INFINITY {
        "+Inf".to_string()
    } else if x.is_finite() && x.abs() >= 1e12 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A duration with four significant digits, for people.
pub fn short(ms: f64) -> String {
    if ms == 0.0 || !ms.is_finite() {
        return format!("{ms}");
    }
    let digits = (3 - ms.abs().log10().floor() as i32).max(0) as usize;
    format!("{ms:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_holds_the_summary_levels_exactly() {
        let grid = quantile_grid();
        assert_eq!(grid.len(), 686);
        assert!(grid.len() <= MAX_EMPIRICAL_POINTS);
        assert_eq!((grid[0], grid[grid.len() - 1]), (0.0, 1.0));
        assert!(grid.windows(2).all(|pair| pair[0] < pair[1]));
        for p in SUMMARY_PS {
            assert!(grid.contains(&p), "{p}");
        }
    }

    #[test]
    fn large_samples_reduce_to_the_grid_keeping_their_quantiles() {
        // 5 000 values with a heavy tail: more than a table holds.
        let sorted: Vec<f64> = (0..5_000)
            .map(|i| {
                let u = (i as f64 + 0.5) / 5_000.0;
                round6(-10.0 * (1.0 - u).ln())
            })
            .collect();
        let Dist::Empirical { quantiles } = table_from_samples(&sorted) else {
            panic!("not empirical")
        };
        assert_eq!(quantiles.len(), 686);
        for p in [0.1, 0.5, 0.9, 0.99, 0.999, 0.99999, 1.0] {
            let table = empirical_quantile(&quantiles, p);
            let data = fencesim_stats::quantile(&sorted, p);
            assert!((table - data).abs() <= 1e-6, "p{p}: {table} vs {data}");
        }
        // Small samples are kept whole.
        let Dist::Empirical { quantiles } = table_from_samples(&sorted[..1_000]) else {
            panic!("not empirical")
        };
        assert_eq!(quantiles.len(), 1_000);
    }

    #[test]
    fn rates_keep_six_significant_digits() {
        assert_eq!(round_significant(0.000_022_768_65), 0.000_022_768_7);
        assert_eq!(round_significant(187.272_34), 187.272);
        assert_eq!(round_significant(0.0), 0.0);
    }
}
