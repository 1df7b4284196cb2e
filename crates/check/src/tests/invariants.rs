//! One case per way each invariant can break, and the correct versions that must pass.
//! Comments number the events: evidence is given as those numbers.

use fencesim_model::Invariant::{I1, I2, I3, I4, I5};

use super::{check, h, message};

#[test]
fn an_empty_history_is_clean() {
    check(h(), &[]);
}

// --- I1 tokens strictly increase ---------------------------------------------------------

#[test]
fn i1_increasing_tokens_pass() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(10)
        .expire("job", "w0", 1) // 1
        .at(11)
        .grant("job", "w1", 2) // 2
        .at(12)
        .grant("other", "w0", 1); // 3 (another scope may reuse a number)
    check(history, &[]);
}

#[test]
fn i1_repeated_token_after_restart_is_caught() {
    let history = h()
        .at(0)
        .grant("job", "w0", 41) // 0
        .at(10)
        .expire("job", "w0", 41) // 1
        .at(20)
        .counters_lost() // 2
        .at(30)
        .grant("job", "w1", 41); // 3
    let checked = check(history, &[(I1, &[0, 3])]);
    let text = message(&checked, I1);
    assert!(text.contains("token 41 granted to w1 at 30 ms"), "{text}");
    assert!(text.contains("token 41 granted to w0 at 0 ms"), "{text}");
}

#[test]
fn i1_lower_token_names_the_highest_earlier_grant() {
    let history = h()
        .at(0)
        .grant("job", "w0", 5) // 0
        .at(1)
        .expire("job", "w0", 5) // 1
        .at(2)
        .grant("job", "w1", 9) // 2
        .at(3)
        .expire("job", "w1", 9) // 3
        .at(4)
        .grant("job", "w2", 7) // 4: below 9
        .at(5)
        .expire("job", "w2", 7) // 5
        .at(6)
        .grant("job", "w0", 8); // 6: still below 9
    check(history, &[(I1, &[2, 4]), (I1, &[2, 6])]);
}

// --- I2 single holder in the service's state ---------------------------------------------

#[test]
fn i2_grant_after_expiry_release_or_drop_passes() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .renew("job", "w0", 1) // 1
        .at(2)
        .extend("job", "w0", 1) // 2
        .at(3)
        .expire("job", "w0", 1) // 3
        .at(4)
        .grant("job", "w1", 2) // 4
        .at(5)
        .release("job", "w1", 2) // 5
        .at(6)
        .grant("job", "w0", 3) // 6
        .at(7)
        .drop_lease("job", "w0", 3) // 7
        .at(8)
        .grant("job", "w1", 4); // 8
    check(history, &[]);
}

#[test]
fn i2_a_client_go_takeover_ends_the_previous_tenure() {
    // The record is replaced, not expired: `taken-over` closes w0's tenure before w1's grant.
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(15_000)
        .taken_over("job", "w0", 1, "w1") // 1
        .grant("job", "w1", 2); // 2
    check(history, &[]);
    // A takeover of another token closes nothing.
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(15_000)
        .taken_over("job", "w0", 7, "w1") // 1
        .grant("job", "w1", 2); // 2
    check(history, &[(I2, &[0, 2])]);
}

#[test]
fn i2_grant_while_held_is_caught() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(5)
        .grant("job", "w1", 2); // 1
    let checked = check(history, &[(I2, &[0, 1])]);
    let text = message(&checked, I2);
    assert!(
        text.contains("token 2 granted to w1 at 5 ms while token 1 of w0"),
        "{text}"
    );
}

#[test]
fn i2_expiry_of_another_token_does_not_close_the_tenure() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .expire("job", "w0", 7) // 1: wrong token
        .at(2)
        .expire("job", "w1", 1) // 2: wrong holder
        .at(3)
        .grant("job", "w1", 2); // 3
    check(history, &[(I2, &[0, 3])]);
}

#[test]
fn i2_regrant_to_the_same_holder_while_held_is_caught() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .grant("job", "w0", 2); // 1
    check(history, &[(I2, &[0, 1])]);
}

