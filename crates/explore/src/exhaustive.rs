//! Exhaustive search of small fault schedules: every schedule of at most `max_faults` (0, 1
//! or 2) faults drawn from a finite alphabet, each at a start time on a grid
//! (`0, r, 2r, … < horizon`), run on the scenario's first seed, in a fixed order. Either a
//! schedule violates a target invariant (the lowest-numbered one is reported), or the result
//! states exactly what was covered.
//!
//! The alphabet: every fault of the scenario's explicit `faults.schedule` (its time
//! forgotten), the fault of its `faults.outage` if any, and for each `faults.random` entry
//! every target (its `nodes`, or every worker) × sizes (a `const` distribution's value, any
//! other distribution's 0.5 and 0.99 quantiles) × signs for a clock step × directions for a
//! partition whose `one_way_probability` is strictly between 0 and 1; identical faults are
//! kept once, in order of first appearance. The scenario's own schedule, outage and random
//! entries are not run: the search replaces them.
//!
//! The order: the empty schedule; then every placement (a letter at a start time), ordered
//! by time, then letter; then every unordered pair of distinct placements, lexicographically
//! by (first placement, second placement). A pair whose two faults stop the same node over
//! overlapping intervals (as `plan` and the explore strategy refuse) is skipped and counted.
//! The count is computed before anything runs.
//!
//! Deterministic and independent of `jobs`: schedules run in chunks in enumeration order,
//! every result is kept by its index, and what is reported stops at the first violating
//! index (unless `all`).

use std::{fmt, sync::Arc};

use fencesim_model::{nodes, Invariant};
use fencesim_scenario::{Dist, Fault, FaultKind, RandomFault, Scenario, TimedFault};
use fencesim_sim::runner::{run_seed, Components};

use crate::{
    explore::quantile_ms,
    shrink::{describe, explicit_for_seed, not_a_verdict, MIN_DURATION_MS},
};

/// Faults per schedule at most that the search accepts.
pub const MAX_FAULTS: usize = 2;

/// Default start-time resolution (ms).
pub const DEFAULT_RESOLUTION_MS: u64 = 100;

/// Default bound on the number of schedules.
pub const DEFAULT_MAX_SCHEDULES: u64 = 200_000;

/// Schedules per chunk and per job: the search stops after the chunk holding the first
/// violation (counting stops at the violation itself).
const CHUNK_PER_JOB: usize = 32;

/// Progress is reported after every this many schedules counted (and at the end), whatever
/// the number of jobs: the same search prints the same progress on 1 and 2 jobs.
pub const PROGRESS_EVERY: u64 = 32;

/// How to search.
#[derive(Clone)]
pub struct ExhaustiveOptions {
    /// Start times are multiples of this (ms, > 0).
    pub resolution_ms: u64,
    /// Faults per schedule at most (0..=[`MAX_FAULTS`]).
    pub max_faults: usize,
    /// Start times are below this (ms); `None`: the scenario's `duration_ms`.
    pub horizon_ms: Option<u64>,
    /// A run violates when it violates any of these; `None`: any invariant.
    pub invariants: Option<Vec<Invariant>>,
    /// Refuse to search more schedules than this.
    pub max_schedules: u64,
    /// Simulations at once (each on its own thread and runtime).
    pub jobs: usize,
    /// Run every schedule and count every violating one (else stop at the first violation).
    pub all: bool,
    /// Stop after this many schedules even without a violation (a benchmark's budget; the
    /// statement then says the bound was not covered). `None`: the whole bound.
    pub stop_after: Option<u64>,
    /// The store, worker policy and token source every schedule runs with.
    pub components: Components,
}

impl Default for ExhaustiveOptions {
    fn default() -> Self {
        ExhaustiveOptions {
            resolution_ms: DEFAULT_RESOLUTION_MS,
            max_faults: MAX_FAULTS,
            horizon_ms: None,
            invariants: None,
            max_schedules: DEFAULT_MAX_SCHEDULES,
            jobs: 1,
            all: false,
            stop_after: None,
            components: Components::default(),
        }
    }
}

