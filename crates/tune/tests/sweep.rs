//! A real (small) sweep: settings share the seed sequence, so identical settings give
//! identical rows whatever their position in the grid.

use fencesim_scenario::SeedRange;
use fencesim_testkit::Spec;
use fencesim_tune::report::Targets;

const FAULTS: &str = r#"
[[faults.random]]
kind = "gc-pause"
rate_per_min = 6.0
duration_ms = { dist = "uniform", min = 500, max = 4_000 }

[[faults.random]]
kind = "worker-crash"
rate_per_min = 3.0
duration_ms = { dist = "uniform", min = 2_000, max = 5_000 }
"#;

/// The shared base scenario on a short run with a 3 s TTL, GC pauses and crashes.
fn profile() -> String {
    Spec {
        name: "tune-sweep-test",
        description: "GC pauses and crashes on a short run",
        duration_ms: 20_000,
        seeds: "0..3",
        ttl_ms: 3_000,
        fencing: "same-store-txn",
        work_ms: "{ dist = \"uniform\", min = 50, max = 250 }",
        faults: FAULTS,
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    }
    .toml()
}

#[test]
fn two_identical_settings_give_identical_rows() {
    let vary = fencesim_tune::parse_vary("lease.ttl_ms=3000").unwrap();
    let mut sweep = fencesim_tune::prepare(
        &profile(),
        "sweep.toml",
        &[],
        &[("lease.ttl_ms=3000".into(), vary)],
        Some(SeedRange { start: 0, end: 3 }),
        Some(3),
        Targets::default(),
    )
    .unwrap();
    let first = sweep.settings[0].clone();
    sweep.settings.push(first);
    let components = fencesim_sim::runner::Components::default();
    let report = fencesim_tune::run(&sweep, 2, &components, &|_, _| {});
    assert_eq!(report.settings.len(), 2);
    assert_eq!(report.settings[0], report.settings[1]);
    assert_eq!(report.settings[0].seeds, "0..3");
    assert_eq!(report.seed_plan.runs, 6);
}
