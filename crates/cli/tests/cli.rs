//! The `fencesim` binary as a user runs it: exit codes, files written (or not), replay
//! commands, determinism across processes.

mod util;

use std::{fs, path::Path};

use fencesim_testkit::Spec;
use util::*;

const GC_PAUSE: &str = r#"
[[faults.schedule]]
at_ms = 1_000
kind = "gc-pause"
node = "worker-0"
duration_ms = 8_000
"#;

/// The shared base scenario with a 5 s TTL, same-store-txn fencing and a GC pause past it.
fn spec() -> Spec<'static> {
    Spec {
        name: "cli-test",
        description: "two workers, one job, a GC pause past the TTL",
        duration_ms: 20_000,
        seeds: "0..4",
        ttl_ms: 5_000,
        fencing: "same-store-txn",
        work_ms: "{ dist = \"uniform\", min = 100, max = 300 }",
        workers: "writes_per_lease = 100",
        faults: GC_PAUSE,
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    }
}

fn base() -> String {
    spec().toml()
}

fn write_scenario(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("scenario.toml");
    fs::write(&path, text).unwrap();
    path
}

/// Each malformed input exits 2, names the field, and leaves no output behind.
#[test]
fn malformed_input_exits_2_naming_the_field_and_writes_nothing() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "unknown field",
            "[lease]\nttl_ms = 5_000\n",
            "[lease]\nttl_ms = 5_000\ncolour = \"red\"\n",
        ),
        (
            "negative duration",
            "duration_ms = 20_000",
            "duration_ms = -5",
        ),
        ("zero ttl", "ttl_ms = 5_000", "ttl_ms = 0"),
        ("bad seed range", "seeds = \"0..4\"", "seeds = \"9..2\""),
    ];
    let expected_field = ["lease.colour", "duration_ms", "lease.ttl_ms", "seeds"];
    for ((what, from, to), field) in cases.iter().zip(expected_field) {
        let dir = tempfile::tempdir().unwrap();
        let base = base();
        assert!(base.contains(from), "{what}: test setup");
        let path = write_scenario(dir.path(), &base.replacen(from, to, 1));
        let out = dir.path().join("out");
        let (code, _, stderr) = fencesim(
            &[
                "run",
                path.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(
            stderr.contains(field),
            "{what}: stderr should name {field}: {stderr}"
        );
        assert!(
            stderr.contains("scenario.toml:"),
            "{what}: stderr should name the file and line: {stderr}"
        );
        assert!(!out.exists(), "{what}: nothing may be written");
    }
}

#[test]
fn bad_seeds_flag_and_missing_file_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), &base());
    for seeds in ["5..5", "x..3", "7"] {
        let (code, _, stderr) = fencesim(
            &["run", path.to_str().unwrap(), "--seeds", seeds],
            dir.path(),
        );
        assert_eq!(code, 2, "{seeds}");
        assert!(stderr.contains("--seeds"), "{stderr}");
    }
    let (code, _, stderr) = fencesim(&["run", "no-such-file.toml"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-file.toml"), "{stderr}");
    assert!(!dir.path().join("reports").exists());
}

#[test]
fn summaries_are_byte_identical_across_runs_and_job_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), &base());
    let mut summaries = Vec::new();
    for (out, jobs) in [("a", "2"), ("b", "2"), ("c", "1")] {
        let (code, stdout, stderr) = fencesim(
            &[
                "run",
                path.to_str().unwrap(),
                "--seeds",
                "0..6",
                "--jobs",
                jobs,
                "--out",
                out,
            ],
            dir.path(),
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        summaries.push(fs::read(dir.path().join(out).join("cli-test/summary.json")).unwrap());
    }
    assert_eq!(summaries[0], summaries[1], "same range twice");
    assert_eq!(summaries[0], summaries[2], "--jobs 1 vs --jobs 2");
    let summary: serde_json::Value = serde_json::from_slice(&summaries[0]).unwrap();
    for key in [
        "scenario",
        "scenario_hash",
        "seeds",
        "runs",
        "failing_seeds",
        "violations",
        "expectation_met",
        "metrics",
    ] {
        assert!(summary.get(key).is_some(), "summary.json lacks {key}");
    }
    assert_eq!(summary["runs"], 6);
    assert_eq!(summary["seeds"]["start"], 0);
    assert_eq!(summary["seeds"]["end"], 6);
}

