//! Unavailability: the share of the run, per scope, no live worker served it under its
//! newest grant.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_model::history::EventKind;

use crate::index::Index;

use super::Metrics;

/// Unavailability: per scope, the time during which no live, running worker believed it
/// held the scope under the scope's newest grant.
pub(super) fn availability_metrics(index: &Index<'_>, m: &mut Metrics) {
    let scopes: Vec<&str> = index.scopes().collect();
    if scopes.is_empty() || index.end_ns() == 0 {
        return;
    }
    let mut believers: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    let mut down: BTreeSet<&str> = BTreeSet::new();
    let mut served_since: BTreeMap<&str, u64> = BTreeMap::new();
    let mut served_ns: u64 = 0;
    for (k, event) in index.events().iter().enumerate() {
        let node = event.node.as_str();
        // The scope an event changes, when only one (else a node's change touches them all).
        let touched: Option<&str> = match &event.kind {
            // A grant changes which token serves its scope.
            EventKind::Granted { scope, .. } => Some(scope),
            EventKind::BeliefStarted { scope, token, .. } => {
                believers.entry(scope).or_default().insert(node, *token);
                Some(scope)
            }
            EventKind::BeliefEnded { scope, token, .. } => {
                let on_scope = believers.entry(scope).or_default();
                if on_scope.get(node) == Some(token) {
                    on_scope.remove(node);
                }
                Some(scope)
            }
            EventKind::Crashed => {
                down.insert(node);
                for on_scope in believers.values_mut() {
                    on_scope.remove(node);
                }
                None
            }
            EventKind::Restarted | EventKind::Resumed { .. } => {
                down.remove(node);
                None
            }
            EventKind::Paused { .. } => {
                down.insert(node);
                None
            }
            _ => continue,
        };
        let only = touched.map(|scope| [scope]);
        for &scope in only.as_ref().map_or(&scopes[..], |one| &one[..]) {
            // The token of the scope's newest grant, this event included.
            let newest = index.newest_grant(scope, k + 1).map(|g| g.token);
            let served = believers.get(scope).is_some_and(|on_scope| {
                on_scope
                    .iter()
                    .any(|(worker, token)| !down.contains(worker) && newest == Some(*token))
            });
            match (served, served_since.get(scope).copied()) {
                (true, None) => {
                    served_since.insert(scope, event.t_ns);
                }
                (false, Some(since)) => {
                    served_ns += event.t_ns.saturating_sub(since);
                    served_since.remove(scope);
                }
                _ => {}
            }
        }
    }
    served_ns += served_since
        .values()
        .map(|&since| index.end_ns().saturating_sub(since))
        .sum::<u64>();
    let total_ns = index.end_ns() as f64 * scopes.len() as f64;
    m.unavailability = (1.0 - served_ns as f64 / total_ns).clamp(0.0, 1.0);
}
