//! I3: per resource, the storage never accepts a token lower than one it already accepted,
//! anywhere in the run (storage restarts included). Equal tokens are fine.

use std::collections::BTreeMap;

use fencesim_model::{history::EventKind, Invariant, Token};

use super::ms;
use fencesim_planted::{active, Mutant};

use crate::{index::Index, Violation};

pub(super) fn check(index: &Index<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    // Per resource: the highest token accepted so far and the first accept that set it.
    let mut highest: BTreeMap<&str, (Token, usize)> = BTreeMap::new();
    for (k, event) in index.events().iter().enumerate() {
        let EventKind::WriteAccepted {
            op,
            resource,
            writer,
            token,
            ..
        } = &event.kind
        else {
            continue;
        };
        // The planted bug keys the highest token by writer: no other writer's token is seen.
        let key = if active(Mutant::CheckI3KeyedByWriter) {
            writer.as_str()
        } else {
            resource.as_str()
        };
        match highest.get(key) {
            Some(&(max, max_accept)) if *token < max => {
                let EventKind::WriteAccepted {
                    op: max_op,
                    writer: max_writer,
                    ..
                } = &index.events()[max_accept].kind
                else {
                    unreachable!("`highest` points at accepts")
                };
                violations.push(Violation {
                    invariant: Invariant::I3,
                    scope: resource.clone(),
                    t_ns: event.t_ns,
                    message: format!(
                        "resource {resource}: op {op} from {writer} with token {token} accepted \
                         at {}, below token {max} already accepted (op {max_op} from \
                         {max_writer} at {})",
                        ms(index, k),
                        ms(index, max_accept),
                    ),
                    evidence: vec![max_accept, k],
                });
            }
            Some(&(max, _)) if *token == max => {}
            _ => {
                highest.insert(key, (*token, k));
            }
        }
    }
    violations
}
