//! A limit on everything: inputs that used to run unbounded or overflow are
//! rejected before any seed runs (exit 2, nothing written), and a seed that still outgrows its
//! event budget is contained as runaway while the sweep goes on. The table of every hostile
//! input of the issue (exit 2, nothing written) is `hostile.rs`.

mod util;

use fencesim_testkit::Spec;
use util::{catalogue, fencesim};

/// A scenario whose seeds record events as fast as the limits allow (1 µs of work, no
/// network latency, long leases): each hits its event budget in about a second.
fn spin() -> String {
    Spec {
        name: "spin",
        description: "work takes 1 us and the network no time",
        duration_ms: 1_000,
        seeds: "0..2",
        count: 8,
        work_ms: "0.001",
        workers: "writes_per_lease = 10_000",
        tables: "[network]\nlatency_ms = 0",
        ..Spec::default()
    }
    .toml()
}

#[test]
fn runaway_seed_is_contained_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spin.toml"), spin()).unwrap();
    let (code, stdout, stderr) = fencesim(&["run", "spin.toml", "--out", "out"], dir.path());
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let all = format!("{stdout}\n{stderr}");
    assert!(all.contains("seed 0: runaway"), "{all}");
    assert!(all.contains("seed 1: runaway"), "{all}");
    assert!(all.contains("fencesim replay spin.toml --seed 0"), "{all}");
    assert!(!all.contains("PANIC"), "{all}");
    // No panic reaches madsim, which would print `context: node=… (spawned at <path of the
    // build machine's cargo registry>)` for it.
    assert!(!all.contains("spawned at"), "{all}");
    let summary = std::fs::read_to_string(dir.path().join("out/spin/summary.json")).unwrap();
    assert!(summary.contains("\"runaway_seeds\""), "{summary}");
    assert!(summary.contains("\"panicked_seeds\": []"), "{summary}");
}

#[test]
fn check_determinism_exits_by_determinism_alone() {
    let dir = tempfile::tempdir().unwrap();
    // Seed 0 of this scenario violates I3 (a replay without the flag exits 1).
    let scenario = catalogue("gc-pause-textbook-none");
    let (plain, _, _) = fencesim(&["replay", &scenario, "--seed", "0"], dir.path());
    let (code, stdout, stderr) = fencesim(
        &["replay", &scenario, "--seed", "0", "--check-determinism"],
        dir.path(),
    );
    assert_eq!(plain, 1, "seed 0 should violate");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}

#[test]
fn duplicate_names_and_oversized_files_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = std::fs::read_to_string(catalogue("gc-pause-textbook-max-token")).unwrap();
    std::fs::create_dir(dir.path().join("cat")).unwrap();
    std::fs::write(dir.path().join("cat/a.toml"), &scenario).unwrap();
    std::fs::write(dir.path().join("cat/b.toml"), &scenario).unwrap();
    let (code, _, stderr) = fencesim(&["check", "cat", "--json", "r.json"], dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("a.toml") && stderr.contains("b.toml"),
        "{stderr}"
    );
    assert!(!dir.path().join("r.json").exists());

    let big = format!("{scenario}\n#{}\n", "x".repeat(2 << 20));
    std::fs::write(dir.path().join("big.toml"), big).unwrap();
    for (file, expected) in [
        ("big.toml", "at most 1048576 bytes"),
        ("/dev/zero", "got a character device"),
    ] {
        let (code, _, stderr) = fencesim(&["run", file, "--out", "out"], dir.path());
        assert_eq!(code, 2, "{file}: {stderr}");
        assert!(stderr.contains(expected), "{file}: {stderr}");
    }
}

/// A scenario whose unit of work takes `work_ms` in a minute's run (8 workers).
fn slow_work(work_ms: &str) -> String {
    Spec {
        name: "slow",
        description: "each unit of work takes as long as the run",
        duration_ms: 60_000,
        seeds: "0..1",
        count: 8,
        work_ms,
        tables: "[network]\nlatency_ms = 1",
        ..Spec::default()
    }
    .toml()
}

/// The time a seed costs is bounded: work at its 7-day limit in a minute's run made the run
/// wait ~4 weeks of simulated time (~230 s a seed). Work longer than the run is refused
/// (exit 2, naming the field); at the limit (work as long as the run), the seed ends
/// `max(duration, heal) + 2 × the liveness bound` after its start, as docs/scenario-format.md
/// ("Limits", cost per seed) says, with the bound a few runs long, far under its event budget.
#[test]
fn time_per_seed_is_bounded_by_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("week.toml"), slow_work("604_800_000")).unwrap();
    let (code, stdout, stderr) = fencesim(&["run", "week.toml", "--out", "out"], dir.path());
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("workers.work_ms"), "{stderr}");
    assert!(
        stderr.contains("at most duration_ms (60000 ms)"),
        "{stderr}"
    );
    assert!(!dir.path().join("out").exists());

    std::fs::write(dir.path().join("slow.toml"), slow_work("60_000")).unwrap();
    let (_, stdout, stderr) = fencesim(
        &["replay", "slow.toml", "--seed", "0", "--trace", "t.jsonl"],
        dir.path(),
    );
    let trace = std::fs::read_to_string(dir.path().join("t.jsonl"))
        .unwrap_or_else(|e| panic!("{e}\n{stdout}\n{stderr}"));
    let events: Vec<serde_json::Value> = trace
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let bound_ms = events
        .iter()
        .find(|e| e["event"] == "run-started")
        .and_then(|e| e["liveness_bound_ms"].as_u64())
        .expect("run-started carries the bound");
    let end = events.last().unwrap();
    assert_eq!(end["event"], "run-ended");
    let end_ms = end["t_ns"].as_u64().unwrap() / 1_000_000;
    // No faults: the heal is the run's end (60 s); one unit of work is in the bound.
    assert!(
        (60_000..=4 * 60_000).contains(&bound_ms),
        "bound {bound_ms}"
    );
    let planned = 60_000 + 2 * bound_ms;
    assert!(
        (planned..=planned + 1).contains(&end_ms),
        "ended at {end_ms} ms, not {planned}"
    );
    assert!(events.len() < 10_000, "{} events", events.len());
}
