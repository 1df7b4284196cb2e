use serde_json::Value;

use super::*;
use fencesim_testkit::{textbook_nodes, textbook_run};

fn trace() -> (Vec<Value>, History) {
    let (history, checked) = textbook_run();
    let json = perfetto_json(&history, &checked.violations, &textbook_nodes());
    assert_eq!(
        json,
        perfetto_json(&history, &checked.violations, &textbook_nodes())
    );
    let value: Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(value["displayTimeUnit"], "ms");
    (
        value["traceEvents"]
            .as_array()
            .expect("traceEvents")
            .clone(),
        history,
    )
}

#[test]
fn one_thread_track_per_node() {
    let (events, _) = trace();
    let threads: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            (
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        threads,
        [
            (1, "coordinator"),
            (2, "storage"),
            (3, "worker-0"),
            (4, "worker-1"),
            (5, "nemesis")
        ]
    );
    // Every other event is on one of those tracks.
    for event in events.iter().filter(|e| e["ph"] != "M") {
        let pid = event["pid"].as_u64().unwrap();
        assert!((1..=5).contains(&pid), "{event}");
        assert_eq!(event["tid"], event["pid"], "{event}");
    }
}

#[test]
fn epochs_beliefs_and_pauses_are_slices() {
    let (events, _) = trace();
    let find = |ph: &str, name: &str| {
        events
            .iter()
            .find(|e| e["ph"] == ph && e["name"] == name)
            .unwrap_or_else(|| panic!("no {ph} {name}"))
            .clone()
    };
    let epoch = find("b", "job-1: token 1 \u{2192} worker-0");
    assert_eq!(
        (epoch["pid"].as_u64(), epoch["ts"].as_f64()),
        (Some(1), Some(184.0))
    );
    let end = find("e", "job-1: token 1 \u{2192} worker-0");
    assert_eq!(end["ts"].as_f64(), Some(10_000_000.0), "ends at the expiry");
    assert_eq!(end["id"], epoch["id"]);
    let belief = find("b", "believes job-1 token 1");
    assert_eq!(belief["pid"], 3);
    let pause = find("X", "GC pause");
    assert_eq!(
        (pause["ts"].as_f64(), pause["dur"].as_f64()),
        (Some(1e6), Some(15e6))
    );
    // Every begin has its end.
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(count("b"), count("e"));
}

#[test]
fn instants_carry_their_fields_and_violations_their_evidence() {
    let (events, history) = trace();
    let instants = events
        .iter()
        .filter(|e| e["ph"] == "i" && e["s"] == "t")
        .count();
    assert_eq!(instants, history.events.len(), "every event is an instant");
    let stale = events
        .iter()
        .find(|e| e["ph"] == "i" && e["args"]["event"] == "write-accepted" && e["args"]["op"] == 3)
        .expect("the stale accept");
    assert_eq!(stale["cat"], "storage");
    assert_eq!(stale["args"]["token"], 1);
    assert_eq!(stale["args"]["previous"], 2);
    let i4 = events
        .iter()
        .find(|e| e["cat"] == "violation" && e["args"]["invariant"] == "I4")
        .expect("the I4 violation");
    assert_eq!(i4["s"], "g");
    let evidence = i4["args"]["evidence"].as_array().unwrap();
    assert_eq!(evidence.len(), 3);
    assert_eq!(evidence[0]["node"], "coordinator");
    assert!(evidence[2]["event"]
        .as_str()
        .unwrap()
        .contains("op#3 token=1 -> ACCEPTED"));
}

