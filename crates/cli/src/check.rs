//! `fencesim check` (the catalogue for CI: table, JSON, JUnit, matrix, shards) and
//! `fencesim merge` (shards back into one report).

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
    definitely_failed, CheckReport, ScenarioResult, ScenarioResultBuilder, Shard,
};

use fencesim::outputs::Output;

use crate::{
    colour,
    progress::{scenario_message, Plain, Progress},
    InputError,
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
    /// regressions file (`NAME.regressions` next to `NAME.toml`; run first by the next
    /// `check`). Not with `--shard`.
    #[arg(long)]
    record_failures: bool,
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

/// Where `check` and `merge` write their files (all optional, all written atomically).
pub(crate) struct Outputs {
    pub json: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub matrix: Option<PathBuf>,
    pub coverage: Option<PathBuf>,
}

/// Which scenarios `check` runs and when it stops: `-k PATTERN`, `--fail-fast`.
pub(crate) struct Select<'a> {
    pub filter: Option<&'a str>,
    pub fail_fast: bool,
    /// `--record-failures`: contradicting seeds go to each scenario's regressions file.
    pub record_failures: bool,
}

impl Outputs {
    /// Every file these options will write, for [`fencesim::outputs::preflight`].
    fn files(&self) -> Vec<Output> {
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

/// Every output checked before the first seed runs, `inputs` included.
fn check_outputs(outputs: &Outputs, inputs: &[PathBuf]) -> Result<(), InputError> {
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    fencesim::outputs::preflight(&outputs.files(), &inputs).map_err(InputError)
}

/// Refuses an output that the next `check` of the same directories would read as a scenario
/// (`check DIR --json DIR/r.toml`): the catalogue would then fail on its own report.
fn refuse_outputs_in_catalogue(outputs: &Outputs, paths: &[PathBuf]) -> Result<(), InputError> {
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
fn write_outputs(
    report: &CheckReport,
    wall_seconds: &BTreeMap<String, f64>,
    outputs: &Outputs,
) -> Result<(), InputError> {
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if let Some(path) = &outputs.json {
        files.push((path.clone(), fencesim_verdict::report_to_json(report)));
    }
    if let Some(path) = &outputs.junit {
        files.push((
            path.clone(),
            fencesim_catalogue::junit_xml(report, wall_seconds),
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

const HEADER: &str = "scenario                                      expectation          result     runs  failing  coverage  states/trans  wall (s)";

/// One table row; the verdict label coloured when `colour` (the columns line up either way).
fn row(result: &ScenarioResult, verdict: &str, wall: Option<f64>, colour: bool) -> String {
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
        "{:<45} {:<20} {} {:>6} {:>8} {:>9} {:>13} {:>9}",
        summary.scenario,
        summary.expectation,
        colour::paint_padded(verdict, 8, colour),
        summary.runs,
        summary.failing_seeds.len(),
        format!("{hit}/{}", required.len()),
        format!("{}/{}{truncated}", space.states, space.transitions),
        wall.map_or("-".to_string(), |w| format!("{w:.1}")),
    )
}

/// Each failed scenario's detail and the command replaying it (with the `--set` overrides the
/// scenario was loaded with, which the result keeps).
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
            result.replay_command(seed)
        );
    }
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
            "  {:<45} {}\n",
            f.name,
            colour::paint(f.label, colour)
        ));
    }
    let mut started = finished;
    match &record.running {
        Some((name, seeds)) => {
            started += 1;
            out.push_str(&format!(
                "  {name:<45} interrupted ({running_done} of {seeds} seeds done)\n"
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
/// added to `file`'s regressions file (those already there are kept once); says how many.
fn record_contradicting(
    file: &Path,
    scenario: &Scenario,
    result: &ScenarioResult,
    set_args: &[String],
) -> Result<(), InputError> {
    let hash = scenario.hash();
    let entries: Vec<fencesim::regressions::Entry> = result
        .failures
        .iter()
        .filter(|outcome| fencesim_verdict::contradicts(&scenario.expect, outcome))
        .map(|outcome| fencesim::regressions::Entry::of(outcome, &hash, set_args))
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let path = fencesim::regressions::path_for(file);
    let added = fencesim::regressions::record(&path, &file.display().to_string(), &entries)
        .map_err(InputError)?;
    println!(
        "    --record-failures: {} seed(s) contradicted the expectation, {added} newly recorded in {}",
        entries.len(),
        path.display()
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
    let components = Components::default();
    let progress = Progress::new("seeds", Plain::Nothing);
    let colour = colour::enabled();
    refuse_duplicate_names(&scenarios)?;
    let set_args: Vec<String> = set.iter().map(|o| o.to_arg()).collect();
    let recorded = recorded_seeds(&scenarios, &set_args)?;
    let mut still_failing = 0usize;
    println!("{HEADER}");
    *record() = Some(Record {
        total: scenarios.len(),
        ..Record::default()
    });
    let mut results = Vec::with_capacity(scenarios.len());
    let mut wall_seconds = BTreeMap::new();
    let mut not_run = 0;
    for (position, (file, scenario)) in scenarios.iter().enumerate() {
        let total = match shard {
            Some(shard) => shard.seeds(scenario.seeds).count() as u64,
            None => scenario.seeds.end - scenario.seeds.start,
        };
        RUNNING_DONE.store(0, Ordering::Relaxed);
        if let Some(record) = record().as_mut() {
            record.running = Some((scenario.name.clone(), total));
        }
        // Recorded seeds first (an unsharded check, or shard 1 of N, runs them).
        if shard.is_none_or(|s| s.k == 1) {
            still_failing += rerun_recorded(file, scenario, &recorded[position], &components);
        }
        progress.start(
            total,
            scenario_message(position, scenarios.len(), &scenario.name),
        );
        let started = crate::wall_now();
        let builder = sweep(scenario, shard, jobs, &components, &progress);
        let wall = started.elapsed().as_secs_f64();
        progress.clear();
        let mut result = builder.finish(&file.display().to_string(), scenario);
        result.overrides = set.iter().map(|o| o.to_arg()).collect();
        print_row(&result, &scenario.name, shard, wall, colour);
        // One line per contained panic; the full message is in `replay`.
        for (seed, panic) in result.state.panicked() {
            println!(
                "    seed {seed}: panicked: {} (replay: {})",
                crate::first_line(panic),
                result.replay_command(*seed),
            );
        }
        if select.record_failures {
            record_contradicting(file, scenario, &result, &set_args)?;
        }
        wall_seconds.insert(scenario.name.clone(), wall);
        let failed = match shard {
            Some(_) => definitely_failed(&result),
            None => !result.summary.expectation_met,
        };
        results.push(result);
        if select.fail_fast && failed {
            not_run = scenarios.len() - position - 1;
            if not_run > 0 {
                println!("--fail-fast: stopped at the first failure; {not_run} scenarios not run");
            }
            break;
        }
    }
    conclude(
        shard,
        results,
        &wall_seconds,
        outputs,
        still_failing,
        not_run,
    )
}

/// The report of the scenarios run: written to every output, each failure printed with its
/// replay command, then the counts. True when nothing failed.
fn conclude(
    shard: Option<Shard>,
    results: Vec<ScenarioResult>,
    wall_seconds: &BTreeMap<String, f64>,
    outputs: &Outputs,
    still_failing: usize,
    not_run: usize,
) -> Result<bool, InputError> {
    let shard_label = shard.map(|shard| shard.to_string());
    let report = fencesim_verdict::check_report(shard_label.clone(), results);
    write_outputs(&report, wall_seconds, outputs)?;
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
            if not_run > 0 {
                format!(", {not_run} not run (--fail-fast)")
            } else {
                String::new()
            }
        ),
    }
    Ok(failed.is_empty() && still_failing == 0)
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
            let (shard, source) = crate::shard_env::parse(text, &|name| std::env::var(name).ok())?;
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
    check_outputs(outputs, &files)?;
    if select.record_failures {
        let regressions: Vec<PathBuf> = files
            .iter()
            .map(|f| fencesim::regressions::path_for(f))
            .collect();
        let planned: Vec<Output> = regressions
            .iter()
            .map(|path| Output::new("--record-failures", path))
            .collect();
        let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        fencesim::outputs::preflight(&planned, &inputs)?;
    }
    let mut scenarios: Vec<(PathBuf, Arc<Scenario>)> = Vec::with_capacity(files.len());
    for file in &files {
        let scenario = fencesim_scenario::load_with(file, set)?;
        crate::warn_presets(file, &scenario);
        scenarios.push((file.clone(), Arc::new(scenario)));
    }
    if let Some(pattern) = select.filter {
        let total = scenarios.len();
        scenarios.retain(|(file, scenario)| {
            scenario.name.contains(pattern) || file.display().to_string().contains(pattern)
        });
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

/// Each scenario's recorded seeds (its regressions file, those recorded with the same `--set`
/// arguments), read before anything runs.
fn recorded_seeds(
    scenarios: &[(PathBuf, Arc<Scenario>)],
    set_args: &[String],
) -> Result<Vec<Vec<fencesim::regressions::Entry>>, InputError> {
    let mut recorded = Vec::with_capacity(scenarios.len());
    for (file, _) in scenarios {
        let entries = fencesim::regressions::load(&fencesim::regressions::path_for(file))
            .map_err(InputError)?;
        recorded.push(
            entries
                .into_iter()
                .filter(|e| e.set == set_args)
                .collect::<Vec<_>>(),
        );
    }
    Ok(recorded)
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
fn print_row(result: &ScenarioResult, name: &str, shard: Option<Shard>, wall: f64, colour: bool) {
    let shown = match shard {
        Some(_) if definitely_failed(result) => "FAILED",
        Some(_) => "partial",
        None => result.summary.verdict().table_label(),
    };
    let failed = match shard {
        Some(_) if shown == "partial" => None,
        Some(_) => Some(definitely_failed(result)),
        None => Some(!result.summary.expectation_met),
    };
    let mut record = record();
    println!("{}", row(result, shown, Some(wall), colour));
    if let Some(record) = record.as_mut() {
        record.running = None;
        record.finished.push(Finished {
            name: name.to_string(),
            label: shown,
            failed,
        });
    }
}

/// Runs `scenario`'s recorded seeds and prints how each compares with its record; returns
/// how many still contradict the expectation.
fn rerun_recorded(
    file: &std::path::Path,
    scenario: &Arc<Scenario>,
    entries: &[fencesim::regressions::Entry],
    components: &Components,
) -> usize {
    use fencesim::regressions::{compare, Rerun};
    let mut failing = 0;
    for entry in entries {
        let outcome = fencesim::run_seed(scenario, entry.seed, components).outcome;
        let contradicts = fencesim_verdict::contradicts(&scenario.expect, &outcome);
        failing += usize::from(contradicts);
        let hash_note = if entry.scenario_hash == scenario.hash() {
            ""
        } else {
            " (recorded under another version of the scenario)"
        };
        let how = match compare(entry, &outcome) {
            Rerun::Same => "still fails the same way (same trace)".to_string(),
            Rerun::SameFailureOtherTrace => {
                "still fails the same way (its trace changed)".to_string()
            }
            Rerun::Passes => "NO LONGER FAILS: passes now (remove it from the file once the \
                              fix is intended)"
                .to_string(),
            Rerun::Differs(now) => format!(
                "NO LONGER FAILS THE SAME WAY: recorded {}, now {}",
                entry.violated.join(", "),
                now.join(", ")
            ),
        };
        println!(
            "  recorded seed {} of {}{hash_note}: {how}{}",
            entry.seed,
            file.display(),
            if contradicts {
                format!(
                    "; contradicts the expectation (replay: {})",
                    fencesim_scenario::replay_command_with(
                        &file.display().to_string(),
                        entry.seed,
                        &entry.set
                    )
                )
            } else {
                String::new()
            }
        );
    }
    failing
}

/// The largest check report `merge` reads (bytes): 256 MiB, the limit of a history file.
pub(crate) const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) fn merge(files: &[PathBuf], outputs: &Outputs) -> Result<bool, InputError> {
    check_outputs(outputs, files)?;
    let mut parts = Vec::with_capacity(files.len());
    for file in files {
        let bytes =
            fencesim_scenario::input::read_limited(file, MAX_REPORT_BYTES).map_err(|e| {
                InputError(format!(
                    "{}: {}",
                    file.display(),
                    e.expected("a check report")
                ))
            })?;
        let text = fencesim_scenario::input::into_text(bytes).map_err(|at| {
            InputError(format!(
                "{}:{}: expected a UTF-8 check report, got invalid UTF-8 at column {}",
                file.display(),
                at.line,
                at.column
            ))
        })?;
        parts.push(
            fencesim_verdict::report_from_json(&text, &file.display().to_string())
                .map_err(InputError)?,
        );
    }
    let report = fencesim_verdict::merge(parts).map_err(InputError)?;
    println!("{HEADER}");
    for result in &report.scenarios {
        println!(
            "{}",
            row(
                result,
                result.summary.verdict().table_label(),
                None,
                colour::enabled()
            )
        );
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
