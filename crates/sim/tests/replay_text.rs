//! End to end: the short text replay, the timeline picture and the Perfetto trace of
//! real runs (the views crate cannot run the simulator itself).
//!
//! The pictures are also written to `$CARGO_TARGET_TMPDIR/pictures/` so a person can look at
//! them; `reports/pictures/` holds committed copies.

use std::{path::PathBuf, sync::Arc};

use fencesim_scenario::Scenario;
use fencesim_sim::{run_seed, runner::RunResult, Components};
use fencesim_views::{
    perfetto_json, picture_png, picture_svg, replay_text, PictureOptions, ReplayInput,
    ReplayTextOptions,
};

fn scenario(name: &str) -> Arc<Scenario> {
    Arc::new(fencesim_testkit::catalogue(name))
}

fn lanes(scenario: &Scenario) -> Vec<String> {
    let mut nodes = scenario.node_names();
    nodes.push("nemesis".to_string());
    nodes
}

fn text(scenario: &Scenario, seed: u64, run: &RunResult, options: &ReplayTextOptions) -> String {
    let command = format!(
        "fencesim replay scenarios/{}.toml --seed {seed}",
        scenario.name
    );
    let input = ReplayInput {
        scenario,
        seed,
        plan: &run.plan,
        history: &run.history,
        checked: &run.outcome.checked,
        panic: run.outcome.panic.as_deref(),
        trace_hash: &run.outcome.trace_hash,
        replay_command: &command,
    };
    replay_text(&input, options)
}

/// Writes the picture of `run` to the test's scratch directory, checks the SVG is XML and
/// the PNG decodes, and returns the SVG's texts.
fn pictures(
    scenario: &Scenario,
    seed: u64,
    run: &RunResult,
    options: &PictureOptions,
) -> Vec<String> {
    let violations = &run.outcome.checked.violations;
    let nodes = lanes(scenario);
    let svg = picture_svg(&run.history, violations, &nodes, Some(&run.plan), options).unwrap();
    let png_bytes =
        picture_png(&run.history, violations, &nodes, Some(&run.plan), options).unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = format!("{}-seed-{seed}", scenario.name);
    std::fs::write(dir.join(format!("{stem}.svg")), &svg).unwrap();
    std::fs::write(dir.join(format!("{stem}.png")), &png_bytes).unwrap();

    let reader = png::Decoder::new(png_bytes.as_slice())
        .read_info()
        .expect("a PNG");
    assert_eq!(reader.info().width, fencesim_views::picture::WIDTH_PX);
    let document = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    document
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// The textbook run's roles, read from its I4 violation: the stale writer (it held token 1
/// and paused past its TTL), the op it wrote, and who took over with token 2. The scenario
/// pauses both workers in turn, so either can win the first grant.
fn textbook_roles(run: &RunResult) -> (String, String, u64) {
    use fencesim_model::{history::EventKind, Invariant};
    let i4 = run
        .outcome
        .checked
        .violations
        .iter()
        .find(|v| v.invariant == Invariant::I4)
        .expect("the textbook run violates I4");
    let events = &run.history.events;
    let last = *i4.evidence.last().expect("evidence");
    let EventKind::WriteAccepted { op, writer, .. } = &events[last].kind else {
        panic!(
            "I4's violating event is an accepted write: {:?}",
            events[last]
        );
    };
    let taker = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Granted { holder, token, .. } if *token == 2 => Some(holder.to_string()),
            _ => None,
        })
        .expect("a grant of token 2");
    (writer.to_string(), taker, *op)
}

#[test]
fn textbook_replay_fits_in_80_lines_with_the_violation_and_its_proof() {
    let scenario = scenario("gc-pause-textbook-none");
    let run = run_seed(&scenario, 0, &Components::default());
    let out = text(&scenario, 0, &run, &ReplayTextOptions::default());
    let (first, second, op) = textbook_roles(&run);
    assert_ne!(first, second, "the stale holder and the new one differ");
    let lines = out.lines().count();
    assert!(lines <= 80, "{lines} lines:\n{out}");
    assert!(
        out.lines()
            .nth(2)
            .unwrap()
            .starts_with("== result: violates I3, I4"),
        "{out}"
    );
    assert!(
        out.contains(&format!("!! write op#{op} token=1 -> ACCEPTED by {first}")),
        "{out}"
    );
    assert!(out.contains("!! I4 violated: "), "{out}");
    let proof = out
        .split("== violations")
        .nth(1)
        .expect("violations section");
    assert!(
        proof.contains(&format!("coordinator  grant job-1 token=1 -> {first}")),
        "{proof}"
    );
    assert!(
        proof.contains(&format!("coordinator  grant job-1 token=2 -> {second}")),
        "{proof}"
    );
    assert!(
        proof.contains(&format!(
            "storage      write op#{op} token=1 -> ACCEPTED by {first}"
        )),
        "{proof}"
    );
    assert!(
        proof.contains("I4 violated (no superseded accept, scope job-1)"),
        "{proof}"
    );
}

