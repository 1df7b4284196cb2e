//! `fencesim profile` as a user runs it: the block printed from the committed JVM fixture is
//! the committed tuning profile's, bad inputs exit 2 writing nothing, and a scenario using an
//! empirical distribution gives the same summary (trace digests included) whatever `--jobs`.

mod util;

use std::{
    fs,
    path::{Path, PathBuf},
};

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

/// The inputs next to the refused ones (`hostile.rs`, round 4) that `profile` accepts: a
/// histogram with observations in a finite bucket and above it, a bound of exactly 7 days, a
/// JVM log at 600 pauses a minute, a gctrace of two collections over 10 s, a record written
/// all in seconds, a span of exactly 10 years. Files put in the test's directory.
fn accepted_neighbours() -> Vec<(&'static str, String, Vec<&'static str>)> {
    // 600 pauses over exactly a minute (the last line is not a pause).
    let mut jvm: String = (0..600)
        .map(|i| {
            format!(
                "[{}.{}00s][info][gc] GC({i}) Pause Young (Normal) (G1 Evacuation Pause) 2M->1M(8M) 1.5ms\n",
                i / 10,
                i % 10
            )
        })
        .collect();
    jvm.push_str("[60.000s][info][gc] Cancelling GC: Stopping VM\n");
    vec![
        (
            "some-above.prom",
            "x_seconds_bucket{le=\"0.1\"} 3\nx_seconds_bucket{le=\"+Inf\"} 5\n".into(),
            vec!["prometheus", "--measures", "one-way"],
        ),
        (
            "seven-days.prom",
            "x_seconds_bucket{le=\"604800\"} 5\nx_seconds_bucket{le=\"+Inf\"} 5\n".into(),
            vec!["prometheus", "--measures", "one-way"],
        ),
        ("busy.log", jvm, vec!["jvm-gc"]),
        (
            "two.go",
            "gc 1 @5.000s 2%: 0.011+1.2+0.003 ms clock, 0.044+0.5/1.0/0.2+0.012 ms cpu, 4->4->0 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 4 P\n\
             gc 2 @10.000s 2%: 0.020+2.0+0.010 ms clock, 0.08+0.1/1.0/0.2+0.04 ms cpu, 4->5->1 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 4 P (forced)\n"
                .into(),
            vec!["go-gc"],
        ),
        (
            "seconds.csv",
            "start,end\n100,130\n5000,5002.5\n".into(),
            vec!["outages", "--target", "service"],
        ),
        (
            "ten-years.csv",
            "start,end\n2024-03-01T12:00:00Z,2024-03-01T12:00:30Z\n".into(),
            vec!["outages", "--target", "link", "--span-hours", "87600"],
        ),
    ]
}

/// Every way `profile` is run here over the committed fixtures: each JVM log at 1, 3 and 64
/// workers, the gctrace likewise, every histogram of the scrape (and every gRPC method's
/// series of `grpc_server_handling_seconds`) both ways, the outage record for both targets
/// with and without a span. A fixture no case reads fails the test.
fn fixture_runs() -> Vec<Vec<String>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../profile/fixtures");
    let mut runs: Vec<Vec<String>> = Vec::new();
    let words = |list: &[&str]| list.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let file = fixture(&name);
        let text = fs::read_to_string(dir.join(&name)).unwrap_or_default();
        if name.starts_with("jvm-") && name.ends_with(".log")
            || name.starts_with("go-") && name.ends_with(".log")
        {
            let source = if name.starts_with("jvm-") {
                "jvm-gc"
            } else {
                "go-gc"
            };
            for workers in ["1", "3", "64"] {
                runs.push(words(&[source, &file, "--workers", workers]));
            }
        } else if name.ends_with(".prom") {
            let metrics: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("# TYPE "))
                .filter_map(|rest| rest.strip_suffix(" histogram"))
                .collect();
            let mut methods: Vec<&str> = text
                .split("grpc_method=\"")
                .skip(1)
                .filter_map(|rest| rest.split('"').next())
                .collect();
            methods.sort();
            methods.dedup();
            for measures in ["one-way", "round-trip"] {
                for metric in &metrics {
                    runs.push(words(&[
                        "prometheus",
                        &file,
                        "--metric",
                        metric,
                        "--measures",
                        measures,
                    ]));
                }
                for method in &methods {
                    let matched = format!("grpc_method={method}");
                    runs.push(words(&[
                        "prometheus",
                        &file,
                        "--metric",
                        "grpc_server_handling_seconds",
                        "--match",
                        &matched,
                        "--measures",
                        measures,
                    ]));
                }
            }
        } else if name.ends_with(".csv") {
            for target in ["service", "link"] {
                runs.push(words(&["outages", &file, "--target", target]));
                runs.push(words(&[
                    "outages",
                    &file,
                    "--target",
                    target,
                    "--span-hours",
                    "8784",
                ]));
            }
        } else {
            let known = name.ends_with("-version.txt")
                || ["README.md", "make.sh", "src"].contains(&name.as_str());
            assert!(
                known,
                "fixtures/{name}: a fixture no run of this test reads; add it"
            );
        }
    }
    runs
}

