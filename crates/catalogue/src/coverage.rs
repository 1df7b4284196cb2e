//! State-space coverage of the catalogue (`reports/coverage.md` and `.json`): per scenario,
//! the abstract protocol states ([`fencesim_check::abstract_state`]) and transitions its seeds
//! reached, whether they had saturated (no state new in the last 10 % of the seeds), and every
//! rare state with a seed that reaches it; over the catalogue, the union of the scenarios'
//! states and transitions (each counted once) and the states only one scenario reaches.
//!
//! It owns only the rendering: the counting is the summaries' ([`StateSpaceAcc`], kept per
//! scenario in the report's `state` and merged exactly across shards), so both files are pure
//! functions of a check report, byte-deterministic (no timestamps, no wall times) and the
//! same whatever `--jobs` or sharding made the report. CI regenerates the catalogue's
//! (`reports/`) with the matrix; the header says so of that copy only.

use std::collections::BTreeMap;

use serde::Serialize;

use fencesim_verdict::{
    check_report::{CheckReport, ScenarioResult},
    summary::{
        state_space::{state_id, StateSpaceAcc, RARE_PERCENT},
        SeedsJson,
    },
};

/// The command that writes the coverage report, as its header says.
pub const COVERAGE_COMMAND: &str =
    "cargo run --release -p fencesim-cli -- check scenarios/ --coverage reports/";

/// The share of a scenario's seed range (in percent, at its end) whose new states say
/// whether the sweep had saturated.
pub const LAST_SHARE_PERCENT: u64 = 10;

/// The last [`LAST_SHARE_PERCENT`] of a scenario's seed range, and what was new in it.
#[derive(Serialize)]
struct LastShare {
    /// The bucket's seeds, `[start, end)`: the last ⌈range/10⌉ seeds of the range.
    seeds: SeedsJson,
    /// States no earlier seed of the range reached.
    new_states: u64,
    /// Transitions no earlier seed of the range reached.
    new_transitions: u64,
}

/// A rare state of one scenario.
#[derive(Serialize)]
struct Rare {
    /// Its canonical text.
    state: String,
    /// FNV-1a 64 of the text ([`state_id`]).
    id: String,
    /// Seeds that reached it.
    seeds: u64,
    /// The smallest seed that reached it.
    first_seed: u64,
    /// The command that replays that seed.
    replay: String,
}

/// One scenario's row. Field order is the JSON field order.
#[derive(Serialize)]
struct Row {
    scenario: String,
    file: String,
    /// The scenario's seed range.
    seeds: SeedsJson,
    /// Seeds run.
    runs: u64,
    /// Distinct abstract states reached (a lower bound when `truncated`).
    states: u64,
    /// Distinct transitions reached (a lower bound when `truncated`).
    transitions: u64,
    /// The summary kept only some of the states or transitions reached.
    truncated: bool,
    /// What the last 10 % of the seeds found that no earlier seed had.
    last_10_percent: LastShare,
    /// States no other scenario of the report reaches.
    states_only_here: u64,
    /// States reached by fewer than 1 % of the runs, fewest first.
    rare: Vec<Rare>,
}

/// A state only one scenario reaches.
#[derive(Serialize)]
struct OnlyOne {
    state: String,
    id: String,
    scenario: String,
}

/// The catalogue's figures.
#[derive(Serialize)]
struct Totals {
    scenarios: u64,
    /// Seeds run, over every scenario.
    runs: u64,
    /// Distinct abstract states over the catalogue: the union of the scenarios' state texts.
    states: u64,
    /// Distinct transitions over the catalogue: the union of the scenarios' transitions.
    transitions: u64,
    /// Some scenario's summary kept only some of what it reached: the counts are lower bounds.
    truncated: bool,
    /// States exactly one scenario reaches.
    states_in_one_scenario: u64,
    /// Rare states, summed over scenarios (a state rare in two scenarios counts twice).
    rare_states: u64,
    /// Scenarios with at least one rare state.
    scenarios_with_rare_states: u64,
    /// Scenarios whose last 10 % of seeds still found a new state.
    unsaturated_scenarios: u64,
}

