//! What happened in a run, counted from the history alone (docs/spec.md, "Metrics per run").
//!
//! Epochs are judged as in I4: a token's epoch on a scope is superseded once any later
//! `Granted` on that scope exists; a token never granted has no epoch and is not counted as
//! superseded (I4 reports it instead).

use std::collections::{BTreeMap, BTreeSet};

use fencesim_model::history::{EventKind, History};
use serde::{Deserialize, Serialize};

use crate::index::{ns_to_ms, Epoch, FenceStatus, Index};

/// Counters and latencies of one run. Times are true (god's-eye) times in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// `Granted` events.
    pub acquisitions: u64,
    /// `Renewed` events (renewals and acquire retries by the current holder).
    pub renewals: u64,
    /// Worker-side `RenewFailed` events (refused or timed out).
    pub renewal_failures: u64,
    /// Grants whose scope's previous grant went to a different holder.
    pub takeovers: u64,
    /// Tokens issued (one per `Granted`).
    pub tokens_allocated: u64,
    /// `Expired` and `TakenOver` events (a client-go takeover is the candidate's expiry).
    pub expiries: u64,
    /// Expiries while the holder was alive (not between its `Crashed` and next `Restarted`):
    /// paused or slow, not dead.
    pub false_expiries: u64,
    /// Expiries while the holder was inside a `Paused`..`Resumed` interval.
    pub paused_expiries: u64,
    /// `WriteSent` events.
    pub writes_sent: u64,
    /// `WritePresented` events.
    pub writes_presented: u64,
    /// `WriteAccepted` events.
    pub accepted_writes: u64,
    /// `WriteRejected` events.
    pub stale_write_rejections: u64,
    /// `WriteAbandoned` events.
    pub writes_abandoned: u64,
    /// `SideEffect` events.
    pub side_effects: u64,
    /// Side effects whose token's epoch had already been superseded when they happened.
    pub superseded_side_effects: u64,
    /// Writes presented at the storage with a superseded token.
    pub stale_presented: u64,
    /// Accepted writes from a superseded epoch whose superseding grant's fence reached the
    /// storage only after the accept.
    pub accepts_in_fence_window: u64,
    /// Per crash of a node that held a lease in the service's state: time until the next
    /// grant on that scope to another holder (absent if there was none).
    pub takeover_latency_ms: Vec<f64>,
    /// Per grant later fenced by its holder with its token: grant → first accepted fence.
    pub fence_window_ms: Vec<f64>,
    /// Longest tenure in the service's state (grant → expiry / release / drop, or run end).
    pub lease_age_ms_max: f64,
    /// Mean tenure in the service's state.
    pub lease_age_ms_mean: f64,
    /// `BeliefStarted` events that began while another worker believed it held the scope.
    pub overlapping_beliefs: u64,
    /// Time during which two or more workers believed they held the same scope, summed over
    /// scopes.
    pub overlapping_belief_ms: f64,
}

pub(crate) fn compute(history: &History) -> Metrics {
    let index = Index::new(history);
    let mut m = Metrics::default();
    count_events(&index, &mut m);
    service_metrics(&index, &mut m);
    belief_metrics(&index, &mut m);
    m
}

/// Per-event counters, node liveness and epoch judgements: one pass.
fn count_events(index: &Index<'_>, m: &mut Metrics) {
    let mut crashed: BTreeSet<&str> = BTreeSet::new();
    let mut paused: BTreeSet<&str> = BTreeSet::new();
    let mut last_holder: BTreeMap<&str, &str> = BTreeMap::new();
    for (k, event) in index.events.iter().enumerate() {
        let node = event.node.as_str();
        match &event.kind {
            EventKind::Granted {
                scope,
                holder,
                token,
                ..
            } => {
                m.acquisitions += 1;
                m.tokens_allocated += 1;
                if last_holder
                    .insert(scope, holder)
                    .is_some_and(|previous| previous != holder)
                {
                    m.takeovers += 1;
                }
                if let Some(fence) = index.first_fence_by(holder, *token, k) {
                    m.fence_window_ms.push(index.t_ms(fence) - index.t_ms(k));
                }
            }
            EventKind::Renewed { .. } => m.renewals += 1,
            EventKind::RenewFailed { .. } => m.renewal_failures += 1,
            EventKind::Expired { holder, .. } | EventKind::TakenOver { holder, .. } => {
                m.expiries += 1;
                if !crashed.contains(holder.as_str()) {
                    m.false_expiries += 1;
                }
                if paused.contains(holder.as_str()) {
                    m.paused_expiries += 1;
                }
            }
            EventKind::WriteSent { .. } => m.writes_sent += 1,
            EventKind::WritePresented {
                lease_scope,
                writer,
                token,
                ..
            } => {
                m.writes_presented += 1;
                if matches!(
                    index.epoch(lease_scope, writer, *token, k),
                    Epoch::Superseded { .. }
                ) {
                    m.stale_presented += 1;
                }
            }
            EventKind::WriteAccepted {
                resource,
                lease_scope,
                writer,
                token,
                ..
            } => {
                m.accepted_writes += 1;
                if let Epoch::Superseded { grant, .. } = index.epoch(lease_scope, writer, *token, k)
                {
                    if matches!(
                        index.fence_status(lease_scope, resource, grant, k),
                        FenceStatus::InWindow { .. }
                    ) {
                        m.accepts_in_fence_window += 1;
                    }
                }
            }
            EventKind::WriteRejected { .. } => m.stale_write_rejections += 1,
            EventKind::WriteAbandoned { .. } => m.writes_abandoned += 1,
            EventKind::SideEffect {
                lease_scope,
                worker,
                token,
                ..
            } => {
                m.side_effects += 1;
                if matches!(
                    index.epoch(lease_scope, worker, *token, k),
                    Epoch::Superseded { .. }
                ) {
                    m.superseded_side_effects += 1;
                }
            }
            EventKind::Crashed => {
                crashed.insert(node);
                // A dead process is not paused; `Resumed` would not follow.
                paused.remove(node);
            }
            EventKind::Restarted => {
                crashed.remove(node);
            }
            EventKind::Paused { .. } => {
                paused.insert(node);
            }
            EventKind::Resumed { .. } => {
                paused.remove(node);
            }
            _ => {}
        }
    }
}

