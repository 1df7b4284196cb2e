//! `fencesim check`: the catalogue for CI (table, JSON, JUnit, matrix, shards); what it
//! shares with `merge` is in `outputs`.

use std::{
    collections::BTreeMap,
    io::Write,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex, MutexGuard,
    },
};

use fencesim::{summarized::sweep_in_seed_order, Components};
use fencesim_scenario::Scenario;
use fencesim_verdict::{
    RecordedRun, ScenarioResult, ScenarioResultBuilder, ScenarioVerdict, Shard,
};

use fencesim::regressions::Entry;

use crate::{
    colour,
    common::InputError,
    outputs::{print_failures, refuse_outputs_in_catalogue, row, write_outputs, Columns, Outputs},
    progress::{scenario_message, Plain, Progress},
};

/// `fencesim check PATH...`.
#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// Scenario files, or directories whose `*.toml` files are scenarios (in name order).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    jobs: crate::args::JobsArgs,
    /// Write JUnit XML (one testcase per scenario) to FILE.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Write the JSON report (every scenario, summary and per-seed outcome) to FILE.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write the safety matrix to DIR/matrix.md and DIR/matrix.json.
    #[arg(long)]
    matrix: Option<PathBuf>,
    /// Write the state-space coverage (abstract states and transitions per scenario and
    /// over the catalogue, every rare state with its replay command) to DIR/coverage.md and
    /// DIR/coverage.json.
    #[arg(long, value_name = "DIR")]
    coverage: Option<PathBuf>,
    /// Run only slice K of N of every scenario's seeds (seed offset mod N == K-1);
    /// combine the slices' JSON reports with `fencesim merge`. `auto` reads K and N from
    /// the engine running the copies: FENCESIM_SHARD_INDEX/_TOTAL (1-based),
    /// JOB_COMPLETION_INDEX + JOB_COMPLETIONS (Kubernetes Indexed Job), CI_NODE_INDEX/_TOTAL
    /// (GitLab), CIRCLE_NODE_INDEX/_TOTAL, BUILDKITE_PARALLEL_JOB/_COUNT.
    #[arg(long)]
    shard: Option<String>,
    #[command(flatten)]
    set: crate::args::SetArgs,
    /// Run only the scenarios whose name or file path contains PATTERN (exit 2 if none
    /// does).
    #[arg(short = 'k', long = "filter", value_name = "PATTERN")]
    filter: Option<String>,
    /// Stop after the first scenario whose expectation fails; the rest are not run (and
    /// not in the reports).
    #[arg(long)]
    fail_fast: bool,
    /// Record every seed that contradicts its scenario's expectation in the scenario's
    /// regressions file (`NAME.regressions` next to `NAME.toml`; re-run by the next
    /// `check`), at most --record-limit per failure. Not with `--shard`.
    #[arg(long)]
    record_failures: bool,
    #[command(flatten)]
    record_limit: crate::args::RecordLimit,
}

impl CheckArgs {
    pub(crate) fn run(self) -> Result<bool, InputError> {
        let set = self.set.overrides()?;
        check(
            &self.paths,
            &set,
            self.jobs.get()?,
            self.shard.as_deref(),
            &Select {
                filter: self.filter.as_deref(),
                fail_fast: self.fail_fast,
                record_failures: self.record_failures,
                record_limit: self.record_limit.get()?,
            },
            &Outputs {
                json: self.json,
                junit: self.junit,
                matrix: self.matrix,
                coverage: self.coverage,
            },
        )
    }
}

/// Which scenarios `check` runs and when it stops: `-k PATTERN`, `--fail-fast`.
pub(crate) struct Select<'a> {
    pub filter: Option<&'a str>,
    pub fail_fast: bool,
    /// `--record-failures`: contradicting seeds go to each scenario's regressions file.
    pub record_failures: bool,
    /// `--record-limit`: seeds kept per failure signature.
    pub record_limit: usize,
}

/// One finished scenario, as an interrupted `check` lists it.
#[derive(Clone, Debug, PartialEq)]
struct Finished {
    name: String,
    /// The table's label (`ok`, `FAILED`, `VACUOUS`, a shard's `partial`).
    label: &'static str,
    /// Whether it failed; `None` when a shard cannot tell (`partial`).
    failed: Option<bool>,
}

