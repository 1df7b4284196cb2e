//! End to end: a small tune of a committed profile, its recommendation asserted, then
//! verified by `run --set` over ten times the seeds.

mod util;

use util::fencesim;

fn profile() -> String {
    fencesim_testkit::catalogue_path("tune/gc-none")
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_small_tune_of_gc_none_recommends_a_safe_ttl_that_holds_over_ten_times_the_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let profile = profile();
    // Shortened runs keep the test fast; the profile's pauses (1-5 s) are unchanged.
    let (code, stdout, stderr) = fencesim(
        &[
            "tune",
            &profile,
            "--set",
            "duration_ms=30000",
            "--vary",
            "lease.ttl_ms=3000,6000,9000",
            "--seeds",
            "0..20",
            "--fixed",
            "--out",
            "o",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    // 3 s and 6 s leases expire under 5 s pauses with no fencing: unsafe. 9 s is safe.
    assert!(
        stdout.contains("recommendation: lease.ttl_ms=9000"),
        "{stdout}"
    );
    assert!(stdout.contains("lease.ttl_ms=3000") && stdout.contains("fails: unsafe"));
    let (code, stdout, stderr) = fencesim(
        &[
            "run",
            &profile,
            "--set",
            "duration_ms=30000",
            "--set",
            "lease.ttl_ms=9000",
            "--seeds",
            "0..200",
            "--out",
            "r",
        ],
        dir.path(),
    );
    assert_eq!(
        code, 0,
        "the recommendation holds over 200 seeds: {stdout}{stderr}"
    );
}