/// Lease ages and takeover latency, from the service's tenures.
fn service_metrics(index: &Index<'_>, m: &mut Metrics) {
    let ages: Vec<f64> = index
        .tenures
        .iter()
        .map(|tenure| {
            let end_ns = tenure
                .end
                .map_or(index.end_ns, |end| index.events[end].t_ns);
            ns_to_ms(end_ns.saturating_sub(index.events[tenure.grant].t_ns))
        })
        .collect();
    m.lease_age_ms_max = ages.iter().copied().fold(0.0, f64::max);
    m.lease_age_ms_mean = if ages.is_empty() {
        0.0
    } else {
        ages.iter().sum::<f64>() / ages.len() as f64
    };

    for (k, event) in index.events.iter().enumerate() {
        if !matches!(event.kind, EventKind::Crashed) {
            continue;
        }
        let node = event.node.as_str();
        for tenure in index
            .tenures
            .iter()
            .filter(|t| t.holder == node && t.open_before(k))
        {
            let next = index.grants[tenure.scope.as_str()]
                .iter()
                .find(|g| g.index > k && g.holder != node);
            if let Some(next) = next {
                m.takeover_latency_ms
                    .push(index.t_ms(next.index) - index.t_ms(k));
            }
        }
    }
}

/// Overlapping beliefs: a belief opens on `BeliefStarted` (replacing the node's previous
/// belief on that scope) and closes on `BeliefEnded` with its token or on the node's crash.
fn belief_metrics(index: &Index<'_>, m: &mut Metrics) {
    // Per scope: believing node → token, and since when two or more nodes believed.
    let mut believers: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    let mut overlap_since: BTreeMap<&str, u64> = BTreeMap::new();
    let mut overlap_ns: u64 = 0;

    for event in index.events {
        let node = event.node.as_str();
        let touched: Vec<&str> = match &event.kind {
            EventKind::BeliefStarted { scope, token, .. } => {
                let on_scope = believers.entry(scope).or_default();
                if on_scope.keys().any(|&other| other != node) {
                    m.overlapping_beliefs += 1;
                }
                on_scope.insert(node, *token);
                vec![scope.as_str()]
            }
            EventKind::BeliefEnded { scope, token, .. } => {
                let on_scope = believers.entry(scope).or_default();
                if on_scope.get(node) == Some(token) {
                    on_scope.remove(node);
                }
                vec![scope.as_str()]
            }
            EventKind::Crashed => believers
                .iter_mut()
                .filter_map(|(scope, on_scope)| on_scope.remove(node).map(|_| *scope))
                .collect(),
            _ => continue,
        };
        for scope in touched {
            let overlapping = believers.get(scope).is_some_and(|b| b.len() >= 2);
            match (overlapping, overlap_since.get(scope).copied()) {
                (true, None) => {
                    overlap_since.insert(scope, event.t_ns);
                }
                (false, Some(since)) => {
                    overlap_ns += event.t_ns - since;
                    overlap_since.remove(scope);
                }
                _ => {}
            }
        }
    }
    overlap_ns += overlap_since
        .values()
        .map(|&since| index.end_ns.saturating_sub(since))
        .sum::<u64>();
    m.overlapping_belief_ms = ns_to_ms(overlap_ns);
}