/// What `check` has done so far, for the signal handler: the scenarios finished (in table
/// order) and the one running. Process-global because the handler runs on its own thread.
#[derive(Debug, Default)]
pub(crate) struct Record {
    total: usize,
    /// The width of the table's scenario column.
    name_width: usize,
    finished: Vec<Finished>,
    /// The scenario running and its seed count (this shard's).
    running: Option<(String, u64)>,
}

static RECORD: Mutex<Option<Record>> = Mutex::new(None);

/// Seeds of the running scenario finished so far.
static RUNNING_DONE: AtomicU64 = AtomicU64::new(0);

fn record() -> MutexGuard<'static, Option<Record>> {
    RECORD
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// On SIGINT/SIGTERM/SIGHUP during `check`: prints (on stdout, after the rows already
/// printed) what finished and what was interrupted, and returns the record's lock, which the
/// caller holds until it exits, so no row is printed after this table. `None` (nothing
/// printed) outside `check`.
pub(crate) fn report_interrupt(signal: &str) -> Option<MutexGuard<'static, Option<Record>>> {
    let guard = record();
    let text = guard
        .as_ref()
        .map(|record| interrupted_table(record, signal, RUNNING_DONE.load(Ordering::Relaxed)))?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Some(guard)
}

/// The table an interrupted `check` prints: counts, each finished scenario with its label,
/// the one interrupted (with its seeds done), how many were not started.
fn interrupted_table(record: &Record, signal: &str, running_done: u64) -> String {
    let colour = colour::enabled();
    let finished = record.finished.len();
    let failed = record
        .finished
        .iter()
        .filter(|f| f.failed == Some(true))
        .count();
    let passed = record
        .finished
        .iter()
        .filter(|f| f.failed == Some(false))
        .count();
    let undecided = finished - failed - passed;
    let mut out = format!(
        "interrupted by {signal}: {finished} of {} scenarios finished, {passed} passed, {failed} failed{}\n",
        record.total,
        if undecided > 0 {
            format!(", {undecided} partial (a shard)")
        } else {
            String::new()
        }
    );
    for f in &record.finished {
        out.push_str(&format!(
            "  {:<w$} {}\n",
            f.name,
            colour::paint(f.label, colour),
            w = record.name_width
        ));
    }
    let mut started = finished;
    match &record.running {
        Some((name, seeds)) => {
            started += 1;
            out.push_str(&format!(
                "  {name:<w$} interrupted ({running_done} of {seeds} seeds done)\n",
                w = record.name_width
            ));
        }
        None if finished == record.total => {
            out.push_str("  (every scenario had finished: interrupted while writing the outputs)\n")
        }
        None => {}
    }
    let not_started = record.total.saturating_sub(started);
    if not_started > 0 {
        out.push_str(&format!("  {not_started} scenario(s) not started\n"));
    }
    out
}

/// `check --record-failures`: the seeds of `result` that contradict `scenario`'s expectation,
/// added to `file`'s regressions file (those already there are kept once, at most `limit`
/// per failure); says how many.
fn record_contradicting(
    file: &Path,
    scenario: &Scenario,
    result: &ScenarioResult,
    set_args: &[String],
    limit: usize,
) -> Result<(), InputError> {
    let hash = scenario.hash();
    let entries: Vec<Entry> = result
        .failures
        .iter()
        .filter(|outcome| fencesim_verdict::contradicts(&scenario.expect, outcome))
        .map(|outcome| Entry::of(outcome, &hash, set_args))
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let path = fencesim::regressions::path_for(file);
    let done = fencesim::regressions::record(&path, &file.display().to_string(), &entries, limit)
        .map_err(InputError)?;
    println!(
        "    --record-failures: {} seed(s) contradicted the expectation, {}",
        entries.len(),
        done.describe(&path, limit)
    );
    Ok(())
}

