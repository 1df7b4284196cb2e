//! The machine-readable verdict on one scenario over a seed range: `summary.json`.
//!
//! Everything here is a pure function of its inputs and the output is byte-deterministic
//! (sorted maps, sorted seeds, rounded floats, no timestamps), so two summaries of the same
//! scenario and seeds can be compared byte for byte, including across `--shard`s.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_check::SeedOutcome;
use fencesim_model::{Coverage, Invariant};
use fencesim_scenario::{Expect, Outcome, Scenario, SeedRange};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

mod console;
pub mod numeric;
pub mod state_space;
mod stream;
pub use console::render_summary;
pub use stream::{FieldAcc, SeedStride, SummaryBuilder, SummaryState};

/// The seed range as it appears in JSON: `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedsJson {
    /// First seed (inclusive).
    pub start: u64,
    /// Last seed (exclusive).
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
    /// The seeds to run.
    pub seeds: SeedsJson,
    /// Number of outcomes summarized.
    pub runs: u64,
    /// Seeds with any violation or a panic, ascending.
    pub failing_seeds: Vec<u64>,
    /// Seeds where a simulated node panicked, ascending.
    pub panicked_seeds: Vec<u64>,
    /// Seeds stopped at their event budget (runaway), ascending; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runaway_seeds: Vec<u64>,
    /// `"I1"`..`"I5"` → number of seeds violating it (every key present).
    pub violations: BTreeMap<Invariant, u64>,
    /// `"I1"`..`"I5"` → smallest seed violating it, or null.
    pub first_violation_seed: BTreeMap<Invariant, Option<u64>>,
    /// `"safe"` or `"violates I3, I4"`.
    pub expectation: String,
    /// Whether the expectation was met (coverage included).
    pub expectation_met: bool,
    /// One sentence: why the expectation was met or not, naming seeds. Starts with
    /// `"vacuous:"` when [`Summary::vacuous`].
    pub expectation_detail: String,
    /// Every coverage condition → number of seeds that hit it, declared or not, so a reader
    /// sees what happened.
    pub coverage: BTreeMap<Coverage, u64>,
    /// The coverage conditions the scenario declares (`expect.coverage`), as declared.
    pub coverage_required: Vec<Coverage>,
    /// The invariants behaved as expected but some required coverage condition was never hit:
    /// the danger never happened, so the pass proves nothing and counts as not met.
    pub vacuous: bool,
    /// Metrics aggregated over seeds (see [`aggregate_metrics`]).
    pub metrics: Value,
    /// The combined trace digest of every seed run: 16 hex digits, the wrapping sum over the
    /// seeds of [`trace_term`]`(seed, hash)`, so the same seeds with the same trace hashes give
    /// the same digest in any order, with any `--jobs` and across merged `--shard`s.
    pub trace_digest: String,
    /// Seed (decimal) → trace hash, for the failing seeds only (any violation, a panic or a
    /// runaway): the seeds a reader replays. Every seed's hash is in [`Summary::trace_digest`].
    pub failing_trace_hashes: BTreeMap<String, String>,
    /// The abstract protocol states and transitions the seeds reached, the saturation curve
    /// and the rare states ([`state_space`]; absent from reports written before it: none).
    #[serde(default)]
    pub state_space: state_space::StateSpace,
}

/// One seed's term of [`Summary::trace_digest`]: `mix(mix(seed + 0x9e3779b97f4a7c15) ^ h)`
/// (wrapping), where `mix` is the splitmix64 finalizer and `h` is the trace hash as a number
/// (its 16 lowercase hex digits; any other text, from a hand-made outcome, is FNV-1a 64 of its
/// UTF-8 bytes). `mix` is a bijection, so changing one seed's hash always changes the digest.
pub fn trace_term(seed: u64, trace_hash: &str) -> u64 {
    mix(mix(seed.wrapping_add(0x9e37_79b9_7f4a_7c15)) ^ hash_number(trace_hash))
}

/// The splitmix64 finalizer (a bijection on u64).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A trace hash as a number: 16 lowercase hex digits as written, anything else FNV-1a 64.
fn hash_number(text: &str) -> u64 {
    let canonical = text.len() == 16
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    match u64::from_str_radix(text, 16) {
        Ok(value) if canonical => value,
        _ => fencesim_model::fnv::hash(text.as_bytes()),
    }
}