#[test]
fn flow_arrows_go_from_each_violation_to_each_of_its_evidence_events() {
    let (events, history) = trace();
    let (_, checked) = textbook_run();
    let flows = |ph: &str| -> Vec<&Value> { events.iter().filter(|e| e["ph"] == ph).collect() };
    let (starts, finishes) = (flows("s"), flows("f"));
    let expected: usize = checked.violations.iter().map(|v| v.evidence.len()).sum();
    assert!(expected > 0);
    assert_eq!(starts.len(), expected);
    assert_eq!(finishes.len(), expected);
    let mut ids: Vec<u64> = starts.iter().map(|e| e["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), expected, "one id per arrow");
    // Each arrow starts at its violation, on a zero-length slice of the violating node's
    // track, and ends at its evidence event's time on that event's track.
    let mut k = 0;
    for violation in &checked.violations {
        for index in &violation.evidence {
            let (start, finish) = (starts[k], finishes[k]);
            k += 1;
            assert_eq!(start["id"], finish["id"]);
            assert_eq!(start["ts"].as_f64().unwrap(), violation.t_ns as f64 / 1e3);
            assert!(events.iter().any(|e| e["ph"] == "X"
                && e["cat"] == "violation"
                && e["pid"] == start["pid"]
                && e["ts"] == start["ts"]));
            let event = &history.events[*index];
            assert_eq!(finish["ts"].as_f64().unwrap(), event.t_ns as f64 / 1e3);
            assert_eq!(finish["bp"], "e");
            let on_track = events
                .iter()
                .any(|e| e["ph"] == "i" && e["pid"] == finish["pid"] && e["ts"] == finish["ts"]);
            assert!(on_track, "{finish}");
        }
    }
}

#[test]
fn a_double_grant_ends_the_open_epoch_so_slices_stay_nested() {
    use fencesim_model::history::EventKind;
    let lease = |scope: &str, holder: &str, token| (scope.to_string(), holder.to_string(), token);
    let mut history = History::default();
    for (t_ns, kind) in [
        (0, "grant", lease("job", "w0", 1)),
        (10, "grant", lease("job", "w1", 2)),
        (20, "expire", lease("job", "w0", 1)),
        (30, "expire", lease("job", "w1", 2)),
    ]
    .map(|(t, what, (scope, holder, token))| {
        let kind = match what {
            "grant" => EventKind::Granted {
                scope,
                holder,
                token,
                expires_mono_ms: 0.0,
            },
            _ => EventKind::Expired {
                scope,
                holder,
                token,
            },
        };
        (t * 1_000, kind)
    }) {
        history.push(t_ns, "coordinator", kind);
    }
    let json = perfetto_json(&history, &[], &["coordinator".to_string()]);
    let value: Value = serde_json::from_str(&json).expect("valid JSON");
    let slices: Vec<(String, String, f64)> = value["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(|e| e["cat"] == "lease" && (e["ph"] == "b" || e["ph"] == "e"))
        .map(|e| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (
                text(&e["ph"]),
                text(&e["name"]),
                e["ts"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    let slice = |ph: &str, token: u64, holder: &str, ts: f64| {
        (
            ph.to_string(),
            format!("job: token {token} \u{2192} {holder}"),
            ts,
        )
    };
    // Token 1's epoch ends at the second grant (its tenure only at 20 µs); token 2's at its
    // own expiry, not at token 1's: begin and end alternate on the scope's track.
    assert_eq!(
        slices,
        [
            slice("b", 1, "w0", 0.0),
            slice("e", 1, "w0", 10.0),
            slice("b", 2, "w1", 10.0),
            slice("e", 2, "w1", 30.0),
        ]
    );
}

/// The trace is written out event by event (a runaway seed's million events kept as JSON
/// values took more than 6 GB): the text is exactly the whole document serialized at once,
/// so nothing a viewer reads changed.
#[test]
fn the_trace_written_event_by_event_is_the_whole_document_serialized_at_once() {
    let (history, checked) = textbook_run();
    let json = perfetto_json(&history, &checked.violations, &textbook_nodes());
    let value: Value = serde_json::from_str(&json).expect("valid JSON");
    let mut whole = serde_json::to_string(&value).unwrap();
    whole.push('\n');
    assert_eq!(json, whole);
    assert!(
        !checked.violations.is_empty(),
        "the violations are written too"
    );
    let empty = perfetto_json(&History::default(), &[], &[]);
    assert_eq!(empty, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[]}\n");
}
