//! Shrinking one failing seed: its fault plan as an explicit schedule, reduced (faults
//! removed, durations halved, workers and resources dropped) to a 1-minimal schedule that
//! still violates the same invariants, with the 1-minimality verified and returned as data.
//!
//! The algorithm, to a fixpoint:
//! 1. ddmin over the faults: remove chunks (halves, quarters, ...) down to single faults;
//! 2. halve each remaining duration (`duration_ms`; `|delta_ms|` for a clock step) while the
//!    run still fails, retrying removal after every successful halving; each fault's size is
//!    first tried halved all the way down to the floor, so a size that does not matter costs
//!    one run;
//! 3. drop the last worker while no remaining fault names it and it is not a proxy bypass;
//!    drop resources while more than one remains.
//!
//! Then every single removal and every single halving of the result is run once more
//! ([`Minimality`]); thanks to the cache most of these runs are free.
//!
//! Bound: at most `max_runs` simulations during the search, plus at most
//! `2 × faults + 2` for the start, the verification and the final run.

use std::{collections::BTreeMap, fmt, sync::Arc};

use fencesim_check::coverage;
use fencesim_model::{nodes, Invariant};
use fencesim_scenario::{plan::plan, Outcome, Scenario, TimedFault};
use fencesim_sim::runner::{run_seed, Components};

/// Simulations the search may spend (see the module docs for the full bound).
pub const DEFAULT_MAX_RUNS: usize = 400;

/// Durations are not halved below this: a fault shorter than a millisecond is noise, and
/// halving must stop somewhere. A fault at this floor counts as "cannot be halved".
pub const MIN_DURATION_MS: f64 = 1.0;

/// How to shrink.
#[derive(Clone)]
pub struct ShrinkOptions {
    /// The store, worker policy and token source every candidate runs with (a user's own
    /// reach the shrinker exactly as the built-ins do).
    pub components: Components,
    /// Simulations the search may spend before it stops where it is.
    pub max_runs: usize,
    /// The invariants a candidate must still violate (all of them); default: every invariant
    /// the original seed violates.
    pub target: Option<Vec<Invariant>>,
}

impl Default for ShrinkOptions {
    fn default() -> Self {
        ShrinkOptions {
            components: Components::default(),
            max_runs: DEFAULT_MAX_RUNS,
            target: None,
        }
    }
}

/// What one accepted shrinking step changed.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The seed's fault plan as an explicit schedule (reproduces the failure).
    Start,
    /// These faults were removed.
    Removed(Vec<TimedFault>),
    /// The fault had its duration (or clock-step size) halved, once or down to the floor;
    /// `before_ms` is the old size.
    Halved {
        /// The fault.
        fault: TimedFault,
        /// The size before halving (ms).
        before_ms: f64,
    },
    /// The last worker was dropped.
    DroppedWorker(String),
    /// A resource was dropped.
    DroppedResource(String),
}

/// One accepted step, reported through `on_step` as it happens.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// 0 for the start, then 1, 2, ...
    pub number: usize,
    /// What the step changed.
    pub change: Change,
    /// Faults left after the step.
    pub faults: usize,
    /// Simulations run so far.
    pub runs: usize,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {:>3}: ", self.number)?;
        match &self.change {
            Change::Start => write!(f, "explicit schedule of the seed's plan reproduces it")?,
            Change::Removed(removed) => {
                let what: Vec<String> = removed.iter().map(describe).collect();
                write!(f, "removed {}", what.join("; "))?
            }
            Change::Halved { fault, before_ms } => {
                let times = fault
                    .fault
                    .size_ms()
                    .filter(|&after| after > 0.0)
                    .map_or(1, |after| {
                        (before_ms / after).log2().round().max(1.0) as u32
                    });
                let halved = if times == 1 {
                    "halved".to_string()
                } else {
                    format!("halved {times} times")
                };
                write!(
                    f,
                    "{halved} {} (was {})",
                    describe(fault),
                    format_ms(*before_ms)
                )?
            }
            Change::DroppedWorker(node) => write!(f, "dropped {node}")?,
            Change::DroppedResource(resource) => write!(f, "dropped resource {resource}")?,
        }
        let plural = if self.faults == 1 { "" } else { "s" };
        write!(f, " -> {} fault{plural} ({} runs)", self.faults, self.runs)
    }
}

