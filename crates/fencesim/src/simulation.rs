//! The front door for a user's `cargo test`: [`Simulation`] builds a scenario (from a file,
//! from TOML text, or from a [`Scenario`] value), overrides fields, plugs in the user's
//! store, worker policy and token source, runs a seed range and asserts the expectation.
//!
//! Seeds come from the code, unless the environment says otherwise: `MADSIM_TEST_SEED=N` (as
//! for madsim) or `FENCESIM_SEED=N` runs seed N only, `FENCESIM_SEEDS=A..B` runs A..B
//! (half-open, at most `fencesim_scenario::limits::MAX_SEEDS` seeds), `FENCESIM_JOBS=N` runs N
//! seeds at a time (1 to [`MAX_JOBS`]). A failed assertion panics with the failing seed, its
//! trace hash, the first violation with the events that prove it, and the one line that
//! reproduces it (`FENCESIM_SEED=N cargo test …`).
//!
//! ```
//! use fencesim::{Simulation, Invariant};
//!
//! // The textbook GC pause (worker-0 paused 15 s mid-lease, TTL 10 s) against a store that
//! // checks no token: I3 and I4 are violated.
//! let sim = Simulation::from_toml(fencesim::scenario::MINIMAL_TOML, "minimal.toml")
//!     .unwrap()
//!     .set("storage.fencing=\"none\"")
//!     .unwrap()
//!     .set("workers.writes_per_lease=1000")
//!     .unwrap()
//!     .set("expect.coverage=[\"takeover\"]")
//!     .unwrap()
//!     .expect_violations(&[Invariant::I3, Invariant::I4])
//!     .seeds(0..2);
//! let sweep = sim.assert_expectation();
//! assert_eq!(sweep.violated(), vec![Invariant::I3, Invariant::I4]);
//! ```

use std::{fmt, ops::Range, path::Path, sync::Arc};

use fencesim_check::SeedOutcome;
use fencesim_model::{fence::Fence, policy::WorkerPolicy, tokens::TokenIssuer, Invariant};
use fencesim_scenario::{Outcome, Override, Scenario, ScenarioError, SeedRange};
use fencesim_sim::runner::{sweep_all, Components};
use fencesim_verdict::Summary;
use fencesim_views::render_violation;

use crate::replay::{replay, Replay};

/// The most seeds run at a time (`FENCESIM_JOBS`, [`Simulation::jobs`], every command's
/// `--jobs`).
pub const MAX_JOBS: usize = fencesim_scenario::limits::MAX_JOBS;

/// `jobs` when it is in 1..=[`MAX_JOBS`]; else what was expected (the one range of the
/// library and every command's `--jobs`).
pub fn check_jobs(jobs: usize) -> Result<usize, String> {
    if (1..=MAX_JOBS).contains(&jobs) {
        Ok(jobs)
    } else {
        Err(format!(
            "expected a number of threads from 1 to {MAX_JOBS}, got {jobs}"
        ))
    }
}

/// Where the scenario came from, for the reproduce line.
#[derive(Clone, Debug)]
enum Origin {
    File(String),
    Text(String),
    Code,
}

/// A scenario, the components it runs with, and the seeds to run: what a user's test builds.
#[derive(Clone, Debug)]
pub struct Simulation {
    scenario: Arc<Scenario>,
    origin: Origin,
    /// The `--set` overrides applied, in order (for the reproduce line).
    overrides: Vec<Override>,
    components: Components,
    /// Whether a user's component is plugged in (then the CLI cannot reproduce a failure).
    custom: bool,
    seeds: SeedRange,
    jobs: usize,
}

/// A bad `FENCESIM_*` variable or a bad override.
#[derive(Clone, Debug, PartialEq)]
pub enum SimulationError {
    /// The scenario (file, text or override) is invalid: names file, line and field.
    Scenario(ScenarioError),
    /// An override is not `FIELD=VALUE`, or an environment variable is malformed.
    Input(String),
}

