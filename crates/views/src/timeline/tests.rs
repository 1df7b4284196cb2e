use fencesim_model::{fence::Verdict, Invariant};

use super::*;

const MS: u64 = NS_PER_MS;

fn nodes() -> Vec<String> {
    ["coordinator", "storage", "worker-0", "worker-1"]
        .map(String::from)
        .to_vec()
}

fn granted(holder: &str, token: u64, expires_mono_ms: f64) -> EventKind {
    EventKind::Granted {
        scope: "job-1".into(),
        holder: holder.into(),
        token,
        expires_mono_ms,
    }
}

fn accepted(op: u64, writer: &str, token: u64, previous: Option<u64>) -> EventKind {
    EventKind::WriteAccepted {
        op,
        resource: "job-1".into(),
        lease_scope: "job-1".into(),
        writer: writer.into(),
        token,
        previous,
    }
}

fn rejected(op: u64, writer: &str, token: u64, accepted: u64) -> EventKind {
    EventKind::WriteRejected {
        op,
        resource: "job-1".into(),
        lease_scope: "job-1".into(),
        writer: writer.into(),
        token,
        accepted: Some(accepted),
        reason: "stale token".into(),
    }
}

fn sent(op: u64, token: u64) -> EventKind {
    EventKind::WriteSent {
        op,
        resource: "job-1".into(),
        token,
    }
}

fn belief(token: u64, deadline_ms: f64) -> EventKind {
    EventKind::BeliefStarted {
        scope: "job-1".into(),
        token,
        local_deadline_mono_ms: deadline_ms,
    }
}

/// Seed 000's story: worker-0 acquires 41, pauses past its TTL, worker-1 acquires 42 and
/// writes, worker-0 resumes and its stale write arrives. `last_write` is the storage's
/// verdict on it (index 12).
fn textbook(last_write: EventKind) -> History {
    let mut h = History::default();
    h.push(0, "coordinator", granted("worker-0", 41, 10_000.0)); // 0
    h.push(MS / 2, "worker-0", belief(41, 10_000.0)); // 1
    h.push(1_000 * MS, "worker-0", sent(7, 41)); // 2
    h.push(1_001 * MS, "storage", accepted(7, "worker-0", 41, None)); // 3
    h.push(
        5_000 * MS,
        "worker-0",
        EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms: 15_000.0,
        },
    ); // 4
    h.push(
        10_000 * MS,
        "coordinator",
        EventKind::Expired {
            scope: "job-1".into(),
            holder: "worker-0".into(),
            token: 41,
        },
    ); // 5
    h.push(
        10_001 * MS,
        "coordinator",
        granted("worker-1", 42, 20_001.0),
    ); // 6
    h.push(10_002 * MS, "worker-1", belief(42, 20_002.0)); // 7
    h.push(10_500 * MS, "worker-1", sent(8, 42)); // 8
    h.push(
        10_501 * MS,
        "storage",
        accepted(8, "worker-1", 42, Some(41)),
    ); // 9
    h.push(
        12_000 * MS,
        "nemesis",
        EventKind::PartitionStarted {
            from: vec!["worker-0".into()],
            to: vec![],
            one_way: false,
        },
    ); // 10
    h.push(
        20_000 * MS,
        "worker-0",
        EventKind::Resumed {
            kind: PauseKind::Gc,
        },
    ); // 11
    h.push(20_002 * MS + 123_456, "storage", last_write); // 12
    h.push(
        21_000 * MS,
        "worker-1",
        EventKind::ClockStepped {
            delta_ms: -128.0,
            wall_ms: 0.0,
            mono_ms: 0.0,
        },
    ); // 13
    h
}

fn i4_violation() -> Violation {
    Violation {
        invariant: Invariant::I4,
        scope: "job-1".into(),
        t_ns: 20_002 * MS + 123_456,
        message: "storage accepted op#9 with token 41 from worker-0 after token 42 was granted to worker-1 at 10001.000ms".into(),
        evidence: vec![6, 12],
    }
}

/// The line whose time column reads `time` (e.g. `"5000.000"`).
fn line_at<'a>(out: &'a str, time: &str) -> &'a str {
    out.lines()
        .find(|line| line.trim_start().starts_with(&format!("{time} ")))
        .unwrap_or_else(|| panic!("no line at {time} in\n{out}"))
}

/// The character position where `node`'s column starts (from the header row).
fn column_start(out: &str, node: &str) -> usize {
    let header = out.lines().next().unwrap();
    header
        .find(node)
        .unwrap_or_else(|| panic!("no column {node} in {header:?}"))
}

