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

/// The fenced textbook pause (`safe`, its sweep passes) beside `claimed_safe`'s, with seeds
/// 10..14 recorded under `--set storage.fencing=none` (where they violate I3 and I4).
fn fenced_with_recorded_unfenced_seeds(dir: &Path) -> std::path::PathBuf {
    let text = fs::read_to_string(catalogue("gc-pause-textbook-max-token"))
        .unwrap()
        .replace("seeds = \"0..50\"", "seeds = \"0..3\"");
    let cat = dir.join("fenced");
    fs::create_dir_all(&cat).unwrap();
    let path = cat.join("fenced.toml");
    fs::write(&path, text).unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "run",
            "fenced/fenced.toml",
            "--seeds",
            "10..12",
            "--set",
            "storage.fencing=none",
            "--record-failures",
            "--out",
            "out",
        ],
        dir,
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("2 newly recorded"), "{stdout}");
    path
}

/// Issue 31 items 2 and 3: a recorded seed that still contradicts the expectation fails the
/// row, the count, JUnit (its own testcase, with its reproduce line, `--set` included),
/// check.json's `all_met` and the exit code; it is re-run under the overrides it was recorded
/// with, and says so. (Before: skipped without a word, everything green.)
#[test]
fn a_recorded_seed_that_still_fails_fails_every_report() {
    let tmp = tempfile::tempdir().unwrap();
    fenced_with_recorded_unfenced_seeds(tmp.path());
    let (code, stdout, stderr) = fencesim(
        &["check", "fenced", "--junit", "j.xml", "--json", "c.json"],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let replay = "fencesim replay fenced/fenced.toml --seed 10 --set storage.fencing=none";
    assert!(
        stdout.contains(&format!(
            "recorded seed 10 of fenced/fenced.toml (under --set storage.fencing=none): still \
             fails the same way (same trace); contradicts the expectation (replay: {replay})"
        )),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|line| line.starts_with("gc-pause-textbook-max-token"))
        .unwrap();
    assert!(row.contains(" FAILED "), "{row}");
    assert!(stdout.contains("1 scenarios, 1 failed"), "{stdout}");
    let junit = fs::read_to_string(tmp.path().join("j.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).unwrap();
    let suite = xml.root_element();
    assert_eq!(suite.attribute("tests"), Some("3"), "{junit}");
    assert_eq!(suite.attribute("failures"), Some("2"), "{junit}");
    assert!(junit.contains(&format!("replay: {replay}")), "{junit}");
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(tmp.path().join("c.json")).unwrap()).unwrap();
    assert_eq!(report["all_met"], false);
    assert_eq!(report["scenarios"][0]["verdict"], "FAILED");
    assert_eq!(report["scenarios"][0]["recorded"][1]["contradicts"], true);

    // The same seeds recorded now pass (fenced): reported, and nothing fails.
    let file = tmp.path().join("fenced/fenced.regressions");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text.replace("storage.fencing=none", "storage.fencing=max-token"),
    )
    .unwrap();
    let (code, stdout, stderr) = fencesim(&["check", "fenced", "--json", "c.json"], tmp.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("(under --set storage.fencing=max-token) (recorded under another version of the scenario): NO LONGER FAILS: passes now"),
        "{stdout}"
    );

    // An entry's overrides are validated as the file is read: exit 2 naming file:line, field.
    fs::write(
        &file,
        text.replace("storage.fencing=none", "storage.fencing=bogus"),
    )
    .unwrap();
    let (code, stdout, stderr) = fencesim(&["check", "fenced"], tmp.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("fenced/fenced.regressions:3: set: ") && stderr.contains("storage.fencing"),
        "{stderr}"
    );
    assert!(!stdout.contains("recorded seed"), "nothing ran: {stdout}");
}

/// Under `--shard`, each recorded seed is re-run by exactly one shard, and `merge` fails when
/// any shard's recorded seed fails (before: only shard 1 ran them, and merge was green).
#[test]
fn sharded_recorded_seeds_run_once_and_a_failing_one_makes_the_merge_red() {
    let tmp = tempfile::tempdir().unwrap();
    fenced_with_recorded_unfenced_seeds(tmp.path());
    let mut parts = Vec::new();
    let mut reruns = 0;
    for k in 1..=3 {
        let part = format!("p{k}.json");
        let (code, stdout, stderr) = fencesim(
            &[
                "check",
                "fenced",
                "--shard",
                &format!("{k}/3"),
                "--json",
                &part,
            ],
            tmp.path(),
        );
        reruns += stdout.matches("  recorded seed ").count();
        // Shards 1 and 2 hold recorded seeds #0 and #1 (both still fail): a certain failure.
        assert_eq!(code, if k < 3 { 1 } else { 0 }, "{stdout}{stderr}");
        parts.push(part);
    }
    assert_eq!(reruns, 2, "each recorded seed re-run by exactly one shard");
    let mut args = vec!["merge", "--junit", "j.xml", "--json", "m.json"];
    args.extend(parts.iter().map(String::as_str));
    let (code, stdout, stderr) = fencesim(&args, tmp.path());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("--seed 11 --set storage.fencing=none"),
        "{stdout}"
    );
    let junit = fs::read_to_string(tmp.path().join("j.xml")).unwrap();
    assert!(junit.contains("failures=\"2\""), "{junit}");
    let (code, _, _) = fencesim(&["check", "fenced", "--json", "whole.json"], tmp.path());
    assert_eq!(code, 1);
    assert!(
        fs::read(tmp.path().join("whole.json")).unwrap()
            == fs::read(tmp.path().join("m.json")).unwrap(),
        "merged shards differ from the unsharded report"
    );
}

