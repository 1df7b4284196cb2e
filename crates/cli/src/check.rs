//! `fencesim check` (the catalogue for CI: table, JSON, JUnit, matrix, shards) and
//! `fencesim merge` (shards back into one report).

use std::{
    collections::BTreeMap,
    io::{IsTerminal, Write},
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

use fencesim_report::{CheckReport, ScenarioResult};
use fencesim_scenario::{Outcome, Scenario};
use fencesim_sim::runner::{builtin_store, StoreFactory};

use crate::{replay_command, InputError};

/// Where `check` and `merge` write their files (all optional, all written atomically).
pub(crate) struct Outputs {
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub matrix: Option<PathBuf>,
}

/// `K/N` with 1 <= K <= N.
fn parse_shard(text: &str) -> Result<(u64, u64), InputError> {
    let bad = || {
        InputError(format!(
            "--shard: expected `K/N` with 1 <= K <= N, got `{text}`"
        ))
    };
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let k: u64 = k.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

/// Scenario files named by `paths`: files as given, directories expanded to their `*.toml`
/// files in name order.
fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .filter(|file| file.extension().is_some_and(|ext| ext == "toml"))
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(InputError(format!(
                    "{}: no *.toml scenario files",
                    path.display()
                )));
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Checks every output path can be written before any simulation runs (nothing half-done).
fn check_outputs(outputs: &Outputs) -> Result<(), InputError> {
    for file in [&outputs.json, &outputs.junit].into_iter().flatten() {
        if file.is_dir() {
            return Err(InputError(format!(
                "{}: expected a file path, got a directory",
                file.display()
            )));
        }
    }
    if let Some(dir) = &outputs.matrix {
        if dir.exists() && !dir.is_dir() {
            return Err(InputError(format!(
                "--matrix {}: expected a directory",
                dir.display()
            )));
        }
    }
    Ok(())
}

fn write(path: &Path, contents: &str) -> Result<(), InputError> {
    fencesim_report::write_atomic(path, contents)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))
}

fn write_outputs(
    report: &CheckReport,
    wall_seconds: &BTreeMap<String, f64>,
    outputs: &Outputs,
) -> Result<(), InputError> {
    if let Some(path) = &outputs.json {
        write(path, &fencesim_report::report_to_json(report))?;
    }
    if let Some(path) = &outputs.junit {
        write(path, &fencesim_report::junit_xml(report, wall_seconds))?;
    }
    if let Some(dir) = &outputs.matrix {
        write(
            &dir.join("matrix.md"),
            &fencesim_report::matrix_markdown(report),
        )?;
        write(
            &dir.join("matrix.json"),
            &fencesim_report::matrix_json(report),
        )?;
    }
    Ok(())
}

const HEADER: &str = "scenario                                      expectation          result     runs  failing  coverage  wall (s)";

fn row(result: &ScenarioResult, verdict: &str, wall: Option<f64>) -> String {
    let summary = &result.summary;
    let required = &summary.coverage_required;
    let hit = required
        .iter()
        .filter(|name| summary.coverage.get(*name).copied().unwrap_or(0) > 0)
        .count();
    format!(
        "{:<45} {:<20} {:<8} {:>6} {:>8} {:>9} {:>9}",
        summary.scenario,
        summary.expectation,
        verdict,
        summary.runs,
        summary.failing_seeds.len(),
        format!("{hit}/{}", required.len()),
        wall.map_or("-".to_string(), |w| format!("{w:.1}")),
    )
}

fn verdict(result: &ScenarioResult) -> &'static str {
    if result.summary.expectation_met {
        "ok"
    } else if result.summary.vacuous {
        "VACUOUS"
    } else {
        "FAILED"
    }
}

/// In a shard, only failures no other shard can undo are decided: a panic, or an invariant
/// the expectation does not allow. Missing violations and missing coverage wait for `merge`.
fn definitely_failed(result: &ScenarioResult) -> bool {
    let summary = &result.summary;
    if !summary.panicked_seeds.is_empty() {
        return true;
    }
    let allowed: Vec<String> = match &result.scenario.expect.outcome {
        Outcome::Safe => Vec::new(),
        Outcome::Violates(list) => list.iter().map(|i| i.to_string()).collect(),
    };
    summary
        .violations
        .iter()
        .any(|(invariant, &seeds)| seeds > 0 && !allowed.contains(invariant))
}

fn print_failures(results: &[&ScenarioResult]) {
    for result in results {
        let summary = &result.summary;
        let seed = summary
            .failing_seeds
            .first()
            .copied()
            .unwrap_or(result.scenario.seeds.start);
        println!(
            "{}: {}\n    replay: {}",
            summary.scenario,
            summary.expectation_detail,
            replay_command(Path::new(&result.file), seed)
        );
    }
}

/// Progress for people: a live line on a terminal, nothing extra otherwise (the table rows
/// are the plain lines).
struct Progress {
    live: bool,
}

