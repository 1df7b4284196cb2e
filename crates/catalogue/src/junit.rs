//! JUnit XML for CI systems (`fencesim check --junit FILE`): one testcase per scenario, a
//! failed verdict as a `<failure>` that ends with the command replaying it, and one testcase
//! per recorded seed re-run (the scenario's regressions file), failed while it still
//! contradicts the expectation, with its own reproduce line (`--set` included).
//!
//! The wall times are the caller's (measured at the edge); everything else is a pure function
//! of the report.

use std::collections::BTreeMap;

use fencesim_model::Invariant;
use fencesim_scenario::Outcome;

use fencesim_verdict::{
    check_report::{CheckReport, ScenarioResult},
    recorded::RecordedRun,
    summary::render_summary,
};

/// Most failing seeds a failure message lists.
const FAILING_SEEDS_LISTED_MAX: usize = 20;

/// The JUnit XML of `report`: one `<testsuite name="fencesim">` with one `<testcase>` per
/// scenario, in report order, each followed by one per recorded seed it re-ran.
///
/// `wall_seconds` holds each scenario's wall time, keyed by its `file` (or, failing that, its
/// scenario name); a scenario in neither gets 0. A scenario that failed
/// ([`ScenarioResult::verdict`]) gets a `<failure>` whose message is the expectation detail
/// and whose text adds the failing seeds and `fencesim replay <file> --seed <seed>`; a
/// recorded seed that still contradicts the expectation gets one naming what it violates and
/// its replay command. The scenario description and the console summary go in
/// `<system-out>`.
pub fn junit_xml(report: &CheckReport, wall_seconds: &BTreeMap<String, f64>) -> String {
    junit_xml_skipping(report, wall_seconds, &[])
}

/// A scenario a `check` did not run, and why (`--fail-fast` stopped before it).
#[derive(Clone, Debug)]
pub struct Skipped {
    /// Its scenario name.
    pub name: String,
    /// Its file as given.
    pub file: String,
    /// Why it was not run.
    pub reason: String,
}

/// [`junit_xml`] with a `<skipped/>` testcase for each scenario the run left out, so a CI's
/// test count stays the catalogue's and the report says which were not run.
pub fn junit_xml_skipping(
    report: &CheckReport,
    wall_seconds: &BTreeMap<String, f64>,
    skipped: &[Skipped],
) -> String {
    let seconds = |result: &ScenarioResult| seconds_of(wall_seconds, result);
    let sharded = report.shard.is_some();
    // A scenario's own testcase fails by its sweep; each recorded seed by itself.
    let sweep_failed = |result: &ScenarioResult| result.sweep_verdict(sharded).failed();
    let failed_sweeps = report
        .scenarios
        .iter()
        .filter(|result| sweep_failed(result))
        .count();
    let failed_recorded: usize = report
        .scenarios
        .iter()
        .map(|result| result.recorded_failing().count())
        .sum();
    let tests: usize = report
        .scenarios
        .iter()
        .map(|result| 1 + result.recorded.len())
        .sum::<usize>()
        + skipped.len();
    let total_seconds: f64 = report.scenarios.iter().map(seconds).sum();

    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuite name=\"fencesim\" tests=\"{tests}\" failures=\"{}\" errors=\"0\" \
         skipped=\"{}\" time=\"{total_seconds:.3}\">\n",
        failed_sweeps + failed_recorded,
        skipped.len()
    ));
    if let Some(shard) = &report.shard {
        out.push_str(&format!(
            "  <properties>\n    <property name=\"shard\" value=\"{}\"/>\n  </properties>\n",
            escape(shard)
        ));
    }
    for result in &report.scenarios {
        let summary = &result.summary;
        out.push_str(&format!(
            "  <testcase classname=\"fencesim.scenarios\" name=\"{}\" file=\"{}\" \
             time=\"{:.3}\">\n",
            escape(&summary.scenario),
            escape(&result.file),
            seconds(result)
        ));
        if sweep_failed(result) {
            out.push_str(&format!(
                "    <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                summary.verdict().word(),
                escape(&summary.expectation_detail),
                escape_text(&failure_text(result))
            ));
        }
        out.push_str(&format!(
            "    <system-out>{}\n\n{}\n</system-out>\n",
            escape_text(result.scenario.description.trim_end()),
            escape_text(&render_summary(summary))
        ));
        out.push_str("  </testcase>\n");
        for run in &result.recorded {
            out.push_str(&recorded_case(result, run));
        }
    }
    out.extend(skipped.iter().map(skipped_case));
    out.push_str("</testsuite>\n");
    out
}

