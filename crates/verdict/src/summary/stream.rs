//! Summarizing as seeds finish: [`SummaryState`] is everything a summary is made from, kept
//! as outcomes are counted one at a time (by [`SummaryBuilder`], in seed order), serializable
//! and mergeable, so neither a sweep nor a check report grows with the passing seeds.
//!
//! What it keeps: counts; the seeds counted, as arithmetic progressions (one for a whole run
//! or a `--shard`); the seeds that violated, panicked or ran away (failing seeds) and their
//! trace hashes; the coverage counts and first hits; per metric key a [`FieldAcc`] (totals,
//! maxima, exact float sums, histograms of samples); and the combined trace digest. The result
//! is byte-identical to [`summarize`](super::summarize) over the same outcomes (which is built
//! on it), and merging the states of disjoint sets of seeds gives exactly the state of their
//! union, so `merge` of shards stays exact.

use std::collections::BTreeMap;

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::{Scenario, SeedRange};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::numeric::{ExactSum, Histogram};
use super::state_space::StateSpaceAcc;
use super::{
    evaluate_stats, expectation_text, float_value, int_value, object, trace_term, Stats, Summary,
};
use crate::summary::ExpectationVerdict;

/// Seeds `first, first + step, …` (`count` of them): how a state records the seeds it counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedStride {
    /// The first seed.
    pub first: u64,
    /// The distance between consecutive seeds (at least 1).
    pub step: u64,
    /// How many seeds (at least 1).
    pub count: u64,
}

impl SeedStride {
    /// The last seed, `None` if it would not fit in a u64 (or `step`/`count` are 0).
    pub fn last(&self) -> Option<u64> {
        if self.step == 0 || self.count == 0 {
            return None;
        }
        self.step
            .checked_mul(self.count - 1)
            .and_then(|span| self.first.checked_add(span))
    }

    /// Whether `seed` is one of these seeds.
    pub fn contains(&self, seed: u64) -> bool {
        seed >= self.first
            && self.step > 0
            && (seed - self.first).is_multiple_of(self.step)
            && (seed - self.first) / self.step < self.count
    }

    /// The seeds of this stride within `range`, ascending (computed, not scanned).
    pub fn within(&self, range: SeedRange) -> impl Iterator<Item = u64> {
        let step = self.step.max(1);
        let skip = range.start.saturating_sub(self.first).div_ceil(step);
        let first = self.first;
        let count = self.count;
        (skip..count)
            .map(move |index| first.saturating_add(index.saturating_mul(step)))
            .take_while(move |&seed| seed < range.end)
    }
}

/// Everything a [`Summary`] is made from, counted one outcome at a time (see the module doc).
/// `fencesim check --json` writes it per scenario (`state`) and `merge` combines the parts'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryState {
    /// The seeds counted, in the order they came.
    seeds: Vec<SeedStride>,
    /// Counts, seed lists, coverage.
    stats: Stats,
    /// The wrapping sum of every seed's [`trace_term`], as 16 hex digits.
    trace_digest: String,
    /// Failing seed → its trace hash (a repeated seed keeps the later hash).
    failing_trace_hashes: BTreeMap<u64, String>,
    /// The seeds' metrics objects, aggregated.
    metrics: FieldAcc,
    /// The abstract states and transitions the seeds reached (absent from reports written
    /// before it existed: read as none).
    #[serde(default)]
    state_space: StateSpaceAcc,
}

impl Default for SummaryState {
    fn default() -> Self {
        SummaryState::new()
    }
}

impl SummaryState {
    /// The state of no outcome.
    pub fn new() -> SummaryState {
        SummaryState {
            seeds: Vec::new(),
            stats: Stats::new(),
            trace_digest: format!("{:016x}", 0),
            failing_trace_hashes: BTreeMap::new(),
            metrics: FieldAcc::default(),
            state_space: StateSpaceAcc::default(),
        }
    }

    fn digest(&self) -> u64 {
        u64::from_str_radix(&self.trace_digest, 16).unwrap_or(0)
    }

