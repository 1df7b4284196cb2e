//! Outages (`crate::outage`) and what they cause, on hand-written histories: each cause of an
//! outage found both ways, and each consequence classified both ways.

use fencesim_model::history::BeliefEnd;

use super::{h, metrics, H};
use crate::outage::{outages, Outage, OutageCause};

const C: &str = "coordinator";

fn found(history: H) -> Vec<(String, u64, u64, OutageCause)> {
    outages(&history.build())
        .into_iter()
        .map(
            |Outage {
                 worker,
                 start_ms,
                 end_ms,
                 cause,
             }| { (worker, start_ms as u64, end_ms as u64, cause) },
        )
        .collect()
}

fn o(worker: &str, start: u64, end: u64, cause: OutageCause) -> (String, u64, u64, OutageCause) {
    (worker.to_string(), start, end, cause)
}

/// w0 holds `job` (token 1), w1 is another worker.
fn base() -> H {
    h().grant("job", "w0", 1)
        .believe("w0", "job", 1)
        .at(1)
        .sent("w1", 9, "other", 1)
}

#[test]
fn the_service_down_or_stopped_is_an_outage_of_every_worker() {
    let down = found(base().at(10).crash(C).at(20).restart(C).at(30).run_ended());
    assert_eq!(
        down,
        vec![
            o("w0", 10, 20, OutageCause::ServiceDown),
            o("w1", 10, 20, OutageCause::ServiceDown)
        ]
    );
    let paused = found(base().at(10).pause(C).at(15).resume(C));
    assert_eq!(paused.len(), 2);
    assert_eq!(paused[0], o("w0", 10, 15, OutageCause::ServiceDown));
    // The storage down, or a worker's own crash or pause, is no outage.
    let not = found(
        base()
            .at(10)
            .crash("storage")
            .at(20)
            .restart("storage")
            .at(30)
            .crash("w0")
            .at(40)
            .pause("w1"),
    );
    assert_eq!(not, vec![]);
}

/// Only the coordinator's own restart or resume ends a service outage: a worker that crashes
/// and restarts, or pauses and resumes, meanwhile does not end it, and the coordinator's resume
/// ends it even when the run goes on.
#[test]
fn only_the_coordinators_restart_or_resume_ends_a_service_outage() {
    let down = found(
        base()
            .at(10)
            .crash(C)
            .at(12)
            .crash("w1")
            .at(15)
            .restart("w1")
            .at(20)
            .restart(C)
            .at(30)
            .run_ended(),
    );
    assert_eq!(
        down,
        vec![
            o("w0", 10, 20, OutageCause::ServiceDown),
            o("w1", 10, 20, OutageCause::ServiceDown)
        ]
    );
    let stopped = found(
        base()
            .at(10)
            .pause(C)
            .at(12)
            .pause("w1")
            .at(15)
            .resume("w1")
            .at(20)
            .resume(C)
            .at(30)
            .run_ended(),
    );
    assert_eq!(
        stopped,
        vec![
            o("w0", 10, 20, OutageCause::ServiceDown),
            o("w1", 10, 20, OutageCause::ServiceDown)
        ]
    );
}