/// One single-step reduction of the result, run again.
#[derive(Clone, Debug, PartialEq)]
pub struct MinimalityCheck {
    /// "remove ..." or "halve ...".
    pub change: String,
    /// Whether the reduced schedule still violates the target (false for a 1-minimal result).
    pub still_fails: bool,
}

/// The explicit 1-minimality verification of a shrink result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Minimality {
    /// Every single-step reduction tried.
    pub checks: Vec<MinimalityCheck>,
}

impl Minimality {
    /// Removing any single fault, or halving any duration above [`MIN_DURATION_MS`], no longer
    /// violates the target.
    pub fn is_one_minimal(&self) -> bool {
        self.checks.iter().all(|check| !check.still_fails)
    }
}

/// The shrunk failure.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The reduced scenario: explicit schedule, `seeds = seed..seed+1`,
    /// `expect.outcome = violates [what its run violates]`, coverage that its run hits.
    pub scenario: Scenario,
    /// The run seed.
    pub seed: u64,
    /// What every accepted candidate had to keep violating.
    pub target: Vec<Invariant>,
    /// What the final schedule violates (a superset of `target`).
    pub violated: Vec<Invariant>,
    /// Faults in the seed's plan before shrinking.
    pub original_faults: usize,
    /// Every accepted step, in order.
    pub steps: Vec<Step>,
    /// Simulations run (cache hits not counted).
    pub runs: usize,
    /// The search stopped at `max_runs` before reaching its fixpoint.
    pub budget_exhausted: bool,
    /// The explicit 1-minimality check of the result.
    pub minimality: Minimality,
}

impl Shrunk {
    /// The command that replays the shrunk failure once it is saved to `file`.
    pub fn replay_command(&self, file: &str) -> String {
        fencesim_scenario::replay_command(file, self.seed)
    }
}

/// Why a seed could not be shrunk.
#[derive(Clone, Debug, PartialEq)]
pub enum ShrinkError {
    /// The seed violates no invariant (or only panics): nothing to shrink.
    NotFailing {
        /// The run seed.
        seed: u64,
    },
    /// `target` names an invariant the seed does not violate.
    TargetNotViolated {
        /// The run seed.
        seed: u64,
        /// The invariants asked for.
        target: Vec<Invariant>,
        /// What the seed violates.
        violated: Vec<Invariant>,
    },
    /// The seed fails without a violation: a simulated node panicked, or the seed ran past
    /// its event budget. Shrinking keeps a schedule only while the checker still finds the
    /// same violations in the history, and such a seed has none to keep.
    NotAVerdict {
        /// The run seed.
        seed: u64,
        /// What happened instead: `panicked: …` or `runaway: …`.
        what: String,
    },
    /// The explicit schedule did not reproduce the failure: a determinism bug.
    NotReproduced {
        /// The run seed.
        seed: u64,
    },
}

impl fmt::Display for ShrinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShrinkError::NotFailing { seed } => {
                write!(f, "seed {seed} violates no invariant: nothing to shrink")
            }
            ShrinkError::TargetNotViolated {
                seed,
                target,
                violated,
            } => write!(
                f,
                "seed {seed} violates {} but the target is {}",
                names(violated),
                names(target)
            ),
            ShrinkError::NotAVerdict { seed, what } => write!(
                f,
                "seed {seed} fails but not with a violation ({what}): shrinking keeps a \
                 schedule only while the checker still finds its violations, and this seed \
                 has none; replay it to see where it stops"
            ),
            ShrinkError::NotReproduced { seed } => write!(
                f,
                "seed {seed}: the explicit schedule of its plan does not reproduce the violation \
                 (a determinism bug: please report it)"
            ),
        }
    }
}

impl std::error::Error for ShrinkError {}

/// What a failed run without a verdict did, in one line (`None` for a run that finished).
pub(crate) fn not_a_verdict(
    outcome: &fencesim_check::SeedOutcome,
    scenario: &Scenario,
) -> Option<String> {
    if let Some(panic) = &outcome.panic {
        return Some(format!(
            "panicked: {}",
            panic.lines().next().unwrap_or_default()
        ));
    }
    outcome.runaway.then(|| {
        format!(
            "runaway: over its event budget of {} events",
            scenario.event_budget()
        )
    })
}

