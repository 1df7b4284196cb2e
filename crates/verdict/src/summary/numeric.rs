//! The two mergeable numeric aggregates a streamed summary keeps per metric: a
//! [`Histogram`] for percentiles (bounded memory, mergeable by adding counts) and an
//! [`ExactSum`] for means (the correctly rounded exact sum, whatever the order of the values
//! and however they were split into shards).
//!
//! Both are deterministic: the same multiset of values gives the same state, in any order,
//! pushed one at a time or merged from parts.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bits of the mantissa a bucket keeps: a bucket spans at most 1/2^7 = 1/128 of its lower
/// bound.
pub const SUB_BUCKET_BITS: u32 = 7;

/// A log-linear histogram (HDR-style) of finite f64 values. A value's bucket is its IEEE-754
/// sign, exponent and top [`SUB_BUCKET_BITS`] mantissa bits: 128 buckets per power of two, each
/// spanning at most 1/128 of its lower bound (zero has a bucket of its own). Each bucket keeps
/// its count and the smallest and largest value it saw, so merging is adding counts and taking
/// minima and maxima, exactly.
///
/// A percentile is the nearest-rank element's bucket, reported as the midpoint of the
/// smallest and largest value seen in it: within 1/256 (< 0.4 %) of the exact nearest-rank
/// value for normal floats, and exact when the bucket holds one distinct value (every integer
/// below 256, any repeated value). The maximum and the count are exact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    buckets: BTreeMap<i64, Bucket>,
}

/// One bucket: how many values fell in it, and the smallest and largest of them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Bucket {
    count: u64,
    min: f64,
    max: f64,
}

/// A bucket as written in a check report: `[key, count, min, max]`.
type BucketJson = (i64, u64, f64, f64);

impl Histogram {
    /// The bucket of `x` (-0.0 is 0.0): ordered as the values are.
    pub fn key(x: f64) -> i64 {
        let shift = 52 - SUB_BUCKET_BITS;
        if x == 0.0 {
            0
        } else if x > 0.0 {
            (x.to_bits() >> shift) as i64
        } else {
            -(((-x).to_bits() >> shift) as i64) - 1
        }
    }

    /// Counts `x` (finite; -0.0 counts as 0.0).
    pub fn push(&mut self, x: f64) {
        let x = if x == 0.0 { 0.0 } else { x };
        self.add_bucket(
            Histogram::key(x),
            Bucket {
                count: 1,
                min: x,
                max: x,
            },
        );
    }

    fn add_bucket(&mut self, key: i64, bucket: Bucket) {
        self.buckets
            .entry(key)
            .and_modify(|mine| {
                mine.count += bucket.count;
                mine.min = mine.min.min(bucket.min);
                mine.max = mine.max.max(bucket.max);
            })
            .or_insert(bucket);
    }

    /// Adds every value `other` counted: the histogram of the union.
    pub fn merge(&mut self, other: &Histogram) {
        for (&key, &bucket) in &other.buckets {
            self.add_bucket(key, bucket);
        }
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.buckets.values().map(|bucket| bucket.count).sum()
    }

    /// The largest value counted (exact), `None` when empty.
    pub fn max(&self) -> Option<f64> {
        self.buckets.values().next_back().map(|bucket| bucket.max)
    }

    /// The bucket holding the nearest-rank `percent` percentile (the smallest value with at
    /// least `percent` % of the values <= it), as `(min, max)` of the values seen in it.
    fn rank_bucket(&self, percent: u64) -> Option<(f64, f64)> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let scaled = u128::from(percent) * u128::from(count);
        // Planted bug (`.ci/mutants`): the nearest rank rounded down.
        let rank =
            if fencesim_planted::active(fencesim_planted::Mutant::PercentileRankRoundsDown) {
                scaled / 100
            } else {
                scaled.div_ceil(100)
            }
            .max(1);
        let mut seen: u128 = 0;
        for bucket in self.buckets.values() {
            seen += u128::from(bucket.count);
            if seen >= rank {
                return Some((bucket.min, bucket.max));
            }
        }
        self.buckets
            .values()
            .next_back()
            .map(|bucket| (bucket.min, bucket.max))
    }

    /// The nearest-rank `percent` percentile, within 1/256 of the exact one (see the type's
    /// doc): the midpoint of the values seen in its bucket.
    pub fn percentile(&self, percent: u64) -> Option<f64> {
        self.rank_bucket(percent).map(|(min, max)| {
            if min == max {
                min
            } else {
                min + (max - min) / 2.0
            }
        })
    }

    /// The nearest-rank `percent` percentile of integer values (below 2^53 in magnitude): the
    /// midpoint of its bucket's values rounded down, so exact whenever the bucket holds one
    /// distinct value and within 1/256 otherwise.
    pub fn percentile_int(&self, percent: u64) -> Option<i128> {
        self.rank_bucket(percent)
            .map(|(min, max)| (min as i128 + max as i128).div_euclid(2))
    }
}

