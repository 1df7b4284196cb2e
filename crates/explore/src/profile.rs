//! What of a scenario's fault profile the searches may use: the fault kinds it has and the
//! largest fault of each kind it produces. Guided search's mutations and lineage's proposals
//! stay inside it, so what they find is what the profile could have produced.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_model::nodes;
use fencesim_scenario::{FaultKind, Scenario};

use crate::{explore::quantile_ms, shrink::MIN_DURATION_MS};

/// The quantile of a random entry's size distribution taken as the largest fault of its kind
/// the profile produces (a mutation or lineage proposal never goes past it).
pub const PROFILE_QUANTILE: f64 = 0.999;

/// The scenario's fault profile, as mutations and lineage need it.
pub struct Profile {
    /// Kinds the profile has.
    pub kinds: BTreeSet<FaultKind>,
    /// The largest size of each kind the profile can produce (ms; |delta| for clock steps).
    pub max_size: BTreeMap<FaultKind, f64>,
    /// Workers' names.
    pub workers: Vec<String>,
    /// The run's length (ms): faults start before it.
    pub duration_ms: f64,
}

impl Profile {
    /// The profile of `scenario`: its random entries and its explicit schedule.
    pub fn of(scenario: &Scenario) -> Profile {
        let mut kinds = BTreeSet::new();
        let mut max_size: BTreeMap<FaultKind, f64> = BTreeMap::new();
        let mut grow = |kind: FaultKind, size: f64| {
            let slot = max_size.entry(kind).or_insert(0.0);
            *slot = slot.max(size);
        };
        for entry in &scenario.faults.random {
            kinds.insert(entry.kind);
            grow(
                entry.kind,
                quantile_ms(&entry.duration_ms, PROFILE_QUANTILE),
            );
        }
        for timed in &scenario.faults.schedule {
            let kind = timed.fault.kind();
            kinds.insert(kind);
            if let Some(size) = timed.fault.size_ms() {
                grow(kind, size); // `size_ms` is a clock step's |delta|
            }
        }
        Profile {
            kinds,
            max_size,
            workers: (0..scenario.workers.count).map(nodes::worker).collect(),
            duration_ms: scenario.duration_ms as f64,
        }
    }

    /// `size` clamped to what the profile can produce of `kind`.
    pub fn clamp(&self, kind: FaultKind, size: f64) -> f64 {
        let max = self.max_size.get(&kind).copied().unwrap_or(size);
        size.min(max).max(MIN_DURATION_MS)
    }
}

#[cfg(test)]
mod tests {
    use fencesim_scenario::{Fault, TimedFault};

    use super::*;

    /// An explicit clock step back of 30 s makes the profile's largest clock step 30 s (its
    /// size, not its signed delta), and the largest of two is kept.
    #[test]
    fn an_explicit_negative_clock_step_counts_by_its_size() {
        let mut scenario = fencesim_testkit::catalogue("gc-pause-textbook-none");
        scenario.faults.random.clear();
        let step = |delta_ms: f64| TimedFault {
            at_ms: 1_000.0,
            fault: Fault::ClockStep {
                node: "worker-0".into(),
                delta_ms,
            },
        };
        scenario.faults.schedule = vec![step(-30_000.0), step(5_000.0)];
        let profile = Profile::of(&scenario);
        assert_eq!(profile.max_size.get(&FaultKind::ClockStep), Some(&30_000.0));
        assert_eq!(profile.clamp(FaultKind::ClockStep, 40_000.0), 30_000.0);
    }
}
