//! The report of one `fencesim check` run over many scenarios (`--json`), and `merge`, which
//! combines the partial reports of `--shard K/N` runs into the report an unsharded run gives.
//!
//! A report keeps, per scenario, its summary, the [`SummaryState`] the summary was finished
//! from (counts, seed lists of the failing seeds, coverage, metric aggregates with histograms
//! and exact sums, the trace digest: what merges exactly), and in full only the outcomes a
//! reader needs to see a failure ([`ScenarioResult::failures`]), not every seed's outcome: a
//! report and the memory of `check` do not grow with the passing seeds. `merge` combines the
//! parts' states and re-finishes the summaries; the merged report is byte-identical to the
//! unsharded one.

use std::collections::BTreeMap;

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::{Expect, Outcome, Scenario, SeedRange};
use serde::{Deserialize, Serialize};

use crate::summary::{Summary, SummaryBuilder, SummaryState};

/// One scenario file's result. Field order is the JSON field order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ScenarioResult {
    /// The scenario file as given on the command line.
    pub file: String,
    /// The `--set FIELD=VALUE` overrides the scenario was loaded with, in order (absent when
    /// none): part of every replay command, which would replay another scenario without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// The resolved scenario (its hash is `summary.scenario_hash`).
    pub scenario: Scenario,
    /// The scenario over its seeds.
    pub summary: Summary,
    /// What the summary was finished from, and what `merge` combines.
    pub state: SummaryState,
    /// In full, sorted by seed: the outcomes of the seeds that contradict the expectation by
    /// themselves (see [`contradicts`]) and of the first seed violating each invariant (its
    /// violations with their evidence). Every other seed is only counted in `state`.
    pub failures: Vec<SeedOutcome>,
}

impl ScenarioResult {
    /// The command that replays `seed` of this scenario, overrides included.
    pub fn replay_command(&self, seed: u64) -> String {
        fencesim_scenario::replay_command_with(&self.file, seed, &self.overrides)
    }
}

/// Whether `outcome` contradicts `expect` whatever the other seeds did: a panic, a runaway,
/// a violated invariant the expectation does not list (for `safe`, any), or a `never`
/// condition it hit.
pub fn contradicts(expect: &Expect, outcome: &SeedOutcome) -> bool {
    let allowed: &[Invariant] = match &expect.outcome {
        Outcome::Safe => &[],
        Outcome::Violates(list) => list,
    };
    outcome.panic.is_some()
        || outcome.runaway
        || outcome
            .checked
            .violated()
            .iter()
            .any(|invariant| !allowed.contains(invariant))
        || fencesim_check::coverage::hits(&outcome.checked.metrics)
            .into_iter()
            .any(|condition| expect.never.contains(&condition))
}

/// Whether a [`ScenarioResult`] over the seeds counted in `state` keeps `outcome` in full.
fn kept(expect: &Expect, state: &SummaryState, outcome: &SeedOutcome) -> bool {
    contradicts(expect, outcome)
        || outcome
            .checked
            .violated()
            .iter()
            .any(|invariant| state.violating(*invariant).first() == Some(&outcome.seed))
}

/// A [`ScenarioResult`] built as seeds finish: outcomes pushed in ascending seed order are
/// counted and dropped, unless the result keeps them in full (see
/// [`ScenarioResult::failures`]).
pub struct ScenarioResultBuilder {
    expect: Expect,
    builder: SummaryBuilder,
    failures: Vec<SeedOutcome>,
}

impl ScenarioResultBuilder {
    /// A builder for `scenario`'s result that has seen no outcome.
    pub fn new(scenario: &Scenario) -> ScenarioResultBuilder {
        ScenarioResultBuilder {
            expect: scenario.expect.clone(),
            builder: SummaryBuilder::new(),
            failures: Vec::new(),
        }
    }

    /// Counts `outcome`; outcomes come in ascending `(seed, trace_hash)` order.
    pub fn push(&mut self, outcome: SeedOutcome) {
        let first_violation = outcome
            .checked
            .violated()
            .iter()
            .any(|invariant| self.builder.state().violating(*invariant).is_empty());
        self.builder.push(&outcome);
        if first_violation || contradicts(&self.expect, &outcome) {
            let mut outcome = outcome;
            // Kept as a report writes it: the states it visited are counted in the state.
            outcome.checked.visited = Default::default();
            self.failures.push(outcome);
        }
    }