fn char_at(line: &str, position: usize) -> Option<char> {
    line.chars().nth(position)
}

fn assert_within_width(out: &str) {
    for line in out.lines() {
        assert!(
            line.chars().count() <= MAX_LINE_CHARS,
            "{} chars: {line}",
            line.chars().count()
        );
        assert_eq!(line, line.trim_end(), "trailing spaces");
    }
}

#[test]
fn exact_small_timeline() {
    let mut h = History::default();
    h.push(0, "coordinator", granted("worker-0", 41, 10_000.0));
    h.push(MS / 2, "worker-0", belief(41, 10_000.0));
    h.push(
        5_000 * MS,
        "worker-0",
        EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms: 15_000.0,
        },
    );
    h.push(
        10_000 * MS,
        "coordinator",
        granted("worker-1", 42, 20_000.0),
    );
    h.push(
        20_000 * MS,
        "worker-0",
        EventKind::Resumed {
            kind: PauseKind::Gc,
        },
    );
    h.push(
        20_001 * MS,
        "storage",
        accepted(9, "worker-0", 41, Some(42)),
    );
    let violation = Violation {
        invariant: Invariant::I3,
        scope: "job-1".into(),
        t_ns: 20_001 * MS,
        message: "op#9 token 41 accepted after 42".into(),
        evidence: vec![3, 5],
    };
    let expect = "
     t (ms)  coordinator                                      storage                                          worker-0
-----------  -----------------------------------------------  -----------------------------------------------  -----------------------------------------------
      0.000  grant job-1 token=41 -> worker-0, expires mono 10000ms
      0.500                                                                                                    acquire job-1 token=41 (deadline mono 10000ms)
   5000.000                                                                                                    GC pause 15000ms
  10000.000  !! grant job-1 token=42 -> worker-1, expires mono 20000ms                                         :
  20000.000                                                                                                    resumed
  20001.000                                                   !! write op#9 token=41 -> ACCEPTED by worker-0 on job-1 (previous 42)
!! I3 violated: op#9 token 41 accepted after 42
";
    let actual = render(&h, &[violation], &nodes()[..3]);
    if actual != expect[1..] {
        panic!("expected:\n{}\nactual:\n{actual}", &expect[1..]);
    }
}

#[test]
fn cells_land_in_their_node_columns() {
    let out = render(&textbook(rejected(9, "worker-0", 41, 42)), &[], &nodes());
    // (time, node column, cell text)
    let cases = [
        ("0.000", "coordinator", "grant job-1 token=41 -> worker-0"),
        ("0.500", "worker-0", "acquire job-1 token=41"),
        ("1000.000", "worker-0", "write op#7 token=41 sent (job-1)"),
        (
            "1001.000",
            "storage",
            "write op#7 token=41 -> ACCEPTED by worker-0 on job-1",
        ),
        ("5000.000", "worker-0", "GC pause 15000ms"),
        (
            "10000.000",
            "coordinator",
            "lease job-1 token=41 EXPIRED (worker-0)",
        ),
        ("10002.000", "worker-1", "acquire job-1 token=42"),
        ("12000.000", "other", "nemesis: partition worker-0 | *"),
        ("20000.000", "worker-0", "resumed"),
        (
            "20002.123",
            "storage",
            "write op#9 token=41 -> REJECTED (accepted 42)",
        ),
        ("21000.000", "worker-1", "clock step -128ms"),
    ];
    for (time, node, text) in cases {
        let line = line_at(&out, time);
        let start = column_start(&out, node);
        let cell: String = line.chars().skip(start).collect();
        assert!(
            cell.starts_with(text),
            "at {time} column {node}: {cell:?}\n{out}"
        );
    }
    assert_within_width(&out);
    assert!(!out.contains("!!"), "no violations, no marks:\n{out}");
}