// --- I3 no stale accept ------------------------------------------------------------------

#[test]
fn i3_same_token_twice_and_rising_tokens_pass() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .accept(1, "job", "w0", 1) // 1
        .at(2)
        .accept(2, "job", "w0", 1) // 2
        .at(3)
        .expire("job", "w0", 1) // 3
        .at(4)
        .grant("job", "w1", 2) // 4
        .at(5)
        .accept(3, "job", "w1", 2); // 5
    check(history, &[]);
}

#[test]
fn i3_lower_token_after_higher_accept_is_caught_with_i4() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .expire("job", "w0", 1) // 1
        .at(2)
        .grant("job", "w1", 2) // 2
        .at(3)
        .accept(7, "job", "w1", 2) // 3
        .at(4)
        .accept(8, "job", "w0", 1); // 4
    let checked = check(history, &[(I3, &[3, 4]), (I4, &[0, 2, 4])]);
    let text = message(&checked, I3);
    assert!(
        text.contains("op 8 from w0 with token 1 accepted at 4 ms, below token 2"),
        "{text}"
    );
    assert!(text.contains("(op 7 from w1 at 3 ms)"), "{text}");
}

#[test]
fn i3_is_per_resource_and_remembers_across_storage_restarts() {
    let history = h()
        .at(0)
        .grant("job", "w0", 5) // 0
        .at(1)
        .accept_on(1, "a", "job", "w0", 5) // 1
        .at(2)
        .accept_on(2, "b", "job", "w0", 5) // 2
        .at(3)
        .accept_on(3, "a", "job", "w0", 5) // 3: equal is fine
        .at(4)
        .crash("storage") // 4
        .at(5)
        .restart("storage") // 5
        .at(6)
        .accept_on(4, "a", "job", "w9", 3); // 6: never granted, and below 5
    check(history, &[(I3, &[1, 6]), (I4, &[6])]);
}

// --- I4 no superseded accept -------------------------------------------------------------

#[test]
fn i4_accept_within_the_epoch_passes_and_renewal_is_not_a_new_epoch() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .accept(1, "job", "w0", 1) // 1
        .at(2)
        .renew("job", "w0", 1) // 2
        .at(3)
        .accept(2, "job", "w0", 1) // 3
        .at(4)
        .expire("job", "w0", 1) // 4
        .at(5)
        .accept(3, "job", "w0", 1); // 5: expired but not superseded (nobody else granted)
    check(history, &[]);
}

#[test]
fn i4_token_never_granted_is_caught() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .accept(1, "job", "w1", 1); // 1: w1 was never granted token 1
    let checked = check(history, &[(I4, &[1])]);
    let text = message(&checked, I4);
    assert!(
        text.contains("token 1 was never granted to w1 on scope job"),
        "{text}"
    );
}

#[test]
fn i4_accept_after_takeover_without_fence_is_caught() {
    // max-token storage: the new holder has not written yet, so I3 sees nothing.
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(10)
        .expire("job", "w0", 1) // 1
        .at(11)
        .grant("job", "w1", 2) // 2
        .at(15)
        .accept(4, "job", "w0", 1); // 3
    let checked = check(history, &[(I4, &[0, 2, 3])]);
    let text = message(&checked, I4);
    assert!(
        text.contains("op 4 from w0 accepted at 15 ms with token 1"),
        "{text}"
    );
    assert!(
        text.contains("superseded by token 2 granted to w1 at 11 ms"),
        "{text}"
    );
    assert!(text.contains("with no fence at all"), "{text}");
}

#[test]
fn i4_names_the_first_superseding_grant() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .expire("job", "w0", 1) // 1
        .at(2)
        .grant("job", "w1", 2) // 2
        .at(3)
        .expire("job", "w1", 2) // 3
        .at(4)
        .grant("job", "w2", 3) // 4
        .at(5)
        .accept(1, "job", "w0", 1); // 5
    check(history, &[(I4, &[0, 2, 5])]);
}

