//! `fencesim check` and `fencesim merge` as CI runs them (the catalogue workflow), on a
//! small catalogue written to a temporary directory.

mod util;

use std::{fs, path::Path};

use fencesim_testkit::Spec;
use util::*;

/// A GC pause of `pause_ms` on the first holder (worker-0, made first by a short partition
/// of worker-1) under `fencing`, expecting `expect`.
fn scenario(name: &str, fencing: &str, pause_ms: u64, expect: &str) -> String {
    let faults = format!(
        r#"
[[faults.schedule]]
at_ms = 0
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 500

[[faults.schedule]]
at_ms = 1_000
kind = "gc-pause"
node = "worker-0"
duration_ms = {pause_ms}
"#
    );
    Spec {
        name,
        description: &format!("a holder pauses {pause_ms} ms with a 3 s TTL under {fencing}"),
        duration_ms: 12_000,
        seeds: "0..7",
        ttl_ms: 3_000,
        fencing,
        work_ms: "{ dist = \"uniform\", min = 100, max = 300 }",
        workers: "writes_per_lease = 1_000",
        faults: &faults,
        expect,
        ..Spec::default()
    }
    .toml()
}

fn catalogue(dir: &Path) {
    let scenarios = dir.join("scenarios");
    fs::create_dir_all(&scenarios).unwrap();
    fs::write(
        scenarios.join("a-none.toml"),
        scenario("a-none", "none", 5_000, "violates = [\"I3\", \"I4\"]"),
    )
    .unwrap();
    fs::write(
        scenarios.join("b-max-token.toml"),
        scenario(
            "b-max-token",
            "max-token",
            5_000,
            "safe = true\ncoverage = [\"stale-write-rejected\"]",
        ),
    )
    .unwrap();
}

#[test]
fn catalogue_passes_and_writes_junit_json_and_matrix() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    let args = [
        "check",
        "scenarios",
        "--junit",
        "out/junit.xml",
        "--json",
        "out/check.json",
        "--matrix",
        "out",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("2 scenarios, 0 failed"), "{stdout}");

    let junit = fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).expect("JUnit output is well-formed XML");
    let cases: Vec<_> = xml
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 2, "one testcase per scenario");
    assert!(xml.descendants().all(|n| !n.has_tag_name("failure")));

    let matrix = fs::read_to_string(dir.path().join("out/matrix.md")).unwrap();
    assert!(
        matrix.contains("a-none") && matrix.contains("b-max-token"),
        "{matrix}"
    );
    // Regenerating gives no diff.
    let (code, _, _) = fencesim(&["check", "scenarios", "--matrix", "again"], dir.path());
    assert_eq!(code, 0);
    for file in ["matrix.md", "matrix.json"] {
        assert_eq!(
            fs::read(dir.path().join("out").join(file)).unwrap(),
            fs::read(dir.path().join("again").join(file)).unwrap(),
            "{file} is deterministic"
        );
    }
}

#[test]
fn a_changed_expectation_fails_naming_the_scenario_and_a_replay_command() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    fs::write(
        dir.path().join("scenarios/a-none.toml"),
        scenario(
            "a-none",
            "none",
            5_000,
            "safe = true\ncoverage = [\"takeover\"]",
        ),
    )
    .unwrap();
    let (code, stdout, _) = fencesim(&["check", "scenarios", "--junit", "junit.xml"], dir.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("a-none: "), "{stdout}");
    assert!(
        stdout.contains("replay: fencesim replay scenarios/a-none.toml --seed 0"),
        "{stdout}"
    );
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).unwrap();
    let failure = xml
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("one failure");
    let text: String = failure.descendants().filter_map(|n| n.text()).collect();
    assert!(
        text.contains("fencesim replay scenarios/a-none.toml --seed 0"),
        "{text}"
    );
}

#[test]
fn a_safe_scenario_whose_danger_never_happens_is_vacuous() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("scenarios")).unwrap();
    // A 50 ms pause against a 3 s TTL: no lease ever expires, nothing stale is ever written.
    fs::write(
        dir.path().join("scenarios/short.toml"),
        scenario(
            "short",
            "max-token",
            50,
            "safe = true\ncoverage = [\"stale-write-rejected\"]",
        ),
    )
    .unwrap();
    let (code, stdout, _) = fencesim(&["check", "scenarios"], dir.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("VACUOUS"), "{stdout}");
    assert!(stdout.contains("vacuous"), "{stdout}");
}

