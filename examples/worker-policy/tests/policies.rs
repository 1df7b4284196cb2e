//! With no fencing at the store, the client-go-style policy is safe and the naive one is not.

use std::sync::Arc;

use fencesim::{Invariant, Simulation};
use worker_policy::{ClientGoStyle, Naive};

fn simulation() -> Simulation {
    Simulation::load(concat!(env!("CARGO_MANIFEST_DIR"), "/no-fencing.toml")).unwrap()
}

#[test]
fn stop_when_not_renewed_within_the_renew_deadline_is_safe() {
    let policy = ClientGoStyle {
        retry_period_ms: 2_000,
        renew_deadline_ms: 6_000,
    };
    // Panics with the failing seed, its proof and the reproduce line if any seed breaks.
    let sweep = simulation()
        .policy(move |_, _| Arc::new(policy))
        .assert_expectation();
    assert!(sweep.violated().is_empty());
}

#[test]
fn keep_writing_until_told_otherwise_is_caught() {
    let policy = Naive {
        renew_every_ms: 2_000,
    };
    let sim = simulation().policy(move |_, _| Arc::new(policy));
    let failure = sim
        .check()
        .expect_err("the naive policy writes on after its lease is gone");
    assert!(
        failure.sweep.violated().contains(&Invariant::I4),
        "{failure}"
    );
    // Every seed fails: the partition and the pause are scheduled, not drawn.
    assert_eq!(failure.sweep.failing_seeds().len(), 20, "{failure}");

    // The failing seed's replay shows the stale writer on the timeline.
    let replay = sim.replay(failure.seed.unwrap());
    let text = replay.text(&Default::default(), "(see the reproduce line)");
    assert!(text.contains("I4 violated"), "{text}");
}
