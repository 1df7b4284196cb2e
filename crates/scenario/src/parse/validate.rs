//! The small validators every section shares: required values, numbers in range,
//! probabilities, node names, distributions, and keys foreign to a variant. Each returns the
//! value or an error naming the field, located at its line.

use fencesim_model::nodes;

use super::{
    join,
    raw::{RawDist, RawDistKind, RawDistTable},
    Ctx, Result,
};
use crate::{
    limits::{MAX_DURATION_MS, MAX_DURATION_MS_F64, MAX_EMPIRICAL_POINTS, MAX_LOGNORMAL_RATIO},
    spec::Dist,
};

// Resolution: the one place raw values become spec values, defaults included.

pub(crate) fn worker_range(workers: usize) -> String {
    match workers {
        1 => "worker-0".to_string(),
        n => format!("worker-0..worker-{}", n - 1),
    }
}

/// The name a value has in scenario files (its serde kebab-case form).
pub(crate) fn file_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        other => format!("{other:?}"),
    }
}

/// `ms` in the largest whole unit that divides it, for messages ("7 days").
pub(crate) fn human_ms(ms: u64) -> String {
    const DAY_MS: u64 = 24 * 3_600_000;
    match ms {
        ms if ms % DAY_MS == 0 => {
            format!("{} day{}", ms / DAY_MS, if ms == DAY_MS { "" } else { "s" })
        }
        ms if ms % 3_600_000 == 0 => format!("{} h", ms / 3_600_000),
        ms => format!("{} s", ms as f64 / 1_000.0),
    }
}

pub(crate) const MAX_DRIFT_PPM: f64 = 1e6;