/// The invariants to keep violated while shrinking: the caller's, or every one the seed
/// violates; an error when the seed is not a failing verdict or misses the target.
fn target(
    scenario: &Scenario,
    seed: u64,
    options: &ShrinkOptions,
    outcome: &fencesim_check::SeedOutcome,
) -> Result<Vec<Invariant>, ShrinkError> {
    if let Some(what) = not_a_verdict(outcome, scenario) {
        return Err(ShrinkError::NotAVerdict { seed, what });
    }
    let violated = outcome.checked.violated();
    if violated.is_empty() {
        return Err(ShrinkError::NotFailing { seed });
    }
    let target = options.target.clone().unwrap_or_else(|| violated.clone());
    if target.is_empty() || !target.iter().all(|i| violated.contains(i)) {
        return Err(ShrinkError::TargetNotViolated {
            seed,
            target,
            violated,
        });
    }
    Ok(target)
}

/// `name-shrunk-seed-N`, `name` cut to stay a valid name (names are ASCII), so a shrunk
/// scenario can be shrunk again.
fn shrunk_name(name: &str, seed: u64) -> String {
    let suffix = format!("-shrunk-seed-{seed}");
    let keep = (fencesim_scenario::limits::MAX_NAME_LEN - suffix.len()).min(name.len());
    format!("{}{suffix}", &name[..keep])
}

/// Shrinks the failure of `scenario` at `seed`, reporting every accepted step to `on_step`.
pub fn shrink(
    scenario: &Scenario,
    seed: u64,
    options: &ShrinkOptions,
    on_step: &mut dyn FnMut(&Step),
) -> Result<Shrunk, ShrinkError> {
    let original = run_seed(&Arc::new(scenario.clone()), seed, &options.components);
    let target = target(scenario, seed, options, &original.outcome)?;
    let mut shrinker = Shrinker {
        seed,
        components: options.components.clone(),
        target: target.clone(),
        max_runs: options.max_runs,
        cache: BTreeMap::new(),
        runs: 1,
        exhausted: false,
        steps: Vec::new(),
        on_step,
    };
    let start = original.plan.to_explicit(scenario);
    let original_faults = start.faults.schedule.len();
    if !shrinker.fails_unbounded(&start) {
        return Err(ShrinkError::NotReproduced { seed });
    }
    let mut current = start;
    shrinker.step(Change::Start, &current);
    loop {
        let mut changed = shrinker.remove_faults(&mut current);
        changed |= shrinker.halve_durations(&mut current);
        changed |= shrinker.drop_workers(&mut current);
        changed |= shrinker.drop_resources(&mut current);
        if !changed || shrinker.exhausted {
            break;
        }
    }
    let minimality = shrinker.verify(&current);

    let last = run_seed(&Arc::new(current.clone()), seed, &options.components);
    shrinker.runs += 1;
    let violated = last.outcome.checked.violated();
    assert!(
        target.iter().all(|i| violated.contains(i)),
        "seed {seed}: the shrunk schedule was accepted but no longer violates {}",
        names(&target)
    );
    current.expect.outcome = Outcome::Violates(violated.clone());
    let metrics = &last.outcome.checked.metrics;
    current
        .expect
        .coverage
        .retain(|&condition| coverage::hit(condition, metrics));
    current.description = format!(
        "Shrunk by `fencesim shrink` from scenario {} seed {seed}: {original_faults} faults -> {} \
         (1-minimal: {}), still violating {}.\n\n{}",
        scenario.name,
        current.faults.schedule.len(),
        minimality.is_one_minimal(),
        names(&violated),
        scenario.description.trim_end()
    );
    current.name = shrunk_name(&scenario.name, seed);
    Ok(Shrunk {
        scenario: current,
        seed,
        target,
        violated,
        original_faults,
        steps: shrinker.steps,
        runs: shrinker.runs,
        budget_exhausted: shrinker.exhausted,
        minimality,
    })
}

