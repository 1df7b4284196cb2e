use super::*;
use fencesim_testkit::{scenario, textbook_run, Spec};

const GC_PAUSES: &str = r#"
[[faults.schedule]]
at_ms = 1_000
kind = "gc-pause"
node = "worker-0"
duration_ms = 15_000
"#;

fn textbook_scenario() -> fencesim_scenario::Scenario {
    scenario(Spec {
        name: "gc-pause-textbook-none",
        fencing: "none",
        faults: GC_PAUSES,
        expect: "violates = [\"I3\", \"I4\"]",
        ..Spec::default()
    })
}

fn textbook_text(options: &ReplayTextOptions) -> String {
    let scenario = textbook_scenario();
    let plan = fencesim_scenario::plan::plan(&scenario, 0);
    let (history, checked) = textbook_run();
    let input = ReplayInput {
        scenario: &scenario,
        seed: 0,
        plan: &plan,
        history: &history,
        checked: &checked,
        panic: None,
        trace_hash: &history.trace_hash(),
        replay_command: "fencesim replay scenarios/gc-pause-textbook-none.toml --seed 0",
    };
    replay_text(&input, options)
}

#[test]
fn textbook_replay_is_short_and_shows_the_violation_with_its_proof() {
    let text = textbook_text(&ReplayTextOptions::default());
    let lines = text.lines().count();
    assert!(lines <= 60, "{lines} lines:\n{text}");
    // The verdict is on the third line, the reproduction command on the second.
    let head: Vec<&str> = text.lines().take(3).collect();
    assert!(head[1].contains("--seed 0"), "{text}");
    assert!(head[2].starts_with("== result: violates I3, I4"), "{text}");
    // The stale write is marked in the timeline and followed by the violations.
    assert!(
        text.contains("!! write op#3 token=1 -> ACCEPTED by worker-0"),
        "{text}"
    );
    assert!(text.contains("!! I4 violated: "), "{text}");
    // The proof: both grants and the accept, one per line, before the I4 sentence.
    let proof = text
        .split("== violations")
        .nth(1)
        .expect("violations section");
    assert!(
        proof.contains("coordinator  grant job-1 token=1 -> worker-0"),
        "{proof}"
    );
    assert!(
        proof.contains("coordinator  grant job-1 token=2 -> worker-1"),
        "{proof}"
    );
    assert!(
        proof.contains("I4 violated (no superseded accept, scope job-1)"),
        "{proof}"
    );
    // Routine writes collapsed, resolved options left out.
    assert!(
        text.contains("op#5..#16 x12 job-1 token=2 ACCEPTED to 15700.300"),
        "{text}"
    );
    assert!(!text.contains("== resolved options"), "{text}");
    assert!(text.contains("exact (no offset, no drift): coordinator, storage, worker-0, worker-1"));
    assert!(text.contains("accepted_writes="), "{text}");
    assert!(
        !text.contains("side_effects="),
        "zero metrics are left out:\n{text}"
    );
}

#[test]
fn resolved_options_on_request() {
    let text = textbook_text(&ReplayTextOptions {
        resolved: true,
        ..Default::default()
    });
    // A scenario file a user can paste: the section parses to the very scenario replayed.
    let section = text
        .split("== resolved options")
        .nth(1)
        .and_then(|rest| rest.split_once('\n'))
        .map(|(_, rest)| rest.split("\n== ").next().unwrap())
        .expect("resolved section");
    let pasted = fencesim_scenario::parse_str(section, "pasted.toml").expect("pasted TOML parses");
    assert_eq!(pasted.hash(), textbook_scenario().hash(), "{section}");
    assert!(section.contains("ttl_ms = 10000"), "{section}");
    // No preset: nothing is clamped, so no note.
    assert!(!section.contains("# effective"), "{section}");
}

#[test]
fn resolved_options_say_what_a_presets_clamps_make_of_the_ttl() {
    let lease = |extra: &str| {
        scenario(Spec {
            lease: extra,
            ..Spec::default()
        })
        .lease
    };
    // ZooKeeper (tickTime 2000): a 3000 ms session timeout is raised to 2 x tickTime = 4000.
    let mut zookeeper = lease("token_source = \"durable-counter\"\npreset = \"zookeeper\"");
    zookeeper.ttl_ms = 3000;
    let notes = effective_notes(&zookeeper);
    assert!(
        notes[0].contains("lease.ttl_ms = 3000 runs as 4000 under preset zookeeper")
            && notes[0].contains("min_ttl_ms = 4000"),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("every expiry_check_ms = 2000 ms")),
        "{notes:?}"
    );
    // Above the maximum it is lowered.
    let notes = effective_notes(&lease(
        "token_source = \"durable-counter\"\nmax_ttl_ms = 5000",
    ));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("ttl_ms = 10000 runs as 5000: the service lowers"),
        "{notes:?}"
    );
    // Consul's expiry timer runs at twice the TTL.
    let notes = effective_notes(&lease(
        "token_source = \"durable-counter\"\nexpiry_factor = 2",
    ));
    assert!(notes[0].contains("fires 20000 ms after"), "{notes:?}");
    // Nothing to say without a clamp.
    assert!(effective_notes(&lease("token_source = \"durable-counter\"")).is_empty());
}

#[test]
fn window_and_nodes_filter_the_timeline_only() {
    let text = textbook_text(&ReplayTextOptions {
        nodes: Some(vec!["worker-0".into(), "coordinator".into()]),
        window_ns: Some((9_000 * NS_PER_MS, 17_000 * NS_PER_MS)),
        ..Default::default()
    });
    let timeline = text
        .split("== timeline")
        .nth(1)
        .and_then(|rest| rest.split("== violations").next())
        .expect("timeline");
    assert!(timeline.contains("; window 9000.000..17000.000; nodes worker-0,coordinator)"));
    assert!(
        timeline.lines().nth(1).unwrap().contains("coordinator"),
        "{timeline}"
    );
    assert!(!timeline.contains("storage"), "{timeline}");
    assert!(
        !timeline.contains("op#1 "),
        "outside the window:\n{timeline}"
    );
    assert!(timeline.contains("EXPIRED"), "{timeline}");
    assert!(timeline.contains("!! I4 violated"), "{timeline}");
    // The proof is still complete below, whatever the filter.
    assert!(
        text.contains("storage      write op#3 token=1 -> ACCEPTED"),
        "{text}"
    );
}
