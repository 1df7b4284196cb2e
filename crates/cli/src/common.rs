//! What the command modules share, a leaf under them all: the input error (exit code 2),
//! the wall clock for timings shown to people, and the one-line texts naming a seed's
//! failure and how to replay it.

use std::path::Path;

use fencesim_scenario::{Override, Scenario, SeedRange};

/// Wall time, for the commands' own timings shown to people (progress, `check`'s wall
/// seconds): the one place the binary reads the real clock. It never enters a simulation
/// or a deterministic report.
#[allow(clippy::disallowed_methods)]
pub(crate) fn wall_now() -> std::time::Instant {
    std::time::Instant::now()
}

/// A usage or input error: printed, exit code 2.
#[derive(Debug)]
pub(crate) struct InputError(pub(crate) String);

impl<E: std::fmt::Display> From<E> for InputError {
    fn from(error: E) -> Self {
        InputError(error.to_string())
    }
}

/// The line replaying `seed` of `path` loaded with `set` (shell-quoted).
pub(crate) fn replay_line(path: &Path, seed: u64, set: &[Override]) -> String {
    let set: Vec<String> = set.iter().map(Override::to_arg).collect();
    fencesim_scenario::identity::replay_command_with(&shown(path), seed, &set)
}

pub(crate) fn parse_seeds(text: &str) -> Result<SeedRange, InputError> {
    SeedRange::parse(text).map_err(|expected| InputError(format!("--seeds: {expected}")))
}

/// The file as the user typed it, for commands they can paste back.
pub(crate) fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// What a failing seed did, in one line (`None` for a seed that did not fail).
pub(crate) fn failure_line(
    scenario: &Scenario,
    outcome: &fencesim_check::SeedOutcome,
) -> Option<String> {
    fencesim_verdict::recorded::failure_text(scenario, outcome)
}

/// Prints, on stderr, the scenario's lease settings that have no effect or contradict its
/// preset (`Scenario::preset_warnings`); the run goes on.
pub(crate) fn warn_presets(path: &Path, scenario: &Scenario) {
    for warning in scenario.preset_warnings() {
        eprintln!("warning: {}: {warning}", path.display());
    }
}

/// The first line of a contained panic's message: the full text stays in `replay`.
pub(crate) fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}

/// Writes `bytes` to `path` atomically and says so (`{what} written to PATH`).
pub(crate) fn write_file(path: &Path, what: &str, bytes: &[u8]) -> Result<(), InputError> {
    fencesim::fs::write_atomic_bytes(path, bytes)
        .map_err(|e| InputError(format!("{}: cannot write {what}: {e}", path.display())))?;
    println!("{what} written to {}", path.display());
    Ok(())
}
