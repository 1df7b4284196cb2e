//! The report of one `fencesim check` run over many scenarios (`--json`), and `merge`, which
//! combines the partial reports of `--shard K/N` runs into the report an unsharded run gives.
//!
//! A report keeps, per scenario, the [`SummaryState`] its summary is finished from (counts,
//! seed lists of the failing seeds, coverage, metric aggregates with histograms and exact
//! sums, the trace digest: what merges exactly), in full only the outcomes a reader needs to
//! see a failure ([`ScenarioResult::failures`]), and its recorded seeds' re-runs
//! ([`ScenarioResult::recorded`]). The summary itself is not written: it is a pure function
//! of the state, finished again when a report is read, so a report and the memory of `check`
//! grow with the failing seeds, not with the passing ones. `merge` combines the parts' states
//! and re-finishes the summaries; the merged report is byte-identical to the unsharded one.
//!
//! One verdict per scenario, [`ScenarioResult::verdict`]: its sweep and its recorded seeds
//! together decide the table's row, the counts, JUnit, `all_met` and the exit code.

use std::collections::BTreeMap;

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::{Expect, Outcome, Scenario, SeedRange};

use crate::{
    contradiction::contradicts,
    recorded::RecordedRun,
    summary::{ExpectationVerdict, Summary, SummaryBuilder, SummaryState},
};

mod json;
pub use json::{report_from_json, report_to_json, same_schema, ReportHeader, SCHEMA_VERSION};

/// One scenario file's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioResult {
    /// The scenario file as given on the command line.
    pub file: String,
    /// The `--set FIELD=VALUE` overrides the scenario was loaded with, in order (absent when
    /// none): part of every replay command, which would replay another scenario without them.
    pub overrides: Vec<String>,
    /// The resolved scenario (its hash is `summary.scenario_hash`).
    pub scenario: Scenario,
    /// The scenario over its seeds (not written: finished from `state` when read).
    pub summary: Summary,
    /// What the summary was finished from, and what `merge` combines.
    pub state: SummaryState,
    /// In full, sorted by seed: the outcomes of the seeds that contradict the expectation by
    /// themselves (see [`contradicts`]) and of the first seed violating each invariant (its
    /// violations with their evidence). Every other seed is only counted in `state`.
    pub failures: Vec<SeedOutcome>,
    /// The recorded seeds (the scenario's regressions file) this run re-ran, by index: all
    /// of them, or a shard's share.
    pub recorded: Vec<RecordedRun>,
    /// How many seeds the regressions file holds.
    pub recorded_total: usize,
}

/// A scenario's verdict in a report: the table's result column, JUnit, `all_met`, the exit
/// code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioVerdict {
    /// The expectation was met and no recorded seed contradicts it.
    Ok,
    /// The expectation was not met, or a recorded seed still contradicts it, or (a shard)
    /// something failed that no other shard can undo.
    Failed,
    /// The invariants behaved, but a required coverage condition never happened.
    Vacuous,
    /// A shard's part with nothing failed for certain: `merge` decides.
    Partial,
}

impl ScenarioVerdict {
    /// Whether the scenario failed (the exit code is 1).
    pub fn failed(self) -> bool {
        matches!(self, ScenarioVerdict::Failed | ScenarioVerdict::Vacuous)
    }

    /// `ok`, `FAILED`, `VACUOUS` or `partial`: the `check` table's result column.
    pub fn label(self) -> &'static str {
        match self {
            ScenarioVerdict::Ok => "ok",
            ScenarioVerdict::Failed => "FAILED",
            ScenarioVerdict::Vacuous => "VACUOUS",
            ScenarioVerdict::Partial => "partial",
        }
    }
}

impl ScenarioResult {
    /// The command that replays `seed` of this scenario, overrides included.
    pub fn replay_command(&self, seed: u64) -> String {
        fencesim_scenario::replay_command_with(&self.file, seed, &self.overrides)
    }

