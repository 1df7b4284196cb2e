//! I5: once all faults have healed (`FaultsHealed` at h), every resource that any worker
//! wrote to keeps making progress until the run ends at e: in the sequence h, a1, …, an, e
//! (the times of its `WriteAccepted` events in `[h, e]`), no two neighbours are more than
//! `liveness_bound_ms` apart. The first gap that is too long is reported, once per resource.
//!
//! "Some write within the bound after the heal" is too weak: a store that accepts
//! two writes right after the heal and then rejects everything would pass it. The nemesis runs
//! the liveness phase for twice the bound so the gap that follows the first accepted write is
//! seen. A run that ends before the bound is inconclusive and flags nothing. Without `RunStarted`
//! or `FaultsHealed` there is no bound to check against. If faults heal more than once, the
//! last `FaultsHealed` counts (docs/spec.md: "after the last fault heals").

use std::collections::BTreeMap;

use fencesim_model::{history::EventKind, Invariant, NS_PER_MS};

use super::ms;
use fencesim_planted::{active, Mutant};

use crate::{index::Index, Violation};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let events = index.events();
    let Some(bound_ms) = liveness_bound_ms(index) else {
        return Vec::new();
    };
    let Some(healed) = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::FaultsHealed))
    else {
        return Vec::new();
    };
    let healed_ns = events[healed].t_ns;
    if index.end_ns() < healed_ns.saturating_add(bound_ms.saturating_mul(NS_PER_MS)) {
        return Vec::new();
    }
    let (resources, scope_of) = resources_written(index);
    let bound_ns = bound_ms.saturating_mul(NS_PER_MS);
    let mut violations = Vec::new();
    for resource in resources {
        let Some(gap_from) = first_long_gap(index, healed, bound_ns, resource) else {
            continue;
        };
        let scope = scope_of.get(resource).copied().unwrap_or(resource);
        violations.push(violation(
            index,
            Gap {
                resource,
                scope,
                healed,
                gap_from,
                bound_ms,
            },
        ));
    }
    violations
}

/// The liveness bound `RunStarted` gives (`None`: no bound to check against).
fn liveness_bound_ms(index: &Index<'_>) -> Option<u64> {
    index.events().iter().find_map(|e| match e.kind {
        EventKind::RunStarted {
            liveness_bound_ms, ..
        } => Some(liveness_bound_ms),
        _ => None,
    })
}

/// Resources written to, in order of first write, with the lease scope their writes name
/// (the last one seen); a resource never seen at the storage has no scope here.
fn resources_written<'h>(index: &Index<'h>) -> (Vec<&'h str>, BTreeMap<&'h str, &'h str>) {
    let mut resources: Vec<&str> = Vec::new();
    let mut scope_of: BTreeMap<&str, &str> = BTreeMap::new();
    for event in index.events() {
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
    (resources, scope_of)
}

/// A gap too long in a resource's progress.
struct Gap<'a> {
    resource: &'a str,
    /// The lease scope its writes name (its own name if none was seen).
    scope: &'a str,
    /// The last `FaultsHealed`.
    healed: usize,
    /// The event that starts the gap: the heal, or an accepted write.
    gap_from: usize,
    bound_ms: u64,
}

/// The I5 violation of `gap`: what was last granted on its scope and last rejected on its
/// resource by the time the bound ran out.
fn violation(index: &Index<'_>, gap: Gap<'_>) -> Violation {
    let events = index.events();
    let Gap {
        resource,
        scope,
        healed,
        gap_from,
        bound_ms,
    } = gap;
    let deadline_ns = events[gap_from]
        .t_ns
        .saturating_add(bound_ms.saturating_mul(NS_PER_MS));
    let in_time = events.iter().take_while(|e| e.t_ns <= deadline_ns).count();
    let last_grant = index.newest_grant(scope, in_time);
    let last_reject = events[..in_time].iter().rposition(
        |e| matches!(&e.kind, EventKind::WriteRejected { resource: r, .. } if r == resource),
    );

    let mut message = if gap_from == healed {
        format!(
            "resource {resource}: no write accepted within {bound_ms} ms after faults healed \
             at {} (bound ran out at {} ms)",
            ms(index, healed),
            crate::index::ns_to_ms(deadline_ns),
        )
    } else {
        format!(
            "resource {resource}: no write accepted for {bound_ms} ms after the write \
             accepted at {} (faults healed at {}; bound ran out at {} ms)",
            ms(index, gap_from),
            ms(index, healed),
            crate::index::ns_to_ms(deadline_ns),
        )
    };
    match last_grant {
        Some(grant) => message.push_str(&format!(
            "; last grant on scope {scope}: token {} to {} at {}",
            grant.token,
            grant.holder,
            ms(index, grant.index)
        )),
        None => message.push_str(&format!("; no grant on scope {scope}")),
    }
    if let Some(r) = last_reject {
        message.push_str(&rejection_text(index, r));
    }

    let mut evidence: Vec<usize> = [
        Some(healed),
        Some(gap_from),
        last_grant.map(|g| g.index),
        last_reject,
    ]
    .into_iter()
    .flatten()
    .collect();
    evidence.sort_unstable();
    evidence.dedup();
    Violation {
        invariant: Invariant::I5,
        scope: resource.to_owned(),
        t_ns: deadline_ns,
        message,
        evidence,
    }
}

/// `; last rejection: ...` for `WriteRejected` event `r`.
fn rejection_text(index: &Index<'_>, r: usize) -> String {
    let EventKind::WriteRejected {
        op,
        writer,
        token,
        accepted,
        ..
    } = &index.events()[r].kind
    else {
        unreachable!("a rejection")
    };
    let accepted = accepted.map_or_else(|| "none".to_owned(), |t| t.to_string());
    format!(
        "; last rejection: op {op} from {writer} with token {token} (accepted token \
         {accepted}) at {}",
        ms(index, r)
    )
}

/// The event (the heal, or an accepted write to `resource`) that starts the first gap longer
/// than `bound_ns` between the heal, each write accepted to `resource`, and the end of the run;
/// `None` if there is no such gap.
fn first_long_gap(
    index: &Index<'_>,
    healed: usize,
    bound_ns: u64,
    resource: &str,
) -> Option<usize> {
    let events = index.events();
    let mut gap_from = healed;
    for (i, event) in events.iter().enumerate().skip(healed + 1) {
        if event.t_ns > index.end_ns() {
            break;
        }
        let progress = match &event.kind {
            // The planted bug counts a write to any resource as progress for every resource.
            EventKind::WriteAccepted { .. } if active(Mutant::CheckI5AnyResource) => true,
            EventKind::WriteAccepted { resource: r, .. } => r == resource,
            _ => false,
        };
        if progress {
            if event.t_ns - events[gap_from].t_ns > bound_ns {
                return Some(gap_from);
            }
            gap_from = i;
        }
    }
    if active(Mutant::CheckI5NoGapToEnd) {
        return None;
    }
    (index.end_ns() - events[gap_from].t_ns > bound_ns).then_some(gap_from)
}
