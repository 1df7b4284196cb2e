//! Each lease preset's scenario shows the real service's semantics in its
//! history, not only its numbers (docs/scenario-format.md, "Lease presets").

use std::sync::Arc;

use fencesim_model::{
    history::{BeliefEnd, Event, EventKind},
    NS_PER_MS,
};
use fencesim_scenario::Scenario;
use fencesim_sim::{run_seed, Components};
use fencesim_testkit::{catalogue, catalogue_path};

fn scenario(name: &str) -> Arc<Scenario> {
    Arc::new(catalogue(name))
}

/// The scenario with its fault schedule replaced by `faults` (TOML `[[faults.schedule]]`
/// entries); the rest of the file, `[expect]` included, is kept.
fn with_faults(name: &str, faults: &str) -> Arc<Scenario> {
    let text = std::fs::read_to_string(catalogue_path(name)).expect("scenario file");
    let head = &text[..text.find("[[faults.schedule]]").expect("a schedule")];
    let expect = &text[text.find("[expect]").expect("an expectation")..];
    let text = format!("{head}{faults}\n{expect}");
    Arc::new(fencesim_scenario::parse_str(&text, name).unwrap_or_else(|e| panic!("{e}")))
}

fn ms(t_ns: u64) -> f64 {
    t_ns as f64 / NS_PER_MS as f64
}

/// Time (ms) of the last event of `worker`'s lease being granted or renewed at the
/// coordinator before `before_ms`: its last keepalive as the service saw it.
fn last_touch_ms(events: &[Event], worker: &str, before_ms: f64) -> f64 {
    events
        .iter()
        .filter(|e| ms(e.t_ns) < before_ms)
        .filter(|e| match &e.kind {
            EventKind::Granted { holder, .. } | EventKind::Renewed { holder, .. } => {
                holder == worker
            }
            _ => false,
        })
        .map(|e| ms(e.t_ns))
        .next_back()
        .unwrap_or_else(|| panic!("{worker} never held the lease before {before_ms} ms"))
}

/// `(time ms, token)` of the first grant to `worker`.
fn first_grant(events: &[Event], worker: &str) -> (f64, u64) {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Granted { holder, token, .. } if holder == worker => {
                Some((ms(e.t_ns), *token))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("{worker} was never granted the lease"))
}

fn first_time(events: &[Event], what: impl Fn(&Event) -> bool) -> Option<f64> {
    events.iter().find(|e| what(e)).map(|e| ms(e.t_ns))
}

fn expired_ms(events: &[Event], worker: &str) -> f64 {
    first_time(
        events,
        |e| matches!(&e.kind, EventKind::Expired { holder, .. } if holder == worker),
    )
    .unwrap_or_else(|| panic!("{worker}'s lease never expired"))
}

fn deadline_passed_ms(events: &[Event], worker: &str) -> f64 {
    first_time(events, |e| {
        e.node == worker
            && matches!(
                &e.kind,
                EventKind::BeliefEnded {
                    why: BeliefEnd::DeadlinePassed,
                    ..
                }
            )
    })
    .unwrap_or_else(|| panic!("{worker} never gave up at its deadline"))
}

fn stats(values: &[f64]) -> (f64, f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, values.iter().sum::<f64>() / values.len() as f64, max)
}

#[test]
fn etcd_raises_a_short_ttl_and_takes_over_at_its_revoke_checks_with_revision_tokens() {
    let scenario = scenario("preset-etcd-takeover-after-pause");
    assert_eq!(scenario.lease.ttl_ms, 1_000);
    assert_eq!(scenario.lease.min_ttl_ms, 2_000);
    assert_eq!(
        scenario.lease.effective_ttl_ms(),
        2_000,
        "1 s is raised to 2 s"
    );
    assert_eq!(
        scenario.workers.renew_every_ms, 666,
        "keepalive every TTL/3"
    );
    let mut delays = Vec::new();
    for seed in scenario.seeds.iter() {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        // The pause starts at 3 s: the last keepalive the service saw came before it.
        let keepalive = last_touch_ms(events, "worker-0", 3_000.0);
        let expired = expired_ms(events, "worker-0");
        let (granted, token) = first_grant(events, "worker-1");
        let delay = granted - keepalive;
        assert!(
            (2_000.0..=2_500.0).contains(&(expired - keepalive)),
            "seed {seed}: revoked {} ms after the last keepalive",
            expired - keepalive
        );
        assert!(
            (2_000.0..=2_600.0).contains(&delay),
            "seed {seed}: takeover {delay} ms after the last keepalive"
        );
        // Revisions: grant put (1), expiry delete (2), next grant put (3).
        assert_eq!(first_grant(events, "worker-0").1, 1, "seed {seed}");
        assert_eq!(
            token, 3,
            "seed {seed}: the token skips the delete's revision"
        );
        delays.push(delay);
    }
    let (min, mean, max) = stats(&delays);
    eprintln!(
        "etcd takeover after the last keepalive: min {min:.0} mean {mean:.0} max {max:.0} ms"
    );
    // The check phase comes from the seed: takeovers spread over the 500 ms window.
    assert!(max - min >= 250.0, "takeovers did not spread: {min}..{max}");
}

