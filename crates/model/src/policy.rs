//! A worker's lease policy, as a plug-in: when it renews, how long it believes a grant or a
//! renewal, whether a timer ends its belief at that local deadline, what it checks before the
//! work and before the write, and what a failed renewal does. [`WorkerPolicy`] is the trait;
//! [`SpecPolicy`] is the built-in one that scenario files configure (`[workers]`), implemented
//! through the same trait.
//!
//! Every decision is pure: the worker passes in its own clock readings ([`LeaseState`]) and
//! carries out the answer, recording it in the history like the built-in policy's.
//!
//! ```
//! use fencesim_model::policy::{Gate, LeaseState, RenewFailure, RenewFailureCause, WorkerPolicy};
//!
//! /// "Keep writing until told otherwise": no local deadline, only a refusal stops it.
//! struct Naive;
//!
//! impl WorkerPolicy for Naive {
//!     fn name(&self) -> String { "naive".into() }
//!     fn renew_every_ms(&self) -> u64 { 1_000 }
//!     fn local_deadline_ms(&self) -> Option<u64> { None }
//!     fn ends_at_deadline(&self) -> bool { false }
//!     fn before_work(&self, _: &LeaseState) -> Gate { Gate::Go }
//!     fn before_write(&self, _: &LeaseState) -> Gate { Gate::Go }
//!     fn on_renew_failure(&self, cause: RenewFailureCause) -> RenewFailure {
//!         match cause {
//!             RenewFailureCause::Refused => RenewFailure::StopBelieving,
//!             RenewFailureCause::Unanswered => RenewFailure::KeepRenewing,
//!         }
//!     }
//! }
//!
//! let state = LeaseState { now_mono_ns: 50_000_000_000, deadline_mono_ns: u64::MAX };
//! assert_eq!(Naive.before_write(&state), Gate::Go);
//! ```

use crate::history::BeliefEnd;

/// A worker's own view of one lease when it asks its policy: readings of its own monotonic
/// clock, never true time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseState {
    /// The worker's monotonic clock now (ns).
    pub now_mono_ns: u64,
    /// Its local deadline (ns on the same clock): the grant's or last successful renewal's
    /// base plus [`WorkerPolicy::local_deadline_ms`]; `u64::MAX` without a deadline.
    pub deadline_mono_ns: u64,
}

impl LeaseState {
    /// Whether the local deadline has passed.
    pub fn deadline_passed(&self) -> bool {
        self.now_mono_ns >= self.deadline_mono_ns
    }
}

/// What to do at a gate (before the work, before the write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Go ahead.
    Go,
    /// Stop believing the lease; the history records `belief-ended` with this reason.
    Stop(BeliefEnd),
    /// Ask the lease service whether the lease is still held under this token; stop with
    /// `check-failed` if not (check-lease-before-write).
    AskLease,
}

/// Why a renewal failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenewFailureCause {
    /// The service answered and refused it (the lease expired, or another holds it).
    Refused,
    /// No answer in time: the service down or slow, or the link to it cut.
    Unanswered,
}

/// What a failed renewal (refused, or no answer in time) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenewFailure {
    /// Keep believing and keep renewing (retry at the next interval).
    KeepRenewing,
    /// Keep believing until something else ends it, but renew no more.
    StopRenewing,
    /// Stop believing now (`belief-ended` with `renew-failed`) and renew no more.
    StopBelieving,
}

/// A worker's lease policy. Implementations must be deterministic (no `std::time`, no
/// unseeded randomness): the worker calls them in simulated time.
pub trait WorkerPolicy: Send + Sync {
    /// The policy's name, for messages.
    fn name(&self) -> String;
    /// Time between renewals, by the worker's own clock (ms).
    fn renew_every_ms(&self) -> u64;
    /// How long a grant or a successful renewal is believed, by the worker's own clock, from
    /// the request (or the reply, per `workers.deadline_from`); `None`: no local deadline.
    fn local_deadline_ms(&self) -> Option<u64>;
    /// Whether a timer ends the belief the moment the local deadline passes (and a renewal
    /// answered after it changes nothing).
    fn ends_at_deadline(&self) -> bool;
    /// Before each unit of work (and before each try to fence).
    fn before_work(&self, state: &LeaseState) -> Gate;
    /// After the work, right before the write is sent.
    fn before_write(&self, state: &LeaseState) -> Gate;
    /// A renewal failed, for `cause`.
    fn on_renew_failure(&self, cause: RenewFailureCause) -> RenewFailure;
}