/// Summarizes `outcomes` (in any order) of `scenario` over `seeds`. The same as pushing
/// them, sorted by seed, into a [`SummaryBuilder`].
pub fn summarize(scenario: &Scenario, seeds: SeedRange, outcomes: &[SeedOutcome]) -> Summary {
    let mut builder = SummaryBuilder::new();
    for outcome in sorted_by_seed(outcomes) {
        builder.push(outcome);
    }
    builder.finish(scenario, seeds)
}

/// The version of the `summary.json` format this build writes.
pub const SCHEMA_VERSION: u32 = 1;

/// `summary.json`: pretty JSON with a trailing newline, `schema_version` and `producer`
/// first; the same summary always gives the same bytes.
pub fn to_json(summary: &Summary) -> String {
    fencesim_model::version::versioned_json(SCHEMA_VERSION, summary)
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
///
/// On top of that, every condition in `expect.coverage` must be hit in at least one seed
/// (a name that is not a coverage condition is never hit). When the invariants behave as
/// expected but coverage is missing, the verdict is not met and the detail starts with
/// `"vacuous:"` and names the missing conditions: a `safe` whose danger never happened
/// proves nothing.
pub fn evaluate(expect: &Expect, outcomes: &[SeedOutcome]) -> (bool, String) {
    let verdict = evaluate_stats(expect, &Stats::of(&sorted_by_seed(outcomes)));
    (verdict.verdict.is_met(), verdict.detail)
}

fn sorted_by_seed(outcomes: &[SeedOutcome]) -> Vec<&SeedOutcome> {
    let mut sorted: Vec<&SeedOutcome> = outcomes.iter().collect();
    // The hash breaks ties so even duplicated seeds (a merge mistake) order deterministically.
    sorted.sort_by(|a, b| (a.seed, &a.trace_hash).cmp(&(b.seed, &b.trace_hash)));
    sorted
}

/// `into` and `other` (both ascending) as one ascending list without duplicates.
fn merge_sorted(into: &mut Vec<u64>, other: &[u64]) {
    into.extend_from_slice(other);
    into.sort_unstable();
    into.dedup();
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

/// Per-seed facts the verdict is computed from, over outcomes sorted by seed (part of a
/// [`SummaryState`], so serializable and mergeable).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stats {
    runs: u64,
    /// Invariant → seeds violating it, ascending, without duplicates (every invariant present).
    violating: BTreeMap<Invariant, Vec<u64>>,
    /// Seed and panic message, ascending.
    panicked: Vec<(u64, String)>,
    /// Seeds stopped at their event budget, ascending.
    runaway: Vec<u64>,
    failing: Vec<u64>,
    /// Every coverage condition → number of distinct seeds that hit it.
    coverage: BTreeMap<Coverage, u64>,
    /// Coverage condition → smallest seed that hit it (only conditions hit).
    first_hit: BTreeMap<Coverage, u64>,
    /// The last seed counted (a repeated seed counts once for coverage).
    #[serde(skip)]
    previous_seed: Option<u64>,
}

/// The counts and seed lists, not the bookkeeping of the last push.
impl PartialEq for Stats {
    fn eq(&self, other: &Stats) -> bool {
        (
            self.runs,
            &self.violating,
            &self.panicked,
            &self.runaway,
            &self.failing,
            &self.coverage,
            &self.first_hit,
        ) == (
            other.runs,
            &other.violating,
            &other.panicked,
            &other.runaway,
            &other.failing,
            &other.coverage,
            &other.first_hit,
        )
    }
}

impl Stats {
    fn of(sorted: &[&SeedOutcome]) -> Stats {
        let mut stats = Stats::new();
        for outcome in sorted {
            stats.push(outcome);
        }
        stats
    }

    fn new() -> Stats {
        Stats {
            runs: 0,
            violating: Invariant::ALL
                .into_iter()
                .map(|invariant| (invariant, Vec::new()))
                .collect(),
            panicked: Vec::new(),
            runaway: Vec::new(),
            failing: Vec::new(),
            coverage: Coverage::ALL.into_iter().map(|name| (name, 0)).collect(),
            first_hit: BTreeMap::new(),
            previous_seed: None,
        }
    }

    /// Counts one outcome; outcomes come in ascending seed order.
    fn push(&mut self, outcome: &SeedOutcome) {
        self.runs += 1;
        // Outcomes are sorted by seed: a repeated seed (a merge mistake) counts once.
        if self.previous_seed != Some(outcome.seed) {
            for condition in fencesim_check::coverage::hits(&outcome.checked.metrics) {
                *self.coverage.entry(condition).or_insert(0) += 1;
                self.first_hit.entry(condition).or_insert(outcome.seed);
            }
        }
        self.previous_seed = Some(outcome.seed);
        let violated = outcome.checked.violated();
        for invariant in &violated {
            let seeds = self
                .violating
                .get_mut(invariant)
                .expect("all invariants present");
            if seeds.last() != Some(&outcome.seed) {
                seeds.push(outcome.seed);
            }
        }
        if let Some(message) = &outcome.panic {
            self.panicked.push((outcome.seed, message.clone()));
        }
        if outcome.runaway && self.runaway.last() != Some(&outcome.seed) {
            self.runaway.push(outcome.seed);
        }
        if (!violated.is_empty() || outcome.panic.is_some() || outcome.runaway)
            && self.failing.last() != Some(&outcome.seed)
        {
            self.failing.push(outcome.seed);
        }
    }

    /// Adds the counts and seeds of `other`, whose seeds are none of this one's: the stats of
    /// both sets of seeds (lists stay ascending, every invariant and condition present).
    fn merge(&mut self, other: &Stats) {
        self.runs += other.runs;
        for (invariant, seeds) in &other.violating {
            merge_sorted(self.violating.entry(*invariant).or_default(), seeds);
        }
        self.panicked.extend(other.panicked.iter().cloned());
        self.panicked.sort();
        self.panicked.dedup();
        merge_sorted(&mut self.runaway, &other.runaway);
        merge_sorted(&mut self.failing, &other.failing);
        for (condition, seeds) in &other.coverage {
            *self.coverage.entry(*condition).or_insert(0) += seeds;
        }
        for (condition, &seed) in &other.first_hit {
            let first = self.first_hit.entry(*condition).or_insert(seed);
            *first = (*first).min(seed);
        }
        self.previous_seed = None;
    }

    /// Checks what a hand-edited report could break: every seed list strictly ascending (no
    /// seed twice), `failing` exactly the seeds that violate, panicked or ran away, no
    /// coverage count above `runs`, and a first hit exactly for each condition counted.
    fn check_consistent(&self) -> Result<(), String> {
        let ascending = |name: &str, seeds: &mut dyn Iterator<Item = u64>| {
            let mut previous: Option<u64> = None;
            for seed in seeds {
                if previous.is_some_and(|previous| previous >= seed) {
                    return Err(format!(
                        "state.stats.{name}: expected seeds in ascending order, each once, got {seed} after {}",
                        previous.unwrap_or_default()
                    ));
                }
                previous = Some(seed);
            }
            Ok(())
        };
        for (invariant, seeds) in &self.violating {
            ascending(
                &format!("violating.{invariant}"),
                &mut seeds.iter().copied(),
            )?;
        }
        ascending("panicked", &mut self.panicked.iter().map(|(seed, _)| *seed))?;
        ascending("runaway", &mut self.runaway.iter().copied())?;
        ascending("failing", &mut self.failing.iter().copied())?;
        let mut failed: Vec<u64> = self
            .violating
            .values()
            .flatten()
            .chain(self.panicked.iter().map(|(seed, _)| seed))
            .chain(&self.runaway)
            .copied()
            .collect();
        failed.sort_unstable();
        failed.dedup();
        if failed != self.failing {
            return Err(format!(
                "state.stats.failing: expected exactly the seeds that violate, panicked or ran away ({} seeds), got {} seeds",
                failed.len(),
                self.failing.len()
            ));
        }
        for (condition, &count) in &self.coverage {
            if count > self.runs {
                return Err(format!(
                    "state.stats.coverage.{condition}: expected at most runs ({}) seeds, got {count}",
                    self.runs
                ));
            }
            if (count > 0) != self.first_hit.contains_key(condition) {
                return Err(format!(
                    "state.stats.first_hit: expected a first seed exactly for the conditions hit, got {} for {condition} (hit by {count} seeds)",
                    self.first_hit
                        .get(condition)
                        .map_or("none".to_string(), u64::to_string)
                ));
            }
        }
        Ok(())
    }

    /// Every seed the lists name, for checking them against the seeds counted.
    fn named_seeds(&self) -> impl Iterator<Item = u64> + '_ {
        self.violating
            .values()
            .flatten()
            .chain(self.panicked.iter().map(|(seed, _)| seed))
            .chain(&self.runaway)
            .chain(&self.failing)
            .chain(self.first_hit.values())
            .copied()
    }

    /// The conditions of `required` no seed hit, in declared order, without duplicates.
    fn missing_coverage(&self, required: &[Coverage]) -> Vec<Coverage> {
        dedup_in_order(required)
            .into_iter()
            .filter(|condition| self.coverage.get(condition).copied().unwrap_or(0) == 0)
            .collect()
    }

    fn violated(&self) -> Vec<Invariant> {
        self.violating
            .iter()
            .filter(|(_, seeds)| !seeds.is_empty())
            .map(|(inv, _)| *inv)
            .collect()
    }
}

