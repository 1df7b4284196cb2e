//! `same-store-txn`: the write is checked atomically against the lease state itself (an etcd
//! txn comparing the lock key's revision).

use fencesim_model::{
    fence::{Fence, Verdict, WriteRequest},
    lease::LeaseView,
};
use fencesim_planted::{active, Mutant};

/// Accepts a write iff its token is the current holder's token for its lease scope at the
/// instant of the write, which closes the superseded-accept window (I4) entirely.
#[derive(Clone, Debug, Default)]
pub struct SameStoreTxn;

impl SameStoreTxn {
    /// Creates it.
    pub fn new() -> Self {
        SameStoreTxn
    }
}

impl Fence for SameStoreTxn {
    fn name(&self) -> String {
        "same-store-txn".to_string()
    }

    fn checks_lease_state(&self) -> bool {
        true
    }

    fn write(&mut self, request: &WriteRequest, lease: Option<&dyn LeaseView>) -> Verdict {
        let lease = lease.unwrap_or_else(|| {
            panic!(
                "same-store-txn: write of op {} arrived without the lease state; the simulator \
                 must host this store next to the lease service (checks_lease_state() is true)",
                request.op
            )
        });
        let scope = if active(Mutant::SameStoreTxnComparesResource) {
            &request.resource
        } else {
            &request.lease_scope
        };
        match lease.holder_token(scope) {
            Some(holder) if holder == request.token => Verdict::Accepted {
                previous: Some(holder),
            },
            Some(holder) => Verdict::Rejected {
                accepted: Some(holder),
                reason: format!("lease on {scope} is held by token {holder}"),
            },
            None => Verdict::Rejected {
                accepted: None,
                reason: format!("no lease on {scope}"),
            },
        }
    }

    /// Drops nothing: this store keeps no state of its own. The compare reads the lease
    /// service's state, whose restart semantics belong to the lease service.
    fn restart(&mut self) {}
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};

    use super::*;
    use crate::check::{check, write, write_scoped, FakeLeases, Op::Restart};

    fn leases(entries: &[(&'static str, u64)]) -> FakeLeases {
        FakeLeases(entries.iter().copied().collect())
    }

    #[test]
    fn checks_lease_state() {
        assert!(SameStoreTxn::new().checks_lease_state());
    }

    #[test]
    fn holder_token_accepted_others_rejected() {
        let view = leases(&[("job-1", 42)]);
        check(
            &mut SameStoreTxn::new(),
            Some(&view),
            &[
                (write("job-1", 42), "accepted previous=42"),
                (write("job-1", 42), "accepted previous=42"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: lease on job-1 is held by token 42",
                ),
                // A token from the future (never issued) is not the holder's either.
                (
                    write("job-1", 43),
                    "rejected accepted=42: lease on job-1 is held by token 42",
                ),
                (write("job-2", 1), "rejected: no lease on job-2"),
            ],
        );
    }

    #[test]
    fn compares_the_lease_scope_not_the_resource() {
        let view = leases(&[("lock/job-1", 7)]);
        check(
            &mut SameStoreTxn::new(),
            Some(&view),
            &[
                (
                    write_scoped("out/job-1", "lock/job-1", 7),
                    "accepted previous=7",
                ),
                (
                    write_scoped("out/job-1", "lock/job-2", 7),
                    "rejected: no lease on lock/job-2",
                ),
            ],
        );
    }

    #[test]
    fn expired_lease_rejects_even_the_last_holder() {
        // A paused holder whose lease expired with no successor yet: still rejected, which is
        // what max-token cannot do.
        let view = leases(&[]);
        check(
            &mut SameStoreTxn::new(),
            Some(&view),
            &[(write("job-1", 42), "rejected: no lease on job-1")],
        );
    }

    #[test]
    fn restart_changes_nothing() {
        let view = leases(&[("job-1", 3)]);
        check(
            &mut SameStoreTxn::new(),
            Some(&view),
            &[
                (write("job-1", 3), "accepted previous=3"),
                (Restart, "restarted"),
                (write("job-1", 3), "accepted previous=3"),
            ],
        );
    }

    #[test]
    fn missing_lease_state_is_a_programming_error() {
        let request = WriteRequest {
            op: 9,
            resource: "job-1".into(),
            lease_scope: "job-1".into(),
            writer: "worker-0".into(),
            token: 1,
            payload: String::new(),
        };
        let mut fence = SameStoreTxn::new();
        let panic = catch_unwind(AssertUnwindSafe(|| fence.write(&request, None)))
            .expect_err("a write without lease state must panic");
        let message = panic
            .downcast_ref::<String>()
            .expect("formatted panic message");
        assert!(message.contains("without the lease state"), "{message}");
    }
}
