//! A worker's belief that it holds one lease: the lifecycle both workers carry, the simulated
//! one (`sim`'s worker) and live mode's worker process. It starts at a grant with the policy's
//! local deadline ([`deadline_after`]), moves on with each successful renewal, and ends once
//! (the first reason wins). Each step returns the history event that records it, so both
//! workers record the same events at the same decisions; what a failed renewal does is the
//! policy's answer, carried out here.
//!
//! Pure: the worker passes in its own clock readings and records the events returned.

use crate::{
    history::{BeliefEnd, EventKind},
    policy::{LeaseState, RenewFailure, RenewFailureCause, WorkerPolicy},
    Scope, Token, NS_PER_MS,
};

/// What a worker believes about the lease it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Belief {
    /// The lease scope.
    pub scope: Scope,
    /// The token it was granted under.
    pub token: Token,
    /// Its local deadline (ns on the worker's monotonic clock); `u64::MAX`: none.
    pub deadline_mono_ns: u64,
    /// Why it ended, once it has.
    pub ended: Option<BeliefEnd>,
    /// A timer ends it the moment its deadline passes (the policy's `ends_at_deadline`, and
    /// there is a deadline).
    pub watched: bool,
}

/// The local deadline after a grant or renewal whose deadline base (the request's or the
/// reply's reading, as `workers.deadline_from` says) is `base_mono_ns`: the policy's belief
/// period from it; `u64::MAX` when the policy has none.
pub fn deadline_after(policy: &dyn WorkerPolicy, base_mono_ns: u64) -> u64 {
    policy.local_deadline_ms().map_or(u64::MAX, |ms| {
        base_mono_ns.saturating_add(ms.saturating_mul(NS_PER_MS))
    })
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

impl Belief {
    /// The belief a grant of `token` for `scope` starts, until `deadline_mono_ns`, and its
    /// `belief-started` event.
    pub fn start(
        policy: &dyn WorkerPolicy,
        scope: &str,
        token: Token,
        deadline_mono_ns: u64,
    ) -> (Belief, EventKind) {
        let event = EventKind::BeliefStarted {
            scope: scope.to_string(),
            token,
            local_deadline_mono_ms: ms(deadline_mono_ns),
        };
        let belief = Belief {
            scope: scope.to_string(),
            token,
            deadline_mono_ns,
            ended: None,
            watched: policy.ends_at_deadline() && deadline_mono_ns != u64::MAX,
        };
        (belief, event)
    }

    /// Whether it has ended.
    pub fn is_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// What the policy is shown at `now_mono_ns`.
    pub fn state(&self, now_mono_ns: u64) -> LeaseState {
        LeaseState {
            now_mono_ns,
            deadline_mono_ns: self.deadline_mono_ns,
        }
    }

    /// A renewal succeeded: the deadline moves on to `deadline_mono_ns`, never back.
    pub fn renewed(&mut self, deadline_mono_ns: u64) {
        self.deadline_mono_ns = self.deadline_mono_ns.max(deadline_mono_ns);
    }

    /// A renewal answered at `now_mono_ns` comes too late: the belief is watched (the client
    /// stops believing at its deadline) and that deadline has passed, so even a success
    /// changes nothing.
    pub fn too_late(&self, now_mono_ns: u64) -> bool {
        self.watched && !self.is_ended() && self.state(now_mono_ns).deadline_passed()
    }

    /// Ends it for `why` at `now_mono_ns`: its `belief-ended` event, or `None` when it had
    /// already ended (the first reason stands).
    pub fn end(&mut self, why: BeliefEnd, now_mono_ns: u64) -> Option<EventKind> {
        if self.is_ended() {
            return None;
        }
        self.ended = Some(why.clone());
        Some(EventKind::BeliefEnded {
            scope: self.scope.clone(),
            token: self.token,
            why,
            local_mono_ms: ms(now_mono_ns),
        })
    }

    /// A renewal failed at `now_mono_ns` for `reason` (`cause`: refused by the service, or no
    /// answer in time): the `renew-failed` event and, when the policy's answer ends the belief, its
    /// `belief-ended`; and whether to keep renewing.
    pub fn renew_failed(
        &mut self,
        policy: &dyn WorkerPolicy,
        reason: String,
        cause: RenewFailureCause,
        now_mono_ns: u64,
    ) -> (Vec<EventKind>, bool) {
        let mut events = vec![EventKind::RenewFailed {
            scope: self.scope.clone(),
            token: self.token,
            reason,
        }];
        let keep_renewing = match policy.on_renew_failure(cause) {
            RenewFailure::KeepRenewing => true,
            RenewFailure::StopRenewing => false,
            RenewFailure::StopBelieving => {
                events.extend(self.end(BeliefEnd::RenewFailed, now_mono_ns));
                false
            }
        };
        (events, keep_renewing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::SpecPolicy;

    fn policy(stop_on_renew_failure: bool) -> SpecPolicy {
        SpecPolicy {
            renew_every_ms: 1_000,
            renew_deadline_ms: 3_000,
            stop_on_renew_failure,
            recheck_deadline_before_write: false,
            check_lease_before_write: false,
        }
    }

    #[test]
    fn a_belief_starts_with_its_deadline_and_ends_once() {
        let retrying = policy(false);
        let deadline = deadline_after(&retrying, 2 * NS_PER_MS);
        assert_eq!(deadline, 3_002 * NS_PER_MS);
        let (mut belief, started) = Belief::start(&retrying, "job", 7, deadline);
        assert_eq!(
            started,
            EventKind::BeliefStarted {
                scope: "job".into(),
                token: 7,
                local_deadline_mono_ms: 3_002.0
            }
        );
        assert!(belief.watched, "a retrying client stops at its deadline");
        // A renewal moves the deadline on, never back.
        belief.renewed(5_000 * NS_PER_MS);
        belief.renewed(4_000 * NS_PER_MS);
        assert_eq!(belief.deadline_mono_ns, 5_000 * NS_PER_MS);
        assert!(!belief.too_late(4_999 * NS_PER_MS));
        assert!(belief.too_late(5_000 * NS_PER_MS));
        let ended = belief.end(BeliefEnd::DeadlinePassed, 5_000 * NS_PER_MS);
        assert!(matches!(
            ended,
            Some(EventKind::BeliefEnded { why: BeliefEnd::DeadlinePassed, local_mono_ms, .. })
                if local_mono_ms == 5_000.0
        ));
        // The first reason stands; an ended belief is never too late again.
        assert_eq!(belief.end(BeliefEnd::Released, 6_000 * NS_PER_MS), None);
        assert_eq!(belief.ended, Some(BeliefEnd::DeadlinePassed));
        assert!(!belief.too_late(9_000 * NS_PER_MS));
    }

    #[test]
    fn a_failed_renewal_does_what_the_policy_says() {
        let (mut belief, _) = Belief::start(&policy(false), "job", 1, 10);
        let (events, keep) = belief.renew_failed(
            &policy(false),
            "timeout".into(),
            RenewFailureCause::Unanswered,
            5,
        );
        assert!(keep && events.len() == 1 && !belief.is_ended());
        let (events, keep) = belief.renew_failed(
            &policy(true),
            "refused".into(),
            RenewFailureCause::Refused,
            6,
        );
        assert!(!keep);
        assert!(matches!(&events[0], EventKind::RenewFailed { reason, .. } if reason == "refused"));
        assert!(matches!(
            &events[1],
            EventKind::BeliefEnded {
                why: BeliefEnd::RenewFailed,
                ..
            }
        ));
        assert!(belief.is_ended());
    }

    #[test]
    fn no_deadline_is_never_watched() {
        struct Forever;
        impl WorkerPolicy for Forever {
            fn name(&self) -> String {
                "forever".into()
            }
            fn renew_every_ms(&self) -> u64 {
                1
            }
            fn local_deadline_ms(&self) -> Option<u64> {
                None
            }
            fn ends_at_deadline(&self) -> bool {
                true
            }
            fn before_work(&self, _: &LeaseState) -> crate::policy::Gate {
                crate::policy::Gate::Go
            }
            fn before_write(&self, _: &LeaseState) -> crate::policy::Gate {
                crate::policy::Gate::Go
            }
            fn on_renew_failure(&self, _: RenewFailureCause) -> RenewFailure {
                RenewFailure::StopRenewing
            }
        }
        let deadline = deadline_after(&Forever, 5);
        assert_eq!(deadline, u64::MAX);
        let (mut belief, _) = Belief::start(&Forever, "job", 1, deadline);
        assert!(!belief.watched && !belief.too_late(u64::MAX - 1));
        let (events, keep) =
            belief.renew_failed(&Forever, "x".into(), RenewFailureCause::Refused, 5);
        assert!(!keep && events.len() == 1 && !belief.is_ended());
    }
}