#[test]
fn i4_regrant_to_the_same_writer_supersedes_its_old_token() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .expire("job", "w0", 1) // 1
        .at(2)
        .grant("job", "w0", 2) // 2
        .at(3)
        .accept(1, "job", "w0", 2) // 3: new token is fine
        .at(4)
        .accept(2, "job", "w0", 1); // 4: old token is superseded (and below 2)
    check(history, &[(I3, &[3, 4]), (I4, &[0, 2, 4])]);
}

#[test]
fn i4_a_token_granted_again_later_counts_from_the_latest_grant() {
    // After lost counters the same (holder, token) may be granted twice: the latest counts.
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .expire("job", "w0", 1) // 1
        .at(2)
        .grant("job", "w1", 2) // 2
        .at(3)
        .expire("job", "w1", 2) // 3
        .at(4)
        .grant("job", "w0", 1) // 4 (I1)
        .at(5)
        .accept(1, "job", "w0", 1); // 5: current again
    check(history, &[(I1, &[2, 4])]);
}

#[test]
fn i4_accept_inside_the_grant_to_fence_window_says_so() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .fence("job", "w0", 1) // 1
        .at(10)
        .expire("job", "w0", 1) // 2
        .at(11)
        .grant("job", "w1", 2) // 3
        .at(12)
        .accept(5, "job", "w0", 1) // 4: the fence for 2 has not arrived yet
        .at(13)
        .fence("job", "w1", 2) // 5
        .at(14)
        .accept(6, "job", "w1", 2); // 6
    let checked = check(history, &[(I4, &[0, 3, 4])]);
    let text = message(&checked, I4);
    assert!(
        text.contains("inside the grant→fence window: token 2 was granted at 11 ms and its fence reached job only at 13 ms"),
        "{text}"
    );
}

#[test]
fn i4_accept_after_the_fence_says_the_fence_was_ignored() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(10)
        .expire("job", "w0", 1) // 1
        .at(11)
        .grant("job", "w1", 2) // 2
        .at(12)
        .fence_rejected("job", "w1", 2) // 3: a rejected fence does not count
        .at(13)
        .fence("job", "w1", 2) // 4
        .at(14)
        .accept(5, "job", "w0", 1); // 5
    let checked = check(history, &[(I4, &[0, 2, 5])]);
    let text = message(&checked, I4);
    assert!(
        text.contains("after the fence for token 2 had been accepted by job at 13 ms"),
        "{text}"
    );
}

#[test]
fn i4_is_judged_on_the_lease_scope_not_the_resource() {
    let history = h()
        .at(0)
        .grant("lease", "w0", 1) // 0
        .at(1)
        .expire("lease", "w0", 1) // 1
        .at(2)
        .grant("lease", "w1", 2) // 2
        .at(3)
        .accept_on(1, "rows", "lease", "w1", 2) // 3
        .at(4)
        .accept_on(2, "rows", "lease", "w0", 1) // 4
        .at(5)
        .accept_on(3, "rows", "job", "w1", 2); // 5: "job" was never leased
    let checked = check(history, &[(I3, &[3, 4]), (I4, &[0, 2, 4]), (I4, &[5])]);
    assert_eq!(checked.violations[1].scope, "lease");
    assert_eq!(checked.violations[0].scope, "rows");
}

// --- I5 liveness -------------------------------------------------------------------------

#[test]
fn i5_write_committed_within_the_bound_passes() {
    let history = h()
        .at(0)
        .run_started(100) // 0
        .at(1)
        .grant("job", "w0", 1) // 1
        .at(2)
        .sent("w0", 1, "job", 1) // 2
        .at(50)
        .healed() // 3
        .at(150)
        .accept(1, "job", "w0", 1) // 4: exactly at the bound
        .at(250)
        .run_ended(); // 5: exactly one bound after the last accepted write
    check(history, &[]);
}

