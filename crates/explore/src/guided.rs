//! Coverage-guided search (`fencesim explore --guided`): AFL's feedback loop over fault plans,
//! with the abstract protocol state ([`fencesim_check::abstract_state`]) as the coverage map.
//!
//! A *candidate* is a seed and an explicit fault schedule (the seed still draws everything
//! else: network, work times, clocks). The search:
//!
//! 1. runs the scenario's first seeds as a plain sweep would (their plans made explicit): at
//!    least `initial`, and the whole first batch, since nothing else exists yet; so it starts
//!    where random swarm starts (fresh seeds continue in order, past the range's end if the
//!    budget needs them);
//! 2. keeps in its *corpus* every candidate whose run reached an abstract state or transition
//!    no earlier run reached;
//! 3. builds each later candidate, in this order of preference: a proposal of
//!    [lineage-driven targeting](crate::lineage) waiting in the queue (at most half of each
//!    batch), a fresh seed of the scenario (a share `fresh_share` of the rest: the search never
//!    stops sampling the profile as random swarm does), or a mutation of a corpus entry;
//! 4. picks the entry to mutate with a probability proportional to its *rarity*: the sum over
//!    the states and transitions it reached of 1 / (runs that reached them), so entries that
//!    reached rare states are mutated most;
//! 5. mutates by 1 to 3 of: shifting a fault's start, stretching or shrinking its size, adding
//!    a fault drawn from the profile, removing one, moving one to another worker, flipping or
//!    redrawing a clock step, or running the same schedule on another seed;
//! 6. stops at the first run that violates the target invariants (the lowest-numbered one of
//!    its batch), or when the budget of runs is spent.
//!
//! Faults stay inside the scenario's fault profile: a mutation or a lineage proposal adds only
//! kinds the profile has (its random entries and explicit schedule), and never makes a fault
//! larger than the profile's largest of that kind (the 99.9th percentile of a distribution), so
//! a violation found is one the profile could have produced.
//!
//! Deterministic: every choice is drawn from one ChaCha stream seeded by `rng_seed`;
//! candidates are built a batch at a time before any of the batch runs and their results are
//! taken in batch order, so `jobs` changes the wall time only, never the search.

use std::{
    collections::{BTreeMap, VecDeque},
    sync::Arc,
};

use fencesim_check::abstract_state::Visited;
use fencesim_model::Invariant;
use fencesim_scenario::{Fault, Scenario, TimedFault};
use fencesim_sim::runner::{run_seed, Components};
use rand::{Rng as _, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::{
    explore::{occurrence, without_overlaps},
    lineage,
    profile::{Profile, PROFILE_QUANTILE},
    shrink::{explicit_for_seed, not_a_verdict},
};

/// Candidates built per round by default. Part of the search's identity (like its seed), so
/// that the search does not depend on `jobs`.
pub const BATCH: usize = 4;

/// The largest budget `--runs` accepts.
pub const MAX_RUNS: u64 = 1_000_000;

/// Faults a mutation lets a schedule grow to at most.
pub const MAX_FAULTS: usize = 64;

/// Lineage proposals waiting at most (older ones are run first; newer ones beyond are dropped).
pub const MAX_QUEUE: usize = 256;

/// How to search.
#[derive(Clone)]
pub struct GuidedOptions {
    /// Runs the search may spend (the shrink that follows a violation is not counted).
    pub runs: u64,
    /// Seed of the search's own random choices.
    pub rng_seed: u64,
    /// Plain seeds of the scenario run first (a random-swarm start).
    pub initial: u64,
    /// Share of the later candidates that are fresh seeds of the scenario, in [0, 1].
    pub fresh_share: f64,
    /// Whether lineage-driven targeting proposes candidates.
    pub lineage: bool,
    /// Candidates built before any of them runs (1..=64; see [`BATCH`]).
    pub batch: usize,
    /// Threads that run a batch's candidates.
    pub jobs: usize,
    /// The invariants a violation must include one of (default: any).
    pub target: Option<Vec<Invariant>>,
    /// Store, worker policy and token source of every run.
    pub components: Components,
}

impl Default for GuidedOptions {
    fn default() -> Self {
        GuidedOptions {
            runs: 1_000,
            rng_seed: 0,
            initial: 2,
            fresh_share: 0.25,
            lineage: true,
            batch: BATCH,
            jobs: 1,
            target: None,
            components: Components::default(),
        }
    }
}

/// Where a candidate came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A plain seed of the scenario (its plan made explicit).
    Seed,
    /// Corpus entry `parent` (its run number), mutated as described.
    Mutated {
        /// The run number of the corpus entry mutated.
        parent: u64,
        /// The mutations, in words.
        how: Vec<String>,
    },
    /// A lineage proposal from run `parent`: a fault that could have made one of its
    /// accepted writes stale.
    Lineage {
        /// The run that accepted the write.
        parent: u64,
        /// The proposal, in words.
        why: String,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Seed => write!(f, "a plain seed"),
            Origin::Mutated { parent, how } => {
                write!(f, "run {parent} mutated: {}", how.join("; "))
            }
            Origin::Lineage { parent, why } => write!(f, "lineage of run {parent}: {why}"),
        }
    }
}