#[test]
fn a_link_cut_between_a_worker_and_the_coordinator_is_an_outage_of_that_worker() {
    let two_way = found(base().at(10).partition(&["w0"], &[C], false).at(70).heal(
        &["w0"],
        &[C],
        false,
    ));
    assert_eq!(two_way, vec![o("w0", 10, 70, OutageCause::LinkCut)]);
    // Isolated from everyone (peers = []), and one-way in either direction.
    let everyone = found(base().at(10).partition(&["w1"], &[], true).at(20).heal(
        &["w1"],
        &[],
        true,
    ));
    assert_eq!(everyone, vec![o("w1", 10, 20, OutageCause::LinkCut)]);
    let inbound = found(base().at(10).partition(&[C], &["w0"], true).at(20).heal(
        &[C],
        &["w0"],
        true,
    ));
    assert_eq!(inbound, vec![o("w0", 10, 20, OutageCause::LinkCut)]);
    // The coordinator isolated: every worker is cut off (the service is up: a link cut).
    let isolated = found(
        base()
            .at(10)
            .partition(&[C], &[], false)
            .at(20)
            .heal(&[C], &[], false),
    );
    assert_eq!(isolated.len(), 2);
    // A hold either way; an open cut ends with the run.
    let held = found(
        base()
            .at(10)
            .hold(C, "w1")
            .at(12)
            .release_hold(C, "w1")
            .at(14)
            .hold("w0", C)
            .at(50)
            .run_ended(),
    );
    assert_eq!(
        held,
        vec![
            o("w1", 10, 12, OutageCause::LinkCut),
            o("w0", 14, 50, OutageCause::LinkCut)
        ]
    );
    // Cuts that leave the worker's link to the coordinator alone are not outages.
    let not = found(
        base()
            .at(10)
            .partition(&["w0"], &["storage"], false)
            .partition(&["storage"], &[], false)
            .partition(&["w0", C], &["w1", "storage"], false)
            .hold("w0", "storage")
            .at(20)
            .heal(&["w0"], &["storage"], false),
    );
    // Only the partition that splits {w0, coordinator} from {w1, storage} cuts anyone off
    // (w1); the open ones end with the history.
    assert_eq!(not, vec![o("w1", 10, 20, OutageCause::LinkCut)]);
}

/// A step of a hand-written history.
type Step = fn(H) -> H;

/// An outage of w0 from 10 to 20 (`begin`, `end`); w0's renewals fail from `first_failure`
/// on, and it stands down at 35 with its lease still held by the service.
fn stand_down_after(begin: Step, end: Step, first_failure: u64) -> H {
    let mut history = begin(base().at(10));
    if first_failure < 20 {
        history = history.at(first_failure).renew_failed("w0", "job", 1);
    }
    history = end(history.at(20));
    if first_failure >= 20 {
        history = history.at(first_failure).renew_failed("w0", "job", 1);
    }
    history
        .at(35)
        .stand_down("w0", "job", 1, BeliefEnd::DeadlinePassed)
}

#[test]
fn a_stand_down_is_outage_caused_when_its_failing_run_began_inside_an_outage() {
    let forms: [(Step, Step, &str); 2] = [
        (|h| h.crash(C), |h| h.restart(C), "service down"),
        (
            |h| h.partition(&["w0"], &[C], false),
            |h| h.heal(&["w0"], &[C], false),
            "link cut",
        ),
    ];
    for (begin, end, cause) in forms {
        let inside = metrics(stand_down_after(begin, end, 12));
        assert_eq!(
            (inside.stand_downs, inside.outage_stand_downs),
            (1, 1),
            "{cause}"
        );
        let outside = metrics(stand_down_after(begin, end, 30));
        assert_eq!(
            (outside.stand_downs, outside.outage_stand_downs),
            (1, 0),
            "{cause}"
        );
    }
}

#[test]
fn a_run_of_failures_begins_after_the_last_renewal() {
    let outage = || base().at(10).crash(C).at(20).restart(C);
    // Failed before the outage, renewed, then failed inside it: the run began inside.
    let renewed = outage()
        .at(21)
        .renew("job", "w0", 1)
        .at(22)
        .renew_failed("w0", "job", 1)
        .at(23)
        .stand_down("w0", "job", 1, BeliefEnd::RenewFailed);
    let renewed_before = base()
        .at(5)
        .renew_failed("w0", "job", 1)
        .at(6)
        .renew("job", "w0", 1)
        .at(10)
        .crash(C)
        .at(12)
        .renew_failed("w0", "job", 1)
        .at(14)
        .stand_down("w0", "job", 1, BeliefEnd::RenewFailed);
    assert_eq!(metrics(renewed).outage_stand_downs, 0);
    assert_eq!(metrics(renewed_before).outage_stand_downs, 1);
    // Failing since before the outage: the run did not begin inside it.
    let earlier = base()
        .at(5)
        .renew_failed("w0", "job", 1)
        .at(10)
        .crash(C)
        .at(12)
        .renew_failed("w0", "job", 1)
        .at(14)
        .stand_down("w0", "job", 1, BeliefEnd::RenewFailed);
    let earlier = metrics(earlier);
    assert_eq!((earlier.stand_downs, earlier.outage_stand_downs), (1, 0));
}