    /// Counts one outcome (see [`SummaryBuilder::push`] for the order).
    fn push(&mut self, outcome: &SeedOutcome) {
        self.stats.push(outcome);
        self.state_space
            .push(outcome.seed, &outcome.checked.visited);
        // Metrics are plain data; failing to serialize them would be a bug in the checker.
        let metrics = serde_json::to_value(&outcome.checked.metrics).expect("metrics serialize");
        if let Value::Object(map) = metrics {
            self.metrics.push_object(&map);
        }
        let digest = self
            .digest()
            .wrapping_add(trace_term(outcome.seed, &outcome.trace_hash));
        self.trace_digest = format!("{digest:016x}");
        if self.stats.failing.last() == Some(&outcome.seed) {
            self.failing_trace_hashes
                .insert(outcome.seed, outcome.trace_hash.clone());
        }
        let seed = outcome.seed;
        match self.seeds.last_mut() {
            Some(stride) if stride.count == 1 && seed > stride.first => {
                stride.step = seed - stride.first;
                stride.count = 2;
            }
            Some(stride)
                if stride.count >= 2
                    && stride.last().and_then(|last| last.checked_add(stride.step))
                        == Some(seed) =>
            {
                stride.count += 1;
            }
            _ => self.seeds.push(SeedStride {
                first: seed,
                step: 1,
                count: 1,
            }),
        }
    }

    /// Adds everything `other` counted. The two must have counted different seeds (`merge`
    /// checks that first): the result is then exactly the state of both sets of seeds,
    /// whatever the order of merging, except for [`SummaryState::seed_strides`], which lists
    /// both sets' strides until [`SummaryState::set_seeds`] replaces them.
    pub fn merge(&mut self, other: &SummaryState) {
        self.seeds.extend_from_slice(&other.seeds);
        self.stats.merge(&other.stats);
        self.trace_digest = format!("{:016x}", self.digest().wrapping_add(other.digest()));
        self.failing_trace_hashes.extend(
            other
                .failing_trace_hashes
                .iter()
                .map(|(seed, hash)| (*seed, hash.clone())),
        );
        self.metrics.merge(&other.metrics);
        self.state_space.merge(&other.state_space);
    }

    /// The abstract states and transitions counted (every state's text with its reach):
    /// what catalogue-wide coverage is computed from.
    pub fn state_space(&self) -> &StateSpaceAcc {
        &self.state_space
    }

    /// The seeds counted, as strides in the order they came.
    pub fn seed_strides(&self) -> &[SeedStride] {
        &self.seeds
    }

    /// Records the seeds counted as exactly `range` (one stride), as a whole run over it
    /// records them; for `merge`, once it has checked that the parts hold each seed of `range`
    /// exactly once.
    pub fn set_seeds(&mut self, range: SeedRange) {
        self.seeds = if range.end > range.start {
            vec![SeedStride {
                first: range.start,
                step: 1,
                count: range.end - range.start,
            }]
        } else {
            Vec::new()
        };
    }

    /// Outcomes counted.
    pub fn runs(&self) -> u64 {
        self.stats.runs
    }

    /// The seeds violating `invariant`, ascending.
    pub fn violating(&self, invariant: Invariant) -> &[u64] {
        self.stats
            .violating
            .get(&invariant)
            .map_or(&[], Vec::as_slice)
    }

    /// The seeds stopped at their event budget, ascending.
    pub fn runaway(&self) -> &[u64] {
        &self.stats.runaway
    }

    /// The seeds where a node panicked, with the panic message, ascending.
    pub fn panicked(&self) -> &[(u64, String)] {
        &self.stats.panicked
    }

    /// Checks that a state read from a report is one a run could have written: strides with a
    /// positive step and count, `runs` their total, and every seed it names (failing,
    /// violating, panicked, runaway, first hits, failing trace hashes) one of them. The error
    /// says what was expected.
    pub fn check_consistent(&self) -> Result<(), String> {
        let mut total: u64 = 0;
        for stride in &self.seeds {
            if stride.last().is_none() {
                return Err(format!(
                    "state.seeds: expected strides with a positive step and count whose last                      seed fits in 64 bits, got {{first: {}, step: {}, count: {}}}",
                    stride.first, stride.step, stride.count
                ));
            }
            total = total.saturating_add(stride.count);
        }
        if total != self.stats.runs {
            return Err(format!(
                "state: expected runs equal to the number of seeds counted ({total}), got {}",
                self.stats.runs
            ));
        }
        let named = self
            .stats
            .named_seeds()
            .chain(self.failing_trace_hashes.keys().copied())
            .chain(self.state_space.named_seeds());
        for seed in named {
            if !self.seeds.iter().any(|stride| stride.contains(seed)) {
                return Err(format!(
                    "state: names seed {seed}, expected only seeds it counted"
                ));
            }
        }
        if u64::from_str_radix(&self.trace_digest, 16).is_err() || self.trace_digest.len() != 16 {
            return Err(format!(
                "state.trace_digest: expected 16 hex digits, got {:?}",
                self.trace_digest
            ));
        }
        self.stats.check_consistent()?;
        self.state_space.check_consistent(self.stats.runs)?;
        self.state_space.check_names()?;
        Ok(())
    }

