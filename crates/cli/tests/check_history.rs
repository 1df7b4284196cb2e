//! `fencesim check-history`: a recorded trace gives the simulation's verdict, a hand-written
//! history of the textbook GC-pause anomaly is caught, malformed lines are named.

mod util;

use std::{path::Path, sync::Arc};

use fencesim::{replay, Components};
use util::{catalogue, fencesim};

fn histories() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/histories")
}

/// For a failing seed of each invariant, the trace judged offline gives the same violations
/// (every field, proofs included) and the same metrics as the simulation, and exit code 1.
#[test]
fn a_replayed_trace_gets_the_simulations_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, seed, expected) in [
        ("wall-clock-tokens-step-back", 0, "I1"),
        ("canary-double-grant", 0, "I2"),
        ("gc-pause-textbook-none", 0, "I3"),
        ("i4-gap-max-token", 0, "I4"),
        ("shared-lease-sticky-job-starves", 0, "I5"),
    ] {
        let scenario = Arc::new(fencesim_scenario::load(Path::new(&catalogue(name))).unwrap());
        let run = replay(&scenario, seed, &Components::default());
        assert!(run.failed(), "{name} seed {seed} fails in the simulation");
        let trace = tmp.path().join(format!("{name}.jsonl"));
        let json = tmp.path().join(format!("{name}.json"));
        run.write_trace(&trace).unwrap();

        let (code, stdout, stderr) = fencesim(
            &[
                "check-history",
                trace.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
            tmp.path(),
        );
        assert_eq!(code, 1, "{name}: {stdout}{stderr}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let simulated = &run.run.outcome.checked;
        let violated: Vec<String> = simulated.violated().iter().map(|i| i.to_string()).collect();
        assert!(
            violated.contains(&expected.to_string()),
            "{name}: {violated:?}"
        );
        assert_eq!(report["violated"], serde_json::json!(violated), "{name}");
        assert_eq!(report["trace_hash"], run.run.outcome.trace_hash.as_str());
        assert_eq!(report["verdict"], "violated");
        let offline = report["violations"].as_array().unwrap();
        assert_eq!(offline.len(), simulated.violations.len(), "{name}");
        for (offline, simulated) in offline.iter().zip(&simulated.violations) {
            let mut offline = offline.clone();
            let proof = offline.as_object_mut().unwrap().remove("proof").unwrap();
            assert_eq!(offline, serde_json::to_value(simulated).unwrap(), "{name}");
            let proof_events: Vec<serde_json::Value> = simulated
                .evidence
                .iter()
                .map(|&i| fencesim::model::history::wire::event_value(&run.run.history.events[i]))
                .collect();
            assert_eq!(proof, serde_json::json!(proof_events), "{name}");
        }
        assert_eq!(
            report["metrics"],
            serde_json::to_value(&simulated.metrics).unwrap(),
            "{name}"
        );
        assert!(
            stdout.contains(&format!("{expected} violated")),
            "{name}: {stdout}"
        );
    }
}

/// A passing seed's trace passes offline too (exit 0), every invariant judged.
#[test]
fn a_safe_trace_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = Arc::new(
        fencesim_scenario::load(Path::new(&catalogue("gc-pause-textbook-max-token"))).unwrap(),
    );
    let run = replay(&scenario, 0, &Components::default());
    assert!(!run.failed());
    let trace = tmp.path().join("safe.jsonl");
    run.write_trace(&trace).unwrap();
    let (code, stdout, _) = fencesim(&["check-history", trace.to_str().unwrap()], tmp.path());
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("verdict: no violation"), "{stdout}");
    assert!(!stdout.contains("not judged"), "{stdout}");
}

/// The seeds' story (worker A, lease 41, a GC pause, worker B with 42), written by hand as a
/// store with no fencing would record it: I3 and I4 violated, with the grant and the write
/// as proof; I5 not judged (no run boundaries). The same history where the store rejects
/// token 41 passes.
#[test]
fn the_hand_written_gc_pause_story_is_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let story = histories().join("gc-pause-lease-41.jsonl");
    let json = tmp.path().join("story.json");
    let (code, stdout, stderr) = fencesim(
        &[
            "check-history",
            story.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("verdict: VIOLATED I3, I4"), "{stdout}");
    // The story records no beliefs: held with nothing written, free, held again, then the
    // newer token written (the stale write leaves the high-water mark where it was).
    assert!(
        stdout.contains("== abstract states: 3 visited, 3 transitions between them"),
        "{stdout}"
    );
    assert!(
        stdout.contains("I5 not judged (liveness after heal): needs a `run-started` event"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let i4 = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["invariant"] == "I4")
        .unwrap();
    let proof = i4["proof"].as_array().unwrap();
    assert_eq!(proof.first().unwrap()["token"], 41);
    assert_eq!(proof[1]["token"], 42);
    assert_eq!(proof.last().unwrap()["event"], "write-accepted");
    assert_eq!(report["invariants"][4]["judged"], false);
    assert_eq!(report["metrics"]["paused_expiries"], 1);

    let fenced = histories().join("gc-pause-lease-41-fenced.jsonl");
    let (code, stdout, _) = fencesim(&["check-history", fenced.to_str().unwrap()], tmp.path());
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("stale_write_rejections=1"), "{stdout}");
}

