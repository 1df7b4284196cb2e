//! One case per metric (or per small family of counters).

use fencesim_model::history::{EventKind, PauseKind};

use super::{h, metrics};
use crate::Metrics;

#[test]
fn empty_history_has_default_metrics() {
    assert_eq!(metrics(h()), Metrics::default());
}

#[test]
fn grants_renewals_and_takeovers() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(1)
            .renew("job", "w0", 1)
            .at(2)
            .renew("job", "w0", 1)
            .at(3)
            .renew_failed("w0", "job", 1)
            .at(4)
            .release("job", "w0", 1)
            .at(5)
            .grant("job", "w0", 2) // same holder again: not a takeover
            .at(6)
            .expire("job", "w0", 2)
            .at(7)
            .grant("job", "w1", 3) // takeover
            .at(8)
            .grant("other", "w0", 1), // first grant on a scope: not a takeover
    );
    assert_eq!((m.acquisitions, m.tokens_allocated), (4, 4));
    assert_eq!((m.renewals, m.renewal_failures), (2, 1));
    assert_eq!(m.takeovers, 1);
}

#[test]
fn false_and_paused_expiries() {
    let m = metrics(
        h().at(0)
            .grant("a", "w0", 1)
            .at(0)
            .grant("b", "w1", 1)
            .at(0)
            .grant("c", "w2", 1)
            .at(1)
            .pause("w0")
            .at(1)
            .crash("w1")
            .at(5)
            .expire("a", "w0", 1) // paused: false, paused
            .at(5)
            .expire("b", "w1", 1) // dead: a true expiry
            .at(5)
            .expire("c", "w2", 1) // slow: false
            .at(6)
            .resume("w0")
            .at(6)
            .restart("w1")
            .at(7)
            .grant("b", "w1", 2)
            .at(9)
            .expire("b", "w1", 2), // restarted and alive again: false
    );
    assert_eq!(m.expiries, 4);
    assert_eq!(m.false_expiries, 3);
    assert_eq!(m.paused_expiries, 1);
}

#[test]
fn write_counters() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(1)
            .sent("w0", 1, "job", 1)
            .at(1)
            .sent("w0", 2, "job", 1)
            .at(1)
            .sent("w0", 3, "job", 1)
            .at(2)
            .present(1, "job", "w0", 1)
            .at(2)
            .accept(1, "job", "w0", 1)
            .at(3)
            .present(2, "job", "w0", 1)
            .at(3)
            .reject(2, "job", "w0", 1, 1)
            .at(4)
            .abandon("w0", 3, "job", 1)
            .at(5)
            .side_effect("w0", 1, "job", 1),
    );
    assert_eq!(
        (
            m.writes_sent,
            m.writes_presented,
            m.accepted_writes,
            m.stale_write_rejections
        ),
        (3, 2, 1, 1)
    );
    assert_eq!((m.writes_abandoned, m.side_effects), (1, 1));
    assert_eq!(
        (
            m.stale_presented,
            m.superseded_side_effects,
            m.accepts_in_fence_window
        ),
        (0, 0, 0)
    );
}

#[test]
fn superseded_side_effects_and_stale_presentations() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(1)
            .side_effect("w0", 1, "job", 1) // current
            .at(2)
            .present(1, "job", "w0", 1) // current
            .at(3)
            .expire("job", "w0", 1)
            .at(4)
            .side_effect("w0", 2, "job", 1) // expired, not yet superseded
            .at(5)
            .grant("job", "w1", 2)
            .at(6)
            .side_effect("w0", 3, "job", 1) // superseded
            .at(6)
            .present(2, "job", "w0", 1) // superseded
            .at(7)
            .side_effect("w1", 4, "job", 2) // current
            .at(8)
            .side_effect("w9", 5, "job", 9), // never granted: not an epoch at all
    );
    assert_eq!(m.side_effects, 5);
    assert_eq!(m.superseded_side_effects, 1);
    assert_eq!((m.writes_presented, m.stale_presented), (2, 1));
}