/// The whole report. Field order is the JSON field order.
#[derive(Serialize)]
struct Coverage {
    generated_by: &'static str,
    /// A state is rare in a scenario when fewer than this share of its runs (percent) reach it.
    rare_percent: u64,
    /// The share of each seed range (percent, at its end) `last_10_percent` counts.
    last_share_percent: u64,
    totals: Totals,
    scenarios: Vec<Row>,
    /// Every state exactly one scenario reaches, by scenario, then state text.
    only_in_one_scenario: Vec<OnlyOne>,
}

/// `[start + span - ⌈span/10⌉, end)`: the last tenth of `seeds`, rounded up.
fn last_share(seeds: SeedsJson) -> SeedsJson {
    let span = seeds.end.saturating_sub(seeds.start);
    let bucket = span.div_ceil(100 / LAST_SHARE_PERCENT);
    SeedsJson {
        start: seeds.end.saturating_sub(bucket).max(seeds.start),
        end: seeds.end,
    }
}

fn row(result: &ScenarioResult, only_here: u64) -> Row {
    let summary = &result.summary;
    let acc: &StateSpaceAcc = result.state.state_space();
    let bucket = last_share(summary.seeds);
    let in_bucket = |first_seed: u64| first_seed >= bucket.start && first_seed < bucket.end;
    let space = &summary.state_space;
    Row {
        scenario: summary.scenario.clone(),
        file: result.file.clone(),
        seeds: summary.seeds,
        runs: summary.runs,
        states: space.states,
        transitions: space.transitions,
        truncated: space.truncated,
        last_10_percent: LastShare {
            seeds: bucket,
            new_states: acc
                .states()
                .values()
                .filter(|r| in_bucket(r.first_seed))
                .count() as u64,
            new_transitions: acc
                .transitions()
                .values()
                .filter(|r| in_bucket(r.first_seed))
                .count() as u64,
        },
        states_only_here: only_here,
        rare: space
            .rare
            .iter()
            .map(|rare| Rare {
                state: rare.state.clone(),
                id: rare.id.clone(),
                seeds: rare.seeds,
                first_seed: rare.first_seed,
                replay: result.replay_command(rare.first_seed),
            })
            .collect(),
    }
}

fn coverage(report: &CheckReport) -> Coverage {
    // State text → the scenarios reaching it (report order); transitions only need the union.
    let mut reached_by: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut transitions: BTreeMap<&str, ()> = BTreeMap::new();
    for result in &report.scenarios {
        let acc = result.state.state_space();
        for text in acc.states().keys() {
            reached_by
                .entry(text)
                .or_default()
                .push(&result.summary.scenario);
        }
        for key in acc.transitions().keys() {
            transitions.insert(key, ());
        }
    }
    let mut only_in_one: Vec<OnlyOne> = reached_by
        .iter()
        .filter(|(_, scenarios)| scenarios.len() == 1)
        .map(|(text, scenarios)| OnlyOne {
            state: text.to_string(),
            id: state_id(text),
            scenario: scenarios[0].to_string(),
        })
        .collect();
    only_in_one.sort_by(|a, b| (&a.scenario, &a.state).cmp(&(&b.scenario, &b.state)));
    let mut only_here: BTreeMap<&str, u64> = BTreeMap::new();
    for only in &only_in_one {
        *only_here.entry(&only.scenario).or_default() += 1;
    }
    let rows: Vec<Row> = report
        .scenarios
        .iter()
        .map(|result| {
            let count = only_here
                .get(result.summary.scenario.as_str())
                .copied()
                .unwrap_or(0);
            row(result, count)
        })
        .collect();
    let totals = Totals {
        scenarios: rows.len() as u64,
        runs: rows.iter().map(|r| r.runs).sum(),
        states: reached_by.len() as u64,
        transitions: transitions.len() as u64,
        truncated: rows.iter().any(|r| r.truncated),
        states_in_one_scenario: only_in_one.len() as u64,
        rare_states: rows.iter().map(|r| r.rare.len() as u64).sum(),
        scenarios_with_rare_states: rows.iter().filter(|r| !r.rare.is_empty()).count() as u64,
        unsaturated_scenarios: rows
            .iter()
            .filter(|r| r.last_10_percent.new_states > 0)
            .count() as u64,
    };
    Coverage {
        generated_by: COVERAGE_COMMAND,
        rare_percent: RARE_PERCENT,
        last_share_percent: LAST_SHARE_PERCENT,
        totals,
        scenarios: rows,
        only_in_one_scenario: only_in_one,
    }
}

