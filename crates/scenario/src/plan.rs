//! The fault plan: a scenario and a seed turned into an explicit, printable list of faults.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fencesim_model::rng::{stream, Rng};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::{
    fault::{Fault, FaultKind, RandomFault, TimedFault},
    spec::*,
};

/// Occurrences drawn per random entry at most, so that an absurd rate cannot make a plan
/// unbounded; draws stop there.
pub const MAX_OCCURRENCES_PER_ENTRY: usize = 10_000;

/// What swarm testing decided for one random fault kind in this seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwarmChoice {
    /// The random fault kind.
    pub kind: FaultKind,
    /// Whether the kind is on in this seed.
    pub enabled: bool,
    /// Multiplies the kind's `rate_per_min`, in [0.25, 1].
    pub rate_scale: f64,
}

/// A drawn fault that had to wait for its node: it begins at `at_ms` instead of the drawn
/// `drawn_at_ms` because another process-stopping fault occupied the node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuedFault {
    /// When it was drawn to begin (ms).
    pub drawn_at_ms: f64,
    /// When it begins (ms): the first instant its node is free for its whole duration.
    pub at_ms: f64,
    /// The fault.
    pub fault: Fault,
}

/// A drawn fault that does not run, and why (printed with the plan, never silent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkippedFault {
    /// When it was drawn to begin (ms).
    pub drawn_at_ms: f64,
    /// What kind it was.
    pub kind: FaultKind,
    /// Why it does not run.
    pub reason: String,
}

/// Everything the seed decided about faults and clocks, made explicit so it can be printed,
/// compared, and saved as an explicit schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultPlan {
    /// The seed planned.
    pub seed: u64,
    /// Sorted by `at_ms`; at equal times scheduled faults come before random ones.
    pub faults: Vec<TimedFault>,
    /// Drawn faults that wait for their node (they are in `faults` at their new time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued: Vec<QueuedFault>,
    /// Drawn faults that do not run: a size drawn as 0 ms, or no room left for them on their
    /// node before the end of the safety phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFault>,
    /// Empty unless the scenario asks for swarm testing.
    pub swarm: Vec<SwarmChoice>,
    /// The clock of every node in `Scenario::node_names`.
    pub clocks: BTreeMap<String, ClockSpec>,
}

impl FaultPlan {
    /// When the last fault has healed (0 without faults): the safety phase's faults are over
    /// and the liveness bound starts counting.
    pub fn heal_ms(&self) -> f64 {
        self.faults
            .iter()
            .map(TimedFault::end_ms)
            .fold(0.0, f64::max)
    }

    /// `scenario` with this plan as its explicit fault schedule: random entries and swarm
    /// testing off, every node's clock pinned to the plan's, and `seeds` = this seed only.
    /// Run with this plan's seed, it gives the same plan (less the swarm draws, now spent) and
    /// the same trace: every other random stream depends only on the seed.
    pub fn to_explicit(&self, scenario: &Scenario) -> Scenario {
        let mut explicit = scenario.clone();
        explicit.seeds = SeedRange {
            start: self.seed,
            end: self.seed.saturating_add(1),
        };
        explicit.faults = FaultSpec {
            schedule: self.faults.clone(),
            random: Vec::new(),
            swarm: false,
            outage: None,
        };
        explicit.clocks.nodes = self.clocks.clone();
        explicit
    }

    /// A human-readable listing: summary, swarm choices, clocks, then one line per fault.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "fault plan for seed {}: {} faults, all healed by {:.3} ms",
            self.seed,
            self.faults.len(),
            self.heal_ms()
        );
        if !self.swarm.is_empty() {
            out.push_str("swarm:\n");
            for choice in &self.swarm {
                if choice.enabled {
                    let _ = writeln!(
                        out,
                        "  {:<20} on   rate x{:.3}",
                        choice.kind.name(),
                        choice.rate_scale
                    );
                } else {
                    let _ = writeln!(out, "  {:<20} off", choice.kind.name());
                }
            }
        }
        out.push_str("clocks:\n");
        for (node, clock) in &self.clocks {
            let _ = writeln!(
                out,
                "  {node:<12} offset {:>+12.3} ms  drift {:>+10.3} ppm",
                clock.offset_ms, clock.drift_ppm
            );
        }
        out.push_str("faults:\n");
        if self.faults.is_empty() {
            out.push_str("  (none)\n");
        }
        for timed in &self.faults {
            let _ = writeln!(out, "{:>10.3} ms  {}", timed.at_ms, timed.fault);
        }
        if !self.queued.is_empty() {
            let _ = writeln!(
                out,
                "queued ({}: drawn while their node was stopped by another fault, begun when it was free):",
                self.queued.len()
            );
            for queued in &self.queued {
                let _ = writeln!(
                    out,
                    "{:>10.3} ms  {} (drawn at {:.3} ms)",
                    queued.at_ms, queued.fault, queued.drawn_at_ms
                );
            }
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(out, "skipped ({}):", self.skipped.len());
            for skipped in &self.skipped {
                let _ = writeln!(
                    out,
                    "{:>10.3} ms  {}: {}",
                    skipped.drawn_at_ms, skipped.kind, skipped.reason
                );
            }
        }
        out
    }
}