#[test]
fn shards_merge_into_the_unsharded_report_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    let run = |args: &[&str]| {
        let (code, stdout, stderr) = fencesim(args, dir.path());
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
    };
    run(&[
        "check",
        "scenarios",
        "--json",
        "full.json",
        "--jobs",
        "2",
        "--matrix",
        "full",
        "--coverage",
        "full",
    ]);
    run(&[
        "check",
        "scenarios",
        "--shard",
        "1/2",
        "--json",
        "s1.json",
        "--jobs",
        "1",
    ]);
    run(&["check", "scenarios", "--shard", "2/2", "--json", "s2.json"]);
    run(&[
        "merge",
        "s2.json",
        "s1.json",
        "--json",
        "merged.json",
        "--matrix",
        "m",
        "--coverage",
        "m",
    ]);
    let full = fs::read(dir.path().join("full.json")).unwrap();
    let merged = fs::read(dir.path().join("merged.json")).unwrap();
    assert!(
        full == merged,
        "merged shards differ from the unsharded report"
    );
    for file in ["matrix.md", "matrix.json", "coverage.md", "coverage.json"] {
        assert!(
            fs::read(dir.path().join("full").join(file)).unwrap()
                == fs::read(dir.path().join("m").join(file)).unwrap(),
            "{file}: merged shards differ from the unsharded run"
        );
    }
    let part: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("s1.json")).unwrap()).unwrap();
    assert_eq!(part["shard"], "1/2");
    assert_eq!(
        part["scenarios"][0]["state"]["stats"]["runs"], 4,
        "seeds 0, 2, 4, 6 of 0..7"
    );
    // A shard may not be merged twice.
    let (code, _, stderr) = fencesim(&["merge", "s1.json", "s1.json"], dir.path());
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn bad_shard_and_bad_catalogue_exit_2_before_running() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    for shard in ["0/2", "3/2", "1", "a/b"] {
        let (code, _, stderr) = fencesim(&["check", "scenarios", "--shard", shard], dir.path());
        assert_eq!(code, 2, "{shard}");
        assert!(stderr.contains("--shard"), "{stderr}");
    }
    fs::write(
        dir.path().join("scenarios/c-broken.toml"),
        "name = \"broken\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) =
        fencesim(&["check", "scenarios", "--json", "out.json"], dir.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("c-broken.toml"), "{stderr}");
    assert!(!stdout.contains("a-none"), "nothing ran: {stdout}");
    assert!(!dir.path().join("out.json").exists());
}

/// The way each engine runs N copies: the same command line (`--shard auto`) everywhere, the
/// slice in the environment only. Merged, the parts are the unsharded report byte for byte.
#[test]
fn shard_processes_configured_by_their_engines_variables_merge_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    let (code, stdout, stderr) =
        fencesim(&["check", "scenarios", "--json", "full.json"], dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let full = fs::read(dir.path().join("full.json")).unwrap();
    let engines: [(&str, &str, u64); 3] = [
        ("JOB_COMPLETION_INDEX", "JOB_COMPLETIONS", 0), // Kubernetes Indexed Job
        ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),          // GitLab CI `parallel:`
        ("FENCESIM_SHARD_INDEX", "FENCESIM_SHARD_TOTAL", 1), // a GitHub Actions matrix
    ];
    for (index_var, total_var, base) in engines {
        let n = 3;
        let mut parts = Vec::new();
        let children: Vec<_> = (0..n)
            .map(|i| {
                let part = format!("{index_var}-{i}.json");
                parts.push(part.clone());
                let index = (i + base).to_string();
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    fencesim_env(
                        &[
                            "check",
                            "scenarios",
                            "--shard",
                            "auto",
                            "--json",
                            &part,
                            "--jobs",
                            "1",
                        ],
                        &dir,
                        &[(index_var, index.as_str()), (total_var, "3")],
                    )
                })
            })
            .collect();
        for child in children {
            let (code, stdout, stderr) = child.join().unwrap();
            assert_eq!(code, 0, "{stdout}{stderr}");
            assert!(stdout.contains(&format!("from {index_var}=")), "{stdout}");
        }
        let mut args = vec!["merge", "--json", "merged.json"];
        args.extend(parts.iter().map(String::as_str));
        let (code, stdout, stderr) = fencesim(&args, dir.path());
        assert_eq!(code, 0, "{stdout}{stderr}");
        let merged = fs::read(dir.path().join("merged.json")).unwrap();
        assert!(
            full == merged,
            "{index_var}: merged shards differ from the unsharded report"
        );
    }
}

#[test]
fn k_selects_scenarios_and_fail_fast_stops_at_the_first_failure() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    fs::write(
        dir.path().join("scenarios/c-none.toml"),
        scenario("c-none", "none", 5_000, "violates = [\"I3\", \"I4\"]"),
    )
    .unwrap();
    let (code, stdout, stderr) = fencesim(
        &["check", "scenarios", "-k", "max-token", "--json", "k.json"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("-k max-token: 1 of 3 scenarios selected"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("k.json")).unwrap()).unwrap();
    let names: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scenario"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b-max-token"]);
    let (code, _, stderr) = fencesim(&["check", "scenarios", "-k", "no-such"], dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("-k no-such"), "{stderr}");

    // Fencing off: a-none still violates as expected, b-max-token fails, c-none is not run.
    let args = [
        "check",
        "scenarios",
        "--set",
        "storage.fencing=none",
        "--fail-fast",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir.path());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("b-max-token"), "{stdout}");
    assert!(!stdout.contains("c-none  "), "{stdout}");
    assert!(stdout.contains("1 scenarios not run"), "{stdout}");
    assert!(
        stdout.contains("2 scenarios, 1 failed, 1 not run (--fail-fast)"),
        "{stdout}"
    );
}
