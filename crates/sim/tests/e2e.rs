//! End-to-end: the seeds' failure modes reproduced in the simulator, and the remedies shown
//! to hold, on the catalogue's own scenario files.

use std::sync::Arc;

use fencesim_check::{Metrics, SeedOutcome};
use fencesim_model::{
    fence::{Fence, Verdict, WriteRequest},
    history::EventKind,
    lease::LeaseView,
    Invariant,
};
use fencesim_scenario::Scenario;
use fencesim_sim::{run_seed, sweep_all, Components, StoreFactory};
use fencesim_testkit::{catalogue, catalogue_files, catalogue_path, Spec};

fn scenario(name: &str) -> Arc<Scenario> {
    Arc::new(catalogue(name))
}

fn outcomes(name: &str, seeds: std::ops::Range<u64>) -> Vec<SeedOutcome> {
    sweep_all(&scenario(name), seeds, 2, &Components::default())
}

/// Seeds violating `invariant`.
fn violating(outcomes: &[SeedOutcome], invariant: Invariant) -> usize {
    outcomes
        .iter()
        .filter(|o| o.checked.violated().contains(&invariant))
        .count()
}

/// A metric summed over seeds.
fn total(outcomes: &[SeedOutcome], metric: impl Fn(&Metrics) -> u64) -> u64 {
    outcomes.iter().map(|o| metric(&o.checked.metrics)).sum()
}

fn assert_clean(outcomes: &[SeedOutcome]) {
    for outcome in outcomes {
        assert_eq!(outcome.panic, None, "seed {} panicked", outcome.seed);
        assert!(
            outcome.checked.violations.is_empty(),
            "seed {}: {:?}",
            outcome.seed,
            outcome.checked.violations
        );
    }
}

// (a) The textbook case: holder pauses past its TTL, a newer holder writes, the stale write arrives.

#[test]
fn textbook_gc_pause_violates_without_fencing() {
    let runs = outcomes("gc-pause-textbook-none", 0..8);
    assert_eq!(violating(&runs, Invariant::I3), 8);
    assert_eq!(violating(&runs, Invariant::I4), 8);
    assert_eq!(total(&runs, |m| m.stale_write_rejections), 0);
}

#[test]
fn textbook_gc_pause_is_rejected_by_max_token_and_sql() {
    for name in ["gc-pause-textbook-max-token", "gc-pause-textbook-sql"] {
        let runs = outcomes(name, 0..8);
        assert_clean(&runs);
        // Not vacuous: every seed presented a stale write, and the store rejected it.
        for run in &runs {
            let rejected = run.checked.metrics.stale_write_rejections;
            assert!(
                rejected >= 1,
                "{name} seed {}: no stale write was rejected",
                run.seed
            );
        }
    }
}

#[test]
fn stale_write_rejection_is_logged_with_scope_tokens_and_op() {
    let run = run_seed(
        &scenario("gc-pause-textbook-max-token"),
        3,
        &Components::default(),
    );
    let rejection = run
        .history
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::WriteRejected {
                op,
                resource,
                token,
                accepted,
                ..
            } => Some((*op, resource.clone(), *token, *accepted)),
            _ => None,
        })
        .expect("a rejection");
    let (op, resource, token, accepted) = rejection;
    assert!(op > 0);
    assert_eq!(resource, "job-1");
    assert!(
        accepted.is_some_and(|accepted| accepted > token),
        "presented {token}, accepted {accepted:?}"
    );
}

// (b) A volatile token counter and a coordinator restart: tokens go backwards.

#[test]
fn volatile_counter_restart_violates_i1_and_i3() {
    let runs = outcomes("volatile-counter-restart", 0..4);
    assert_eq!(violating(&runs, Invariant::I1), 4);
    assert_eq!(violating(&runs, Invariant::I3), 4);
    let run = run_seed(
        &scenario("volatile-counter-restart"),
        0,
        &Components::default(),
    );
    assert!(run
        .history
        .events
        .iter()
        .any(|e| e.kind == EventKind::CountersLost));
}

// (c) max-token keeps I3 but not I4; same-store-txn and fence-on-acquire keep I4.

#[test]
fn max_token_violates_i4_but_not_i3_when_stale_write_lands_first() {
    let runs = outcomes("i4-gap-max-token", 0..8);
    assert!(
        violating(&runs, Invariant::I4) >= 6,
        "{:?}",
        runs.iter()
            .map(|r| r.checked.violated())
            .collect::<Vec<_>>()
    );
    assert_eq!(violating(&runs, Invariant::I3), 0);
}