#[test]
fn pauses_draw_a_marker_until_resumed() {
    let out = render(&textbook(rejected(9, "worker-0", 41, 42)), &[], &nodes());
    let column = column_start(&out, "worker-0");
    for time in ["10000.000", "10001.000", "10002.000", "12000.000"] {
        assert_eq!(
            char_at(line_at(&out, time), column),
            Some(':'),
            "at {time}:\n{out}"
        );
    }
    for time in ["1001.000", "20002.123", "21000.000"] {
        assert_ne!(
            char_at(line_at(&out, time), column),
            Some(':'),
            "at {time}:\n{out}"
        );
    }

    // An event's text runs on over the marker rather than being cut by it.
    let line = line_at(&out, "10501.000");
    assert!(
        line.contains("write op#8 token=42 -> ACCEPTED by worker-1 on job-1"),
        "{line}"
    );

    // A VM suspend draws `|`; a crash ends the pause.
    let mut h = History::default();
    h.push(
        0,
        "worker-1",
        EventKind::Paused {
            kind: PauseKind::VmSuspend,
            planned_ms: 60_000.0,
        },
    );
    h.push(MS, "coordinator", EventKind::CountersLost);
    h.push(2 * MS, "worker-1", EventKind::Crashed);
    h.push(3 * MS, "coordinator", EventKind::CountersLost);
    let out = render(&h, &[], &nodes());
    let column = column_start(&out, "worker-1");
    assert!(line_at(&out, "0.000").contains("VM suspend 60000ms"));
    assert_eq!(
        char_at(line_at(&out, "1.000"), column),
        Some('|'),
        "\n{out}"
    );
    assert_eq!(char_at(line_at(&out, "3.000"), column), None, "\n{out}");
}

#[test]
fn violations_are_marked_after_their_last_evidence() {
    let out = render(
        &textbook(accepted(9, "worker-0", 41, Some(42))),
        &[i4_violation()],
        &nodes(),
    );
    let lines: Vec<&str> = out.lines().collect();
    let marked: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| line.contains("!! "))
        .collect();
    assert_eq!(marked.len(), 3, "\n{out}");
    assert!(
        marked[0].contains("!! grant job-1 token=42 -> worker-1"),
        "{}",
        marked[0]
    );
    assert!(
        marked[1].contains("!! write op#9 token=41 -> ACCEPTED by worker-0"),
        "{}",
        marked[1]
    );
    assert!(
        marked[2].starts_with("!! I4 violated: storage accepted op#9"),
        "{}",
        marked[2]
    );
    let accepted_line = lines
        .iter()
        .position(|line| line.contains("!! write op#9"))
        .unwrap();
    assert!(
        lines[accepted_line + 1].starts_with("!! I4 violated:"),
        "\n{out}"
    );
    assert_within_width(&out);
}

#[test]
fn violation_without_valid_evidence_is_placed_by_time() {
    let history = textbook(accepted(9, "worker-0", 41, Some(42)));
    let mut late = i4_violation();
    late.evidence = vec![99];
    late.t_ns = 12_000 * MS;
    let mut early = i4_violation();
    early.evidence = vec![];
    early.t_ns = 0;
    early.invariant = Invariant::I5;
    let mut before_all = i4_violation();
    before_all.evidence = vec![];
    before_all.invariant = Invariant::I1;
    let mut empty = History::default();
    let out = render(&history, &[late, early], &nodes());
    let lines: Vec<&str> = out.lines().collect();
    let at = |prefix: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(prefix))
            .unwrap()
    };
    assert_eq!(
        at("!! I4 violated"),
        lines.iter().position(|l| l.contains("12000.000")).unwrap() + 1
    );
    assert_eq!(at("!! I5 violated"), 3, "after the event at 0 ms:\n{out}");
    assert!(
        !out.contains("!! grant"),
        "out-of-range evidence marks nothing:\n{out}"
    );

    empty.events.clear();
    before_all.t_ns = 0;
    let out = render(&empty, &[before_all], &nodes());
    assert_eq!(
        out.lines().nth(2).unwrap(),
        format!("!! I1 violated: {}", i4_violation().message)
    );
}

#[test]
fn lines_stay_within_width() {
    let long = "x".repeat(400);
    let mut h = textbook(rejected(9, "worker-0", 41, 42));
    h.push(
        22_000 * MS,
        "storage",
        EventKind::Panicked {
            message: format!("line one\nline two {long}"),
        },
    );
    h.push(
        23_000 * MS,
        "sink",
        EventKind::RenewFailed {
            scope: long.clone(),
            token: 1,
            reason: long.clone(),
        },
    );
    let mut wordy = i4_violation();
    wordy.message = format!("{} {long}", "word ".repeat(80));
    let out = render(&h, &[wordy], &nodes());
    assert_within_width(&out);
    let violation_lines = out.lines().filter(|line| line.starts_with("!!")).count();
    assert!(violation_lines >= 3, "long messages wrap:\n{out}");
    assert!(out.contains("..."), "long cells are cut:\n{out}");
    assert!(
        !out.contains("line two\n"),
        "newlines in cells are flattened"
    );

    // Many workers: every column shrinks but the grid stays within the limit.
    let many: Vec<String> = (0..12).map(fencesim_model::nodes::worker).collect();
    let mut h = History::default();
    for (i, node) in many.iter().enumerate() {
        h.push(
            i as u64 * MS,
            node.as_str(),
            belief(100 + i as u64, 10_000.0),
        );
    }
    let out = render(&h, &[], &many);
    assert_within_width(&out);
}

