//! `fencesim shrink` / `fencesim explore` as a user runs them: the written scenario
//! is confirmed by `fencesim run`, exit codes 0 / 1 / 2, nothing written on bad input.

mod util;

use std::fs;

use util::*;

/// Acceptance: the textbook seed shrinks to at most 2 faults and `fencesim run` confirms the
/// written file's `[expect]` (exit 0).
#[test]
fn shrink_writes_a_scenario_that_run_confirms() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = catalogue("gc-pause-textbook-none");
    let (code, stdout, stderr) = fencesim(
        &["shrink", &scenario, "--seed", "0", "-o", "shrunk.toml"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("1-minimal: true"), "{stdout}");
    assert!(
        stdout.contains("replay: fencesim replay shrunk.toml --seed 0"),
        "{stdout}"
    );
    let written = fs::read_to_string(dir.path().join("shrunk.toml")).unwrap();
    let faults = written.matches("[[faults.schedule]]").count();
    assert!((1..=2).contains(&faults), "{written}");
    assert!(!written.contains("[[faults.random]]"), "{written}");

    let (code, stdout, stderr) = fencesim(&["run", "shrunk.toml"], dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("seed 0: violates I3, I4"), "{stdout}");
}

#[test]
fn a_passing_seed_exits_1_and_bad_input_exits_2_writing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let safe = catalogue("durable-counter-restart");
    let (code, stdout, _) = fencesim(
        &["shrink", &safe, "--seed", "0", "-o", "out.toml"],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("nothing to shrink"), "{stdout}");

    let unsafe_ = catalogue("gc-pause-textbook-none");
    let cases: &[&[&str]] = &[
        &[
            "shrink",
            "no-such-file.toml",
            "--seed",
            "0",
            "-o",
            "out.toml",
        ],
        &[
            "shrink",
            &unsafe_,
            "--seed",
            "0",
            "-o",
            // Missing directories are created; an unwritable one is refused up front.
            "/proc/fencesim-missing/out.toml",
        ],
        &[
            "shrink",
            &unsafe_,
            "--seed",
            "0",
            "--max-runs",
            "0",
            "-o",
            "out.toml",
        ],
        &["explore", &unsafe_, "--cases", "0", "-o", "out.toml"],
    ];
    for args in cases {
        let (code, _, stderr) = fencesim(args, dir.path());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn explore_finds_shrinks_and_writes_or_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_ = catalogue("fence-on-acquire-window-random");
    let (code, stdout, stderr) = fencesim(
        &[
            "explore",
            &unsafe_,
            "--cases",
            "32",
            "--sweep-seeds",
            "50",
            "-o",
            "found.toml",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("first violation after"), "{stdout}");
    assert!(
        stdout.contains("a plain run of seeds 0..100 needed"),
        "{stdout}"
    );
    let (code, stdout, stderr) = fencesim(&["run", "found.toml"], dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");

    let safe = catalogue("swarm-all-faults-same-store-txn");
    let (code, stdout, _) = fencesim(
        &[
            "explore",
            &safe,
            "--cases",
            "16",
            "--sweep-seeds",
            "0",
            "-o",
            "none.toml",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("no violation in 16 cases"), "{stdout}");
    assert!(!dir.path().join("none.toml").exists());
}

#[test]
fn explore_guided_finds_shrinks_and_writes_or_exits_1_and_refuses_bad_budgets() {
    let dir = tempfile::tempdir().unwrap();
    let hard = catalogue("chaos-5-workers-max-token");
    let (code, stdout, stderr) = fencesim(
        &[
            "explore",
            &hard,
            "--guided",
            "--runs",
            "30",
            "--jobs",
            "2",
            "--invariants",
            "I4",
            "--sweep-seeds",
            "30",
            "-o",
            "found.toml",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("first violation at run"), "{stdout}");
    assert!(stdout.contains("lineage of run"), "{stdout}");
    assert!(
        stdout.contains("a plain run of seeds 0..1000 found no violation of [I4] in 30 seeds"),
        "{stdout}"
    );
    assert!(stdout.contains("abstract states"), "{stdout}");
    let (code, stdout, stderr) = fencesim(&["run", "found.toml"], dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");

    // max-token keeps I3 whatever the pauses (its I4 gap is found: see the module docs of
    // fencesim_explore::lineage).
    let safe = catalogue("gc-pause-textbook-max-token");
    let (code, stdout, _) = fencesim(
        &[
            "explore",
            &safe,
            "--guided",
            "--runs",
            "12",
            "--invariants",
            "I3",
            "--sweep-seeds",
            "0",
            "-o",
            "none.toml",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("no violation in 12 runs"), "{stdout}");
    assert!(!dir.path().join("none.toml").exists());

    for (args, expected) in [
        (
            vec!["--guided", "--runs", "0"],
            "--runs: expected a number of runs from 1",
        ),
        (vec!["--guided", "--runs", "1000001"], "--runs: expected"),
        (
            vec!["--guided", "--invariants", "I9"],
            "--invariants: expected a comma-separated list of I1, I2, I3, I4, I5",
        ),
        (vec!["--runs", "5"], "--guided"),
        (
            vec!["--jobs", "2"],
            "--jobs: only with --guided or --exhaustive",
        ),
        (vec!["--guided", "--exhaustive"], "--exhaustive"),
        (vec!["--guided", "--cases", "5"], "--cases"),
    ] {
        let mut all = vec!["explore", safe.as_str()];
        all.extend(args.iter().copied());
        all.extend(["-o", "bad.toml"]);
        let (code, stdout, stderr) = fencesim(&all, dir.path());
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!dir.path().join("bad.toml").exists());
    }
}

/// `explore --exhaustive`: a violation exits 1 with the schedule shrunk, written and confirmed;
/// a bound covered without one exits 0 with the statement; bad input exits 2 naming the flag,
/// before any run and writing nothing.
#[test]
fn exhaustive_exit_codes_statement_and_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_ = catalogue("search/textbook-none");
    let (code, stdout, stderr) = fencesim(
        &[
            "explore",
            &unsafe_,
            "--exhaustive",
            "--resolution-ms",
            "1000",
            "--jobs",
            "2",
            "-o",
            "found.toml",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("violation of I3, I4 found by schedule"),
        "{stdout}"
    );
    assert!(
        stdout.contains("confirmed by a fresh run of the written file: true"),
        "{stdout}"
    );
    assert!(dir.path().join("found.toml").exists());

    let safe = catalogue("search/textbook-max-token");
    let (code, stdout, stderr) = fencesim(
        &[
            "explore",
            &safe,
            "--exhaustive",
            "--resolution-ms",
            "5000",
            "--horizon-ms",
            "10000",
            "--invariants",
            "I3",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    // 4 letters x 2 start times: 1 + 8 + 28 pairs, less the two pauses 5 s apart.
    assert!(
        stdout.contains(
            "no violation of I3 for any ≤ 2-fault schedule at 5000 ms resolution over 35 schedules"
        ),
        "{stdout}"
    );

    for (args, expected) in [
        (vec!["--resolution-ms", "0"], "--resolution-ms: expected a positive"),
        (vec!["--horizon-ms", "30001"], "--horizon-ms: expected a horizon from 1"),
        (vec!["--max-faults", "3"], "--max-faults: expected at most 2"),
        (vec!["--invariants", "I6"], "--invariants: expected"),
        (vec!["--jobs", "0"], "--jobs: expected"),
        (
            vec!["--max-schedules", "1000"],
            "--max-schedules: 113,251 schedules of at most 2 faults (2 faults in the alphabet x 300 start times",
        ),
    ] {
        let mut all = vec!["explore", &unsafe_, "--exhaustive", "-o", "refused.toml"];
        all.extend(args);
        let (code, stdout, stderr) = fencesim(&all, dir.path());
        assert_eq!(code, 2, "{all:?}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{all:?}: {stderr}");
        assert!(stdout.is_empty(), "{all:?}: {stdout}");
        assert!(!dir.path().join("refused.toml").exists());
    }
}

/// `-o /dev/null` (accepted by the preflight, as for every command) is written in place and the
/// written text confirmed: exit 0, not a shrink followed by exit 2 when the file is read back.
#[test]
fn shrink_and_explore_to_dev_null_confirm_the_text_and_exit_as_usual() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_ = catalogue("gc-pause-textbook-none");
    let (code, stdout, stderr) = fencesim(
        &["shrink", &unsafe_, "--seed", "0", "-o", "/dev/null"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(stdout.contains("written to /dev/null"), "{stdout}");
    assert!(
        stdout.contains("confirmed by a fresh run of the written file: true"),
        "{stdout}"
    );
    assert!(stdout.contains("replay: not a file"), "{stdout}");
    let search = catalogue("search/textbook-none");
    let (code, stdout, stderr) = fencesim(
        &[
            "explore",
            &search,
            "--exhaustive",
            "--resolution-ms",
            "1000",
            "-o",
            "/dev/null",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(
        stdout.contains("confirmed by a fresh run of the written file: true"),
        "{stdout}"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

/// An option of `--guided` or `--exhaustive` given with the other mode (or with neither) is
/// refused naming the option and its mode, before any run, writing nothing.
#[test]
fn each_search_modes_options_are_refused_with_the_other_mode() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_ = catalogue("search/textbook-none");
    for (args, expected) in [
        (
            vec!["--exhaustive", "--runs", "5"],
            "--runs: an option of --guided, got it with --exhaustive",
        ),
        (
            vec!["--exhaustive", "--search-seed", "1"],
            "--search-seed: an option of --guided",
        ),
        (
            vec!["--exhaustive", "--no-lineage"],
            "--no-lineage: an option of --guided",
        ),
        (
            vec!["--guided", "--resolution-ms", "5"],
            "--resolution-ms: an option of --exhaustive, got it with --guided",
        ),
        (
            vec!["--guided", "--max-faults", "1"],
            "--max-faults: an option of --exhaustive",
        ),
        (
            vec!["--guided", "--horizon-ms", "1000"],
            "--horizon-ms: an option of --exhaustive",
        ),
        (
            vec!["--guided", "--max-schedules", "9"],
            "--max-schedules: an option of --exhaustive",
        ),
        (
            vec!["--guided", "--all"],
            "--all: an option of --exhaustive",
        ),
        (
            vec!["--cases", "1", "--runs", "5"],
            "--runs: an option of --guided, got it with proptest",
        ),
        (
            vec!["--cases", "1", "--all"],
            "--all: an option of --exhaustive, got it with proptest",
        ),
    ] {
        let mut all = vec!["explore", unsafe_.as_str()];
        all.extend(args.iter().copied());
        all.extend(["-o", "bad.toml"]);
        let (code, stdout, stderr) = fencesim(&all, dir.path());
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

/// `--guided --invariants I5` compares with a sweep counting only I5: the textbook seeds
/// violate I3 and I4 from seed 0, never I5.
#[test]
fn the_guided_comparison_sweep_counts_only_the_target_invariants() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_ = catalogue("search/textbook-none");
    let run = |invariants: &str| {
        let (code, stdout, stderr) = fencesim(
            &[
                "explore",
                &unsafe_,
                "--guided",
                "--runs",
                "1",
                "--invariants",
                invariants,
                "--sweep-seeds",
                "3",
                "-o",
                "found.toml",
            ],
            dir.path(),
        );
        assert!(stderr.is_empty(), "{stderr}");
        (code, stdout)
    };
    let (code, stdout) = run("I5");
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("a plain run of seeds 0..10 found no violation of [I5] in 3 seeds"),
        "{stdout}"
    );
    let (_, stdout) = run("I3");
    assert!(
        stdout.contains("needed 1 seeds (first violation of [I3]: seed 0)"),
        "{stdout}"
    );
}

/// `--exhaustive` prints the same progress lines with 1 and 2 jobs (it reported after each
/// chunk, 32 schedules per job).
#[test]
fn exhaustive_progress_does_not_depend_on_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let safe = catalogue("search/textbook-max-token");
    let progress = |jobs: &str| {
        let (code, stdout, stderr) = fencesim(
            &[
                "explore",
                &safe,
                "--exhaustive",
                "--max-faults",
                "1",
                "--resolution-ms",
                "250",
                "--horizon-ms",
                "10000",
                "--invariants",
                "I3",
                "--jobs",
                jobs,
            ],
            dir.path(),
        );
        assert_eq!(code, 0, "{stdout}{stderr}");
        stdout
            .lines()
            .filter(|line| line.contains("schedules run"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let one = progress("1");
    assert!(one.len() >= 4, "{one:?}");
    assert_eq!(progress("2"), one);
}

/// proptest stays quiet: its "Aborting shrinking after ... iterations" line no longer reaches
/// stderr (the chaos example needs proptest's shrinking), and no `PROPTEST_*` variable but
/// `PROPTEST_CASES` is read (a malformed one printed proptest's warning). `PROPTEST_CASES` is
/// `--cases`'s default, as in proptest's own tests; `--cases` wins; a malformed value exits 2.
#[test]
fn explore_keeps_proptest_quiet_and_takes_its_cases_from_proptest_cases() {
    let dir = tempfile::tempdir().unwrap();
    let chaos = catalogue("chaos-5-workers-max-token");
    let explore = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["explore", chaos.as_str(), "--sweep-seeds", "0"];
        args.extend(extra);
        args.extend(["-o", "found.toml"]);
        fencesim_env(&args, dir.path(), env)
    };
    let (code, stdout, stderr) = explore(
        &["--cases", "100"],
        &[
            ("PROPTEST_MAX_SHRINK_ITERS", "x"),
            ("PROPTEST_VERBOSE", "2"),
        ],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("first violation after"), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");

    let (code, stdout, stderr) = explore(&[], &[("PROPTEST_CASES", "3")]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains(", 3 cases (PROPTEST_CASES)"), "{stdout}");
    assert!(stdout.contains("no violation in 3 cases"), "{stdout}");
    let (_, stdout, _) = explore(&["--cases", "2"], &[("PROPTEST_CASES", "3")]);
    assert!(stdout.contains(", 2 cases\n"), "{stdout}");
    for (value, expected) in [
        (
            "x",
            "PROPTEST_CASES (the default of --cases): expected a number of cases",
        ),
        ("0", "PROPTEST_CASES: expected a positive number, got 0"),
        ("+3", "PROPTEST_CASES (the default of --cases)"),
    ] {
        let (code, stdout, stderr) = explore(&[], &[("PROPTEST_CASES", value)]);
        assert_eq!(code, 2, "{value}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{value}: {stderr}");
        assert!(stdout.is_empty(), "{value}: {stdout}");
    }
}
