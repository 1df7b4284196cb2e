//! Arguments every command shares, defined once: `--set` (every command that loads a
//! scenario), `--jobs` (every command that runs seeds in parallel) and `--record-limit`
//! (every command that records failing seeds), with the one parser and the one default each.

use clap::Args;
use fencesim_scenario::Override;

use crate::common::InputError;

/// `--set FIELD=VALUE`, repeatable: override a scenario field by its dotted name, validated
/// like the file.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct SetArgs {
    /// Override a scenario field by its dotted name (`lease.ttl_ms=8000`), validated like
    /// the file; repeatable.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub(crate) set: Vec<String>,
}

impl SetArgs {
    /// The overrides, parsed (exit 2 on a malformed one).
    pub(crate) fn overrides(&self) -> Result<Vec<Override>, InputError> {
        self.set
            .iter()
            .map(|arg| Override::parse_checked(arg).map_err(|e| InputError(format!("--set: {e}"))))
            .collect()
    }
}

/// `--jobs N`: seeds run at once, 1..=`fencesim::MAX_JOBS`; default every core (at most
/// that), as the library's `Simulation` does.
#[derive(Args, Clone, Copy, Debug)]
pub(crate) struct JobsArgs {
    /// Parallel seeds (each on a fresh thread and runtime), 1 to 1024; the results do not
    /// depend on it. Default: every core.
    #[arg(long, default_value_t = fencesim::default_jobs())]
    jobs: usize,
}

impl JobsArgs {
    /// The number, checked against the one range of the CLI and the library (a one-line
    /// error, exit 2).
    pub(crate) fn get(&self) -> Result<usize, InputError> {
        fencesim::check_jobs(self.jobs).map_err(|e| InputError(format!("--jobs: {e}")))
    }
}

/// `--record-limit N`: how many seeds with one failure signature (the `--set` overrides and
/// what was violated) recording keeps in a regressions file; the rest are counted.
#[derive(Args, Clone, Copy, Debug)]
pub(crate) struct RecordLimit {
    /// Keep at most N recorded seeds per failure (the same --set overrides and the same
    /// violations) in the regressions file, counting those already there; the rest are
    /// counted and the count printed. 1 to 1000.
    #[arg(long, value_name = "N", default_value_t = fencesim::regressions::DEFAULT_PER_SIGNATURE)]
    record_limit: usize,
}

impl RecordLimit {
    /// The limit, checked (exit 2 outside 1..=1000).
    pub(crate) fn get(&self) -> Result<usize, InputError> {
        let max = fencesim::regressions::MAX_ENTRIES;
        if (1..=max).contains(&self.record_limit) {
            Ok(self.record_limit)
        } else {
            Err(InputError(format!(
                "--record-limit: expected 1 to {max} (a regressions file's maximum), got {}",
                self.record_limit
            )))
        }
    }
}