/// The occurrences drawn for `seed`, before queueing: the injected outage first, then each
/// random entry's occurrences (swarm-scaled) in entry order; and those skipped for a size
/// drawn as 0 ms.
fn drawn(
    scenario: &Scenario,
    seed: u64,
    swarm: &[SwarmChoice],
) -> (Vec<TimedFault>, Vec<SkippedFault>) {
    let mut skipped = Vec::new();
    let mut drawn: Vec<TimedFault> = Vec::new();
    if let Some(outage) = &scenario.faults.outage {
        drawn.push(outage.occurrence(scenario.duration_ms, seed));
    }
    for (index, entry) in scenario.faults.random.iter().enumerate() {
        let rate_scale = match swarm.iter().find(|choice| choice.kind == entry.kind) {
            Some(choice) if !choice.enabled => continue,
            Some(choice) => choice.rate_scale,
            None => 1.0,
        };
        // One stream per entry: adding or editing an entry never shifts another's draws.
        let mut rng = stream(seed, &format!("faults/{index}/{}", entry.kind));
        for occurrence in occurrences(entry, rate_scale, scenario, &mut rng) {
            match occurrence {
                Ok(timed) => drawn.push(timed),
                Err(at_ms) => skipped.push(SkippedFault {
                    drawn_at_ms: at_ms,
                    kind: entry.kind,
                    reason: "its size was drawn as 0 ms".to_string(),
                }),
            }
        }
    }
    (drawn, skipped)
}

/// The fault plan of `scenario` in run `seed`.
///
/// Process-stopping faults (`Fault::stopped_node`) never overlap on one node: the explicit
/// schedule was validated not to overlap itself, and drawn occurrences (the injected outage
/// first, then the random entries' occurrences in drawn-time order) are queued: each begins at
/// the first instant at or after its drawn time when its node is free for its whole duration,
/// keeping its duration. An occurrence that could only begin at or after the end of the safety
/// phase is skipped, as is one whose size was drawn as 0 ms; both are listed in the plan.
pub fn plan(scenario: &Scenario, seed: u64) -> FaultPlan {
    let clocks = draw_clocks(scenario, seed);
    let swarm = draw_swarm(scenario, seed);
    let safety_ms = scenario.duration_ms as f64;

    let mut faults = scenario.faults.schedule.clone();
    let mut stops = Stops::default();
    for timed in &faults {
        if let Some(node) = timed.fault.stopped_node() {
            stops.insert(node, timed.at_ms, timed.end_ms());
        }
    }
    let mut queued = Vec::new();
    let (mut drawn, mut skipped) = drawn(scenario, seed, &swarm);
    let outages = usize::from(scenario.faults.outage.is_some());
    // The injected outage keeps its place ahead of every random occurrence.
    drawn[outages..].sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    for mut timed in drawn {
        if let Some(node) = timed.fault.stopped_node() {
            let duration_ms = timed.fault.duration_ms();
            let at_ms = stops.first_free(node, timed.at_ms, duration_ms);
            if at_ms >= safety_ms {
                skipped.push(SkippedFault {
                    drawn_at_ms: timed.at_ms,
                    kind: timed.fault.kind(),
                    reason: format!(
                        "{node} is stopped by other faults until past the end of the safety phase ({safety_ms} ms)"
                    ),
                });
                continue;
            }
            stops.insert(node, at_ms, at_ms + duration_ms);
            if at_ms != timed.at_ms {
                queued.push(QueuedFault {
                    drawn_at_ms: timed.at_ms,
                    at_ms,
                    fault: timed.fault.clone(),
                });
                timed.at_ms = at_ms;
            }
        }
        faults.push(timed);
    }
    skipped.sort_by(|a, b| a.drawn_at_ms.total_cmp(&b.drawn_at_ms));
    // Stable, so at equal times the schedule (pushed first) stays ahead of random faults.
    faults.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    FaultPlan {
        seed,
        faults,
        queued,
        skipped,
        swarm,
        clocks,
    }
}