    /// Did this scenario fail? Its sweep ([`ScenarioResult::sweep_verdict`]) and its recorded
    /// seeds together: a recorded seed that still contradicts the expectation fails it, in a
    /// shard's part too (one that passes now fails nothing).
    pub fn verdict(&self, sharded: bool) -> ScenarioVerdict {
        let sweep = self.sweep_verdict(sharded);
        if !sweep.failed() && self.recorded_failing().next().is_some() {
            ScenarioVerdict::Failed
        } else {
            sweep
        }
    }

    /// The verdict of the sweep alone. In a shard's part (`sharded`), only what no other
    /// shard can undo fails (a panic, a runaway, an invariant or a `never` condition the
    /// expectation forbids); the rest is `Partial`, for `merge` to decide.
    pub fn sweep_verdict(&self, sharded: bool) -> ScenarioVerdict {
        if sharded {
            return if definitely_failed(self) {
                ScenarioVerdict::Failed
            } else {
                ScenarioVerdict::Partial
            };
        }
        match self.summary.verdict() {
            ExpectationVerdict::Met => ScenarioVerdict::Ok,
            ExpectationVerdict::Vacuous => ScenarioVerdict::Vacuous,
            ExpectationVerdict::NotMet => ScenarioVerdict::Failed,
        }
    }

    /// The recorded seeds re-run that still contradict the expectation.
    pub fn recorded_failing(&self) -> impl Iterator<Item = &RecordedRun> {
        self.recorded.iter().filter(|run| run.contradicts)
    }
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
            recorded: Vec::new(),
            recorded_total: 0,
        }
    }
}

/// The result of a `fencesim check` run (or of a merge).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// `"K/N"` for the partial report of a sharded run; `None` for a whole (or merged) run.
    pub shard: Option<String>,
    /// Sorted by `file`.
    pub scenarios: Vec<ScenarioResult>,
    /// Whether no scenario failed ([`ScenarioResult::verdict`]; true when there are none). In
    /// a shard's part: no scenario failed for certain.
    pub all_met: bool,
}

impl CheckReport {
    /// Each scenario's verdict, in report order.
    pub fn verdicts(&self) -> impl Iterator<Item = (&ScenarioResult, ScenarioVerdict)> {
        let sharded = self.shard.is_some();
        self.scenarios
            .iter()
            .map(move |result| (result, result.verdict(sharded)))
    }

    /// The scenarios that failed, in report order.
    pub fn failed(&self) -> Vec<&ScenarioResult> {
        self.verdicts()
            .filter(|(_, verdict)| verdict.failed())
            .map(|(result, _)| result)
            .collect()
    }
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
        // Digits only: `u64`'s parser would take `+2`, and a space is a typo.
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u64>().ok())
                .flatten()
                .ok_or_else(bad)
        };
        let (k, n) = (number(k)?, number(n)?);
        if k == 0 || n == 0 || k > n || n > max {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// Whether this slice re-runs the `index`-th recorded seed of a regressions file (0-based):
    /// recorded seeds are split like the sweep's, so each is re-run by exactly one shard.
    pub fn takes_recorded(self, index: usize) -> bool {
        index as u64 % self.n == self.k - 1
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

/// Whether a shard's partial sweep has failed whatever the other shards hold: a panic, or an
/// invariant the expectation does not allow, or a `never` condition that happened. Missing
/// violations and missing coverage can still be supplied by another slice, so they wait for
/// [`merge`].
fn definitely_failed(result: &ScenarioResult) -> bool {
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

/// The report of `results` (in any order): sorted by file, `all_met` computed from each
/// scenario's verdict (a shard's part when `shard` is set).
pub fn check_report(shard: Option<String>, mut results: Vec<ScenarioResult>) -> CheckReport {
    // Names break ties so that even a file given twice orders deterministically.
    results.sort_by(|a, b| (&a.file, &a.scenario.name).cmp(&(&b.file, &b.scenario.name)));
    let sharded = shard.is_some();
    let all_met = results
        .iter()
        .all(|result| !result.verdict(sharded).failed());
    CheckReport {
        shard,
        scenarios: results,
        all_met,
    }
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
    check_recorded_part(result, shard)?;
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
                "{file}: the reports ran scenario {:?} with different --set overrides: {} (run \
                 every shard with the same --set arguments)",
                scenario.name,
                override_difference(&overrides, &result.overrides)
            ));
        }
        result
            .state
            .check_consistent()
            .map_err(|expected| format!("{file}: {expected}"))?;
    }
    check_seeds_counted_once(file, range, &results)?;
    let recorded_total = results[0].recorded_total;
    let recorded = merge_recorded(file, &results)?;

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
        recorded,
        recorded_total,
    })
}