/// Why the search was refused before any run.
#[derive(Clone, Debug, PartialEq)]
pub enum ExhaustiveError {
    /// `resolution_ms` is 0.
    ZeroResolution,
    /// `horizon_ms` is 0 or past the scenario's `duration_ms`.
    Horizon {
        /// The horizon asked for.
        horizon_ms: u64,
        /// The scenario's `duration_ms`.
        duration_ms: u64,
    },
    /// `resolution_ms` is above the horizon (a single start time, 0, would be searched).
    ResolutionAboveHorizon {
        /// The resolution asked for.
        resolution_ms: u64,
        /// The horizon.
        horizon_ms: u64,
    },
    /// `max_faults` is above [`MAX_FAULTS`].
    TooManyFaults(usize),
    /// `invariants` is an empty list.
    NoInvariants,
    /// The scenario has no fault to enumerate.
    EmptyAlphabet,
    /// More schedules than `max_schedules`.
    TooManySchedules {
        /// Schedules the bound would need.
        total: u128,
        /// The limit.
        max_schedules: u64,
        /// Letters in the alphabet.
        letters: usize,
        /// Start times.
        slots: u64,
        /// The resolution (ms).
        resolution_ms: u64,
        /// The horizon (ms).
        horizon_ms: u64,
        /// Faults per schedule at most.
        max_faults: usize,
    },
}

impl fmt::Display for ExhaustiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExhaustiveError::ZeroResolution => {
                write!(f, "expected a positive resolution in ms, got 0")
            }
            ExhaustiveError::Horizon {
                horizon_ms,
                duration_ms,
            } => write!(
                f,
                "expected a horizon from 1 to the scenario's duration_ms ({duration_ms}) ms, got \
                 {horizon_ms}"
            ),
            ExhaustiveError::ResolutionAboveHorizon {
                resolution_ms,
                horizon_ms,
            } => write!(
                f,
                "expected a resolution of at most the horizon ({horizon_ms} ms), got \
                 {resolution_ms} ms"
            ),
            ExhaustiveError::TooManyFaults(n) => write!(
                f,
                "expected at most {MAX_FAULTS} faults per schedule (0, 1 or 2), got {n}"
            ),
            ExhaustiveError::NoInvariants => {
                write!(f, "expected at least one invariant (I1 to I5)")
            }
            ExhaustiveError::EmptyAlphabet => write!(
                f,
                "no fault to enumerate: the scenario has no [[faults.schedule]], \
                 [faults.outage] or [[faults.random]] entry"
            ),
            ExhaustiveError::TooManySchedules {
                total,
                max_schedules,
                letters,
                slots,
                resolution_ms,
                horizon_ms,
                max_faults,
            } => write!(
                f,
                "{} schedules of at most {max_faults} faults ({letters} faults in the alphabet \
                 x {slots} start times: 0..{horizon_ms} ms every {resolution_ms} ms) exceed \
                 the limit of {}; narrow it with a shorter --horizon-ms or a coarser \
                 --resolution-ms (or fewer faults in the scenario, or --max-faults 1), or \
                 raise --max-schedules",
                thousands(*total),
                thousands(u128::from(*max_schedules))
            ),
        }
    }
}

impl std::error::Error for ExhaustiveError {}

/// A violating schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Violating {
    /// Its index in the enumeration (0: the empty schedule).
    pub index: u64,
    /// The schedule, sorted by time.
    pub schedule: Vec<TimedFault>,
    /// Everything its run violates (at least one target invariant).
    pub violated: Vec<Invariant>,
}

/// A schedule whose run failed without a verdict (a panic or a runaway).
#[derive(Clone, Debug, PartialEq)]
pub struct NotAVerdict {
    /// Its index in the enumeration.
    pub index: u64,
    /// The schedule.
    pub schedule: Vec<TimedFault>,
    /// `panicked: …` or `runaway: …`.
    pub what: String,
}

/// Progress, after every [`PROGRESS_EVERY`] schedules and at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Schedules run so far (in enumeration order).
    pub run: u64,
    /// Schedules in the bound.
    pub total: u64,
    /// Violating schedules so far.
    pub violating: u64,
}

