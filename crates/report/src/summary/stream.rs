//! Summarizing as seeds finish: [`SummaryBuilder`] takes outcomes one at a time, in seed
//! order, and keeps only what the summary needs, so a sweep's memory does not grow with the
//! per-seed metrics it has seen.
//!
//! What it keeps: counts; the seeds that violated, panicked or ran away (failing seeds, in
//! full); the coverage counts and first hits; per metric key a running total, maximum, float
//! sum and shape tally; the elements of array metrics (latency samples: exact percentiles
//! need every sample); and each seed's trace hash, which the summary lists. The result is
//! byte-identical to [`summarize`](super::summarize) over the same outcomes (which is built
//! on it), so `merge` of shards stays exact.

use std::collections::BTreeMap;

use fencesim_check::SeedOutcome;
use fencesim_scenario::{Scenario, SeedRange};
use serde_json::{Map, Number, Value};

use super::{
    evaluate_stats, expectation_text, float_value, int_value, number_value, object, trace_term,
    Stats, Summary,
};
use crate::summary::ExpectationVerdict;

/// The summary of outcomes pushed one at a time, in ascending seed order (ties by trace
/// hash, as [`summarize`](super::summarize) sorts them).
pub struct SummaryBuilder {
    stats: Stats,
    metrics: FieldAcc,
    /// The wrapping sum of every seed's [`trace_term`].
    trace_digest: u64,
    /// Failing seed → its trace hash (a repeated seed keeps the later hash).
    failing_trace_hashes: BTreeMap<u64, String>,
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
            stats: Stats::new(),
            metrics: FieldAcc::default(),
            trace_digest: 0,
            failing_trace_hashes: BTreeMap::new(),
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
        self.stats.push(outcome);
        // Metrics are plain data; failing to serialize them would be a bug in the checker.
        let metrics = serde_json::to_value(&outcome.checked.metrics).expect("metrics serialize");
        if let Value::Object(map) = metrics {
            self.metrics.push_object(&map);
        }
        self.trace_digest = self
            .trace_digest
            .wrapping_add(trace_term(outcome.seed, &outcome.trace_hash));
        if self.stats.failing.last() == Some(&outcome.seed) {
            self.failing_trace_hashes
                .insert(outcome.seed, outcome.trace_hash.clone());
        }
        self.last = Some((outcome.seed, outcome.trace_hash.clone()));
    }

    /// Outcomes pushed so far.
    pub fn runs(&self) -> u64 {
        self.stats.runs as u64
    }

    /// The summary of `scenario` over `seeds` and every outcome pushed.
    pub fn finish(self, scenario: &Scenario, seeds: SeedRange) -> Summary {
        let stats = self.stats;
        let verdict = evaluate_stats(&scenario.expect, &stats);
        let mut violations = BTreeMap::new();
        let mut first_violation_seed = BTreeMap::new();
        for invariant in fencesim_model::Invariant::ALL {
            let seeds = &stats.violating[&invariant];
            violations.insert(invariant, seeds.len() as u64);
            first_violation_seed.insert(invariant, seeds.first().copied());
        }
        Summary {
            scenario: scenario.name.clone(),
            scenario_hash: scenario.hash(),
            seeds: seeds.into(),
            runs: stats.runs as u64,
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
            trace_digest: format!("{:016x}", self.trace_digest),
            failing_trace_hashes: self
                .failing_trace_hashes
                .iter()
                .map(|(seed, hash)| (seed.to_string(), hash.clone()))
                .collect(),
        }
    }
}

/// One metric key's running aggregate over the seeds that have it (see
/// [`aggregate_metrics`](super::aggregate_metrics) for what each shape becomes).
#[derive(Default)]
struct FieldAcc {
    /// Non-null values seen.
    count: u64,
    ints: u64,
    int_total: i128,
    int_max: Option<i128>,
    numbers: u64,
    float_sum: Option<f64>,
    float_max: Option<f64>,
    /// Arrays whose elements are all numbers, and their elements pooled in order.
    arrays: u64,
    elements: Vec<Number>,
    objects: u64,
    fields: BTreeMap<String, FieldAcc>,
    bools: u64,
    trues: u64,
}