    /// The summary of `scenario` over `seeds` from everything counted.
    pub fn finish(&self, scenario: &Scenario, seeds: SeedRange) -> Summary {
        let mut stats = Stats::new();
        stats.merge(&self.stats);
        let verdict = evaluate_stats(&scenario.expect, &stats);
        let mut violations = BTreeMap::new();
        let mut first_violation_seed = BTreeMap::new();
        for invariant in Invariant::ALL {
            let seeds = &stats.violating[&invariant];
            violations.insert(invariant, seeds.len() as u64);
            first_violation_seed.insert(invariant, seeds.first().copied());
        }
        Summary {
            scenario: scenario.name.clone(),
            scenario_hash: scenario.hash(),
            seeds: seeds.into(),
            runs: stats.runs,
            failing_seeds: stats.failing.clone(),
            panicked_seeds: stats.panicked.iter().map(|(seed, _)| *seed).collect(),
            runaway_seeds: stats.runaway.clone(),
            violations,
            first_violation_seed,
            expectation: expectation_text(&scenario.expect.outcome),
            expectation_met: verdict.verdict.is_met(),
            expectation_detail: verdict.detail,
            coverage: stats.coverage.clone(),
            coverage_required: scenario.expect.coverage.clone(),
            vacuous: verdict.verdict == ExpectationVerdict::Vacuous,
            metrics: if self.metrics.objects == 0 {
                Value::Object(Map::new())
            } else {
                Value::Object(self.metrics.object_fields())
            },
            trace_digest: self.trace_digest.clone(),
            failing_trace_hashes: self
                .failing_trace_hashes
                .iter()
                .map(|(seed, hash)| (seed.to_string(), hash.clone()))
                .collect(),
            state_space: self.state_space.finish(seeds, stats.runs),
        }
    }
}

/// The summary of outcomes pushed one at a time, in ascending seed order (ties by trace
/// hash, as [`summarize`](super::summarize) sorts them): a [`SummaryState`] fed in order.
pub struct SummaryBuilder {
    state: SummaryState,
    last: Option<(u64, String)>,
}

impl Default for SummaryBuilder {
    fn default() -> Self {
        SummaryBuilder::new()
    }
}

impl SummaryBuilder {
    /// A builder that has seen no outcome.
    pub fn new() -> SummaryBuilder {
        SummaryBuilder {
            state: SummaryState::new(),
            last: None,
        }
    }

    /// Counts one outcome. Outcomes must come in ascending `(seed, trace_hash)` order (the
    /// caller reorders a parallel sweep's outcomes); out of order, the summary would count a
    /// repeated seed twice.
    pub fn push(&mut self, outcome: &SeedOutcome) {
        debug_assert!(
            self.last
                .as_ref()
                .is_none_or(|(seed, hash)| (*seed, hash.as_str())
                    <= (outcome.seed, outcome.trace_hash.as_str())),
            "outcomes must be pushed in seed order"
        );
        self.state.push(outcome);
        self.last = Some((outcome.seed, outcome.trace_hash.clone()));
    }

    /// Outcomes pushed so far.
    pub fn runs(&self) -> u64 {
        self.state.runs()
    }

    /// What has been counted so far.
    pub fn state(&self) -> &SummaryState {
        &self.state
    }

    /// What has been counted, to finish later or merge.
    pub fn into_state(self) -> SummaryState {
        self.state
    }