/// Runs `profile ARGS` in `dir`: true when it printed a profile (which must load pasted
/// whole into the smallest scenario users are shown), false when it exited 2 printing
/// nothing; anything else fails.
fn printed_and_loads(run: &[String], dir: &Path) -> bool {
    let mut args = vec!["profile"];
    args.extend(run.iter().map(String::as_str));
    let (code, stdout, stderr) = fencesim(&args, dir);
    match code {
        0 => {
            let pasted = format!("{}\n{stdout}", fencesim_scenario::MINIMAL_TOML);
            if let Err(e) = fencesim_scenario::parse_str(&pasted, "pasted.toml") {
                panic!("{run:?} printed a profile the loader refuses: {e}\n{stdout}");
            }
            assert!(stdout.contains("dist = \"empirical\""), "{run:?}: {stdout}");
            true
        }
        2 => {
            assert!(stdout.is_empty(), "{run:?} exit 2 but printed {stdout}");
            assert!(stderr.starts_with("error: "), "{run:?}: {stderr}");
            false
        }
        _ => panic!("{run:?}: exit {code}: {stderr}"),
    }
}

/// Whatever `profile` prints must load, over every committed fixture and the inputs next to
/// the refused ones; a run that cannot print such a profile exits 2 and prints nothing.
#[test]
fn every_block_profile_prints_loads() {
    let dir = tempfile::tempdir().unwrap();
    let runs = fixture_runs();
    let loaded = runs
        .iter()
        .filter(|run| printed_and_loads(run, dir.path()))
        .count();
    // The 4 JVM logs and the gctrace at 1, 3 and 64 workers (pauses too frequent for one
    // entry are folded), but the 8 s high-rate log at 64 (too short to fold: refused); 3
    // scrape metrics and the 4 gRPC methods with observations, both ways; the record 4 ways.
    // The other metrics hold no observations and are refused.
    assert!(
        loaded >= 14 + 14 + 4,
        "{loaded} of {} runs loaded",
        runs.len()
    );
    assert!(
        loaded < runs.len(),
        "no run refused: the empty histograms must be"
    );
    for (name, text, args) in accepted_neighbours() {
        fs::write(dir.path().join(name), text).unwrap();
        let mut run: Vec<String> = vec![args[0].to_string(), name.to_string()];
        run.extend(args[1..].iter().map(|w| w.to_string()));
        assert!(printed_and_loads(&run, dir.path()), "{run:?} refused");
    }
}

/// The committed tuning profile with its logged pauses replaced by `printed` (a profile's
/// output), as a user pastes one.
fn with_pauses(printed: &str) -> String {
    let base = fs::read_to_string(committed_profile()).unwrap();
    let start = base.find("# fencesim profile jvm-gc").unwrap();
    let end = base.find("\n[expect]").unwrap();
    format!("{}{printed}\n{}", &base[..start], &base[end..])
}

/// Every committed GC log, the high-rate one made by a real JVM among them (Parallel, 96 MB
/// heap, about 4,500 pauses a minute), passes end to end: `profile --workers 3` prints blocks
/// (folded where one entry cannot hold the log's rate, said so in a note), and `tune` runs
/// them and decides (exit 0 or 1, never 2).
#[test]
fn every_gc_log_passes_profile_then_tune() {
    let dir = tempfile::tempdir().unwrap();
    let logs = [
        ("jvm-gc", "jvm-g1-gc-star.log"),
        ("jvm-gc", "jvm-shenandoah-gc.log"),
        ("jvm-gc", "jvm-zgc-gc-star.log"),
        ("jvm-gc", "jvm-parallel-high-rate.log"),
        ("go-gc", "go-gctrace.log"),
    ];
    for (source, log) in logs {
        let (code, printed, stderr) = fencesim(
            &["profile", source, &fixture(log), "--workers", "3"],
            dir.path(),
        );
        assert_eq!(code, 0, "{log}: {stderr}");
        if log == "jvm-parallel-high-rate.log" {
            assert!(
                printed.contains("# note: the log's ") && printed.contains(" folded "),
                "{log}: {printed}"
            );
        }
        fs::write(dir.path().join("p.toml"), with_pauses(&printed)).unwrap();
        let (code, stdout, stderr) = fencesim(
            &[
                "tune",
                "p.toml",
                "--vary",
                "lease.ttl_ms=2000,8000",
                "--fixed",
                "--seeds",
                "0..2",
                "--set",
                "duration_ms=60000",
                "--out",
                "o",
            ],
            dir.path(),
        );
        assert!(code <= 1, "{log}: exit {code}: {stdout}{stderr}");
        assert!(stdout.contains("recommendation: "), "{log}: {stdout}");
        let realized: u64 = stdout
            .lines()
            .find_map(|line| line.strip_prefix("  fault gc-pause: realized "))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|count| count.parse().ok())
            .unwrap_or(0);
        assert!(realized > 0, "{log}: no pause ran: {stdout}");
    }
}
