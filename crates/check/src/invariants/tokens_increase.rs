//! I1: per lease scope, every granted token is above every token granted before it,
//! service restarts (and lost counters) included. Read from the index's grants per scope.

use fencesim_model::{Invariant, Token};

use super::ms;
use fencesim_planted::{active, Mutant};

use crate::{index::Index, Violation};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    for scope in index.scopes() {
        // The highest token granted so far and the first grant that issued it.
        let mut highest: Option<(Token, usize, &str)> = None;
        for grant in index.grants(scope) {
            let (token, holder, k) = (grant.token, grant.holder.as_str(), grant.index);
            if active(Mutant::CheckI1EqualTokensPass)
                && highest.is_some_and(|(max, ..)| token == max)
            {
                // The planted bug lets an equal token pass (`<` instead of `<=`).
                highest = Some((token, k, holder));
                continue;
            }
            match highest {
                Some((max, max_grant, previous_holder)) if token <= max => {
                    violations.push(Violation {
                        invariant: Invariant::I1,
                        scope: scope.to_owned(),
                        t_ns: index.events()[k].t_ns,
                        message: format!(
                            "scope {scope}: token {token} granted to {holder} at {} is not \
                             above token {max} granted to {previous_holder} at {}",
                            ms(index, k),
                            ms(index, max_grant),
                        ),
                        evidence: vec![max_grant, k],
                    });
                }
                _ => highest = Some((token, k, holder)),
            }
        }
    }
    violations
}