/// 137 s TTL, 107 s deadline, renewals every 26 s, a 90 s service outage from 30 s: the
/// renewals fail at 53, 80 and 107 s, the deadline passes at 133 s, 13 s after the service
/// returned (keeping the lease); the holder releases and another worker takes over.
#[test]
fn a_stand_down_after_the_outage_ended_is_still_outage_caused() {
    let m = metrics(
        base()
            .at(26_000)
            .renew("job", "w0", 1)
            .at(30_000)
            .crash(C)
            .at(53_000)
            .renew_failed("w0", "job", 1)
            .at(80_000)
            .renew_failed("w0", "job", 1)
            .at(107_000)
            .renew_failed("w0", "job", 1)
            .at(120_000)
            .restart(C)
            .extend("job", "w0", 1)
            .at(133_000)
            .stand_down("w0", "job", 1, BeliefEnd::DeadlinePassed)
            .release("job", "w0", 1)
            .at(133_001)
            .grant("job", "w1", 2),
    );
    assert_eq!(m.stand_downs, 1);
    assert_eq!(m.outage_stand_downs, 1);
    assert_eq!(m.takeovers, 1);
    assert_eq!(m.outage_takeovers, 1);
    assert_eq!((m.takeovers_after_crash, m.takeovers_after_stall), (0, 0));
    assert_eq!(m.outage_ms, 90_000.0);
}

/// A 60 s partition between the holder and the coordinator: its renewals fail, it stands
/// down at its deadline, the service expires its lease and another worker takes over.
#[test]
fn a_holder_partitioned_from_the_coordinator_stands_down_and_is_taken_over() {
    let m = metrics(
        base()
            .at(10_000)
            .partition(&["worker-x", "w0"], &[C], false)
            .at(12_000)
            .renew_failed("w0", "job", 1)
            .at(20_000)
            .stand_down("w0", "job", 1, BeliefEnd::RenewFailed)
            .at(25_000)
            .expire("job", "w0", 1)
            .at(26_000)
            .grant("job", "w1", 2)
            .at(70_000)
            .heal(&["worker-x", "w0"], &[C], false),
    );
    assert_eq!((m.stand_downs, m.outage_stand_downs), (1, 1));
    assert_eq!(
        (m.takeovers, m.outage_takeovers, m.takeovers_after_crash),
        (1, 1, 0)
    );
    assert_eq!((m.false_expiries, m.outage_false_expiries), (1, 1));
}

#[test]
fn a_stand_down_from_the_holders_own_gc_pause_is_not_outage_caused() {
    let m = metrics(
        base()
            .at(10_000)
            .pause("w0")
            .at(18_000)
            .resume("w0")
            .stand_down("w0", "job", 1, BeliefEnd::DeadlinePassed)
            .at(40_000)
            .crash(C)
            .at(50_000)
            .restart(C),
    );
    assert_eq!((m.stand_downs, m.outage_stand_downs), (1, 0));
}

#[test]
fn a_takeover_after_a_crash_is_after_crash_not_outage() {
    let m = metrics(
        base()
            .at(10_000)
            .crash("w0")
            .at(20_000)
            .expire("job", "w0", 1)
            .at(21_000)
            .grant("job", "w1", 2)
            .at(30_000)
            .crash(C)
            .at(40_000)
            .restart(C),
    );
    assert_eq!(m.takeovers, 1);
    assert_eq!(m.takeovers_after_crash, 1);
    assert_eq!(
        (
            m.outage_takeovers,
            m.takeovers_after_stall,
            m.outage_stand_downs
        ),
        (0, 0, 0)
    );
}