/// `n` and the plural or singular noun.
fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A count, `+` after it when it is a lower bound.
fn bound(n: u64, truncated: bool) -> String {
    format!("{n}{}", if truncated { "+" } else { "" })
}

/// `| a | b |` and a newline, each cell made safe for a table.
fn table_line(cells: impl Iterator<Item = String>) -> String {
    let cells: Vec<String> = cells
        .map(|cell| cell.replace('|', "\\|").replace(['\n', '\r'], " "))
        .collect();
    format!("| {} |\n", cells.join(" | "))
}

/// Text in backticks for Markdown (a state text holds none; any is replaced).
fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', "'"))
}

/// The coverage report as Markdown: header, catalogue totals, one table row per scenario,
/// then every rare state per scenario with the command replaying a seed that reaches it. (The
/// states only one scenario reaches are counted here and listed in [`coverage_json`].)
pub fn coverage_markdown(report: &CheckReport) -> String {
    let coverage = coverage(report);
    let mut out = String::from("# State-space coverage\n\n");
    header_and_totals(&mut out, &coverage.totals);
    scenario_table(&mut out, &coverage.scenarios);
    rare_states(&mut out, &coverage.scenarios);
    out
}

/// The header paragraph and the catalogue's figures.
fn header_and_totals(out: &mut String, totals: &Totals) {
    let at_least = if totals.truncated { "at least " } else { "" };
    out.push_str(&format!(
        "Written by `fencesim check --coverage` from the scenarios below. The catalogue's \
         copy, `reports/coverage.md`, is made by `{COVERAGE_COMMAND}` and CI fails if it \
         differs: do not edit that one by hand. An abstract state is what of a run \
         matters to a lease + fencing protocol, names and numbers forgotten: per lease scope, \
         the service's lease (free, held, double), each resource's high-water token against \
         the newest grant, the writes in flight, and each worker believing it holds the scope \
         by role and process (`crates/check/src/abstract_state.rs` defines them); a transition \
         is a pair of consecutive different states of one run. A state is rare in a scenario \
         when fewer than {RARE_PERCENT} % of its seeds reach it (so only a scenario of more \
         than 100 seeds can have one). Every figure is exact, counted per seed in seed order \
         and merged exactly across `--shard`s: the same with any `--jobs`, and no wall-clock \
         figure.\n\n"
    ));

    out.push_str("## Catalogue\n\n");
    out.push_str(&format!(
        "- {} and {} run\n",
        count(totals.scenarios, "scenario"),
        count(totals.runs, "seed")
    ));
    out.push_str(&format!(
        "- {at_least}{} distinct abstract states and {at_least}{} distinct transitions across \
         the catalogue (the union of the scenarios': a state reached by several scenarios is \
         counted once)\n",
        totals.states, totals.transitions
    ));
    out.push_str(&format!(
        "- {} reached by only one scenario (each scenario's count is its `only here` below; \
         the states are listed in `coverage.json`, `only_in_one_scenario`)\n",
        count(totals.states_in_one_scenario, "state")
    ));
    out.push_str(&format!(
        "- {} in {} (a state rare in two scenarios counts twice)\n",
        count(totals.rare_states, "rare state"),
        count(totals.scenarios_with_rare_states, "scenario")
    ));
    out.push_str(&format!(
        "- saturated: {} of {} (no new state in the last {LAST_SHARE_PERCENT} % of the \
         seeds); not saturated: {} (a new state in the last {LAST_SHARE_PERCENT} %: more seeds \
         may reach more)\n",
        totals.scenarios - totals.unsaturated_scenarios,
        count(totals.scenarios, "scenario"),
        totals.unsaturated_scenarios
    ));
    if totals.truncated {
        out.push_str(
            "- a figure marked `+` is a lower bound: that scenario reached more states or \
             transitions than a summary keeps\n",
        );
    }
    out.push('\n');
}

