//! Exhaustive search over the search inputs in `scenarios/search/`, at coarse resolutions: the
//! unsafe configurations' violations are found, the safe one is covered to the last schedule,
//! and the result (and its progress) does not depend on the number of jobs.

use fencesim_explore::{exhaustive, Exhausted, ExhaustiveOptions, Progress};
use fencesim_model::Invariant;
use fencesim_scenario::FaultKind;
use fencesim_testkit::catalogue;

fn search(name: &str, options: ExhaustiveOptions) -> Exhausted {
    search_with_progress(name, options).0
}

fn search_with_progress(name: &str, options: ExhaustiveOptions) -> (Exhausted, Vec<Progress>) {
    let mut progress = Vec::new();
    let exhausted = exhaustive(&catalogue(name), &options, &mut |p| progress.push(*p))
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    println!("{name}: {}", exhausted.statement());
    // Progress is monotone and ends where the search ended.
    assert!(progress.windows(2).all(|w| w[0].run < w[1].run));
    assert_eq!(progress.last().map(|p| p.run), Some(exhausted.run));
    (exhausted, progress)
}

fn coarse(resolution_ms: u64, horizon_ms: u64, jobs: usize) -> ExhaustiveOptions {
    ExhaustiveOptions {
        resolution_ms,
        horizon_ms: Some(horizon_ms),
        jobs,
        ..ExhaustiveOptions::default()
    }
}

/// A GC pause past the TTL on the holder: one fault is enough, so the search stops among the
/// single faults.
#[test]
fn finds_the_textbook_violation() {
    let found = search("search/textbook-none", coarse(1_000, 10_000, 2));
    let violation = found.first_violation.as_ref().expect("a violation");
    assert_eq!(violation.schedule.len(), 1, "{}", found.statement());
    assert_eq!(violation.schedule[0].fault.kind(), FaultKind::GcPause);
    assert!(violation.violated.contains(&Invariant::I3));
    assert!(violation.violated.contains(&Invariant::I4));
    assert_eq!(found.run, violation.index + 1);
    assert_eq!(found.violating, 1);
    assert!(found.run < found.total);
    assert!(found
        .statement()
        .starts_with("violation of I3, I4 found by schedule"));
}

/// 4 letters (two 15 s pauses, a 1 s storage restart, a 2 s coordinator restart) x 10 start
/// times = 40 placements: 1 + 40 + 780 pairs, less the overlapping stops -- each pause with
/// itself 1..9 s later (9 + 8 + ... + 1 = 45 pairs, twice) and the coordinator restart with
/// itself 1 s later (9 pairs; the storage restart ends as the next one starts) -- 722.
#[test]
fn proves_max_token_keeps_i3_over_the_whole_bound() {
    let options = ExhaustiveOptions {
        invariants: Some(vec![Invariant::I3]),
        ..coarse(1_000, 10_000, 2)
    };
    let covered = search("search/textbook-max-token", options);
    assert_eq!(covered.alphabet.len(), 4);
    assert_eq!(covered.skipped_overlaps, 99);
    assert_eq!(covered.total, 722);
    assert_eq!(covered.run, 722);
    assert_eq!(covered.first_violation, None);
    assert_eq!(covered.violating, 0);
    assert_eq!(covered.not_verdicts, 0, "{:?}", covered.first_not_a_verdict);
    assert!(
        covered
            .statement()
            .starts_with("no violation of I3 for any ≤ 2-fault schedule at 1000 ms resolution over 722 schedules"),
        "{}",
        covered.statement()
    );
}

/// Two faults open fence-on-acquire's I4 window; the result is the same with 1 and 2 jobs
/// (different chunk boundaries, runs finishing in any order).
#[test]
fn finds_the_fence_on_acquire_window_with_any_number_of_jobs() {
    let options = |jobs| ExhaustiveOptions {
        invariants: Some(vec![Invariant::I4]),
        ..coarse(500, 10_000, jobs)
    };
    let (one, progress_one) = search_with_progress("search/fence-on-acquire", options(1));
    let violation = one.first_violation.as_ref().expect("a violation");
    assert_eq!(violation.schedule.len(), 2, "{}", one.statement());
    assert!(violation.violated.contains(&Invariant::I4));
    assert!(violation
        .schedule
        .iter()
        .any(|timed| timed.fault.kind() == FaultKind::HoldRelease));
    let (two, progress_two) = search_with_progress("search/fence-on-acquire", options(2));
    assert_eq!(one, two);
    // Progress, too, is reported at the same schedules (not after each job-sized chunk).
    assert_eq!(progress_one, progress_two);
}

/// A budget stops the search short, and the statement then says the bound was not covered.
#[test]
fn a_search_stopped_short_does_not_claim_the_bound() {
    let options = ExhaustiveOptions {
        invariants: Some(vec![Invariant::I3]),
        stop_after: Some(30),
        ..coarse(1_000, 10_000, 2)
    };
    let stopped = search("search/textbook-max-token", options);
    assert_eq!(stopped.run, 30);
    assert_eq!(stopped.total, 722);
    assert_eq!(stopped.first_violation, None);
    assert!(
        stopped
            .statement()
            .starts_with("stopped after 30 of 722 schedules with no violation of I3: the ≤ 2-fault schedule at 1000 ms resolution bound was NOT covered"),
        "{}",
        stopped.statement()
    );
}
