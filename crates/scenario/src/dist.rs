//! Distributions of durations in milliseconds (`Dist`): constant, uniform, log-normal and
//! empirical (a quantile table sampled by inverse CDF), drawn from a seed's ChaCha stream.
//! A leaf: faults, workers and the network all draw from it.

use rand::Rng as _;
use rand_distr::{Distribution, LogNormal};
use serde::{Deserialize, Serialize};

/// A distribution of durations in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "dist")]
pub enum Dist {
    /// Always `value`.
    Const {
        /// The constant value (ms).
        value: f64,
    },
    /// Uniform in `[min, max]`.
    Uniform {
        /// Lower bound (ms).
        min: f64,
        /// Upper bound (ms).
        max: f64,
    },
    /// Log-normal given by its median and 99th percentile (both > 0, p99 >= median).
    Lognormal {
        /// Median (ms).
        median: f64,
        /// 99th percentile (ms).
        p99: f64,
    },
    /// Exponential with mean `mean`.
    Exponential {
        /// Mean (ms).
        mean: f64,
    },
    /// Empirical: a quantile table `[p, ms]`, sampled by inverse CDF with linear
    /// interpolation between points. Validated: 2 to `limits::MAX_EMPIRICAL_POINTS` points,
    /// `p` from exactly 0 to exactly 1 and non-decreasing (equal `p` is a jump, as an empty
    /// histogram bucket makes), values non-decreasing within the duration limit.
    Empirical {
        /// The points `[p, ms]`, in order.
        quantiles: Vec<[f64; 2]>,
    },
}

/// The `p`-quantile of an empirical table (linear interpolation between its points; `p`
/// clamped to [0, 1]). The one inverse CDF of the empirical kind: sampling feeds it a uniform
/// draw, and the profile fit and the fault explorer read quantiles from it.
pub fn empirical_quantile(quantiles: &[[f64; 2]], p: f64) -> f64 {
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    let Some(&[_, last]) = quantiles.last() else {
        return 0.0;
    };
    // The first point whose p exceeds the draw; the segment before it holds the draw. Equal
    // p's (a jump) form a zero-width segment that no draw lands in.
    let above = quantiles.partition_point(|point| point[0] <= p);
    if above == 0 {
        return quantiles[0][1];
    }
    if above == quantiles.len() {
        return last;
    }
    let [p0, v0] = quantiles[above - 1];
    let [p1, v1] = quantiles[above];
    let width = p1 - p0;
    if width <= 0.0 {
        return v1;
    }
    v0 + (p - p0) / width * (v1 - v0)
}

/// z-score of the 99th percentile of the standard normal distribution.
const Z_P99: f64 = 2.326_347_874_040_841;

impl Dist {
    /// Draws one value (milliseconds, never negative).
    pub fn sample(&self, rng: &mut fencesim_model::rng::Rng) -> f64 {
        let value = match *self {
            Dist::Const { value } => value,
            Dist::Uniform { min, max } => {
                if max > min {
                    rng.gen_range(min..=max)
                } else {
                    min
                }
            }
            Dist::Lognormal { median, p99 } => {
                let sigma = ((p99 / median).ln() / Z_P99).max(0.0);
                if sigma == 0.0 {
                    median
                } else {
                    match LogNormal::new(median.ln(), sigma) {
                        Ok(lognormal) => lognormal.sample(rng),
                        // Unreachable for validated parameters (finite, median > 0); a
                        // hand-built Dist falls back to its median rather than panic.
                        Err(_) => median,
                    }
                }
            }
            Dist::Exponential { mean } => -mean * (1.0 - rng.gen::<f64>()).ln(),
            Dist::Empirical { ref quantiles } => empirical_quantile(quantiles, rng.gen::<f64>()),
        };
        // Validation bounds every parameter (crate::limits); the clamp keeps a far tail
        // (exponential, lognormal) within the duration limit too.
        value.clamp(0.0, crate::limits::MAX_DURATION_MS as f64)
    }

    /// The distribution's mean (ms).
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { min, max } => (min + max) / 2.0,
            Dist::Lognormal { median, p99 } => {
                let sigma = ((p99 / median).ln() / Z_P99).max(0.0);
                median * (sigma * sigma / 2.0).exp()
            }
            Dist::Exponential { mean } => mean,
            // The area under the piecewise-linear quantile function.
            Dist::Empirical { ref quantiles } => quantiles
                .windows(2)
                .map(|pair| (pair[1][0] - pair[0][0]) * (pair[0][1] + pair[1][1]) / 2.0)
                .sum(),
        }
    }

    /// A value the distribution rarely exceeds (its max, or its 99th percentile), used to
    /// derive bounds such as the liveness bound.
    pub fn high(&self) -> f64 {
        match *self {
            Dist::Const { value } => value,
            Dist::Uniform { max, .. } => max,
            Dist::Lognormal { p99, .. } => p99,
            Dist::Exponential { mean } => mean * 4.6,
            // A table is bounded: its largest value can happen, so it is the bound.
            Dist::Empirical { ref quantiles } => empirical_quantile(quantiles, 1.0),
        }
    }
}
