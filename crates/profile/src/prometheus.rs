//! The Prometheus text exposition format's histograms (`name_bucket{…,le="0.05"} 24054`):
//! every series of one metric summed by bucket (as `sum by (le)`), into a latency
//! distribution interpolated linearly within each bucket, as `histogram_quantile` does. The
//! first bucket starts at 0; observations above the highest finite bucket have no known value
//! and are placed at that bound (also as `histogram_quantile` does), and said so. [`check`]
//! refuses a histogram whose values are all unknown or whose bounds are no latencies.

use std::collections::BTreeMap;

use crate::input::{InputError, Line, LineReport};

/// One sample line's parts.
struct Sample<'a> {
    name: &'a str,
    labels: Vec<(String, String)>,
    value: f64,
}

/// What an exposition holds for the histograms in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Exposition {
    /// Per metric (the name without `_bucket`), per series (its labels but `le`, as text):
    /// its labels, and per bucket bound the cumulative count and the line it came from.
    pub buckets: BTreeMap<String, BTreeMap<String, Series>>,
    /// Per metric, the `_count` of each series.
    pub counts: BTreeMap<String, BTreeMap<String, f64>>,
    /// Metrics declared `# TYPE name histogram`.
    pub histograms: Vec<String>,
    /// The account of every line.
    pub report: LineReport,
}

/// One series of a histogram: its labels (but `le`) and its buckets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// The labels, `le` excepted.
    pub labels: Vec<(String, String)>,
    /// `(bound, cumulative count, line)`, in file order.
    pub buckets: Vec<(f64, f64, usize)>,
}

/// A histogram summed over its series.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// The metric.
    pub metric: String,
    /// Series summed.
    pub series: usize,
    /// `(upper bound, cumulative count)`, finite bounds ascending, then `+Inf`.
    pub buckets: Vec<(f64, f64)>,
    /// The `_count` sum, when every series has one.
    pub count: Option<f64>,
}

impl Exposition {
    /// Reads one line.
    pub fn line(&mut self, number: usize, line: Line<'_>) {
        self.report.lines += 1;
        let text = match line {
            Line::Text(text) => text,
            Line::Unreadable(reason) => {
                self.report.unusable(number, reason, "");
                return;
            }
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            self.report.skipped += 1;
            return;
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            let words: Vec<&str> = comment.split_whitespace().collect();
            if let ["TYPE", name, "histogram"] = words.as_slice() {
                self.histograms.push(name.to_string());
            }
            self.report.skipped += 1;
            return;
        }
        let sample = match sample(trimmed) {
            Ok(sample) => sample,
            Err(reason) => {
                self.report.unusable(number, reason, text);
                return;
            }
        };
        let series_of = |labels: &[(String, String)]| {
            let rest: Vec<String> = labels
                .iter()
                .filter(|(key, _)| key != "le")
                .map(|(key, value)| format!("{key}={value:?}"))
                .collect();
            rest.join(",")
        };
        if let Some(metric) = sample.name.strip_suffix("_bucket") {
            let Some((_, le)) = sample.labels.iter().find(|(key, _)| key == "le") else {
                self.report
                    .unusable(number, "a `_bucket` sample without an `le` label", text);
                return;
            };
            let bound = match le.as_str() {
                "+Inf" | "Inf" | "+inf" | "inf" => f64::INFINITY,
                le => match le.parse::<f64>() {
                    Ok(bound) if bound.is_finite() => bound,
                    _ => {
                        self.report
                            .unusable(number, "expected a number or +Inf in `le`", text);
                        return;
                    }
                },
            };
            if !(sample.value.is_finite() && sample.value >= 0.0) {
                self.report
                    .unusable(number, "expected a non-negative bucket count", text);
                return;
            }
            self.report.used += 1;
            let series = self
                .buckets
                .entry(metric.to_string())
                .or_default()
                .entry(series_of(&sample.labels))
                .or_default();
            if series.buckets.is_empty() {
                series.labels = sample
                    .labels
                    .iter()
                    .filter(|(key, _)| key != "le")
                    .cloned()
                    .collect();
            }
            series.buckets.push((bound, sample.value, number));
            return;
        }
        if let Some(metric) = sample.name.strip_suffix("_count") {
            self.counts
                .entry(metric.to_string())
                .or_default()
                .insert(series_of(&sample.labels), sample.value);
        }
        // Any other metric, and a histogram's `_sum`/`_count`: Prometheus lines, not buckets.
        self.report.skipped += 1;
    }

