//! What `check` and `merge` both print and write: the table's rows, the failures with their
//! replay lines, and the JSON, JUnit, matrix and coverage files (preflighted, atomic).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use fencesim::outputs::Output;
use fencesim_verdict::{CheckReport, ScenarioResult};

use crate::{colour, common::InputError};

/// Where `check` and `merge` write their files (all optional, all written atomically).
pub(crate) struct Outputs {
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub matrix: Option<PathBuf>,
    pub coverage: Option<PathBuf>,
}

impl Outputs {
    /// Every file these options will write, for [`fencesim::outputs::preflight`].
    pub(crate) fn files(&self) -> Vec<Output> {
        let mut files = Vec::new();
        if let Some(json) = &self.json {
            files.push(Output::new("--json", json));
        }
        if let Some(junit) = &self.junit {
            files.push(Output::new("--junit", junit));
        }
        if let Some(dir) = &self.matrix {
            files.push(Output::new("--matrix", dir.join("matrix.md")));
            files.push(Output::new("--matrix", dir.join("matrix.json")));
        }
        if let Some(dir) = &self.coverage {
            files.push(Output::new("--coverage", dir.join("coverage.md")));
            files.push(Output::new("--coverage", dir.join("coverage.json")));
        }
        files
    }
}

/// Every output checked before the first seed runs, `inputs` (reports to merge) included.
pub(crate) fn check_outputs(outputs: &Outputs, inputs: &[PathBuf]) -> Result<(), InputError> {
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    fencesim::outputs::preflight(&outputs.files(), &inputs).map_err(InputError)
}

/// Refuses an output that the next `check` of the same directories would read as a scenario
/// (`check DIR --json DIR/r.toml`): the catalogue would then fail on its own report.
pub(crate) fn refuse_outputs_in_catalogue(
    outputs: &Outputs,
    paths: &[PathBuf],
) -> Result<(), InputError> {
    let dirs: Vec<PathBuf> = paths
        .iter()
        .filter(|path| path.is_dir())
        .map(|dir| fencesim::outputs::canonical(dir))
        .collect();
    for output in outputs.files() {
        let target = fencesim::outputs::canonical(&output.path);
        let is_toml = target.extension().is_some_and(|ext| ext == "toml");
        if is_toml
            && target
                .parent()
                .is_some_and(|parent| dirs.iter().any(|dir| dir == parent))
        {
            return Err(InputError(format!(
                "{} {}: expected an output outside the scenario directories or not named *.toml, got one the next `check` would read as a scenario",
                output.flag,
                output.path.display()
            )));
        }
    }
    Ok(())
}

/// Writes every output as one set: all temps first, then all renamed together (a signal
/// leaves the old set or the new one, never a mix).
pub(crate) fn write_outputs(
    report: &CheckReport,
    wall_seconds: &BTreeMap<String, f64>,
    skipped: &[fencesim_catalogue::Skipped],
    outputs: &Outputs,
) -> Result<(), InputError> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if let Some(path) = &outputs.json {
        files.push((path.clone(), fencesim_verdict::report_to_json(report)));
    }
    if let Some(path) = &outputs.junit {
        files.push((
            path.clone(),
            fencesim_catalogue::junit_xml_skipping(report, wall_seconds, skipped),
        ));
    }
    if let Some(dir) = &outputs.matrix {
        files.push((
            dir.join("matrix.md"),
            fencesim_catalogue::matrix_markdown(report),
        ));
        files.push((
            dir.join("matrix.json"),
            fencesim_catalogue::matrix_json(report),
        ));
    }
    if let Some(dir) = &outputs.coverage {
        files.push((
            dir.join("coverage.md"),
            fencesim_catalogue::coverage_markdown(report),
        ));
        files.push((
            dir.join("coverage.json"),
            fencesim_catalogue::coverage_json(report),
        ));
    }
    let mut set = fencesim::fs::OutputSet::new();
    for (path, contents) in &files {
        set.add(path, contents.as_bytes())
            .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))?;
    }
    set.commit().map_err(|e| InputError(e.to_string()))
}

/// The table's column widths: the scenario names and the expectations as wide as the widest
/// (at least 45 and 20 characters), so a long name keeps every column of every row aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Columns {
    name: usize,
    expectation: usize,
}

impl Columns {
    /// Widths fitting every `(name, expectation)` of the table.
    pub(crate) fn fit<'a>(rows: impl Iterator<Item = (&'a str, String)>) -> Columns {
        let mut columns = Columns {
            name: 45,
            expectation: 20,
        };
        for (name, expectation) in rows {
            columns.name = columns.name.max(name.chars().count());
            columns.expectation = columns.expectation.max(expectation.chars().count());
        }
        columns
    }

    /// The width of the scenario column.
    pub(crate) fn name(self) -> usize {
        self.name
    }

    /// The header line.
    pub(crate) fn header(self) -> String {
        format!(
            "{:<n$} {:<e$} result     runs  failing  coverage  states/trans  wall (s)",
            "scenario",
            "expectation",
            n = self.name,
            e = self.expectation
        )
    }
}

/// One table row; the verdict label coloured when `colour` (the columns line up either way).
pub(crate) fn row(
    result: &ScenarioResult,
    verdict: &str,
    wall: Option<f64>,
    colour: bool,
    columns: Columns,
) -> String {
    let summary = &result.summary;
    let required = &summary.coverage_required;
    let hit = required
        .iter()
        .filter(|condition| summary.coverage.get(*condition).copied().unwrap_or(0) > 0)
        .count();
    let space = &summary.state_space;
    // Abstract states / transitions reached; `+` when the summary kept only some.
    let truncated = if space.truncated { "+" } else { "" };
    format!(
        "{:<n$} {:<e$} {} {:>6} {:>8} {:>9} {:>13} {:>9}",
        summary.scenario,
        summary.expectation,
        colour::paint_padded(verdict, 8, colour),
        summary.runs,
        summary.failing_seeds.len(),
        format!("{hit}/{}", required.len()),
        format!("{}/{}{truncated}", space.states, space.transitions),
        wall.map_or("-".to_string(), |w| format!("{w:.1}")),
        n = columns.name,
        e = columns.expectation,
    )
}

/// Each failed scenario's detail and the command replaying it (with the `--set` overrides the
/// scenario was loaded with, which the result keeps), and each recorded seed that still
/// contradicts its expectation with its own (under the overrides it was recorded with).
pub(crate) fn print_failures(results: &[&ScenarioResult], sharded: bool) {
    for result in results {
        let summary = &result.summary;
        if result.sweep_verdict(sharded).failed() {
            let seed = summary
                .failing_seeds
                .first()
                .copied()
                .unwrap_or(result.scenario.seeds.start);
            println!(
                "{}: {}\n    replay: {}",
                summary.scenario,
                summary.expectation_detail,
                result.replay_command(seed)
            );
        }
        for run in result.recorded_failing() {
            println!(
                "{}: recorded seed {}{} still contradicts the expectation: {}\n    replay: {}",
                summary.scenario,
                run.seed,
                run.under(),
                run.detail,
                run.replay_command(&result.file)
            );
        }
    }
}