impl fmt::Display for SimulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimulationError::Scenario(e) => write!(f, "{e}"),
            SimulationError::Input(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for SimulationError {}

impl From<ScenarioError> for SimulationError {
    fn from(e: ScenarioError) -> Self {
        SimulationError::Scenario(e)
    }
}

impl Simulation {
    /// The scenario file at `path`, with the built-in components and its own seeds.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/gc-pause-textbook-max-token.toml");
    /// let sim = fencesim::Simulation::load(path).unwrap();
    /// assert_eq!(sim.scenario().name, "gc-pause-textbook-max-token");
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Simulation, SimulationError> {
        let path = path.as_ref();
        let scenario = fencesim_scenario::load(path)?;
        Ok(Simulation::with_origin(
            scenario,
            Origin::File(path.display().to_string()),
        ))
    }

    /// Scenario TOML `text`; `file` names it in errors.
    pub fn from_toml(text: &str, file: &str) -> Result<Simulation, SimulationError> {
        let scenario = fencesim_scenario::parse_str(text, file)?;
        Ok(Simulation::with_origin(
            scenario,
            Origin::Text(file.to_string()),
        ))
    }

    /// A scenario built in code (e.g. a loaded one with fields changed). Prefer
    /// [`Simulation::set`] for changes: it validates them like a file.
    ///
    /// ```
    /// let mut scenario = fencesim::scenario::parse_str(fencesim::scenario::MINIMAL_TOML, "m.toml").unwrap();
    /// scenario.workers.writes_per_lease = 3;
    /// let sim = fencesim::Simulation::new(scenario);
    /// assert_eq!(sim.scenario().workers.writes_per_lease, 3);
    /// ```
    pub fn new(scenario: Scenario) -> Simulation {
        Simulation::with_origin(scenario, Origin::Code)
    }

    fn with_origin(scenario: Scenario, origin: Origin) -> Simulation {
        let seeds = scenario.seeds;
        Simulation {
            scenario: Arc::new(scenario),
            origin,
            overrides: Vec::new(),
            components: Components::default(),
            custom: false,
            seeds,
            jobs: default_jobs(),
        }
    }

    /// Overrides one field, `FIELD=VALUE` with a TOML value (`lease.ttl_ms=8000`,
    /// `storage.fencing="none"`), exactly as `--set` does: the scenario is rendered back to
    /// TOML, changed, and validated like a file. The seed range follows the scenario's `seeds`
    /// when that is the field set.
    ///
    /// ```
    /// let sim = fencesim::Simulation::from_toml(fencesim::scenario::MINIMAL_TOML, "m.toml")
    ///     .unwrap()
    ///     .set("lease.ttl_ms=8000")
    ///     .unwrap();
    /// assert_eq!(sim.scenario().lease.ttl_ms, 8000);
    /// let bad = sim.set("lease.ttl_ms=-1").unwrap_err();
    /// assert!(bad.to_string().contains("lease.ttl_ms"), "{bad}");
    /// ```
    pub fn set(mut self, assignment: &str) -> Result<Simulation, SimulationError> {
        let parsed = Override::parse(assignment)
            .map_err(|e| SimulationError::Input(format!("set({assignment:?}): {e}")))?;
        let text = fencesim_scenario::scenario_toml(&self.scenario);
        let file = match &self.origin {
            Origin::File(f) | Origin::Text(f) => f.clone(),
            Origin::Code => "(scenario built in code)".to_string(),
        };
        let scenario =
            fencesim_scenario::parse_str_with(&text, &file, std::slice::from_ref(&parsed))?;
        if parsed.field == "seeds" {
            self.seeds = scenario.seeds;
        }
        self.scenario = Arc::new(scenario);
        self.overrides.push(parsed);
        Ok(self)
    }

    /// Plugs in the user's protected store (see [`crate::Fence`]).
    pub fn store(
        mut self,
        factory: impl Fn(&Scenario) -> Box<dyn Fence> + Send + Sync + 'static,
    ) -> Simulation {
        self.components.store = Arc::new(factory);
        self.custom = true;
        self
    }

    /// Plugs in the user's worker policy, built per worker incarnation (the worker's name is
    /// the second argument; see [`crate::WorkerPolicy`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fencesim::{Simulation, SpecPolicy, WorkerPolicy};
    ///
    /// // The textbook GC pause with no fencing at the store: a worker that re-checks its
    /// // local deadline right before each write sees its clock ran on during the pause.
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/gc-pause-textbook-none.toml");
    /// let recheck = SpecPolicy {
    ///     renew_every_ms: 3_000,
    ///     renew_deadline_ms: 10_000,
    ///     stop_on_renew_failure: true,
    ///     recheck_deadline_before_write: true,
    ///     check_lease_before_write: false,
    /// };
    /// let sweep = Simulation::load(path).unwrap()
    ///     .policy(move |_, _| Arc::new(recheck))
    ///     .seeds(0..3)
    ///     .run();
    /// assert!(sweep.violated().is_empty());
    /// ```
    pub fn policy(
        mut self,
        factory: impl Fn(&Scenario, &str) -> Arc<dyn WorkerPolicy> + Send + Sync + 'static,
    ) -> Simulation {
        self.components.policy = Arc::new(factory);
        self.custom = true;
        self
    }

    /// Plugs in the user's token source, built per seed (the second argument; see
    /// [`crate::TokenIssuer`]).
    ///
    /// ```
    /// use fencesim::{Invariant, Simulation, TokenIssuer, TokenRequest};
    ///
    /// /// Seconds since the epoch as tokens: two grants in one second get the same token.
    /// struct UnixSeconds;
    /// impl TokenIssuer for UnixSeconds {
    ///     fn name(&self) -> String { "unix-seconds".into() }
    ///     fn issue(&mut self, request: &TokenRequest<'_>) -> u64 {
    ///         (request.wall_ms.max(0) / 60_000) as u64 // minutes, to make the point quickly
    ///     }
    /// }
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/gc-pause-textbook-max-token.toml");
    /// let sweep = Simulation::load(path).unwrap()
    ///     .tokens(|_, _| Box::new(UnixSeconds))
    ///     .seeds(0..2)
    ///     .run();
    /// assert!(sweep.violated().contains(&Invariant::I1));
    /// ```
    pub fn tokens(
        mut self,
        factory: impl Fn(&Scenario, u64) -> Box<dyn TokenIssuer> + Send + Sync + 'static,
    ) -> Simulation {
        self.components.tokens = Arc::new(factory);
        self.custom = true;
        self
    }

    /// The seeds to run (half-open); `FENCESIM_SEED` / `FENCESIM_SEEDS` override it.
    pub fn seeds(mut self, seeds: Range<u64>) -> Simulation {
        self.seeds = SeedRange {
            start: seeds.start,
            end: seeds.end.max(seeds.start),
        };
        self
    }

    /// Seeds run at a time (1 to [`MAX_JOBS`]; default: the machine's cores);
    /// `FENCESIM_JOBS` overrides it.
    pub fn jobs(mut self, jobs: usize) -> Simulation {
        self.jobs = jobs.clamp(1, MAX_JOBS);
        self
    }

    /// Expect no invariant violated in any seed (replaces the scenario's `[expect]` outcome;
    /// its coverage and `never` conditions stay).
    pub fn expect_safe(self) -> Simulation {
        self.expect(Outcome::Safe)
    }

    /// Expect exactly these invariants violated, each in some seed (replaces the scenario's
    /// `[expect]` outcome; its coverage and `never` conditions stay).
    pub fn expect_violations(self, invariants: &[Invariant]) -> Simulation {
        self.expect(Outcome::Violates(invariants.to_vec()))
    }

    fn expect(mut self, outcome: Outcome) -> Simulation {
        Arc::make_mut(&mut self.scenario).expect.outcome = outcome;
        self
    }

    /// The resolved scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The components the runs use.
    pub fn components(&self) -> &Components {
        &self.components
    }

    /// The seeds and jobs a run uses: the code's, overridden by the environment.
    pub fn resolved_seeds(&self) -> Result<(SeedRange, usize), SimulationError> {
        // A value that is not UTF-8 is passed on (lossily) so it is refused by name, never
        // taken for an unset variable (which would run the whole range).
        let env = EnvSeeds::from_env(&|name| match std::env::var(name) {
            Ok(value) => Some(value),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(raw)) => Some(raw.to_string_lossy().into_owned()),
        })?;
        Ok((
            env.seeds.unwrap_or(self.seeds),
            env.jobs.unwrap_or(self.jobs),
        ))
    }

    /// Runs the seeds (see [`Simulation::resolved_seeds`]) and summarizes them against the
    /// expectation. Panics on a malformed `FENCESIM_*` variable.
    pub fn run(&self) -> Sweep {
        let (seeds, jobs) = self
            .resolved_seeds()
            .unwrap_or_else(|e| panic!("fencesim: {e}"));
        let outcomes = sweep_all(&self.scenario, seeds.iter(), jobs, &self.components);
        let summary = fencesim_verdict::summarize(&self.scenario, seeds, &outcomes);
        Sweep {
            scenario: self.scenario.clone(),
            seeds,
            outcomes,
            summary,
        }
    }

    /// Runs the seeds and returns the sweep if the expectation is met, or the failure: the
    /// seed that shows it (replayed for its proof) and the line that reproduces it.
    pub fn check(&self) -> Result<Sweep, Box<Failure>> {
        let sweep = self.run();
        if sweep.met() {
            return Ok(sweep);
        }
        let seed = sweep.culprit_seed();
        let replayed = seed.map(|seed| self.replay(seed));
        Err(Box::new(Failure {
            text: self.failure_text(&sweep, replayed.as_ref()),
            seed,
            trace_hash: replayed.map(|r| r.run.outcome.trace_hash),
            sweep,
        }))
    }

    /// Runs the seeds and panics unless the expectation is met (see [`Failure`] for the
    /// message); returns the sweep when it is. The panic names the caller's line, as
    /// `assert!` would.
    #[track_caller]
    pub fn assert_expectation(&self) -> Sweep {
        match self.check() {
            Ok(sweep) => sweep,
            Err(failure) => panic!("{failure}"),
        }
    }

    /// One seed, run with these components, with its text, pictures and trace.
    pub fn replay(&self, seed: u64) -> Replay {
        replay(&self.scenario, seed, &self.components)
    }

    /// The line that reproduces `seed`: `FENCESIM_SEED=N cargo test [-p PKG] [TEST -- --exact]`
    /// (the test's name is libtest's name for the current thread).
    pub fn reproduce_line(&self, seed: u64) -> String {
        let mut line = format!("FENCESIM_SEED={seed} cargo test");
        if let Ok(package) = std::env::var("CARGO_PKG_NAME") {
            line.push_str(&format!(" -p {package}"));
        }
        match std::thread::current().name() {
            Some(test) if test != "main" => line.push_str(&format!(" {test} -- --exact")),
            _ => {}
        }
        line
    }

    fn failure_text(&self, sweep: &Sweep, replayed: Option<&Replay>) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "fencesim: scenario {} (hash {}), seeds {}: expectation NOT MET: {}",
            self.scenario.name,
            sweep.summary.scenario_hash,
            sweep.seeds,
            sweep.summary.expectation_detail
        );
        if let Some(replay) = replayed {
            let outcome = &replay.run.outcome;
            let _ = writeln!(
                out,
                "failing seed {} (trace hash {}, {} events)",
                replay.seed, outcome.trace_hash, outcome.events
            );
            if let Some(panic) = &outcome.panic {
                let _ = writeln!(out, "a simulated node panicked: {panic}");
            } else if outcome.runaway {
                let _ = writeln!(
                    out,
                    "runaway: over its event budget of {} events",
                    self.scenario.event_budget()
                );
            }
            let unexpected = |i: Invariant| match &self.scenario.expect.outcome {
                Outcome::Safe => true,
                Outcome::Violates(list) => !list.contains(&i),
            };
            let violations = &outcome.checked.violations;
            if let Some(first) = violations
                .iter()
                .find(|v| unexpected(v.invariant))
                .or(violations.first())
            {
                out.push_str("first violation, with its proof:\n");
                out.push_str(&render_violation(&replay.run.history, first));
            }
            let _ = writeln!(out, "reproduce: {}", self.reproduce_line(replay.seed));
            if let Some(cli) = self.cli_line(replay.seed) {
                let _ = writeln!(out, "or, with the built-in components: {cli}");
            }
        }
        out
    }

    /// `fencesim replay FILE --seed N --set …` when the scenario came from a file.
    fn cli_line(&self, seed: u64) -> Option<String> {
        let Origin::File(file) = &self.origin else {
            return None;
        };
        if self.custom {
            return None;
        }
        let overrides: Vec<String> = self.overrides.iter().map(Override::to_arg).collect();
        Some(fencesim_scenario::identity::replay_command_with(
            file, seed, &overrides,
        ))
    }
}