#[test]
fn same_store_txn_and_fence_on_acquire_hold_i4_on_the_same_faults() {
    for name in ["i4-gap-same-store-txn", "i4-gap-fence-on-acquire"] {
        let runs = outcomes(name, 0..8);
        assert_clean(&runs);
        assert!(
            total(&runs, |m| m.stale_write_rejections) >= 6,
            "{name}: the stale write must have been presented and rejected"
        );
    }
}

#[test]
fn fence_on_acquire_window_is_shown_when_the_stale_write_lands_inside_it() {
    let runs = outcomes("i4-window-fence-on-acquire", 0..8);
    assert!(violating(&runs, Invariant::I4) >= 4);
    assert_eq!(violating(&runs, Invariant::I3), 0);
    let violation = runs
        .iter()
        .flat_map(|r| r.checked.violations.iter())
        .find(|v| v.invariant == Invariant::I4)
        .unwrap();
    assert!(
        violation.message.contains("grant→fence window"),
        "{}",
        violation.message
    );
    // The window itself is measured.
    let windows: usize = runs
        .iter()
        .map(|r| r.checked.metrics.fence_window_ms.len())
        .sum();
    assert!(windows > 0);
}

// (d) Determinism.

#[test]
fn a_seed_replayed_gives_the_same_trace_hash() {
    let s = scenario("chaos-5-workers-max-token");
    let first = run_seed(&s, 89, &Components::default());
    let second = run_seed(&s, 89, &Components::default());
    assert_eq!(first.outcome.trace_hash, second.outcome.trace_hash);
    assert_eq!(first.history, second.history);
    assert!(
        first.outcome.events > 1_000,
        "a busy run: {} events",
        first.outcome.events
    );
    assert_ne!(
        run_seed(&s, 90, &Components::default()).outcome.trace_hash,
        first.outcome.trace_hash
    );
}

#[test]
fn sweep_result_does_not_depend_on_jobs() {
    let s = scenario("chaos-5-workers-max-token");
    let one = sweep_all(&s, 0..6, 1, &Components::default());
    let three = sweep_all(&s, 0..6, 3, &Components::default());
    assert_eq!(one, three);
}

// The library API: a user's own store plugs in through the same trait as the built-ins.

/// A store that checks nothing but panics on a token it considers impossible: stands for a
/// bug in a user's store.
struct PanickyStore;

impl Fence for PanickyStore {
    fn name(&self) -> String {
        "panicky".into()
    }
    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        assert!(
            request.token < 2,
            "PanickyStore cannot handle token {}",
            request.token
        );
        Verdict::Accepted { previous: None }
    }
    fn restart(&mut self) {}
}

#[test]
fn a_panic_in_a_simulated_node_fails_only_that_seed() {
    let s = scenario("gc-pause-textbook-max-token");
    let factory: StoreFactory = Arc::new(|_: &Scenario| Box::new(PanickyStore) as Box<dyn Fence>);
    let run = run_seed(&s, 0, &Components::with_store(&factory));
    let panic = run.outcome.panic.expect("the store panicked");
    assert!(
        panic.contains("storage") && panic.contains("token 2"),
        "{panic}"
    );
    assert!(run
        .history
        .events
        .iter()
        .any(|e| e.node == "storage" && matches!(e.kind, EventKind::Panicked { .. })));
    // The sweep goes on after a panicking seed.
    let all = sweep_all(&s, 0..3, 2, &Components::with_store(&factory));
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|o| o.panic.is_some()));
}

#[test]
fn a_users_store_runs_like_a_builtin() {
    let s = scenario("gc-pause-textbook-max-token");
    let factory: StoreFactory = Arc::new(|_: &Scenario| {
        Box::new(fencesim_sim::fencing::MaxToken::new(
            fencesim_model::fence::Durability::Durable,
            fencesim_model::fence::CompareScope::PerResource,
        )) as Box<dyn Fence>
    });
    let theirs = run_seed(&s, 5, &Components::with_store(&factory));
    let ours = run_seed(&s, 5, &Components::default());
    assert_eq!(theirs.outcome.trace_hash, ours.outcome.trace_hash);
}

