//! The regressions file: `run --record-failures` and `soak` record the seeds that contradict a
//! scenario's expectation next to it, `check` runs them first and says when one no longer
//! fails the same way.

mod util;

use std::{fs, path::Path};

use util::{catalogue, fencesim};

/// The unfenced textbook pause, claimed safe: every seed contradicts it.
fn claimed_safe(dir: &Path) -> std::path::PathBuf {
    let text = fs::read_to_string(catalogue("gc-pause-textbook-none"))
        .unwrap()
        .replace("seeds = \"0..50\"", "seeds = \"0..3\"")
        .replace(
            "violates = [\"I3\", \"I4\"]\ncoverage = [\"lease-expired-while-paused\", \"takeover\", \"stale-write-presented\"]",
            "safe = true\ncoverage = [\"takeover\"]",
        );
    assert!(text.contains("safe = true"), "{text}");
    let dir = dir.join("cat");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("textbook.toml");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn run_records_failing_seeds_once_and_check_runs_them_first() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let s = scenario.to_str().unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "run",
            s,
            "--seeds",
            "0..2",
            "--record-failures",
            "--out",
            "out",
        ],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("2 newly recorded"), "{stdout}");
    let file = tmp.path().join("cat/textbook.regressions");
    let entries = fencesim::regressions::load(&file).unwrap();
    assert_eq!(
        entries.iter().map(|e| e.seed).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert_eq!(entries[0].violated, vec!["I3", "I4"]);
    // Again: nothing new.
    let (_, stdout, _) = fencesim(
        &[
            "run",
            s,
            "--seeds",
            "0..2",
            "--record-failures",
            "--out",
            "out",
        ],
        tmp.path(),
    );
    assert!(stdout.contains("0 newly recorded"), "{stdout}");
    assert_eq!(fencesim::regressions::load(&file).unwrap().len(), 2);

    // check runs the recorded seeds first: they still fail, the same way.
    let (code, stdout, _) = fencesim(&["check", "cat"], tmp.path());
    assert_eq!(code, 1, "{stdout}");
    // Before the scenario's own row in the table.
    let first = stdout
        .find("recorded seed 0 of")
        .expect("recorded seeds reported");
    let row = stdout
        .find("\ntextbook")
        .or(stdout.find("\ngc-pause"))
        .unwrap_or(usize::MAX);
    assert!(first < row, "{stdout}");
    assert!(
        stdout.contains("recorded seed 0 of cat/textbook.toml: still fails the same way (same trace); contradicts the expectation (replay: fencesim replay cat/textbook.toml --seed 0)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 recorded seed(s) still contradict"),
        "{stdout}"
    );

    // Fixed (fenced): the recorded seeds pass now, and check says so.
    let fixed = fs::read_to_string(&scenario)
        .unwrap()
        .replace("fencing = \"none\"", "fencing = \"same-store-txn\"");
    fs::write(&scenario, fixed).unwrap();
    let (code, stdout, _) = fencesim(&["check", "cat"], tmp.path());
    assert!(
        stdout.contains("recorded seed 1 of cat/textbook.toml (recorded under another version of the scenario): NO LONGER FAILS: passes now"),
        "{stdout}"
    );
    assert!(!stdout.contains("still contradict"), "{stdout}");
    let _ = code; // the fenced scenario's own verdict is another matter (its coverage)

    // A malformed regressions file stops check before anything runs (exit 2).
    fs::write(&file, "{\"seed\": \"zero\"}\n").unwrap();
    let (code, _, stderr) = fencesim(&["check", "cat"], tmp.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("textbook.regressions:1:"), "{stderr}");
}

#[test]
fn soak_runs_from_a_printed_base_seed_and_records_what_it_finds() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let s = scenario.to_str().unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "soak",
            s,
            "--budget-s",
            "1",
            "--base-seed",
            "100",
            "--jobs",
            "1",
        ],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("base seed 100"), "{stdout}");
    assert!(stdout.contains("soak: seeds 100.."), "{stdout}");
    let entries =
        fencesim::regressions::load(&tmp.path().join("cat/textbook.regressions")).unwrap();
    assert!(!entries.is_empty() && entries[0].seed == 100, "{entries:?}");
    for bad in ["0", "604801"] {
        let (code, _, stderr) = fencesim(&["soak", s, "--budget-s", bad], tmp.path());
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("--budget-s: expected 1 to 604800"),
            "{stderr}"
        );
    }
}

#[test]
fn check_records_contradicting_seeds_and_the_next_check_runs_them_first() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let dir = scenario.parent().unwrap().to_str().unwrap().to_string();
    let (code, stdout, stderr) = fencesim(&["check", &dir, "--record-failures"], tmp.path());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("3 seed(s) contradicted the expectation, 3 newly recorded in"),
        "{stdout}"
    );
    let file = tmp.path().join("cat/textbook.regressions");
    let entries = fencesim::regressions::load(&file).unwrap();
    assert_eq!(
        entries.iter().map(|e| e.seed).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    // The next check runs them first and records nothing new.
    let (code, stdout, _) = fencesim(&["check", &dir, "--record-failures"], tmp.path());
    assert_eq!(code, 1);
    assert!(stdout.contains("still fails the same way"), "{stdout}");
    assert!(stdout.contains("0 newly recorded"), "{stdout}");
    // A scenario whose seeds meet its expectation records nothing.
    let ok = tmp.path().join("ok");
    fs::create_dir_all(&ok).unwrap();
    fs::copy(
        catalogue("gc-pause-textbook-max-token"),
        ok.join("fenced.toml"),
    )
    .unwrap();
    let (code, stdout, stderr) = fencesim(
        &["check", ok.to_str().unwrap(), "--record-failures"],
        tmp.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!ok.join("fenced.regressions").exists(), "{stdout}");
    // Not with --shard: each shard would rewrite the same files.
    let (code, _, stderr) = fencesim(
        &["check", &dir, "--record-failures", "--shard", "1/2"],
        tmp.path(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--record-failures: not with --shard"),
        "{stderr}"
    );
}

#[test]
fn explore_records_the_plain_sweeps_first_failing_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let s = scenario.to_str().unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "explore",
            s,
            "--cases",
            "2",
            "--sweep-seeds",
            "3",
            "--record-failures",
            "-o",
            "found.toml",
        ],
        tmp.path(),
    );
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("--record-failures: seed 0 (the plain sweep's first failure) recorded in"),
        "{stdout}"
    );
    let entries =
        fencesim::regressions::load(&tmp.path().join("cat/textbook.regressions")).unwrap();
    assert_eq!(entries.iter().map(|e| e.seed).collect::<Vec<_>>(), vec![0]);
    // The scenario as the catalogue has it expects I3 and I4: its violations are no regression.
    let expected = tmp.path().join("expected.toml");
    fs::copy(catalogue("gc-pause-textbook-none"), &expected).unwrap();
    let (_, stdout, stderr) = fencesim(
        &[
            "explore",
            expected.to_str().unwrap(),
            "--cases",
            "2",
            "--sweep-seeds",
            "3",
            "--record-failures",
            "-o",
            "found2.toml",
        ],
        tmp.path(),
    );
    assert!(
        stdout.contains("violates only what the scenario expects; nothing recorded"),
        "{stdout}{stderr}"
    );
    assert!(!tmp.path().join("expected.regressions").exists());
}
