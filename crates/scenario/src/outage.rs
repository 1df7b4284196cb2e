//! Outages seen from the fault plan: the injected outage (`[faults.outage]`: one outage of a
//! given form and length per seed, at a drawn time; `fencesim tune --survive-outage-ms` adds
//! it), the longest outage a profile already holds, and the nominal count of each fault kind.
//!
//! An outage is what `fencesim_check::outage` reads from a history: an interval in which a
//! worker cannot reach the lease service for a reason outside itself (the service down,
//! restarting or stopped; the worker's link to it partitioned or held, either direction).

use std::collections::BTreeMap;

use fencesim_model::nodes;

pub use crate::fault::{InjectedOutage, OutageForm, OUTAGE_LEAD_MS};
use crate::{
    fault::{Fault, FaultKind},
    plan::{plan, MAX_OCCURRENCES_PER_ENTRY},
    spec::Scenario,
};

/// `scenario` with a `[faults.outage]` of `form` lasting `duration_ms` (see [`InjectedOutage`]):
/// each seed's plan holds exactly one more outage, at a drawn time. An error (in words, for the
/// caller to attach to its flag or field) when the length is not a positive number of
/// milliseconds shorter than the scenario's safety phase, or when the scenario already has an
/// injected outage.
pub fn with_outage(
    scenario: &Scenario,
    form: OutageForm,
    duration_ms: f64,
) -> Result<Scenario, String> {
    let safety_ms = scenario.duration_ms as f64;
    if !(duration_ms.is_finite() && duration_ms > 0.0 && duration_ms < safety_ms) {
        return Err(format!(
            "expected an outage length in milliseconds > 0 and below the scenario's duration_ms ({safety_ms}) so it fits inside the fault window, got {duration_ms}"
        ));
    }
    if let Some(existing) = &scenario.faults.outage {
        return Err(format!(
            "expected a scenario without [faults.outage], got one ({} for {} ms)",
            existing.form, existing.duration_ms
        ));
    }
    let mut out = scenario.clone();
    out.faults.outage = Some(InjectedOutage { form, duration_ms });
    Ok(out)
}

/// The longest outage (ms) any worker meets in the fault plans of `seeds`, from the plans
/// alone: the lease service down (`coordinator-restart`, or a `gc-pause` / `vm-suspend` of the
/// coordinator), a worker's link to the coordinator cut (a `partition` separating them in
/// either direction, a `hold-release` between them, a `holder-link-cut`). Overlapping or
/// touching outages of one worker count as one. 0 when there is none.
pub fn longest_outage_ms(scenario: &Scenario, seeds: impl IntoIterator<Item = u64>) -> f64 {
    let workers: Vec<String> = (0..scenario.workers.count).map(nodes::worker).collect();
    let mut longest = 0.0_f64;
    for seed in seeds {
        let plan = plan(scenario, seed);
        let mut per_worker: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
        for timed in &plan.faults {
            let interval = (timed.at_ms, timed.end_ms());
            for worker in &workers {
                if cuts_off(&timed.fault, worker) {
                    per_worker.entry(worker).or_default().push(interval);
                }
            }
        }
        for intervals in per_worker.values_mut() {
            intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut current: Option<(f64, f64)> = None;
            for &(start, end) in intervals.iter() {
                current = match current {
                    Some((s, e)) if start <= e => Some((s, e.max(end))),
                    Some((s, e)) => {
                        longest = longest.max(e - s);
                        Some((start, end))
                    }
                    None => Some((start, end)),
                };
            }
            if let Some((s, e)) = current {
                longest = longest.max(e - s);
            }
        }
    }
    longest
}

/// Whether `fault` cuts `worker` off the lease service (a `holder-link-cut` may cut any
/// worker: the holder is known only when it begins).
fn cuts_off(fault: &Fault, worker: &str) -> bool {
    let coordinator = nodes::COORDINATOR;
    match fault {
        Fault::CoordinatorRestart { .. } | Fault::HolderLinkCut { .. } => true,
        Fault::GcPause { node, .. } | Fault::VmSuspend { node, .. } => node == coordinator,
        Fault::Partition { nodes, peers, .. } => {
            let in_nodes = |n: &str| nodes.iter().any(|m| m == n);
            let in_peers = |n: &str| {
                if peers.is_empty() {
                    !in_nodes(n)
                } else {
                    peers.iter().any(|m| m == n)
                }
            };
            (in_nodes(worker) && in_peers(coordinator))
                || (in_nodes(coordinator) && in_peers(worker))
        }
        Fault::HoldRelease { from, to, .. } => {
            (from == worker && to == coordinator) || (from == coordinator && to == worker)
        }
        // A worker's own crash or pause is not an outage from outside it; the storage is not
        // on the path to the lease service; a clock step or a panic cuts nothing.
        Fault::WorkerCrash { .. }
        | Fault::StorageRestart { .. }
        | Fault::ClockStep { .. }
        | Fault::Panic { .. } => false,
    }
}

/// The nominal number of faults of each kind per seed: every `[[faults.schedule]]` entry, the
/// injected outage, and for each `[[faults.random]]` entry its rate times the safety phase
/// (`rate_per_min × duration_ms / 60000`, at most `MAX_OCCURRENCES_PER_ENTRY`; with
/// `swarm = true` times 5/16, the expected swarm factor: on with probability 1/2, rate scaled
/// by a mean of 5/8). In `FaultKind::ALL` order, only kinds with a nominal count above 0.
///
/// Compare with `Metrics::faults_begun` (faults that actually began, from the history), where
/// `holder-link-cut` is counted with `partition` (both record `PartitionStarted`).
pub fn nominal_fault_counts(scenario: &Scenario) -> Vec<(FaultKind, f64)> {
    let mut counts: BTreeMap<FaultKind, f64> = BTreeMap::new();
    for timed in &scenario.faults.schedule {
        *counts.entry(timed.fault.kind()).or_default() += 1.0;
    }
    if let Some(outage) = &scenario.faults.outage {
        *counts.entry(outage.form.kind()).or_default() += 1.0;
    }
    let minutes = scenario.duration_ms as f64 / 60_000.0;
    let swarm = if scenario.faults.swarm {
        0.5 * 0.625
    } else {
        1.0
    };
    for entry in &scenario.faults.random {
        let expected = (entry.rate_per_min * minutes).min(MAX_OCCURRENCES_PER_ENTRY as f64);
        *counts.entry(entry.kind).or_default() += expected * swarm;
    }
    FaultKind::ALL
        .into_iter()
        .filter_map(|kind| {
            counts
                .get(&kind)
                .copied()
                .filter(|&n| n > 0.0)
                .map(|n| (kind, n))
        })
        .collect()
}