// Per-node clocks: a local-deadline re-check sees a GC pause (mono ran on) but not a VM
// suspend (mono stopped).

#[test]
fn local_deadline_check_catches_gc_pause_but_not_vm_suspend() {
    let gc = outcomes("gc-pause-local-deadline-none", 0..10);
    assert_clean(&gc);
    let vm = outcomes("vm-suspend-local-deadline-none", 0..10);
    assert!(
        violating(&vm, Invariant::I4) >= 3,
        "{:?}",
        vm.iter().map(|o| o.checked.violated()).collect::<Vec<_>>()
    );
    let fenced = outcomes("vm-suspend-local-deadline-max-token", 0..10);
    assert_clean(&fenced);
    assert_eq!(
        total(&fenced, |m| m.stale_write_rejections) as usize,
        violating(&vm, Invariant::I4)
    );
}

// Fencing does not cover effects outside the fenced store; the outbox does.

#[test]
fn direct_side_effects_escape_fencing_and_the_outbox_does_not() {
    let direct = outcomes("side-effects-direct-max-token", 0..6);
    assert_clean(&direct);
    assert!(
        total(&direct, |m| m.superseded_side_effects) >= 6,
        "each seed's stale holder reached the sink"
    );
    let outbox = outcomes("side-effects-outbox-max-token", 0..6);
    assert_clean(&outbox);
    assert_eq!(total(&outbox, |m| m.superseded_side_effects), 0);
    assert!(
        total(&outbox, |m| m.side_effects) > 0,
        "the outbox relays committed effects"
    );
}

// Regression (found while building the catalogue): a worker that released without
// waiting could have its next acquire overtake its own release ("already held", same token),
// then lose the lease to the late release while writing on: I4 with no fault at all.

#[test]
fn fast_lease_cycling_without_faults_is_safe() {
    let text = Spec {
        name: "cycling",
        description: "two workers, one job, leases cycling every two writes, no faults",
        duration_ms: 20_000,
        ttl_ms: 2_000,
        work_ms: "1",
        workers: "writes_per_lease = 2",
        tables: "[network]\nlatency_ms = 1",
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    }
    .toml();
    let scenario = Arc::new(fencesim_scenario::parse_str(&text, "cycling.toml").unwrap());
    let runs = sweep_all(&scenario, 0..20, 2, &Components::default());
    assert_clean(&runs);
    assert!(
        total(&runs, |m| m.takeovers) > 100,
        "leases really cycle between the workers"
    );
}

// (e) A seed's fault plan saved as an explicit schedule replays the same run.

#[test]
fn every_scenario_plan_as_an_explicit_schedule_gives_the_same_trace() {
    let files = catalogue_files("");
    assert!(files.len() >= 30);
    for file in files {
        let scenario = Arc::new(fencesim_scenario::load(&file).unwrap());
        let seed = 0;
        let original = run_seed(&scenario, seed, &Components::default());
        let text = fencesim_scenario::scenario_toml(&original.plan.to_explicit(&scenario));
        let explicit = fencesim_scenario::parse_str(&text, "explicit.toml")
            .unwrap_or_else(|error| panic!("{}: {error}\n{text}", file.display()));
        let again = run_seed(&Arc::new(explicit), seed, &Components::default());
        assert_eq!(
            again.plan.faults,
            original.plan.faults,
            "{}",
            file.display()
        );
        assert_eq!(
            again.plan.clocks,
            original.plan.clocks,
            "{}",
            file.display()
        );
        assert_eq!(
            again.outcome.trace_hash,
            original.outcome.trace_hash,
            "{}: the explicit schedule replays differently",
            file.display()
        );
    }
}

#[test]
fn every_fault_kind_takes_effect_and_ends() {
    let base = scenario("gc-pause-textbook-max-token");
    for kind in fencesim_scenario::FaultKind::ALL {
        let mut scenario = (*base).clone();
        scenario.faults.schedule = vec![fencesim_scenario::TimedFault {
            at_ms: 2_000.0,
            fault: kind.example(),
        }];
        let run = run_seed(&Arc::new(scenario), 0, &Components::default());
        // A panic is a planted bug: it must fail its seed; every other kind must leave the
        // run to finish normally.
        assert_eq!(
            run.outcome.panic.is_some(),
            kind == fencesim_scenario::FaultKind::Panic,
            "{kind}: {:?}",
            run.outcome.panic
        );
        let recorded = run.history.events.iter().any(|event| {
            matches!(
                event.kind,
                EventKind::Paused { .. }
                    | EventKind::ClockStepped { .. }
                    | EventKind::PartitionStarted { .. }
                    | EventKind::HoldStarted { .. }
                    | EventKind::Crashed
                    | EventKind::Panicked { .. }
            )
        });
        assert!(recorded, "{kind}: no fault event recorded");
    }
}

