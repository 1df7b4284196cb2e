//! Exploring a fault profile with proptest: a violation is found and
//! shrunk in an unsafe scenario, none in a safe one, within a small case budget.

use fencesim_explore::{explore, ExploreOptions};
use fencesim_scenario::Outcome;
use fencesim_testkit::catalogue;

fn options(cases: u32) -> ExploreOptions {
    ExploreOptions {
        cases,
        sweep_seeds: 200,
        ..ExploreOptions::default()
    }
}

#[test]
fn explore_finds_and_shrinks_a_violation_in_an_unsafe_scenario() {
    let scenario = catalogue(UNSAFE);
    let explored = explore(&scenario, &options(64), &mut |step| println!("{step}"));
    println!(
        "{UNSAFE}: first violation after {} cases (seed {}); plain sweep: {:?}",
        explored.cases_to_first_violation, explored.seed, explored.sweep
    );
    let (proptest_schedule, shrunk) = explored.found.expect("a violation within 64 cases");
    assert!(shrunk.minimality.is_one_minimal());
    assert!(shrunk.scenario.faults.schedule.len() <= proptest_schedule.len());
    let Outcome::Violates(violated) = &shrunk.scenario.expect.outcome else {
        panic!("a shrunk scenario expects a violation")
    };
    assert!(!violated.is_empty());
    assert_eq!(shrunk.seed, explored.seed);
}

/// Random GC pauses and latency spikes: violating schedules exist but need the right timing.
const UNSAFE: &str = "fence-on-acquire-window-random";

#[test]
fn explore_finds_nothing_in_a_safe_scenario() {
    let name = "swarm-all-faults-same-store-txn";
    let explored = explore(&catalogue(name), &options(32), &mut |_| {});
    assert!(explored.found.is_none());
    assert_eq!(explored.proptest_runs, 32);
    assert_eq!(explored.cases_to_first_violation, 32);
}