#[test]
fn a_takeover_after_a_stall_and_a_plain_handoff() {
    let stall = metrics(
        base()
            .at(10_000)
            .pause("w0")
            .at(25_000)
            .expire("job", "w0", 1)
            .at(26_000)
            .grant("job", "w1", 2)
            .at(40_000)
            .resume("w0"),
    );
    assert_eq!((stall.takeovers, stall.takeovers_after_stall), (1, 1));
    assert_eq!(
        (stall.takeovers_after_crash, stall.outage_takeovers),
        (0, 0)
    );
    // A pause long before the last renewal, then a release: a handoff with no cause.
    let handoff = metrics(
        base()
            .at(10_000)
            .pause("w0")
            .at(10_020)
            .resume("w0")
            .at(12_000)
            .renew("job", "w0", 1)
            .at(20_000)
            .release("job", "w0", 1)
            .at(21_000)
            .grant("job", "w1", 2),
    );
    assert_eq!(handoff.takeovers, 1);
    assert_eq!(
        (
            handoff.takeovers_after_crash,
            handoff.takeovers_after_stall,
            handoff.outage_takeovers
        ),
        (0, 0, 0)
    );
}

#[test]
fn false_expiries_and_current_write_rejections_caused_by_an_outage() {
    let cut = || base().at(10_000).partition(&["w0"], &[C], false);
    let inside = metrics(
        cut()
            .at(12_000)
            .renew_failed("w0", "job", 1)
            .at(13_000)
            .reject(4, "job", "w0", 1, 1)
            .at(25_000)
            .expire("job", "w0", 1),
    );
    assert_eq!(
        (
            inside.current_write_rejections,
            inside.outage_current_write_rejections
        ),
        (1, 1)
    );
    assert_eq!(
        (inside.false_expiries, inside.outage_false_expiries),
        (1, 1)
    );
    // The same without the cut: a false expiry and a false rejection, not outage-caused.
    let outside = metrics(
        base()
            .at(12_000)
            .renew_failed("w0", "job", 1)
            .at(13_000)
            .reject(4, "job", "w0", 1, 1)
            .at(25_000)
            .expire("job", "w0", 1),
    );
    assert_eq!(
        (
            outside.current_write_rejections,
            outside.outage_current_write_rejections
        ),
        (1, 0)
    );
    assert_eq!(
        (outside.false_expiries, outside.outage_false_expiries),
        (1, 0)
    );
}

#[test]
fn fault_window_outage_time_and_faults_begun() {
    let m = metrics(
        base()
            .at(10)
            .crash(C)
            .partition(&["w0"], &[C], false)
            .at(20)
            .restart(C)
            .at(30)
            .heal(&["w0"], &[C], false)
            .pause("w1")
            .crash("w1")
            .at(300)
            .healed()
            .at(900)
            .run_ended(),
    );
    assert_eq!(m.fault_window_ms, 300.0);
    assert_eq!(m.run_ms, 900.0);
    // Union over workers: 10..30.
    assert_eq!(m.outage_ms, 20.0);
    assert_eq!(m.faults_begun.coordinator_restart, 1);
    assert_eq!(m.faults_begun.partition, 1);
    assert_eq!(m.faults_begun.gc_pause, 1);
    assert_eq!(m.faults_begun.worker_crash, 1);
    assert_eq!(m.faults_begun.get("holder-link-cut"), Some(1));
    assert_eq!(m.faults_begun.get("nonsense"), None);
    // Without a heal, the window is the whole run.
    assert_eq!(metrics(base().at(50).run_ended()).fault_window_ms, 50.0);
}

