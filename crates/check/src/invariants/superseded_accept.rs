//! I4 (the headline invariant): the storage never accepts a write whose epoch had been
//! superseded — a newer grant issued on its lease scope — before the acceptance instant.
//!
//! The epoch of a write is the latest `Granted` to its writer with its token on its lease
//! scope. Any later grant on that scope, to anyone (the same writer re-granted included),
//! ends the epoch; a renewal does not.

use fencesim_model::{history::EventKind, Invariant};

use super::ms;
use fencesim_planted::{active, Mutant};

use crate::{
    index::{Epoch, FenceStatus, Index},
    Violation,
};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    for (k, event) in index.events().iter().enumerate() {
        let EventKind::WriteAccepted {
            op,
            resource,
            lease_scope,
            writer,
            token,
            ..
        } = &event.kind
        else {
            continue;
        };
        let lease_scope = if active(Mutant::CheckI4ResourceScope) {
            resource
        } else {
            lease_scope
        };
        let (message, evidence) = match index.epoch(lease_scope, writer, *token, k) {
            Epoch::Current { .. } => continue,
            Epoch::NeverGranted => (
                format!(
                    "resource {resource}: op {op} from {writer} accepted at {} with token \
                     {token}, but token {token} was never granted to {writer} on scope \
                     {lease_scope}",
                    ms(index, k),
                ),
                vec![k],
            ),
            Epoch::Superseded {
                grant,
                superseded_by,
            } => {
                let EventKind::Granted {
                    holder: new_holder,
                    token: new_token,
                    ..
                } = &index.events()[superseded_by].kind
                else {
                    unreachable!("epochs point at grants")
                };
                let fence = fence_text(index, lease_scope, resource, grant, k);
                (
                    format!(
                        "resource {resource}: op {op} from {writer} accepted at {} with token \
                         {token} of scope {lease_scope} (granted at {}), superseded by token \
                         {new_token} granted to {new_holder} at {}; accepted {fence}",
                        ms(index, k),
                        ms(index, grant),
                        ms(index, superseded_by),
                    ),
                    vec![grant, superseded_by, k],
                )
            }
        };
        violations.push(Violation {
            invariant: Invariant::I4,
            scope: lease_scope.clone(),
            t_ns: event.t_ns,
            message,
            evidence,
        });
    }
    violations
}

/// Where the newer epochs' fence stood when write `k` (of epoch `grant`) was accepted.
fn fence_text(
    index: &Index<'_>,
    lease_scope: &str,
    resource: &str,
    grant: usize,
    k: usize,
) -> String {
    match index.fence_status(lease_scope, resource, grant, k) {
        FenceStatus::InWindow { grant: g, fence } => format!(
            "inside the grant→fence window: token {} was granted at {} and its fence \
             reached {resource} only at {}",
            granted_token(index, g),
            ms(index, g),
            ms(index, fence),
        ),
        FenceStatus::AfterFence { grant: g, fence } => format!(
            "after the fence for token {} had been accepted by {resource} at {}",
            granted_token(index, g),
            ms(index, fence),
        ),
        FenceStatus::NoFence => "with no fence at all for the newer tokens".to_owned(),
    }
}

fn granted_token(index: &Index<'_>, grant: usize) -> u64 {
    match &index.events()[grant].kind {
        EventKind::Granted { token, .. } => *token,
        _ => unreachable!("fence status points at grants"),
    }
}