pub(crate) fn check(
    paths: &[PathBuf],
    set: &[fencesim_scenario::Override],
    jobs: usize,
    shard: Option<&str>,
    select: &Select<'_>,
    outputs: &Outputs,
) -> Result<bool, InputError> {
    crate::env_seed::refuse_for_check(crate::env_seed::from_process()?)?;
    let shard = resolve_shard(shard, select, outputs)?;
    let scenarios = load_catalogue(paths, set, select, outputs)?;
    refuse_duplicate_names(&scenarios)?;
    let set_args: Vec<String> = set.iter().map(|o| o.to_arg()).collect();
    let recorded = recorded_seeds(&scenarios, &set_args, shard)?;
    let columns = Columns::fit(scenarios.iter().map(|(_, scenario)| {
        let outcome = &scenario.expect.outcome;
        (
            scenario.name.as_str(),
            fencesim_verdict::expectation_text(outcome),
        )
    }));
    let run = Run {
        shard,
        jobs,
        set_args,
        components: Components::default(),
        progress: Progress::new("seeds", Plain::Nothing),
        colour: colour::enabled(),
        columns,
    };
    println!("{}", columns.header());
    *record() = Some(Record {
        total: scenarios.len(),
        name_width: columns.name(),
        ..Record::default()
    });
    let mut results = Vec::with_capacity(scenarios.len());
    let mut wall_seconds = BTreeMap::new();
    let mut not_run = Vec::new();
    for (position, ((file, scenario), recorded)) in scenarios.iter().zip(&recorded).enumerate() {
        let (result, wall) =
            check_one(&run, (position, scenarios.len()), file, scenario, recorded)?;
        if select.record_failures {
            record_contradicting(file, scenario, &result, &run.set_args, select.record_limit)?;
        }
        wall_seconds.insert(scenario.name.clone(), wall);
        let failed = result.verdict(shard.is_some()).failed();
        results.push(result);
        if select.fail_fast && failed {
            let reason = "not run: --fail-fast stopped at the first failure";
            not_run = scenarios[position + 1..]
                .iter()
                .map(|(file, scenario)| fencesim_catalogue::Skipped {
                    name: scenario.name.clone(),
                    file: file.display().to_string(),
                    reason: reason.to_string(),
                })
                .collect();
            if !not_run.is_empty() {
                let n = not_run.len();
                println!("--fail-fast: stopped at the first failure; {n} scenarios not run");
            }
            break;
        }
    }
    conclude(shard, results, &wall_seconds, outputs, &not_run)
}

/// What every scenario of one `check` shares.
struct Run {
    shard: Option<Shard>,
    jobs: usize,
    /// The `--set` arguments every scenario was loaded with.
    set_args: Vec<String>,
    components: Components,
    progress: Progress,
    colour: bool,
    /// The table's column widths, fitted to every scenario's name and expectation.
    columns: Columns,
}

/// Runs one scenario, the `position.0`-th of `position.1`: its recorded seeds first (this
/// shard's share), then its sweep; prints its row. Its result and wall seconds.
fn check_one(
    run: &Run,
    position: (usize, usize),
    file: &Path,
    scenario: &Arc<Scenario>,
    recorded: &Recorded,
) -> Result<(ScenarioResult, f64), InputError> {
    let total = match run.shard {
        Some(shard) => shard.seeds(scenario.seeds).count() as u64,
        None => scenario.seeds.end - scenario.seeds.start,
    };
    RUNNING_DONE.store(0, Ordering::Relaxed);
    if let Some(record) = record().as_mut() {
        record.running = Some((scenario.name.clone(), total));
    }
    let reruns = rerun_recorded(file, recorded, &run.components);
    run.progress.start(
        total,
        scenario_message(position.0, position.1, &scenario.name),
    );
    let started = crate::common::wall_now();
    let builder = sweep(
        scenario,
        run.shard,
        run.jobs,
        &run.components,
        &run.progress,
    );
    let wall = started.elapsed().as_secs_f64();
    run.progress.clear();
    let mut result = builder.finish(&file.display().to_string(), scenario);
    result.overrides = run.set_args.clone();
    result.recorded = reruns;
    result.recorded_total = recorded.total;
    print_row(&result, &scenario.name, run, wall);
    // One line per contained panic; the full message is in `replay`.
    for (seed, panic) in result.state.panicked() {
        println!(
            "    seed {seed}: panicked: {} (replay: {})",
            crate::common::first_line(panic),
            result.replay_command(*seed),
        );
    }
    Ok((result, wall))
}