impl Serialize for Histogram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rows: Vec<BucketJson> = self
            .buckets
            .iter()
            .map(|(&key, bucket)| (key, bucket.count, bucket.min, bucket.max))
            .collect();
        rows.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Histogram, D::Error> {
        let rows = Vec::<BucketJson>::deserialize(deserializer)?;
        let mut histogram = Histogram::default();
        for (key, count, min, max) in rows {
            // A bucket must hold what its key says: an edited report could otherwise make
            // percentiles out of order or outside the values.
            if count == 0
                || min.partial_cmp(&max).is_none_or(|order| order.is_gt())
                || Histogram::key(min) != key
                || Histogram::key(max) != key
            {
                return Err(serde::de::Error::custom(format!(
                    "histogram bucket [{key}, {count}, {min}, {max}]: expected a positive count \
                     and min <= max, both in bucket {key}"
                )));
            }
            histogram.add_bucket(key, Bucket { count, min, max });
        }
        Ok(histogram)
    }
}

/// The exact sum of f64 values, as non-overlapping partials (Shewchuk's algorithm, as
/// Python's `math.fsum`): adding is exact, merging is adding the other's partials, and
/// [`ExactSum::value`] is the exact sum correctly rounded to an f64 — the same whatever the
/// order of the values and however they were split. (Should a partial overflow f64, beyond
/// ±1.8e308, the value is not finite.)
#[derive(Clone, Debug, Default)]
pub struct ExactSum {
    /// Non-overlapping, in increasing magnitude.
    partials: Vec<f64>,
}

impl ExactSum {
    /// Adds `x` exactly.
    pub fn add(&mut self, x: f64) {
        let mut x = x;
        let mut kept = 0;
        for index in 0..self.partials.len() {
            let mut y = self.partials[index];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[kept] = lo;
                kept += 1;
            }
            x = hi;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// Adds everything `other` summed.
    pub fn merge(&mut self, other: &ExactSum) {
        for &partial in &other.partials {
            self.add(partial);
        }
    }

    /// The exact sum, correctly rounded (half to even), as `math.fsum` rounds it.
    pub fn value(&self) -> f64 {
        let partials = &self.partials;
        let Some(&last) = partials.last() else {
            return 0.0;
        };
        let mut n = partials.len() - 1;
        let mut hi = last;
        let mut lo = 0.0;
        while n > 0 {
            let x = hi;
            n -= 1;
            let y = partials[n];
            hi = x + y;
            let y_rounded = hi - x;
            lo = y - y_rounded;
            if lo != 0.0 {
                break;
            }
        }
        // Half-way cases: round as if the partials below `lo` were there too.
        if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            let y_rounded = x - hi;
            if y == y_rounded {
                hi = x;
            }
        }
        hi
    }

    /// The one canonical form of the exact sum: `s0 = value()`, `s1` = the rest's value, ...,
    /// until nothing is left (largest first), so equal sums give equal components whatever the
    /// partials they were kept as.
    pub fn components(&self) -> Vec<f64> {
        let mut rest = self.clone();
        let mut out = Vec::new();
        loop {
            let value = rest.value();
            if value == 0.0 || !value.is_finite() || out.len() > 64 {
                if !value.is_finite() {
                    out.push(value);
                }
                return out;
            }
            out.push(value);
            rest.add(-value);
        }
    }
}

impl PartialEq for ExactSum {
    fn eq(&self, other: &ExactSum) -> bool {
        self.components() == other.components()
    }
}

impl Serialize for ExactSum {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.components().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ExactSum {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ExactSum, D::Error> {
        let components = Vec::<f64>::deserialize(deserializer)?;
        let mut sum = ExactSum::default();
        for component in components {
            sum.add(component);
        }
        Ok(sum)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn exact_percentile(values: &[f64], percent: u64) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let rank = (percent * sorted.len() as u64).div_ceil(100).max(1);
        sorted[(rank - 1) as usize]
    }

    fn histogram(values: &[f64]) -> Histogram {
        let mut histogram = Histogram::default();
        for &value in values {
            histogram.push(value);
        }
        histogram
    }