/// What the search covered and found.
#[derive(Clone, Debug, PartialEq)]
pub struct Exhausted {
    /// Every schedule runs on this seed (the scenario's first).
    pub seed: u64,
    /// The faults a schedule is made of.
    pub alphabet: Vec<Fault>,
    /// Start times: `0, resolution, …` below the horizon.
    pub slots: u64,
    /// The start-time resolution (ms).
    pub resolution_ms: u64,
    /// Start times are below this (ms).
    pub horizon_ms: u64,
    /// Faults per schedule at most.
    pub max_faults: usize,
    /// The invariants looked for (`None`: any).
    pub invariants: Option<Vec<Invariant>>,
    /// Schedules in the bound (N).
    pub total: u64,
    /// Schedules run, in enumeration order: up to and including the first violation, or all.
    pub run: u64,
    /// Pairs not run because two faults stop one node over overlapping intervals.
    pub skipped_overlaps: u64,
    /// The lowest-index violating schedule.
    pub first_violation: Option<Violating>,
    /// Violating schedules among those run (1 at most unless `all`).
    pub violating: u64,
    /// Every schedule was run (`all`).
    pub all: bool,
    /// Schedules run that failed without a verdict: never counted as violations, never
    /// counted as passing.
    pub not_verdicts: u64,
    /// The first of them.
    pub first_not_a_verdict: Option<NotAVerdict>,
}

impl Exhausted {
    /// One line saying exactly what was covered, or what was found.
    pub fn statement(&self) -> String {
        let what = match &self.invariants {
            Some(invariants) => names(invariants),
            None => "any invariant".to_string(),
        };
        let bound = format!(
            "≤ {}-fault schedule at {} ms resolution",
            self.max_faults, self.resolution_ms
        );
        let alphabet: Vec<String> = self.alphabet.iter().map(ToString::to_string).collect();
        let last_start = (self.slots - 1) * self.resolution_ms;
        let mut covered = format!(
            "{} fault{} in the alphabet: {}; start times 0..{last_start} ms ({} slots below \
             {} ms); seed {}",
            self.alphabet.len(),
            if self.alphabet.len() == 1 { "" } else { "s" },
            alphabet.join(", "),
            thousands(u128::from(self.slots)),
            self.horizon_ms,
            self.seed
        );
        if self.max_faults >= 2 {
            covered.push_str(&format!(
                "; {} pairs skipped: two stops overlapping on one node",
                thousands(u128::from(self.skipped_overlaps))
            ));
        }
        let not_verdicts = match &self.first_not_a_verdict {
            Some(first) => format!(
                "; but {} schedule{} failed without a violation, neither passing nor violating \
                 (first: schedule {}, {}: {})",
                thousands(u128::from(self.not_verdicts)),
                if self.not_verdicts == 1 { "" } else { "s" },
                first.index + 1,
                schedule_text(&first.schedule),
                first.what
            ),
            None => String::new(),
        };
        match &self.first_violation {
            None if self.run < self.total => format!(
                "stopped after {} of {} schedules with no violation of {what}: the {bound} bound \
                 was NOT covered ({covered}){not_verdicts}",
                thousands(u128::from(self.run)),
                thousands(u128::from(self.total))
            ),
            None => format!(
                "no violation of {what} for any {bound} over {} schedules ({covered}){not_verdicts}",
                thousands(u128::from(self.total))
            ),
            Some(found) => {
                let all = if self.all {
                    format!(
                        "; {} violating schedules among all {}",
                        thousands(u128::from(self.violating)),
                        thousands(u128::from(self.total))
                    )
                } else {
                    String::new()
                };
                format!(
                    "violation of {} found by schedule {} of {} ({bound}): {}{all} ({covered}){not_verdicts}",
                    names(&found.violated),
                    thousands(u128::from(found.index + 1)),
                    thousands(u128::from(self.total)),
                    schedule_text(&found.schedule)
                )
            }
        }
    }
}

/// The schedule on one line: `at 1000 ms: gc-pause …; at …`, or `the empty schedule`.
pub fn schedule_text(schedule: &[TimedFault]) -> String {
    if schedule.is_empty() {
        return "the empty schedule".to_string();
    }
    let faults: Vec<String> = schedule.iter().map(describe).collect();
    faults.join("; ")
}

/// The alphabet of `scenario` (see the module docs).
pub fn alphabet(scenario: &Scenario) -> Vec<Fault> {
    let mut letters: Vec<Fault> = Vec::new();
    let mut add = |fault: Fault| {
        if !letters.contains(&fault) {
            letters.push(fault);
        }
    };
    for timed in &scenario.faults.schedule {
        add(timed.fault.clone());
    }
    if let Some(outage) = &scenario.faults.outage {
        add(outage.fault());
    }
    let workers: Vec<String> = (0..scenario.workers.count).map(nodes::worker).collect();
    for entry in &scenario.faults.random {
        for fault in random_letters(entry, &workers) {
            add(fault);
        }
    }
    letters
}