    /// Outcomes pushed so far.
    pub fn runs(&self) -> u64 {
        self.builder.runs()
    }

    /// The result of `scenario` (the one given to [`ScenarioResultBuilder::new`]) from
    /// `file`, summarized over `scenario.seeds`.
    pub fn finish(self, file: &str, scenario: &Scenario) -> ScenarioResult {
        let state = self.builder.into_state();
        ScenarioResult {
            file: file.to_string(),
            overrides: Vec::new(),
            scenario: scenario.clone(),
            summary: state.finish(scenario, scenario.seeds),
            state,
            failures: self.failures,
        }
    }
}

/// The result of a `fencesim check` run (or of a merge). Field order is the JSON field order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// `"K/N"` for the partial report of a sharded run; `None` for a whole (or merged) run.
    pub shard: Option<String>,
    /// Sorted by `file`.
    pub scenarios: Vec<ScenarioResult>,
    /// Whether every scenario's expectation was met (true when there are none).
    pub all_met: bool,
}

/// Slice `k` of `n` of every scenario's seeds (`check --shard K/N`): the seeds whose offset
/// from the range's start is `k - 1` modulo `n`, so N machines split a sweep and `merge`
/// puts it back together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 1-based slice number.
    pub k: u64,
    /// Number of slices.
    pub n: u64,
}

