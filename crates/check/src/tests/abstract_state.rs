//! The abstract state of hand-written histories: its canonical form, the states a story
//! visits, and the transitions between them.

use super::{h, H};
use crate::abstract_state::{states, visited, Visited};

/// The GC-pause story with the names and tokens given: `old` holds `scope` with `t`, writes
/// once, GC-pauses; the service expires it and grants `t + 1` to `new`, which writes; `old`
/// resumes and its stale write is accepted (a store that checks nothing).
fn gc_pause_story(scope: &str, old: &str, new: &str, t: u64) -> H {
    h().at(0)
        .grant(scope, old, t) // 0
        .believe(old, scope, t) // 1
        .at(10)
        .sent(old, 1, scope, t) // 2
        .accept(1, scope, old, t) // 3
        .at(20)
        .pause(old) // 4
        .at(100)
        .expire(scope, old, t) // 5
        .grant(scope, new, t + 1) // 6
        .believe(new, scope, t + 1) // 7
        .at(110)
        .sent(new, 2, scope, t + 1) // 8
        .accept(2, scope, new, t + 1) // 9
        .at(200)
        .resume(old) // 10
        .sent(old, 3, scope, t) // 11
        .accept(3, scope, old, t) // 12
        .run_ended() // 13
}

/// The state after each event, checking on the way that [`visited`] (which skips the events
/// that cannot change a state) sees exactly the states and changes between them.
fn texts(history: H) -> Vec<String> {
    let history = history.build();
    let texts: Vec<String> = states(&history).iter().map(ToString::to_string).collect();
    let mut naive = Visited::default();
    for pair in texts.windows(2) {
        if pair[0] != pair[1] {
            naive.transitions.insert((pair[0].clone(), pair[1].clone()));
        }
    }
    naive.states = texts.iter().cloned().collect();
    assert_eq!(visited(&history), naive);
    texts
}

#[test]
fn the_gc_pause_story_visits_a_stale_holder_paused_past_expiry_under_a_newer_epoch() {
    let seen = texts(gc_pause_story("job", "w0", "w1", 1));
    let expected = [
        "[lease=held store=empty inflight=none]", // 0 granted
        "[lease=held store=empty inflight=none: holder(running)]", // 1
        "[lease=held store=empty inflight=current: holder(running)]", // 2 sent
        "[lease=held store=equal inflight=none: holder(running)]", // 3 accepted
        "[lease=held store=equal inflight=none: holder(gc-paused)]", // 4 paused
        "[lease=free store=equal inflight=none: expired-holder(gc-paused)]", // 5 expired
        "[lease=held store=below inflight=none: stale-holder(gc-paused)]", // 6 newer epoch
        "[lease=held store=below inflight=none: holder(running), stale-holder(gc-paused)]",
        "[lease=held store=below inflight=current: holder(running), stale-holder(gc-paused)]",
        "[lease=held store=equal inflight=none: holder(running), stale-holder(gc-paused)]",
        "[lease=held store=equal inflight=none: holder(running), stale-holder(running)]",
        "[lease=held store=equal inflight=stale: holder(running), stale-holder(running)]",
        // The stale write lowered nothing: the high-water mark stays the newer token.
        "[lease=held store=equal inflight=none: holder(running), stale-holder(running)]",
        "[lease=held store=equal inflight=none: holder(running), stale-holder(running)]",
    ];
    assert_eq!(seen, expected);

    let run = visited(&gc_pause_story("job", "w0", "w1", 1).build());
    // 12 distinct states: 14 events, less the repeat at 12 and the run's end (no change).
    assert_eq!(run.states.len(), 12);
    // 12 changes of state, one of them (11 → 12) back to a state seen at 10.
    assert_eq!(run.transitions.len(), 12);
    assert!(run.states.contains(expected[6]));
    assert!(run
        .transitions
        .contains(&(expected[11].to_string(), expected[10].to_string())));
}

#[test]
fn renaming_workers_scopes_and_shifting_tokens_changes_no_state() {
    let reference = visited(&gc_pause_story("job", "w0", "w1", 1).build());
    let renamed = visited(&gc_pause_story("row-7", "beta", "alpha", 40).build());
    assert_eq!(renamed, reference);
    // Swapping which name is old and new, too (sorting, not names, orders the entries).
    let swapped = visited(&gc_pause_story("job", "w1", "w0", 1).build());
    assert_eq!(swapped, reference);
}

#[test]
fn scopes_are_a_multiset_whatever_their_names() {
    let two = |a: &str, b: &str| {
        texts(
            h().at(0)
                .grant(a, "w0", 1)
                .grant(b, "w1", 1)
                .believe("w0", a, 1)
                .believe("w1", b, 1),
        )
    };
    let seen = two("a", "b");
    assert_eq!(
        seen.last().map(String::as_str),
        Some(
            "[lease=held store=empty inflight=none: holder(running)] \
             [lease=held store=empty inflight=none: holder(running)]"
        )
    );
    assert_eq!(two("b", "a"), seen);
    assert_eq!(
        seen[1],
        "[lease=held store=empty inflight=none] [lease=held store=empty inflight=none]"
    );
}