impl FieldAcc {
    fn push_object(&mut self, map: &Map<String, Value>) {
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
                if value.is_i64() || value.is_u64() {
                    let n = number
                        .as_u64()
                        .map(i128::from)
                        .or_else(|| number.as_i64().map(i128::from))
                        .expect("an integer");
                    self.ints += 1;
                    self.int_total += n;
                    self.int_max = Some(self.int_max.map_or(n, |max| max.max(n)));
                }
                let x = number.as_f64().unwrap_or(0.0);
                self.numbers += 1;
                self.float_sum = Some(self.float_sum.map_or(x, |sum| sum + x));
                self.float_max = Some(self.float_max.map_or(x, |max| max.max(x)));
            }
            Value::Array(items) if items.iter().all(Value::is_number) => {
                self.arrays += 1;
                self.elements
                    .extend(items.iter().filter_map(|item| match item {
                        Value::Number(n) => Some(n.clone()),
                        _ => None,
                    }));
            }
            Value::Object(map) => self.push_object(map),
            Value::Bool(b) => {
                self.bools += 1;
                self.trues += u64::from(*b);
            }
            _ => {}
        }
    }

    fn object_fields(&self) -> Map<String, Value> {
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
                ("max_per_seed", int_value(self.int_max.expect("non-empty"))),
            ]);
        }
        if self.numbers == self.count {
            let mean = self.float_sum.unwrap_or(0.0) / self.numbers as f64;
            let max = self.float_max.unwrap_or(f64::NEG_INFINITY);
            return object([("mean", float_value(mean)), ("max", float_value(max))]);
        }
        if self.arrays == self.count {
            let mut all: Vec<Value> = self.elements.iter().cloned().map(Value::Number).collect();
            all.sort_by(|a, b| {
                let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                a.total_cmp(&b)
            });
            let count = all.len() as u64;
            let rank = |percent: u64| -> Value {
                if all.is_empty() {
                    return Value::Null;
                }
                let rank = (percent * count).div_ceil(100).max(1);
                number_value(&all[(rank - 1) as usize])
            };
            return object([
                ("count", Value::from(count)),
                ("p50", rank(50)),
                ("p99", rank(99)),
                ("max", all.last().map_or(Value::Null, number_value)),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::summary::aggregate_metrics;

    fn streamed(per_seed: &[Value]) -> Value {
        let mut acc = FieldAcc::default();
        for value in per_seed {
            acc.push_object(value.as_object().expect("an object"));
        }
        Value::Object(acc.object_fields())
    }

    #[test]
    fn streaming_aggregates_like_aggregate_metrics() {
        let per_seed = vec![
            json!({"n": 3, "f": 1.5, "a": [3, 1.25], "o": {"x": 1, "y": [2]}, "b": true,
                   "s": "text", "mixed": 1, "null": null, "maybe": null, "neg": -4}),
            json!({"n": 7, "f": 2, "a": [], "o": {"x": 2}, "b": false, "s": "other",
                   "mixed": [1], "null": null, "maybe": 0.25, "neg": 2}),
            json!({"n": 0, "f": 0.1, "a": [10, 0.5, 7], "o": {"y": [1, 5]}, "b": true,
                   "only_here": 1e300, "maybe": 0.5, "neg": -9}),
        ];
        assert_eq!(streamed(&per_seed), aggregate_metrics(per_seed.clone()));
        assert_eq!(streamed(&[]), aggregate_metrics(Vec::new()));
        // And one seed at a time, from one to all.
        for n in 1..=per_seed.len() {
            assert_eq!(
                streamed(&per_seed[..n]),
                aggregate_metrics(per_seed[..n].to_vec())
            );
        }
    }

    #[test]
    fn failing_hashes_come_back_as_written_and_every_hash_is_in_the_digest() {
        let scenario = crate::testing::scenario(crate::testing::Spec::default());
        let mut outcomes: Vec<SeedOutcome> = (0..4)
            .map(|seed| crate::testing::outcome(seed, &[], None))
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
        let scenario = crate::testing::scenario(crate::testing::Spec::default());
        let seeds = SeedRange { start: 0, end: 20 };
        let outcomes: Vec<SeedOutcome> = (0..20)
            .map(|seed| crate::testing::outcome(seed, &[], None))
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