    /// Finite values over many magnitudes, both signs, zero and repeats.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-1e6f64..1e6),
            (0u32..300).prop_map(f64::from),
            (-300i32..300).prop_map(|e| 1.5f64.powi(e)),
            Just(0.0),
            Just(-0.0),
        ]
    }

    proptest! {
        #[test]
        fn a_percentile_is_within_1_256_of_the_exact_one(
            values in prop::collection::vec(value(), 1..400),
            percent in 1u64..=100,
        ) {
            let exact = exact_percentile(&values, percent);
            let got = histogram(&values).percentile(percent).unwrap();
            prop_assert!((got - exact).abs() <= exact.abs() / 256.0, "{got} vs {exact}");
            prop_assert_eq!(histogram(&values).count(), values.len() as u64);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            prop_assert_eq!(histogram(&values).max().unwrap(), max);
        }

        #[test]
        fn merging_two_histograms_is_the_histogram_of_the_union(
            a in prop::collection::vec(value(), 0..200),
            b in prop::collection::vec(value(), 0..200),
        ) {
            let mut merged = histogram(&a);
            merged.merge(&histogram(&b));
            let union: Vec<f64> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(&merged, &histogram(&union));
            let mut reversed = union.clone();
            reversed.reverse();
            prop_assert_eq!(&merged, &histogram(&reversed));
            let json = serde_json::to_string(&merged).unwrap();
            let back: Histogram = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(&back, &merged);
        }

        #[test]
        fn an_exact_sum_does_not_depend_on_order_or_split(
            values in prop::collection::vec(
                prop_oneof![value(), (-1e300f64..1e300), Just(1e-300), Just(-1e-300)],
                0..100,
            ),
            split in 0usize..100,
        ) {
            let mut whole = ExactSum::default();
            for &value in &values {
                whole.add(value);
            }
            let split = split.min(values.len());
            let (mut left, mut right) = (ExactSum::default(), ExactSum::default());
            for &value in values[..split].iter().rev() {
                left.add(value);
            }
            for &value in &values[split..] {
                right.add(value);
            }
            right.merge(&left);
            prop_assert_eq!(right.value().to_bits(), whole.value().to_bits());
            prop_assert_eq!(&right, &whole);
            let json = serde_json::to_string(&right).unwrap();
            prop_assert_eq!(json, serde_json::to_string(&whole).unwrap());
        }
    }

    #[test]
    fn small_integers_are_exact_and_buckets_are_ordered() {
        let values: Vec<f64> = (0..256).map(f64::from).collect();
        let histogram = histogram(&values);
        for percent in 1..=100 {
            assert_eq!(
                histogram.percentile(percent),
                Some(exact_percentile(&values, percent))
            );
            assert_eq!(
                histogram.percentile_int(percent),
                Some(exact_percentile(&values, percent) as i128)
            );
        }
        let mut keys: Vec<i64> = [-1e9, -2.5, -1.0, -1e-9, 0.0, 1e-9, 1.0, 1.01, 2.5, 1e9]
            .iter()
            .map(|&x| Histogram::key(x))
            .collect();
        let sorted = {
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            sorted
        };
        assert_eq!(keys, sorted);
        keys.dedup();
        assert_eq!(keys.len(), 10, "distinct values more than 1/128 apart");
        assert_eq!(Histogram::key(-0.0), Histogram::key(0.0));
        assert_eq!(Histogram::default().percentile(50), None);
    }

    #[test]
    fn a_bucket_that_cannot_hold_its_values_is_refused() {
        for json in [
            "[[0, 1, 5.0, 5.0]]",
            "[[0, 0, 0.0, 0.0]]",
            "[[0, 1, 1.0, 0.0]]",
        ] {
            assert!(serde_json::from_str::<Histogram>(json).is_err(), "{json}");
        }
        let key = Histogram::key(5.0);
        let ok = format!("[[{key}, 2, 5.0, 5.0]]");
        assert_eq!(serde_json::from_str::<Histogram>(&ok).unwrap().count(), 2);
    }

    #[test]
    fn an_exact_sum_survives_cancellation_in_any_order() {
        let values = [1e300, 1.0, -1e300, 1e-300, 3.0, -1e-300, 0.1];
        let mut orders: Vec<Vec<f64>> = vec![values.to_vec()];
        let mut reversed = values.to_vec();
        reversed.reverse();
        orders.push(reversed);
        for rotate in 1..values.len() {
            let mut rotated = values.to_vec();
            rotated.rotate_left(rotate);
            orders.push(rotated);
        }
        for order in orders {
            let mut sum = ExactSum::default();
            for value in &order {
                sum.add(*value);
            }
            // 1 + 3 + 0.1, the big and tiny ones cancelling exactly.
            assert_eq!(sum.value(), 4.1, "{order:?}");
        }
        // A naive sum loses the 1.0 entirely.
        assert_eq!(1e300 + 1.0 - 1e300, 0.0);
        // Correct rounding of a half-way case: 1 + 2^-53 + 2^-106 rounds up.
        let mut sum = ExactSum::default();
        for value in [1.0, 2f64.powi(-53), 2f64.powi(-106)] {
            sum.add(value);
        }
        assert_eq!(sum.value(), 1.0 + f64::EPSILON);
        assert_eq!(
            sum.components(),
            vec![1.0 + f64::EPSILON, -(2f64.powi(-53)) + 2f64.powi(-106)]
        );
        assert_eq!(ExactSum::default().value(), 0.0);
    }
}