/// Every letter one random entry contributes.
fn random_letters(entry: &RandomFault, workers: &[String]) -> Vec<Fault> {
    let targets = if entry.nodes.is_empty() {
        workers.to_vec()
    } else {
        entry.nodes.clone()
    };
    let mut sizes = match entry.duration_ms {
        Dist::Const { value } => vec![value],
        ref dist => vec![quantile_ms(dist, 0.5), quantile_ms(dist, 0.99)],
    };
    for size in &mut sizes {
        *size = size.max(MIN_DURATION_MS);
    }
    sizes.dedup();
    let signs: &[bool] = if entry.kind == FaultKind::ClockStep {
        &[false, true]
    } else {
        &[false]
    };
    // Only a partition has a direction; every other kind is listed, so a new one does not
    // compile until it says whether it has one.
    let directions: &[bool] = match entry.kind {
        FaultKind::Partition if entry.one_way_probability >= 1.0 => &[true],
        FaultKind::Partition if entry.one_way_probability > 0.0 => &[false, true],
        FaultKind::Partition
        | FaultKind::GcPause
        | FaultKind::VmSuspend
        | FaultKind::ClockStep
        | FaultKind::HoldRelease
        | FaultKind::CoordinatorRestart
        | FaultKind::StorageRestart
        | FaultKind::WorkerCrash
        | FaultKind::Panic
        | FaultKind::HolderLinkCut => &[false],
    };
    let mut letters = Vec::new();
    // Kinds with a fixed target ignore it: the duplicates fold in `alphabet`.
    for target in &targets {
        for &size in &sizes {
            for &negative in signs {
                for &one_way in directions {
                    letters.push(Fault::drawn(
                        entry.kind,
                        target.clone(),
                        size,
                        negative,
                        one_way,
                    ));
                }
            }
        }
    }
    letters
}

/// The schedules of a bound, in enumeration order.
#[derive(Clone, Debug)]
pub struct Enumeration {
    /// The letters.
    pub alphabet: Vec<Fault>,
    /// Start times `0, resolution, …` (this many).
    pub slots: u64,
    /// The resolution (ms).
    pub resolution_ms: u64,
    /// Faults per schedule at most (0..=2).
    pub max_faults: usize,
}

impl Enumeration {
    /// The bound: `alphabet` at every multiple of `resolution_ms` below `horizon_ms`.
    pub fn new(
        alphabet: Vec<Fault>,
        resolution_ms: u64,
        horizon_ms: u64,
        max_faults: usize,
    ) -> Enumeration {
        assert!(resolution_ms > 0 && max_faults <= MAX_FAULTS);
        Enumeration {
            alphabet,
            slots: horizon_ms.div_ceil(resolution_ms),
            resolution_ms,
            max_faults,
        }
    }

    fn placements(&self) -> u128 {
        self.alphabet.len() as u128 * u128::from(self.slots)
    }

    /// The placement `p`: (slot, letter), ordered by slot, then letter.
    fn placement(&self, p: u64) -> TimedFault {
        let letters = self.alphabet.len() as u64;
        TimedFault {
            at_ms: ((p / letters) * self.resolution_ms) as f64,
            fault: self.alphabet[(p % letters) as usize].clone(),
        }
    }

    /// Pairs skipped for overlapping stops (0 unless `max_faults` is 2), counted without
    /// enumerating them: whether two letters overlap depends only on the slots between them.
    pub fn skipped(&self) -> u128 {
        if self.max_faults < 2 {
            return 0;
        }
        let mut skipped = 0u128;
        for (a, first) in self.alphabet.iter().enumerate() {
            for (b, second) in self.alphabet.iter().enumerate() {
                let mut d = 0u64;
                while d < self.slots
                    && (d == 0 || (d * self.resolution_ms) as f64 <= first.duration_ms())
                {
                    // The pair (slot s, a), (slot s + d, b), first before second.
                    let ordered = d > 0 || a < b;
                    let one = TimedFault {
                        at_ms: 0.0,
                        fault: first.clone(),
                    };
                    let two = TimedFault {
                        at_ms: (d * self.resolution_ms) as f64,
                        fault: second.clone(),
                    };
                    if ordered && stops_overlap(&one, &two) {
                        skipped += u128::from(self.slots - d);
                    }
                    d += 1;
                }
            }
        }
        skipped
    }

