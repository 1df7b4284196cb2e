//! The version-1 history format is a contract with every system that records histories:
//! `wire_v1.jsonl` (committed, never regenerated) holds one line per event kind and per
//! nested variant, and must keep loading into exactly these events and re-serializing to
//! exactly its bytes. Renaming an internal field or variant without keeping the wire name
//! fails here.

use fencesim_model::{
    fence::Verdict,
    history::{
        unknown_ms,
        wire::{self, Strictness, Version},
        BeliefEnd, EffectVia, Event, EventKind, History, PauseKind,
    },
    lease::Denial,
};

const GOLDEN: &str = include_str!("wire_v1.jsonl");

fn event(t_ns: u64, node: &str, kind: EventKind) -> Event {
    Event {
        t_ns,
        node: node.into(),
        kind,
    }
}

/// The events of `wire_v1.jsonl`, line by line after the header.
#[expect(
    clippy::too_many_lines,
    reason = "a table: the golden file, event by event"
)]
fn expected() -> History {
    let granted = |expires_mono_ms| EventKind::Granted {
        scope: "job-1".into(),
        holder: "worker-0".into(),
        token: 7,
        expires_mono_ms,
    };
    let extended = |expires_mono_ms| EventKind::Extended {
        scope: "job-1".into(),
        holder: "worker-0".into(),
        token: 7,
        expires_mono_ms,
    };
    let denied = |denial| EventKind::Denied {
        scope: "job-1".into(),
        holder: "worker-1".into(),
        denial,
    };
    let fence = |verdict| EventKind::Fence {
        resource: "job-1".into(),
        writer: "worker-0".into(),
        token: 7,
        verdict,
    };
    let belief_ended = |why| EventKind::BeliefEnded {
        scope: "job-1".into(),
        token: 7,
        why,
        local_mono_ms: 12_000.5,
    };
    let side_effect = |via| EventKind::SideEffect {
        op: 3,
        resource: "job-1".into(),
        lease_scope: "job-1".into(),
        worker: "worker-0".into(),
        token: 7,
        via,
    };
    let paused = |kind| EventKind::Paused {
        kind,
        planned_ms: 15_000.0,
    };
    let kinds = vec![
        (
            "nemesis",
            EventKind::RunStarted {
                seed: 18_446_744_073_709_551_615,
                liveness_bound_ms: 30_000,
            },
        ),
        ("coordinator", granted(10_000.25)),
        ("coordinator", granted(unknown_ms())),
        (
            "coordinator",
            EventKind::Renewed {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 7,
            },
        ),
        (
            "coordinator",
            EventKind::Refused {
                scope: "job-1".into(),
                holder: "worker-1".into(),
                token: None,
                reason: "no lease".into(),
            },
        ),
        (
            "coordinator",
            EventKind::Refused {
                scope: "job-1".into(),
                holder: "worker-1".into(),
                token: Some(6),
                reason: "superseded by token 7 \"quoted\" \u{e9}".into(),
            },
        ),
        (
            "coordinator",
            denied(Denial::Held {
                holder: "worker-0".into(),
                token: 7,
            }),
        ),
        (
            "coordinator",
            denied(Denial::LockDelay {
                until_ns: 25_000_000_000,
            }),
        ),
        ("coordinator", denied(Denial::Conflict { version: 4 })),
        (
            "coordinator",
            EventKind::Expired {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 7,
            },
        ),
        (
            "coordinator",
            EventKind::Released {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 7,
            },
        ),
        (
            "worker-1",
            EventKind::TakenOver {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 7,
                by: "worker-1".into(),
            },
        ),
        (
            "coordinator",
            EventKind::Dropped {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 7,
            },
        ),
        ("coordinator", extended(40_000.0)),
        ("coordinator", extended(unknown_ms())),
        ("coordinator", EventKind::CountersLost),
        (
            "storage",
            EventKind::WritePresented {
                op: 1,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                writer: "worker-0".into(),
                token: 7,
            },
        ),
        (
            "storage",
            EventKind::WriteAccepted {
                op: 1,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                writer: "worker-0".into(),
                token: 7,
                previous: None,
            },
        ),
        (
            "storage",
            EventKind::WriteAccepted {
                op: 2,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                writer: "worker-0".into(),
                token: 7,
                previous: Some(6),
            },
        ),
        (
            "storage",
            EventKind::WriteRejected {
                op: 3,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                writer: "worker-0".into(),
                token: 6,
                accepted: Some(7),
                reason: "stale token".into(),
            },
        ),
        (
            "storage",
            EventKind::WriteRejected {
                op: 4,
                resource: "job-1".into(),
                lease_scope: "job-1".into(),
                writer: "worker-0".into(),
                token: 6,
                accepted: None,
                reason: "no epoch".into(),
            },
        ),
        (
            "storage",
            EventKind::TokenRead {
                op: 5,
                resource: "job-1".into(),
                writer: "worker-0".into(),
                stored: Some(7),
            },
        ),
        ("storage", fence(Verdict::Accepted { previous: None })),
        (
            "storage",
            fence(Verdict::Rejected {
                accepted: Some(8),
                reason: "epoch 8 is newer".into(),
            }),
        ),
        ("storage", EventKind::StorageStateLost),
        (
            "worker-0",
            EventKind::BeliefStarted {
                scope: "job-1".into(),
                token: 7,
                local_deadline_mono_ms: 9_500.125,
            },
        ),
        ("worker-0", belief_ended(BeliefEnd::Released)),
        ("worker-0", belief_ended(BeliefEnd::RenewFailed)),
        ("worker-0", belief_ended(BeliefEnd::DeadlinePassed)),
        ("worker-0", belief_ended(BeliefEnd::CheckFailed)),
        ("worker-0", belief_ended(BeliefEnd::WriteRejected)),
        ("worker-0", belief_ended(BeliefEnd::Crashed)),
        (
            "worker-0",
            EventKind::WriteSent {
                op: 6,
                resource: "job-1".into(),
                token: 7,
            },
        ),
        (
            "worker-0",
            EventKind::WriteAbandoned {
                op: 7,
                resource: "job-1".into(),
                token: 7,
                stored: None,
            },
        ),
        (
            "worker-0",
            EventKind::RenewFailed {
                scope: "job-1".into(),
                token: 7,
                reason: "timed out".into(),
            },
        ),
        ("worker-0", side_effect(EffectVia::Direct)),
        ("storage", side_effect(EffectVia::Outbox)),
        ("worker-0", paused(PauseKind::Gc)),
        (
            "worker-0",
            EventKind::Resumed {
                kind: PauseKind::Gc,
            },
        ),
        ("worker-1", paused(PauseKind::VmSuspend)),
        (
            "worker-1",
            EventKind::Resumed {
                kind: PauseKind::VmSuspend,
            },
        ),
        (
            "worker-0",
            EventKind::ClockStepped {
                delta_ms: -2_500.0,
                wall_ms: 1_700_000_000_000.0,
                mono_ms: 61_000.75,
            },
        ),
        ("storage", EventKind::Crashed),
        ("storage", EventKind::Restarted),
        (
            "nemesis",
            EventKind::PartitionStarted {
                from: vec!["worker-0".into()],
                to: vec![],
                one_way: false,
            },
        ),
        (
            "nemesis",
            EventKind::PartitionHealed {
                from: vec!["worker-0".into(), "worker-1".into()],
                to: vec!["coordinator".into()],
                one_way: true,
            },
        ),
        (
            "nemesis",
            EventKind::HoldStarted {
                from: "worker-0".into(),
                to: "storage".into(),
            },
        ),
        (
            "nemesis",
            EventKind::HoldReleased {
                from: "worker-0".into(),
                to: "storage".into(),
                released: 3,
            },
        ),
        (
            "worker-1",
            EventKind::Panicked {
                message: "index out of bounds: the len is 0 but the index is 0\nat line 2".into(),
            },
        ),
        ("nemesis", EventKind::FaultsHealed),
        ("nemesis", EventKind::RunEnded),
    ];
    History {
        events: kinds
            .into_iter()
            .enumerate()
            .map(|(i, (node, kind))| event(i as u64 * 1_000_000, node, kind))
            .collect(),
    }
}

