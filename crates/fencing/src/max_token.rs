//! `max-token`: an atomic compare against the highest accepted token (and the token table the
//! other max-token-based modes share).

use std::collections::BTreeMap;

use fencesim_model::{
    fence::{CompareScope, Durability, Fence, Verdict, WriteRequest},
    lease::LeaseView,
    Scope, Token,
};
use fencesim_planted::{active, Mutant};

/// The key every resource maps to under a global compare. No per-resource key is consulted
/// in that mode, so a resource literally named `*` cannot collide with it.
const GLOBAL_KEY: &str = "*";

/// The highest token per resource (or one for all resources), durable or volatile.
#[derive(Clone, Debug)]
pub(crate) struct HighestTokens {
    durable: bool,
    global: bool,
    highest: BTreeMap<Scope, Token>,
}

impl HighestTokens {
    pub(crate) fn new(durability: Durability, compare: CompareScope) -> Self {
        HighestTokens {
            durable: durability == Durability::Durable,
            global: compare == CompareScope::Global,
            highest: BTreeMap::new(),
        }
    }

    fn key<'a>(&self, resource: &'a str) -> &'a str {
        if self.global {
            GLOBAL_KEY
        } else {
            resource
        }
    }

    /// The token `resource` is compared against.
    pub(crate) fn get(&self, resource: &str) -> Option<Token> {
        self.highest.get(self.key(resource)).copied()
    }

    /// Overwrites the compared token (lowering it is the caller's decision).
    pub(crate) fn set(&mut self, resource: &str, token: Token) {
        let key = self.key(resource).to_string();
        self.highest.insert(key, token);
    }

    /// The compare-and-set: accepts iff `token >= highest`, then raises `highest` to it.
    /// `noun` names what the store compares against in the reason ("accepted", "epoch").
    pub(crate) fn admit(&mut self, resource: &str, token: Token, noun: &str) -> Verdict {
        if active(Mutant::MaxTokenOffByOne) {
            // The planted bug: `token + 1 < highest`, so a token one below the highest is
            // accepted (and lowers it).
            if let Some(highest) = self.get(resource) {
                if token.saturating_add(1) == highest {
                    self.set(resource, token);
                    return Verdict::Accepted {
                        previous: Some(highest),
                    };
                }
            }
        }
        match self.get(resource) {
            Some(highest) if token < highest => Verdict::Rejected {
                accepted: Some(highest),
                reason: format!("stale token {token} < {noun} {highest}{}", self.suffix()),
            },
            previous => {
                // Here `token >= highest`, so this raises (or keeps) the highest.
                self.set(resource, token);
                Verdict::Accepted { previous }
            }
        }
    }

    /// Marks reasons from a global compare, whose compared token may belong to another resource.
    pub(crate) fn suffix(&self) -> &'static str {
        if self.global {
            " (global)"
        } else {
            ""
        }
    }

    pub(crate) fn restart(&mut self) {
        if active(Mutant::MaxTokenForgetsDurable) {
            // The planted bug: a durable store forgets its highest tokens too.
            self.highest.clear();
            return;
        }
        if !self.durable {
            self.highest.clear();
        }
    }
}

/// Rejects a token lower than the highest accepted; the same token may write again.
#[derive(Clone, Debug)]
pub struct MaxToken {
    tokens: HighestTokens,
}

impl MaxToken {
    /// Creates it.
    pub fn new(durability: Durability, compare: CompareScope) -> Self {
        MaxToken {
            tokens: HighestTokens::new(durability, compare),
        }
    }
}

impl Fence for MaxToken {
    fn name(&self) -> String {
        "max-token".to_string()
    }

    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        self.tokens
            .admit(&request.resource, request.token, "accepted")
    }

    fn restart(&mut self) {
        self.tokens.restart();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, write, Op::Restart};

    #[test]
    fn stale_rejected_equal_and_newer_accepted() {
        check(
            &mut MaxToken::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: stale token 41 < accepted 42",
                ),
                (write("job-1", 42), "accepted previous=42"),
                (write("job-1", 43), "accepted previous=42"),
            ],
        );
    }

    #[test]
    fn token_zero_is_a_valid_first_write() {
        check(
            &mut MaxToken::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (write("job-1", 0), "accepted"),
                (write("job-1", 0), "accepted previous=0"),
            ],
        );
    }

    #[test]
    fn per_resource_compare_keeps_resources_apart() {
        check(
            &mut MaxToken::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (write("job-A", 7), "accepted"),
                (write("job-B", 3), "accepted"),
                (
                    write("job-B", 2),
                    "rejected accepted=3: stale token 2 < accepted 3",
                ),
            ],
        );
    }

    #[test]
    fn global_compare_rejects_a_valid_write_to_another_resource() {
        // Seed 000: "mixing scopes can reject valid writes". job-B's token 3 is the newest
        // for job-B, but a global store compares it against job-A's 7.
        check(
            &mut MaxToken::new(Durability::Durable, CompareScope::Global),
            None,
            &[
                (write("job-A", 7), "accepted"),
                (
                    write("job-B", 3),
                    "rejected accepted=7: stale token 3 < accepted 7 (global)",
                ),
                (write("job-B", 8), "accepted previous=7"),
                (
                    write("job-A", 7),
                    "rejected accepted=8: stale token 7 < accepted 8 (global)",
                ),
            ],
        );
    }

    #[test]
    fn durable_restart_keeps_highest() {
        check(
            &mut MaxToken::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: stale token 41 < accepted 42",
                ),
            ],
        );
    }

    #[test]
    fn volatile_restart_forgets_highest_so_stale_is_accepted() {
        // The hazard a volatile max-token exists to show.
        check(
            &mut MaxToken::new(Durability::Volatile, CompareScope::PerResource),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (write("job-1", 41), "accepted"),
                (
                    write("job-1", 40),
                    "rejected accepted=41: stale token 40 < accepted 41",
                ),
            ],
        );
    }

    #[test]
    fn volatile_global_restart_forgets_the_global_highest() {
        check(
            &mut MaxToken::new(Durability::Volatile, CompareScope::Global),
            None,
            &[
                (write("job-A", 9), "accepted"),
                (Restart, "restarted"),
                (write("job-B", 1), "accepted"),
            ],
        );
    }
}
