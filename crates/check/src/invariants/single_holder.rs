//! I2: the lease service's own state never has two open tenures on one scope: a `Granted`
//! must come after the previous tenure's `Expired` / `TakenOver` / `Released` / `Dropped`.

use fencesim_model::{history::EventKind, Invariant};

use super::ms;
use fencesim_planted::{active, Mutant};

use crate::{index::Index, Violation};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let mut doubles: Vec<_> = index.double_grants().iter().collect();
    if active(Mutant::CheckI2EqualTokensOnly) {
        // The planted bug judges overlapping holders only when their tokens are equal.
        doubles.retain(|double| {
            matches!(
                (&index.events()[double.grant].kind, &index.events()[double.open].kind),
                (EventKind::Granted { token: a, .. }, EventKind::Granted { token: b, .. }) if a == b
            )
        });
    }
    doubles
        .into_iter()
        .map(|double| {
            let (
                EventKind::Granted {
                    scope,
                    holder,
                    token,
                    ..
                },
                EventKind::Granted {
                    holder: open_holder,
                    token: open_token,
                    ..
                },
            ) = (
                &index.events()[double.grant].kind,
                &index.events()[double.open].kind,
            )
            else {
                unreachable!("double grants point at grants")
            };
            Violation {
                invariant: Invariant::I2,
                scope: scope.clone(),
                t_ns: index.events()[double.grant].t_ns,
                message: format!(
                    "scope {scope}: token {token} granted to {holder} at {} while token \
                     {open_token} of {open_holder} (granted at {}) was still held in the \
                     service's state",
                    ms(index, double.grant),
                    ms(index, double.open),
                ),
                evidence: vec![double.open, double.grant],
            }
        })
        .collect()
}
