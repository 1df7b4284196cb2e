//! The report of one `fencesim check` run over many scenarios (`--json`), and `merge`, which
//! combines the partial reports of `--shard K/N` runs into the report an unsharded run gives.
//!
//! A report keeps every seed's outcome, not only the summaries: summaries aggregate (counts,
//! percentiles, first seeds), so only the outcomes can be merged exactly. The merged report is
//! re-summarized from the union of outcomes and is byte-identical to the unsharded one.

use std::collections::BTreeMap;

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::{Outcome, Scenario, SeedRange};
use serde::{Deserialize, Serialize};

use crate::summary::{summarize, Summary};

/// One scenario file's result. Field order is the JSON field order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ScenarioResult {
    /// The scenario file as given on the command line.
    pub file: String,
    /// The resolved scenario (its hash is `summary.scenario_hash`).
    pub scenario: Scenario,
    /// The scenario over its seeds.
    pub summary: Summary,
    /// Every seed's outcome, sorted by seed.
    pub outcomes: Vec<SeedOutcome>,
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
    pub fn seeds(self, range: SeedRange) -> impl Iterator<Item = u64> {
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

/// The result of `scenario` over `outcomes` (in any order), summarized over `scenario.seeds`.
pub fn scenario_result(
    file: &str,
    scenario: &Scenario,
    mut outcomes: Vec<SeedOutcome>,
) -> ScenarioResult {
    // The trace hash breaks ties so even a duplicated seed orders deterministically.
    outcomes.sort_by(|a, b| (a.seed, &a.trace_hash).cmp(&(b.seed, &b.trace_hash)));
    ScenarioResult {
        file: file.to_string(),
        scenario: scenario.clone(),
        summary: summarize(scenario, scenario.seeds, &outcomes),
        outcomes,
    }
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
/// `sequence`, `map`) in what a user reads (issue 9).
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
/// must agree, no seed may appear twice, and together they must hold every seed of the
/// scenario's range, exactly once (a shard left out would otherwise pass silently with fewer seeds). The union of
/// outcomes is re-summarized; the result has no `shard`.
pub fn merge(parts: Vec<CheckReport>) -> Result<CheckReport, String> {
    if parts.is_empty() {
        return Err("merge: no reports to merge".to_string());
    }
    // Shards are matched by the scenario's name (and must agree on its hash), not by the
    // path as typed: `catA/x.toml` and `./catA/x.toml` are one scenario (issue 9). Scenarios
    // keep the order in which the reports first list them (the unsharded run's order).
    let mut by_name: Vec<(String, Vec<ScenarioResult>)> = Vec::new();
    for part in parts {
        for result in part.scenarios {
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

fn merge_file(file: &str, results: Vec<ScenarioResult>) -> Result<ScenarioResult, String> {
    let mut results = results.into_iter();
    let first = results
        .next()
        .expect("a file is grouped with at least one result");
    let scenario = first.scenario;
    let hash = first.summary.scenario_hash;
    // A report is input: its range is re-checked against the limit before anything is
    // allocated or iterated over it (an edited range could otherwise ask for 2^64 seeds).
    let range_ok = |range: SeedRange| {
        SeedRange::parse(&range.to_string())
            .map_err(|expected| format!("{file}: scenario.seeds: {expected}"))
    };
    range_ok(scenario.seeds)?;

    let mut outcomes: BTreeMap<u64, SeedOutcome> = BTreeMap::new();
    let mut add = |outcomes_of_part: Vec<SeedOutcome>| -> Result<(), String> {
        for outcome in outcomes_of_part {
            let seed = outcome.seed;
            if outcomes.insert(seed, outcome).is_some() {
                return Err(format!(
                    "{file}: seed {seed} appears twice in the reports to merge (are two shards \
                     the same, or overlapping?)"
                ));
            }
        }
        Ok(())
    };
    add(first.outcomes)?;
    for result in results {
        range_ok(result.scenario.seeds)?;
        if result.summary.scenario_hash != hash {
            return Err(format!(
                "{file}: the reports ran different versions of scenario {:?}: hash {} and \
                 hash {} (were the shards run from different commits?)",
                scenario.name, hash, result.summary.scenario_hash
            ));
        }
        add(result.outcomes)?;
    }

    let range = scenario.seeds;
    let outside: Vec<u64> = outcomes
        .keys()
        .copied()
        .filter(|seed| !(range.start..range.end).contains(seed))
        .collect();
    if !outside.is_empty() {
        return Err(format!(
            "{file}: seeds outside the scenario's range {range}: {}",
            seed_list(&outside)
        ));
    }
    let missing: Vec<u64> = range
        .iter()
        .filter(|seed| !outcomes.contains_key(seed))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{file}: {} of the scenario's range {range} in none of the reports: {} (was a \
             shard left out?)",
            if missing.len() == 1 {
                "1 seed".to_string()
            } else {
                format!("{} seeds", missing.len())
            },
            seed_list(&missing)
        ));
    }

    Ok(scenario_result(
        file,
        &scenario,
        outcomes.into_values().collect(),
    ))
}

/// `"1, 2, 3"`, at most [`SEEDS_LISTED_MAX`] seeds, then `", … (k more)"`.
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