/// One candidate: a seed and an explicit scenario (its schedule is the candidate's).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The seed it runs with.
    pub seed: u64,
    /// The explicit scenario (random entries gone, the schedule and clocks explicit).
    pub scenario: Scenario,
    /// Where it came from.
    pub origin: Origin,
}

/// A corpus entry: a candidate whose run reached something new.
#[derive(Clone, Debug)]
pub struct CorpusEntry {
    /// Its run number (1-based, in the search's order).
    pub run: u64,
    /// The candidate.
    pub candidate: Candidate,
    /// States and transitions its run reached that no earlier run had.
    pub new_states: usize,
    /// Transitions new with it.
    pub new_transitions: usize,
    visited: Visited,
}

/// A violation found.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its run number (1-based): the runs to the first violation.
    pub run: u64,
    /// The candidate that violated.
    pub candidate: Candidate,
    /// The invariants it violated.
    pub violated: Vec<Invariant>,
}

/// After each batch: what the search has reached.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Runs so far.
    pub runs: u64,
    /// Distinct abstract states reached.
    pub states: usize,
    /// Distinct transitions reached.
    pub transitions: usize,
    /// Corpus entries.
    pub corpus: usize,
    /// Lineage proposals waiting.
    pub queued: usize,
}

/// What the search did.
#[derive(Clone, Debug)]
pub struct Guided {
    /// Runs taken: to the first violation, counting it (the rest of its batch ran too, and
    /// is not counted), or the whole budget.
    pub runs: u64,
    /// The first violation, if any within the budget.
    pub found: Option<Found>,
    /// The corpus at the end.
    pub corpus: Vec<CorpusEntry>,
    /// Distinct abstract states reached.
    pub states: usize,
    /// Distinct transitions reached.
    pub transitions: usize,
    /// Runs by origin: plain seeds, mutations, lineage proposals.
    pub runs_by_origin: [u64; 3],
    /// Lineage proposals made (run or not).
    pub proposals: u64,
    /// Runs that failed without a verdict (a panic or a runaway): never taken as the
    /// violation, but counted.
    pub not_verdicts: u64,
    /// The first such run, in words.
    pub first_not_a_verdict: Option<String>,
}

impl Guided {
    /// The corpus entries in a stable text form (for tests and comparisons).
    pub fn corpus_digest(&self) -> Vec<String> {
        self.corpus
            .iter()
            .map(|entry| {
                format!(
                    "run {} seed {} faults {} (+{} states, +{} transitions) {}",
                    entry.run,
                    entry.candidate.seed,
                    serde_json::to_string(&entry.candidate.scenario.faults.schedule)
                        .unwrap_or_default(),
                    entry.new_states,
                    entry.new_transitions,
                    entry.candidate.origin
                )
            })
            .collect()
    }
}

/// What a run of one candidate gave the search.
struct Ran {
    violated: Vec<Invariant>,
    visited: Visited,
    not_a_verdict: Option<String>,
    proposals: Vec<lineage::Proposal>,
}