/// The report of the scenarios run: written to every output, each failure printed with its
/// replay command, then the counts. True when nothing failed (a shard: nothing failed for
/// certain).
fn conclude(
    shard: Option<Shard>,
    results: Vec<ScenarioResult>,
    wall_seconds: &BTreeMap<String, f64>,
    outputs: &Outputs,
    not_run: &[fencesim_catalogue::Skipped],
) -> Result<bool, InputError> {
    let shard_label = shard.map(|shard| shard.to_string());
    let report = fencesim_verdict::check_report(shard_label.clone(), results);
    write_outputs(&report, wall_seconds, not_run, outputs)?;
    let failed = report.failed();
    print_failures(&failed, shard.is_some());
    let still_failing: usize = report
        .scenarios
        .iter()
        .map(|result| result.recorded_failing().count())
        .sum();
    if still_failing > 0 {
        println!(
            "{still_failing} recorded seed(s) still contradict their scenario's expectation \
             (the regressions files above)"
        );
    }
    match shard_label {
        Some(label) => println!(
            "shard {label}: {} scenarios, {} failed for certain (expectations are decided by `fencesim merge`)",
            report.scenarios.len(),
            failed.len()
        ),
        None => println!(
            "{} scenarios, {} failed{}",
            report.scenarios.len(),
            failed.len(),
            if !not_run.is_empty() {
                format!(", {} not run (--fail-fast)", not_run.len())
            } else {
                String::new()
            }
        ),
    }
    Ok(failed.is_empty())
}

/// `--shard K/N` or `auto` (saying where `auto` found it), refused with the options that
/// need every seed in one run.
fn resolve_shard(
    shard: Option<&str>,
    select: &Select<'_>,
    outputs: &Outputs,
) -> Result<Option<Shard>, InputError> {
    let shard = match shard {
        None => None,
        Some(text) => {
            let (shard, source) = crate::shard_env::parse(text, &crate::env_seed::var)?;
            if let Some(source) = source {
                println!("shard {shard} from {source}");
            }
            Some(shard)
        }
    };
    if shard.is_some() && outputs.matrix.is_some() {
        return Err(InputError(
            "--matrix: needs every seed; run it on the merged report (`fencesim merge --matrix`)"
                .into(),
        ));
    }
    if shard.is_some() && outputs.coverage.is_some() {
        return Err(InputError(
            "--coverage: needs every seed; run it on the merged report (`fencesim merge --coverage`)"
                .into(),
        ));
    }
    if shard.is_some() && select.record_failures {
        return Err(InputError(
            "--record-failures: not with --shard (every shard would rewrite the same \
             regressions files); record from an unsharded `check` or from `fencesim run \
             FILE --seeds N..N+1 --record-failures`"
                .into(),
        ));
    }
    Ok(shard)
}

/// Every scenario file under `paths`, loaded with `set` and chosen by `-k`, once every
/// output (and, with `--record-failures`, every regressions file) is known to be writable.
fn load_catalogue(
    paths: &[PathBuf],
    set: &[fencesim_scenario::Override],
    select: &Select<'_>,
    outputs: &Outputs,
) -> Result<Vec<(PathBuf, Arc<Scenario>)>, InputError> {
    // Validate everything before running anything: bad input fails fast with exit 2.
    let files = fencesim_scenario::input::scenario_files(paths)?;
    refuse_outputs_in_catalogue(outputs, paths)?;
    // Each scenario's regressions file is an input (an output with --record-failures).
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    fencesim::outputs::preflight_scenarios(
        &outputs.files(),
        &inputs,
        select.record_failures.then_some("--record-failures"),
    )?;
    let selected = |file: &Path, scenario: &Scenario| {
        select.filter.is_none_or(|pattern| {
            scenario.name.contains(pattern) || file.display().to_string().contains(pattern)
        })
    };
    let mut scenarios: Vec<(PathBuf, Arc<Scenario>)> = Vec::with_capacity(files.len());
    for file in &files {
        let scenario = match fencesim_scenario::load_with(file, set) {
            Ok(scenario) => scenario,
            // `--set` is validated against the scenarios `-k` selects: a file it does not
            // fit (its name, read without the overrides, not selected) is left out.
            Err(error) => match fencesim_scenario::load_with(file, &[]) {
                Ok(plain) if !set.is_empty() && !selected(file, &plain) => continue,
                _ => return Err(error.into()),
            },
        };
        scenarios.push((file.clone(), Arc::new(scenario)));
    }
    if let Some(pattern) = select.filter {
        let total = files.len();
        scenarios.retain(|(file, scenario)| selected(file, scenario));
        if scenarios.is_empty() {
            return Err(InputError(format!(
                "-k {pattern}: expected a pattern some scenario's name or file path contains; \
                 none of the {total} does"
            )));
        }
        println!(
            "-k {pattern}: {} of {total} scenarios selected",
            scenarios.len()
        );
    }
    for (file, scenario) in &scenarios {
        crate::common::warn_presets(file, scenario);
    }
    Ok(scenarios)
}

