//! `check.json`, the file form of a [`CheckReport`]: a header (`schema_version`, `producer`,
//! `shard`, `all_met`), then one line per scenario (compact JSON: its file, overrides,
//! verdict, scenario hash, recorded seeds' re-runs, scenario, summary state and kept
//! outcomes). Not the summary: it is finished again from the state when the report is read
//! (`merge` re-finishes it anyway), which is most of what a pretty report used to repeat.

use fencesim_check::SeedOutcome;
use fencesim_scenario::{Scenario, SeedRange};
use serde::{Deserialize, Serialize};

use super::{CheckReport, ScenarioResult};
use crate::{recorded::RecordedRun, summary::SummaryState};

/// The version of the `check.json` format this build writes and reads. Reports without one
/// were written before the format had a version and are refused, as are other versions.
pub const SCHEMA_VERSION: u32 = 1;

/// One scenario as the file holds it. Field order is the JSON field order.
#[derive(Serialize)]
struct StoredRef<'a> {
    file: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    overrides: &'a [String],
    /// The scenario's verdict in this report (`ok`, `FAILED`, `VACUOUS`, a shard's `partial`),
    /// for a reader; computed again when read.
    verdict: &'static str,
    scenario_hash: &'a str,
    #[serde(skip_serializing_if = "is_zero")]
    recorded_total: usize,
    #[serde(skip_serializing_if = "<[RecordedRun]>::is_empty")]
    recorded: &'a [RecordedRun],
    scenario: &'a Scenario,
    state: &'a SummaryState,
    failures: &'a [SeedOutcome],
}

/// [`StoredRef`], read back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    file: String,
    #[serde(default)]
    overrides: Vec<String>,
    #[allow(dead_code)] // computed again from what the report holds
    verdict: String,
    scenario_hash: String,
    #[serde(default)]
    recorded_total: usize,
    #[serde(default)]
    recorded: Vec<RecordedRun>,
    scenario: Scenario,
    state: SummaryState,
    failures: Vec<SeedOutcome>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The header fields, written first.
#[derive(Serialize)]
struct HeaderRef<'a> {
    schema_version: u32,
    producer: &'static str,
    shard: &'a Option<String>,
    all_met: bool,
}

/// A report as read: the header and the scenarios.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredReport {
    #[allow(dead_code)] // checked by `ReportHeader` before the whole report is read
    schema_version: u32,
    #[allow(dead_code)]
    producer: String,
    shard: Option<String>,
    #[allow(dead_code)] // computed again from the scenarios
    all_met: bool,
    scenarios: Vec<Stored>,
}

/// `report` as `check.json`: the header line, then one line per scenario. The same report
/// always gives the same bytes.
pub fn report_to_json(report: &CheckReport) -> String {
    let header = serde_json::to_string(&HeaderRef {
        schema_version: SCHEMA_VERSION,
        producer: fencesim_model::version::PRODUCER,
        shard: &report.shard,
        all_met: report.all_met,
    })
    .expect("report headers serialize");
    let mut out = header[..header.len() - 1].to_string();
    out.push_str(",\"scenarios\":[\n");
    let lines: Vec<String> = report
        .verdicts()
        .map(|(result, verdict)| {
            serde_json::to_string(&StoredRef {
                file: &result.file,
                overrides: &result.overrides,
                verdict: verdict.label(),
                scenario_hash: &result.summary.scenario_hash,
                recorded_total: result.recorded_total,
                recorded: &result.recorded,
                scenario: &result.scenario,
                state: &result.state,
                failures: &result.failures,
            })
            .expect("check reports serialize")
        })
        .collect();
    out.push_str(&lines.join(",\n"));
    if !lines.is_empty() {
        out.push('\n');
    }
    out.push_str("]}\n");
    out
}

/// What a report says about itself: its format's version and the build that wrote it
/// (absent from reports written before either existed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct ReportHeader {
    /// `schema_version`.
    pub schema_version: Option<u64>,
    /// `producer`: `fencesim X (madsim Y)`.
    pub producer: Option<String>,
}

impl ReportHeader {
    /// The header of the report `text` (`file` names it in the error).
    pub fn of(text: &str, file: &str) -> Result<ReportHeader, String> {
        serde_json::from_str(text).map_err(|error| not_a_report(file, &error))
    }

    /// `schema_version 1 (fencesim 0.1.0 (madsim 0.2.34))`, or what is missing.
    fn describe(&self) -> String {
        match (&self.schema_version, &self.producer) {
            (Some(version), Some(producer)) => format!("schema_version {version} ({producer})"),
            (Some(version), None) => format!("schema_version {version}"),
            (None, _) => "no schema_version (written before check reports had one)".to_string(),
        }
    }
}

/// Checks that the reports `headers` (each with its file) can be merged: one schema
/// version, this build's. Two that differ are named with both files and versions.
pub fn same_schema(headers: &[(&str, ReportHeader)]) -> Result<(), String> {
    let Some((first_file, first)) = headers.first() else {
        return Ok(());
    };
    if let Some((file, other)) = headers
        .iter()
        .find(|(_, header)| header.schema_version != first.schema_version)
    {
        return Err(format!(
            "the reports have different schema versions: {first_file} has {}, {file} has {} \
             (run every shard with the same fencesim)",
            first.describe(),
            other.describe()
        ));
    }
    if first.schema_version != Some(u64::from(SCHEMA_VERSION)) {
        return Err(format!(
            "{first_file}: expected a check report with schema_version {SCHEMA_VERSION} (this \
             fencesim, {}), got one with {}: run it again with this fencesim",
            fencesim_model::version::PRODUCER,
            first.describe()
        ));
    }
    Ok(())
}

/// Reads a report written by [`report_to_json`]; `file` names the input in the error. The
/// report must have this build's schema version; each scenario's summary is finished again
/// from its state (once its seed range and state are known to be sound).
pub fn report_from_json(text: &str, file: &str) -> Result<CheckReport, String> {
    same_schema(&[(file, ReportHeader::of(text, file)?)])?;
    let stored: StoredReport =
        serde_json::from_str(text).map_err(|error| not_a_report(file, &error))?;
    let mut scenarios = Vec::with_capacity(stored.scenarios.len());
    for result in stored.scenarios {
        let range = result.scenario.seeds;
        SeedRange::parse(&range.to_string())
            .map_err(|expected| format!("{file}: {}: scenario.seeds: {expected}", result.file))?;
        result
            .state
            .check_consistent()
            .map_err(|expected| format!("{file}: {}: {expected}", result.file))?;
        let mut summary = result.state.finish(&result.scenario, range);
        // The hash the report ran: `merge` refuses a scenario edited since (another hash).
        summary.scenario_hash = result.scenario_hash;
        scenarios.push(ScenarioResult {
            file: result.file,
            overrides: result.overrides,
            scenario: result.scenario,
            summary,
            state: result.state,
            failures: result.failures,
            recorded: result.recorded,
            recorded_total: result.recorded_total,
        });
    }
    Ok(super::check_report(stored.shard, scenarios))
}

fn not_a_report(file: &str, error: &serde_json::Error) -> String {
    format!(
        "{file}: not a fencesim check report (JSON from `fencesim check --json`): {}",
        json_words(&error.to_string())
    )
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