#[test]
fn a_holder_cut_off_from_the_service_and_a_double_grant() {
    let seen = texts(
        h().at(0)
            .grant("job", "w0", 1)
            .believe("w0", "job", 1)
            .at(10)
            .partition(&["w0"], &["coordinator"], false)
            .at(20)
            .grant("job", "w1", 2) // w0's tenure is still open: two open
            .at(30)
            .heal(&["w0"], &["coordinator"], false)
            .expire("job", "w1", 2),
    );
    assert_eq!(
        seen,
        [
            "[lease=held store=empty inflight=none]",
            "[lease=held store=empty inflight=none: holder(running)]",
            "[lease=held store=empty inflight=none: holder(cut-off)]",
            "[lease=double store=empty inflight=none: stale-holder(cut-off)]",
            "[lease=double store=empty inflight=none: stale-holder(running)]",
            "[lease=held store=empty inflight=none: stale-holder(running)]",
        ]
    );
}

#[test]
fn a_high_water_mark_above_the_newest_grant_and_a_belief_never_granted() {
    let seen = texts(
        h().at(0)
            .grant("job", "w0", 5)
            .fence("job", "w0", 5)
            .counters_lost()
            .expire("job", "w0", 5)
            .grant("job", "w1", 1) // a token source that went backwards
            .believe("w2", "job", 9),
    );
    assert_eq!(
        seen,
        [
            "[lease=held store=empty inflight=none]",
            "[lease=held store=equal inflight=none]",
            "[lease=held store=equal inflight=none]",
            "[lease=free store=equal inflight=none]",
            "[lease=held store=above inflight=none]",
            "[lease=held store=above inflight=none: ungranted(running)]",
        ]
    );
}

/// A high-water mark equal to the newest grant's token is `equal` (not `below`), whatever the
/// token; the next grant makes it `below`.
#[test]
fn a_high_water_mark_at_the_newest_grant_is_equal_and_below_after_the_next_grant() {
    for token in [1, 7] {
        let seen = texts(
            h().at(0)
                .grant("job", "w0", token)
                .sent("w0", 1, "job", token)
                .accept(1, "job", "w0", token)
                .expire("job", "w0", token)
                .grant("job", "w1", token + 1),
        );
        assert_eq!(
            seen,
            [
                "[lease=held store=empty inflight=none]",
                "[lease=held store=empty inflight=current]",
                "[lease=held store=equal inflight=none]",
                "[lease=free store=equal inflight=none]",
                "[lease=held store=below inflight=none]",
            ],
            "token {token}"
        );
    }
}

#[test]
fn nothing_is_visited_by_an_empty_history_and_one_state_before_any_grant() {
    assert!(visited(&h().build()).is_empty());
    let before = visited(&h().at(0).run_started(1_000).run_ended().build());
    assert_eq!(
        before.states.iter().collect::<Vec<_>>(),
        ["no lease granted"]
    );
    assert!(before.transitions.is_empty());
}

/// A recorded service's many leases: `n` scopes, each granted once and written once.
fn many_scopes(n: u64) -> H {
    let mut history = h();
    for i in 0..n {
        let (scope, worker) = (format!("job-{i}"), format!("w{i}"));
        history = history
            .at(2 * i)
            .grant(&scope, &worker, i + 1)
            .at(2 * i + 1)
            .accept(i + 1, &scope, &worker, i + 1);
    }
    history
}

/// Every abstract state lists every scope granted so far, so `n` scopes visit ~2n states of
/// up to n scopes each: written out in full, 10,000 scopes took more than 6 GB. Past
/// `COUNTED_ABOVE` scopes a state writes each distinct scope once with its count, so the
/// texts stay linear in the history, and the count of states and transitions is unchanged.
#[test]
fn a_recording_of_many_scopes_alike_stays_linear_in_its_states() {
    use crate::abstract_state::COUNTED_ABOVE;
    // At the threshold, every scope is written out, as in every catalogue run.
    let at = texts(many_scopes(COUNTED_ABOVE as u64));
    let full = "[lease=held store=equal inflight=none]";
    assert_eq!(at.last().unwrap(), &vec![full; COUNTED_ABOVE].join(" "));
    // One past it, the scopes alike are counted, and `visited` agrees with the naive walk.
    let past = texts(many_scopes(COUNTED_ABOVE as u64 + 1));
    assert_eq!(
        past.last().unwrap(),
        &format!("{}x{full}", COUNTED_ABOVE + 1)
    );
    assert_eq!(
        past[past.len() - 2],
        format!("[lease=held store=empty inflight=none] {COUNTED_ABOVE}x{full}")
    );
    let n = 400;
    let seen = visited(&many_scopes(n).build());
    assert_eq!(seen.states.len() as u64, 2 * n);
    assert_eq!(seen.transitions.len() as u64, 2 * n - 1);
    // Linear: at most ~100 bytes per state (written out in full: 400 × 40 bytes each).
    let bytes: usize = seen.states.iter().map(String::len).sum();
    assert!(bytes < 100 * 2 * n as usize, "{bytes} bytes of state texts");
}
