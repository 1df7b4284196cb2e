//! `xtask mutants` and `xtask sensitivity`, on the real binary.

mod util;

use std::path::Path;

use util::{catalogue, xtask};

#[test]
fn every_mutant_names_a_catalogue_scenario_and_a_test() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = xtask(&["mutants"], dir.path());
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 20, "{} mutants", lines.len());
    let mut areas: Vec<&str> = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 6, "{line}");
        // Code the catalogue never runs names no scenario ("-"), except tune, whose mutants
        // name the tuning profile whose decisions they break.
        let off_catalogue = ["shrink", "check-history", "merge", "percentiles"];
        if off_catalogue.contains(&fields[1]) {
            assert_eq!(fields[3], "-", "{line}");
        } else {
            assert!(
                Path::new(&catalogue(fields[3])).is_file(),
                "{}: no scenario {}",
                fields[0],
                fields[3]
            );
        }
        assert!(fields[4].starts_with("-p fencesim"), "{line}");
        assert!(!fields[5].is_empty(), "{line}");
        areas.push(fields[1]);
    }
    areas.sort_unstable();
    areas.dedup();
    assert_eq!(
        areas,
        [
            "check-history",
            "checker",
            "clock",
            "coverage",
            "fencing",
            "lease",
            "merge",
            "metrics",
            "network",
            "percentiles",
            "shrink",
            "tune"
        ]
    );
}

#[test]
fn sensitivity_measures_detection_and_false_positives() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_one = catalogue("gc-pause-textbook-none");
    let safe_one = catalogue("gc-pause-textbook-max-token");
    let (code, _, err) = xtask(
        &[
            "sensitivity",
            &unsafe_one,
            &safe_one,
            "--safe-seeds",
            "4",
            "--skip-mutants",
            "--jobs",
            "2",
            "-o",
            "s.md",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let report = std::fs::read_to_string(dir.path().join("s.md")).unwrap();
    assert!(
        report.contains("| gc-pause-textbook-none | I3, I4 | 0 | 1 |"),
        "{report}"
    );
    assert!(
        report.contains("| gc-pause-textbook-max-token | 4 | 0 |"),
        "{report}"
    );
    assert!(report.contains("Not run (`--skip-mutants`)"), "{report}");
}

#[test]
fn sensitivity_rejects_bad_arguments_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let safe_one = catalogue("gc-pause-textbook-max-token");
    for (args, expected) in [
        (vec!["--safe-seeds", "0", "--skip-mutants"], "--safe-seeds"),
        (vec!["--detect-max", "0", "--skip-mutants"], "--detect-max"),
        (vec!["--jobs", "0", "--skip-mutants"], "--jobs"),
        (vec!["-o", ".", "--skip-mutants"], "directory"),
    ] {
        let mut all = vec!["sensitivity", safe_one.as_str()];
        all.extend(args);
        let (code, _, err) = xtask(&all, dir.path());
        assert_eq!(code, 2, "{all:?}: {err}");
        assert!(err.contains(expected), "{all:?}: {err}");
    }
    // A normal build has no planted bugs to apply.
    if !cfg!(feature = "mutants") {
        let (code, _, err) = xtask(&["sensitivity", &safe_one], dir.path());
        assert_eq!(code, 2);
        assert!(err.contains("--features mutants"), "{err}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}