#[test]
fn rendering_is_deterministic_and_other_column_only_when_needed() {
    let history = textbook(accepted(9, "worker-0", 41, Some(42)));
    let a = render(&history, &[i4_violation()], &nodes());
    assert_eq!(a, render(&history, &[i4_violation()], &nodes()));
    assert!(a.lines().next().unwrap().ends_with("other"));

    let mut no_other = history.clone();
    no_other.events.retain(|event| event.node != "nemesis");
    let out = render(&no_other, &[], &nodes());
    assert!(!out.lines().next().unwrap().contains("other"), "\n{out}");
    // Duplicate node names give one column.
    let doubled: Vec<String> = nodes().into_iter().chain(nodes()).collect();
    assert_eq!(render(&no_other, &[], &doubled), out);
}

#[test]
fn render_violation_lists_evidence_then_message() {
    let history = textbook(accepted(9, "worker-0", 41, Some(42)));
    let mut violation = i4_violation();
    violation.evidence.push(50);
    let expect = "
  10001.000 ms  coordinator  grant job-1 token=42 -> worker-1, expires mono 20001ms
  20002.123 ms  storage      write op#9 token=41 -> ACCEPTED by worker-0 on job-1 (previous 42)
                             (event #50 is not in the history)
I4 violated (no superseded accept, scope job-1): storage accepted op#9 with token 41 from worker-0 after token 42 was granted to worker-1 at 10001.000ms
";
    assert_eq!(render_violation(&history, &violation), expect[1..]);
}

#[expect(clippy::too_many_lines, reason = "a table: one line per event kind")]
#[test]
fn event_texts() {
    let cases: Vec<(EventKind, &str)> = vec![
        (
            EventKind::RunStarted {
                seed: 7,
                liveness_bound_ms: 50_000,
            },
            "run started seed=7, liveness bound 50000ms",
        ),
        (EventKind::FaultsHealed, "all faults healed"),
        (
            EventKind::Refused {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: None,
                reason: "expired".into(),
            },
            "refuse job-1 token=none (worker-0): expired",
        ),
        (
            EventKind::Denied {
                scope: "job-1".into(),
                holder: "worker-1".into(),
                denial: Denial::Held {
                    holder: "worker-0".into(),
                    token: 41,
                },
            },
            "deny job-1 to worker-1: held by worker-0 token=41",
        ),
        (
            EventKind::Denied {
                scope: "job-1".into(),
                holder: "worker-1".into(),
                denial: Denial::LockDelay {
                    until_ns: 15_000 * MS + 500_000,
                },
            },
            "deny job-1 to worker-1: lock-delay until 15000.500ms",
        ),
        (
            EventKind::Extended {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 41,
                expires_mono_ms: 12_000.25,
            },
            "restart kept job-1 token=41 (worker-0), expires mono 12000.25ms",
        ),
        (
            rejected(9, "worker-0", 41, 42),
            "write op#9 token=41 -> REJECTED (accepted 42) by worker-0 on job-1: stale token",
        ),
        (
            EventKind::Fence {
                resource: "job-1".into(),
                writer: "worker-1".into(),
                token: 42,
                verdict: Verdict::Rejected {
                    accepted: Some(43),
                    reason: "older epoch".into(),
                },
            },
            "fence job-1 token=42 by worker-1 -> REJECTED (accepted 43): older epoch",
        ),
        (
            EventKind::BeliefEnded {
                scope: "job-1".into(),
                token: 41,
                why: BeliefEnd::DeadlinePassed,
                local_mono_ms: 1.0,
            },
            "stop job-1 token=41: local deadline passed",
        ),
        (
            EventKind::WriteAbandoned {
                op: 3,
                resource: "job-1".into(),
                token: 41,
                stored: Some(42),
            },
            "write op#3 token=41 abandoned: stored token=42",
        ),
        (
            EventKind::SideEffect {
                op: 3,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                worker: "worker-0".into(),
                token: 41,
                via: EffectVia::Direct,
            },
            "side effect op#3 token=41 by worker-0 on job-1 (direct)",
        ),
        (
            EventKind::Paused {
                kind: PauseKind::VmSuspend,
                planned_ms: 0.5,
            },
            "VM suspend 0.5ms",
        ),
        (
            EventKind::ClockStepped {
                delta_ms: 128.0,
                wall_ms: 0.0,
                mono_ms: 0.0,
            },
            "clock step +128ms",
        ),
        (EventKind::Crashed, "crash"),
        (
            EventKind::PartitionStarted {
                from: vec!["worker-0".into()],
                to: vec!["storage".into()],
                one_way: true,
            },
            "partition worker-0 -> storage",
        ),
        (
            EventKind::PartitionHealed {
                from: vec!["a".into(), "b".into()],
                to: vec![],
                one_way: false,
            },
            "heal partition a,b | *",
        ),
        (
            EventKind::HoldReleased {
                from: "worker-0".into(),
                to: "storage".into(),
                released: 3,
            },
            "release held worker-0 -> storage (3 messages)",
        ),
        (
            EventKind::Panicked {
                message: "index out of bounds".into(),
            },
            "PANIC: index out of bounds",
        ),
    ];
    for (kind, expect) in cases {
        assert_eq!(event_text(&kind), expect);
    }
}

/// `render_with` collapsing, on columns storage and worker-0: the rows after the two header
/// lines, with runs of spaces shown as one.
fn check_collapsed(history: &History, violations: &[Violation], expect: &[&str]) {
    let options = TimelineOptions {
        collapse: true,
        ..Default::default()
    };
    let out = render_with(
        history,
        violations,
        &["storage".into(), "worker-0".into()],
        &options,
    );
    let rows: Vec<String> = out
        .lines()
        .skip(2)
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows, expect, "\n{out}");
}