/// Issue 31 item 4: four recorders at once on one scenario (disjoint seed ranges) keep every
/// failing seed (before: 10–15 of 20 kept, each process saying "5 newly recorded").
#[test]
fn concurrent_recorders_keep_every_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let s = scenario.to_str().unwrap().to_string();
    for trial in 0..3 {
        let file = tmp.path().join("cat/textbook.regressions");
        let _ = fs::remove_file(&file);
        let children: Vec<_> = (0..4u64)
            .map(|k| {
                let (s, dir) = (s.clone(), tmp.path().to_path_buf());
                std::thread::spawn(move || {
                    let seeds = format!("{}..{}", 5 * k, 5 * k + 5);
                    let out = format!("out-{k}");
                    fencesim(
                        &[
                            "run",
                            &s,
                            "--seeds",
                            &seeds,
                            "--jobs",
                            "1",
                            "--record-failures",
                            "--record-limit",
                            "100",
                            "--out",
                            &out,
                        ],
                        &dir,
                    )
                })
            })
            .collect();
        for child in children {
            let (code, stdout, stderr) = child.join().unwrap();
            assert_eq!(code, 1, "{stdout}{stderr}");
            assert!(stdout.contains("5 newly recorded"), "{stdout}");
        }
        let mut seeds: Vec<u64> = fencesim::regressions::load(&file)
            .unwrap()
            .iter()
            .map(|e| e.seed)
            .collect();
        seeds.sort_unstable();
        assert_eq!(seeds, (0..20).collect::<Vec<_>>(), "trial {trial}");
    }
}

/// A cap per failure signature: the first N seeds with one failure are kept, the rest
/// counted and the count printed (before: every failing seed, 50 of 50).
#[test]
fn recording_keeps_the_first_seeds_of_each_failure_and_counts_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let s = scenario.to_str().unwrap();
    let args = |limit: &'static str| {
        vec![
            "run",
            s,
            "--seeds",
            "0..8",
            "--record-failures",
            "--record-limit",
            limit,
            "--out",
            "out",
        ]
    };
    let (code, stdout, stderr) = fencesim(&args("3"), tmp.path());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("8 seed(s) contradicted the expectation, 3 newly recorded in")
            && stdout.contains("textbook.regressions; 5 more not recorded: the file keeps the first 3 seeds per failure"),
        "{stdout}"
    );
    let entries = fencesim::regressions::load(&tmp.path().join("cat/textbook.regressions"));
    let seeds: Vec<u64> = entries.unwrap().iter().map(|e| e.seed).collect();
    assert_eq!(seeds, [0, 1, 2]);
    let (code, _, stderr) = fencesim(&args("0"), tmp.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--record-limit: expected 1 to 1000"),
        "{stderr}"
    );
}

