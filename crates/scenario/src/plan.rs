//! The fault plan: a scenario and a seed turned into an explicit, printable list of faults.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use fencesim_model::rng::{stream, Rng};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::{
    fault::{FaultKind, RandomFault, TimedFault},
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

/// Everything the seed decided about faults and clocks, made explicit so it can be printed,
/// compared, and saved as an explicit schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultPlan {
    /// The seed planned.
    pub seed: u64,
    /// Sorted by `at_ms`; at equal times scheduled faults come before random ones.
    pub faults: Vec<TimedFault>,
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
        out
    }
}

/// The fault plan of `scenario` in run `seed`.
pub fn plan(scenario: &Scenario, seed: u64) -> FaultPlan {
    let clocks = draw_clocks(scenario, seed);
    let swarm = draw_swarm(scenario, seed);

    let mut faults = scenario.faults.schedule.clone();
    // Intervals during which each node runs no code; the explicit schedule was validated
    // not to overlap itself, random occurrences must not overlap anything before them.
    let mut stopped: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for timed in &faults {
        if let Some(node) = timed.fault.stopped_node() {
            let interval = (timed.at_ms, timed.at_ms + timed.fault.duration_ms());
            stopped.entry(node.to_string()).or_default().push(interval);
        }
    }
    for (index, entry) in scenario.faults.random.iter().enumerate() {
        let rate_scale = match swarm.iter().find(|choice| choice.kind == entry.kind) {
            Some(choice) if !choice.enabled => continue,
            Some(choice) => choice.rate_scale,
            None => 1.0,
        };
        // One stream per entry: adding or editing an entry never shifts another's draws.
        let mut rng = stream(seed, &format!("faults/{index}/{}", entry.kind));
        for timed in occurrences(entry, rate_scale, scenario, &mut rng) {
            if let Some(node) = timed.fault.stopped_node() {
                let start = timed.at_ms;
                let end = start + timed.fault.duration_ms();
                let intervals = stopped.entry(node.to_string()).or_default();
                if intervals
                    .iter()
                    .any(|&(other_start, other_end)| start < other_end && other_start < end)
                {
                    continue;
                }
                intervals.push((start, end));
            }
            faults.push(timed);
        }
    }
    // Stable, so at equal times the schedule (pushed first) stays ahead of random faults.
    faults.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    FaultPlan {
        seed,
        faults,
        swarm,
        clocks,
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

/// One random entry's Poisson process over the safety phase, before overlap filtering.
fn occurrences(
    entry: &RandomFault,
    rate_scale: f64,
    scenario: &Scenario,
    rng: &mut Rng,
) -> Vec<TimedFault> {
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
        out.extend(entry.draw(at_ms, scenario.workers.count, rng));
    }
    out
}
