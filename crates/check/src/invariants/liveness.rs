//! I5: once all faults have healed (`FaultsHealed` at h), every resource that any worker
//! wrote to gets a `WriteAccepted` within `[h, h + liveness_bound_ms]`.
//!
//! A run that ends before the bound is inconclusive and flags nothing. Without `RunStarted`
//! or `FaultsHealed` there is no bound to check against. If faults heal more than once, the
//! last `FaultsHealed` counts (docs/spec.md: "after the last fault heals").

use std::collections::BTreeMap;

use fencesim_model::{history::EventKind, Invariant, NS_PER_MS};

use super::ms;
use crate::{index::Index, Violation};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let events = index.events;
    let Some(bound_ms) = events.iter().find_map(|e| match e.kind {
        EventKind::RunStarted {
            liveness_bound_ms, ..
        } => Some(liveness_bound_ms),
        _ => None,
    }) else {
        return Vec::new();
    };
    let Some(healed) = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::FaultsHealed))
    else {
        return Vec::new();
    };
    let healed_ns = events[healed].t_ns;
    let deadline_ns = healed_ns.saturating_add(bound_ms.saturating_mul(NS_PER_MS));
    if index.end_ns < deadline_ns {
        return Vec::new();
    }

    // Resources written to, in order of first write, with the lease scope their writes name
    // (the last one seen); a resource never seen at the storage falls back to its own name.
    let mut resources: Vec<&str> = Vec::new();
    let mut scope_of: BTreeMap<&str, &str> = BTreeMap::new();
    for event in events {
        match &event.kind {
            EventKind::WriteSent { resource, .. } if !resources.contains(&resource.as_str()) => {
                resources.push(resource);
            }
            EventKind::WritePresented {
                resource,
                lease_scope,
                ..
            }
            | EventKind::WriteAccepted {
                resource,
                lease_scope,
                ..
            }
            | EventKind::WriteRejected {
                resource,
                lease_scope,
                ..
            } => {
                scope_of.insert(resource, lease_scope);
            }
            _ => {}
        }
    }

    let by_deadline = |e: &&fencesim_model::history::Event| e.t_ns <= deadline_ns;
    let mut violations = Vec::new();
    for resource in resources {
        let committed = events.iter().any(|e| {
            matches!(&e.kind, EventKind::WriteAccepted { resource: r, .. } if r == resource)
                && (healed_ns..=deadline_ns).contains(&e.t_ns)
        });
        if committed {
            continue;
        }
        let scope = scope_of.get(resource).copied().unwrap_or(resource);
        let in_time = events.iter().take_while(by_deadline).count();
        let last_grant = events[..in_time]
            .iter()
            .rposition(|e| matches!(&e.kind, EventKind::Granted { scope: s, .. } if s == scope));
        let last_reject = events[..in_time].iter().rposition(
            |e| matches!(&e.kind, EventKind::WriteRejected { resource: r, .. } if r == resource),
        );

        let mut message = format!(
            "resource {resource}: no write accepted within {bound_ms} ms after faults healed at \
             {} (bound ran out at {} ms)",
            ms(index, healed),
            crate::index::ns_to_ms(deadline_ns),
        );
        match last_grant {
            Some(g) => {
                let EventKind::Granted { holder, token, .. } = &events[g].kind else {
                    unreachable!()
                };
                message.push_str(&format!(
                    "; last grant on scope {scope}: token {token} to {holder} at {}",
                    ms(index, g)
                ));
            }
            None => message.push_str(&format!("; no grant on scope {scope}")),
        }
        if let Some(r) = last_reject {
            let EventKind::WriteRejected {
                op,
                writer,
                token,
                accepted,
                ..
            } = &events[r].kind
            else {
                unreachable!()
            };
            let accepted = accepted.map_or_else(|| "none".to_owned(), |t| t.to_string());
            message.push_str(&format!(
                "; last rejection: op {op} from {writer} with token {token} (accepted token \
                 {accepted}) at {}",
                ms(index, r)
            ));
        }

        let mut evidence: Vec<usize> = [Some(healed), last_grant, last_reject]
            .into_iter()
            .flatten()
            .collect();
        evidence.sort_unstable();
        evidence.dedup();
        violations.push(Violation {
            invariant: Invariant::I5,
            scope: resource.to_owned(),
            t_ns: deadline_ns,
            message,
            evidence,
        });
    }
    violations
}
