//! `xtask bench` as a user (and CI) runs it: its RSS child reports a peak, bad input exits
//! 2 with nothing written. (The bench's figures are printed by the bench itself, never
//! asserted here: timing targets are not unit tests.)

mod util;

use util::xtask;

#[test]
fn rss_child_runs_seeds_and_reports_its_peak() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = xtask(&["bench", "--rss-child", "20"], dir.path());
    assert_eq!(code, 0, "{stderr}");
    let kb: u64 = stdout
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM_kB "))
        .expect("a VmHWM line")
        .parse()
        .unwrap();
    // A process that ran 20 simulations holds at least its binary and a runtime.
    assert!(kb > 1_000, "{stdout}");
    assert!(stdout.contains("summary_bytes "), "{stdout}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = xtask(&["bench", "--rss-child", "0"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("--rss-child: expected 1..="), "{stderr}");

    std::fs::write(dir.path().join("file"), "x").unwrap();
    let (code, stdout, stderr) = xtask(&["bench", "--quick", "--out", "file"], dir.path());
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("--out file/bench.md"), "{stderr}");
    // Refused before the first seed: no bench output anywhere.
    assert!(!stdout.contains("rep 1"), "{stdout}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("file")]);
}