const CRASH_AT_5S: &str = r#"
[[faults.schedule]]
at_ms = 0
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 500

[[faults.schedule]]
at_ms = 5_000
kind = "worker-crash"
node = "worker-0"
duration_ms = 100
"#;

#[test]
fn a_restarted_etcd_holder_waits_for_its_old_lease_and_gets_a_new_token() {
    let scenario = with_faults("preset-etcd-takeover-after-pause", CRASH_AT_5S);
    for seed in 0..10 {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        let keepalive = last_touch_ms(events, "worker-0", 5_000.0);
        let restarted = first_time(events, |e| {
            e.node == "worker-0" && matches!(e.kind, EventKind::Restarted)
        })
        .expect("worker-0 restarts");
        let after: Vec<&Event> = events.iter().filter(|e| ms(e.t_ns) > restarted).collect();
        // Nothing of the dead session comes back: no renewal of token 1, no belief in it.
        assert!(!after.iter().any(|e| matches!(
            &e.kind,
            EventKind::Renewed { token: 1, .. } | EventKind::BeliefStarted { token: 1, .. }
        )));
        // The next grant, to whoever, is new and comes only after the old lease's expiry.
        let next = after
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::Granted { token, .. } => Some((ms(e.t_ns), *token)),
                _ => None,
            })
            .expect("a new grant after the restart");
        assert!(next.1 > 1, "seed {seed}: token {}", next.1);
        assert!(next.0 - keepalive >= 2_000.0, "seed {seed}");
    }
}

#[test]
fn a_restarted_client_go_holder_resumes_its_own_record() {
    let scenario = with_faults("preset-client-go-takeover-by-candidate-clock", CRASH_AT_5S);
    for seed in 0..5 {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        let restarted = first_time(events, |e| {
            e.node == "worker-0" && matches!(e.kind, EventKind::Restarted)
        })
        .expect("worker-0 restarts");
        let after: Vec<&Event> = events.iter().filter(|e| ms(e.t_ns) > restarted).collect();
        // The pod name is the identity: its record is still its own, token unchanged.
        let resumed = after.iter().position(|e| {
            matches!(&e.kind, EventKind::Renewed { holder, token: 1, .. } if holder == "worker-0")
        });
        let believed = after.iter().position(|e| {
            e.node == "worker-0" && matches!(&e.kind, EventKind::BeliefStarted { token: 1, .. })
        });
        assert!(resumed.is_some(), "seed {seed}: no resumed record");
        assert!(believed > resumed, "seed {seed}: belief before the record");
        let regrant = after[..believed.expect("believed")].iter().any(|e| {
            matches!(
                e.kind,
                EventKind::Granted { .. } | EventKind::TakenOver { .. }
            )
        });
        assert!(!regrant, "seed {seed}: the record changed hands");
    }
}

