//! `fence-on-acquire`: the new holder first raises the resource's epoch, then writes (HDFS QJM
//! `newEpoch`, BookKeeper fencing).

use fencesim_model::{
    fence::{ClientProtocol, CompareScope, Durability, Fence, Verdict, WriteRequest},
    lease::LeaseView,
    Token,
};
use fencesim_planted::{active, Mutant};

use crate::max_token::HighestTokens;

/// Holds an epoch per resource (or one for all). Raising the fence at grant time rejects the
/// old holder's writes from that moment on, instead of only after the new holder's first write
/// lands — the window left is between the grant and the fence reaching the store.
#[derive(Clone, Debug)]
pub struct FenceOnAcquire {
    epochs: HighestTokens,
}

impl FenceOnAcquire {
    /// Creates it.
    pub fn new(durability: Durability, compare: CompareScope) -> Self {
        FenceOnAcquire {
            epochs: HighestTokens::new(durability, compare),
        }
    }
}

impl Fence for FenceOnAcquire {
    fn name(&self) -> String {
        "fence-on-acquire".to_string()
    }

    fn protocol(&self) -> ClientProtocol {
        ClientProtocol::FenceThenWrite
    }

    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        self.epochs.admit(&request.resource, request.token, "epoch")
    }

    fn raise_fence(&mut self, resource: &str, token: Token) -> Verdict {
        match self.epochs.get(resource) {
            Some(epoch) if token < epoch => Verdict::Rejected {
                accepted: Some(epoch),
                reason: format!(
                    "fence token {token} < epoch {epoch}{}",
                    self.epochs.suffix()
                ),
            },
            previous if active(Mutant::FenceNotRaised) => {
                // The planted bug: the fence is acknowledged but the epoch is not raised.
                Verdict::Accepted { previous }
            }
            previous => {
                self.epochs.set(resource, token);
                Verdict::Accepted { previous }
            }
        }
    }

    fn restart(&mut self) {
        self.epochs.restart();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{
        check, write,
        Op::{Raise, Restart},
    };

    #[test]
    fn protocol_is_fence_then_write() {
        assert_eq!(
            FenceOnAcquire::new(Durability::Durable, CompareScope::PerResource).protocol(),
            ClientProtocol::FenceThenWrite
        );
    }

    #[test]
    fn old_holder_accepted_before_new_fence_rejected_after() {
        check(
            &mut FenceOnAcquire::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (Raise("job-1", 41), "accepted"),
                (write("job-1", 41), "accepted previous=41"),
                // Token 42 granted, its fence not yet at the store: the old holder still writes.
                (write("job-1", 41), "accepted previous=41"),
                (Raise("job-1", 42), "accepted previous=41"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: stale token 41 < epoch 42",
                ),
                (write("job-1", 42), "accepted previous=42"),
            ],
        );
    }

    #[test]
    fn stale_fence_rejected_equal_fence_accepted() {
        check(
            &mut FenceOnAcquire::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (Raise("job-1", 5), "accepted"),
                (
                    Raise("job-1", 4),
                    "rejected accepted=5: fence token 4 < epoch 5",
                ),
                (Raise("job-1", 5), "accepted previous=5"),
            ],
        );
    }

    #[test]
    fn write_without_fence_raises_epoch() {
        check(
            &mut FenceOnAcquire::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (write("job-1", 9), "accepted"),
                (
                    Raise("job-1", 8),
                    "rejected accepted=9: fence token 8 < epoch 9",
                ),
                (
                    write("job-1", 8),
                    "rejected accepted=9: stale token 8 < epoch 9",
                ),
            ],
        );
    }

    #[test]
    fn global_epoch_rejects_valid_fence_on_another_resource() {
        check(
            &mut FenceOnAcquire::new(Durability::Durable, CompareScope::Global),
            None,
            &[
                (Raise("job-A", 7), "accepted"),
                (
                    Raise("job-B", 3),
                    "rejected accepted=7: fence token 3 < epoch 7 (global)",
                ),
                (
                    write("job-B", 3),
                    "rejected accepted=7: stale token 3 < epoch 7 (global)",
                ),
            ],
        );
    }

    #[test]
    fn durable_restart_keeps_epoch() {
        check(
            &mut FenceOnAcquire::new(Durability::Durable, CompareScope::PerResource),
            None,
            &[
                (Raise("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: stale token 41 < epoch 42",
                ),
            ],
        );
    }

    #[test]
    fn volatile_restart_forgets_epoch_so_stale_is_accepted() {
        check(
            &mut FenceOnAcquire::new(Durability::Volatile, CompareScope::PerResource),
            None,
            &[
                (Raise("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (write("job-1", 41), "accepted"),
            ],
        );
    }
}
