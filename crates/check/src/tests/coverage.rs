//! Every coverage condition tested both ways: hit by a history in which its event
//! happened, and not hit by the nearest history in which it did not. A miscounted condition
//! (counting an event that did not happen as the scenario's danger) would make a vacuous
//! scenario pass; the exhaustive `match` makes a new condition add its pair here.

use fencesim_model::{history::BeliefEnd, Coverage};

use super::{h, metrics, H};
use crate::coverage::hit;

/// `job` granted to w0 with token 1, expired, then granted to w1 with token 2: token 1's
/// epoch is superseded from here on.
fn superseded() -> H {
    h().at(0)
        .grant("job", "w0", 1)
        .at(10)
        .expire("job", "w0", 1)
        .at(11)
        .grant("job", "w1", 2)
}

/// (a history where the condition's event happened, the nearest one where it did not).
#[expect(
    clippy::too_many_lines,
    reason = "a table: one case per coverage condition"
)]
fn pair(condition: Coverage) -> (H, H) {
    match condition {
        Coverage::StaleWritePresented => (
            superseded().at(20).present(1, "job", "w0", 1),
            superseded().at(20).present(1, "job", "w1", 2),
        ),
        Coverage::StaleWriteRejected => (
            superseded().at(20).reject(1, "job", "w0", 1, 2),
            superseded().at(20).accept(1, "job", "w1", 2),
        ),
        Coverage::WriteAbandoned => (
            superseded().at(20).abandon("w0", 1, "job", 1),
            superseded().at(20).sent("w0", 1, "job", 1),
        ),
        Coverage::LeaseExpiredWhilePaused => (
            h().grant("job", "w0", 1)
                .at(5)
                .pause("w0")
                .at(10)
                .expire("job", "w0", 1),
            h().grant("job", "w0", 1)
                .at(5)
                .pause("w0")
                .at(6)
                .resume("w0")
                .at(10)
                .expire("job", "w0", 1),
        ),
        Coverage::FalseExpiry => (
            h().grant("job", "w0", 1).at(10).expire("job", "w0", 1),
            h().grant("job", "w0", 1)
                .at(5)
                .crash("w0")
                .at(10)
                .expire("job", "w0", 1),
        ),
        Coverage::Takeover => (
            superseded(),
            h().grant("job", "w0", 1)
                .at(10)
                .expire("job", "w0", 1)
                .at(11)
                .grant("job", "w0", 2),
        ),
        Coverage::TakeoverAfterCrash => (
            h().grant("job", "w0", 1)
                .at(5)
                .crash("w0")
                .at(10)
                .expire("job", "w0", 1)
                .at(11)
                .grant("job", "w1", 2),
            superseded(),
        ),
        Coverage::RenewalFailed => (
            h().grant("job", "w0", 1).at(5).renew_failed("w0", "job", 1),
            h().grant("job", "w0", 1).at(5).renew("job", "w0", 1),
        ),
        Coverage::SupersededSideEffect => (
            superseded().at(20).side_effect("w0", 1, "job", 1),
            superseded().at(20).side_effect("w1", 1, "job", 2),
        ),
        Coverage::SideEffect => (
            superseded().at(20).side_effect("w1", 1, "job", 2),
            superseded().at(20).sent("w1", 1, "job", 2),
        ),
        Coverage::OverlappingBeliefs => (
            h().believe("w0", "job", 1).at(5).believe("w1", "job", 2),
            h().believe("w0", "job", 1)
                .at(4)
                .stand_down("w0", "job", 1, BeliefEnd::Released)
                .at(5)
                .believe("w1", "job", 2),
        ),
        Coverage::FenceRaised => (
            h().grant("job", "w0", 1).at(5).fence("job", "w0", 1),
            h().grant("job", "w0", 1)
                .at(5)
                .fence_rejected("job", "w0", 1),
        ),
        Coverage::AcceptedInFenceWindow => (
            superseded()
                .at(20)
                .accept(1, "job", "w0", 1)
                .at(30)
                .fence("job", "w1", 2),
            superseded()
                .at(20)
                .fence("job", "w1", 2)
                .at(30)
                .accept(1, "job", "w0", 1),
        ),
        Coverage::CurrentWriteRejected => (
            h().grant("job", "w0", 1).at(5).reject(1, "job", "w0", 1, 7),
            superseded().at(20).reject(1, "job", "w0", 1, 2),
        ),
        // Renewals failing from inside a lease-service outage, the stand-down after it; and
        // the same stand-down with renewals that began failing before the outage.
        Coverage::OutageStandDown => (
            h().grant("job", "w0", 1)
                .at(10)
                .crash("coordinator")
                .at(12)
                .renew_failed("w0", "job", 1)
                .at(20)
                .restart("coordinator")
                .at(25)
                .stand_down("w0", "job", 1, BeliefEnd::DeadlinePassed),
            h().grant("job", "w0", 1)
                .at(5)
                .renew_failed("w0", "job", 1)
                .at(10)
                .crash("coordinator")
                .at(12)
                .renew_failed("w0", "job", 1)
                .at(20)
                .restart("coordinator")
                .at(25)
                .stand_down("w0", "job", 1, BeliefEnd::DeadlinePassed),
        ),
    }
}

#[test]
fn every_condition_is_hit_when_its_event_happened_and_only_then() {
    for condition in Coverage::ALL {
        let (happened, did_not) = pair(condition);
        assert!(
            hit(condition, &metrics(happened)),
            "{condition}: not hit although its event happened"
        );
        assert!(
            !hit(condition, &metrics(did_not)),
            "{condition}: hit although its event did not happen"
        );
    }
}

/// A store that checks liveness (`same-store-txn`, `sql-strict`) rightly refuses a write whose
/// lease the service had already ended, even before any newer grant on the scope: that is
/// not a false rejection. The same write while the lease is still held is one.
#[test]
fn a_rejection_after_the_lease_ended_is_not_a_false_rejection() {
    let held = h().grant("job", "w0", 1).at(5).reject(1, "job", "w0", 1, 7);
    assert!(hit(Coverage::CurrentWriteRejected, &metrics(held)));
    let ended: [H; 4] = [
        h().grant("job", "w0", 1).at(3).expire("job", "w0", 1),
        h().grant("job", "w0", 1).at(3).release("job", "w0", 1),
        h().grant("job", "w0", 1).at(3).drop_lease("job", "w0", 1),
        h().grant("job", "w0", 1)
            .at(3)
            .taken_over("job", "w0", 1, "w1"),
    ];
    for history in ended {
        let history = history.at(5).reject(1, "job", "w0", 1, 7);
        assert!(
            !hit(Coverage::CurrentWriteRejected, &metrics(history)),
            "a rejection after the lease ended counted as false"
        );
    }
    // Re-granted to the same holder with the same token (a retry after a drop) is held again.
    let regranted = h()
        .grant("job", "w0", 1)
        .at(3)
        .drop_lease("job", "w0", 1)
        .at(4)
        .grant("job", "w0", 1)
        .at(5)
        .reject(1, "job", "w0", 1, 7);
    assert!(hit(Coverage::CurrentWriteRejected, &metrics(regranted)));
}