#[test]
fn client_go_takes_over_only_after_the_lease_duration_by_the_candidates_clock() {
    let scenario = scenario("preset-client-go-takeover-by-candidate-clock");
    let (lease, workers) = (&scenario.lease, &scenario.workers);
    assert_eq!(
        (
            lease.ttl_ms,
            workers.renew_deadline_ms,
            workers.renew_every_ms
        ),
        (15_000, 10_000, 2_000)
    );
    assert_eq!(workers.acquire_retry_jitter, 1.2);
    let candidate_clock_rate = 1.1; // worker-1's drift: +100_000 ppm
    let mut waits = Vec::new();
    for seed in scenario.seeds.iter() {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        // The partition starts at 5 s: worker-0's last renewal the record saw.
        let renewed = last_touch_ms(events, "worker-0", 5_000.0);
        let stopped = deadline_passed_ms(events, "worker-0");
        let taken = first_time(events, |e| {
            matches!(&e.kind, EventKind::TakenOver { holder, by, token: 1, .. }
                if holder == "worker-0" && by == "worker-1")
        })
        .unwrap_or_else(|| panic!("seed {seed}: no takeover"));
        // The holder stops leading RenewDeadline after its last successful renewal (by its
        // own clock, measured from when the renewal was sent: up to a network delay earlier).
        assert!(
            (9_980.0..=10_000.5).contains(&(stopped - renewed)),
            "seed {seed}: stopped {} ms after the last renewal",
            stopped - renewed
        );
        // The candidate waited a LeaseDuration by its clock since it saw the record change:
        // never less than 15 s / 1.1 of true time after the last renewal.
        let wait = taken - renewed;
        assert!(
            wait >= 15_000.0 / candidate_clock_rate,
            "seed {seed}: took over after {wait} ms"
        );
        // ...and at most one retry (2-4.4 s by its clock) to notice, one to act.
        assert!(
            wait <= (15_000.0 + 2.0 * 4_400.0) / candidate_clock_rate + 50.0,
            "seed {seed}: {wait}"
        );
        assert!(stopped < taken, "seed {seed}: beliefs overlapped");
        let (_, token) = first_grant(events, "worker-1");
        assert_eq!(token, 2, "seed {seed}: leaseTransitions + 1");
        waits.push(wait);
    }
    let (min, mean, max) = stats(&waits);
    eprintln!(
        "client-go takeover after the last renewal: min {min:.0} mean {mean:.0} max {max:.0} ms"
    );
}

#[test]
fn zookeeper_clamps_the_session_and_the_client_suspects_at_two_thirds() {
    let scenario = scenario("preset-zookeeper-session-clamp-and-suspect");
    assert_eq!(scenario.lease.ttl_ms, 3_000);
    assert_eq!(
        scenario.lease.effective_ttl_ms(),
        4_000,
        "clamped to 2 x tickTime"
    );
    assert_eq!(scenario.workers.renew_deadline_ms, 2_666);
    for seed in scenario.seeds.iter() {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        let pinged = last_touch_ms(events, "worker-0", 4_000.0);
        let suspected = deadline_passed_ms(events, "worker-0");
        assert!(
            (2_646.0..=2_666.5).contains(&(suspected - pinged)),
            "seed {seed}: suspected {} ms after the last ping",
            suspected - pinged
        );
        // Expiry in tickTime buckets: at the first 2 s tick at or after the 4 s timeout.
        let expired = expired_ms(events, "worker-0") - pinged;
        assert!(
            (4_000.0..=6_000.0).contains(&expired),
            "seed {seed}: {expired}"
        );
        // The lock directory's cversion: worker-0's node (1), each of worker-1's lost
        // attempts while it was held (a node created and deleted: +2; denials are not in the
        // history), worker-0's node deleted at expiry (+1), worker-1's node (+1): odd, and
        // above 3 since worker-1 retried while worker-0 held the lock.
        let (_, token) = first_grant(events, "worker-1");
        assert!(
            token > 3 && token % 2 == 1,
            "seed {seed}: token {token}: cversion counts the delete and every lost attempt"
        );
    }
}

#[test]
fn a_consul_lock_expires_at_twice_the_ttl_then_waits_out_its_lock_delay() {
    let scenario = scenario("preset-consul-lock-delay");
    assert_eq!(scenario.lease.expiry_factor, 2);
    assert_eq!(scenario.lease.lock_delay_ms, 15_000);
    assert_eq!(
        scenario.workers.renew_every_ms, 5_000,
        "RenewPeriodic: TTL/2"
    );
    for seed in scenario.seeds.iter() {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        let renewed = last_touch_ms(events, "worker-0", 3_000.0);
        let expired = expired_ms(events, "worker-0");
        assert!(
            (20_000.0..=20_001.0).contains(&(expired - renewed)),
            "seed {seed}: the session timer ran {} ms",
            expired - renewed
        );
        let (granted, _) = first_grant(events, "worker-1");
        let waited = granted - expired;
        assert!(
            (15_000.0..=15_200.0).contains(&waited),
            "seed {seed}: re-acquired {waited} ms after the expiry"
        );
    }
}