#[test]
fn routine_writes_collapse_until_something_else_happens() {
    let mut h = History::default();
    for op in 1..=3 {
        h.push(op * 100 * MS, "worker-0", sent(op, 41));
        h.push(
            op * 100 * MS + 5 * MS,
            "storage",
            accepted(op, "worker-0", 41, Some(41)),
        );
    }
    h.push(
        400 * MS,
        "worker-0",
        EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms: 10.0,
        },
    );
    h.push(500 * MS, "worker-0", sent(4, 41));
    h.push(505 * MS, "storage", accepted(4, "worker-0", 41, Some(41)));
    h.push(600 * MS, "worker-0", sent(5, 41));
    h.push(605 * MS, "storage", rejected(5, "worker-0", 41, 42));
    check_collapsed(
        &h,
        &[],
        &[
            "100.000 op#1..#3 x3 job-1 token=41 ACCEPTED to 305.000",
            "400.000 GC pause 10ms",
            "500.000 write op#4 job-1 token=41 ACCEPTED at 505.000",
            "600.000 write op#5 token=41 sent (job-1)",
            "605.000 write op#5 token=41 -> REJECTED (accepted 42) by worker-0 on job-1: stale token",
        ],
    );
}

#[test]
fn evidence_never_collapses() {
    let mut h = History::default();
    for op in 1..=3 {
        h.push(op * 100 * MS, "worker-0", sent(op, 41));
        h.push(
            op * 100 * MS + 5 * MS,
            "storage",
            accepted(op, "worker-0", 41, Some(41)),
        );
    }
    let violation = Violation {
        evidence: vec![3],
        t_ns: 205 * MS,
        ..i4_violation()
    };
    let out = render_with(
        &h,
        &[violation],
        &["storage".into(), "worker-0".into()],
        &TimelineOptions {
            collapse: true,
            ..Default::default()
        },
    );
    assert!(
        out.contains("write op#1 job-1 token=41 ACCEPTED at 105.000"),
        "{out}"
    );
    assert!(out.contains("!! write op#2 token=41 -> ACCEPTED"), "{out}");
    assert!(
        out.contains("write op#3 job-1 token=41 ACCEPTED at 305.000"),
        "{out}"
    );
}

#[test]
fn a_client_go_takeover_names_both_holders() {
    let text = event_text(&EventKind::TakenOver {
        scope: "job-1".into(),
        holder: "worker-0".into(),
        token: 1,
        by: "worker-1".into(),
    });
    assert_eq!(
        text,
        "lease job-1 token=1 TAKEN OVER by worker-1 (worker-0)"
    );
}
