//! `fencesim soak`: a nightly job's open-ended search. Consecutive seeds from a printed base
//! seed, for a wall-clock budget, in batches sized to end within it; every seed that
//! contradicts the expectation is printed with its replay line and recorded in the
//! scenario's regressions file after each batch (so a killed soak loses at most one batch,
//! and a signalled one nothing). On SIGINT/SIGTERM/SIGHUP the signal handler records what
//! the interrupted batch found and prints the seed range covered ([`report_interrupt`]). At
//! the regressions file's maximum the soak stops, says so, and exits 1.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard},
};

use fencesim::regressions::{Entry, Recorded};
use fencesim_scenario::{Override, Scenario};

use crate::{args, common::InputError};

/// The longest `--budget-s`: a week.
const MAX_SOAK_S: u64 = 7 * 24 * 3600;

/// A batch aims to take at most this long, so findings are recorded at least this often.
const BATCH_TARGET_S: f64 = 10.0;

/// Most seeds per job in one batch.
const BATCH_PER_JOB_MAX: u64 = 64;

/// `fencesim soak SCENARIO --budget-s N`.
#[derive(clap::Args)]
pub(crate) struct SoakArgs {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// Wall-clock budget in seconds (1 to 604800, a week). Batches are sized to end within
    /// it (the last overruns it by at most about one seed's run).
    #[arg(long, value_name = "SECONDS")]
    budget_s: u64,
    /// First seed; default: drawn from the clock and printed (re-run a soak's seeds with
    /// `fencesim run FILE --seeds B..E`, printed at the end). At most 2^64 - 1 - 10^7.
    /// FENCESIM_SEED, FENCESIM_SEEDS and MADSIM_TEST_SEED are refused, not used: a soak's
    /// seeds come from here.
    #[arg(long, value_name = "SEED")]
    base_seed: Option<u64>,
    #[command(flatten)]
    jobs: args::JobsArgs,
    #[command(flatten)]
    set: args::SetArgs,
    #[command(flatten)]
    record_limit: args::RecordLimit,
}

/// What a soak has covered and found, for the signal handler. Process-global because the
/// handler runs on its own thread.
pub(crate) struct Soaking {
    /// The scenario file as given.
    file: String,
    regressions: PathBuf,
    limit: usize,
    base: u64,
    /// Seeds `base..next` are finished (handed on in seed order).
    next: u64,
    /// Seeds found contradicting the expectation.
    found: usize,
    /// Found, not yet recorded (the running batch's).
    pending: Vec<Entry>,
    recorded: Recorded,
}

static SOAK: Mutex<Option<Soaking>> = Mutex::new(None);

fn soaking() -> MutexGuard<'static, Option<Soaking>> {
    SOAK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Soaking {
    /// Records the pending entries (an error is printed: the found seeds were printed too).
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        match fencesim::regressions::record(&self.regressions, &self.file, &pending, self.limit) {
            Ok(done) => self.recorded.add(done),
            Err(message) => eprintln!("error: {message}"),
        }
    }

    /// The closing line: the range covered, how to repeat it, what was found and recorded.
    fn closing(&self, seconds: Option<f64>) -> String {
        let (base, next) = (self.base, self.next);
        format!(
            "soak: seeds {base}..{next} ({} seeds{}; repeat with `fencesim run {} --seeds {base}..{next}`), \
             {} contradicted the expectation, {}",
            next - base,
            seconds.map_or(String::new(), |s| format!(" in {s:.0} s")),
            self.file,
            self.found,
            self.recorded.describe(&self.regressions, self.limit)
        )
    }
}

/// On SIGINT/SIGTERM/SIGHUP during `soak`: records what the running batch found, prints the
/// range covered, and returns the lock, which the caller holds until it exits (no seed is
/// counted after this line). `None` (nothing done) outside `soak`.
pub(crate) fn report_interrupt(signal: &str) -> Option<MutexGuard<'static, Option<Soaking>>> {
    let mut guard = soaking();
    let state = guard.as_mut()?;
    state.flush();
    println!("interrupted by {signal}: {}", state.closing(None));
    Some(guard)
}

/// A base seed from the clock, for a soak that was not given one (printed, so it can be
/// repeated): the one place the binary reads the calendar.
#[allow(clippy::disallowed_methods)]
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        % 1_000_000_000_000
}

/// The largest `--base-seed`: room for at least `MAX_SEEDS` seeds before the last
/// replayable seed (2^64 - 2), so a soak is never an empty range.
fn max_base_seed() -> u64 {
    u64::MAX - 1 - fencesim_scenario::limits::MAX_SEEDS
}

/// Seeds in the next batch: as many as take about `BATCH_TARGET_S`, or what remains of the
/// budget if less, at `seconds_per_seed` (wall seconds per seed at this parallelism, from
/// the batches so far); one per job when nothing is known yet, at least one per job (so the
/// last batch overruns the budget by about one seed's run at most), at most
/// `BATCH_PER_JOB_MAX` per job.
fn batch_size(jobs: u64, remaining_s: f64, seconds_per_seed: Option<f64>) -> u64 {
    let Some(per_seed) = seconds_per_seed.filter(|s| *s > 0.0 && s.is_finite()) else {
        return jobs;
    };
    let fits = (remaining_s.min(BATCH_TARGET_S) / per_seed).floor();
    (fits.max(0.0) as u64).clamp(jobs, jobs.saturating_mul(BATCH_PER_JOB_MAX))
}