    /// The histogram of `metric` (or of the only one there is), summed over its series that
    /// carry every `label=value` of `matches`.
    pub fn histogram(
        &self,
        metric: Option<&str>,
        matches: &[(String, String)],
    ) -> Result<Histogram, String> {
        let metric = self.metric(metric)?;
        let chosen = self.series(&metric, matches)?;
        let mut summed: Option<Vec<(f64, f64)>> = None;
        for &(series, chosen_series) in &chosen {
            let these = checked_buckets(&metric, series, chosen_series)?;
            summed = Some(match summed {
                None => these,
                Some(total) => sum_buckets(&metric, &total, &these)?,
            });
        }
        let buckets = summed.unwrap_or_default();
        let count = self.counts.get(&metric).and_then(|counts| {
            chosen
                .iter()
                .map(|(series, _)| counts.get(*series))
                .sum::<Option<f64>>()
        });
        Ok(Histogram {
            metric,
            series: chosen.len(),
            buckets,
            count,
        })
    }

    /// The first line holding a bucket of `metric` with bound `le`.
    pub fn line_of(&self, metric: &str, le: f64) -> Option<usize> {
        self.buckets
            .get(metric)?
            .values()
            .flat_map(|series| &series.buckets)
            .filter(|bucket| bucket.0 == le)
            .map(|bucket| bucket.2)
            .min()
    }