/// The verdict on an expectation, before it is split into summary fields.
struct Verdict {
    verdict: ExpectationVerdict,
    detail: String,
}

fn evaluate_stats(expect: &Expect, stats: &Stats) -> Verdict {
    let outcome = &expect.outcome;
    let mut problems = invariant_problems(outcome, stats);
    for condition in dedup_in_order(&expect.never) {
        if let Some(&seed) = stats.first_hit.get(&condition) {
            let seeds = stats.coverage.get(&condition).copied().unwrap_or(0);
            problems.push(format!(
                "{condition} must never happen but happened in {} (first seed {seed})",
                plural(seeds, "seed")
            ));
        }
    }
    let missing = stats.missing_coverage(&expect.coverage);
    let seeds_run = plural(stats.runs, "seed");

    if !problems.is_empty() {
        let mut problems = problems;
        if !missing.is_empty() {
            problems.push(format!(
                "required coverage never hit: {}",
                coverage_list(&missing)
            ));
        }
        return Verdict {
            verdict: ExpectationVerdict::NotMet,
            detail: format!(
                "Not met (expected {}): {}.",
                expectation_text(outcome),
                problems.join("; ")
            ),
        };
    }

    let as_expected = match outcome {
        Outcome::Safe => {
            format!("no invariant was violated and no node panicked in any of {seeds_run}")
        }
        Outcome::Violates(list) => {
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
                "violated as expected, {}, and nothing else in {seeds_run}",
                found.join(", ")
            )
        }
    };
    if !missing.is_empty() {
        return Verdict {
            verdict: ExpectationVerdict::Vacuous,
            detail: format!(
                "vacuous: {as_expected}, but required coverage was never hit: {}.",
                coverage_list(&missing)
            ),
        };
    }

    let covered = if expect.coverage.is_empty() {
        String::new()
    } else {
        let counts: Vec<String> = dedup_in_order(&expect.coverage)
            .into_iter()
            .map(|condition| {
                let seeds = stats.coverage.get(&condition).copied().unwrap_or(0);
                format!("{condition} in {}", plural(seeds, "seed"))
            })
            .collect();
        format!("; coverage hit: {}", counts.join(", "))
    };
    let covered = if expect.never.is_empty() {
        covered
    } else {
        let never: Vec<String> = dedup_in_order(&expect.never)
            .into_iter()
            .map(|condition| condition.to_string())
            .collect();
        format!(
            "{covered}; never happened, as required: {}",
            never.join(", ")
        )
    };
    let detail = match outcome {
        Outcome::Safe if stats.runs == 0 => "Met, but trivially: no seeds were run.".to_string(),
        _ => format!("Met: {as_expected}{covered}."),
    };
    Verdict {
        verdict: ExpectationVerdict::Met,
        detail,
    }
}