impl SoakArgs {
    /// Validates everything before the first seed (exit 2), then soaks.
    pub(crate) fn run(&self) -> Result<bool, InputError> {
        crate::env_seed::refuse_for_soak(crate::env_seed::from_process()?)?;
        if !(1..=MAX_SOAK_S).contains(&self.budget_s) {
            return Err(InputError(format!(
                "--budget-s: expected 1 to {MAX_SOAK_S} seconds (a week), got {}",
                self.budget_s
            )));
        }
        let base = self.base_seed.unwrap_or_else(clock_seed);
        if base > max_base_seed() {
            return Err(InputError(format!(
                "--base-seed: expected at most {} (room for a soak's seeds below 2^64 - 1), got {base}",
                max_base_seed()
            )));
        }
        let (jobs, limit, set) = (
            self.jobs.get()?,
            self.record_limit.get()?,
            self.set.overrides()?,
        );
        let path = self.scenario.as_path();
        let scenario: Arc<Scenario> = Arc::new(fencesim_scenario::load_with(path, &set)?);
        crate::common::warn_presets(path, &scenario);
        fencesim::outputs::preflight_scenarios(&[], &[path], Some("soak"))?;
        let regressions = fencesim::regressions::path_for(path);
        fencesim::regressions::load(&regressions).map_err(InputError)?;
        println!(
            "fencesim soak {} ({}), scenario hash {}, base seed {base}, budget {} s, {jobs} jobs",
            scenario.name,
            path.display(),
            scenario.hash(),
            self.budget_s
        );
        *soaking() = Some(Soaking {
            file: path.display().to_string(),
            regressions,
            limit,
            base,
            next: base,
            found: 0,
            pending: Vec::new(),
            recorded: Recorded::default(),
        });
        soak(path, &scenario, &set, jobs, self.budget_s)
    }
}

/// Soaks until the budget is spent, the seeds run out or the regressions file is full.
fn soak(
    path: &Path,
    scenario: &Arc<Scenario>,
    set: &[Override],
    jobs: usize,
    budget_s: u64,
) -> Result<bool, InputError> {
    let set_args: Vec<String> = set.iter().map(Override::to_arg).collect();
    let (hash, components) = (scenario.hash(), fencesim::Components::default());
    let started = crate::common::wall_now();
    let mut per_seed: Option<f64> = None;
    loop {
        let elapsed = started.elapsed().as_secs_f64();
        let next = soaking().as_ref().map_or(u64::MAX, |s| s.next);
        if elapsed >= budget_s as f64 || next >= u64::MAX - 1 {
            break;
        }
        let size = batch_size(jobs as u64, budget_s as f64 - elapsed, per_seed);
        let seeds = next..next.saturating_add(size).min(u64::MAX - 1);
        let batch_started = crate::common::wall_now();
        fencesim::summarized::sweep_in_seed_order(
            scenario,
            seeds.clone(),
            jobs,
            &components,
            &|_| {},
            |outcome| found(path, scenario, set, &hash, &set_args, &outcome),
        );
        per_seed = Some(batch_started.elapsed().as_secs_f64() / (seeds.end - seeds.start) as f64);
        let mut guard = soaking();
        let Some(state) = guard.as_mut() else {
            break;
        };
        state.flush();
        if state.recorded.over_file > 0 {
            println!(
                "soak: stopped after seed {}: {} holds its maximum of {} recorded seeds; fix or \
                 prune the recorded failures, then soak again from --base-seed {}",
                state.next - 1,
                state.regressions.display(),
                fencesim::regressions::MAX_ENTRIES,
                state.next
            );
            println!("{}", state.closing(Some(started.elapsed().as_secs_f64())));
            return Ok(false);
        }
    }
    let guard = soaking();
    let state = guard.as_ref().expect("the soak's state");
    println!("{}", state.closing(Some(started.elapsed().as_secs_f64())));
    Ok(state.found == 0)
}

/// One outcome, in seed order: counted as covered, and printed and kept for recording when
/// it contradicts the expectation.
fn found(
    path: &Path,
    scenario: &Scenario,
    set: &[Override],
    hash: &str,
    set_args: &[String],
    outcome: &fencesim_check::SeedOutcome,
) {
    let mut guard = soaking();
    let Some(state) = guard.as_mut() else {
        return;
    };
    if fencesim_verdict::contradicts(&scenario.expect, outcome) {
        println!(
            "seed {}: {}\n    replay: {}",
            outcome.seed,
            crate::common::failure_line(scenario, outcome).unwrap_or_default(),
            crate::common::replay_line(path, outcome.seed, set)
        );
        state.found += 1;
        state.pending.push(Entry::of(outcome, hash, set_args));
    }
    state.next = outcome.seed + 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_fit_the_budget_left_and_record_at_least_every_ten_seconds() {
        // Nothing measured yet: one seed per job.
        assert_eq!(batch_size(4, 3600.0, None), 4);
        // 0.01 s a seed: 10 s is 1,000 seeds, capped at 64 per job.
        assert_eq!(batch_size(4, 3600.0, Some(0.01)), 256);
        // 0.5 s a seed with 3 s left: 6 seeds.
        assert_eq!(batch_size(4, 3.0, Some(0.5)), 6);
        // Slower than the budget left: still one per job, never zero.
        assert_eq!(batch_size(4, 0.1, Some(2.0)), 4);
        assert_eq!(batch_size(1, 0.0, Some(2.0)), 1);
        // A batch never takes much longer than the budget left plus one seed per job.
        for (left, per_seed) in [(1.0, 0.3), (5.0, 0.05), (100.0, 1.7)] {
            let size = batch_size(2, left, Some(per_seed));
            assert!(size as f64 * per_seed <= left.min(BATCH_TARGET_S) + 2.0 * per_seed);
        }
    }
}