#[test]
fn accepts_in_fence_window_count_only_accepts_before_the_fence() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(1)
            .expire("job", "w0", 1)
            .at(2)
            .grant("job", "w1", 2)
            .at(3)
            .accept(1, "job", "w0", 1) // in the window
            .at(4)
            .fence("job", "w1", 2)
            .at(5)
            .accept(2, "job", "w0", 1) // after the fence (I4, but not in the window)
            .at(6)
            .expire("job", "w1", 2)
            .at(7)
            .grant("job", "w0", 3)
            .at(8)
            .accept(3, "job", "w1", 2), // superseded, token 3 never fenced
    );
    assert_eq!(m.accepted_writes, 3);
    assert_eq!(m.accepts_in_fence_window, 1);
}

#[test]
fn fence_window_is_grant_to_the_holders_first_accepted_fence() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(3)
            .fence_rejected("job", "w0", 1)
            .at(4)
            .fence("job", "w9", 1) // someone else's fence does not count
            .at(5)
            .fence("job", "w0", 1) // 5 ms
            .at(6)
            .fence("job", "w0", 1) // a retry: not another window
            .at(10)
            .expire("job", "w0", 1)
            .at(11)
            .grant("job", "w1", 2) // never fenced: no entry
            .at(20)
            .expire("job", "w1", 2)
            .at(21)
            .grant("job", "w0", 3)
            .at(23)
            .fence("job", "w0", 3), // 2 ms
    );
    assert_eq!(m.fence_window_ms, [5.0, 2.0]);
}

#[test]
fn takeover_latency_after_a_holder_crashes() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .grant("other", "w1", 1)
            .believe("w1", "other", 1)
            .at(10)
            .crash("w0") // held job
            .at(12)
            .crash("w2") // held nothing
            .at(20)
            .renew("job", "w0", 1)
            .at(30)
            .expire("job", "w0", 1)
            .at(35)
            .restart("w0")
            .at(36)
            .grant("job", "w0", 2) // the restarted holder: a new incarnation holds it
            .believe("w0", "job", 2)
            .at(40)
            .crash("w0") // held job again
            .at(50)
            .expire("job", "w0", 2)
            .at(60)
            .grant("job", "w1", 3)
            .believe("w1", "job", 3)
            .at(70)
            .crash("w1") // held other and job: nobody holds either again
            .at(75)
            .expire("other", "w1", 1)
            .at(80)
            .grant("other", "w2", 2), // granted, but w2 never believes it
    );
    // w0's crash at 10 → its own new incarnation at 36; at 40 → w1 at 60.
    assert_eq!(m.takeover_latency_ms, [26.0, 20.0]);
    // The scope's next grant after the crash went to another holder: at 40 (w1) and at 70
    // (`other` to w2); at 10 the next grant was w0's own.
    assert_eq!(m.takeovers_after_crash, 2);
    assert!(m.recovery_after_crash_ms.is_empty(), "nobody wrote");
}

/// In a GC + crash profile at TTL 15 s the old metric reported 134.8 s for a lease
/// whose restarted owner resumed it 9.5 s after the crash (the service handed its old lease
/// back: `Renewed`, not `Granted`); another holder got it 135 s later for an unrelated reason.
#[test]
fn restarted_owner_resumes_before_another_holder() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(1_000)
            .accept(1, "job", "w0", 1)
            .at(10_000)
            .crash("w0")
            .at(19_000)
            .restart("w0")
            .at(19_500)
            .renew("job", "w0", 1) // an acquire by the current holder
            .believe("w0", "job", 1)
            .at(19_600)
            .accept(2, "job", "w0", 1)
            .at(30_000)
            .release("job", "w0", 1)
            .disbelieve("w0", "job", 1)
            .at(145_000)
            .grant("job", "w1", 2)
            .believe("w1", "job", 2)
            .at(145_100)
            .accept(3, "job", "w1", 2),
    );
    assert_eq!(m.takeover_latency_ms, [9_500.0]);
    assert_eq!(m.recovery_after_crash_ms, [9_600.0]);
    assert_eq!(m.takeovers_after_crash, 1, "coverage keeps its old meaning");
}

#[test]
fn recovery_after_crash_waits_for_a_write_by_a_new_belief() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(5)
            .sent("w0", 1, "job", 1)
            .at(10)
            .crash("w0")
            .at(12)
            .accept(1, "job", "w0", 1) // in flight before the crash: not a recovery
            .at(30)
            .expire("job", "w0", 1)
            .at(40)
            .grant("job", "w1", 2)
            .believe("w1", "job", 2)
            .at(55)
            .accept(2, "job", "w1", 2),
    );
    assert_eq!(m.takeover_latency_ms, [30.0]);
    assert_eq!(m.recovery_after_crash_ms, [45.0]);
}