/// The wire name of every event kind. No wildcard: a new kind does not compile until it is
/// named here, and [`the_golden_file_has_every_event_kind`] then wants a line of it.
fn kind_name(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::RunStarted { .. } => "run-started",
        EventKind::FaultsHealed => "faults-healed",
        EventKind::RunEnded => "run-ended",
        EventKind::Granted { .. } => "granted",
        EventKind::Renewed { .. } => "renewed",
        EventKind::Refused { .. } => "refused",
        EventKind::Denied { .. } => "denied",
        EventKind::Expired { .. } => "expired",
        EventKind::Released { .. } => "released",
        EventKind::TakenOver { .. } => "taken-over",
        EventKind::Dropped { .. } => "dropped",
        EventKind::Extended { .. } => "extended",
        EventKind::CountersLost => "counters-lost",
        EventKind::WritePresented { .. } => "write-presented",
        EventKind::WriteAccepted { .. } => "write-accepted",
        EventKind::WriteRejected { .. } => "write-rejected",
        EventKind::TokenRead { .. } => "token-read",
        EventKind::Fence { .. } => "fence",
        EventKind::StorageStateLost => "storage-state-lost",
        EventKind::BeliefStarted { .. } => "belief-started",
        EventKind::BeliefEnded { .. } => "belief-ended",
        EventKind::WriteSent { .. } => "write-sent",
        EventKind::WriteAbandoned { .. } => "write-abandoned",
        EventKind::RenewFailed { .. } => "renew-failed",
        EventKind::SideEffect { .. } => "side-effect",
        EventKind::Paused { .. } => "paused",
        EventKind::Resumed { .. } => "resumed",
        EventKind::ClockStepped { .. } => "clock-stepped",
        EventKind::Crashed => "crashed",
        EventKind::Restarted => "restarted",
        EventKind::PartitionStarted { .. } => "partition-started",
        EventKind::PartitionHealed { .. } => "partition-healed",
        EventKind::HoldStarted { .. } => "hold-started",
        EventKind::HoldReleased { .. } => "hold-released",
        EventKind::Panicked { .. } => "panicked",
    }
}