#[test]
fn textbook_picture_shows_both_epochs_the_pause_and_the_violation() {
    let scenario = scenario("gc-pause-textbook-none");
    let run = run_seed(&scenario, 0, &Components::default());
    let options = PictureOptions {
        title: Some("gc-pause-textbook-none, seed 0 (fencing: none)".into()),
        ..Default::default()
    };
    let texts = pictures(&scenario, 0, &run, &options);
    let (first, second, _) = textbook_roles(&run);
    for expected in [
        format!("token 1 \u{2192} {first} (expired)"),
        format!("token 2 \u{2192} {second}"),
        "GC pause 15000 ms".to_string(),
        "believes token 1".to_string(),
        "believes token 2".to_string(),
        // Close violations share one label: "I3 + I4 violated (no stale accept; no superseded accept)".
        "I3 + I4 violated".to_string(),
    ] {
        assert!(
            texts.iter().any(|t| t.starts_with(&expected)),
            "{expected}: {texts:?}"
        );
    }
}

#[test]
fn five_worker_chaos_picture_draws() {
    let scenario = scenario("chaos-5-workers-max-token");
    let run = run_seed(&scenario, 0, &Components::default());
    let texts = pictures(
        &scenario,
        0,
        &run,
        &PictureOptions {
            title: Some("chaos-5-workers-max-token, seed 0".into()),
            ..Default::default()
        },
    );
    for worker in 0..5 {
        assert!(texts.contains(&format!("worker-{worker}")), "{texts:?}");
    }
    // The whole run too, as a user zooming out would ask for it.
    let whole = PictureOptions {
        title: Some("chaos-5-workers-max-token, seed 0, whole run".into()),
        window_ns: Some((0, 60_000_000_000)),
        ..Default::default()
    };
    let nodes = lanes(&scenario);
    let png_bytes = picture_png(
        &run.history,
        &run.outcome.checked.violations,
        &nodes,
        Some(&run.plan),
        &whole,
    )
    .unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::write(
        dir.join("chaos-5-workers-max-token-seed-0-whole.png"),
        png_bytes,
    )
    .unwrap();
}

#[test]
fn perfetto_trace_of_a_real_run_has_one_track_per_node() {
    let scenario = scenario("gc-pause-textbook-none");
    let run = run_seed(&scenario, 0, &Components::default());
    let nodes = lanes(&scenario);
    let json = perfetto_json(&run.history, &run.outcome.checked.violations, &nodes);
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let events = value["traceEvents"].as_array().expect("traceEvents");
    let mut names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    names.sort();
    // The lanes, and any other node the history names (the network's "net").
    let mut expected: Vec<&str> = nodes
        .iter()
        .chain(run.history.events.iter().map(|e| &e.node))
        .map(String::as_str)
        .collect();
    expected.sort();
    expected.dedup();
    assert_eq!(names, expected);
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "i" && e["cat"] == "violation"),
        "{json}"
    );
}

#[test]
fn pictures_of_every_fault_kind_draw() {
    // Between them: VM suspends, clock offsets and steps, partitions, holds, crashes and
    // restarts, rejected writes.
    for name in [
        "swarm-all-faults-same-store-txn",
        "k8s-client-go-clock-skew",
        "vm-suspend-local-deadline-none",
        "storage-restart-volatile-max-token",
    ] {
        let scenario = scenario(name);
        let run = run_seed(&scenario, 0, &Components::default());
        let options = PictureOptions {
            title: Some(format!("{name}, seed 0")),
            ..Default::default()
        };
        let texts = pictures(&scenario, 0, &run, &options);
        assert!(
            texts.iter().any(|t| t == "coordinator"),
            "{name}: {texts:?}"
        );
    }
    // And each kind alone, from its example (a new kind is drawn without touching this test).
    let base = scenario("gc-pause-textbook-max-token");
    for kind in fencesim_scenario::FaultKind::ALL {
        let mut alone = (*base).clone();
        alone.faults.schedule = vec![fencesim_scenario::TimedFault {
            at_ms: 2_000.0,
            fault: kind.example(),
        }];
        let run = run_seed(&Arc::new(alone.clone()), 0, &Components::default());
        let options = PictureOptions {
            title: Some(format!("{kind} alone, seed 0")),
            ..Default::default()
        };
        let texts = pictures(&alone, 0, &run, &options);
        assert!(
            texts.iter().any(|t| t == "coordinator"),
            "{kind}: {texts:?}"
        );
    }
}