/// Seeds run at once unless told otherwise (`FENCESIM_JOBS`, [`Simulation::jobs`], any
/// command's `--jobs`): every core, at most [`MAX_JOBS`].
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(MAX_JOBS)
}

/// What `FENCESIM_SEED`, `FENCESIM_SEEDS`, madsim's `MADSIM_TEST_SEED` and `FENCESIM_JOBS`
/// say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EnvSeeds {
    /// `FENCESIM_SEED=N` or `MADSIM_TEST_SEED=N` (as `N..N+1`) or `FENCESIM_SEEDS=A..B`.
    pub seeds: Option<SeedRange>,
    /// `FENCESIM_JOBS=N`.
    pub jobs: Option<usize>,
}

impl EnvSeeds {
    /// Reads the variables through `var` (`std::env::var(..).ok()` in a test run); an error
    /// names the variable and what was expected. Setting both seed variables is an error.
    ///
    /// ```
    /// use fencesim::EnvSeeds;
    /// let vars = |name: &str| (name == "FENCESIM_SEEDS").then(|| "10..20".to_string());
    /// let env = EnvSeeds::from_env(&vars).unwrap();
    /// assert_eq!(env.seeds.unwrap().iter(), 10..20);
    /// let bad = |name: &str| (name == "FENCESIM_SEED").then(|| "seven".to_string());
    /// assert!(EnvSeeds::from_env(&bad).unwrap_err().to_string().contains("FENCESIM_SEED"));
    /// let madsim = |name: &str| (name == "MADSIM_TEST_SEED").then(|| "7".to_string());
    /// assert_eq!(EnvSeeds::from_env(&madsim).unwrap().seeds.unwrap().iter(), 7..8);
    /// ```
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<EnvSeeds, SimulationError> {
        let bad = |name: &str, value: &str, expected: &str| {
            SimulationError::Input(format!("{name}: expected {expected}, got `{value}`"))
        };
        let seed = var("FENCESIM_SEED");
        let seeds = var("FENCESIM_SEEDS");
        let seeds = match (seed, seeds) {
            (Some(_), Some(_)) => {
                return Err(SimulationError::Input(
                    "FENCESIM_SEED and FENCESIM_SEEDS are both set; expected one of them".into(),
                ))
            }
            (Some(seed), None) => {
                let n: u64 = seed
                    .trim()
                    .parse()
                    .map_err(|_| bad("FENCESIM_SEED", &seed, "a seed (an unsigned integer)"))?;
                let end = n.checked_add(1).ok_or_else(|| {
                    bad("FENCESIM_SEED", &seed, "a seed below 18446744073709551615")
                })?;
                Some(SeedRange { start: n, end })
            }
            (None, Some(range)) => Some(
                SeedRange::parse(range.trim())
                    .map_err(|e| SimulationError::Input(format!("FENCESIM_SEEDS: {e}")))?,
            ),
            (None, None) => None,
        };
        // madsim's own variable: a fencesim seed is the madsim runtime's seed, so a user who
        // exported it for madsim gets that seed here too (the same seed twice is fine).
        let madsim = match var("MADSIM_TEST_SEED") {
            None => None,
            Some(text) => {
                let n: u64 = text
                    .trim()
                    .parse()
                    .map_err(|_| bad("MADSIM_TEST_SEED", &text, "a seed (an unsigned integer)"))?;
                let end = n.checked_add(1).ok_or_else(|| {
                    bad(
                        "MADSIM_TEST_SEED",
                        &text,
                        "a seed below 18446744073709551615",
                    )
                })?;
                Some(SeedRange { start: n, end })
            }
        };
        let seeds = match (seeds, madsim) {
            (Some(a), Some(b)) if a != b => {
                return Err(SimulationError::Input(format!(
                    "MADSIM_TEST_SEED={} and FENCESIM_SEED(S)={a}: the variables name different \
                     seeds; expected one of them (or the same seed)",
                    b.start
                )))
            }
            (seeds, madsim) => seeds.or(madsim),
        };
        let jobs = match var("FENCESIM_JOBS") {
            None => None,
            Some(text) => match text.trim().parse::<usize>() {
                Ok(n) if (1..=MAX_JOBS).contains(&n) => Some(n),
                _ => {
                    return Err(bad(
                        "FENCESIM_JOBS",
                        &text,
                        &format!("a number of threads from 1 to {MAX_JOBS}"),
                    ))
                }
            },
        };
        Ok(EnvSeeds { seeds, jobs })
    }
}

