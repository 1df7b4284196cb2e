//! Tune's statistics and decisions on hand-made seed outcomes.

use crate::report::{Decision, TuneReport};
use fencesim_check::{Checked, Metrics, SeedOutcome, Violation};
use fencesim_model::Invariant;
use fencesim_testkit::Spec;

use super::*;

const CRASHES: &str = r#"
[[faults.random]]
kind = "worker-crash"
rate_per_min = 1.0
duration_ms = { dist = "uniform", min = 2_000, max = 5_000 }
"#;

/// The shared base scenario, unfenced, with a 5 s TTL and random worker crashes.
fn profile() -> String {
    Spec {
        name: "tune-unit",
        description: "one worker crash",
        seeds: "0..4",
        ttl_ms: 5_000,
        fencing: "none",
        work_ms: "{ dist = \"uniform\", min = 50, max = 250 }",
        faults: CRASHES,
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    }
    .toml()
}

fn scenario() -> Scenario {
    fencesim_scenario::parse_str(&profile(), "unit.toml").unwrap()
}

fn outcome(seed: u64, violations: &[Invariant], metrics: Metrics) -> SeedOutcome {
    SeedOutcome {
        seed,
        trace_hash: String::new(),
        events: 0,
        checked: Checked {
            violations: violations
                .iter()
                .map(|&invariant| Violation {
                    invariant,
                    scope: "job-1".into(),
                    t_ns: 0,
                    message: String::new(),
                    evidence: Vec::new(),
                })
                .collect(),
            metrics,
            visited: Default::default(),
        },
        panic: None,
        runaway: false,
    }
}

fn report_of(settings: Vec<Vec<SeedOutcome>>) -> TuneReport {
    let scenario = scenario();
    let results = settings
        .iter()
        .enumerate()
        .map(|(i, outcomes)| {
            let summaries: Vec<SeedSummary> = outcomes.iter().map(SeedSummary::of).collect();
            setting_result(
                &vec![("lease.ttl_ms".to_string(), (5000 + i * 1000).to_string())],
                &scenario,
                &summaries,
            )
        })
        .collect();
    let mut report = TuneReport {
        settings: results,
        ..TuneReport::default()
    };
    recommend::decide(&mut report, false);
    report
}

/// Sets the fault exposure (the fault window) of `m`.
fn set_exposure(m: &mut Metrics, ms: f64) {
    m.fault_window_ms = ms;
}

#[test]
fn an_i4_only_seed_makes_its_setting_unsafe() {
    let report = report_of(vec![
        vec![
            outcome(0, &[], Metrics::default()),
            outcome(1, &[Invariant::I4], Metrics::default()),
        ],
        vec![
            outcome(0, &[], Metrics::default()),
            outcome(1, &[], Metrics::default()),
        ],
    ]);
    let s = &report.settings[0];
    assert_eq!(s.seeds_violating_i3, 0);
    assert_eq!(s.seeds_violating_i4, 1);
    assert_eq!(s.unsafe_seeds.seeds, 1);
    assert_eq!(s.safety, Decision::Fails);
    assert!(!s.meets_targets);
    assert_eq!(report.recommendation.setting, Some(1));
}

#[test]
fn runaway_and_panicking_seeds_are_unsafe() {
    let mut runaway = outcome(0, &[], Metrics::default());
    runaway.runaway = true;
    let mut panic = outcome(1, &[], Metrics::default());
    panic.panic = Some("boom".into());
    let report = report_of(vec![
        vec![runaway, outcome(1, &[], Metrics::default())],
        vec![outcome(0, &[], Metrics::default()), panic],
        vec![
            outcome(0, &[], Metrics::default()),
            outcome(1, &[], Metrics::default()),
        ],
    ]);
    assert_eq!(report.settings[0].runaways, 1);
    assert_eq!(report.settings[0].safety, Decision::Fails);
    assert_eq!(report.settings[1].panics, 1);
    assert_eq!(report.settings[1].safety, Decision::Fails);
    assert_eq!(report.recommendation.setting, Some(2));
}

#[test]
fn rates_pool_the_count_over_the_fault_exposure() {
    // 34 false expiries over 200 seeds of 300 s of fault exposure (400 s runs): 2.04/h over
    // the exposure, not 1.53/h over the whole run.
    let outcomes: Vec<SeedOutcome> = (0..200)
        .map(|seed| {
            let mut m = Metrics {
                false_expiries: u64::from(seed < 34),
                run_ms: 400_000.0,
                ..Metrics::default()
            };
            set_exposure(&mut m, 300_000.0);
            outcome(seed, &[], m)
        })
        .collect();
    let report = report_of(vec![outcomes]);
    let r = &report.settings[0].false_expiries;
    assert_eq!(r.count, 34);
    assert_eq!(r.exposure_h, 16.67);
    assert_eq!(r.per_hour, 2.04);
    assert!(r.low < 2.04 && r.high > 2.04);
}

#[test]
fn identical_outcomes_give_identical_rows() {
    let seeds = || {
        (0..5)
            .map(|seed| {
                let m = Metrics {
                    recovery_after_crash_ms: vec![seed as f64 * 100.0],
                    false_expiries: seed,
                    run_ms: 60_000.0,
                    ..Metrics::default()
                };
                outcome(seed, &[], m)
            })
            .collect::<Vec<_>>()
    };
    let report = report_of(vec![seeds(), seeds()]);
    let (a, b) = (&report.settings[0], &report.settings[1]);
    let strip = |s: &SettingResult| {
        let mut s = s.clone();
        s.values.clear();
        s
    };
    assert_eq!(strip(a), strip(b));
}

#[test]
fn a_realized_fault_count_off_its_nominal_by_more_than_10_percent_is_warned() {
    use crate::report::FaultCount;
    let count = |kind: &str, nominal: f64, realized: u64| FaultCount {
        kind: kind.into(),
        nominal,
        realized,
    };
    let warnings = crate::fault_count_warnings(&[
        count("gc-pause", 800.0, 773),     // -3.4 %: fine
        count("worker-crash", 500.0, 449), // -10.2 %: warned
        count("vm-suspend", 3000.0, 3300), // +10 % exactly: fine
        count("partition", 0.0, 3),        // nothing nominal: no ratio to judge
    ]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        warnings[0],
        "fault worker-crash: realized 449 differs from nominal 500 by -10.2 % (more than ±10 \
         %): the profile that ran is not the one described"
    );
}