/// `soak` interrupted: what the running batch found is recorded (every seed it printed) and
/// the range covered printed, exit 130 (before: nothing recorded, no range).
#[test]
fn an_interrupted_soak_records_what_it_found_and_prints_its_range() {
    use std::io::{BufRead as _, Read as _};
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args([
            "soak",
            scenario.to_str().unwrap(),
            "--budget-s",
            "600",
            "--base-seed",
            "7",
            "--jobs",
            "2",
            "--record-limit",
            "1000",
        ])
        .env_remove("FENCESIM_SEED")
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut text = String::new();
    while text.matches("\nseed ").count() < 40 {
        assert!(stdout.read_line(&mut text).unwrap() > 0, "{text}");
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    stdout.read_to_string(&mut text).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{text}");
    let line = text
        .lines()
        .find(|line| line.starts_with("interrupted by SIGINT: soak: seeds 7.."))
        .unwrap_or_else(|| panic!("no range printed: {text}"));
    assert!(line.contains("repeat with `fencesim run"), "{line}");
    let printed: Vec<u64> = text
        .lines()
        .filter_map(|line| line.strip_prefix("seed ")?.split(':').next()?.parse().ok())
        .collect();
    let recorded: Vec<u64> =
        fencesim::regressions::load(&tmp.path().join("cat/textbook.regressions"))
            .unwrap()
            .iter()
            .map(|e| e.seed)
            .collect();
    assert!(printed.len() >= 40);
    assert_eq!(recorded, printed, "every seed found is recorded, in order");
    assert!(
        line.contains(&format!(
            "{} contradicted the expectation, {} newly recorded",
            printed.len(),
            printed.len()
        )),
        "{line}"
    );
}

/// `soak` at its regressions file's maximum stops with a clear line and exit 1, having
/// recorded what fit (before: exit 2, nothing recorded); seed variables and a base seed with
/// no seeds after it are refused (exit 2).
#[test]
fn soak_stops_at_the_files_maximum_and_refuses_what_it_cannot_honour() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = claimed_safe(tmp.path());
    let s = scenario.to_str().unwrap();
    let file = tmp.path().join("cat/textbook.regressions");
    let mut text = String::new();
    for seed in 0..fencesim::regressions::MAX_ENTRIES as u64 - 2 {
        text.push_str(&format!(
            "{{\"seed\":{},\"set\":[\"x.y=1\"],\"scenario_hash\":\"0123456789abcdef\",\"trace_hash\":\"0123456789abcdef\",\"violated\":[\"I3\"]}}\n",
            1_000_000 + seed
        ));
    }
    fs::write(&file, text).unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "soak",
            s,
            "--budget-s",
            "600",
            "--base-seed",
            "0",
            "--jobs",
            "1",
        ],
        tmp.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("holds its maximum of 1000 recorded seeds; fix or prune"),
        "{stdout}"
    );
    assert!(stdout.contains("soak: seeds 0.."), "{stdout}");
    assert_eq!(fencesim::regressions::load(&file).unwrap().len(), 1000);

    let refused = [
        (
            vec!["--base-seed", "18446744073709551000"],
            vec![],
            "--base-seed: expected at most",
        ),
        (
            vec!["--base-seed", "0"],
            vec![("FENCESIM_SEED", "3")],
            "FENCESIM_SEED=3 is set, but `soak`",
        ),
    ];
    for (args, env, expected) in refused {
        let mut all = vec!["soak", s, "--budget-s", "1"];
        all.extend(args);
        let (code, stdout, stderr) = util::fencesim_env(&all, tmp.path(), &env);
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    }
}
