//! The lease service's expiry by the coordinator's own clock: applied before every request
//! the coordinator answers, by its expiry timer, and before a store that lives with the lease
//! service (and checks its state) judges a write.

use fencesim_model::{history::EventKind, nodes::COORDINATOR};
use fencesim_planted::{active, Mutant};

use crate::{wait::lock, world::World};

/// Expires every lease due by the coordinator's clock, recording each expiry.
pub(crate) fn expire_due(world: &World) {
    let now = if active(Mutant::CoordinatorExpiryByWallClock) {
        // The planted bug: "now" from the wall clock (ms since the run's wall epoch), compared
        // with expiries computed on `mono`: a wall-clock step moves every expiry.
        let wall_ms = world.wall_ms(COORDINATOR) - fencesim_model::clock::WALL_EPOCH_MS;
        u64::try_from(wall_ms).unwrap_or(0) * fencesim_model::NS_PER_MS
    } else {
        world.mono_ns(COORDINATOR)
    };
    let expired = lock(&world.lease).expire_due(now);
    for lease in expired {
        world.record(
            COORDINATOR,
            EventKind::Expired {
                scope: lease.scope,
                holder: lease.holder,
                token: lease.token,
            },
        );
    }
}
