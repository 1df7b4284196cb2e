//! `fencesim run`: one scenario over its seeds (or one seed), its summary, regressions and
//! saturation picture.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use fencesim_scenario::{Override, Scenario, SeedRange};

use crate::common::{
    failure_line, first_line, parse_seeds, replay_line, shown, warn_presets, InputError,
};
use crate::{args, colour, env_seed, progress};

/// `fencesim run SCENARIO [--seeds A..B]`.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Seeds to run, `A..B` (half-open); default: FENCESIM_SEED=N / FENCESIM_SEEDS=A..B /
    /// MADSIM_TEST_SEED=N from the environment, else the scenario's `seeds`.
    #[arg(long)]
    seeds: Option<String>,
    #[command(flatten)]
    jobs: args::JobsArgs,
    /// Print at most N failing seeds, each with its replay command, after the summary; every
    /// failing seed and its trace hash is in summary.json (`failing_seeds`).
    #[arg(long, value_name = "N", default_value_t = 10)]
    max_failures: usize,
    /// Record every seed that contradicts the expectation in the scenario's regressions
    /// file (`foo.toml` → `foo.regressions`, commit it), at most --record-limit per failure:
    /// `check` re-runs recorded seeds first.
    #[arg(long)]
    record_failures: bool,
    #[command(flatten)]
    record_limit: args::RecordLimit,
    /// Also draw the saturation curve, the distinct abstract states and transitions reached
    /// against the seeds run (summary.json's `state_space`), as a PNG to FILE.
    #[arg(long, value_name = "FILE")]
    saturation: Option<PathBuf>,
    /// Output directory; the summary goes to DIR/<scenario name>/summary.json, or with
    /// `--set` to DIR/<scenario name>/set-<scenario hash>/summary.json (an overridden run
    /// is another scenario and never overwrites the file's own summary).
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    #[command(flatten)]
    set: args::SetArgs,
}

impl RunArgs {
    pub(crate) fn run(&self) -> Result<bool, InputError> {
        let set = self.set.overrides()?;
        run(
            &self.scenario,
            self.seeds.as_deref(),
            self.jobs.get()?,
            &self.out,
            &set,
            &RunReport {
                max_failures: self.max_failures,
                record_failures: self.record_failures,
                record_limit: self.record_limit.get()?,
                saturation: self.saturation.clone(),
            },
        )
    }
}

/// What `run` reports besides the summary.
struct RunReport {
    /// Failing seeds printed with their replay lines.
    max_failures: usize,
    /// Record the seeds that contradict the expectation in the regressions file.
    record_failures: bool,
    /// At most this many per failure signature.
    record_limit: usize,
    /// Where to draw the saturation curve (PNG).
    saturation: Option<PathBuf>,
}

fn run(
    path: &Path,
    seeds: Option<&str>,
    jobs: usize,
    out: &Path,
    set: &[Override],
    report: &RunReport,
) -> Result<bool, InputError> {
    let max_failures = report.max_failures;
    let scenario: Arc<Scenario> = Arc::new(fencesim_scenario::load_with(path, set)?);
    warn_presets(path, &scenario);
    let flag = seeds.map(parse_seeds).transpose()?;
    let (seeds, source) = env_seed::run_seeds(flag, env_seed::from_process()?, scenario.seeds)?;
    if let Some(source) = source {
        println!("seeds {seeds} from {source}");
    }
    let summary_path = summary_path(out, &scenario, set);
    let regressions_path = fencesim::regressions::path_for(path);
    let mut planned = vec![fencesim::outputs::Output::new("--out", &summary_path)];
    if let Some(png) = &report.saturation {
        planned.push(fencesim::outputs::Output::new("--saturation", png));
    }
    let record = report.record_failures.then_some("--record-failures");
    fencesim::outputs::preflight_scenarios(&planned, &[path], record)?;
    if report.record_failures {
        // Read now, so a malformed file stops the run before its first seed.
        fencesim::regressions::load(&regressions_path).map_err(InputError)?;
    }
    println!(
        "fencesim run {} ({}), scenario hash {}, seeds {seeds}, {jobs} jobs",
        scenario.name,
        path.display(),
        scenario.hash()
    );
    let swept = sweep_run(path, &scenario, seeds, jobs, set, report);
    let summary = swept.builder.finish(&scenario, seeds);
    let mut files = vec![(
        summary_path.clone(),
        fencesim_verdict::to_json(&summary).into_bytes(),
    )];
    if let Some(png) = &report.saturation {
        let picture = saturation_png(&summary, seeds)
            .map_err(|e| InputError(format!("{}: cannot draw: {e}", png.display())))?;
        files.push((png.clone(), picture));
    }
    let mut set = fencesim::fs::OutputSet::new();
    for (path, contents) in &files {
        set.add(path, contents)
            .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))?;
    }
    set.commit().map_err(|failed| {
        InputError(format!(
            "{}: cannot write: {}",
            failed.path.display(),
            failed.error
        ))
    })?;
    println!(
        "{}",
        colour::paint_summary(
            &fencesim_verdict::render_summary(&summary),
            summary.verdict(),
            colour::enabled()
        )
    );
    for line in &swept.failure_lines {
        println!("{line}");
    }
    let unlisted = swept.failures - swept.failure_lines.len() as u64;
    if unlisted > 0 {
        println!(
            "… and {unlisted} more failing seeds (--max-failures {max_failures}): every one, with \
             its trace hash, is in {} (failing_seeds, failing_trace_hashes)",
            summary_path.display()
        );
    }
    println!("summary written to {}", summary_path.display());
    if let Some(png) = &report.saturation {
        println!("saturation curve drawn to {}", png.display());
    }
    if report.record_failures {
        let done = fencesim::regressions::record(
            &regressions_path,
            &shown(path),
            &swept.recorded,
            report.record_limit,
        )
        .map_err(InputError)?;
        println!(
            "--record-failures: {} seed(s) contradicted the expectation, {}",
            swept.recorded.len(),
            done.describe(&regressions_path, report.record_limit)
        );
    }
    Ok(summary.expectation_met)
}