    /// Schedules in the bound: 1 + placements + pairs - skipped pairs (by `max_faults`).
    pub fn total(&self) -> u128 {
        let p = self.placements();
        let mut total = 1;
        if self.max_faults >= 1 {
            total += p;
        }
        if self.max_faults >= 2 {
            total += p * p.saturating_sub(1) / 2 - self.skipped();
        }
        total
    }

    /// Every schedule, in order (see the module docs), each sorted by time.
    pub fn schedules(&self) -> impl Iterator<Item = Vec<TimedFault>> + '_ {
        let p = u64::try_from(self.placements()).expect("placements fit in u64");
        let singles = (self.max_faults >= 1).then_some(0..p).into_iter().flatten();
        let pairs = (self.max_faults >= 2)
            .then_some(0..p)
            .into_iter()
            .flatten()
            .flat_map(move |i| (i + 1..p).map(move |j| (i, j)))
            .filter_map(move |(i, j)| {
                let (one, two) = (self.placement(i), self.placement(j));
                (!stops_overlap(&one, &two)).then(|| vec![one, two])
            });
        std::iter::once(Vec::new())
            .chain(singles.map(move |i| vec![self.placement(i)]))
            .chain(pairs)
    }
}

/// Both faults stop the same node over overlapping intervals (`[at, end)`, as
/// `without_overlaps` and the scenario's own check decide it).
fn stops_overlap(one: &TimedFault, two: &TimedFault) -> bool {
    match (one.fault.stopped_node(), two.fault.stopped_node()) {
        (Some(a), Some(b)) if a == b => one.at_ms < two.end_ms() && two.at_ms < one.end_ms(),
        _ => false,
    }
}

/// Checks the options against `scenario` and builds the bound.
pub fn enumeration(
    scenario: &Scenario,
    options: &ExhaustiveOptions,
) -> Result<Enumeration, ExhaustiveError> {
    if options.resolution_ms == 0 {
        return Err(ExhaustiveError::ZeroResolution);
    }
    if options.max_faults > MAX_FAULTS {
        return Err(ExhaustiveError::TooManyFaults(options.max_faults));
    }
    if options.invariants.as_ref().is_some_and(Vec::is_empty) {
        return Err(ExhaustiveError::NoInvariants);
    }
    let horizon_ms = options.horizon_ms.unwrap_or(scenario.duration_ms);
    if horizon_ms == 0 || horizon_ms > scenario.duration_ms {
        return Err(ExhaustiveError::Horizon {
            horizon_ms,
            duration_ms: scenario.duration_ms,
        });
    }
    if options.resolution_ms > horizon_ms {
        return Err(ExhaustiveError::ResolutionAboveHorizon {
            resolution_ms: options.resolution_ms,
            horizon_ms,
        });
    }
    let alphabet = alphabet(scenario);
    if alphabet.is_empty() {
        return Err(ExhaustiveError::EmptyAlphabet);
    }
    let enumeration = Enumeration::new(
        alphabet,
        options.resolution_ms,
        horizon_ms,
        options.max_faults,
    );
    let total = enumeration.total();
    if total > u128::from(options.max_schedules) {
        return Err(ExhaustiveError::TooManySchedules {
            total,
            max_schedules: options.max_schedules,
            letters: enumeration.alphabet.len(),
            slots: enumeration.slots,
            resolution_ms: options.resolution_ms,
            horizon_ms,
            max_faults: options.max_faults,
        });
    }
    Ok(enumeration)
}

/// `scenario` as run for `seed` with `schedule` in place of every fault it has (its plan for
/// the seed made explicit, then the schedule replaced): what each schedule of the search
/// runs, and what to shrink when one violates.
pub fn candidate(scenario: &Scenario, seed: u64, schedule: &[TimedFault]) -> Scenario {
    let mut candidate = explicit_for_seed(scenario, seed);
    candidate.faults.schedule = schedule.to_vec();
    candidate
}

/// What one run gave.
enum RunOutcome {
    Passed,
    Violated(Vec<Invariant>),
    NotAVerdict(String),
}