    /// The metric asked for (without `_bucket`), or the only histogram there is.
    fn metric(&self, metric: Option<&str>) -> Result<String, String> {
        let names: Vec<&String> = self.buckets.keys().collect();
        match metric {
            Some(metric) => Ok(metric.strip_suffix("_bucket").unwrap_or(metric).to_string()),
            None if names.len() == 1 => Ok(names[0].clone()),
            None if names.is_empty() => Err(
                "expected histogram buckets (`<name>_bucket{le=\"…\"} <count>`), found none".into(),
            ),
            None => Err(format!(
                "expected one histogram, found {}: choose one with --metric ({})",
                names.len(),
                names
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The series of `metric` that carry every `label=value` of `matches`: (its labels as
    /// text, the series).
    fn series(
        &self,
        metric: &str,
        matches: &[(String, String)],
    ) -> Result<Vec<(&String, &Series)>, String> {
        let names: Vec<&String> = self.buckets.keys().collect();
        let Some(all_series) = self.buckets.get(metric) else {
            return Err(format!(
                "expected buckets of {metric:?} (`{metric}_bucket{{le=\"…\"}}`), found {}",
                if names.is_empty() {
                    "no histogram".to_string()
                } else {
                    names
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ));
        };
        let chosen: Vec<(&String, &Series)> = all_series
            .iter()
            .filter(|(_, series)| {
                matches
                    .iter()
                    .all(|wanted| series.labels.iter().any(|label| label == wanted))
            })
            .collect();
        if chosen.is_empty() {
            let wanted: Vec<String> = matches.iter().map(|(k, v)| format!("{k}={v}")).collect();
            return Err(format!(
                "expected a series of {metric} with {}, found none among its {}",
                wanted.join(", "),
                all_series.len()
            ));
        }
        Ok(chosen)
    }
}

/// One series' buckets, sorted by bound and checked: distinct bounds, counts that never
/// decrease, a `+Inf` bucket, no negative bound.
fn checked_buckets(
    metric: &str,
    series: &str,
    chosen_series: &Series,
) -> Result<Vec<(f64, f64)>, String> {
    let mut buckets = chosen_series.buckets.clone();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    for pair in buckets.windows(2) {
        let ((low, low_count, _), (high, high_count, line)) = (pair[0], pair[1]);
        if low == high {
            return Err(format!(
                "line {line}: series {{{series}}} has bucket le={high} twice"
            ));
        }
        if high_count < low_count {
            return Err(format!(
                "line {line}: series {{{series}}}: cumulative bucket counts must not \
                 decrease, got {high_count} at le={high} after {low_count} at le={low}"
            ));
        }
    }
    match buckets.last() {
        Some(&(bound, _, _)) if bound == f64::INFINITY => {}
        _ => {
            return Err(format!(
                "series {{{series}}} of {metric} has no le=\"+Inf\" bucket (the total)"
            ))
        }
    }
    if buckets[0].0 < 0.0 {
        return Err(format!(
            "series {{{series}}} of {metric} has a negative bucket bound; latencies are \
             not negative"
        ));
    }
    Ok(buckets.iter().map(|&(le, count, _)| (le, count)).collect())
}

/// `total` plus one more series' buckets (`these`), which must have the same bounds.
fn sum_buckets(
    metric: &str,
    total: &[(f64, f64)],
    these: &[(f64, f64)],
) -> Result<Vec<(f64, f64)>, String> {
    let same_bounds =
        total.len() == these.len() && total.iter().zip(these).all(|(a, b)| a.0 == b.0);
    if !same_bounds {
        return Err(format!(
            "the series of {metric} have different buckets; choose series with the same ones \
             (e.g. filter the file with grep)"
        ));
    }
    Ok(total
        .iter()
        .zip(these)
        .map(|(a, b)| (a.0, a.1 + b.1))
        .collect())
}

impl Histogram {
    /// Observations in all.
    pub fn total(&self) -> f64 {
        self.buckets.last().map_or(0.0, |&(_, count)| count)
    }

    /// Observations above the highest finite bound.
    pub fn above_finite(&self) -> f64 {
        let finite = self
            .buckets
            .iter()
            .rev()
            .find(|(le, _)| le.is_finite())
            .map_or(0.0, |&(_, count)| count);
        self.total() - finite
    }

    /// The cumulative distribution at the bucket bounds, scaled by `ms_per_unit`: from the
    /// lower bound of the first non-empty bucket (share 0) to the first bound where the share
    /// reaches 1; observations above the last finite bound are placed at it. Runs of empty
    /// buckets keep only their ends (a jump in the quantile function).
    pub fn cdf_ms(&self, ms_per_unit: f64) -> Vec<(f64, f64)> {
        let total = self.total();
        if total <= 0.0 {
            return Vec::new();
        }
        let finite: Vec<(f64, f64)> = self
            .buckets
            .iter()
            .filter(|(le, _)| le.is_finite())
            .copied()
            .collect();
        let mut points: Vec<(f64, f64)> = vec![(0.0, 0.0)];
        for &(le, count) in &finite {
            let share = (count / total).min(1.0);
            points.push((le * ms_per_unit, share));
        }
        if points.last().is_none_or(|&(_, share)| share < 1.0) {
            let top = points.last().map_or(0.0, |&(ms, _)| ms);
            points.push((top, 1.0));
        }
        // From the last point at share 0 to the first at share 1.
        let start = points
            .iter()
            .rposition(|&(_, share)| share == 0.0)
            .unwrap_or(0);
        let end = points
            .iter()
            .position(|&(_, share)| share >= 1.0)
            .unwrap_or(points.len() - 1);
        let points = &points[start..=end];
        // Inside a run of equal shares only the ends matter.
        let mut kept: Vec<(f64, f64)> = Vec::with_capacity(points.len());
        for (index, &point) in points.iter().enumerate() {
            let same_before = index > 0 && points[index - 1].1 == point.1;
            let same_after = index + 1 < points.len() && points[index + 1].1 == point.1;
            if !(same_before && same_after) {
                kept.push(point);
            }
        }
        kept
    }
}

/// A histogram's values must be known and be latencies: some observations at or below a
/// finite bound (else every value is unknown: a table of them would be made up), every
/// finite bound at most [`fencesim_scenario::limits::MAX_DURATION_MS`] once in ms, and at
/// most as many points (`points`, from [`Histogram::cdf_ms`]) as a table holds.
/// Errors name the bucket's line.
pub fn check(
    file: &str,
    exposition: &Exposition,
    histogram: &Histogram,
    ms_per_unit: f64,
    points: usize,
) -> Result<(), InputError> {
    let metric = &histogram.metric;
    let error = |bound: f64, expected: String| InputError {
        file: file.to_string(),
        expected: format!(
            "line {}: {metric}_bucket{{le=\"{}\"}}: {expected}",
            exposition.line_of(metric, bound).unwrap_or(0),
            crate::fit::plain(bound)
        ),
    };
    let finite: Vec<f64> = histogram
        .buckets
        .iter()
        .map(|b| b.0)
        .filter(|b| b.is_finite())
        .collect();
    let max_ms = fencesim_scenario::limits::MAX_DURATION_MS as f64;
    if let Some(&bound) = finite.iter().find(|&&bound| bound * ms_per_unit > max_ms) {
        return Err(error(
            bound,
            format!(
                "expected bucket bounds of at most {max_ms} ms (7 days) as latencies, got {} ms",
                crate::fit::plain(bound * ms_per_unit)
            ),
        ));
    }
    if histogram.above_finite() >= histogram.total() {
        let highest = finite.last().copied().unwrap_or(f64::INFINITY);
        return Err(error(
            highest,
            format!(
                "expected observations at or below a finite bucket bound, found all {} above \
                 {}: their values are unknown",
                histogram.total(),
                if finite.is_empty() {
                    "every bound (only le=\"+Inf\" is given)"
                } else {
                    "the highest finite bound"
                }
            ),
        ));
    }
    if points > fencesim_scenario::limits::MAX_EMPIRICAL_POINTS {
        return Err(InputError {
            file: file.to_string(),
            expected: format!(
                "{metric}: expected at most {} buckets, got {}",
                fencesim_scenario::limits::MAX_EMPIRICAL_POINTS - 1,
                finite.len()
            ),
        });
    }
    Ok(())
}

/// `name{a="b",le="0.1"} 42 [timestamp]`.
fn sample(text: &str) -> Result<Sample<'_>, &'static str> {
    let name_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    let name = &text[..name_end];
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return Err("not a Prometheus sample line (name{labels} value)");
    }
    let mut rest = &text[name_end..];
    let mut labels = Vec::new();
    if let Some(inner) = rest.strip_prefix('{') {
        let mut chars = inner.char_indices().peekable();
        let mut key = String::new();
        let end = loop {
            let Some((at, c)) = chars.next() else {
                return Err("a label set without its closing `}`");
            };
            match c {
                '}' if key.trim().is_empty() => break at,
                ',' | ' ' if key.trim().is_empty() => {}
                '=' => {
                    if chars.next().map(|(_, c)| c) != Some('"') {
                        return Err("expected a quoted label value");
                    }
                    let mut value = String::new();
                    loop {
                        match chars.next() {
                            None => return Err("a label value without its closing quote"),
                            Some((_, '"')) => break,
                            Some((_, '\\')) => match chars.next() {
                                Some((_, 'n')) => value.push('\n'),
                                Some((_, other)) => value.push(other),
                                None => return Err("a label value without its closing quote"),
                            },
                            Some((_, other)) => value.push(other),
                        }
                    }
                    labels.push((key.trim().to_string(), value));
                    key.clear();
                }
                c if c.is_ascii_alphanumeric() || c == '_' => key.push(c),
                _ => return Err("a malformed label set"),
            }
        };
        rest = &inner[end + 1..];
    }
    let mut words = rest.split_whitespace();
    let value = words.next().ok_or("a sample without its value")?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        value => value
            .parse::<f64>()
            .map_err(|_| "expected a number as the sample's value")?,
    };
    if let Some(timestamp) = words.next() {
        timestamp
            .parse::<i64>()
            .map_err(|_| "expected an integer timestamp after the value")?;
    }
    if words.next().is_some() {
        return Err("unexpected text after the sample's value and timestamp");
    }
    Ok(Sample {
        name,
        labels,
        value,
    })
}
