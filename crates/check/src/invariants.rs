//! The safety invariants I1–I4 and the liveness invariant I5, one file each, run over a
//! shared [`Index`] of the history.
//!
//! Each checker looks at every event at most once as "the violating event", so no
//! (invariant, event) pair is reported twice; `check_all` still drops duplicates defensively.

use std::collections::BTreeSet;

use fencesim_model::Invariant;
use serde::{Deserialize, Serialize};

use crate::index::Index;

mod liveness;
mod single_holder;
mod stale_accept;
mod superseded_accept;
mod tokens_increase;

/// One violated invariant, with the events that prove it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    /// Which invariant.
    pub invariant: Invariant,
    /// The lease scope (I1, I2, I4) or the resource (I3, I5) concerned.
    pub scope: String,
    /// True time of the violating event (ns); for I5, the instant the liveness bound ran out.
    pub t_ns: u64,
    /// One sentence naming tokens, holders and op ids.
    pub message: String,
    /// Indices into `history.events`, in time order; the last one is the violating event.
    pub evidence: Vec<usize>,
}

/// All violations, ordered by time, then invariant, then scope.
pub(crate) fn check_all(index: &Index<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    violations.extend(tokens_increase::check(index));
    violations.extend(single_holder::check(index));
    violations.extend(stale_accept::check(index));
    violations.extend(superseded_accept::check(index));
    violations.extend(liveness::check(index));

    let mut seen: BTreeSet<(Invariant, String, Option<usize>)> = BTreeSet::new();
    violations.retain(|v| seen.insert((v.invariant, v.scope.clone(), v.evidence.last().copied())));
    violations.sort_by(|a, b| {
        (a.t_ns, a.invariant, &a.scope, &a.evidence).cmp(&(
            b.t_ns,
            b.invariant,
            &b.scope,
            &b.evidence,
        ))
    });
    violations
}

/// `12.5 ms` style, for messages.
pub(crate) fn ms(index: &Index<'_>, event: usize) -> String {
    format!("{} ms", index.t_ms(event))
}
