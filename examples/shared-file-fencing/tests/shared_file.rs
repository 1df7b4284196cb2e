//! The atomic fence file passes the textbook GC pause; the two-step one is caught.

use fencesim::{Invariant, Simulation};
use shared_file_fencing::SharedFile;

fn simulation() -> Simulation {
    Simulation::load(concat!(env!("CARGO_MANIFEST_DIR"), "/shared-file.toml")).unwrap()
}

#[test]
fn compare_and_write_in_one_step_is_safe() {
    // Panics with the failing seed, its proof and the reproduce line if any seed breaks.
    let sweep = simulation()
        .store(|_| Box::new(SharedFile::atomic()))
        .assert_expectation();
    assert!(sweep.violated().is_empty());
    assert_eq!(sweep.outcomes.len(), 20);
}

#[test]
fn compare_then_write_in_two_steps_is_caught() {
    let failure = simulation()
        .store(|_| Box::new(SharedFile::two_step()))
        .check()
        .expect_err("the two-step fence file lets a stale write through");
    // The paused writer's write lands over the newer one (I3) from a superseded epoch (I4).
    let violated = failure.sweep.violated();
    assert!(violated.contains(&Invariant::I3), "{failure}");
    assert!(violated.contains(&Invariant::I4), "{failure}");
    let message = failure.to_string();
    assert!(
        message.contains("first violation, with its proof"),
        "{message}"
    );
    assert!(message.contains("reproduce: FENCESIM_SEED="), "{message}");

    // The failing seed replays with the user's store, and its trace judges the same offline.
    let seed = failure.seed.expect("a failing seed");
    let replay = simulation()
        .store(|_| Box::new(SharedFile::two_step()))
        .replay(seed);
    assert_eq!(
        Some(replay.run.outcome.trace_hash.clone()),
        failure.trace_hash
    );
    let history = fencesim::parse_history("trace.jsonl", &replay.trace()).unwrap();
    assert_eq!(
        fencesim::judge_history(&history).checked.violated(),
        replay.run.outcome.checked.violated()
    );
}