/// Where two parts' `--set` lists differ: each override one part has and the other lacks,
/// by field (`--set lease.ttl_ms=5000 in one, --set lease.ttl_ms=6000 in the other`).
fn override_difference(first: &[String], other: &[String]) -> String {
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter()
            .filter(|o| !b.contains(o))
            .map(|o| format!("--set {o}"))
            .collect()
    };
    let side = |list: Vec<String>| {
        if list.is_empty() {
            "nothing".to_string()
        } else {
            list.join(" ")
        }
    };
    let (a, b) = (only(first, other), only(other, first));
    if a.is_empty() && b.is_empty() {
        // The same overrides in another order (a later one wins, so order matters).
        return format!(
            "the same overrides in another order: {} in one, {} in the other",
            first.join(" "),
            other.join(" ")
        );
    }
    format!("{} in one, {} in the other", side(a), side(b))
}

/// What `merge` verifies of a part's recorded seeds: at most a regressions file's worth,
/// each index once, ascending, within the file, and (a shard) each one its shard re-runs.
fn check_recorded_part(result: &ScenarioResult, shard: Option<Shard>) -> Result<(), String> {
    let file = &result.file;
    let total = result.recorded_total;
    if total > crate::recorded::MAX_ENTRIES {
        return Err(format!(
            "{file}: recorded_total: expected at most {} recorded seeds, got {total}",
            crate::recorded::MAX_ENTRIES
        ));
    }
    let indices: Vec<usize> = result.recorded.iter().map(|run| run.index).collect();
    if indices.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(format!(
            "{file}: recorded: expected re-runs in ascending index order, each once"
        ));
    }
    if let Some(index) = indices
        .iter()
        .find(|&&index| index >= total || shard.is_some_and(|shard| !shard.takes_recorded(index)))
    {
        return Err(format!(
            "{file}: recorded: expected only the indices of {}the {total} recorded seeds, got \
             {index} (was the report edited?)",
            shard.map_or(String::new(), |shard| format!("shard {shard}'s share of "))
        ));
    }
    Ok(())
}

/// The parts' recorded seeds together: every one of the file's re-run exactly once, in index
/// order (the unsharded run's), and every part counting the same file.
fn merge_recorded(file: &str, results: &[ScenarioResult]) -> Result<Vec<RecordedRun>, String> {
    let total = results[0].recorded_total;
    if let Some(other) = results.iter().find(|r| r.recorded_total != total) {
        return Err(format!(
            "{file}: the reports re-ran different regressions files: one holds {total} recorded \
             seeds, another {} (were the shards run from different commits?)",
            other.recorded_total
        ));
    }
    let mut runs: Vec<RecordedRun> = results
        .iter()
        .flat_map(|r| r.recorded.iter().cloned())
        .collect();
    runs.sort_by_key(|run| run.index);
    for (expected, run) in runs.iter().enumerate() {
        if run.index != expected {
            let what = if run.index < expected {
                format!("recorded seed #{} appears twice", run.index)
            } else {
                format!("recorded seed #{expected} is in none of them")
            };
            return Err(format!(
                "{file}: {what} in the reports to merge (a shard left out, or merged twice?)"
            ));
        }
    }
    if runs.len() != total {
        return Err(format!(
            "{file}: recorded seed #{} is in none of the reports to merge (was a shard left \
             out?)",
            runs.len()
        ));
    }
    Ok(runs)
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