#[test]
fn an_etcd_leader_change_re_extends_the_lease_by_a_full_ttl_plus_election_timeout() {
    // worker-0 dies at 2 s; the leader changes at 3 s (down 1 s, then an election) and
    // re-extends its lease.
    let scenario = with_faults(
        "preset-etcd-takeover-after-pause",
        r#"
[[faults.schedule]]
at_ms = 0
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 500

[[faults.schedule]]
at_ms = 2_000
kind = "worker-crash"
node = "worker-0"
duration_ms = 8_000

[[faults.schedule]]
at_ms = 3_000
kind = "coordinator-restart"
duration_ms = 1_000
"#,
    );
    for seed in 0..10 {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(run.outcome.checked.violations.is_empty(), "seed {seed}");
        let events = &run.history.events;
        let extended = first_time(events, |e| {
            matches!(&e.kind, EventKind::Extended { holder, token: 1, .. } if holder == "worker-0")
        })
        .expect("the new leader keeps the lease");
        // It leads (and re-extends) only after raft's randomized election timeout, [1, 2) x
        // the election timeout after it restarted (calibrated live).
        let restarted = first_time(events, |e| {
            e.node == "coordinator" && matches!(e.kind, EventKind::Restarted)
        })
        .expect("the coordinator restarts");
        assert!(
            (1_000.0..2_000.0).contains(&(extended - restarted)),
            "seed {seed}: extended {} ms after the restart",
            extended - restarted
        );
        let (granted, token) = first_grant(events, "worker-1");
        // TTL (2 s) + election timeout (1 s) from the promotion, then the next revoke check.
        let waited = granted - extended;
        assert!(
            (3_000.0..=3_600.0).contains(&waited),
            "seed {seed}: granted {waited} ms after the leader change"
        );
        assert!(token > 1, "seed {seed}");
    }
}

/// A worker GC-paused mid-work (ZooKeeper preset, no storage fencing) resumes with two things
/// overdue: the write after its work (due at about 3.5 s) and its local deadline, 4 s after its
/// last ping (due 5 s or later). A real process resumed with SIGCONT sends the write first (its
/// main thread is past the lease check), and its client notices the deadline after; so every
/// live run of this case violates. The simulation must take them in that order on every seed,
/// not in madsim's random order of runnable tasks (which let about half the seeds drop the
/// write).
#[test]
fn a_resumed_worker_sends_its_overdue_write_before_it_notices_the_deadline_it_passed_later() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../live/scenarios/zookeeper-gc-pause-none.toml");
    let scenario =
        Arc::new(fencesim_scenario::load(&path).unwrap_or_else(|error| panic!("{error}")));
    for seed in scenario.seeds.iter() {
        let run = run_seed(&scenario, seed, &Components::default());
        let events = &run.history.events;
        let position = |what: &dyn Fn(&Event) -> bool| events.iter().position(what);
        let resumed =
            position(&|e| e.node == "worker-0" && matches!(e.kind, EventKind::Resumed { .. }))
                .expect("worker-0 resumes");
        let gave_up = position(&|e| {
            e.node == "worker-0"
                && matches!(
                    e.kind,
                    EventKind::BeliefEnded {
                        why: BeliefEnd::DeadlinePassed,
                        ..
                    }
                )
        })
        .expect("worker-0 gives up at its deadline");
        let wrote = events[resumed..]
            .iter()
            .position(|e| e.node == "worker-0" && matches!(e.kind, EventKind::WriteSent { .. }))
            .map(|after| resumed + after);
        assert!(
            wrote.is_some_and(|wrote| wrote < gave_up),
            "seed {seed}: after the resume (event {resumed}) worker-0 gave up at its \
             deadline (event {gave_up}) before any write ({wrote:?})"
        );
        let violated: Vec<String> = run
            .outcome
            .checked
            .violations
            .iter()
            .map(|v| v.invariant.to_string())
            .collect();
        assert!(
            violated.contains(&"I3".to_string()) && violated.contains(&"I4".to_string()),
            "seed {seed}: violated {violated:?}"
        );
    }
}