/// Per node, the disjoint `[start, end)` intervals during which a fault stops it, sorted.
#[derive(Default)]
struct Stops(BTreeMap<String, Vec<(f64, f64)>>);

impl Stops {
    fn insert(&mut self, node: &str, start: f64, end: f64) {
        let intervals = self.0.entry(node.to_string()).or_default();
        let at = intervals.partition_point(|&(s, _)| s <= start);
        intervals.insert(at, (start, end));
    }

    /// The first instant at or after `at_ms` at which `node` is free for `duration_ms`. An
    /// empty interval (a panic) only has to avoid lying strictly inside a stop.
    fn first_free(&self, node: &str, at_ms: f64, duration_ms: f64) -> f64 {
        let Some(intervals) = self.0.get(node) else {
            return at_ms;
        };
        let mut start = at_ms;
        // Intervals are disjoint and sorted by start, so their ends are sorted too.
        let first = intervals.partition_point(|&(_, e)| e <= start);
        for &(s, e) in &intervals[first..] {
            let overlaps = if duration_ms > 0.0 {
                start < e && s < start + duration_ms
            } else {
                s < start && start < e
            };
            if overlaps {
                start = e;
            } else if s >= start + duration_ms {
                break;
            }
        }
        start
    }
}

fn draw_clocks(scenario: &Scenario, seed: u64) -> BTreeMap<String, ClockSpec> {
    let mut rng = stream(seed, "clocks");
    let random = &scenario.clocks;
    scenario
        .node_names()
        .into_iter()
        .map(|node| {
            // Drawn for every node, pinned or not, so pinning one node's clock leaves every
            // other node's draw unchanged. `+ 0.0` turns -0.0 into 0.0 for printing.
            let drift_ppm = rng.gen_range(-1.0..=1.0) * random.random_drift_ppm + 0.0;
            let offset_ms = rng.gen_range(-1.0..=1.0) * random.random_offset_ms + 0.0;
            let clock = random.nodes.get(&node).copied().unwrap_or(ClockSpec {
                offset_ms,
                drift_ppm,
            });
            (node, clock)
        })
        .collect()
}

fn draw_swarm(scenario: &Scenario, seed: u64) -> Vec<SwarmChoice> {
    if !scenario.faults.swarm {
        return Vec::new();
    }
    let mut rng = stream(seed, "swarm");
    // Drawn for every kind in a fixed order and then filtered, so that which kinds the
    // scenario uses does not change the draws of the others.
    FaultKind::ALL
        .into_iter()
        .filter(|kind| kind.can_be_random())
        .map(|kind| SwarmChoice {
            kind,
            enabled: rng.gen_bool(0.5),
            rate_scale: rng.gen_range(0.25..=1.0),
        })
        .filter(|choice| {
            scenario
                .faults
                .random
                .iter()
                .any(|entry| entry.kind == choice.kind)
        })
        .collect()
}

/// One random entry's Poisson process over the safety phase, before queueing: each drawn
/// occurrence, or the drawn time of one whose size was drawn as 0 ms.
fn occurrences(
    entry: &RandomFault,
    rate_scale: f64,
    scenario: &Scenario,
    rng: &mut Rng,
) -> Vec<Result<TimedFault, f64>> {
    let duration_ms = scenario.duration_ms as f64;
    let gap = Dist::Exponential {
        mean: 60_000.0 / (entry.rate_per_min * rate_scale),
    };
    let mut out = Vec::new();
    let mut at_ms = 0.0;
    while out.len() < MAX_OCCURRENCES_PER_ENTRY {
        at_ms += gap.sample(rng);
        if at_ms >= duration_ms {
            break;
        }
        out.push(entry.draw(at_ms, scenario.workers.count, rng).ok_or(at_ms));
    }
    out
}