/// A worker the history names only in other nodes' events (a grant's holder, a takeover's
/// new holder, a write's writer, a partition's or a hold's end) still has its outages.
#[test]
fn workers_named_only_by_other_nodes_have_outages_too() {
    let named = h()
        .at(0)
        .grant("a", "wa", 1)
        .taken_over("b", "wf", 2, "wb")
        .present(7, "r", "wc", 1)
        .partition(&["wd"], &["storage"], false)
        .hold("we", "storage")
        .at(10)
        .crash(C)
        .at(20)
        .restart(C);
    let workers: Vec<String> = found(named).into_iter().map(|o| o.0).collect();
    assert_eq!(workers, ["wa", "wb", "wc", "wd", "we", "wf"]);
}

#[test]
fn an_outage_lasts_from_its_start_to_its_end_and_the_union_adds_disjoint_ones() {
    let history = base()
        .at(10)
        .partition(&["w0"], &[C], false)
        .at(22)
        .heal(&["w0"], &[C], false)
        .at(40)
        .partition(&["w1"], &[C], false)
        .at(45)
        .heal(&["w1"], &[C], false)
        .at(100)
        .run_ended();
    let durations: Vec<f64> = outages(&history.clone().build())
        .iter()
        .map(Outage::duration_ms)
        .collect();
    assert_eq!(durations, [12.0, 5.0]);
    assert_eq!(
        metrics(history).outage_ms,
        17.0,
        "12 ms and then 5 ms, apart"
    );
}

/// Overlapping or touching intervals of one worker and cause are one outage; another
/// cause, or another worker, stays apart.
#[test]
fn overlapping_and_touching_cuts_merge_per_worker_and_cause() {
    let merged = found(
        base()
            .at(10)
            .partition(&["w0"], &[C], false)
            .at(15)
            .hold("w0", C)
            .at(20)
            .heal(&["w0"], &[C], false)
            .at(25)
            .release_hold("w0", C) // w0: 10..25, two cuts
            .hold(C, "w0") // touching: 25..30
            .at(30)
            .release_hold(C, "w0")
            .at(40)
            .hold("w1", C)
            .at(45)
            .release_hold("w1", C)
            .at(50)
            .hold("w0", C) // apart: 50..55
            .at(55)
            .release_hold("w0", C),
    );
    assert_eq!(
        merged,
        vec![
            o("w0", 10, 30, OutageCause::LinkCut),
            o("w1", 40, 45, OutageCause::LinkCut),
            o("w0", 50, 55, OutageCause::LinkCut)
        ]
    );
}

/// Whether a lost lease's takeover is "after a stall" is judged at the holder's last contact
/// with the service (its last grant or renewal before the takeover): paused then, or paused
/// between then and the takeover. A pause that ended before that contact, or that began after
/// the takeover, is no stall.
#[test]
fn a_stall_is_judged_at_the_holders_last_contact_with_the_service() {
    // Paused when the service renewed it (a renewal already in flight), resumed after the
    // takeover.
    let at_contact = metrics(
        base()
            .at(10_000)
            .pause("w0")
            .at(10_010)
            .renew("job", "w0", 1)
            .at(25_000)
            .expire("job", "w0", 1)
            .at(26_000)
            .grant("job", "w1", 2)
            .at(40_000)
            .resume("w0"),
    );
    assert_eq!(at_contact.takeovers, 1);
    assert_eq!(at_contact.takeovers_after_stall, 1);
    // Paused and resumed before its last renewal; the lease expired later, not in a pause.
    let before_contact = metrics(
        base()
            .at(10_000)
            .pause("w0")
            .at(10_020)
            .resume("w0")
            .at(12_000)
            .renew("job", "w0", 1)
            .at(25_000)
            .expire("job", "w0", 1)
            .at(26_000)
            .grant("job", "w1", 2),
    );
    assert_eq!(before_contact.takeovers, 1);
    assert_eq!(before_contact.takeovers_after_stall, 0);
    // Paused only after the takeover.
    let after_takeover = metrics(
        base()
            .at(25_000)
            .expire("job", "w0", 1)
            .at(26_000)
            .grant("job", "w1", 2)
            .at(30_000)
            .pause("w0")
            .at(30_020)
            .resume("w0"),
    );
    assert_eq!(after_takeover.takeovers, 1);
    assert_eq!(after_takeover.takeovers_after_stall, 0);
}