/// `scenario`'s plan for `seed` as an explicit schedule (same run for that seed).
pub(crate) fn explicit_for_seed(scenario: &Scenario, seed: u64) -> Scenario {
    plan(scenario, seed).to_explicit(scenario)
}

struct Shrinker<'a> {
    seed: u64,
    components: Components,
    target: Vec<Invariant>,
    max_runs: usize,
    /// Candidate (schedule, workers, resources) as JSON -> still fails.
    cache: BTreeMap<String, bool>,
    runs: usize,
    exhausted: bool,
    steps: Vec<Step>,
    on_step: &'a mut dyn FnMut(&Step),
}

impl Shrinker<'_> {
    fn step(&mut self, change: Change, current: &Scenario) {
        let step = Step {
            number: self.steps.len(),
            change,
            faults: current.faults.schedule.len(),
            runs: self.runs,
        };
        (self.on_step)(&step);
        self.steps.push(step);
    }

    /// Whether `candidate` still violates the target; `false` once the budget is spent.
    fn fails(&mut self, candidate: &Scenario) -> bool {
        if let Some(&known) = self.cache.get(&key(candidate)) {
            return known;
        }
        if self.runs >= self.max_runs {
            self.exhausted = true;
            return false;
        }
        self.fails_unbounded(candidate)
    }

    fn fails_unbounded(&mut self, candidate: &Scenario) -> bool {
        let key = key(candidate);
        if let Some(&known) = self.cache.get(&key) {
            return known;
        }
        self.runs += 1;
        let result = run_seed(&Arc::new(candidate.clone()), self.seed, &self.components);
        let violated = result.outcome.checked.violated();
        // A panic is a different failure: it does not count as the same violation.
        let fails =
            result.outcome.panic.is_none() && self.target.iter().all(|i| violated.contains(i));
        self.cache.insert(key, fails);
        fails
    }

    /// ddmin over the schedule: complements of n chunks, n doubling up to single faults.
    fn remove_faults(&mut self, current: &mut Scenario) -> bool {
        let mut changed = false;
        let mut chunks = 2;
        while !current.faults.schedule.is_empty() && !self.exhausted {
            let len = current.faults.schedule.len();
            let chunks_now = chunks.min(len);
            let size = len.div_ceil(chunks_now);
            let mut removed = false;
            for start in (0..len).step_by(size) {
                let end = (start + size).min(len);
                let candidate = without(current, start..end);
                if self.fails(&candidate) {
                    let gone = current.faults.schedule[start..end].to_vec();
                    *current = candidate;
                    self.step(Change::Removed(gone), current);
                    chunks = chunks_now.saturating_sub(1).max(2);
                    removed = true;
                    changed = true;
                    break;
                }
            }
            if !removed {
                if chunks_now >= len {
                    break;
                }
                chunks = (2 * chunks_now).min(len);
            }
        }
        changed
    }

    fn halve_durations(&mut self, current: &mut Scenario) -> bool {
        let mut changed = false;
        let mut index = 0;
        while index < current.faults.schedule.len() && !self.exhausted {
            let before = current.faults.schedule[index].clone();
            // First the size halved all the way down to the floor: a fault whose size does
            // not matter then costs one run instead of one run (and a removal pass) per
            // halving. The floor is on the same halving chain, so 1-minimality is unchanged.
            let once = halved(&before);
            let floored = once
                .as_ref()
                .and_then(|once| halved(once).and_then(|_| floored(&before)));
            let attempt = match floored {
                Some(floored) => {
                    let mut candidate = current.clone();
                    candidate.faults.schedule[index] = floored.clone();
                    if self.fails(&candidate) {
                        Some(floored)
                    } else {
                        once
                    }
                }
                None => once,
            };
            if let Some(halved) = attempt {
                let mut candidate = current.clone();
                candidate.faults.schedule[index] = halved.clone();
                if self.fails(&candidate) {
                    *current = candidate;
                    self.step(
                        Change::Halved {
                            fault: halved,
                            before_ms: before.fault.size_ms().unwrap_or(0.0),
                        },
                        current,
                    );
                    changed = true;
                    // A shorter fault may make another one unnecessary.
                    if self.remove_faults(current) {
                        index = 0;
                    }
                    continue;
                }
            }
            index += 1;
        }
        changed
    }

    fn drop_workers(&mut self, current: &mut Scenario) -> bool {
        let mut changed = false;
        while current.workers.count > 1 && !self.exhausted {
            let last = nodes::worker(current.workers.count - 1);
            let named_by_fault = current
                .faults
                .schedule
                .iter()
                .any(|timed| timed.fault.named_nodes().contains(&last.as_str()));
            if named_by_fault || current.storage.proxy_bypass.contains(&last) {
                break;
            }
            let mut candidate = current.clone();
            candidate.workers.count -= 1;
            candidate.clocks.nodes.remove(&last);
            if !self.fails(&candidate) {
                break;
            }
            *current = candidate;
            self.step(Change::DroppedWorker(last), current);
            changed = true;
        }
        changed
    }

    fn drop_resources(&mut self, current: &mut Scenario) -> bool {
        let mut changed = false;
        let mut index = 0;
        while current.workers.resources.len() > 1
            && index < current.workers.resources.len()
            && !self.exhausted
        {
            let mut candidate = current.clone();
            let resource = candidate.workers.resources.remove(index);
            if self.fails(&candidate) {
                *current = candidate;
                self.step(Change::DroppedResource(resource), current);
                changed = true;
            } else {
                index += 1;
            }
        }
        changed
    }

    fn verify(&mut self, current: &Scenario) -> Minimality {
        let mut checks = Vec::new();
        let mut removable = current.faults.schedule.len();
        if fencesim_planted::active(fencesim_planted::Mutant::ShrinkVerifySkipsLastFault) {
            // Planted bug (`.ci/mutants`): the last fault's removal goes unchecked.
            removable = removable.saturating_sub(1);
        }
        for (index, timed) in current.faults.schedule.iter().enumerate().take(removable) {
            let candidate = without(current, index..index + 1);
            checks.push(MinimalityCheck {
                change: format!("remove {}", describe(timed)),
                still_fails: self.fails_unbounded(&candidate),
            });
        }
        for (index, timed) in current.faults.schedule.iter().enumerate() {
            let Some(halved) = halved(timed) else {
                continue;
            };
            let mut candidate = current.clone();
            candidate.faults.schedule[index] = halved;
            checks.push(MinimalityCheck {
                change: format!("halve {}", describe(timed)),
                still_fails: self.fails_unbounded(&candidate),
            });
        }
        Minimality { checks }
    }
}