/// Why the invariant part of an expectation is not met (empty when it is).
fn invariant_problems(expect: &Outcome, stats: &Stats) -> Vec<String> {
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
                        plural(stats.runs, "seed")
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
    if let Some(seed) = stats.runaway.first() {
        let others = stats.runaway.len() - 1;
        let more = if others == 0 {
            String::new()
        } else {
            format!(" (and {others} more)")
        };
        problems.push(format!(
            "seed {seed} ran away{more}: it exceeded its event budget and was stopped (replay it with `fencesim replay`)"
        ));
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
    problems
}

/// `"a (meaning), b (meaning)"`.
fn coverage_list(conditions: &[Coverage]) -> String {
    conditions
        .iter()
        .map(|condition| format!("{condition} ({})", condition.meaning()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn dedup_in_order(conditions: &[Coverage]) -> Vec<Coverage> {
    let mut out: Vec<Coverage> = Vec::new();
    for &condition in conditions {
        if !out.contains(&condition) {
            out.push(condition);
        }
    }
    out
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
/// - numbers, some not integers → `{"mean": .., "max": ..}` over the seeds that have the key;
///   the mean is the exact sum ([`numeric::ExactSum`]), correctly rounded, over the count
/// - arrays of numbers → all seeds' elements together: `{"count", "p50", "p99", "max"}`,
///   nearest-rank percentiles from a [`numeric::Histogram`] (within 1/256 of the exact value,
///   exact when the element's bucket holds one distinct value), null when there are no
///   elements; `count` and `max` exact
/// - objects → aggregated recursively
/// - booleans → `{"seeds_true": n}`
/// - anything else (strings, mixed shapes) → null: there is no meaningful aggregate.
///
/// Null values (absent options) are skipped. Floats are rounded to 3 decimals.
pub fn aggregate_metrics(per_seed: impl IntoIterator<Item = Value>) -> Value {
    let mut acc = FieldAcc::default();
    for value in per_seed {
        if let Value::Object(map) = value {
            acc.push_object(&map);
        }
    }
    Value::Object(acc.object_fields())
}

fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
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

/// Rounded to 3 decimals, so output does not depend on the last bits of a float sum.
fn float_value(x: f64) -> Value {
    let scaled = x * 1000.0;
    // Near f64::MAX scaling overflows; such a value has no decimals worth rounding anyway.
    let rounded = if scaled.is_finite() {
        scaled.round() / 1000.0
    } else {
        x
    };
    // -0.0 would print as "-0.0".
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    Number::from_f64(rounded).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests;

/// How a scenario's expectation came out over its seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectationVerdict {
    /// The invariants behaved as expected and every required coverage condition was hit.
    Met,
    /// The invariants behaved as expected but some required coverage condition was never
    /// hit: the danger never happened, so the pass proves nothing (and counts as not met).
    Vacuous,
    /// An invariant behaved otherwise than expected, or a node panicked.
    NotMet,
}

impl ExpectationVerdict {
    /// Whether the expectation counts as met (exit code 0).
    pub fn is_met(self) -> bool {
        self == ExpectationVerdict::Met
    }

    /// `MET`, `VACUOUS` or `NOT MET`: the console summary's word.
    pub fn word(self) -> &'static str {
        match self {
            ExpectationVerdict::Met => "MET",
            ExpectationVerdict::Vacuous => "VACUOUS",
            ExpectationVerdict::NotMet => "NOT MET",
        }
    }

    /// `met`, `VACUOUS` or `NOT MET`: the safety matrix's result column.
    pub fn matrix_label(self) -> &'static str {
        match self {
            ExpectationVerdict::Met => "met",
            other => other.word(),
        }
    }

    /// `ok`, `VACUOUS` or `FAILED`: the `check` table's result column.
    pub fn table_label(self) -> &'static str {
        match self {
            ExpectationVerdict::Met => "ok",
            ExpectationVerdict::Vacuous => "VACUOUS",
            ExpectationVerdict::NotMet => "FAILED",
        }
    }
}

impl Summary {
    /// The verdict `expectation_met` and `vacuous` encode.
    pub fn verdict(&self) -> ExpectationVerdict {
        match (self.expectation_met, self.vacuous) {
            (true, _) => ExpectationVerdict::Met,
            (false, true) => ExpectationVerdict::Vacuous,
            (false, false) => ExpectationVerdict::NotMet,
        }
    }
}
