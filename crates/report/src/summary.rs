//! The machine-readable verdict on one scenario over a seed range: `summary.json`.
//!
//! Everything here is a pure function of its inputs and the output is byte-deterministic
//! (sorted maps, sorted seeds, rounded floats, no timestamps), so two summaries of the same
//! scenario and seeds can be compared byte for byte, including across `--shard`s.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::{Outcome, Scenario, SeedRange};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// The seed range as it appears in JSON: `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedsJson {
    pub start: u64,
    pub end: u64,
}

impl From<SeedRange> for SeedsJson {
    fn from(range: SeedRange) -> SeedsJson {
        SeedsJson {
            start: range.start,
            end: range.end,
        }
    }
}

/// One scenario's result over its seeds. Field order is the JSON field order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// `Scenario::hash` of the resolved scenario.
    pub scenario_hash: String,
    pub seeds: SeedsJson,
    /// Number of outcomes summarized.
    pub runs: u64,
    /// Seeds with any violation or a panic, ascending.
    pub failing_seeds: Vec<u64>,
    /// Seeds where a simulated node panicked, ascending.
    pub panicked_seeds: Vec<u64>,
    /// `"I1"`..`"I5"` → number of seeds violating it (every key present).
    pub violations: BTreeMap<String, u64>,
    /// `"I1"`..`"I5"` → smallest seed violating it, or null.
    pub first_violation_seed: BTreeMap<String, Option<u64>>,
    /// `"safe"` or `"violates I3, I4"`.
    pub expectation: String,
    pub expectation_met: bool,
    /// One sentence: why the expectation was met or not, naming seeds.
    pub expectation_detail: String,
    /// Metrics aggregated over seeds (see [`aggregate_metrics`]).
    pub metrics: Value,
    /// Seed (decimal) → trace hash.
    pub trace_hashes: BTreeMap<String, String>,
}

/// Summarizes `outcomes` (in any order) of `scenario` over `seeds`.
pub fn summarize(scenario: &Scenario, seeds: SeedRange, outcomes: &[SeedOutcome]) -> Summary {
    let sorted = sorted_by_seed(outcomes);
    let stats = Stats::of(&sorted);
    let (expectation_met, expectation_detail) = evaluate_stats(&scenario.expect.outcome, &stats);

    let mut violations = BTreeMap::new();
    let mut first_violation_seed = BTreeMap::new();
    for invariant in Invariant::ALL {
        let seeds = &stats.violating[&invariant];
        violations.insert(invariant.to_string(), seeds.len() as u64);
        first_violation_seed.insert(invariant.to_string(), seeds.first().copied());
    }

    let metrics = aggregate_metrics(sorted.iter().map(|outcome| {
        // Metrics are plain data; failing to serialize them would be a bug in the checker.
        serde_json::to_value(&outcome.checked.metrics).expect("metrics serialize")
    }));

    Summary {
        scenario: scenario.name.clone(),
        scenario_hash: scenario.hash(),
        seeds: seeds.into(),
        runs: sorted.len() as u64,
        failing_seeds: stats.failing.clone(),
        panicked_seeds: stats.panicked.iter().map(|(seed, _)| *seed).collect(),
        violations,
        first_violation_seed,
        expectation: expectation_text(&scenario.expect.outcome),
        expectation_met,
        expectation_detail,
        metrics,
        trace_hashes: sorted
            .iter()
            .map(|outcome| (outcome.seed.to_string(), outcome.trace_hash.clone()))
            .collect(),
    }
}

/// Pretty JSON with a trailing newline; the same summary always gives the same bytes.
pub fn to_json(summary: &Summary) -> String {
    let mut out = serde_json::to_string_pretty(summary).expect("summary serializes");
    out.push('\n');
    out
}

/// How an expectation is written in reports: `"safe"` or `"violates I3, I4"`.
pub fn expectation_text(expect: &Outcome) -> String {
    match expect {
        Outcome::Safe => "safe".to_string(),
        Outcome::Violates(list) => format!("violates {}", join_invariants(&normalized(list))),
    }
}