/// The built-in policy, configured by the scenario's `[workers]` fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecPolicy {
    /// `workers.renew_every_ms`.
    pub renew_every_ms: u64,
    /// `workers.renew_deadline_ms`.
    pub renew_deadline_ms: u64,
    /// `workers.stop_on_renew_failure`: the first failed renewal ends the belief. Without it
    /// the worker keeps retrying (after a timeout) until its local deadline, which a timer
    /// enforces.
    pub stop_on_renew_failure: bool,
    /// `workers.recheck_deadline_before_write`.
    pub recheck_deadline_before_write: bool,
    /// `workers.check_lease_before_write`.
    pub check_lease_before_write: bool,
}

impl WorkerPolicy for SpecPolicy {
    fn name(&self) -> String {
        "scenario [workers]".into()
    }

    fn renew_every_ms(&self) -> u64 {
        self.renew_every_ms
    }

    fn local_deadline_ms(&self) -> Option<u64> {
        Some(self.renew_deadline_ms)
    }

    fn ends_at_deadline(&self) -> bool {
        !self.stop_on_renew_failure
    }

    fn before_work(&self, state: &LeaseState) -> Gate {
        if state.deadline_passed() {
            Gate::Stop(BeliefEnd::DeadlinePassed)
        } else {
            Gate::Go
        }
    }

    fn before_write(&self, state: &LeaseState) -> Gate {
        if self.recheck_deadline_before_write && state.deadline_passed() {
            Gate::Stop(BeliefEnd::DeadlinePassed)
        } else if self.check_lease_before_write {
            Gate::AskLease
        } else {
            Gate::Go
        }
    }

    fn on_renew_failure(&self, cause: RenewFailureCause) -> RenewFailure {
        match cause {
            _ if self.stop_on_renew_failure => RenewFailure::StopBelieving,
            RenewFailureCause::Refused => RenewFailure::StopRenewing,
            RenewFailureCause::Unanswered => RenewFailure::KeepRenewing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> SpecPolicy {
        SpecPolicy {
            renew_every_ms: 3_000,
            renew_deadline_ms: 10_000,
            stop_on_renew_failure: false,
            recheck_deadline_before_write: false,
            check_lease_before_write: false,
        }
    }

    const LATE: LeaseState = LeaseState {
        now_mono_ns: 11,
        deadline_mono_ns: 10,
    };
    const EARLY: LeaseState = LeaseState {
        now_mono_ns: 9,
        deadline_mono_ns: 10,
    };

    #[test]
    fn the_spec_policy_checks_the_deadline_before_work_only_unless_told() {
        let p = spec();
        assert_eq!(p.before_work(&LATE), Gate::Stop(BeliefEnd::DeadlinePassed));
        assert_eq!(p.before_work(&EARLY), Gate::Go);
        assert_eq!(p.before_write(&LATE), Gate::Go);
        let recheck = SpecPolicy {
            recheck_deadline_before_write: true,
            ..p
        };
        assert_eq!(
            recheck.before_write(&LATE),
            Gate::Stop(BeliefEnd::DeadlinePassed)
        );
        assert_eq!(recheck.before_write(&EARLY), Gate::Go);
        let ask = SpecPolicy {
            check_lease_before_write: true,
            ..p
        };
        assert_eq!(ask.before_write(&EARLY), Gate::AskLease);
    }

    #[test]
    fn the_spec_policy_on_renew_failure() {
        let p = spec();
        assert!(p.ends_at_deadline());
        assert_eq!(
            p.on_renew_failure(RenewFailureCause::Refused),
            RenewFailure::StopRenewing
        );
        assert_eq!(
            p.on_renew_failure(RenewFailureCause::Unanswered),
            RenewFailure::KeepRenewing
        );
        let stop = SpecPolicy {
            stop_on_renew_failure: true,
            ..p
        };
        assert!(!stop.ends_at_deadline());
        assert_eq!(
            stop.on_renew_failure(RenewFailureCause::Refused),
            RenewFailure::StopBelieving
        );
        assert_eq!(
            stop.on_renew_failure(RenewFailureCause::Unanswered),
            RenewFailure::StopBelieving
        );
    }
}
