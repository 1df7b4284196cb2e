//! Fuzzing the command-line layer with proptest (cargo-fuzz needs nightly): argument
//! lists drawn from every subcommand, flag and a pool of hostile values (negative, huge,
//! malformed ranges and shards, missing files, directories, `/dev/null`, the input itself as an
//! output). The property: the real binary never panics (exit 101 or "panicked at" on stderr)
//! and exits 0, 1 or 2. A case still running after a few seconds (a valid request for a long
//! run) is stopped and counts as no panic.
//!
//! `cargo test -p fencesim-cli --test fuzz` runs 48 cases with a fixed seed (seconds, in CI);
//! `FENCESIM_FUZZ_CASES=2000 cargo test --release -p fencesim-cli --test fuzz` is the long run
//! (`FENCESIM_FUZZ_SEED=N` for another stream).

use std::{
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

// Loads rand so that clippy can resolve the `rand::…` bans of clippy.toml in this test crate
// (otherwise rand is only reachable through proptest, and clippy warns about the config).
use rand as _;

use proptest::{
    prelude::*,
    test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner},
};

const SUBCOMMANDS: &[&str] = &[
    "run",
    "check",
    "merge",
    "replay",
    "shrink",
    "explore",
    "tune",
    "sensitivity",
    "mutants",
    "bogus",
    "",
    "--help",
    "--version",
];

const FLAGS: &[&str] = &[
    "--seeds",
    "--jobs",
    "--out",
    "--set",
    "--seed",
    "--shard",
    "--json",
    "--junit",
    "--matrix",
    "--coverage",
    "--window",
    "--nodes",
    "--svg",
    "--png",
    "--perfetto",
    "--trace",
    "--cases",
    "--max-runs",
    "--vary",
    "--safe-seeds",
    "--detect-max",
    "-o",
    "--resolved",
    "--check-determinism",
    "--sweep-seeds",
    "--skip-mutants",
    "--help",
];

const VALUES: &[&str] = &[
    "s.toml",
    "dir",
    "missing.toml",
    "/dev/null",
    "out/x.json",
    "s.toml",
    "0",
    "1",
    "-1",
    "2",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "0..0",
    "5..1",
    "0..3",
    "a..b",
    "0..18446744073709551615",
    "1/0",
    "0/0",
    "2/1",
    "1/18446744073709551615",
    "lease.ttl_ms=-5",
    "lease.ttl_ms=9223372036854775807",
    "x=y",
    "=",
    "",
    "..",
    "worker-0",
    "0..100000",
    "lease.ttl_ms=1..2:0",
    "lease.ttl_ms=2000,5000",
    "nan",
    "\u{0}",
    "é",
];

fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(FLAGS).prop_map(str::to_string),
        4 => proptest::sample::select(VALUES).prop_map(str::to_string),
        1 => "[ -~]{0,12}",
    ]
}

/// Near-valid: a subcommand, the scenario, then flag-value pairs (what validation sees).
fn near_valid() -> impl Strategy<Value = Vec<String>> {
    (
        proptest::sample::select(&SUBCOMMANDS[..8]),
        proptest::collection::vec(
            (
                proptest::sample::select(FLAGS),
                proptest::sample::select(VALUES),
            ),
            0..4,
        ),
    )
        .prop_map(|(sub, pairs)| {
            let mut all = vec![sub.to_string(), "s.toml".to_string()];
            for (flag, value) in pairs {
                all.push(flag.to_string());
                if !value.contains('\0') {
                    all.push(value.to_string());
                }
            }
            all
        })
}

fn args() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![arbitrary_args(), near_valid()]
}

fn arbitrary_args() -> impl Strategy<Value = Vec<String>> {
    (
        proptest::sample::select(SUBCOMMANDS),
        proptest::collection::vec(arg(), 0..7),
    )
        .prop_map(|(sub, rest)| {
            let mut all = Vec::with_capacity(rest.len() + 1);
            if !sub.is_empty() {
                all.push(sub.to_string());
            }
            all.extend(rest.into_iter().filter(|a| !a.contains('\0')));
            all
        })
}

/// Runs the binary in `dir`; `None` when it was still running after `limit` (then killed).
fn run(args: &[String], dir: &Path, limit: Duration) -> Option<(i32, String)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fencesim");
    let step = Duration::from_millis(20);
    let mut waited = Duration::ZERO;
    loop {
        if child.try_wait().expect("wait").is_some() {
            let output = child.wait_with_output().expect("output");
            return Some((
                output.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            ));
        }
        if waited >= limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(step);
        waited += step;
    }
}

#[test]
fn no_argument_list_makes_the_cli_panic() {
    let cases = std::env::var("FENCESIM_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(48);
    let seed: u64 = std::env::var("FENCESIM_FUZZ_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = fencesim_testkit::catalogue_path("shared-lease-sticky-job-starves");
    std::fs::copy(&scenario, dir.path().join("s.toml")).expect("copy a scenario");
    std::fs::create_dir(dir.path().join("dir")).expect("a directory");
    std::fs::create_dir(dir.path().join("out")).expect("an output directory");
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(b"cli-args");
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    let result = runner.run(&args(), |args| {
        match run(&args, dir.path(), Duration::from_secs(3)) {
            None => Ok(()),
            Some((code, stderr)) => {
                if code == 101 || stderr.contains("panicked at") {
                    return Err(TestCaseError::fail(format!(
                        "fencesim {args:?} panicked (exit {code}):\n{stderr}"
                    )));
                }
                if !(0..=2).contains(&code) {
                    return Err(TestCaseError::fail(format!(
                        "fencesim {args:?} exited {code}:\n{stderr}"
                    )));
                }
                Ok(())
            }
        }
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}