#[test]
fn recovery_after_a_stall_that_ends_in_takeover() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(100)
            .pause("w0") // short: resumes before anyone else is granted
            .at(200)
            .resume("w0")
            .at(1_000)
            .pause("w0") // long: ends in takeover
            .at(11_000)
            .expire("job", "w0", 1)
            .at(11_050)
            .grant("job", "w1", 2)
            .believe("w1", "job", 2)
            .at(11_200)
            .accept(1, "job", "w1", 2)
            .at(20_000)
            .resume("w0"),
    );
    assert_eq!(m.recovery_after_stall_ms, [10_200.0]);
    assert!(m.recovery_after_crash_ms.is_empty());
}

#[test]
fn stand_downs_count_live_holders_giving_up_a_lease_the_service_still_holds() {
    use fencesim_model::history::BeliefEnd;
    let m = metrics(
        h().at(0)
            .grant("a", "w0", 1)
            .believe("w0", "a", 1)
            .grant("b", "w1", 1)
            .believe("w1", "b", 1)
            .grant("c", "w2", 1)
            .believe("w2", "c", 1)
            .at(5)
            .crash("coordinator") // a lease-service outage
            .at(10)
            .stand_down("w0", "a", 1, BeliefEnd::RenewFailed) // service still holds it
            .at(15)
            .restart("coordinator")
            .at(20)
            .expire("b", "w1", 1)
            .at(21)
            .stand_down("w1", "b", 1, BeliefEnd::DeadlinePassed) // already expired
            .at(30)
            .stand_down("w2", "c", 1, BeliefEnd::Released), // a normal end
    );
    assert_eq!(m.stand_downs, 1);
    assert_eq!(m.outage_stand_downs, 1);
}

#[test]
fn unavailability_is_the_share_of_time_no_running_holder_works() {
    let m = metrics(
        h().at(0)
            .run_started(1_000)
            .grant("job", "w0", 1)
            .at(10)
            .believe("w0", "job", 1) // served from 10
            .at(50)
            .pause("w0") // not served 50..70
            .at(70)
            .resume("w0")
            .at(100)
            .run_ended(),
    );
    assert!(
        (m.unavailability - 0.3).abs() < 1e-9,
        "{}",
        m.unavailability
    );
    assert_eq!(m.run_ms, 100.0);
}

#[test]
fn renewal_load_counts_requests_that_reached_the_service() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(1_000)
            .renew("job", "w0", 1)
            .at(2_000)
            .renew("job", "w0", 1)
            .at(2_500)
            // A renewal the service refused reached it too; a refused acquire (no token) is
            // not a renewal.
            .push(
                "coordinator",
                EventKind::Refused {
                    scope: "job".into(),
                    holder: "w1".into(),
                    token: Some(7),
                    reason: "held by w0 with token 1".into(),
                },
            )
            .push(
                "coordinator",
                EventKind::Refused {
                    scope: "job".into(),
                    holder: "w1".into(),
                    token: None,
                    reason: "held by w0 with token 1".into(),
                },
            )
            .at(3_000)
            .expire("job", "w0", 1)
            .at(4_000)
            .run_ended(),
    );
    assert_eq!(m.renew_requests, 3);
    assert_eq!(m.lease_held_ms, 3_000.0);
}

#[test]
fn lease_ages_use_the_end_of_the_run_for_open_leases() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .at(10)
            .expire("job", "w0", 1) // 10
            .at(10)
            .grant("job", "w1", 2)
            .at(40)
            .release("job", "w1", 2) // 30
            .at(50)
            .grant("job", "w0", 3)
            .at(55)
            .drop_lease("job", "w0", 3) // 5
            .at(60)
            .grant("other", "w2", 1)
            .at(100)
            .run_ended(), // 40, still open
    );
    assert_eq!(m.lease_age_ms_max, 40.0);
    assert_eq!(m.lease_age_ms_mean, (10.0 + 30.0 + 5.0 + 40.0) / 4.0);

    let no_run_end = metrics(h().at(5).grant("job", "w0", 1).at(8).renew("job", "w0", 1));
    assert_eq!(
        (no_run_end.lease_age_ms_max, no_run_end.lease_age_ms_mean),
        (3.0, 3.0)
    );
}