/// Whether `outcomes` meet `expect`, and one sentence saying why.
///
/// `Safe` is met iff no seed violated anything and no seed panicked. `Violates(list)` is met
/// iff every listed invariant is violated in at least one seed, no unlisted invariant is
/// violated in any seed, and no seed panicked: a panic is a failure whatever was expected.
pub fn evaluate(expect: &Outcome, outcomes: &[SeedOutcome]) -> (bool, String) {
    evaluate_stats(expect, &Stats::of(&sorted_by_seed(outcomes)))
}

fn sorted_by_seed(outcomes: &[SeedOutcome]) -> Vec<&SeedOutcome> {
    let mut sorted: Vec<&SeedOutcome> = outcomes.iter().collect();
    // The hash breaks ties so even duplicated seeds (a merge mistake) order deterministically.
    sorted.sort_by(|a, b| (a.seed, &a.trace_hash).cmp(&(b.seed, &b.trace_hash)));
    sorted
}

fn normalized(list: &[Invariant]) -> Vec<Invariant> {
    let set: BTreeSet<Invariant> = list.iter().copied().collect();
    set.into_iter().collect()
}

fn join_invariants(list: &[Invariant]) -> String {
    if list.is_empty() {
        return "nothing".to_string();
    }
    list.iter()
        .map(Invariant::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Per-seed facts the verdict is computed from, over outcomes sorted by seed.
struct Stats {
    runs: usize,
    /// Invariant → seeds violating it, ascending, without duplicates (every invariant present).
    violating: BTreeMap<Invariant, Vec<u64>>,
    /// Seed and panic message, ascending.
    panicked: Vec<(u64, String)>,
    failing: Vec<u64>,
}

impl Stats {
    fn of(sorted: &[&SeedOutcome]) -> Stats {
        let mut violating: BTreeMap<Invariant, Vec<u64>> = Invariant::ALL
            .into_iter()
            .map(|invariant| (invariant, Vec::new()))
            .collect();
        let mut panicked = Vec::new();
        let mut failing = Vec::new();
        for outcome in sorted {
            let violated = outcome.checked.violated();
            for invariant in &violated {
                let seeds = violating
                    .get_mut(invariant)
                    .expect("all invariants present");
                if seeds.last() != Some(&outcome.seed) {
                    seeds.push(outcome.seed);
                }
            }
            if let Some(message) = &outcome.panic {
                panicked.push((outcome.seed, message.clone()));
            }
            if (!violated.is_empty() || outcome.panic.is_some())
                && failing.last() != Some(&outcome.seed)
            {
                failing.push(outcome.seed);
            }
        }
        Stats {
            runs: sorted.len(),
            violating,
            panicked,
            failing,
        }
    }

    fn violated(&self) -> Vec<Invariant> {
        self.violating
            .iter()
            .filter(|(_, seeds)| !seeds.is_empty())
            .map(|(inv, _)| *inv)
            .collect()
    }
}

fn evaluate_stats(expect: &Outcome, stats: &Stats) -> (bool, String) {
    let mut problems: Vec<String> = Vec::new();
    match expect {
        Outcome::Safe => {
            for invariant in stats.violated() {
                problems.push(violated_phrase(invariant, &stats.violating[&invariant]));
            }
        }
        Outcome::Violates(list) => {
            let expected = normalized(list);
            for invariant in &expected {
                if stats.violating[invariant].is_empty() {
                    problems.push(format!(
                        "{invariant} ({}) was not violated in any of {}",
                        invariant.title(),
                        plural(stats.runs as u64, "seed")
                    ));
                }
            }
            for invariant in stats.violated() {
                if !expected.contains(&invariant) {
                    problems.push(format!(
                        "unexpected {}",
                        violated_phrase(invariant, &stats.violating[&invariant])
                    ));
                }
            }
        }
    }
    if let Some((seed, message)) = stats.panicked.first() {
        let others = stats.panicked.len() - 1;
        let more = if others == 0 {
            String::new()
        } else {
            format!(" (and {others} more)")
        };
        problems.push(format!(
            "seed {seed} panicked{more}: {}",
            one_line(message, 200)
        ));
    }

    let met = problems.is_empty();
    let detail = match (expect, met) {
        (Outcome::Safe, true) if stats.runs == 0 => "Met vacuously: no seeds were run.".to_string(),
        (Outcome::Safe, true) => format!(
            "Met: no invariant was violated and no node panicked in any of {}.",
            plural(stats.runs as u64, "seed")
        ),
        (Outcome::Violates(list), true) => {
            let found: Vec<String> = normalized(list)
                .into_iter()
                .map(|invariant| {
                    let seeds = &stats.violating[&invariant];
                    format!(
                        "{invariant} in {} (first seed {})",
                        plural(seeds.len() as u64, "seed"),
                        seeds[0]
                    )
                })
                .collect();
            format!(
                "Met: violated as expected, {}, and nothing else.",
                found.join(", ")
            )
        }
        (_, false) => format!(
            "Not met (expected {}): {}.",
            expectation_text(expect),
            problems.join("; ")
        ),
    };
    (met, detail)
}

fn violated_phrase(invariant: Invariant, seeds: &[u64]) -> String {
    format!(
        "{invariant} ({}) was violated in {} (first seed {})",
        invariant.title(),
        plural(seeds.len() as u64, "seed"),
        seeds[0]
    )
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The first line of `text`, at most `max_chars` characters.
fn one_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= max_chars {
        line.to_string()
    } else {
        let mut out: String = line.chars().take(max_chars.saturating_sub(3)).collect();
        out.push_str("...");
        out
    }
}

/// Aggregates per-seed metrics objects (the serialized `Metrics` of each seed, in seed order)
/// into one object, key by key in sorted order, judging each key by the values it holds:
///
/// - integers → `{"total": sum, "max_per_seed": max}`
/// - numbers, some not integers → `{"mean": .., "max": ..}` over the seeds that have the key
/// - arrays of numbers → all seeds' elements together: `{"count", "p50", "p99", "max"}`,
///   nearest-rank percentiles, null when there are no elements
/// - objects → aggregated recursively
/// - booleans → `{"seeds_true": n}`
/// - anything else (strings, mixed shapes) → null: there is no meaningful aggregate.
///
/// Null values (absent options) are skipped. Floats are rounded to 3 decimals.
pub fn aggregate_metrics(per_seed: impl IntoIterator<Item = Value>) -> Value {
    let objects: Vec<Map<String, Value>> = per_seed
        .into_iter()
        .filter_map(|value| match value {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .collect();
    Value::Object(aggregate_objects(&objects.iter().collect::<Vec<_>>()))
}

fn aggregate_objects(objects: &[&Map<String, Value>]) -> Map<String, Value> {
    let keys: BTreeSet<&String> = objects.iter().flat_map(|object| object.keys()).collect();
    let mut out = Map::new();
    for key in keys {
        let values: Vec<&Value> = objects
            .iter()
            .filter_map(|object| object.get(key))
            .filter(|v| !v.is_null())
            .collect();
        out.insert(key.clone(), aggregate_field(&values));
    }
    out
}

fn aggregate_field(values: &[&Value]) -> Value {
    if values.is_empty() {
        return Value::Null;
    }
    if values.iter().all(|v| v.is_i64() || v.is_u64()) {
        let ints: Vec<i128> = values.iter().map(|v| as_i128(v)).collect();
        let total: i128 = ints.iter().sum();
        let max = *ints.iter().max().expect("non-empty");
        return object([
            ("total", int_value(total)),
            ("max_per_seed", int_value(max)),
        ]);
    }
    if values.iter().all(|v| v.is_number()) {
        let floats: Vec<f64> = values.iter().filter_map(|v| v.as_f64()).collect();
        let mean = floats.iter().sum::<f64>() / floats.len() as f64;
        let max = floats.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        return object([("mean", float_value(mean)), ("max", float_value(max))]);
    }
    if values
        .iter()
        .all(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_number)))
    {
        let mut all: Vec<&Value> = values
            .iter()
            .flat_map(|v| v.as_array().expect("array"))
            .collect();
        all.sort_by(|a, b| {
            let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            a.total_cmp(&b)
        });
        let count = all.len() as u64;
        let rank = |percent: u64| -> Value {
            if all.is_empty() {
                return Value::Null;
            }
            // Nearest rank: the smallest element with at least `percent`% of elements <= it.
            let rank = (percent * count).div_ceil(100).max(1);
            number_value(all[(rank - 1) as usize])
        };
        return object([
            ("count", Value::from(count)),
            ("p50", rank(50)),
            ("p99", rank(99)),
            ("max", all.last().map_or(Value::Null, |v| number_value(v))),
        ]);
    }
    if values.iter().all(|v| v.is_object()) {
        let objects: Vec<&Map<String, Value>> =
            values.iter().filter_map(|v| v.as_object()).collect();
        return Value::Object(aggregate_objects(&objects));
    }
    if values.iter().all(|v| v.is_boolean()) {
        let seeds_true = values.iter().filter(|v| v.as_bool() == Some(true)).count() as u64;
        return object([("seeds_true", Value::from(seeds_true))]);
    }
    Value::Null
}

fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn as_i128(value: &Value) -> i128 {
    value
        .as_u64()
        .map(i128::from)
        .or_else(|| value.as_i64().map(i128::from))
        .expect("an integer")
}

fn int_value(n: i128) -> Value {
    if let Ok(n) = u64::try_from(n) {
        Value::from(n)
    } else if let Ok(n) = i64::try_from(n) {
        Value::from(n)
    } else {
        float_value(n as f64)
    }
}

/// Integers as they are; floats rounded.
fn number_value(value: &Value) -> Value {
    if value.is_i64() || value.is_u64() {
        value.clone()
    } else {
        float_value(value.as_f64().unwrap_or(0.0))
    }
}

/// Rounded to 3 decimals, so output does not depend on the last bits of a float sum.
fn float_value(x: f64) -> Value {
    let rounded = (x * 1000.0).round() / 1000.0;
    // -0.0 would print as "-0.0".
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    Number::from_f64(rounded).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests;

/// Key metrics shown in the console summary (all metrics are in the JSON).
const CONSOLE_METRICS: [&str; 10] = [
    "acquisitions",
    "takeovers",
    "renewal_failures",
    "accepted_writes",
    "stale_write_rejections",
    "false_expiries",
    "superseded_side_effects",
    "overlapping_beliefs",
    "takeover_latency_ms",
    "fence_window_ms",
];

/// A short human-readable rendering of a summary for the console.
pub fn render_summary(summary: &Summary) -> String {
    let mut out = String::new();
    let failing: Vec<String> = summary
        .failing_seeds
        .iter()
        .take(20)
        .map(u64::to_string)
        .collect();
    let more = summary.failing_seeds.len().saturating_sub(failing.len());
    out.push_str(&format!(
        "{}: {} runs, {} failing seeds{}{}\n",
        summary.scenario,
        summary.runs,
        summary.failing_seeds.len(),
        if failing.is_empty() {
            String::new()
        } else {
            format!(" [{}", failing.join(", "))
        },
        if failing.is_empty() {
            String::new()
        } else if more > 0 {
            format!(", … {more} more]")
        } else {
            "]".to_string()
        },
    ));
    out.push_str("  seeds violating:");
    for (invariant, count) in &summary.violations {
        out.push_str(&format!(" {invariant}={count}"));
    }
    out.push('\n');
    for key in CONSOLE_METRICS {
        if let Some(value) = summary.metrics.get(key) {
            out.push_str(&format!("  {key}: {value}\n"));
        }
    }
    out.push_str(&format!(
        "  expectation {}: {} — {}",
        summary.expectation,
        if summary.expectation_met {
            "MET"
        } else {
            "NOT MET"
        },
        summary.expectation_detail
    ));
    out
}