impl Progress {
    fn update(&self, name: &str, done: u64, total: u64) {
        if self.live {
            let width = 30;
            let filled = (done * width / total.max(1)) as usize;
            eprint!(
                "\r  [{}{}] {done}/{total} {name:<40}",
                "#".repeat(filled),
                ".".repeat(width as usize - filled)
            );
            let _ = std::io::stderr().flush();
        }
    }

    fn clear(&self) {
        if self.live {
            eprint!("\r{:<90}\r", "");
        }
    }
}

pub(crate) fn check(
    paths: &[PathBuf],
    jobs: usize,
    shard: Option<&str>,
    outputs: &Outputs,
) -> Result<bool, InputError> {
    if jobs == 0 {
        return Err(InputError(
            "--jobs: expected a positive number of threads, got 0".into(),
        ));
    }
    let shard = shard.map(parse_shard).transpose()?;
    if shard.is_some() && outputs.matrix.is_some() {
        return Err(InputError(
            "--matrix: needs every seed; run it on the merged report (`fencesim merge --matrix`)"
                .into(),
        ));
    }
    check_outputs(outputs)?;
    // Validate everything before running anything: bad input fails fast with exit 2.
    let files = scenario_files(paths)?;
    let mut scenarios: Vec<(PathBuf, Arc<Scenario>)> = Vec::with_capacity(files.len());
    for file in &files {
        scenarios.push((file.clone(), Arc::new(fencesim_scenario::load(file)?)));
    }
    let factory: StoreFactory = Arc::new(builtin_store);
    let progress = Progress {
        live: std::io::stderr().is_terminal(),
    };
    println!("{HEADER}");
    let mut results = Vec::with_capacity(scenarios.len());
    let mut wall_seconds = BTreeMap::new();
    for (file, scenario) in &scenarios {
        let seeds: Vec<u64> = scenario
            .seeds
            .iter()
            .filter(|seed| shard.is_none_or(|(k, n)| (seed - scenario.seeds.start) % n == k - 1))
            .collect();
        let total = seeds.len() as u64;
        let done = AtomicU64::new(0);
        // Wall time is shown to people only; it never enters a simulation or the JSON report.
        #[allow(clippy::disallowed_methods)]
        let started = std::time::Instant::now();
        let outcomes = fencesim_sim::sweep(scenario, seeds, jobs, &factory, &|_| {
            progress.update(
                &scenario.name,
                done.fetch_add(1, Ordering::Relaxed) + 1,
                total,
            );
        });
        let wall = started.elapsed().as_secs_f64();
        progress.clear();
        let result =
            fencesim_report::scenario_result(&file.display().to_string(), scenario, outcomes);
        let shown = match shard {
            Some(_) if definitely_failed(&result) => "FAILED",
            Some(_) => "partial",
            None => verdict(&result),
        };
        println!("{}", row(&result, shown, Some(wall)));
        wall_seconds.insert(scenario.name.clone(), wall);
        results.push(result);
    }
    let shard_label = shard.map(|(k, n)| format!("{k}/{n}"));
    let report = fencesim_report::check_report(shard_label.clone(), results);
    write_outputs(&report, &wall_seconds, outputs)?;
    let failed: Vec<&ScenarioResult> = match shard {
        Some(_) => report
            .scenarios
            .iter()
            .filter(|r| definitely_failed(r))
            .collect(),
        None => report
            .scenarios
            .iter()
            .filter(|r| !r.summary.expectation_met)
            .collect(),
    };
    print_failures(&failed);
    match shard_label {
        Some(label) => println!(
            "shard {label}: {} scenarios, {} failed for certain (expectations are decided by `fencesim merge`)",
            report.scenarios.len(),
            failed.len()
        ),
        None => println!("{} scenarios, {} failed", report.scenarios.len(), failed.len()),
    }
    Ok(failed.is_empty())
}

pub(crate) fn merge(files: &[PathBuf], outputs: &Outputs) -> Result<bool, InputError> {
    check_outputs(outputs)?;
    let mut parts = Vec::with_capacity(files.len());
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| InputError(format!("{}: cannot read: {e}", file.display())))?;
        parts.push(
            fencesim_report::report_from_json(&text, &file.display().to_string())
                .map_err(InputError)?,
        );
    }
    let report = fencesim_report::merge(parts).map_err(InputError)?;
    println!("{HEADER}");
    for result in &report.scenarios {
        println!("{}", row(result, verdict(result), None));
    }
    write_outputs(&report, &BTreeMap::new(), outputs)?;
    let failed: Vec<&ScenarioResult> = report
        .scenarios
        .iter()
        .filter(|r| !r.summary.expectation_met)
        .collect();
    print_failures(&failed);
    println!(
        "{} scenarios, {} failed",
        report.scenarios.len(),
        failed.len()
    );
    Ok(report.all_met)
}