#[test]
fn overlapping_beliefs_and_their_duration() {
    let m = metrics(
        h().at(0)
            .believe("w0", "job", 1)
            .at(5)
            .believe("w0", "job", 2) // the same worker: not an overlap
            .at(10)
            .believe("w1", "job", 3) // overlap 1 begins
            .at(12)
            .believe("w2", "job", 4) // overlap 2
            .at(15)
            .disbelieve("w0", "job", 1) // an old token: w0 still believes 2
            .at(20)
            .disbelieve("w0", "job", 2)
            .at(25)
            .crash("w1") // w2 alone: the overlap ends (15 ms)
            .at(30)
            .believe("w0", "other", 1) // another scope: no overlap
            .at(40)
            .believe("w1", "other", 2) // overlap 3 begins
            .at(50)
            .run_ended(), // still open: 10 ms
    );
    assert_eq!(m.overlapping_beliefs, 3);
    assert_eq!(m.overlapping_belief_ms, 25.0);
}

#[test]
fn metrics_round_trip_through_json() {
    let m = metrics(h().at(0).grant("job", "w0", 1).at(3).fence("job", "w0", 1));
    let back: Metrics = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
}

/// A restarted process that did not get its old lease back is not the lease's holder: the
/// expiry of the dead incarnation's lease is not false, even though the node runs again. One
/// that believes its token again after the restart is the holder. (Each case alone, so a
/// judgement swapped between them cannot balance out.)
#[test]
fn an_expiry_after_the_holder_restarted_without_its_lease_is_not_false() {
    let without = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(10)
            .crash("w0")
            .at(20)
            .restart("w0") // a new incarnation, without the lease
            .at(30)
            .expire("job", "w0", 1), // not false: its holder died
    );
    assert_eq!(without.expiries, 1);
    assert_eq!(without.false_expiries, 0);
    let with = metrics(
        h().at(40)
            .grant("job", "w1", 2)
            .believe("w1", "job", 2)
            .at(50)
            .crash("w1")
            .at(55)
            .restart("w1")
            .believe("w1", "job", 2) // resumed its own record (client-go's name identity)
            .at(60)
            .pause("w1")
            .at(70)
            .expire("job", "w1", 2), // false: the resumed holder is alive, only paused
    );
    assert_eq!(with.expiries, 1);
    assert_eq!(with.false_expiries, 1);
    assert_eq!(with.paused_expiries, 1);
}

#[test]
fn faults_begun_counts_each_kind_by_the_event_that_shows_it_began() {
    let paused = |kind| EventKind::Paused {
        kind,
        planned_ms: 10.0,
    };
    let mut history = h().at(0);
    for node in ["worker-0", "worker-1", "worker-2", "worker-2"] {
        let message = "boom".into();
        history = history.push(node, EventKind::Panicked { message });
    }
    let m = metrics(
        history
            .push("worker-0", paused(PauseKind::Gc))
            .push("worker-1", paused(PauseKind::VmSuspend))
            .push("worker-1", paused(PauseKind::VmSuspend))
            .push(
                "worker-0",
                EventKind::ClockStepped {
                    delta_ms: -5.0,
                    wall_ms: 0.0,
                    mono_ms: 0.0,
                },
            )
            .partition(&["worker-0"], &[], false)
            .hold("worker-1", "storage")
            .hold("worker-0", "storage")
            .crash("coordinator")
            .crash("storage")
            .crash("storage")
            .crash("worker-0")
            .crash("worker-1")
            .crash("worker-2")
            .at(1)
            .run_ended(),
    );
    let begun = &m.faults_begun;
    // Distinct counts per kind, so a kind read from another's counter is seen.
    let expected = [
        ("gc-pause", 1),
        ("vm-suspend", 2),
        ("clock-step", 1),
        ("partition", 1),
        ("holder-link-cut", 1),
        ("hold-release", 2),
        ("coordinator-restart", 1),
        ("storage-restart", 2),
        ("worker-crash", 3),
        ("panic", 4),
    ];
    for (kind, count) in expected {
        assert_eq!(begun.get(kind), Some(count), "{kind}");
    }
    assert_eq!(begun.get("isolate"), None, "an unknown kind has no count");
}

