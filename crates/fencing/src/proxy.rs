//! `proxy`: a fencing mediator (max-token) in front of a backend store that checks nothing;
//! source 000 (docs/sources.md): "that mediator becomes part of the correctness boundary".

use std::collections::{BTreeMap, BTreeSet};

use fencesim_model::{
    fence::{CompareScope, Durability, Fence, Verdict, WriteRequest},
    lease::LeaseView,
    NodeName, Scope, Token,
};
use fencesim_planted::{active, Mutant};

use crate::max_token::HighestTokens;

/// The proxy's highest tokens are durable or volatile across a proxy restart; the backend's
/// data is always durable. Writers listed in `bypass` reach the backend directly (a
/// misconfigured path) and are never checked.
#[derive(Clone, Debug)]
pub struct Proxy {
    tokens: HighestTokens,
    bypass: BTreeSet<NodeName>,
    /// The token of the last write the backend stored per resource (it checks none).
    backend: BTreeMap<Scope, Token>,
}

impl Proxy {
    /// Creates it.
    pub fn new(durability: Durability, compare: CompareScope, bypass: Vec<String>) -> Self {
        Proxy {
            tokens: HighestTokens::new(durability, compare),
            bypass: bypass.into_iter().collect(),
            backend: BTreeMap::new(),
        }
    }

    /// The token of the last write the backend stored for `resource`.
    pub fn backend_token(&self, resource: &str) -> Option<Token> {
        self.backend.get(resource).copied()
    }
}

impl Fence for Proxy {
    fn name(&self) -> String {
        "proxy".to_string()
    }

    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        if active(Mutant::ProxyBypassesEveryone) {
            // The planted bug treats every writer as a bypass writer.
            let previous = self.backend.insert(request.resource.clone(), request.token);
            return Verdict::Accepted { previous };
        }
        if self.bypass.contains(&request.writer) {
            // The backend knows only what it last stored; the proxy never sees this write.
            let previous = self.backend.insert(request.resource.clone(), request.token);
            return Verdict::Accepted { previous };
        }
        let verdict = self
            .tokens
            .admit(&request.resource, request.token, "accepted");
        if verdict.is_accepted() {
            self.backend.insert(request.resource.clone(), request.token);
        }
        verdict
    }

    fn restart(&mut self) {
        self.tokens.restart();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, write, write_by, Op::Restart};

    #[test]
    fn proxied_stale_write_rejected_bypass_accepted() {
        let mut proxy = Proxy::new(
            Durability::Durable,
            CompareScope::PerResource,
            vec!["worker-9".to_string()],
        );
        check(
            &mut proxy,
            None,
            &[
                (write("job-1", 42), "accepted"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: stale token 41 < accepted 42",
                ),
                (write_by("worker-9", "job-1", 41), "accepted previous=42"),
                // The proxy never saw the bypassing write, so it still compares against 42.
                (write("job-1", 42), "accepted previous=42"),
            ],
        );
        assert_eq!(proxy.backend_token("job-1"), Some(42));
    }

    #[test]
    fn bypassed_stale_write_reaches_backend() {
        let mut proxy = Proxy::new(
            Durability::Durable,
            CompareScope::PerResource,
            vec!["worker-9".to_string()],
        );
        check(
            &mut proxy,
            None,
            &[
                (write("job-1", 42), "accepted"),
                (write_by("worker-9", "job-1", 1), "accepted previous=42"),
            ],
        );
        assert_eq!(proxy.backend_token("job-1"), Some(1));
    }

    #[test]
    fn rejected_write_does_not_reach_backend() {
        let mut proxy = Proxy::new(Durability::Durable, CompareScope::PerResource, Vec::new());
        check(
            &mut proxy,
            None,
            &[
                (write("job-1", 5), "accepted"),
                (
                    write("job-1", 4),
                    "rejected accepted=5: stale token 4 < accepted 5",
                ),
            ],
        );
        assert_eq!(proxy.backend_token("job-1"), Some(5));
    }

    #[test]
    fn durable_proxy_restart_keeps_highest() {
        check(
            &mut Proxy::new(Durability::Durable, CompareScope::PerResource, Vec::new()),
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
    fn volatile_proxy_restart_lets_stale_through_to_durable_backend() {
        let mut proxy = Proxy::new(Durability::Volatile, CompareScope::PerResource, Vec::new());
        check(
            &mut proxy,
            None,
            &[
                (write("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (write("job-1", 41), "accepted"),
            ],
        );
        assert_eq!(proxy.backend_token("job-1"), Some(41));
    }

    #[test]
    fn global_proxy_rejects_valid_write_to_another_resource() {
        check(
            &mut Proxy::new(Durability::Durable, CompareScope::Global, Vec::new()),
            None,
            &[
                (write("job-A", 7), "accepted"),
                (
                    write("job-B", 3),
                    "rejected accepted=7: stale token 3 < accepted 7 (global)",
                ),
            ],
        );
    }
}