/// A volatile counter restarted mid-run; two writes of the old holder were accepted
/// right after the heal, then every write was rejected until the run ended. The old rule
/// ("some write accepted within the bound after the heal") passed this history.
#[test]
fn i5_progress_that_stops_after_the_heal_is_caught() {
    let history = h()
        .at(0)
        .run_started(100) // 0
        .at(1)
        .grant("job", "w0", 7) // 1
        .sent("w0", 1, "job", 7) // 2
        .at(50)
        .healed() // 3
        .at(60)
        .accept(1, "job", "w0", 7) // 4: within the bound: the old rule stopped looking here
        .at(61)
        .accept(2, "job", "w0", 7) // 5
        .at(70)
        .expire("job", "w0", 7) // 6
        .counters_lost() // 7
        .at(80)
        .grant("job", "w1", 1) // 8: the restarted counter hands out a smaller token
        .at(90)
        .reject(3, "job", "w1", 1, 7) // 9
        .at(200)
        .reject(4, "job", "w1", 1, 7) // 10: after the bound ran out at 161: not evidence
        .at(250)
        .run_ended(); // 11
                      // I1 too: the restarted counter went backwards, which is why the writes stopped.
    let checked = check(history, &[(I1, &[1, 8]), (I5, &[3, 5, 8, 9])]);
    let violation = &checked.violations[1];
    assert_eq!(violation.t_ns, 161 * fencesim_model::NS_PER_MS);
    let text = &violation.message;
    assert!(
        text.contains(
            "no write accepted for 100 ms after the write accepted at 61 ms (faults healed at \
             50 ms; bound ran out at 161 ms)"
        ),
        "{text}"
    );
    assert!(
        text.contains("last grant on scope job: token 1 to w1 at 80 ms"),
        "{text}"
    );
}

#[test]
fn i5_one_resource_stalling_while_another_progresses_is_caught() {
    // Job b's last accepted write is at 21 ms; job a keeps committing every 50 ms to the end.
    // Progress on a is no progress on b: I5 is judged per resource.
    let mut history = h()
        .at(0)
        .run_started(100) // 0
        .grant("a", "w0", 1) // 1
        .grant("b", "w1", 1) // 2
        .sent("w0", 1, "a", 1) // 3
        .sent("w1", 2, "b", 1) // 4
        .at(10)
        .healed() // 5
        .at(20)
        .accept(1, "a", "w0", 1) // 6
        .at(21)
        .accept(2, "b", "w1", 1); // 7
    for (op, at_ms) in (3..).zip([60, 110, 160, 210, 260]) {
        history = history.at(at_ms).accept(op, "a", "w0", 1); // 8 .. 12
    }
    let checked = check(history.at(300).run_ended(), &[(I5, &[2, 5, 7])]); // 13
    assert_eq!(checked.violations[0].scope, "b");
    let text = message(&checked, I5);
    assert!(text.contains("resource b"), "{text}");
}

#[test]
fn i5_gap_between_accepted_writes_is_measured_both_ways() {
    let steady = |second_ms: u64, end_ms: u64| {
        h().at(0)
            .run_started(100)
            .grant("job", "w0", 1)
            .sent("w0", 1, "job", 1)
            .at(10)
            .healed()
            .at(20)
            .accept(1, "job", "w0", 1)
            .at(second_ms)
            .accept(2, "job", "w0", 1)
            .at(end_ms)
            .run_ended()
    };
    // Gaps of exactly the bound pass; 1 ms more fails, between two writes or at the end.
    check(steady(120, 220), &[]);
    check(steady(121, 221), &[(I5, &[1, 3, 4])]);
    check(steady(120, 221), &[(I5, &[1, 3, 5])]);
}

#[test]
fn i5_no_commit_after_heal_is_caught() {
    let history = h()
        .at(0)
        .run_started(100) // 0
        .at(1)
        .grant("job", "w0", 1) // 1
        .at(2)
        .sent("w0", 1, "job", 1) // 2
        .at(3)
        .accept(1, "job", "w0", 1) // 3: before the heal, does not count
        .at(50)
        .healed() // 4
        .at(60)
        .sent("w0", 2, "job", 1) // 5
        .at(61)
        .reject(2, "job", "w0", 1, 3) // 6
        .at(151)
        .accept(2, "job", "w0", 1) // 7: 1 ms too late
        .at(500)
        .run_ended(); // 8
    let checked = check(history, &[(I5, &[1, 4, 6])]);
    let violation = &checked.violations[0];
    assert_eq!(violation.t_ns, 150 * fencesim_model::NS_PER_MS);
    assert_eq!(violation.scope, "job");
    let text = &violation.message;
    assert!(
        text.contains("no write accepted within 100 ms after faults healed at 50 ms"),
        "{text}"
    );
    assert!(
        text.contains("last grant on scope job: token 1 to w0 at 1 ms"),
        "{text}"
    );
    assert!(
        text.contains("last rejection: op 2 from w0 with token 1 (accepted token 3) at 61 ms"),
        "{text}"
    );
}

