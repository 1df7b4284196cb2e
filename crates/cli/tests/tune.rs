//! `fencesim tune` and `--set` as a user runs them: exit 2 naming the field, byte-identical
//! outputs for an identical command and for any `--jobs`.

mod util;

use std::{fs, path::Path};

use util::fencesim;

const PROFILE: &str = r#"
name = "tune-cli-test"
description = "three workers, GC pauses and crashes"
duration_ms = 60_000
seeds = "0..6"

[lease]
ttl_ms = 5_000
token_source = "durable-counter"

[storage]
fencing = "same-store-txn"

[workers]
count = 3
resources = ["job-1"]
work_ms = { dist = "uniform", min = 50, max = 250 }
writes_per_lease = 1_000

[[faults.random]]
kind = "gc-pause"
rate_per_min = 2.0
duration_ms = { dist = "uniform", min = 500, max = 6_000 }

[[faults.random]]
kind = "worker-crash"
rate_per_min = 1.0
duration_ms = { dist = "uniform", min = 5_000, max = 20_000 }

[expect]
safe = true
coverage = ["takeover"]
"#;

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("profile.toml"), PROFILE).unwrap();
    dir
}

const TUNE: [&str; 7] = [
    "tune",
    "profile.toml",
    "--vary",
    "lease.ttl_ms=2000..8000:3",
    "--vary",
    "workers.renew_every_ms=lease.ttl_ms/3,lease.ttl_ms/4",
    "--max-false-expiry-per-hour=30",
];

fn tune(dir: &Path, out: &str, jobs: &str) -> (String, String) {
    let mut args: Vec<&str> = TUNE.to_vec();
    args.extend(["--jobs", jobs, "--out", out]);
    let (code, stdout, stderr) = fencesim(&args, dir);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let files = dir.join(out).join("tune-cli-test").join("tune");
    for picture in [
        "metrics.png",
        "metrics.svg",
        "tradeoff.png",
        "tradeoff.svg",
        "tune.md",
    ] {
        assert!(files.join(picture).is_file(), "{picture} written");
    }
    (
        fs::read_to_string(files.join("tune.csv")).unwrap(),
        fs::read_to_string(files.join("tune.json")).unwrap(),
    )
}

#[test]
fn the_same_tune_command_gives_byte_identical_csv_and_json_for_any_jobs() {
    let dir = setup();
    let first = tune(dir.path(), "a", "2");
    let again = tune(dir.path(), "b", "2");
    let one_job = tune(dir.path(), "c", "1");
    assert_eq!(first, again);
    assert_eq!(first, one_job);
    // 3 TTLs × 2 renew ratios, one row each after the header.
    assert_eq!(first.0.lines().count(), 7, "{}", first.0);
    assert!(first
        .0
        .starts_with("lease.ttl_ms,workers.renew_every_ms,scenario_hash,"));
    assert!(first.0.contains("\n2000,667,"), "{}", first.0);
    assert!(first.0.contains("\n8000,2000,"), "{}", first.0);
}

#[test]
fn set_errors_exit_2_naming_the_field() {
    let dir = setup();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "profile.toml", "--set", "lease.ttl=5"],
            "lease.ttl",
        ),
        (
            &["run", "profile.toml", "--set", "lease.ttl_ms=soon"],
            "lease.ttl_ms",
        ),
        (
            &["check", "profile.toml", "--set", "lease.ttl_ms=-1"],
            "lease.ttl_ms",
        ),
        (
            &[
                "replay",
                "profile.toml",
                "--seed",
                "0",
                "--set",
                "network.loss=2",
            ],
            "network.loss",
        ),
        (
            &[
                "tune",
                "profile.toml",
                "--vary",
                "lease.ttl_ms=1,2",
                "--set",
                "workers.bogus=1",
            ],
            "workers.bogus",
        ),
        (&["run", "profile.toml", "--set", "lease.ttl_ms"], "--set"),
    ];
    for (args, field) in cases {
        let (code, stdout, stderr) = fencesim(args, dir.path());
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(field), "{args:?}: {stderr}");
        assert!(stderr.contains("--set"), "{args:?}: {stderr}");
    }
}

#[test]
fn set_changes_the_run_and_its_hash() {
    let dir = setup();
    let (code, plain, _) = fencesim(&["replay", "profile.toml", "--seed", "1"], dir.path());
    assert!(code <= 1);
    let (code, set, _) = fencesim(
        &[
            "replay",
            "profile.toml",
            "--seed",
            "1",
            "--set",
            "lease.ttl_ms=9000",
        ],
        dir.path(),
    );
    assert!(code <= 1);
    assert_ne!(plain, set);
}

#[test]
fn vary_errors_exit_2() {
    let dir = setup();
    let cases: &[(&str, &str)] = &[
        ("lease.ttl_ms", "FIELD=VALUE"),
        ("lease.ttl_ms=2000..9000", "range with a count"),
        ("lease.ttl_ms=2000..x:3", "range with a count"),
        ("lease.ttl_ms=1,,2", "empty"),
        (
            "workers.renew_every_ms=lease.ttl_ms/3",
            "ratio of another varied field",
        ),
        ("lease.ttl_ms=0", "lease.ttl_ms"),
    ];
    for (vary, message) in cases {
        let (code, stdout, stderr) =
            fencesim(&["tune", "profile.toml", "--vary", vary], dir.path());
        assert_eq!(code, 2, "{vary}: {stdout}{stderr}");
        assert!(stderr.contains(message), "{vary}: {stderr}");
    }
}
