//! `fencesim explore`'s flags for `--guided` and `--exhaustive` (and those both take), and
//! the check that no option of one mode is given without it (clap's `requires` cannot say
//! it: a mode that conflicts with the required flag satisfies the requirement).

use clap::Args;
use fencesim_explore::exhaustive::{self as search, ExhaustiveOptions};
use fencesim_model::Invariant;

use crate::common::InputError;

/// `explore --guided`'s flags.
#[derive(Args, Clone, Debug)]
pub(crate) struct GuidedFlags {
    /// Coverage-guided search instead of proptest: keep a corpus of fault plans whose runs
    /// reached new abstract states or transitions, mutate them (rare states first), add
    /// lineage-driven proposals, stop at the first violation and shrink it.
    #[arg(long, conflicts_with_all = ["cases", "record_failures"])]
    pub(crate) guided: bool,
    /// --guided: runs the search may spend (1 to 1,000,000). Default: 1,000.
    #[arg(long, value_name = "N")]
    pub(super) runs: Option<u64>,
    /// --guided: seed of the search's own choices (same seed, same search). Default: 0.
    #[arg(long, value_name = "S")]
    pub(super) search_seed: Option<u64>,
    /// --guided: no lineage-driven proposals (mutations and fresh seeds only).
    #[arg(long)]
    pub(super) no_lineage: bool,
}

/// `--runs` when not given.
const DEFAULT_GUIDED_RUNS: u64 = 1_000;

impl GuidedFlags {
    /// `--runs`, checked (default [`DEFAULT_GUIDED_RUNS`]).
    pub(super) fn runs(&self) -> Result<u64, InputError> {
        let runs = self.runs.unwrap_or(DEFAULT_GUIDED_RUNS);
        if runs == 0 || runs > fencesim_explore::guided::MAX_RUNS {
            return Err(InputError(format!(
                "--runs: expected a number of runs from 1 to {}, got {runs}",
                fencesim_explore::guided::MAX_RUNS,
            )));
        }
        Ok(runs)
    }

    /// The `--guided` options given (clap's `requires` does not see them: a mode that
    /// conflicts with `--guided` satisfies it).
    pub(super) fn given(&self) -> Vec<&'static str> {
        let given = [
            (self.runs.is_some(), "--runs"),
            (self.search_seed.is_some(), "--search-seed"),
            (self.no_lineage, "--no-lineage"),
        ];
        given
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, f)| *f)
            .collect()
    }
}

/// The flags `--guided` and `--exhaustive` share.
#[derive(Args, Clone, Debug)]
pub(crate) struct SearchFlags {
    /// --guided, --exhaustive: only violations of these invariants count (comma-separated, I1
    /// to I5). Default: any invariant.
    #[arg(long, value_name = "I3,I4")]
    pub(super) invariants: Option<String>,
    /// --guided, --exhaustive: simulations at once (each on a fresh thread and runtime), 1 to
    /// 1024; the result does not depend on it. Default: every core.
    #[arg(long)]
    pub(super) jobs: Option<usize>,
}

impl SearchFlags {
    /// The jobs (checked) and the target invariants.
    pub(super) fn values(&self) -> Result<(usize, Option<Vec<Invariant>>), InputError> {
        let invariants = self
            .invariants
            .as_deref()
            .map(parse_invariants)
            .transpose()?;
        let jobs = self.jobs.unwrap_or_else(fencesim::default_jobs);
        let jobs = fencesim::check_jobs(jobs).map_err(|e| InputError(format!("--jobs: {e}")))?;
        Ok((jobs, invariants))
    }

    /// The first flag given, for the error when neither search is asked for.
    pub(super) fn given(&self) -> Option<&'static str> {
        if self.invariants.is_some() {
            Some("--invariants")
        } else {
            self.jobs.map(|_| "--jobs")
        }
    }
}

/// `explore --exhaustive` and its bound.
#[derive(Args, Clone, Debug)]
pub(crate) struct ExhaustiveArgs {
    /// Run every schedule of at most --max-faults faults from the scenario's fault alphabet
    /// (its explicit schedule's faults, its outage, and each random entry's targets x sizes:
    /// a const size, else the p50 and p99) at start times 0, R, 2R, ... below the horizon,
    /// on its first seed; stop at the first violation (shrunk and saved like explore's) or
    /// state what was covered.
    #[arg(long, conflicts_with_all = ["cases", "sweep_seeds", "record_failures", "guided"])]
    pub(crate) exhaustive: bool,
    /// --exhaustive: start times are multiples of this (ms). Default: 100.
    #[arg(long, value_name = "MS")]
    pub(super) resolution_ms: Option<u64>,
    /// --exhaustive: faults per schedule at most (0, 1 or 2). Default: 2.
    #[arg(long, value_name = "N")]
    pub(super) max_faults: Option<usize>,
    /// --exhaustive: start times are below this (ms). Default: the scenario's duration_ms.
    #[arg(long, value_name = "MS")]
    pub(super) horizon_ms: Option<u64>,
    /// --exhaustive: refuse a bound of more schedules than this. Default: 200,000.
    #[arg(long, value_name = "N")]
    pub(super) max_schedules: Option<u64>,
    /// --exhaustive: run every schedule and count every violating one (else stop at the
    /// first violation).
    #[arg(long)]
    pub(super) all: bool,
}