#[test]
fn i5_run_ending_before_the_bound_is_inconclusive() {
    let history = h()
        .at(0)
        .run_started(100) // 0
        .at(1)
        .sent("w0", 1, "job", 1) // 1
        .at(50)
        .healed() // 2
        .at(149)
        .run_ended(); // 3
    check(history, &[]);
}

#[test]
fn i5_needs_a_heal_and_only_checks_written_resources() {
    let no_heal = h()
        .at(0)
        .run_started(100)
        .at(1)
        .sent("w0", 1, "job", 1)
        .at(500)
        .run_ended();
    check(no_heal, &[]);
    let nothing_written = h()
        .at(0)
        .run_started(100)
        .at(1)
        .grant("job", "w0", 1)
        .at(2)
        .healed()
        .at(500)
        .run_ended();
    check(nothing_written, &[]);
}

#[test]
fn i5_reports_each_stuck_resource_once() {
    let history = h()
        .at(0)
        .run_started(10) // 0
        .at(1)
        .sent("w0", 1, "a", 1) // 1
        .at(2)
        .sent("w1", 2, "b", 1) // 2
        .at(3)
        .sent("w0", 3, "a", 1) // 3
        .at(5)
        .healed() // 4
        .at(100)
        .run_ended(); // 5
    let checked = check(history, &[(I5, &[4]), (I5, &[4])]);
    let scopes: Vec<&str> = checked
        .violations
        .iter()
        .map(|v| v.scope.as_str())
        .collect();
    assert_eq!(scopes, ["a", "b"]);
    assert!(checked.violations[0]
        .message
        .contains("no grant on scope a"));
}

#[test]
fn violations_serialize_with_their_invariant() {
    let checked = check(h().at(0).accept(1, "job", "w0", 1), &[(I4, &[0])]);
    let json = serde_json::to_string(&checked).unwrap();
    assert!(json.contains("\"invariant\":\"I4\""), "{json}");
    assert_eq!(checked.violated(), [I4]);
}

/// A stalled resource names the last grant on the lease scope its writes name, and a write
/// the storage recorded after the run's end is no progress.
#[test]
fn i5_reports_the_lease_scope_and_ignores_writes_after_the_end() {
    let mut history = h()
        .at(0)
        .run_started(10)
        .at(1)
        .grant("all", "w0", 1)
        .sent("w0", 1, "job", 1)
        .sent("w0", 2, "other", 1)
        .at(2)
        .accept_on(1, "job", "all", "w0", 1)
        .at(5)
        .healed();
    // `other` keeps going to the end; `job` stalls.
    for t in (8..=100).step_by(8) {
        history = history.at(t).accept_on(t, "other", "all", "w0", 1);
    }
    let history = history
        .at(100)
        .run_ended()
        .at(101)
        .accept_on(200, "job", "all", "w0", 1)
        .accept_on(201, "other", "all", "w0", 1)
        .build();
    let checked = crate::check(&history);
    let stalled: Vec<(&str, u64)> = checked
        .violations
        .iter()
        .filter(|v| v.invariant == I5)
        .map(|v| (v.scope.as_str(), v.t_ns / fencesim_model::NS_PER_MS))
        .collect();
    assert_eq!(stalled, [("job", 15)]);
    assert!(
        message(&checked, I5).contains("last grant on scope all: token 1 to w0"),
        "{}",
        message(&checked, I5)
    );
}