impl Shard {
    /// Parses `K/N` with 1 <= K <= N; the error says what was expected.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let max = fencesim_scenario::limits::MAX_SEEDS;
        let bad = || format!("expected `K/N` with 1 <= K <= N <= {max}, got `{text}`");
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let k: u64 = k.trim().parse().map_err(|_| bad())?;
        let n: u64 = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n || n > max {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// The seeds of `range` in this slice, ascending.
    pub fn seeds(self, range: SeedRange) -> impl Iterator<Item = u64> + Clone + Send {
        range
            .iter()
            .filter(move |seed| (seed - range.start) % self.n == self.k - 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// Whether a shard's partial result has failed whatever the other shards hold: a panic, or an
/// invariant the expectation does not allow, or a `never` condition that happened. Missing
/// violations and missing coverage can still
/// be supplied by another slice, so they wait for [`merge`].
pub fn definitely_failed(result: &ScenarioResult) -> bool {
    let summary = &result.summary;
    if !summary.panicked_seeds.is_empty() || !summary.runaway_seeds.is_empty() {
        return true;
    }
    let allowed: &[Invariant] = match &result.scenario.expect.outcome {
        Outcome::Safe => &[],
        Outcome::Violates(list) => list,
    };
    let forbidden_hit = result
        .scenario
        .expect
        .never
        .iter()
        .any(|condition| summary.coverage.get(condition).copied().unwrap_or(0) > 0);
    forbidden_hit
        || summary
            .violations
            .iter()
            .any(|(invariant, &seeds)| seeds > 0 && !allowed.contains(invariant))
}

/// The result of `scenario` over `outcomes` (in any order), summarized over `scenario.seeds`:
/// the same as pushing them, sorted by seed, into a [`ScenarioResultBuilder`].
pub fn scenario_result(
    file: &str,
    scenario: &Scenario,
    mut outcomes: Vec<SeedOutcome>,
) -> ScenarioResult {
    // The trace hash breaks ties so even a duplicated seed orders deterministically.
    outcomes.sort_by(|a, b| (a.seed, &a.trace_hash).cmp(&(b.seed, &b.trace_hash)));
    let mut builder = ScenarioResultBuilder::new(scenario);
    for outcome in outcomes {
        builder.push(outcome);
    }
    builder.finish(file, scenario)
}

/// The report of `results` (in any order): sorted by file, `all_met` computed.
pub fn check_report(shard: Option<String>, mut results: Vec<ScenarioResult>) -> CheckReport {
    // Names break ties so that even a file given twice orders deterministically.
    results.sort_by(|a, b| (&a.file, &a.scenario.name).cmp(&(&b.file, &b.scenario.name)));
    let all_met = results.iter().all(|result| result.summary.expectation_met);
    CheckReport {
        shard,
        scenarios: results,
        all_met,
    }
}

/// Pretty JSON with a trailing newline; the same report always gives the same bytes.
pub fn report_to_json(report: &CheckReport) -> String {
    let mut out = serde_json::to_string_pretty(report).expect("check report serializes");
    out.push('\n');
    out
}

/// Reads a report written by [`report_to_json`]; `file` names the input in the error.
pub fn report_from_json(text: &str, file: &str) -> Result<CheckReport, String> {
    serde_json::from_str(text).map_err(|error| {
        format!(
            "{file}: not a fencesim check report (JSON from `fencesim check --json`): {}",
            json_words(&error.to_string())
        )
    })
}

/// serde's message in JSON's words: no Rust type names (`struct SeedOutcome`, `u64`,
/// `sequence`, `map`) in what a user reads.
fn json_words(message: &str) -> String {
    let mut text = message.to_string();
    for (rust, json) in [
        ("struct ", "an object"),
        ("enum ", "one of the documented values"),
    ] {
        while let Some(start) = text.find(rust) {
            let after = start + rust.len();
            let mut end = text[after..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(text.len(), |n| after + n);
            if let Some(rest) = text[end..].strip_prefix(" with ") {
                if let Some(n) = rest.find(" element") {
                    let tail = &rest[n + " element".len()..];
                    end +=
                        " with ".len() + n + " element".len() + usize::from(tail.starts_with('s'));
                }
            }
            text.replace_range(start..end, json);
        }
    }
    for (rust, json) in [
        ("a sequence", "an array"),
        ("sequence", "array"),
        ("a map", "an object"),
        ("invalid type: map", "invalid type: object"),
        ("u64", "a non-negative integer"),
        ("u32", "a non-negative integer"),
        ("usize", "a non-negative integer"),
        ("i64", "an integer"),
        ("f64", "a number"),
        ("floating point", "number"),
    ] {
        text = text.replace(rust, json);
    }
    text
}

/// Most seeds an error message lists.
const SEEDS_LISTED_MAX: usize = 10;

/// Combines the partial reports of a sharded run into the report the unsharded run gives.
///
/// The results of one scenario (by name, not by the path as typed) are combined: their hashes
/// must agree, each part's state must be consistent ([`SummaryState::check_consistent`]), no
/// seed may be counted twice, and together they must have counted every seed of the
/// scenario's range, exactly once (a shard left out would otherwise pass silently with fewer
/// seeds). The parts' states are merged and the summary finished again from the merged state;
/// of the parts' kept outcomes, those the whole run keeps are kept. The result has no `shard`.
pub fn merge(parts: Vec<CheckReport>) -> Result<CheckReport, String> {
    if parts.is_empty() {
        return Err("merge: no reports to merge".to_string());
    }
    // Shards are matched by the scenario's name (and must agree on its hash), not by the
    // path as typed: `catA/x.toml` and `./catA/x.toml` are one scenario. Scenarios
    // keep the order in which the reports first list them (the unsharded run's order).
    let mut by_name: Vec<(String, Vec<ScenarioResult>)> = Vec::new();
    for part in parts {
        let shard = part
            .shard
            .as_deref()
            .map(|label| Shard::parse(label).map_err(|expected| format!("shard: {expected}")))
            .transpose()?;
        for result in part.scenarios {
            check_part(&result, shard)?;
            match by_name
                .iter_mut()
                .find(|(name, _)| *name == result.scenario.name)
            {
                Some((_, results)) => results.push(result),
                None => by_name.push((result.scenario.name.clone(), vec![result])),
            }
        }
    }

    let mut merged = Vec::with_capacity(by_name.len());
    for (_, results) in by_name {
        let file = results[0].file.clone();
        merged.push(merge_file(&file, results)?);
    }
    Ok(check_report(None, merged))
}

/// What `merge` verifies of each part before combining it (a hand-edited shard is refused):
/// the scenario still has the hash its summary gives (an edited `expect` changes it), the
/// seeds counted are exactly its shard's (`shard` K/N), and the outcomes kept in full are
/// the ones the counts say must be kept (every panic, runaway and seed the expectation does
/// not allow, and the first seed violating each invariant).
fn check_part(result: &ScenarioResult, shard: Option<Shard>) -> Result<(), String> {
    let file = &result.file;
    // The range first: an edited range is named as such (and bounded before any use).
    SeedRange::parse(&result.scenario.seeds.to_string())
        .map_err(|expected| format!("{file}: scenario.seeds: {expected}"))?;
    let hash = result.scenario.hash();
    if hash != result.summary.scenario_hash {
        return Err(format!(
            "{file}: scenario {:?}: expected the scenario the report ran, whose hash is {}, got one whose hash is {} (was the report edited?)",
            result.scenario.name, result.summary.scenario_hash, hash
        ));
    }
    let range = result.scenario.seeds;
    if let Some(shard) = shard {
        // Every seed counted belongs to the shard its label names (seeds outside the range,
        // twice or missing are the merge's own checks, with their own messages).
        let in_shard =
            |seed: u64| seed < range.start || (seed - range.start) % shard.n == shard.k - 1;
        let stray = result.state.seed_strides().iter().find(|stride| {
            !in_shard(stride.first) || (stride.count > 1 && stride.step % shard.n != 0)
        });
        if let Some(stride) = stray {
            return Err(format!(
                "{file}: expected only the seeds of shard {shard} of {range}, got seeds from {} on with step {} (was the report edited?)",
                stride.first, stride.step
            ));
        }
    }
    let kept_seeds: Vec<u64> = result.failures.iter().map(|outcome| outcome.seed).collect();
    if kept_seeds.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(format!(
            "{file}: failures: expected outcomes in ascending seed order, each once"
        ));
    }
    let allowed: &[Invariant] = match &result.scenario.expect.outcome {
        Outcome::Safe => &[],
        Outcome::Violates(list) => list,
    };
    let state = &result.state;
    let mut required: Vec<u64> = state
        .panicked()
        .iter()
        .map(|(seed, _)| *seed)
        .chain(state.runaway().iter().copied())
        .collect();
    for invariant in Invariant::ALL {
        let seeds = state.violating(invariant);
        required.extend(seeds.first());
        if !allowed.contains(&invariant) {
            required.extend(seeds);
        }
    }
    required.sort_unstable();
    required.dedup();
    if let Some(missing) = required
        .iter()
        .find(|seed| kept_seeds.binary_search(seed).is_err())
    {
        return Err(format!(
            "{file}: failures: expected the outcome of seed {missing} in full (its counts say it failed), got none (was the report edited?)"
        ));
    }
    Ok(())
}

fn merge_file(file: &str, results: Vec<ScenarioResult>) -> Result<ScenarioResult, String> {
    let scenario = results[0].scenario.clone();
    let hash = results[0].summary.scenario_hash.clone();
    let overrides = results[0].overrides.clone();
    // A report is input: its range is re-checked against the limit before anything is
    // allocated or iterated over it (an edited range could otherwise ask for 2^64 seeds).
    let range_ok = |range: SeedRange| {
        SeedRange::parse(&range.to_string())
            .map_err(|expected| format!("{file}: scenario.seeds: {expected}"))
    };
    let range = range_ok(scenario.seeds)?;
    for result in &results {
        range_ok(result.scenario.seeds)?;
        if result.summary.scenario_hash != hash {
            return Err(format!(
                "{file}: the reports ran different versions of scenario {:?}: hash {} and \
                 hash {} (were the shards run from different commits?)",
                scenario.name, hash, result.summary.scenario_hash
            ));
        }
        if result.overrides != overrides {
            return Err(format!(
                "{file}: the reports ran scenario {:?} with different --set overrides: [{}] and \
                 [{}] (run every shard with the same --set arguments)",
                scenario.name,
                overrides.join(" "),
                result.overrides.join(" ")
            ));
        }
        result
            .state
            .check_consistent()
            .map_err(|expected| format!("{file}: {expected}"))?;
    }
    check_seeds_counted_once(file, range, &results)?;

    let mut state = SummaryState::new();
    let mut failures: BTreeMap<u64, SeedOutcome> = BTreeMap::new();
    for result in results {
        state.merge(&result.state);
        for outcome in result.failures {
            failures.insert(outcome.seed, outcome);
        }
    }
    state.set_seeds(range);
    let failures = failures
        .into_values()
        .filter(|outcome| kept(&scenario.expect, &state, outcome))
        .collect();
    Ok(ScenarioResult {
        file: file.to_string(),
        overrides,
        summary: state.finish(&scenario, range),
        scenario,
        state,
        failures,
    })
}

/// Checks that the parts' states together counted each seed of `range` exactly once and no
/// seed outside it, in time and memory bounded by the range (at most `MAX_SEEDS`: one bit a
/// seed), however many seeds an edited stride claims.
fn check_seeds_counted_once(
    file: &str,
    range: SeedRange,
    results: &[ScenarioResult],
) -> Result<(), String> {
    let strides: Vec<_> = results
        .iter()
        .flat_map(|result| result.state.seed_strides().iter().copied())
        .collect();
    // Seeds outside the range, ascending: the first few of each stride, and how many.
    let mut outside: Vec<u64> = Vec::new();
    let mut outside_count: u64 = 0;
    for stride in &strides {
        let last = stride.last().unwrap_or(stride.first);
        let below = if stride.first < range.start {
            let below = (range.start - stride.first).div_ceil(stride.step.max(1));
            below.min(stride.count)
        } else {
            0
        };
        let in_or_below = if last >= range.end {
            if stride.first >= range.end {
                0
            } else {
                (range.end - stride.first).div_ceil(stride.step.max(1))
            }
        } else {
            stride.count
        };
        let above = stride.count - in_or_below.min(stride.count);
        outside_count = outside_count.saturating_add(below).saturating_add(above);
        let nth = |index: u64| stride.first + index * stride.step;
        outside.extend((0..below.min(SEEDS_LISTED_MAX as u64)).map(nth));
        outside.extend((in_or_below..stride.count).take(SEEDS_LISTED_MAX).map(nth));
    }
    if outside_count > 0 {
        outside.sort_unstable();
        outside.dedup();
        outside.truncate(SEEDS_LISTED_MAX);
        let more = outside_count.saturating_sub(outside.len() as u64);
        let mut listed = seed_list(&outside);
        if more > 0 {
            listed.push_str(&format!(", … ({more} more)"));
        }
        return Err(format!(
            "{file}: seeds outside the scenario's range {range}: {listed}"
        ));
    }
    let mut seen = vec![0u64; (range.end - range.start).div_ceil(64) as usize];
    for stride in &strides {
        for seed in stride.within(range) {
            let offset = seed - range.start;
            let (word, bit) = ((offset / 64) as usize, 1u64 << (offset % 64));
            if fencesim_planted::active(fencesim_planted::Mutant::MergeAcceptsRepeatedSeed) {
                // Planted bug (`.ci/mutants`): a seed two shards counted goes unnoticed.
                seen[word] &= !bit;
            }
            if seen[word] & bit != 0 {
                return Err(format!(
                    "{file}: seed {seed} appears twice in the reports to merge (are two shards \
                     the same, or overlapping?)"
                ));
            }
            seen[word] |= bit;
        }
    }
    let mut missing_count: u64 = 0;
    let mut missing: Vec<u64> = Vec::new();
    for seed in range.iter() {
        let offset = seed - range.start;
        if seen[(offset / 64) as usize] & (1u64 << (offset % 64)) == 0 {
            missing_count += 1;
            if missing.len() <= SEEDS_LISTED_MAX {
                missing.push(seed);
            }
        }
    }
    if missing_count > 0 {
        let mut listed = seed_list(&missing[..missing.len().min(SEEDS_LISTED_MAX)]);
        if missing_count > SEEDS_LISTED_MAX as u64 {
            listed.push_str(&format!(
                ", … ({} more)",
                missing_count - SEEDS_LISTED_MAX as u64
            ));
        }
        return Err(format!(
            "{file}: {} of the scenario's range {range} in none of the reports: {listed} (was a \
             shard left out?)",
            if missing_count == 1 {
                "1 seed".to_string()
            } else {
                format!("{missing_count} seeds")
            },
        ));
    }
    Ok(())
}

/// `"1, 2, 3"`, at most [`SEEDS_LISTED_MAX`] seeds, then `", … (k more)"` for the rest of
/// `seeds`.
fn seed_list(seeds: &[u64]) -> String {
    let mut out: Vec<String> = seeds
        .iter()
        .take(SEEDS_LISTED_MAX)
        .map(u64::to_string)
        .collect();
    if seeds.len() > SEEDS_LISTED_MAX {
        out.push(format!("… ({} more)", seeds.len() - SEEDS_LISTED_MAX));
    }
    out.join(", ")
}

#[cfg(test)]
mod tests;