    /// The summary of `scenario` over `seeds` and every outcome pushed.
    pub fn finish(self, scenario: &Scenario, seeds: SeedRange) -> Summary {
        self.state.finish(scenario, seeds)
    }
}

/// One metric key's running aggregate over the seeds that have it (see
/// [`aggregate_metrics`](super::aggregate_metrics) for what each shape becomes). Merging two
/// is exact: counts and totals add, maxima take the larger, float sums are exact
/// ([`ExactSum`]) and samples go to a [`Histogram`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldAcc {
    /// Non-null values seen.
    #[serde(default, skip_serializing_if = "is_zero")]
    count: u64,
    /// Integers seen, their sum and their maximum.
    #[serde(default, skip_serializing_if = "is_zero")]
    ints: u64,
    #[serde(default, skip_serializing_if = "is_zero_i128")]
    int_total: i128,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    int_max: Option<i128>,
    /// Numbers seen (integers included), their exact sum and their maximum.
    #[serde(default, skip_serializing_if = "is_zero")]
    numbers: u64,
    #[serde(default, skip_serializing_if = "is_empty_sum")]
    float_sum: ExactSum,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    float_max: Option<f64>,
    /// Arrays whose elements are all numbers, their elements' histogram, and how many of
    /// those elements were not integers (none: percentiles are written as integers).
    #[serde(default, skip_serializing_if = "is_zero")]
    arrays: u64,
    #[serde(default, skip_serializing_if = "is_empty_histogram")]
    elements: Histogram,
    #[serde(default, skip_serializing_if = "is_zero")]
    non_integers: u64,
    /// Objects seen, and their keys' aggregates.
    #[serde(default, skip_serializing_if = "is_zero")]
    objects: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    fields: BTreeMap<String, FieldAcc>,
    /// Booleans seen, and how many were true.
    #[serde(default, skip_serializing_if = "is_zero")]
    bools: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    trues: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_i128(n: &i128) -> bool {
    *n == 0
}

fn is_empty_sum(sum: &ExactSum) -> bool {
    sum.components().is_empty()
}

fn is_empty_histogram(histogram: &Histogram) -> bool {
    histogram.count() == 0
}

/// -0.0 as 0.0, so a state does not depend on which of two equal zeros came first.
fn no_negative_zero(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        x
    }
}

impl FieldAcc {
    /// Counts one seed's metrics object.
    pub fn push_object(&mut self, map: &Map<String, Value>) {
        self.objects += 1;
        for (key, value) in map {
            // A key is listed even when every seed has it null.
            let field = self.fields.entry(key.clone()).or_default();
            if !value.is_null() {
                field.push(value);
            }
        }
    }

    fn push(&mut self, value: &Value) {
        self.count += 1;
        match value {
            Value::Number(number) => {
                if let Some(n) = integer(number) {
                    self.ints += 1;
                    self.int_total += n;
                    self.int_max = Some(self.int_max.map_or(n, |max| max.max(n)));
                }
                let x = no_negative_zero(number.as_f64().unwrap_or(0.0));
                self.numbers += 1;
                self.float_sum.add(x);
                self.float_max = Some(self.float_max.map_or(x, |max| max.max(x)));
            }
            Value::Array(items) if items.iter().all(Value::is_number) => {
                self.arrays += 1;
                for item in items {
                    if let Value::Number(number) = item {
                        if integer(number).is_none() {
                            self.non_integers += 1;
                        }
                        self.elements.push(number.as_f64().unwrap_or(0.0));
                    }
                }
            }
            Value::Object(map) => self.push_object(map),
            Value::Bool(b) => {
                self.bools += 1;
                self.trues += u64::from(*b);
            }
            _ => {}
        }
    }

    /// Adds everything `other` has seen: the aggregate of both sets of seeds.
    pub fn merge(&mut self, other: &FieldAcc) {
        self.count += other.count;
        self.ints += other.ints;
        self.int_total += other.int_total;
        self.int_max = max_of(self.int_max, other.int_max, i128::max);
        self.numbers += other.numbers;
        self.float_sum.merge(&other.float_sum);
        self.float_max = max_of(self.float_max, other.float_max, f64::max);
        self.arrays += other.arrays;
        self.elements.merge(&other.elements);
        self.non_integers += other.non_integers;
        self.objects += other.objects;
        for (key, field) in &other.fields {
            self.fields.entry(key.clone()).or_default().merge(field);
        }
        self.bools += other.bools;
        self.trues += other.trues;
    }

