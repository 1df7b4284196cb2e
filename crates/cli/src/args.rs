//! Arguments every command shares, defined once: `--set` (every command that loads a
//! scenario) and `--jobs` (every command that runs seeds in parallel), with the one parser
//! and the one default each.

use clap::Args;
use fencesim_scenario::Override;

use crate::InputError;

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
