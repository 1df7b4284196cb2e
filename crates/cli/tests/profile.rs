//! `fencesim profile` as a user runs it: the block printed from the committed JVM fixture is
//! the committed tuning profile's, bad inputs exit 2 writing nothing, and a scenario using an
//! empirical distribution gives the same summary (trace digests included) whatever `--jobs`.

mod util;

use std::{fs, path::PathBuf};

use util::*;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../profile/fixtures")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

fn committed_profile() -> String {
    catalogue("tune/jvm-g1-profile")
}

#[test]
fn jvm_profile_prints_blocks_fit_and_picture() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "profile",
            "jvm-gc",
            &fixture("jvm-g1-gc-star.log"),
            "--workers",
            "3",
            "--picture",
            "fit.png",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout.matches("[[faults.random]]").count(), 2, "{stdout}");
    assert!(stdout.contains("kind = \"gc-pause\""), "{stdout}");
    assert!(stdout.contains("dist = \"empirical\""), "{stdout}");
    assert!(stderr.contains("fit, full collections: p50 "), "{stderr}");
    assert!(stderr.contains(" 0 unusable"), "{stderr}");
    let png = fs::read(dir.path().join("fit.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // The committed tuning profile holds exactly these blocks: it is what the command prints.
    let committed = fs::read_to_string(committed_profile()).unwrap();
    let blocks = &stdout[stdout.find("[[faults.random]]").unwrap()..];
    for block in blocks.split("\n\n") {
        let body: String = block
            .lines()
            .filter(|line| !line.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            committed.contains(&body),
            "scenarios/tune/jvm-g1-profile.toml lacks the block now printed:\n{body}\n\
             regenerate it (README, Tuning from your own data)"
        );
    }
}

#[test]
fn other_sources_print_their_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["go-gc".into(), fixture("go-gctrace.log")],
            "kind = \"gc-pause\"",
        ),
        (
            vec![
                "prometheus".into(),
                fixture("etcd-metrics.prom"),
                "--metric".into(),
                "grpc_server_handling_seconds".into(),
                "--match".into(),
                "grpc_method=LeaseGrant".into(),
                "--measures".into(),
                "round-trip".into(),
            ],
            "[network.latency_ms]",
        ),
        (
            vec![
                "outages".into(),
                fixture("lease-service-outages.csv"),
                "--target".into(),
                "service".into(),
                "--span-hours".into(),
                "8784".into(),
            ],
            "kind = \"coordinator-restart\"",
        ),
        (
            vec![
                "outages".into(),
                fixture("lease-service-outages.csv"),
                "--target".into(),
                "link".into(),
            ],
            "kind = \"partition\"",
        ),
    ];
    for (args, expected) in cases {
        let mut all: Vec<&str> = vec!["profile"];
        all.extend(args.iter().map(String::as_str));
        all.extend(["--picture", "fit.png"]);
        let (code, stdout, stderr) = fencesim(&all, dir.path());
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(stdout.contains(expected), "{args:?}: {stdout}");
        assert!(stderr.contains("fit, "), "{args:?}: {stderr}");
    }
}

#[test]
fn unusable_inputs_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("empty.log"), "").unwrap();
    fs::write(
        dir.path().join("junk.log"),
        [0u8, 159, 146, 150, 10, 255, 0, 1],
    )
    .unwrap();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["jvm-gc".into(), "empty.log".into()], "found none"),
        (vec!["jvm-gc".into(), "junk.log".into()], "not UTF-8 text"),
        (
            vec!["jvm-gc".into(), "/dev/zero".into()],
            "expected a regular file",
        ),
        (
            vec!["go-gc".into(), "fifo".into()],
            "expected a regular file",
        ),
        (
            vec!["go-gc".into(), "missing.log".into()],
            "expected a readable file",
        ),
        (
            vec!["go-gc".into(), fixture("jvm-g1-gc-star.log")],
            "not a gctrace line",
        ),
        (
            vec!["jvm-gc".into(), fixture("go-gctrace.log")],
            "not a unified-logging line",
        ),
        (
            vec![
                "jvm-gc".into(),
                fixture("jvm-g1-gc-star.log"),
                "--workers".into(),
                "0".into(),
            ],
            "--workers",
        ),
        (
            vec![
                "prometheus".into(),
                fixture("etcd-metrics.prom"),
                "--measures".into(),
                "one-way".into(),
            ],
            "choose one with --metric",
        ),
        (
            vec![
                "prometheus".into(),
                fixture("etcd-metrics.prom"),
                "--metric".into(),
                "grpc_server_handling_seconds".into(),
                "--match".into(),
                "grpc_method=NoSuchMethod".into(),
                "--measures".into(),
                "one-way".into(),
            ],
            "found none among",
        ),
        (
            vec![
                "outages".into(),
                fixture("lease-service-outages.csv"),
                "--target".into(),
                "service".into(),
                "--span-hours".into(),
                "1".into(),
            ],
            "--span-hours",
        ),
    ];
    for (args, expected) in cases {
        let mut all: Vec<&str> = vec!["profile"];
        all.extend(args.iter().map(String::as_str));
        all.extend(["--picture", "fit.png"]);
        let (code, stdout, stderr) = fencesim(&all, dir.path());
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(
            !dir.path().join("fit.png").exists(),
            "{args:?} wrote a picture"
        );
    }
}

/// The picture is drawn only when asked, in the format its name says (`.png`, `.svg`); any
/// other name is refused before the log is read.
#[test]
fn the_picture_is_written_only_when_asked_in_the_format_its_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let log = fixture("jvm-g1-gc-star.log");
    let (code, stdout, stderr) = fencesim(&["profile", "jvm-gc", &log], dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "wrote a file unasked"
    );
    assert!(!stderr.contains("picture:"), "{stderr}");
    let (code, _, stderr) = fencesim(
        &["profile", "jvm-gc", &log, "--picture", "fit.svg"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let svg = fs::read_to_string(dir.path().join("fit.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    for name in ["fit.jpg", "fit"] {
        let (code, stdout, stderr) =
            fencesim(&["profile", "jvm-gc", &log, "--picture", name], dir.path());
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(
            stderr.contains("expected a file name ending in .png or .svg"),
            "{stderr}"
        );
        assert!(!dir.path().join(name).exists(), "{name}");
    }
}

#[test]
fn empirical_profile_runs_identically_with_one_or_two_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for (out, jobs) in [("a", "1"), ("b", "2")] {
        let (code, stdout, stderr) = fencesim(
            &[
                "run",
                &committed_profile(),
                "--seeds",
                "0..4",
                "--jobs",
                jobs,
                "--set",
                "duration_ms=60000",
                "--out",
                out,
            ],
            dir.path(),
        );
        assert!(code == 0 || code == 1, "{stdout}{stderr}");
        summaries.push(
            // An overridden run writes DIR/<name>/set-<hash>/summary.json: the one directory.
            fs::read(overridden_summary(
                &dir.path().join(out).join("tune-jvm-g1-profile"),
            ))
            .unwrap(),
        );
    }
    assert_eq!(summaries[0], summaries[1], "--jobs 1 vs --jobs 2");
    let summary: serde_json::Value = serde_json::from_slice(&summaries[0]).unwrap();
    assert_eq!(summary["runs"], 4, "{summary}");
}

/// The one `set-<hash>/summary.json` under a scenario's output directory.
fn overridden_summary(scenario_dir: &std::path::Path) -> std::path::PathBuf {
    let mut found: Vec<_> = fs::read_dir(scenario_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("set-"))
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.pop().unwrap().join("summary.json")
}