/// Searches `scenario` guided by state-space coverage; `on_progress` sees each batch.
pub fn guided(
    scenario: &Scenario,
    options: &GuidedOptions,
    on_progress: &mut dyn FnMut(&Progress),
) -> Guided {
    let mut search = Search::new(scenario, options);
    while search.runs < options.runs && search.found.is_none() {
        let room = (options.runs - search.runs).min(options.batch.clamp(1, 64) as u64) as usize;
        let batch: Vec<Candidate> = (0..room).map(|i| search.next_candidate(i, room)).collect();
        let results = run_batch(&batch, options, &search.profile);
        for (candidate, ran) in batch.into_iter().zip(results) {
            search.take(candidate, ran);
            if search.found.is_some() {
                break;
            }
        }
        on_progress(&search.progress());
    }
    search.finish()
}

/// Runs a batch on `jobs` threads; the results come back in the batch's order.
fn run_batch(batch: &[Candidate], options: &GuidedOptions, profile: &Profile) -> Vec<Ran> {
    fencesim_sim::run_batch(batch, options.jobs, |candidate| {
        run_one(candidate, options, profile)
    })
}

fn run_one(candidate: &Candidate, options: &GuidedOptions, profile: &Profile) -> Ran {
    let scenario = Arc::new(candidate.scenario.clone());
    let result = run_seed(&scenario, candidate.seed, &options.components);
    let outcome = result.outcome;
    let not_a_verdict = not_a_verdict(&outcome, &scenario);
    let violated = if not_a_verdict.is_some() {
        Vec::new()
    } else {
        let violated = outcome.checked.violated();
        match &options.target {
            Some(target) if !violated.iter().any(|i| target.contains(i)) => Vec::new(),
            _ => violated,
        }
    };
    let proposals = if options.lineage && violated.is_empty() && not_a_verdict.is_none() {
        lineage::proposals(
            profile,
            candidate.scenario.lease.ttl_ms as f64,
            &candidate.scenario.faults.schedule,
            &result.history,
        )
    } else {
        Vec::new()
    };
    Ran {
        violated,
        visited: outcome.checked.visited,
        not_a_verdict,
        proposals,
    }
}

struct Search<'a> {
    scenario: &'a Scenario,
    options: &'a GuidedOptions,
    profile: Profile,
    rng: ChaCha8Rng,
    runs: u64,
    /// The next plain seed of the scenario to run.
    next_seed: u64,
    corpus: Vec<CorpusEntry>,
    state_hits: BTreeMap<String, u64>,
    transition_hits: BTreeMap<(String, String), u64>,
    queue: VecDeque<Candidate>,
    found: Option<Found>,
    runs_by_origin: [u64; 3],
    proposals: u64,
    not_verdicts: u64,
    first_not_a_verdict: Option<String>,
}