/// Two files with one scenario name would give duplicate JUnit cases and matrix rows.
fn refuse_duplicate_names(scenarios: &[(PathBuf, Arc<Scenario>)]) -> Result<(), InputError> {
    for (index, (file, scenario)) in scenarios.iter().enumerate() {
        if let Some((first, _)) = scenarios[..index]
            .iter()
            .find(|(_, earlier)| earlier.name == scenario.name)
        {
            return Err(InputError(format!(
                "{}: name: expected a scenario name no other file uses, got {:?}, also the name in {}",
                file.display(),
                scenario.name,
                first.display()
            )));
        }
    }
    Ok(())
}

/// One scenario's recorded seeds, as this check re-runs them.
struct Recorded {
    /// The regressions file.
    path: PathBuf,
    /// How many seeds it holds.
    total: usize,
    /// This check's share (a shard's, or all), each with its index in the file and the
    /// scenario loaded with the overrides it was recorded under.
    runs: Vec<(usize, Entry, Arc<Scenario>)>,
}

/// Each scenario's recorded seeds (its regressions file), read and validated before anything
/// runs: each entry is re-run under the `--set` overrides it was recorded with, so the
/// scenario is loaded again with them (once per distinct set; `set_args`, the check's own,
/// reuse the loaded scenario), and an entry whose overrides do not load is an error naming
/// its file and line. A shard takes its share (index K-1 modulo N).
fn recorded_seeds(
    scenarios: &[(PathBuf, Arc<Scenario>)],
    set_args: &[String],
    shard: Option<Shard>,
) -> Result<Vec<Recorded>, InputError> {
    let mut recorded = Vec::with_capacity(scenarios.len());
    for (file, scenario) in scenarios {
        let path = fencesim::regressions::path_for(file);
        let entries = fencesim::regressions::load_numbered(&path).map_err(InputError)?;
        let mut loaded: BTreeMap<Vec<String>, Arc<Scenario>> = BTreeMap::new();
        loaded.insert(set_args.to_vec(), Arc::clone(scenario));
        let mut runs = Vec::new();
        for (index, (line, entry)) in entries.iter().enumerate() {
            if shard.is_some_and(|shard| !shard.takes_recorded(index)) {
                continue;
            }
            if !loaded.contains_key(&entry.set) {
                let under = load_under(file, &entry.set)
                    .map_err(|e| InputError(format!("{}:{line}: set: {e}", path.display())))?;
                loaded.insert(entry.set.clone(), Arc::new(under));
            }
            runs.push((index, entry.clone(), Arc::clone(&loaded[&entry.set])));
        }
        recorded.push(Recorded {
            path,
            total: entries.len(),
            runs,
        });
    }
    Ok(recorded)
}

/// The scenario `file` loaded with the overrides `set` (`FIELD=VALUE` texts).
fn load_under(file: &Path, set: &[String]) -> Result<Scenario, String> {
    let overrides = set
        .iter()
        .map(|text| fencesim_scenario::Override::parse_checked(text))
        .collect::<Result<Vec<_>, String>>()?;
    fencesim_scenario::load_with(file, &overrides).map_err(|e| e.to_string())
}