/// How a stalled holder's tenure ended decides whether the takeover is "after a stall": lost
/// (dropped by the service, or released after the holder stood down) is; handed on (a
/// release with no stand-down) is not.
#[test]
fn a_takeover_after_a_stall_needs_the_tenure_lost_not_handed_on() {
    let m = metrics(
        h().at(0)
            .grant("a", "w0", 1)
            .grant("b", "w2", 1)
            .grant("c", "w4", 1)
            .at(10)
            .pause("w0")
            .pause("w2")
            .pause("w4")
            .at(12)
            .resume("w0")
            .resume("w2")
            .resume("w4")
            .drop_lease("b", "w2", 1) // b: dropped by the service
            .at(13)
            .stand_down("w0", "a", 1, BeliefEnd::RenewFailed)
            .at(14)
            .release("a", "w0", 1) // a: released after standing down
            .release("c", "w4", 1) // c: handed on
            .at(15)
            .grant("a", "w1", 2)
            .grant("b", "w3", 2)
            .grant("c", "w5", 2)
            .at(20)
            .run_ended(),
    );
    assert_eq!(m.takeovers, 3);
    assert_eq!(m.takeovers_after_stall, 2, "a and b, not c");
    assert_eq!((m.takeovers_after_crash, m.outage_takeovers), (0, 0));
}

// --- The definition's own cases (docs/scenario-format.md, "Caused by an outage"): a takeover
// or a stand-down is the outage's only when it would not have happened without the outage.

/// w0 holds `job` (renewed at 9 s, a 10 s lease); its link to the coordinator is cut from
/// 10 s to 70 s. `during` adds what happens to w0 inside the cut.
fn cut_holder(during: impl FnOnce(H) -> H) -> H {
    let cut = base()
        .at(9_000)
        .renew("job", "w0", 1)
        .at(10_000)
        .partition(&["w0"], &[C], false)
        .at(12_000)
        .renew_failed("w0", "job", 1);
    during(cut).at(70_000).heal(&["w0"], &[C], false)
}

#[test]
fn case_crash_inside_the_outage_is_the_crashs_takeover() {
    // w0 crashes 15 s in, inside the cut; its lease expires and w1 takes over.
    let m = metrics(cut_holder(|h| {
        h.at(15_000)
            .crash("w0")
            .at(19_000)
            .expire("job", "w0", 1)
            .at(20_000)
            .grant("job", "w1", 2)
            .at(40_000)
            .restart("w0")
    }));
    assert_eq!((m.takeovers, m.takeovers_after_crash), (1, 1));
    assert_eq!(
        (
            m.outage_takeovers,
            m.outage_false_expiries,
            m.false_expiries
        ),
        (0, 0, 0),
        "a dead holder's lease would have ended without the outage"
    );
}

#[test]
fn case_planned_release_after_the_heal_is_a_handover() {
    // The service is down from 10 s to 40 s; w0's renewals fail meanwhile (it keeps its
    // belief: its deadline is longer). After the heal it writes once more and releases its
    // lease as every lease period ends; w1 acquires it.
    let m = metrics(
        base()
            .at(9_000)
            .renew("job", "w0", 1)
            .at(10_000)
            .crash(C)
            .at(12_000)
            .renew_failed("w0", "job", 1)
            .at(30_000)
            .renew_failed("w0", "job", 1)
            .at(40_000)
            .restart(C)
            .extend("job", "w0", 1)
            .at(41_000)
            .sent("w0", 5, "job", 1)
            .accept(5, "job", "w0", 1)
            .at(41_500)
            .disbelieve("w0", "job", 1)
            .release("job", "w0", 1)
            .at(42_000)
            .grant("job", "w1", 2),
    );
    assert_eq!(m.takeovers, 1);
    assert_eq!(
        (
            m.outage_takeovers,
            m.outage_stand_downs,
            m.takeovers_after_stall
        ),
        (0, 0, 0),
        "a release with no stand-down hands the lease on: the outage took nothing"
    );
}