/// The catalogue's first scenario with `faults` as its only faults (TOML entries).
fn with_faults(faults: &str) -> Arc<Scenario> {
    let path = catalogue_path("gc-pause-textbook-max-token");
    let text = std::fs::read_to_string(&path).expect("catalogue file");
    let cut = text.find("[[faults.schedule]]").expect("a schedule");
    let expect = text.find("[expect]").expect("an expectation");
    let text = format!("{}{faults}\n{}", &text[..cut], &text[expect..]);
    Arc::new(fencesim_scenario::parse_str(&text, "test.toml").unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn a_partition_drops_the_holders_renewals() {
    // Both workers cut from the coordinator for 15 s (TTL 10 s): whoever holds the lease sees
    // its renewals fail, and no grant or renewal reaches a worker until the partition heals.
    let scenario = with_faults(
        "[[faults.schedule]]\nat_ms = 2_000\nkind = \"partition\"\nnodes = [\"worker-0\", \"worker-1\"]\npeers = [\"coordinator\"]\nduration_ms = 15_000\n",
    );
    for seed in 0..3 {
        let run = run_seed(&scenario, seed, &Components::default());
        assert!(
            run.outcome.checked.metrics.renewal_failures > 0,
            "seed {seed}: no renewal failed during a 15 s partition"
        );
        let renewed_inside = run.history.events.iter().any(|event| {
            matches!(event.kind, EventKind::Renewed { .. })
                && (2_500_000_000..17_000_000_000).contains(&event.t_ns)
        });
        assert!(
            !renewed_inside,
            "seed {seed}: a renewal crossed the partition"
        );
    }
}

#[test]
fn a_held_link_delivers_every_held_write_at_release() {
    // Both workers' messages to the storage are held for 3 s, then released: every write sent
    // (except the last moments of the run) gets a verdict, none is lost.
    let scenario = with_faults(
        "[[faults.schedule]]\nat_ms = 2_000\nkind = \"hold-release\"\nfrom = \"worker-0\"\nto = \"storage\"\nduration_ms = 3_000\n\n[[faults.schedule]]\nat_ms = 2_000\nkind = \"hold-release\"\nfrom = \"worker-1\"\nto = \"storage\"\nduration_ms = 3_000\n",
    );
    for seed in 0..3 {
        let run = run_seed(&scenario, seed, &Components::default());
        let events = &run.history.events;
        let mut held = 0;
        for event in events {
            let EventKind::WriteSent { op, .. } = event.kind else {
                continue;
            };
            if !(2_000_000_000..5_000_000_000).contains(&event.t_ns) {
                continue;
            }
            held += 1;
            let answered = events.iter().any(|e| {
                matches!(e.kind, EventKind::WriteAccepted { op: o, .. } | EventKind::WriteRejected { op: o, .. } if o == op)
            });
            assert!(
                answered,
                "seed {seed}: held write op {op} was never delivered"
            );
        }
        assert!(
            held > 0,
            "seed {seed}: no write was sent while the link was held"
        );
    }
}

#[test]
fn a_coordinator_wall_clock_step_expires_nothing() {
    // Expiry runs on the coordinator's mono clock: a 30 s wall step forward while the holder
    // renews every 3.3 s (TTL 10 s) must not end its lease.
    let scenario = with_faults(
        "[[faults.schedule]]\nat_ms = 2_000\nkind = \"clock-step\"\nnode = \"coordinator\"\ndelta_ms = 30_000\n",
    );
    for seed in 0..3 {
        let run = run_seed(&scenario, seed, &Components::default());
        let expired = run
            .history
            .events
            .iter()
            .filter(|event| matches!(event.kind, EventKind::Expired { .. }))
            .count();
        assert_eq!(
            expired, 0,
            "seed {seed}: a lease expired after a wall-clock step"
        );
        assert_eq!(run.outcome.checked.metrics.false_expiries, 0, "seed {seed}");
    }
}