/// Runs this check's seeds of `scenario` (this shard's, or all), streamed: each outcome is
/// counted as its turn in seed order comes and dropped, unless the result keeps it in full (a
/// failure); memory does not grow with seeds.
fn sweep(
    scenario: &Arc<Scenario>,
    shard: Option<Shard>,
    jobs: usize,
    components: &Components,
    progress: &Progress,
) -> ScenarioResultBuilder {
    let mut builder = ScenarioResultBuilder::new(scenario);
    let on_done = |_: &fencesim::SeedOutcome| {
        RUNNING_DONE.store(progress.inc(), Ordering::Relaxed);
    };
    let consume = |outcome| builder.push(outcome);
    match shard {
        Some(shard) => sweep_in_seed_order(
            scenario,
            shard.seeds(scenario.seeds),
            jobs,
            components,
            &on_done,
            consume,
        ),
        None => sweep_in_seed_order(
            scenario,
            scenario.seeds.iter(),
            jobs,
            components,
            &on_done,
            consume,
        ),
    }
    builder
}

/// `name`'s table row, printed and recorded under the record's lock: an interrupt's table
/// comes after it, never between the two.
fn print_row(result: &ScenarioResult, name: &str, run: &Run, wall: f64) {
    let verdict = result.verdict(run.shard.is_some());
    let mut record = record();
    let line = row(result, verdict.label(), Some(wall), run.colour, run.columns);
    println!("{line}");
    if let Some(record) = record.as_mut() {
        record.running = None;
        record.finished.push(Finished {
            name: name.to_string(),
            label: verdict.label(),
            failed: (verdict != ScenarioVerdict::Partial).then(|| verdict.failed()),
        });
    }
}

/// Runs a scenario's recorded seeds (this check's share), each under the overrides it was
/// recorded with, and prints how each compares with its record.
fn rerun_recorded(file: &Path, recorded: &Recorded, components: &Components) -> Vec<RecordedRun> {
    let shown = file.display().to_string();
    let mut runs = Vec::with_capacity(recorded.runs.len());
    for (index, entry, scenario) in &recorded.runs {
        let outcome = fencesim::run_seed(scenario, entry.seed, components).outcome;
        let run = RecordedRun::judge(*index, entry, scenario, &outcome);
        println!(
            "  recorded seed {} of {shown}{}{}: {}{}",
            run.seed,
            run.under(),
            if run.scenario_changed {
                " (recorded under another version of the scenario)"
            } else {
                ""
            },
            run.how(),
            if run.contradicts {
                format!(
                    "; contradicts the expectation (replay: {})",
                    run.replay_command(&shown)
                )
            } else {
                String::new()
            }
        );
        runs.push(run);
    }
    if recorded.total > 0 && recorded.runs.len() < recorded.total {
        println!(
            "  {} of the {} recorded seeds of {} are this shard's",
            recorded.runs.len(),
            recorded.total,
            recorded.path.display()
        );
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(name: &str, label: &'static str, failed: Option<bool>) -> Finished {
        Finished {
            name: name.to_string(),
            label,
            failed,
        }
    }

    #[test]
    fn the_interrupted_table_counts_lists_and_names_the_interrupted_scenario() {
        let record = Record {
            total: 4,
            name_width: 45,
            finished: vec![
                finished("a", "ok", Some(false)),
                finished("b", "FAILED", Some(true)),
            ],
            running: Some(("c".to_string(), 500)),
        };
        let text = interrupted_table(&record, "SIGINT", 37);
        assert_eq!(
            text,
            format!(
                "interrupted by SIGINT: 2 of 4 scenarios finished, 1 passed, 1 failed\n  \
                 {:<45} ok\n  {:<45} FAILED\n  {:<45} interrupted (37 of 500 seeds done)\n  \
                 1 scenario(s) not started\n",
                "a", "b", "c"
            )
        );
    }

    #[test]
    fn an_interrupt_after_the_last_scenario_says_the_outputs_were_being_written() {
        let record = Record {
            total: 2,
            name_width: 45,
            finished: vec![
                finished("a", "partial", None),
                finished("b", "VACUOUS", Some(true)),
            ],
            running: None,
        };
        let text = interrupted_table(&record, "SIGTERM", 0);
        assert!(
            text.starts_with(
                "interrupted by SIGTERM: 2 of 2 scenarios finished, 0 passed, 1 failed, 1 partial (a shard)\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                "  (every scenario had finished: interrupted while writing the outputs)\n"
            ),
            "{text}"
        );
        assert!(!text.contains("not started"), "{text}");
    }
}