fn key(candidate: &Scenario) -> String {
    serde_json::to_string(&(
        &candidate.faults.schedule,
        candidate.workers.count,
        &candidate.workers.resources,
    ))
    .expect("schedule serializes")
}

fn without(current: &Scenario, range: std::ops::Range<usize>) -> Scenario {
    let mut candidate = current.clone();
    candidate.faults.schedule.drain(range);
    candidate
}

/// The fault halved as many times as it can be without going below [`MIN_DURATION_MS`]
/// (itself when it cannot be halved at all).
pub(crate) fn floored(timed: &TimedFault) -> Option<TimedFault> {
    let mut size_ms = timed.fault.size_ms()?;
    while size_ms / 2.0 >= MIN_DURATION_MS {
        size_ms /= 2.0;
    }
    Some(TimedFault {
        at_ms: timed.at_ms,
        fault: timed.fault.with_size_ms(size_ms),
    })
}

/// The fault with half its size, unless that would go below [`MIN_DURATION_MS`].
pub(crate) fn halved(timed: &TimedFault) -> Option<TimedFault> {
    let half_ms = timed.fault.size_ms()? / 2.0;
    (half_ms >= MIN_DURATION_MS).then(|| TimedFault {
        at_ms: timed.at_ms,
        fault: timed.fault.with_size_ms(half_ms),
    })
}

fn format_ms(ms: f64) -> String {
    format!("{} ms", (ms * 1000.0).round() / 1000.0)
}

/// One line: the time, then the fault as plans print it.
pub fn describe(timed: &TimedFault) -> String {
    format!("at {}: {}", format_ms(timed.at_ms), timed.fault)
}

fn names(invariants: &[Invariant]) -> String {
    let names: Vec<String> = invariants.iter().map(|i| i.to_string()).collect();
    format!("[{}]", names.join(", "))
}