/// Each malformed line is named by file, line and field; exit 2; no JSON written.
#[test]
fn malformed_lines_name_file_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let grant = r#"{"t_ns":0,"node":"c","event":"granted","scope":"j","holder":"a","token":1,"expires_mono_ms":1.0}"#;
    let cases: [(&str, &str); 9] = [
        ("not json", "h.jsonl:2: expected one JSON object per line"),
        ("[1,2]", "h.jsonl:2: expected a JSON object"),
        (
            r#"{"node":"c","event":"crashed"}"#,
            "h.jsonl:2: field `t_ns`: missing",
        ),
        (
            r#"{"t_ns":-1,"node":"c","event":"crashed"}"#,
            "h.jsonl:2: field `t_ns`: expected nanoseconds as an unsigned integer, got -1",
        ),
        (
            r#"{"t_ns":1,"node":"c","event":"grantd"}"#,
            "h.jsonl:2: field `event`: unknown variant `grantd`",
        ),
        (
            r#"{"t_ns":1,"node":"c","event":"granted","holder":"a","token":2,"expires_mono_ms":1.0}"#,
            "h.jsonl:2: field `scope`: missing field `scope`",
        ),
        (
            r#"{"t_ns":1,"node":"c","event":"granted","scope":"j","holder":"a","token":"2","expires_mono_ms":1.0}"#,
            "h.jsonl:2: field `token`: invalid type: string \"2\", expected u64",
        ),
        (
            r#"{"t_ns":1,"node":"c","event":"crashed","why":"oom"}"#,
            "h.jsonl:2: field `why`: not a field of a `crashed` event",
        ),
        (
            r#"{"t_ns":0,"node":"c","event":"crashed"}"#,
            "h.jsonl:3: field `t_ns`: expected events in time order",
        ),
    ];
    for (line, expected) in cases {
        // The time-order case needs an event after the grant at a later time first.
        let text = if expected.contains("time order") {
            format!(
                "{grant}\n{}\n{line}\n",
                grant.replace("\"t_ns\":0", "\"t_ns\":5")
            )
        } else {
            format!("{grant}\n{line}\n")
        };
        std::fs::write(tmp.path().join("h.jsonl"), text).unwrap();
        let (code, stdout, stderr) = fencesim(
            &["check-history", "h.jsonl", "--json", "out.json"],
            tmp.path(),
        );
        assert_eq!(code, 2, "{line}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{line}: {stderr}");
        assert!(!tmp.path().join("out.json").exists(), "{line}");
    }
    // The report may not overwrite the history it judges: refused before anything is read.
    std::fs::write(tmp.path().join("ok.jsonl"), format!("{grant}\n")).unwrap();
    let (code, _, stderr) = fencesim(
        &["check-history", "ok.jsonl", "--json", "./ok.jsonl"],
        tmp.path(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--json"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("ok.jsonl")).unwrap(),
        format!("{grant}\n")
    );
    let (code, _, stderr) = fencesim(&["check-history", "missing.jsonl"], tmp.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("missing.jsonl: cannot read"), "{stderr}");
}