/// Each event availability reads, each changing who serves a scope: a crash, a belief that
/// ends (only the one held), a pause and its resume, a grant that supersedes the believer's
/// token; a second scope nobody serves counts against the total.
#[test]
fn unavailability_follows_every_event_that_changes_who_serves() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .grant("other", "w3", 1)
            .believe("w0", "job", 1) // served 0..10
            .at(10)
            .crash("w0")
            .at(15)
            .grant("job", "w1", 2)
            .believe("w1", "job", 2) // served 15..25
            .at(20)
            .disbelieve("w1", "job", 9) // not the belief w1 holds: still served
            .at(25)
            .pause("w1")
            .at(30)
            .resume("w1") // served 30..32
            .at(32)
            .grant("job", "w2", 3) // w1's token is no longer the newest
            .at(36)
            .believe("w2", "job", 3) // served 36..38
            .at(38)
            .disbelieve("w2", "job", 3)
            .at(40)
            .run_ended(),
    );
    // 24 ms served of 2 scopes × 40 ms.
    assert!(
        (m.unavailability - 0.7).abs() < 1e-9,
        "unavailability {}",
        m.unavailability
    );
    // A history that ends at time 0 has no time to be unavailable in.
    assert_eq!(metrics(h().at(0).grant("job", "w0", 1)).unavailability, 0.0);
}

/// After a crash: the latency to the next belief on the holder's scope, and the recovery to
/// the first write by a worker that began believing in that scope after the crash (not by
/// one that believed before it, nor by a believer in another scope).
#[test]
fn recovery_after_a_crash_counts_only_new_believers_of_the_scope() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .grant("other", "w9", 1) // open at the crash, but not w0's
            .believe("w0", "job", 1)
            .at(9)
            .believe("w3", "job", 1) // a belief from before the crash
            .at(10)
            .crash("w0")
            .at(12)
            .grant("job", "w1", 2)
            .at(13)
            .believe("w2", "other", 5)
            .at(14)
            .believe("w1", "job", 2)
            .at(15)
            .accept_on(1, "job", "job", "w2", 1) // w2 believes in another scope
            .at(16)
            .accept_on(2, "job", "job", "w3", 1) // w3 believed before the crash
            .at(17)
            .accept_on(3, "job", "job", "w1", 2)
            .at(20)
            .run_ended(),
    );
    assert_eq!(m.takeover_latency_ms, [4.0]);
    assert_eq!(m.recovery_after_crash_ms, [7.0]);
}

/// After a pause during which another worker was granted the paused holder's scope: the
/// recovery to that scope's first write by another worker. The grant just before the resume
/// counts; a takeover of a scope the paused worker did not hold does not.
#[test]
fn recovery_after_a_stall_counts_the_takeovers_of_the_paused_holders_scopes() {
    let m = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .grant("other", "w9", 1)
            .believe("w0", "job", 1)
            .at(10)
            .pause("w0")
            .at(11)
            .grant("other", "w8", 2)
            .at(12)
            .grant("job", "w1", 2)
            .at(13)
            .resume("w0")
            .at(14)
            .believe("w1", "job", 2)
            .believe("w8", "other", 2)
            .at(15)
            .accept_on(1, "job", "job", "w1", 2)
            .at(16)
            .accept_on(2, "other", "other", "w8", 2)
            .at(20)
            .run_ended(),
    );
    assert_eq!(m.recovery_after_stall_ms, [5.0]);
}

/// A stall lasts from the holder's pause to its own resume (or crash): another node's crash
/// or resume in between does not end it, and a grant right after the holder's resume is no
/// takeover during the stall.
#[test]
fn a_stall_ends_at_the_holders_own_resume_or_crash() {
    let others_meanwhile = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(10)
            .pause("w0")
            .at(11)
            .crash("w2")
            .at(12)
            .pause("w3")
            .resume("w3")
            .at(20)
            .expire("job", "w0", 1)
            .grant("job", "w1", 2)
            .believe("w1", "job", 2)
            .at(25)
            .accept(1, "job", "w1", 2)
            .at(30)
            .resume("w0"),
    );
    assert_eq!(others_meanwhile.recovery_after_stall_ms, [15.0]);
    let granted_after_resume = metrics(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(10)
            .pause("w0")
            .at(20)
            .expire("job", "w0", 1)
            .resume("w0")
            .grant("job", "w1", 2)
            .believe("w1", "job", 2)
            .at(25)
            .accept(1, "job", "w1", 2),
    );
    assert!(granted_after_resume.recovery_after_stall_ms.is_empty());
}
