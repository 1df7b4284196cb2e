//! Shrinking catalogue failures: each result still violates, on its seed,
//! under a fresh parse-free run, and is 1-minimal.

use std::sync::Arc;

use fencesim_explore::{shrink, ShrinkOptions, Shrunk};
use fencesim_model::Invariant;
use fencesim_scenario::Outcome;
use fencesim_testkit::catalogue;

/// Shrinks `name` at `seed` and checks the result: 1-minimal, still violating `target`, and
/// the shrunk scenario reproduces its own expectation when run again.
fn check(name: &str, seed: u64, max_faults: usize) -> Shrunk {
    let scenario = catalogue(name);
    let mut printed = Vec::new();
    let shrunk = shrink(&scenario, seed, &ShrinkOptions::default(), &mut |step| {
        printed.push(step.to_string())
    })
    .unwrap();
    println!(
        "{name} seed {seed}: {} runs\n{}",
        shrunk.runs,
        printed.join("\n")
    );
    assert_eq!(printed.len(), shrunk.steps.len());
    assert!(!shrunk.budget_exhausted, "{name}: budget exhausted");
    assert!(
        shrunk.minimality.is_one_minimal(),
        "{name}: not 1-minimal: {:?}",
        shrunk.minimality
    );
    let faults = &shrunk.scenario.faults.schedule;
    assert!(
        faults.len() <= max_faults,
        "{name}: {} faults",
        faults.len()
    );
    // Every remaining fault was checked for removal.
    let removals = shrunk
        .minimality
        .checks
        .iter()
        .filter(|check| check.change.starts_with("remove"))
        .count();
    assert_eq!(removals, faults.len());
    assert!(shrunk.scenario.faults.random.is_empty());
    assert!(!shrunk.scenario.faults.swarm);
    assert_eq!(shrunk.scenario.seeds.iter().collect::<Vec<_>>(), vec![seed]);

    let again = fencesim_sim::run_seed(
        &Arc::new(shrunk.scenario.clone()),
        seed,
        &fencesim_sim::Components::default(),
    );
    let violated = again.outcome.checked.violated();
    assert_eq!(
        shrunk.scenario.expect.outcome,
        Outcome::Violates(violated.clone())
    );
    for invariant in &shrunk.target {
        assert!(violated.contains(invariant), "{name}: lost {invariant}");
    }
    shrunk
}

/// Acceptance: the textbook failing seed shrinks to at most 2 faults.
#[test]
fn gc_pause_textbook_none_seed_0_shrinks_to_at_most_two_faults() {
    let shrunk = check("gc-pause-textbook-none", 0, 2);
    assert_eq!(shrunk.target, vec![Invariant::I3, Invariant::I4]);
}

/// A token source: the volatile counter restarts and reissues small tokens.
#[test]
fn volatile_counter_restart_is_one_minimal() {
    check("volatile-counter-restart", 0, 1);
}

/// A token source: wall-clock tokens and an NTP step back on the coordinator.
#[test]
fn wall_clock_step_back_is_one_minimal() {
    let shrunk = check("wall-clock-tokens-step-back", 0, 1);
    assert_eq!(shrunk.target, vec![Invariant::I1]);
}

/// A network hold: the checked write is held in the network past a takeover.
#[test]
fn held_write_is_one_minimal() {
    check("check-lease-before-write-held-write-none", 0, 3);
}

/// Random faults: a plan of many faults shrinks, and what is left is 1-minimal. In a chaos
/// run even a 1 ms pause can be necessary: any perturbation shifts every later timing, so
/// the minimal schedule is not always the "story" of the failure (the replay is).
#[test]
fn random_fault_plan_is_one_minimal() {
    let name = "chaos-5-workers-max-token";
    let sweep = fencesim_explore::seeds_to_first_violation(
        &catalogue(name),
        1_000,
        &ShrinkOptions::default().components,
    );
    let seed = sweep
        .first_violation
        .expect("a violating seed in the seed range");
    let shrunk = check(name, seed, usize::MAX);
    // Something was taken away: faults, or the faults' total size (every fault of a chaos
    // plan can be necessary, as above, yet most of their length is not).
    let size = |schedule: &[fencesim_scenario::TimedFault]| -> f64 {
        schedule.iter().filter_map(|t| t.fault.size_ms()).sum()
    };
    let start = fencesim_scenario::plan(&catalogue(name), seed).faults;
    let end = &shrunk.scenario.faults.schedule;
    assert!(
        shrunk.original_faults > end.len() || size(end) < size(&start) / 2.0,
        "nothing shrunk: {} faults, {:.1} ms of faults (was {:.1} ms)",
        end.len(),
        size(end),
        size(&start)
    );
}

/// A seed that does not fail has nothing to shrink.
#[test]
fn a_passing_seed_is_not_shrunk() {
    let scenario = catalogue("durable-counter-restart");
    let error = shrink(&scenario, 0, &ShrinkOptions::default(), &mut |_| {}).unwrap_err();
    assert_eq!(error, fencesim_explore::ShrinkError::NotFailing { seed: 0 });
}