impl Ctx<'_> {
    pub(crate) fn required<T>(&self, field: &str, value: Option<T>) -> Result<T> {
        value.ok_or_else(|| self.error(field, "expected a value: this field is required"))
    }

    pub(crate) fn positive_ms(&self, field: &str, value: i64) -> Result<u64> {
        self.positive_ms_within(field, value, MAX_DURATION_MS)
    }

    /// A positive number of milliseconds, at most `max_ms` (one limit per field, so the
    /// message names the field's own).
    pub(crate) fn positive_ms_within(&self, field: &str, value: i64, max_ms: u64) -> Result<u64> {
        let ms = u64::try_from(value)
            .ok()
            .filter(|&ms| ms > 0)
            .ok_or_else(|| {
                self.error(
                    field,
                    format!("expected a positive number of milliseconds, got {value}"),
                )
            })?;
        self.at_most_ms(field, ms, max_ms)
    }

    pub(crate) fn non_negative_ms(&self, field: &str, value: i64) -> Result<u64> {
        let ms = u64::try_from(value).map_err(|_| {
            self.error(
                field,
                format!("expected a non-negative number of milliseconds, got {value}"),
            )
        })?;
        self.at_most_ms(field, ms, MAX_DURATION_MS)
    }

    /// `ms` when within `max_ms` (docs/scenario-format.md, "Limits").
    pub(crate) fn at_most_ms(&self, field: &str, ms: u64, max_ms: u64) -> Result<u64> {
        if ms <= max_ms {
            Ok(ms)
        } else {
            Err(self.error(
                field,
                format!(
                    "expected at most {max_ms} ms ({}), got {ms}",
                    human_ms(max_ms)
                ),
            ))
        }
    }

    /// A fractional duration within the duration limit (either sign).
    pub(crate) fn bounded_ms_f64(&self, field: &str, value: f64) -> Result<f64> {
        if self.finite(field, value)?.abs() <= MAX_DURATION_MS_F64 {
            Ok(value)
        } else {
            Err(self.error(
                field,
                format!(
                    "expected at most {MAX_DURATION_MS} ms ({}) in magnitude, got {value}",
                    human_ms(MAX_DURATION_MS)
                ),
            ))
        }
    }

    pub(crate) fn finite(&self, field: &str, value: f64) -> Result<f64> {
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.error(field, format!("expected a finite number, got {value}")))
        }
    }

    pub(crate) fn positive_f64(&self, field: &str, value: f64, unit: &str) -> Result<f64> {
        if self.finite(field, value)? > 0.0 {
            self.bounded_if_ms(field, value, unit)
        } else {
            Err(self.error(
                field,
                format!("expected a positive number of {unit}, got {value}"),
            ))
        }
    }

    pub(crate) fn non_negative_f64(&self, field: &str, value: f64, unit: &str) -> Result<f64> {
        if self.finite(field, value)? >= 0.0 {
            self.bounded_if_ms(field, value, unit)
        } else {
            Err(self.error(
                field,
                format!("expected a non-negative number of {unit}, got {value}"),
            ))
        }
    }

    /// Every fractional field in milliseconds is a duration, so it takes the duration limit.
    fn bounded_if_ms(&self, field: &str, value: f64, unit: &str) -> Result<f64> {
        if unit == "milliseconds" {
            self.bounded_ms_f64(field, value)
        } else {
            Ok(value)
        }
    }

    /// A probability in [0, 1], or [0, 1) when `one_allowed` is false.
    pub(crate) fn probability(&self, field: &str, value: f64, one_allowed: bool) -> Result<f64> {
        let ok = value >= 0.0 && (value < 1.0 || (one_allowed && value == 1.0));
        if ok {
            Ok(value)
        } else {
            let range = if one_allowed { "[0, 1]" } else { "[0, 1)" };
            Err(self.error(
                field,
                format!("expected a probability in {range}, got {value}"),
            ))
        }
    }

    pub(crate) fn node(&self, field: &str, name: &str, names: &[String]) -> Result<String> {
        if names.iter().any(|known| known == name) {
            Ok(name.to_string())
        } else {
            let workers = names.len() - 2;
            Err(self.error(
                field,
                format!(
                    "expected a node name (coordinator, storage, {}), got {name:?}",
                    worker_range(workers)
                ),
            ))
        }
    }

    pub(crate) fn worker(&self, field: &str, name: &str, workers: usize) -> Result<String> {
        if (0..workers).any(|index| nodes::worker(index) == name) {
            Ok(name.to_string())
        } else {
            Err(self.error(
                field,
                format!(
                    "expected a worker name ({}), got {name:?}",
                    worker_range(workers)
                ),
            ))
        }
    }

    /// Rejects keys present in a table but meaningless for its variant (`what`), so a typo'd
    /// combination is an error rather than silently ignored.
    pub(crate) fn only_keys(
        &self,
        path: &str,
        what: &str,
        allowed: &[&str],
        present: &[(&str, bool)],
    ) -> Result<()> {
        for &(key, is_present) in present {
            if is_present && !allowed.contains(&key) {
                return Err(self.error(
                    &join(path, key),
                    format!(
                        "expected no `{key}` with {what} (it takes: {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn drift(&self, field: &str, drift_ppm: f64) -> Result<f64> {
        if self.finite(field, drift_ppm)?.abs() < MAX_DRIFT_PPM {
            Ok(drift_ppm)
        } else {
            Err(self.error(
                field,
                format!("expected a drift with |ppm| < 1000000, got {drift_ppm}"),
            ))
        }
    }

    pub(crate) fn dist(&self, path: &str, raw: RawDist) -> Result<Dist> {
        let table = match raw {
            RawDist::Number(value) => {
                return self
                    .non_negative_f64(path, value, "milliseconds")
                    .map(|value| Dist::Const { value })
            }
            RawDist::Table(table) => table,
        };
        let field = |key: &str| join(path, key);
        let kind = self.required(&field("dist"), table.dist)?;
        self.only_dist_keys(path, kind, &table)?;
        let get = |key: &str, value: Option<f64>| self.required_finite(&field(key), value);
        match kind {
            RawDistKind::Const => {
                let value = self.non_negative_f64(
                    &field("value"),
                    get("value", table.value)?,
                    "milliseconds",
                )?;
                Ok(Dist::Const { value })
            }
            RawDistKind::Uniform => {
                let min =
                    self.non_negative_f64(&field("min"), get("min", table.min)?, "milliseconds")?;
                let max = self.bounded_ms_f64(&field("max"), get("max", table.max)?)?;
                if max < min {
                    return Err(self.error(
                        &field("max"),
                        format!("expected max >= min ({min}), got {max}"),
                    ));
                }
                Ok(Dist::Uniform { min, max })
            }
            RawDistKind::Lognormal => self.lognormal(path, table.median, table.p99),
            RawDistKind::Exponential => {
                let mean =
                    self.positive_f64(&field("mean"), get("mean", table.mean)?, "milliseconds")?;
                Ok(Dist::Exponential { mean })
            }
            RawDistKind::Empirical => match (table.quantiles, table.samples) {
                (Some(quantiles), None) => self.quantile_table(&field("quantiles"), quantiles),
                (None, Some(samples)) => self.samples(&field("samples"), samples),
                (Some(_), Some(_)) => Err(self.error(
                    &field("samples"),
                    "expected either `quantiles` or `samples` with dist = \"empirical\", not both",
                )),
                (None, None) => Err(self.error(
                    path,
                    "expected `quantiles = [[p, ms], ...]` or `samples = [ms, ...]` with \
                     dist = \"empirical\"",
                )),
            },
        }
    }

    /// Refuses a key the distribution `kind` does not take.
    fn only_dist_keys(&self, path: &str, kind: RawDistKind, table: &RawDistTable) -> Result<()> {
        let (name, allowed): (&str, &[&str]) = match kind {
            RawDistKind::Const => ("const", &["value"]),
            RawDistKind::Uniform => ("uniform", &["min", "max"]),
            RawDistKind::Lognormal => ("lognormal", &["median", "p99"]),
            RawDistKind::Exponential => ("exponential", &["mean"]),
            RawDistKind::Empirical => ("empirical", &["quantiles", "samples"]),
        };
        self.only_keys(
            path,
            &format!("dist = \"{name}\""),
            allowed,
            &[
                ("value", table.value.is_some()),
                ("min", table.min.is_some()),
                ("max", table.max.is_some()),
                ("median", table.median.is_some()),
                ("p99", table.p99.is_some()),
                ("mean", table.mean.is_some()),
                ("quantiles", table.quantiles.is_some()),
                ("samples", table.samples.is_some()),
            ],
        )
    }

    /// A key a distribution requires: present and finite.
    fn required_finite(&self, field: &str, value: Option<f64>) -> Result<f64> {
        self.finite(field, self.required(field, value)?)
    }

    /// `dist = "lognormal"`: a median of at least 1 ns and a p99 above it, within
    /// [`MAX_LOGNORMAL_RATIO`] of it.
    fn lognormal(&self, path: &str, median: Option<f64>, p99: Option<f64>) -> Result<Dist> {
        let field = |key: &str| join(path, key);
        let get = |key: &str, value: Option<f64>| self.required_finite(&field(key), value);
        let median = self.positive_f64(&field("median"), get("median", median)?, "milliseconds")?;
        // Below a nanosecond a median is 0 once in nanoseconds; the ratio bound keeps
        // `ln` and the samples finite and within range.
        if median < 1e-6 {
            return Err(self.error(
                &field("median"),
                format!("expected a median of at least 0.000001 ms (1 ns), got {median}"),
            ));
        }
        let p99 = self.bounded_ms_f64(&field("p99"), get("p99", p99)?)?;
        if p99 < median {
            return Err(self.error(
                &field("p99"),
                format!("expected p99 >= median ({median}), got {p99}"),
            ));
        }
        if p99 / median > MAX_LOGNORMAL_RATIO {
            return Err(self.error(
                &field("p99"),
                format!("expected p99 / median <= {MAX_LOGNORMAL_RATIO}, got {p99} / {median}"),
            ));
        }
        Ok(Dist::Lognormal { median, p99 })
    }

    fn points_within_limit(&self, field: &str, count: usize, least: usize) -> Result<()> {
        if (least..=MAX_EMPIRICAL_POINTS).contains(&count) {
            Ok(())
        } else {
            Err(self.error(
                field,
                format!("expected {least} to {MAX_EMPIRICAL_POINTS} points, got {count}"),
            ))
        }
    }

    /// `[[p, ms], ...]`: p from exactly 0 to exactly 1, both columns non-decreasing.
    fn quantile_table(&self, field: &str, raw: Vec<Vec<f64>>) -> Result<Dist> {
        self.points_within_limit(field, raw.len(), 2)?;
        let mut quantiles: Vec<[f64; 2]> = Vec::with_capacity(raw.len());
        for (index, point) in raw.iter().enumerate() {
            let at = format!("{field}[{index}]");
            let &[p, ms] = point.as_slice() else {
                return Err(self.error(
                    &at,
                    format!("expected a pair [p, ms], got {} numbers", point.len()),
                ));
            };
            let p = self.probability(&at, self.finite(&at, p)?, true)?;
            let ms = self.non_negative_f64(&at, ms, "milliseconds")?;
            if let Some(&[previous_p, previous_ms]) = quantiles.last() {
                if p < previous_p || ms < previous_ms {
                    return Err(self.error(
                        &at,
                        format!(
                            "expected p and ms non-decreasing, got [{p}, {ms}] after \
                             [{previous_p}, {previous_ms}]"
                        ),
                    ));
                }
            }
            quantiles.push([p, ms]);
        }
        let first = quantiles[0][0];
        let last = quantiles[quantiles.len() - 1][0];
        if first != 0.0 || last != 1.0 {
            return Err(self.error(
                field,
                format!(
                    "expected the first point's p to be 0 and the last's 1 (the table covers \
                     the whole distribution), got {first} and {last}"
                ),
            ));
        }
        Ok(Dist::Empirical { quantiles })
    }

    /// `[ms, ...]` in any order: the sorted samples become the table `[i / (n - 1), x_(i)]`,
    /// the empirical quantile function with linear interpolation between order statistics.
    fn samples(&self, field: &str, raw: Vec<f64>) -> Result<Dist> {
        self.points_within_limit(field, raw.len(), 1)?;
        let mut samples = Vec::with_capacity(raw.len());
        for (index, ms) in raw.into_iter().enumerate() {
            samples.push(self.non_negative_f64(
                &format!("{field}[{index}]"),
                ms,
                "milliseconds",
            )?);
        }
        samples.sort_by(f64::total_cmp);
        if samples.len() == 1 {
            samples.push(samples[0]);
        }
        let last = (samples.len() - 1) as f64;
        let quantiles = samples
            .iter()
            .enumerate()
            .map(|(index, &ms)| [index as f64 / last, ms])
            .collect();
        Ok(Dist::Empirical { quantiles })
    }
}
