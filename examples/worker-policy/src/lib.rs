//! Two worker lease policies, plugged into fencesim through its `WorkerPolicy` trait.
//!
//! - [`ClientGoStyle`]: like client-go's leader election, the holder stops leading when it has
//!   not renewed within its *renew deadline* (shorter than the lease duration), by its own
//!   clock: a timer ends its belief at the deadline, and it checks the deadline before the
//!   work and again right before each write (so a GC pause during the work is caught).
//!   A renewal that times out is retried until the deadline; a refused one ends the belief.
//! - [`Naive`]: "keep writing until told otherwise": no local deadline at all; only a refused
//!   renewal (or a rejected write) stops it. A renewal that times out is simply retried.
//!
//! With a store that checks no token, safety rests on the policy alone.

use fencesim::{BeliefEnd, Gate, LeaseState, RenewFailure, RenewFailureCause, WorkerPolicy};

/// client-go-style: stop when not renewed within the renew deadline.
#[derive(Clone, Copy, Debug)]
pub struct ClientGoStyle {
    /// RetryPeriod: time between renewals (ms).
    pub retry_period_ms: u64,
    /// RenewDeadline: how long a grant or renewal is believed (ms), below the lease duration.
    pub renew_deadline_ms: u64,
}

impl WorkerPolicy for ClientGoStyle {
    fn name(&self) -> String {
        "client-go-style".into()
    }
    fn renew_every_ms(&self) -> u64 {
        self.retry_period_ms
    }
    fn local_deadline_ms(&self) -> Option<u64> {
        Some(self.renew_deadline_ms)
    }
    fn ends_at_deadline(&self) -> bool {
        true
    }
    fn before_work(&self, state: &LeaseState) -> Gate {
        if state.deadline_passed() {
            Gate::Stop(BeliefEnd::DeadlinePassed)
        } else {
            Gate::Go
        }
    }
    fn before_write(&self, state: &LeaseState) -> Gate {
        self.before_work(state)
    }
    fn on_renew_failure(&self, cause: RenewFailureCause) -> RenewFailure {
        match cause {
            RenewFailureCause::Refused => RenewFailure::StopBelieving,
            RenewFailureCause::Unanswered => RenewFailure::KeepRenewing,
        }
    }
}

/// Naive: keep writing until told otherwise.
#[derive(Clone, Copy, Debug)]
pub struct Naive {
    /// Time between renewals (ms).
    pub renew_every_ms: u64,
}

impl WorkerPolicy for Naive {
    fn name(&self) -> String {
        "naive".into()
    }
    fn renew_every_ms(&self) -> u64 {
        self.renew_every_ms
    }
    fn local_deadline_ms(&self) -> Option<u64> {
        None
    }
    fn ends_at_deadline(&self) -> bool {
        false
    }
    fn before_work(&self, _: &LeaseState) -> Gate {
        Gate::Go
    }
    fn before_write(&self, _: &LeaseState) -> Gate {
        Gate::Go
    }
    fn on_renew_failure(&self, cause: RenewFailureCause) -> RenewFailure {
        match cause {
            RenewFailureCause::Refused => RenewFailure::StopBelieving,
            RenewFailureCause::Unanswered => RenewFailure::KeepRenewing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_go_style_stops_at_its_deadline_and_naive_never_does() {
        let late = LeaseState {
            now_mono_ns: 7_000_000_000,
            deadline_mono_ns: 6_000_000_000,
        };
        let p = ClientGoStyle {
            retry_period_ms: 2_000,
            renew_deadline_ms: 6_000,
        };
        assert_eq!(p.before_write(&late), Gate::Stop(BeliefEnd::DeadlinePassed));
        assert_eq!(
            Naive {
                renew_every_ms: 2_000
            }
            .before_write(&late),
            Gate::Go
        );
        assert_eq!(
            p.on_renew_failure(RenewFailureCause::Unanswered),
            RenewFailure::KeepRenewing
        );
        assert_eq!(
            p.on_renew_failure(RenewFailureCause::Refused),
            RenewFailure::StopBelieving
        );
    }
}