    /// Each key's aggregate, as the summary's `metrics` object.
    pub fn object_fields(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .map(|(key, field)| (key.clone(), field.aggregate()))
            .collect()
    }

    fn aggregate(&self) -> Value {
        if self.count == 0 {
            return Value::Null;
        }
        if self.ints == self.count {
            return object([
                ("total", int_value(self.int_total)),
                // Always set when `ints` > 0; an edited report without it reads as null.
                ("max_per_seed", self.int_max.map_or(Value::Null, int_value)),
            ]);
        }
        if self.numbers == self.count {
            let mean = self.float_sum.value() / self.numbers as f64;
            let max = self.float_max.unwrap_or(f64::NEG_INFINITY);
            return object([("mean", float_value(mean)), ("max", float_value(max))]);
        }
        if self.arrays == self.count {
            let histogram = &self.elements;
            let integers = self.non_integers == 0;
            let rank = |percent: u64| -> Value {
                if integers {
                    histogram
                        .percentile_int(percent)
                        .map_or(Value::Null, int_value)
                } else {
                    histogram
                        .percentile(percent)
                        .map_or(Value::Null, float_value)
                }
            };
            let max = histogram.max().map_or(Value::Null, |max| {
                if integers {
                    int_value(max as i128)
                } else {
                    float_value(max)
                }
            });
            return object([
                ("count", Value::from(histogram.count())),
                ("p50", rank(50)),
                ("p99", rank(99)),
                ("max", max),
            ]);
        }
        if self.objects == self.count {
            return Value::Object(self.object_fields());
        }
        if self.bools == self.count {
            return object([("seeds_true", Value::from(self.trues))]);
        }
        Value::Null
    }
}

fn integer(number: &Number) -> Option<i128> {
    number
        .as_u64()
        .map(i128::from)
        .or_else(|| number.as_i64().map(i128::from))
}

