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
                grow(kind, size.abs());
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