#[test]
fn case_paused_and_cut_holder_is_the_pauses() {
    // w0 GC-pauses from 10 s to 40 s, longer than its lease survives unrenewed (10 s); its
    // link is cut from 15 s while it is paused. The lease expires at 19 s and w1 takes over;
    // w0 resumes still cut off and its renewal fails inside the cut.
    let paused_then_cut = base()
        .at(9_000)
        .renew("job", "w0", 1)
        .at(10_000)
        .pause("w0")
        .at(15_000)
        .partition(&["w0"], &[C], false)
        .at(19_000)
        .expire("job", "w0", 1)
        .at(20_000)
        .grant("job", "w1", 2)
        .at(40_000)
        .resume("w0")
        .at(42_000)
        .renew_failed("w0", "job", 1)
        .at(75_000)
        .heal(&["w0"], &[C], false);
    let m = metrics(paused_then_cut);
    assert_eq!((m.false_expiries, m.outage_false_expiries), (1, 0));
    assert_eq!(
        (m.takeovers, m.takeovers_after_stall, m.outage_takeovers),
        (1, 1, 0),
        "the 30 s pause alone would have ended a 10 s lease"
    );
    // A 20 ms pause inside the cut, over the expiry, does not make it the pause's: the
    // renewals failed because of the cut.
    let short = metrics(cut_holder(|h| {
        h.at(18_990)
            .pause("w0")
            .at(19_000)
            .expire("job", "w0", 1)
            .at(19_010)
            .resume("w0")
            .at(20_000)
            .grant("job", "w1", 2)
    }));
    assert_eq!(
        (short.outage_false_expiries, short.outage_takeovers),
        (1, 1)
    );
    assert_eq!(short.takeovers_after_stall, 0);
}

#[test]
fn case_a_real_outage_stand_down_and_its_takeover() {
    // The service is down from 10 s to 70 s; w0's renewals fail from 12 s and it stands down
    // at 20 s with its lease frozen in the service; back at 70 s, the service ends the lease
    // (released by w0 after it stood down) and w1 takes over.
    let m = metrics(
        base()
            .at(9_000)
            .renew("job", "w0", 1)
            .at(10_000)
            .crash(C)
            .at(12_000)
            .renew_failed("w0", "job", 1)
            .at(20_000)
            .stand_down("w0", "job", 1, BeliefEnd::RenewFailed)
            .at(70_000)
            .restart(C)
            .release("job", "w0", 1)
            .at(71_000)
            .grant("job", "w1", 2),
    );
    assert_eq!((m.stand_downs, m.outage_stand_downs), (1, 1));
    assert_eq!((m.takeovers, m.outage_takeovers), (1, 1));
    assert_eq!((m.takeovers_after_crash, m.takeovers_after_stall), (0, 0));
}

/// Back-to-back pauses (a pause queued behind another) are one stall: two 5 s GCs, 10 s in
/// all, as long as the lease survived unrenewed (renewed at 9 s, expired at 19 s), where
/// either alone would not be.
#[test]
fn queued_pauses_are_one_stall() {
    let queued = |gap_ms: u64| {
        metrics(cut_holder(|h| {
            h.at(13_000)
                .pause("w0")
                .at(18_000)
                .resume("w0")
                .at(18_000 + gap_ms)
                .pause("w0")
                .at(19_000)
                .expire("job", "w0", 1)
                .at(20_000)
                .grant("job", "w1", 2)
                .at(23_000 + gap_ms)
                .resume("w0")
        }))
    };
    let back_to_back = queued(0);
    assert_eq!(
        (
            back_to_back.takeovers_after_stall,
            back_to_back.outage_takeovers
        ),
        (1, 0)
    );
    let apart = queued(1_000);
    assert_eq!(
        (apart.takeovers_after_stall, apart.outage_takeovers),
        (0, 1)
    );
}