fn max_of<T: Copy>(a: Option<T>, b: Option<T>, max: impl Fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(max(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::summary::aggregate_metrics;

    fn streamed(per_seed: &[Value]) -> FieldAcc {
        let mut acc = FieldAcc::default();
        for value in per_seed {
            acc.push_object(value.as_object().expect("an object"));
        }
        acc
    }

    #[test]
    fn each_shape_aggregates_as_documented_and_merges_exactly() {
        let per_seed = vec![
            json!({"n": 3, "f": 1.5, "a": [3, 1.25], "o": {"x": 1, "y": [2]}, "b": true,
                   "s": "text", "mixed": 1, "null": null, "maybe": null, "neg": -4}),
            json!({"n": 7, "f": 2, "a": [], "o": {"x": 2}, "b": false, "s": "other",
                   "mixed": [1], "null": null, "maybe": 0.25, "neg": 2}),
            json!({"n": 0, "f": 0.1, "a": [10, 0.5, 7], "o": {"y": [1, 5]}, "b": true,
                   "only_here": 1e300, "maybe": 0.5, "neg": -9}),
        ];
        let expected = json!({
            "n": {"total": 10, "max_per_seed": 7},
            "f": {"mean": 1.2, "max": 2.0},
            "a": {"count": 5, "p50": 3.0, "p99": 10.0, "max": 10.0},
            "o": {"x": {"total": 3, "max_per_seed": 2},
                  "y": {"count": 3, "p50": 2, "p99": 5, "max": 5}},
            "b": {"seeds_true": 2},
            "s": null,
            "mixed": null,
            "null": null,
            "maybe": {"mean": 0.375, "max": 0.5},
            "neg": {"total": -11, "max_per_seed": 2},
            "only_here": {"mean": 1e300, "max": 1e300},
        });
        assert_eq!(Value::Object(streamed(&per_seed).object_fields()), expected);
        assert_eq!(aggregate_metrics(per_seed.clone()), expected);
        assert_eq!(aggregate_metrics(Vec::new()), json!({}));
        // Any split, merged in either order, is the whole; and it survives JSON.
        let whole = streamed(&per_seed);
        for split in 0..=per_seed.len() {
            let (left, right) = (streamed(&per_seed[..split]), streamed(&per_seed[split..]));
            let mut merged = left.clone();
            merged.merge(&right);
            assert_eq!(merged, whole, "split at {split}");
            let mut merged = right.clone();
            merged.merge(&left);
            assert_eq!(merged, whole, "split at {split}, reversed");
            let json = serde_json::to_string(&merged).unwrap();
            assert_eq!(json, serde_json::to_string(&whole).unwrap());
            let back: FieldAcc = serde_json::from_str(&json).unwrap();
            assert_eq!(back, whole);
        }
    }

    #[test]
    fn a_mean_does_not_depend_on_the_order_of_the_seeds() {
        let values = [1e300, 1.0, -1e300, 1e-300, 3.0, -1e-300, 0.1];
        let mut order: Vec<Value> = values.iter().map(|x| json!({ "x": x })).collect();
        let reference = aggregate_metrics(order.clone());
        assert_eq!(reference["x"]["mean"], json!(0.586));
        for _ in 0..values.len() {
            order.rotate_left(1);
            assert_eq!(aggregate_metrics(order.clone()), reference);
            order.reverse();
            assert_eq!(aggregate_metrics(order.clone()), reference);
        }
    }

    #[test]
    fn failing_hashes_come_back_as_written_and_every_hash_is_in_the_digest() {
        let scenario = fencesim_testkit::scenario(fencesim_testkit::Spec::default());
        let mut outcomes: Vec<SeedOutcome> = (0..4)
            .map(|seed| fencesim_testkit::outcome(seed, &[], None))
            .collect();
        outcomes[1].trace_hash = "hand-made".into();
        outcomes[1].panic = Some("boom".into());
        outcomes[3].trace_hash = "ABCDEF0123456789".into();
        outcomes[3].runaway = true;
        let seeds = SeedRange { start: 0, end: 4 };
        let summary = crate::summary::summarize(&scenario, seeds, &outcomes);
        let failing: Vec<(String, String)> =
            summary.failing_trace_hashes.clone().into_iter().collect();
        assert_eq!(
            failing,
            [
                ("1".to_string(), "hand-made".to_string()),
                ("3".to_string(), "ABCDEF0123456789".to_string())
            ]
        );
        let sum = outcomes.iter().fold(0u64, |sum, outcome| {
            sum.wrapping_add(trace_term(outcome.seed, &outcome.trace_hash))
        });
        assert_eq!(summary.trace_digest, format!("{sum:016x}"));
    }

    #[test]
    fn the_digest_is_independent_of_order_and_changes_with_any_one_hash() {
        let scenario = fencesim_testkit::scenario(fencesim_testkit::Spec::default());
        let seeds = SeedRange { start: 0, end: 20 };
        let outcomes: Vec<SeedOutcome> = (0..20)
            .map(|seed| fencesim_testkit::outcome(seed, &[], None))
            .collect();
        let digest = |outcomes: &[SeedOutcome]| {
            crate::summary::summarize(&scenario, seeds, outcomes).trace_digest
        };
        let reference = digest(&outcomes);
        let mut shuffled = outcomes.clone();
        shuffled.reverse();
        shuffled.rotate_left(7);
        assert_eq!(digest(&shuffled), reference);
        for index in 0..outcomes.len() {
            for flip in [1u64, 1 << 63, 0xffff] {
                let mut changed = outcomes.clone();
                let old = u64::from_str_radix(&changed[index].trace_hash, 16).unwrap();
                changed[index].trace_hash = format!("{:016x}", old ^ flip);
                assert_ne!(digest(&changed), reference, "seed {index}, flip {flip:x}");
            }
        }
        // The documented formula, recomputed by hand for one seed.
        let one =
            crate::summary::summarize(&scenario, SeedRange { start: 7, end: 8 }, &outcomes[7..8]);
        let mix = |mut z: u64| {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            z ^ (z >> 31)
        };
        let h = u64::from_str_radix(&outcomes[7].trace_hash, 16).unwrap();
        assert_eq!(
            one.trace_digest,
            format!(
                "{:016x}",
                mix(mix(7u64.wrapping_add(0x9e3779b97f4a7c15)) ^ h)
            )
        );
    }
}