/// The seeds of one [`Simulation::run`], their outcomes and their summary.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The scenario run.
    pub scenario: Arc<Scenario>,
    /// The seeds run.
    pub seeds: SeedRange,
    /// Per-seed outcomes, sorted by seed.
    pub outcomes: Vec<SeedOutcome>,
    /// The summary and the expectation's verdict, as in `summary.json`.
    pub summary: Summary,
}

impl Sweep {
    /// Whether the expectation is met.
    pub fn met(&self) -> bool {
        self.summary.expectation_met
    }

    /// Seeds with a violation, a panic or a runaway, ascending.
    pub fn failing_seeds(&self) -> Vec<u64> {
        self.summary.failing_seeds.clone()
    }

    /// The invariants violated in some seed, in order.
    pub fn violated(&self) -> Vec<Invariant> {
        let mut all: Vec<Invariant> = self
            .outcomes
            .iter()
            .flat_map(|o| o.checked.violated())
            .collect();
        all.sort();
        all.dedup();
        all
    }

    /// The seed that best shows why the expectation failed: the first with a panic, a runaway,
    /// or an invariant the expectation does not allow; else the first hitting a `never`
    /// condition; else none (an expected violation or coverage that never happened).
    fn culprit_seed(&self) -> Option<u64> {
        let expect = &self.scenario.expect;
        let allowed = |i: &Invariant| match &expect.outcome {
            Outcome::Safe => false,
            Outcome::Violates(list) => list.contains(i),
        };
        self.outcomes
            .iter()
            .find(|o| {
                o.panic.is_some() || o.runaway || o.checked.violated().iter().any(|i| !allowed(i))
            })
            .or_else(|| {
                self.outcomes.iter().find(|o| {
                    fencesim_check::coverage::hits(&o.checked.metrics)
                        .iter()
                        .any(|c| expect.never.contains(c))
                })
            })
            .map(|o| o.seed)
    }
}

/// An expectation not met: the message [`Simulation::assert_expectation`] panics with.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed that shows it, when one does.
    pub seed: Option<u64>,
    /// That seed's trace hash.
    pub trace_hash: Option<String>,
    /// The whole sweep.
    pub sweep: Sweep,
    text: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Failure {}