impl<'a> Search<'a> {
    fn new(scenario: &'a Scenario, options: &'a GuidedOptions) -> Self {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&options.rng_seed.to_le_bytes());
        key[8..16].copy_from_slice(b"guided!!");
        Search {
            scenario,
            options,
            profile: Profile::of(scenario),
            rng: ChaCha8Rng::from_seed(key),
            runs: 0,
            next_seed: scenario.seeds.start,
            corpus: Vec::new(),
            state_hits: BTreeMap::new(),
            transition_hits: BTreeMap::new(),
            queue: VecDeque::new(),
            found: None,
            runs_by_origin: [0; 3],
            proposals: 0,
            not_verdicts: 0,
            first_not_a_verdict: None,
        }
    }

    fn fresh_seed(&mut self) -> Candidate {
        let seed = self.next_seed;
        self.next_seed = self.next_seed.wrapping_add(1);
        Candidate {
            seed,
            scenario: explicit_for_seed(self.scenario, seed),
            origin: Origin::Seed,
        }
    }

    /// The `index`-th candidate of a batch of `size`.
    fn next_candidate(&mut self, index: usize, size: usize) -> Candidate {
        let planned = self.runs + index as u64;
        if planned < self.options.initial || self.corpus.is_empty() {
            return self.fresh_seed();
        }
        if index < size.div_ceil(2) {
            if let Some(proposal) = self.queue.pop_front() {
                return proposal;
            }
        }
        if self.rng.gen_bool(self.options.fresh_share.clamp(0.0, 1.0)) {
            return self.fresh_seed();
        }
        self.mutant()
    }

    /// A mutation of a corpus entry picked by rarity.
    fn mutant(&mut self) -> Candidate {
        let weights: Vec<f64> = self
            .corpus
            .iter()
            .map(|entry| {
                let states: f64 = entry
                    .visited
                    .states
                    .iter()
                    .map(|s| 1.0 / self.state_hits.get(s).copied().unwrap_or(1) as f64)
                    .sum();
                let transitions: f64 = entry
                    .visited
                    .transitions
                    .iter()
                    .map(|t| 1.0 / self.transition_hits.get(t).copied().unwrap_or(1) as f64)
                    .sum();
                states + transitions
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let mut pick = self.rng.gen_range(0.0..total.max(f64::MIN_POSITIVE));
        let mut chosen = self.corpus.len() - 1;
        for (i, w) in weights.iter().enumerate() {
            if pick < *w {
                chosen = i;
                break;
            }
            pick -= w;
        }
        let parent = &self.corpus[chosen];
        let mut candidate = parent.candidate.clone();
        let parent_run = parent.run;
        let count = self.rng.gen_range(1..=3);
        let mut how = Vec::new();
        for _ in 0..count {
            if let Some(what) = self.mutate(&mut candidate) {
                how.push(what);
            }
        }
        let schedule = std::mem::take(&mut candidate.scenario.faults.schedule);
        candidate.scenario.faults.schedule = without_overlaps(schedule);
        candidate.origin = Origin::Mutated {
            parent: parent_run,
            how,
        };
        candidate
    }

    /// One mutation of `candidate`, described; `None` when the drawn one did not apply.
    fn mutate(&mut self, candidate: &mut Candidate) -> Option<String> {
        let schedule = &mut candidate.scenario.faults.schedule;
        let duration = self.profile.duration_ms;
        let op = self.rng.gen_range(0..7);
        if op == 0 {
            candidate.seed = self.rng.gen();
            return Some(format!("on seed {}", candidate.seed));
        }
        if op == 1 || schedule.is_empty() {
            return self.add(schedule);
        }
        let at = self.rng.gen_range(0..schedule.len());
        match op {
            2 => {
                let scale = [10.0, 100.0, 1_000.0][self.rng.gen_range(0..3)];
                let shift = self.rng.gen_range(-1.0..1.0) * scale;
                let timed = &mut schedule[at];
                timed.at_ms = (timed.at_ms + shift).clamp(0.0, duration - 1.0);
                Some(format!("shifted fault {at} by {shift:+.0} ms"))
            }
            3 => {
                let factor = [0.5, 0.8, 0.9, 1.1, 1.25, 2.0][self.rng.gen_range(0..6)];
                let timed = &mut schedule[at];
                let size = timed.fault.size_ms()?;
                let kind = timed.fault.kind();
                let stretched = self.profile.clamp(kind, size * factor);
                timed.fault = timed.fault.with_size_ms(stretched);
                Some(format!("stretched fault {at} x{factor}"))
            }
            4 if schedule.len() > 1 => {
                schedule.remove(at);
                Some(format!("removed fault {at}"))
            }
            5 => {
                let node = self.rng.gen_range(0..self.profile.workers.len().max(1));
                let worker = self.profile.workers.get(node)?.clone();
                let moved = move_to(&schedule[at].fault, &worker)?;
                schedule[at].fault = moved;
                Some(format!("moved fault {at} to {worker}"))
            }
            6 => {
                let timed = &mut schedule[at];
                let Fault::ClockStep { delta_ms, .. } = &mut timed.fault else {
                    return self.add(schedule);
                };
                *delta_ms = -*delta_ms;
                Some(format!("flipped clock step {at}"))
            }
            _ => self.add(schedule),
        }
    }

    /// Adds a fault drawn from the profile's random entries (or a copy of a scheduled one at
    /// another time).
    fn add(&mut self, schedule: &mut Vec<TimedFault>) -> Option<String> {
        if schedule.len() >= MAX_FAULTS {
            return None;
        }
        let at_ms = self.rng.gen_range(0.0..self.profile.duration_ms);
        let random = &self.scenario.faults.random;
        if !random.is_empty() {
            let entry = &random[self.rng.gen_range(0..random.len())];
            let targets = if entry.nodes.is_empty() {
                self.profile.workers.clone()
            } else {
                entry.nodes.clone()
            };
            let timed = occurrence(
                entry,
                &targets,
                at_ms,
                self.rng.gen_range(0..targets.len().max(1)),
                // Below the profile's largest size (its 99.9th percentile).
                self.rng.gen_range(0.0..PROFILE_QUANTILE),
                self.rng.gen_bool(0.5),
                self.rng.gen_range(0.0..1.0),
            );
            let what = format!("added {}", crate::shrink::describe(&timed));
            schedule.push(timed);
            return Some(what);
        }
        let scheduled = &self.scenario.faults.schedule;
        if scheduled.is_empty() {
            return None;
        }
        let fault = scheduled[self.rng.gen_range(0..scheduled.len())]
            .fault
            .clone();
        let timed = TimedFault { at_ms, fault };
        let what = format!("added {}", crate::shrink::describe(&timed));
        schedule.push(timed);
        Some(what)
    }

    /// Takes one run's result, in run order.
    fn take(&mut self, candidate: Candidate, ran: Ran) {
        self.runs += 1;
        let slot = match candidate.origin {
            Origin::Seed => 0,
            Origin::Mutated { .. } => 1,
            Origin::Lineage { .. } => 2,
        };
        self.runs_by_origin[slot] += 1;
        if let Some(what) = ran.not_a_verdict {
            self.not_verdicts += 1;
            self.first_not_a_verdict
                .get_or_insert_with(|| format!("run {}: {what}", self.runs));
        }
        if !ran.violated.is_empty() {
            self.found = Some(Found {
                run: self.runs,
                candidate,
                violated: ran.violated,
            });
            return;
        }
        let mut new_states = 0;
        for state in &ran.visited.states {
            let hits = self.state_hits.entry(state.clone()).or_insert(0);
            new_states += usize::from(*hits == 0);
            *hits += 1;
        }
        let mut new_transitions = 0;
        for transition in &ran.visited.transitions {
            let hits = self.transition_hits.entry(transition.clone()).or_insert(0);
            new_transitions += usize::from(*hits == 0);
            *hits += 1;
        }
        let novel = new_states + new_transitions > 0;
        let run = self.runs;
        for proposal in ran.proposals {
            self.proposals += 1;
            // A refinement aims at a window its run just missed: worth running whether or not
            // the run was new. Added faults are proposed for new runs only.
            if !(novel || proposal.refined) || self.queue.len() >= MAX_QUEUE {
                continue;
            }
            let mut scenario = candidate.scenario.clone();
            scenario.faults.schedule = without_overlaps(proposal.schedule);
            let proposed = Candidate {
                seed: candidate.seed,
                scenario,
                origin: Origin::Lineage {
                    parent: run,
                    why: proposal.why,
                },
            };
            if proposal.refined {
                self.queue.push_front(proposed);
            } else {
                self.queue.push_back(proposed);
            }
        }
        if !novel {
            return;
        }
        self.corpus.push(CorpusEntry {
            run,
            candidate,
            new_states,
            new_transitions,
            visited: ran.visited,
        });
    }

    fn progress(&self) -> Progress {
        Progress {
            runs: self.runs,
            states: self.state_hits.len(),
            transitions: self.transition_hits.len(),
            corpus: self.corpus.len(),
            queued: self.queue.len(),
        }
    }

    fn finish(self) -> Guided {
        Guided {
            runs: self.runs,
            found: self.found,
            corpus: self.corpus,
            states: self.state_hits.len(),
            transitions: self.transition_hits.len(),
            runs_by_origin: self.runs_by_origin,
            proposals: self.proposals,
            not_verdicts: self.not_verdicts,
            first_not_a_verdict: self.first_not_a_verdict,
        }
    }
}

/// `fault` moved to `worker` (`None` for a fault that names no worker). Every kind is
/// listed: a new one does not compile until it says whether it moves.
fn move_to(fault: &Fault, worker: &str) -> Option<Fault> {
    let worker = worker.to_string();
    let on_worker = |node: &str| node.starts_with("worker-");
    Some(match fault.clone() {
        Fault::GcPause { duration_ms, .. } => Fault::GcPause {
            node: worker,
            duration_ms,
        },
        Fault::VmSuspend { duration_ms, .. } => Fault::VmSuspend {
            node: worker,
            duration_ms,
        },
        Fault::ClockStep { node, delta_ms } if on_worker(&node) => Fault::ClockStep {
            node: worker,
            delta_ms,
        },
        Fault::WorkerCrash { duration_ms, .. } => Fault::WorkerCrash {
            node: worker,
            duration_ms,
        },
        Fault::HoldRelease {
            from,
            to,
            duration_ms,
        } if on_worker(&from) => Fault::HoldRelease {
            from: worker,
            to,
            duration_ms,
        },
        Fault::Partition {
            nodes,
            peers,
            one_way,
            duration_ms,
        } if nodes.len() == 1 && on_worker(&nodes[0]) && !peers.contains(&worker) => {
            Fault::Partition {
                nodes: vec![worker],
                peers,
                one_way,
                duration_ms,
            }
        }
        // A clock step, hold or partition of another node, and the kinds that name none.
        Fault::ClockStep { .. }
        | Fault::HoldRelease { .. }
        | Fault::Partition { .. }
        | Fault::CoordinatorRestart { .. }
        | Fault::StorageRestart { .. }
        | Fault::Panic { .. }
        | Fault::HolderLinkCut { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use fencesim_scenario::FaultKind;

    use super::*;

    #[test]
    fn mutations_keep_to_the_profiles_kinds_sizes_and_duration() {
        let scenario = fencesim_testkit::catalogue("chaos-5-workers-max-token");
        let options = GuidedOptions::default();
        let mut search = Search::new(&scenario, &options);
        let seed = search.fresh_seed();
        search.corpus.push(CorpusEntry {
            run: 1,
            candidate: seed,
            new_states: 1,
            new_transitions: 0,
            visited: Visited::default(),
        });
        let profile = Profile::of(&scenario);
        let kinds: BTreeSet<FaultKind> = scenario
            .faults
            .random
            .iter()
            .map(|entry| entry.kind)
            .collect();
        assert_eq!(profile.kinds, kinds);
        // The full GC entry (uniform 1-10 s) is the largest pause.
        assert!((profile.max_size[&FaultKind::GcPause] - 9_991.0).abs() < 1e-6);
        let mut reseeded = 0;
        let mut described = BTreeSet::new();
        for _ in 0..500 {
            let mutant = search.mutant();
            let Origin::Mutated { parent, how } = &mutant.origin else {
                panic!("{:?}", mutant.origin)
            };
            assert_eq!(*parent, 1);
            for what in how {
                described.insert(what.split_whitespace().next().unwrap_or("").to_string());
            }
            reseeded += usize::from(mutant.seed != search.corpus[0].candidate.seed);
            for timed in &mutant.scenario.faults.schedule {
                let kind = timed.fault.kind();
                assert!(kinds.contains(&kind), "{timed:?}");
                let size = timed.fault.size_ms().unwrap();
                assert!(size <= profile.max_size[&kind] + 1e-9, "{timed:?}");
                assert!((0.0..scenario.duration_ms as f64).contains(&timed.at_ms));
            }
        }
        assert!(reseeded > 0);
        // Every kind of mutation happened.
        for verb in ["on", "added", "shifted", "stretched", "removed", "moved"] {
            assert!(described.contains(verb), "{verb}: {described:?}");
        }
    }

    #[test]
    fn a_move_keeps_the_fault_and_changes_its_worker_only() {
        let pause = Fault::GcPause {
            node: "worker-0".into(),
            duration_ms: 5.0,
        };
        assert_eq!(
            move_to(&pause, "worker-2"),
            Some(Fault::GcPause {
                node: "worker-2".into(),
                duration_ms: 5.0,
            })
        );
        assert_eq!(
            move_to(&Fault::CoordinatorRestart { duration_ms: 5.0 }, "worker-2"),
            None
        );
        let cut = Fault::Partition {
            nodes: vec!["worker-0".into()],
            peers: vec!["worker-2".into()],
            one_way: false,
            duration_ms: 5.0,
        };
        // A partition from itself would be no partition.
        assert_eq!(move_to(&cut, "worker-2"), None);
    }
}