/// How many kinds `kind_name` names (the golden file must hold each).
const KIND_COUNT: usize = 35;

#[test]
fn the_golden_file_loads_into_the_expected_events() {
    let loaded = wire::parse_jsonl(GOLDEN, Strictness::Lenient).unwrap();
    let expected = expected();
    assert_eq!(loaded.events.len(), expected.events.len());
    for (index, (got, want)) in loaded.events.iter().zip(&expected.events).enumerate() {
        // NaN (an absent `expires_mono_ms`) is not equal to itself: compare it by bits.
        let same = got == want || format!("{got:?}") == format!("{want:?}");
        assert!(same, "line {}: {got:?} != {want:?}", index + 2);
    }
}

#[test]
fn the_expected_events_serialize_to_the_golden_bytes() {
    let written = expected().to_jsonl();
    for (index, (got, want)) in written.lines().zip(GOLDEN.lines()).enumerate() {
        assert_eq!(got, want, "line {}", index + 1);
    }
    assert_eq!(written, GOLDEN);
}

#[test]
fn the_golden_file_reads_the_same_strictly() {
    // Every kind's every field, each with its type and nothing else: what check-history reads.
    let strict = wire::parse_jsonl(GOLDEN, Strictness::Strict).unwrap();
    let lenient = wire::parse_jsonl(GOLDEN, Strictness::Lenient).unwrap();
    assert_eq!(format!("{strict:?}"), format!("{lenient:?}"));
    // Strictly, an unknown field is refused and named; leniently it is ignored.
    let body = GOLDEN.lines().nth(1).unwrap();
    let extra = body.replacen('{', r#"{"extra":1,"#, 1);
    assert!(wire::parse_jsonl(&extra, Strictness::Lenient).is_ok());
    let error = wire::parse_jsonl(&extra, Strictness::Strict).unwrap_err();
    assert_eq!((error.line, error.field.as_str()), (1, "extra"), "{error}");
}

#[test]
fn the_golden_file_has_every_event_kind() {
    let loaded = wire::parse_jsonl(GOLDEN, Strictness::Lenient).unwrap();
    let names: std::collections::BTreeSet<&str> =
        loaded.events.iter().map(|e| kind_name(&e.kind)).collect();
    assert_eq!(names.len(), KIND_COUNT, "{names:?}");
    // And each line's `event` is the name the match gives: the tag is the wire name.
    for (line, event) in GOLDEN.lines().skip(1).zip(&loaded.events) {
        let tag = format!(r#""event":"{}""#, kind_name(&event.kind));
        assert!(line.contains(&tag), "{line} lacks {tag}");
    }
}

#[test]
fn the_golden_file_starts_with_the_version_1_header() {
    let first = GOLDEN.lines().next().unwrap();
    assert_eq!(first, r#"{"schema":"fencesim-history","version":1}"#);
    assert_eq!(wire::header_line(), first);
    assert_eq!(wire::header(first), Ok(Some(Version::V1)));
}

#[test]
fn a_file_without_header_is_read_as_version_1() {
    let body: String = GOLDEN.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let loaded = wire::parse_jsonl(&body, Strictness::Lenient).unwrap();
    assert_eq!(format!("{loaded:?}"), format!("{:?}", expected()));
    // The first event line is not mistaken for a header.
    assert_eq!(wire::header(body.lines().next().unwrap()), Ok(None));
}

/// A byte-order mark before the header (an editor on Windows) is not part of the header, and
/// a header naming a field twice is refused naming it (a JSON parser would keep the last).
#[test]
fn a_byte_order_mark_is_skipped_and_a_repeated_header_field_refused() {
    for strictness in [Strictness::Lenient, Strictness::Strict] {
        let loaded = wire::parse_jsonl(&format!("\u{feff}{GOLDEN}"), strictness).unwrap();
        assert_eq!(format!("{loaded:?}"), format!("{:?}", expected()));
    }
    let twice = r#"{"schema":"fencesim-history","version":1,"version":99}"#;
    let error = wire::header(twice).unwrap_err();
    assert_eq!(error.field, "version", "{error:?}");
    assert!(error.message.contains("given twice"), "{error:?}");
    let body: String = GOLDEN.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let error = wire::parse_jsonl(&format!("{twice}\n{body}"), Strictness::Lenient).unwrap_err();
    assert_eq!(
        (error.line, error.field.as_str()),
        (1, "version"),
        "{error:?}"
    );
}

#[test]
fn every_event_round_trips_one_line_at_a_time() {
    for event in expected().events {
        let line = wire::event_line(&event);
        let back = wire::parse_event(Version::V1, &line).unwrap();
        assert_eq!(format!("{back:?}"), format!("{event:?}"), "{line}");
        assert_eq!(
            wire::event_value(&event),
            serde_json::from_str::<serde_json::Value>(&line).unwrap()
        );
    }
}

#[test]
fn unknown_versions_and_schemas_are_refused_on_line_1() {
    let body = GOLDEN.lines().nth(1).unwrap();
    let check = |header: &str, field: &str, says: &str| {
        let error =
            wire::parse_jsonl(&format!("{header}\n{body}\n"), Strictness::Lenient).unwrap_err();
        assert_eq!((error.line, error.field.as_str()), (1, field), "{error}");
        assert!(error.message.contains(says), "{header}: {error}");
    };
    check(
        r#"{"schema":"fencesim-history","version":2}"#,
        "version",
        "expected a schema version this fencesim reads (1), got 2",
    );
    check(
        r#"{"schema":"fencesim-history","version":"1"}"#,
        "version",
        "got \"1\"",
    );
    check(r#"{"schema":"fencesim-history"}"#, "version", "missing");
    check(
        r#"{"schema":"jepsen-history","version":1}"#,
        "schema",
        "expected \"fencesim-history\" (a fencesim history file), got \"jepsen-history\"",
    );
    check(
        r#"{"schema":"fencesim-history","version":1,"writer":"x"}"#,
        "writer",
        "not a field of the header",
    );
    // Blank lines before the header: it is still the first line that counts.
    let error =
        wire::parse_jsonl("\n{\"schema\":\"x\",\"version\":1}\n", Strictness::Lenient).unwrap_err();
    assert_eq!(error.line, 2);
    // A header anywhere else is not an event.
    assert!(wire::parse_jsonl(
        &format!("{body}\n{}\n", wire::header_line()),
        Strictness::Lenient
    )
    .is_err());
}

#[test]
fn the_documented_histories_without_header_still_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/histories");
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(&path).unwrap();
            let history = wire::parse_jsonl(&text, Strictness::Lenient)
                .unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert_eq!(
                history.events.len(),
                text.lines().filter(|l| !l.trim().is_empty()).count()
            );
            // Written back with the header, then the same lines.
            let written = history.to_jsonl();
            let (header, rest) = written.split_once('\n').unwrap();
            assert_eq!(header, wire::header_line());
            assert_eq!(rest, text, "{path:?}");
            files += 1;
        }
    }
    assert!(files >= 2, "{files} files");
}

/// The trace hash of every golden event, and of the whole file: the hash's encoding
/// (`history/encode`) is fixed, so a refactor of it must keep these.
#[test]
fn the_golden_events_trace_hashes_are_pinned() {
    let history = expected();
    let each: Vec<String> = history
        .events
        .iter()
        .map(|event| {
            History {
                events: vec![event.clone()],
            }
            .trace_hash()
        })
        .collect();
    assert_eq!(history.trace_hash(), "9bb0697de86cad47");
    assert_eq!(
        each.join(","),
        "134796acad38836e,c99fd042d49e730e,16b324c7e2452499,4b740baf13625c5e,1144e35dbc4c39a7,\
         5460c4130369c65e,c0aef3f174738a58,b177141c633413b6,3b87c99ca8a14606,34e1cc0700f064e9,\
         ceb90fb389916929,eeb07d85980b91b2,8dc7a2d0d8678233,0c450a9c9d93065e,791a6fbe39c939a3,\
         d9d01b61373c24c4,c8925d26e5f751fa,2c62f708a697cec5,9786cceb226cf99c,6248d3a371760542,\
         7f6f93f4281267a9,8d66a72e9cada2d6,d56b8181014b3ac7,993dc04e386f9954,52829b2388f2e607,\
         cd9ab78aa7ad67ad,2fbe1ddb7da840ed,fcd136a99b5f5c03,8c3045b134ac603b,4a54a8694770034b,\
         e8448a37a571b98f,02983997cf005630,68a5db3fa999b220,b8c43210cfbb5139,10dba3364750ca91,\
         01bb414563d7ee33,621e7f63392557b9,7bf45fbe2a9e2d35,ff1571d85761e078,398b56d0a5bae910,\
         9fb4c15558b74a06,454b016266361ce4,bb81bf6a502461aa,448543524a45a755,6700a6da9394ca4f,\
         b5104c5b486e6e67,5584703c19d972ec,37b63a05d5a3a54a,33d44a0e0ebb7da7,ff4927bb574587c3,\
         1c812942288b20c7"
    );
}