impl ExhaustiveArgs {
    /// The search's options: the bound given (or its defaults), `jobs` and `invariants`.
    pub(super) fn options(
        &self,
        jobs: usize,
        invariants: Option<Vec<Invariant>>,
    ) -> Result<ExhaustiveOptions, InputError> {
        let max_schedules = self.max_schedules.unwrap_or(search::DEFAULT_MAX_SCHEDULES);
        if max_schedules == 0 {
            return Err(InputError(
                "--max-schedules: expected a positive number, got 0".into(),
            ));
        }
        Ok(ExhaustiveOptions {
            resolution_ms: self.resolution_ms.unwrap_or(search::DEFAULT_RESOLUTION_MS),
            max_faults: self.max_faults.unwrap_or(search::MAX_FAULTS),
            horizon_ms: self.horizon_ms,
            invariants,
            max_schedules,
            jobs,
            all: self.all,
            ..ExhaustiveOptions::default()
        })
    }

    /// The `--exhaustive` options given.
    pub(super) fn given(&self) -> Vec<&'static str> {
        let given = [
            (self.resolution_ms.is_some(), "--resolution-ms"),
            (self.max_faults.is_some(), "--max-faults"),
            (self.horizon_ms.is_some(), "--horizon-ms"),
            (self.max_schedules.is_some(), "--max-schedules"),
            (self.all, "--all"),
        ];
        given
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, f)| *f)
            .collect()
    }
}

/// Refuses an option of one search mode given without that mode, naming the option, the mode
/// it belongs to and the mode asked for.
pub(super) fn check_modes(
    guided: &GuidedFlags,
    exhaustive: &ExhaustiveArgs,
) -> Result<(), InputError> {
    let asked = if exhaustive.exhaustive {
        "--exhaustive"
    } else if guided.guided {
        "--guided"
    } else {
        "proptest (neither --guided nor --exhaustive)"
    };
    let modes = [
        ("--guided", guided.guided, guided.given()),
        ("--exhaustive", exhaustive.exhaustive, exhaustive.given()),
    ];
    for (mode, on, given) in modes {
        if let (false, Some(flag)) = (on, given.first()) {
            return Err(InputError(format!(
                "{flag}: an option of {mode}, got it with {asked}"
            )));
        }
    }
    Ok(())
}

/// `--invariants I3,I4`.
fn parse_invariants(text: &str) -> Result<Vec<Invariant>, InputError> {
    let mut invariants = Vec::new();
    for name in text.split(',').map(str::trim) {
        let invariant = Invariant::parse(name).ok_or_else(|| {
            InputError(format!(
                "--invariants: expected a comma-separated list of I1, I2, I3, I4, I5, got {text:?}"
            ))
        })?;
        if !invariants.contains(&invariant) {
            invariants.push(invariant);
        }
    }
    invariants.sort();
    Ok(invariants)
}

/// `--cases` when not given.
const DEFAULT_CASES: u32 = 100;

/// The proptest cases: `--cases`, else `PROPTEST_CASES` as proptest's own tests read it, else
/// [`DEFAULT_CASES`]; and where they came from, for the header (` (PROPTEST_CASES)` or empty).
/// A variable that is not a positive number (or not UTF-8) is refused, never taken as unset.
pub(super) fn cases(given: Option<u32>) -> Result<(u32, &'static str), InputError> {
    let (cases, from, name) = match (given, std::env::var_os("PROPTEST_CASES")) {
        (Some(cases), _) => (cases, "", "--cases"),
        (None, None) => (DEFAULT_CASES, "", "--cases"),
        (None, Some(value)) => {
            let parsed = value
                .to_str()
                .filter(|text| text.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|text| text.parse::<u32>().ok());
            let Some(cases) = parsed else {
                return Err(InputError(format!(
                    "PROPTEST_CASES (the default of --cases): expected a number of cases from 1 \
                     to {}, got {value:?}",
                    u32::MAX
                )));
            };
            (cases, " (PROPTEST_CASES)", "PROPTEST_CASES")
        }
    };
    if cases == 0 {
        return Err(InputError(format!(
            "{name}: expected a positive number, got 0"
        )));
    }
    Ok((cases, from))
}