/// The header line: version 1 is read (and the file judged as without it); a version this
/// build does not read, or another schema, is refused on line 1 with exit 2.
#[test]
fn a_header_names_the_schema_version_and_an_unknown_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let story = std::fs::read_to_string(histories().join("gc-pause-lease-41.jsonl")).unwrap();
    for (name, header, code, says) in [
        (
            "v1.jsonl",
            r#"{"schema":"fencesim-history","version":1}"#,
            1,
            "I4 violated",
        ),
        (
            "v2.jsonl",
            r#"{"schema":"fencesim-history","version":2}"#,
            2,
            "v2.jsonl:1: field `version`: expected a schema version this fencesim reads (1), got 2",
        ),
        (
            "other.jsonl",
            r#"{"schema":"other-history","version":1}"#,
            2,
            "other.jsonl:1: field `schema`: expected \"fencesim-history\"",
        ),
    ] {
        std::fs::write(tmp.path().join(name), format!("{header}\n{story}")).unwrap();
        let (got, stdout, stderr) =
            fencesim(&["check-history", name, "--json", "out.json"], tmp.path());
        assert_eq!(got, code, "{name}: {stdout}{stderr}");
        assert!(
            stdout.contains(says) || stderr.contains(says),
            "{name}: {stdout}{stderr}"
        );
        assert_eq!(tmp.path().join("out.json").exists(), code == 1, "{name}");
        if code == 1 {
            // The header is not an event: the evidence indexes the events as without it.
            let with: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(tmp.path().join("out.json")).unwrap(),
            )
            .unwrap();
            std::fs::write(tmp.path().join("bare.jsonl"), &story).unwrap();
            let (bare_code, _, _) = fencesim(
                &["check-history", "bare.jsonl", "--json", "bare.json"],
                tmp.path(),
            );
            assert_eq!(bare_code, 1);
            let bare: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(tmp.path().join("bare.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(with["violations"], bare["violations"]);
            assert_eq!(with["events"], bare["events"]);
            std::fs::remove_file(tmp.path().join("out.json")).unwrap();
        }
    }
}

/// An empty or blank file is not a pass; a history without the workers' `write-sent` events
/// does not have I5 judged (a stalled store would look like idle workers).
#[test]
fn an_empty_file_is_an_error_and_i5_needs_write_sent_events() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in [("empty.jsonl", ""), ("blank.jsonl", "\n  \n\n")] {
        std::fs::write(tmp.path().join(name), text).unwrap();
        let (code, stdout, stderr) = fencesim(&["check-history", name], tmp.path());
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(
            stderr.contains(name) && stderr.contains("empty or blank"),
            "{stderr}"
        );
    }
    let scenario = Arc::new(
        fencesim_scenario::load(Path::new(&catalogue("gc-pause-textbook-max-token"))).unwrap(),
    );
    let run = replay(&scenario, 0, &Components::default());
    let full = tmp.path().join("full.jsonl");
    run.write_trace(&full).unwrap();
    let (code, stdout, _) = fencesim(&["check-history", "full.jsonl"], tmp.path());
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("  I5 judged"), "{stdout}");
    let text = std::fs::read_to_string(&full).unwrap();
    let without: String = text
        .lines()
        .filter(|line| !line.contains("\"write-sent\""))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(without.len(), text.len(), "the trace has write-sent events");
    std::fs::write(tmp.path().join("no-sends.jsonl"), without).unwrap();
    let (code, stdout, _) = fencesim(&["check-history", "no-sends.jsonl"], tmp.path());
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("I5 not judged (liveness after heal): needs `write-sent` events"),
        "{stdout}"
    );
}

/// A lease service that cannot say when a lease expires (no `expires_mono_ms`) still gets
/// every invariant its events allow judged: a repeated token is I1. Without the workers'
/// beliefs, the belief-based metrics (unavailability would read 1) are left out and named.
#[test]
fn grants_without_an_expiry_are_judged_and_belief_metrics_are_left_out_without_beliefs() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("no-expiry.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"t_ns":0,"node":"lock","event":"granted","scope":"job","holder":"a","token":7}"#,
            "\n",
            r#"{"t_ns":1000000,"node":"store","event":"write-accepted","op":1,"resource":"job","writer":"a","token":7,"lease_scope":"job"}"#,
            "\n",
            r#"{"t_ns":9000000000,"node":"lock","event":"expired","scope":"job","holder":"a","token":7}"#,
            "\n",
            r#"{"t_ns":10000000000,"node":"lock","event":"granted","scope":"job","holder":"b","token":7}"#,
            "\n",
        ),
    )
    .unwrap();
    let json = tmp.path().join("v.json");
    let (code, stdout, stderr) = fencesim(
        &[
            "check-history",
            path.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("I1 violated"), "{stdout}");
    assert!(!stdout.contains("unavailability="), "{stdout}");
    assert!(
        stdout.contains("not supported by this history's events: unavailability"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(report["metrics"].get("unavailability").is_none());
    assert!(report["metrics"].get("accepted_writes").is_some());
    let left_out: Vec<&str> = report["metrics_not_supported"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert!(left_out.contains(&"unavailability"), "{left_out:?}");
    // The grant written without an expiry is written back without one (no `null`).
    let proof = report["violations"][0]["proof"].to_string();
    assert!(!proof.contains("expires_mono_ms"), "{proof}");
}