#[test]
fn run_reports_the_abstract_states_reached_and_draws_their_saturation_curve() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), &base());
    let args = [
        "run",
        path.to_str().unwrap(),
        "--seeds",
        "0..6",
        "--out",
        "out",
        "--saturation",
        "saturation.png",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("out/cli-test/summary.json")).unwrap())
            .unwrap();
    let space = &summary["state_space"];
    let states = space["states"].as_u64().unwrap();
    // The pause past the TTL: at least the grant, the holder, its pause and the takeover.
    assert!(states >= 4, "{space}");
    assert!(
        space["transitions"].as_u64().unwrap() >= states - 1,
        "{space}"
    );
    assert_eq!(space["block_seeds"], 1);
    let blocks = space["saturation"].as_array().unwrap();
    assert_eq!(blocks.len(), 6);
    assert_eq!(blocks[5]["states"].as_u64(), Some(states));
    assert!(
        stdout.contains(&format!("  state space: {states} abstract states, ")),
        "{stdout}"
    );
    assert!(
        stdout.contains("saturation curve drawn to saturation.png"),
        "{stdout}"
    );
    let png = fs::read(dir.path().join("saturation.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
}

#[test]
fn unmet_expectation_exits_1_and_prints_replay_commands() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(
        dir.path(),
        &Spec {
            fencing: "none",
            ..spec()
        }
        .toml(),
    );
    let (code, stdout, _) = fencesim(&["run", path.to_str().unwrap()], dir.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("replay: fencesim replay"), "{stdout}");
    assert!(stdout.contains(" --seed "), "{stdout}");
}

#[test]
fn a_panicking_node_fails_its_seed_with_a_replay_command_and_the_sweep_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let faults = format!(
        "{GC_PAUSE}\n[[faults.schedule]]\nat_ms = 2_000\nkind = \"panic\"\nnode = \"worker-1\"\n"
    );
    let text = Spec {
        seeds: "0..3",
        faults: &faults,
        ..spec()
    }
    .toml();
    let path = write_scenario(dir.path(), &text);
    let (code, stdout, stderr) =
        fencesim(&["run", path.to_str().unwrap(), "--out", "out"], dir.path());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("seed 0: panicked: worker-1: injected panic on worker-1"),
        "{stdout}"
    );
    assert!(stdout.contains("replay: fencesim replay"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("out/cli-test/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["runs"], 3);
    assert_eq!(summary["panicked_seeds"], serde_json::json!([0, 1, 2]));
}

#[test]
fn replay_is_identical_across_processes_and_writes_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), &base());
    let hash_line = |stdout: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with("== trace hash"))
            .unwrap()
            .to_string()
    };
    let (code_a, first, _) = fencesim(
        &[
            "replay",
            path.to_str().unwrap(),
            "--seed",
            "2",
            "--trace",
            "t.jsonl",
        ],
        dir.path(),
    );
    let (code_b, second, _) = fencesim(
        &[
            "replay",
            path.to_str().unwrap(),
            "--seed",
            "2",
            "--resolved",
            "--check-determinism",
        ],
        dir.path(),
    );
    assert_eq!((code_a, code_b), (0, 0), "{first}{second}");
    assert_eq!(hash_line(&first), hash_line(&second));
    // The same text, but for the resolved options the second replay asked for.
    let body = |stdout: &str| {
        let text = stdout.split("== trace hash").next().unwrap();
        match text.split_once("== resolved options") {
            Some((before, after)) => {
                let rest = after.split_once("\n== ").map_or("", |(_, rest)| rest);
                format!("{before}== {rest}")
            }
            None => text.to_string(),
        }
    };
    assert_eq!(
        body(&first),
        body(&second),
        "the whole replay output is identical"
    );
    assert!(
        second.contains("determinism: second run gave the same trace hash"),
        "{second}"
    );
    for section in ["== fault plan", "== timeline", "== metrics"] {
        assert!(first.contains(section), "replay prints {section}");
    }
    assert!(!first.contains("== resolved options"), "only on request");
    assert!(second.contains("== resolved options"), "--resolved");
    assert!(first.contains("GC pause 8000ms"), "{first}");
    let trace = fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    let events: usize = hash_line(&first)
        .split('(')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // The header line naming the schema version, then one line per event.
    assert_eq!(
        trace.lines().next(),
        Some(r#"{"schema":"fencesim-history","version":1}"#)
    );
    assert_eq!(trace.lines().count(), events + 1);
}

