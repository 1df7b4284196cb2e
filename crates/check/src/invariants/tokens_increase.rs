//! I1: per lease scope, every granted token is above every token granted before it,
//! service restarts (and lost counters) included.

use std::collections::BTreeMap;

use fencesim_model::{
    history::EventKind,
    mutant::{active, Mutant},
    Invariant, Token,
};

use super::ms;
use crate::{index::Index, Violation};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    // Per scope: the highest token granted so far and the first grant that issued it.
    let mut highest: BTreeMap<&str, (Token, usize)> = BTreeMap::new();
    for (k, event) in index.events.iter().enumerate() {
        let EventKind::Granted {
            scope,
            holder,
            token,
            ..
        } = &event.kind
        else {
            continue;
        };
        match highest.get(scope.as_str()) {
            Some(&(max, max_grant))
                if *token < max || (*token == max && !active(Mutant::CheckI1EqualTokensPass)) =>
            {
                let previous_holder = match &index.events[max_grant].kind {
                    EventKind::Granted { holder, .. } => holder.as_str(),
                    _ => unreachable!("`highest` points at grants"),
                };
                violations.push(Violation {
                    invariant: Invariant::I1,
                    scope: scope.clone(),
                    t_ns: event.t_ns,
                    message: format!(
                        "scope {scope}: token {token} granted to {holder} at {} is not above \
                         token {max} granted to {previous_holder} at {}",
                        ms(index, k),
                        ms(index, max_grant),
                    ),
                    evidence: vec![max_grant, k],
                });
            }
            _ => {
                highest.insert(scope, (*token, k));
            }
        }
    }
    violations
}