/// The saturation curve of `summary` (seeds `seeds`) as a PNG: one point per block of seeds.
fn saturation_png(
    summary: &fencesim_verdict::Summary,
    seeds: fencesim_scenario::SeedRange,
) -> Result<Vec<u8>, String> {
    use fencesim_views::saturation::SaturationPoint;
    let space = &summary.state_space;
    let mut transitions = 0;
    let points: Vec<SaturationPoint> = space
        .saturation
        .iter()
        .map(|block| {
            transitions += block.new_transitions;
            SaturationPoint {
                seeds: (block.first_seed + space.block_seeds).min(seeds.end) - seeds.start,
                states: block.states,
                transitions,
            }
        })
        .collect();
    let title = format!(
        "{}: abstract states and transitions reached, seeds {seeds}",
        summary.scenario
    );
    let note = space.truncated.then_some(
        "truncated: more were reached than a summary keeps (10,000 states, 40,000 transitions)",
    );
    fencesim_views::saturation::saturation_png(&title, note, &points)
}

/// What `run` keeps of its sweep: the summary so far and, of the failing seeds, the first
/// `--max-failures` lines to print, how many failed, and those to record.
struct Swept {
    builder: fencesim_verdict::SummaryBuilder,
    failure_lines: Vec<String>,
    failures: u64,
    recorded: Vec<fencesim::regressions::Entry>,
}

/// Runs `seeds` with a progress bar (panics and runaways reported as they finish),
/// summarized in seed order as seeds finish; the first `max_failures` failing seeds' lines
/// are kept (to print after the summary) and nothing else of a failing seed, so memory stays
/// flat however many seeds fail.
fn sweep_run(
    path: &Path,
    scenario: &Arc<Scenario>,
    seeds: SeedRange,
    jobs: usize,
    set: &[Override],
    report: &RunReport,
) -> Swept {
    let max_failures = report.max_failures;
    let progress = progress::Progress::new("seeds", progress::Plain::EveryHundred);
    progress.start(seeds.len(), format!("run {}", scenario.name));
    let on_done = |outcome: &fencesim_check::SeedOutcome| {
        if let Some(panic) = &outcome.panic {
            progress.eprintln(&format!(
                "seed {}: PANIC {}",
                outcome.seed,
                first_line(panic)
            ));
        }
        if outcome.runaway {
            progress.eprintln(&format!(
                "seed {}: RUNAWAY: over its event budget ({} events), stopped",
                outcome.seed,
                scenario.event_budget()
            ));
        }
        progress.inc();
    };
    let mut builder = fencesim_verdict::SummaryBuilder::new();
    let mut failure_lines: Vec<String> = Vec::new();
    let mut failures: u64 = 0;
    let mut recorded: Vec<fencesim::regressions::Entry> = Vec::new();
    let (scenario_hash, set_args) = (
        scenario.hash(),
        set.iter().map(Override::to_arg).collect::<Vec<_>>(),
    );
    fencesim::summarized::sweep_in_seed_order(
        scenario,
        seeds.iter(),
        jobs,
        &fencesim::Components::default(),
        &on_done,
        |outcome| {
            builder.push(&outcome);
            if report.record_failures && fencesim_verdict::contradicts(&scenario.expect, &outcome) {
                recorded.push(fencesim::regressions::Entry::of(
                    &outcome,
                    &scenario_hash,
                    &set_args,
                ));
            }
            if let Some(what) = failure_line(scenario, &outcome) {
                failures += 1;
                if failure_lines.len() < max_failures {
                    failure_lines.push(format!(
                        "seed {}: {what}\n    replay: {}",
                        outcome.seed,
                        replay_line(path, outcome.seed, set)
                    ));
                }
            }
        },
    );
    progress.clear();
    Swept {
        builder,
        failure_lines,
        failures,
        recorded,
    }
}

/// Where `run` writes its summary: DIR/<name>/summary.json, or for a scenario loaded with
/// overrides DIR/<name>/set-<its hash>/summary.json, so runs with different `--set` values
/// keep their own summaries beside the file's own.
fn summary_path(out: &Path, scenario: &Scenario, set: &[Override]) -> PathBuf {
    let dir = out.join(&scenario.name);
    if set.is_empty() {
        dir.join("summary.json")
    } else {
        dir.join(format!("set-{}", scenario.hash()))
            .join("summary.json")
    }
}