#[test]
fn replay_draws_pictures_and_a_perfetto_trace_and_rejects_bad_views() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), &base());
    let path = path.to_str().unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "replay",
            path,
            "--seed",
            "1",
            "--svg",
            "out/t.svg",
            "--png",
            "out/t.png",
            "--perfetto",
            "out/t.json",
            "--window",
            "0..9000",
            "--nodes",
            "worker-0,storage",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let svg = fs::read_to_string(dir.path().join("out/t.svg")).unwrap();
    roxmltree::Document::parse(&svg).expect("the SVG is valid XML");
    let png = fs::read(dir.path().join("out/t.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("out/t.json")).unwrap()).unwrap();
    assert!(json["traceEvents"]
        .as_array()
        .is_some_and(|events| !events.is_empty()));
    for (flag, value) in [
        ("--window", "9000..1000"),
        ("--window", "a..b"),
        ("--nodes", "worker-7"),
    ] {
        let (code, _, stderr) = fencesim(
            &[
                "replay", path, "--seed", "1", flag, value, "--svg", "bad.svg",
            ],
            dir.path(),
        );
        assert_eq!(code, 2, "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{stderr}");
        assert!(
            !dir.path().join("bad.svg").exists(),
            "nothing written on bad input"
        );
    }
}

/// `--version` names the commit and the madsim version (a trace hash is comparable only
/// between runs of the same build), and the top-level help lists exit codes, the environment
/// variables read and an example per everyday command.
#[test]
fn version_names_the_build_and_help_lists_exit_codes_environment_and_examples() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let version = String::from_utf8_lossy(&out.stdout);
    let lock =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock")).unwrap();
    let at = lock.find("name = \"madsim\"\nversion = \"").unwrap() + 27;
    let madsim = &lock[at..at + lock[at..].find('"').unwrap()];
    assert!(
        version.contains(&format!("madsim {madsim}")) && version.contains("(commit "),
        "{version}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for must in [
        "Exit codes:",
        "FENCESIM_SEED",
        "MADSIM_TEST_SEED",
        "FENCESIM_JOBS",
        "JOB_COMPLETION_INDEX",
        "fencesim check scenarios/",
        "fencesim replay ",
        "fencesim tune ",
        "fencesim check-history ",
    ] {
        assert!(help.contains(must), "--help lacks {must}:\n{help}");
    }
}

/// `fencesim completions SHELL` prints a script that knows every command and option, and
/// bash accepts it.
#[test]
fn completions_cover_every_command_and_parse_in_bash() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let script = String::from_utf8_lossy(&out.stdout).into_owned();
    for must in [
        "check-history",
        "--survive-outage-ms",
        "--shard",
        "--set",
        "completions",
    ] {
        assert!(script.contains(must), "completion lacks {must}");
    }
    // The hidden commands `live` starts itself are not offered, and `--shard 2/4` is not a
    // file name, while `--json` still completes one.
    assert!(
        !script.contains("live-worker") && !script.contains("live-guard"),
        "hidden commands offered"
    );
    let case = |option: &str, subcommand: &str| -> String {
        let at = script
            .find(&format!("fencesim__subcmd__{subcommand})"))
            .unwrap();
        let from = at + script[at..].find(&format!("{option})")).unwrap();
        script[from..from + script[from..].find(";;").unwrap()].to_string()
    };
    assert!(
        !case("--shard", "check").contains("compgen -f"),
        "{}",
        case("--shard", "check")
    );
    assert!(
        case("--json", "check").contains("compgen -f"),
        "{}",
        case("--json", "check")
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fencesim.bash");
    fs::write(&path, &script).unwrap();
    if let Ok(status) = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
    {
        assert!(status.success(), "bash -n rejects the completion script");
    }
    let (code, _, stderr) = fencesim(&["completions", "tcsh"], dir.path());
    assert_eq!(code, 2, "{stderr}");
}

/// Issue 31 item 7: every JSON output names its format's version and the build that wrote
/// it: `fencesim --version` without its commit (committed reports stay the same bytes across
/// commits). tune.json: crates/cli/tests/tune.rs.
#[test]
fn every_json_output_names_its_schema_version_and_the_build_without_its_commit() {
    let dir = tempfile::tempdir().unwrap();
    write_scenario(dir.path(), &base());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // `fencesim 0.1.0 (commit abc, madsim 0.2.34)` → `fencesim 0.1.0 (madsim 0.2.34)`.
    let commit = version.find("(commit ").unwrap();
    let after = commit + version[commit..].find(", ").unwrap() + 2;
    let producer = format!("{}({}", &version[..commit], &version[after..]);
    assert_eq!(producer, fencesim_model::version::PRODUCER);
    let (code, stdout, stderr) = fencesim(
        &["run", "scenario.toml", "--seeds", "0..2", "--out", "out"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = fencesim(
        &[
            "check",
            "scenario.toml",
            "--json",
            "c.json",
            "--matrix",
            "m",
            "--coverage",
            "m",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    for file in [
        "out/cli-test/summary.json",
        "c.json",
        "m/matrix.json",
        "m/coverage.json",
    ] {
        let json: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.path().join(file)).unwrap()).unwrap();
        assert_eq!(json["schema_version"], 1, "{file}");
        assert_eq!(json["producer"], producer.as_str(), "{file}");
    }
}