/// Searches every schedule of the bound on `scenario`'s first seed; `on_progress` sees the
/// progress after every [`PROGRESS_EVERY`] schedules and at the end.
pub fn exhaustive(
    scenario: &Scenario,
    options: &ExhaustiveOptions,
    on_progress: &mut dyn FnMut(&Progress),
) -> Result<Exhausted, ExhaustiveError> {
    let enumeration = enumeration(scenario, options)?;
    let total = u64::try_from(enumeration.total()).expect("checked against max_schedules");
    let seed = scenario.seeds.start;
    let base = candidate(scenario, seed, &[]);
    let jobs = options.jobs.clamp(1, fencesim_scenario::limits::MAX_JOBS);
    let chunk_len = CHUNK_PER_JOB * jobs;
    let mut result = Exhausted {
        seed,
        alphabet: enumeration.alphabet.clone(),
        slots: enumeration.slots,
        resolution_ms: enumeration.resolution_ms,
        horizon_ms: options.horizon_ms.unwrap_or(scenario.duration_ms),
        max_faults: enumeration.max_faults,
        invariants: options.invariants.clone(),
        total,
        run: 0,
        skipped_overlaps: u64::try_from(enumeration.skipped()).expect("below the total"),
        first_violation: None,
        violating: 0,
        all: options.all,
        not_verdicts: 0,
        first_not_a_verdict: None,
    };
    let mut schedules = enumeration.schedules();
    let mut index = 0u64;
    let mut reported = 0u64;
    let stop_after = options.stop_after.unwrap_or(u64::MAX);
    loop {
        let room = usize::try_from(stop_after - result.run).unwrap_or(usize::MAX);
        let chunk: Vec<Vec<TimedFault>> = schedules.by_ref().take(chunk_len.min(room)).collect();
        if chunk.is_empty() {
            break;
        }
        let outcomes = run_chunk(&base, seed, &chunk, jobs, options);
        for (schedule, outcome) in chunk.into_iter().zip(outcomes) {
            result.count(index, schedule, outcome);
            index += 1;
            if result.first_violation.is_some() && !options.all {
                break;
            }
            if result.run.is_multiple_of(PROGRESS_EVERY) {
                on_progress(&result.progress());
                reported = result.run;
            }
        }
        if result.first_violation.is_some() && !options.all {
            break;
        }
    }
    if result.run != reported {
        on_progress(&result.progress());
    }
    Ok(result)
}

impl Exhausted {
    /// How far the search is.
    fn progress(&self) -> Progress {
        Progress {
            run: self.run,
            total: self.total,
            violating: self.violating,
        }
    }

    /// Counts the outcome of schedule `index`, keeping the first violation and the first run
    /// that is not a verdict.
    fn count(&mut self, index: u64, schedule: Vec<TimedFault>, outcome: RunOutcome) {
        self.run += 1;
        match outcome {
            RunOutcome::Passed => {}
            RunOutcome::NotAVerdict(what) => {
                self.not_verdicts += 1;
                self.first_not_a_verdict.get_or_insert(NotAVerdict {
                    index,
                    schedule,
                    what,
                });
            }
            RunOutcome::Violated(violated) => {
                self.violating += 1;
                self.first_violation.get_or_insert(Violating {
                    index,
                    schedule,
                    violated,
                });
            }
        }
    }
}

/// Runs one chunk on `jobs` threads; the outcomes in the chunk's order.
fn run_chunk(
    base: &Scenario,
    seed: u64,
    chunk: &[Vec<TimedFault>],
    jobs: usize,
    options: &ExhaustiveOptions,
) -> Vec<RunOutcome> {
    fencesim_sim::run_batch(chunk, jobs, |schedule| {
        let mut candidate = base.clone();
        candidate.faults.schedule = schedule.clone();
        judge(&candidate, seed, options)
    })
}

/// Runs one schedule and judges it against the target.
fn judge(candidate: &Scenario, seed: u64, options: &ExhaustiveOptions) -> RunOutcome {
    let outcome = run_seed(&Arc::new(candidate.clone()), seed, &options.components).outcome;
    if let Some(what) = not_a_verdict(&outcome, candidate) {
        return RunOutcome::NotAVerdict(what);
    }
    let violated = outcome.checked.violated();
    let hit = match &options.invariants {
        Some(target) => target.iter().any(|i| violated.contains(i)),
        None => !violated.is_empty(),
    };
    if hit {
        RunOutcome::Violated(violated)
    } else {
        RunOutcome::Passed
    }
}

fn names(invariants: &[Invariant]) -> String {
    let names: Vec<String> = invariants.iter().map(ToString::to_string).collect();
    names.join(", ")
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