/// The testcase of a scenario not run: `<skipped message="why"/>`.
fn skipped_case(case: &Skipped) -> String {
    format!(
        "  <testcase classname=\"fencesim.scenarios\" name=\"{}\" file=\"{}\" \
         time=\"0.000\">\n    <skipped message=\"{}\"/>\n  </testcase>\n",
        escape(&case.name),
        escape(&case.file),
        escape(&case.reason)
    )
}

/// A scenario's wall time in seconds, by file or else by name (0 when unknown or not a
/// positive number).
fn seconds_of(wall_seconds: &BTreeMap<String, f64>, result: &ScenarioResult) -> f64 {
    let seconds = wall_seconds
        .get(&result.file)
        .or_else(|| wall_seconds.get(&result.scenario.name))
        .copied()
        .unwrap_or(0.0);
    if seconds.is_finite() && seconds > 0.0 {
        seconds
    } else {
        0.0
    }
}

/// One recorded seed's testcase: `NAME recorded seed N`, a `<failure>` while it still
/// contradicts the expectation, what it did in `<system-out>`.
fn recorded_case(result: &ScenarioResult, run: &RecordedRun) -> String {
    let replay = run.replay_command(&result.file);
    let mut out = format!(
        "  <testcase classname=\"fencesim.regressions\" name=\"{} recorded seed {}{}\" \
         file=\"{}\" time=\"0.000\">\n",
        escape(&result.summary.scenario),
        run.seed,
        escape(&run.under()),
        escape(&result.file)
    );
    if run.contradicts {
        let message = format!(
            "recorded seed {} still contradicts the expectation",
            run.seed
        );
        out.push_str(&format!(
            "    <failure type=\"REGRESSION\" message=\"{}\">{}</failure>\n",
            escape(&message),
            escape_text(&format!(
                "{}\n{}\nreplay: {replay}\n",
                run.detail,
                run.how()
            ))
        ));
    }
    out.push_str(&format!(
        "    <system-out>recorded seed {} (#{} of the regressions file){}: {}\nreplay: {}\n</system-out>\n",
        run.seed,
        run.index,
        escape_text(&run.under()),
        escape_text(&run.how()),
        escape_text(&replay)
    ));
    out.push_str("  </testcase>\n");
    out
}

/// The detail, the seeds that contradict the expectation, and the command replaying the
/// first of them (or the first seed of the range when none does: a vacuous pass or a
/// violation that never happened).
fn failure_text(result: &ScenarioResult) -> String {
    let seeds = failing_seeds(result);
    let listed: Vec<String> = seeds
        .iter()
        .take(FAILING_SEEDS_LISTED_MAX)
        .map(u64::to_string)
        .collect();
    let seeds_line = if seeds.is_empty() {
        "none".to_string()
    } else if seeds.len() > listed.len() {
        format!(
            "{}, … ({} more)",
            listed.join(", "),
            seeds.len() - listed.len()
        )
    } else {
        listed.join(", ")
    };
    let replay_seed = seeds
        .first()
        .copied()
        .unwrap_or(result.scenario.seeds.start);
    format!(
        "{}\nfailing seeds ({} of {} run): {seeds_line}\nreplay: {}\n",
        result.summary.expectation_detail,
        seeds.len(),
        result.summary.runs,
        result.replay_command(replay_seed)
    )
}

/// Seeds, ascending, that contradict the expectation: a panic, or a violated invariant the
/// expectation does not list (for `safe`, any violation). From the result's state, which
/// lists every seed that panicked or violated each invariant.
fn failing_seeds(result: &ScenarioResult) -> Vec<u64> {
    let expected = match &result.scenario.expect.outcome {
        Outcome::Safe => Vec::new(),
        Outcome::Violates(list) => list.clone(),
    };
    let state = &result.state;
    let mut seeds: Vec<u64> = state.panicked().iter().map(|(seed, _)| *seed).collect();
    for invariant in Invariant::ALL {
        if !expected.contains(&invariant) {
            seeds.extend_from_slice(state.violating(invariant));
        }
    }
    seeds.sort_unstable();
    seeds.dedup();
    seeds
}

/// `text` escaped for an XML 1.0 attribute value: see [`escape_with`].
fn escape(text: &str) -> String {
    escape_with(text, true)
}

/// `text` escaped for XML 1.0 element content: see [`escape_with`].
fn escape_text(text: &str) -> String {
    escape_with(text, false)
}

/// `text` with the five special characters escaped, characters XML 1.0 cannot carry at all
/// (control characters other than tab and line breaks) replaced with U+FFFD, and, in an
/// attribute, tab and line breaks as character references (a parser would normalize them to
/// spaces otherwise).
fn escape_with(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