/// The table, one row per scenario.
fn scenario_table(out: &mut String, rows: &[Row]) {
    out.push_str("## Per scenario\n\n");
    out.push_str(&format!(
        "`last {LAST_SHARE_PERCENT} %`: the last ⌈seeds/10⌉ seeds of the scenario's range \
         (the bucket); `new states in it`: states no earlier seed of the range reached (0: the \
         sweep's states had saturated); `only here`: states no other scenario reaches.\n\n"
    ));
    let header = [
        "scenario",
        "seeds",
        "states",
        "transitions",
        "last 10 %",
        "new states in it",
        "only here",
        "rare states",
    ];
    out.push_str(&table_line(header.iter().map(|cell| cell.to_string())));
    out.push_str(&table_line(header.iter().map(|_| "---".to_string())));
    for row in rows {
        let bucket = &row.last_10_percent.seeds;
        out.push_str(&table_line(
            [
                row.scenario.clone(),
                row.runs.to_string(),
                bound(row.states, row.truncated),
                bound(row.transitions, row.truncated),
                format!(
                    "{} ({}..{})",
                    count(bucket.end - bucket.start, "seed"),
                    bucket.start,
                    bucket.end
                ),
                row.last_10_percent.new_states.to_string(),
                row.states_only_here.to_string(),
                row.rare.len().to_string(),
            ]
            .into_iter(),
        ));
    }
    out.push('\n');
}

/// Every rare state per scenario, then the scenarios without one.
fn rare_states(out: &mut String, rows: &[Row]) {
    out.push_str("## Rare states\n\n");
    out.push_str(&format!(
        "Per scenario, every state fewer than {RARE_PERCENT} % of its seeds reach, fewest \
         first: the seeds reaching it, the first of them, and the command that replays that \
         seed.\n"
    ));
    for row in rows.iter().filter(|r| !r.rare.is_empty()) {
        out.push_str(&format!(
            "\n### {}\n\n{} of {}:\n\n",
            row.scenario,
            count(row.rare.len() as u64, "rare state"),
            count(row.runs, "seed")
        ));
        out.push_str(&table_line(
            ["seeds", "first seed", "state", "replay"]
                .iter()
                .map(|cell| cell.to_string()),
        ));
        out.push_str(&table_line((0..4).map(|_| "---".to_string())));
        for rare in &row.rare {
            out.push_str(&table_line(
                [
                    rare.seeds.to_string(),
                    rare.first_seed.to_string(),
                    code(&rare.state),
                    code(&rare.replay),
                ]
                .into_iter(),
            ));
        }
    }
    let without: Vec<&Row> = rows.iter().filter(|r| r.rare.is_empty()).collect();
    if !without.is_empty() {
        // A scenario of at most 100 runs has none: one seed is already 1 % of them.
        let (can, cannot): (Vec<&Row>, Vec<&Row>) =
            without.iter().partition(|r| r.runs * RARE_PERCENT > 100);
        let mut parts = Vec::new();
        if !can.is_empty() {
            let names: Vec<String> = can.iter().map(|r| code(&r.scenario)).collect();
            parts.push(format!("{} (more than 100 seeds)", names.join(", ")));
        }
        if !cannot.is_empty() {
            parts.push(format!(
                "{} of at most 100 seeds, where one seed is already {RARE_PERCENT} % or more",
                cannot.len()
            ));
        }
        let which = if without.len() == rows.len() {
            "any of the"
        } else {
            "the other"
        };
        out.push_str(&format!(
            "\nNo rare state in {which} {}: {}.\n",
            count(without.len() as u64, "scenario"),
            parts.join("; ")
        ));
    }
}

/// The version of the `coverage.json` format this build writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The coverage report as JSON: the Markdown's figures as data, after `schema_version` and
/// `producer`. Pretty, with a trailing newline.
pub fn coverage_json(report: &CheckReport) -> String {
    fencesim_model::version::versioned_json(SCHEMA_VERSION, &coverage(report))
}

#[cfg(test)]
mod tests;
