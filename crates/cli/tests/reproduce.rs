//! Every reproduce line fencesim prints or writes reproduces exactly: each test runs the line
//! as printed (console, JUnit, the JSON report, `merge`, `run`, `replay`, `shrink`, the
//! library's failure message) and checks it replays the failure, overrides included. And the
//! seed variables are honoured or refused, never ignored.

mod util;

use std::fs;

use util::*;

/// The textbook pause against `max-token` (safe, 2 seeds), failed by an override that turns
/// fencing off: `storage.fencing="none"` (quoted, so the line must quote it for a shell).
const NO_FENCING: &str = "storage.fencing=\"none\"";

/// The trace hash a `replay` printed.
fn trace_hash(replay_stdout: &str) -> String {
    let start = replay_stdout.find("== trace hash ").expect("trace hash") + "== trace hash ".len();
    replay_stdout[start..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn textbook_max_token(dir: &std::path::Path) -> String {
    let text = fs::read_to_string(catalogue("gc-pause-textbook-max-token"))
        .unwrap()
        .lines()
        .map(|line| {
            if line.starts_with("seeds") {
                "seeds = \"0..2\"".to_string()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(dir.join("textbook.toml"), text).unwrap();
    "textbook.toml".to_string()
}

#[test]
fn check_junit_json_and_merge_replay_lines_keep_the_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let file = textbook_max_token(dir.path());
    let (code, console, stderr) = fencesim(
        &[
            "check", &file, "--set", NO_FENCING, "--junit", "j.xml", "--json", "c.json",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{console}{stderr}");
    let expected = "fencesim replay textbook.toml --seed 0 --set 'storage.fencing=\"none\"'";
    assert!(console.contains(expected), "{console}");
    // The console's line replays the failure (exit 1: a violation); without the override the
    // same seed passes, so a line that dropped it would not reproduce anything.
    let (code, replayed, _) = run_printed_line(&console, "replay: ", dir.path());
    assert_eq!(code, 1, "{replayed}");
    assert!(replayed.contains("== result: violates I3"), "{replayed}");
    let (code, _, _) = fencesim(&["replay", &file, "--seed", "0"], dir.path());
    assert_eq!(code, 0, "the scenario without the override passes");

    // JUnit's failure text ends with the same line (XML-escaped in the file).
    let junit = fs::read_to_string(dir.path().join("j.xml")).unwrap();
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let failure = doc
        .descendants()
        .find(|node| node.has_tag_name("failure"))
        .expect("a failure");
    let text = failure.text().unwrap();
    assert!(text.contains(expected), "{text}");
    let (code, from_junit, _) = run_printed_line(text, "replay: ", dir.path());
    assert_eq!(code, 1, "{from_junit}");
    assert_eq!(trace_hash(&from_junit), trace_hash(&replayed));

    // The JSON report keeps the overrides, so `merge` rebuilds the same line.
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("c.json")).unwrap()).unwrap();
    assert_eq!(
        json["scenarios"][0]["overrides"],
        serde_json::json!([NO_FENCING])
    );
    let (code, merged, _) = fencesim(&["merge", "c.json", "--junit", "m.xml"], dir.path());
    assert_eq!(code, 1, "{merged}");
    assert!(merged.contains(expected), "{merged}");
    let (code, from_merge, _) = run_printed_line(&merged, "replay: ", dir.path());
    assert_eq!(code, 1, "{from_merge}");
    assert_eq!(trace_hash(&from_merge), trace_hash(&replayed));
    let merged_junit = fs::read_to_string(dir.path().join("m.xml")).unwrap();
    let doc = roxmltree::Document::parse(&merged_junit).unwrap();
    let text = doc
        .descendants()
        .find(|node| node.has_tag_name("failure"))
        .and_then(|node| node.text())
        .expect("a failure");
    assert!(text.contains(expected), "{text}");
    let (code, from_merged_junit, _) = run_printed_line(text, "replay: ", dir.path());
    assert_eq!(code, 1, "{from_merged_junit}");
}

#[test]
fn shards_run_with_different_overrides_do_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let file = textbook_max_token(dir.path());
    let shard = |k: &str, set: &str, out: &str| {
        let (code, stdout, stderr) = fencesim(
            &["check", &file, "--shard", k, "--set", set, "--json", out],
            dir.path(),
        );
        assert!(code <= 1, "{stdout}{stderr}");
    };
    shard("1/2", "workers.writes_per_lease=2", "a.json");
    shard("2/2", "workers.writes_per_lease=3", "b.json");
    let (code, _, stderr) = fencesim(&["merge", "a.json", "b.json"], dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("textbook.toml"), "{stderr}");
}

#[test]
fn run_and_replay_lines_reproduce_and_an_overridden_summary_has_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = textbook_max_token(dir.path());
    let (code, plain, _) = fencesim(&["run", &file, "--out", "out"], dir.path());
    assert_eq!(code, 0, "{plain}");
    let own = dir
        .path()
        .join("out/gc-pause-textbook-max-token/summary.json");
    let before = fs::read_to_string(&own).unwrap();

    let (code, overridden, _) = fencesim(
        &["run", &file, "--set", NO_FENCING, "--out", "out"],
        dir.path(),
    );
    assert_eq!(code, 1, "{overridden}");
    // The file's own summary is untouched; the overridden one is beside it.
    assert_eq!(fs::read_to_string(&own).unwrap(), before);
    let written = overridden
        .lines()
        .find_map(|line| line.strip_prefix("summary written to "))
        .expect("summary path");
    assert!(written.contains("/set-"), "{written}");
    assert_ne!(dir.path().join(written), own);
    assert!(dir.path().join(written).exists());

    let (code, replayed, _) = run_printed_line(&overridden, "replay: ", dir.path());
    assert_eq!(code, 1, "{replayed}");
    // `replay`'s own reproduce line runs the same seed with the same hash.
    let (code, again, _) = run_printed_line(&replayed, "== reproduce: ", dir.path());
    assert_eq!(code, 1, "{again}");
    assert_eq!(trace_hash(&again), trace_hash(&replayed));
}

#[test]
fn shrinks_replay_line_reproduces_the_overridden_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = textbook_max_token(dir.path());
    let (code, stdout, stderr) = fencesim(
        &[
            "shrink",
            &file,
            "--seed",
            "0",
            "--set",
            NO_FENCING,
            "-o",
            "shrunk.toml",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, replayed, _) = run_printed_line(&stdout, "replay: ", dir.path());
    assert_eq!(code, 1, "{replayed}");
    assert!(replayed.contains("== result: violates I3"), "{replayed}");
}

#[test]
fn the_librarys_cli_line_reproduces_its_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = textbook_max_token(dir.path());
    let sim = fencesim::Simulation::load(dir.path().join(&file))
        .unwrap()
        .set(NO_FENCING)
        .unwrap()
        .seeds(0..2);
    let failure = sim
        .check()
        .expect_err("fencing off fails a safe expectation");
    let message = failure.to_string();
    let (code, replayed, _) =
        run_printed_line(&message, "or, with the built-in components: ", dir.path());
    assert_eq!(code, 1, "{message}\n{replayed}");
    assert_eq!(Some(trace_hash(&replayed)), failure.trace_hash, "{message}");
}

#[test]
fn seed_variables_are_honoured_by_run_and_replay_and_refused_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = textbook_max_token(dir.path());
    let none = catalogue("gc-pause-textbook-none");
    for variable in ["FENCESIM_SEED", "MADSIM_TEST_SEED"] {
        // replay: the variable names the seed.
        let (code, by_env, stderr) =
            fencesim_env(&["replay", &none], dir.path(), &[(variable, "1")]);
        assert_eq!(code, 1, "{by_env}{stderr}");
        assert!(
            by_env.contains(&format!("seed 1 from {variable}=1")),
            "{by_env}"
        );
        let (_, by_flag, _) = fencesim(&["replay", &none, "--seed", "1"], dir.path());
        assert_eq!(trace_hash(&by_env), trace_hash(&by_flag));
        // A contradicting flag is an error, not a silent choice.
        let (code, _, stderr) = fencesim_env(
            &["replay", &none, "--seed", "0"],
            dir.path(),
            &[(variable, "1")],
        );
        assert_eq!(code, 2, "{stderr}");
        // run: only that seed.
        let (code, stdout, stderr) = fencesim_env(
            &["run", &file, "--out", "out"],
            dir.path(),
            &[(variable, "1")],
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(
            stdout.contains(&format!("seeds 1..2 from {variable}=1")),
            "{stdout}"
        );
        assert!(stdout.contains("seeds 1..2, "), "{stdout}");
        // check: refused with the reason.
        let (code, stdout, stderr) =
            fencesim_env(&["check", &file], dir.path(), &[(variable, "1")]);
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(
            stderr.contains(variable) && stderr.contains("own seed range"),
            "{stderr}"
        );
    }
    let (code, _, stderr) = fencesim(&["replay", &none], dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--seed"), "{stderr}");
}

#[test]
fn run_prints_the_summary_then_at_most_max_failures_failing_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let none = catalogue("gc-pause-textbook-none");
    let args = [
        "run",
        &none,
        "--seeds",
        "0..12",
        "--out",
        "out",
        "--max-failures",
        "2",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let summary: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(dir.path().join("out/gc-pause-textbook-none/summary.json")).unwrap(),
    )
    .unwrap();
    let failing = summary["failing_seeds"].as_array().unwrap().len();
    assert!(failing > 2, "{summary}");
    assert_eq!(stdout.matches("    replay: ").count(), 2, "{stdout}");
    let first_failure = stdout.find("    replay: ").unwrap();
    let verdict = stdout.find("  expectation ").expect("the summary");
    assert!(verdict < first_failure, "summary first:\n{stdout}");
    assert!(
        stdout.contains(&format!("… and {} more failing seeds", failing - 2)),
        "{stdout}"
    );
    // Each printed line still reproduces.
    let (code, replayed, _) = run_printed_line(&stdout, "replay: ", dir.path());
    assert_eq!(code, 1, "{replayed}");
}

/// A seed or shard variable whose value is not UTF-8 is refused by name (exit 2), never taken
/// for an unset one (which would run every seed, or every shard's share).
#[test]
fn a_seed_or_shard_variable_that_is_not_utf8_is_refused_by_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let none = catalogue("gc-pause-textbook-none");
    let bad = std::ffi::OsStr::from_bytes(b"1\xff");
    let cases: [(&[&str], &str); 4] = [
        (&["replay", &none], "FENCESIM_SEED"),
        (&["run", &none, "--out", "out"], "FENCESIM_SEEDS"),
        (&["replay", &none], "MADSIM_TEST_SEED"),
        (&["check", &none, "--shard", "auto"], "FENCESIM_SHARD_INDEX"),
    ];
    for (args, variable) in cases {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_fencesim"));
        for name in ["FENCESIM_SEED", "FENCESIM_SEEDS", "MADSIM_TEST_SEED"] {
            command.env_remove(name);
        }
        if variable == "FENCESIM_SHARD_INDEX" {
            command.env("FENCESIM_SHARD_TOTAL", "2");
        }
        let out = command
            .args(args)
            .env(variable, bad)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{variable}: {stderr}");
        assert!(stderr.contains(variable), "{variable}: {stderr}");
        assert!(
            !dir.path().join("out").exists(),
            "{variable}: wrote outputs"
        );
    }
}
