//! Tune's statistics and decisions on hand-made seed outcomes.

use crate::report::{Decision, SettingResult, TuneReport};
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
    recommend::decide(&mut report);
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

/// Seeds `0..n` whose crash recoveries take 1 s, but for `slow` of them (30 s).
fn recoveries(n: u64, slow: &[u64]) -> Vec<SeedOutcome> {
    (0..n)
        .map(|seed| {
            let ms = if slow.contains(&seed) {
                30_000.0
            } else {
                1_000.0
            };
            let mut m = Metrics {
                recovery_after_crash_ms: vec![ms],
                ..Metrics::default()
            };
            set_exposure(&mut m, 300_000.0);
            outcome(seed, &[], m)
        })
        .collect()
}

#[test]
fn a_setting_given_4x_the_seeds_cannot_win_by_a_p99_its_extra_seeds_lowered() {
    // The same physics for both settings: three slow recoveries in seeds 0..200. Setting 1
    // ran 800 seeds, whose 600 extra ones hold none: over its own seeds its p99 is 1 s,
    // over the 200 seeds both ran it is 30 s, like setting 0's.
    let slow = [7, 50, 150];
    let report = report_of(vec![recoveries(200, &slow), recoveries(800, &slow)]);
    let (a, b) = (&report.settings[0], &report.settings[1]);
    assert_eq!(a.recovery_after_crash_ms.p99, Some(30_000.0));
    assert_eq!(
        b.recovery_after_crash_ms.p99,
        Some(1_000.0),
        "its own seeds"
    );
    for s in [a, b] {
        let r = s.ranked.as_ref().expect("both meet the targets");
        assert_eq!(r.seeds, 200);
        assert_eq!(r.quantiles.p99, Some(30_000.0), "{}", s.label());
    }
    assert_eq!(
        report.recommendation.setting,
        Some(0),
        "{}",
        report.recommendation.reason
    );
    assert_eq!(report.tied, [0, 1]);
    assert!(
        report.recommendation.reason.starts_with(
            "tie within the evidence on the p99 of recovery after a crash (crash → first \
             accepted write by a new holder) over the 200 seeds every setting meeting the \
             targets ran: 2 settings' 95 % intervals overlap the lowest"
        ),
        "{}",
        report.recommendation.reason
    );
}

#[test]
fn a_p99_apart_on_the_common_seeds_wins_on_the_evidence() {
    // 400 samples each over the same 400 seeds: setting 1's p99 interval lies below
    // setting 0's (12 slow recoveries against none), so it wins without the tie-break.
    let slow: Vec<u64> = (0..12).map(|k| 3 + 33 * k).collect();
    let report = report_of(vec![recoveries(400, &slow), recoveries(400, &[])]);
    assert_eq!(report.recommendation.setting, Some(1));
    assert_eq!(report.tied, Vec::<usize>::new());
    assert!(report
        .recommendation
        .reason
        .contains("1000 ms [1000, 1000], its 95 % interval below every other's"));
}

/// A hand-made report with an outage or false-expiry target, re-decided.
fn decided(mut settings: Vec<SettingResult>, targets: crate::report::Targets) -> TuneReport {
    for s in &mut settings {
        s.per_seed.clear();
    }
    let mut report = TuneReport {
        settings,
        targets,
        ..TuneReport::default()
    };
    recommend::decide(&mut report);
    report
}

#[test]
fn adaptive_rounds_go_on_for_an_open_outage_decision_and_retire_a_failed_setting() {
    use crate::report::{OutageRun, Targets};
    let base = report_of(vec![recoveries(100, &[]); 3]).settings;
    let with_run = |mut s: SettingResult, failed: u64, of: u64| {
        s.outage_runs = vec![OutageRun {
            form: "holder-link-cut".into(),
            failed_seeds: stats::seed_share(failed, of),
            ..OutageRun::default()
        }];
        s
    };
    let report = decided(
        vec![
            with_run(base[0].clone(), 0, 100),
            with_run(base[1].clone(), 1, 100),
            with_run(base[2].clone(), 0, 400),
        ],
        Targets {
            survive_outage_ms: Some(60_000),
            ..Targets::default()
        },
    );
    let outage: Vec<Decision> = report.settings.iter().map(|s| s.outage).collect();
    assert_eq!(outage, [Decision::Open, Decision::Fails, Decision::Meets]);
    assert_eq!(
        wants_more(&report, 2000),
        [0],
        "more seeds for the open outage decision only: 1 failed (retired), 2 is decided"
    );
    assert_eq!(
        wants_more(&report, 100),
        Vec::<usize>::new(),
        "at --max-seeds"
    );
}

#[test]
fn adaptive_rounds_skip_a_false_expiry_rate_more_seeds_could_not_decide() {
    use crate::report::Targets;
    // 100 seeds, 20 h of exposure: 40 false expiries (2/h) sit on a 2/h budget, and 20 times
    // the exposure would still straddle it; 30 (1.5/h [1.01, 2.14]) would be decided.
    let base = report_of(vec![recoveries(100, &[]); 2]).settings;
    let with_rate = |mut s: SettingResult, count: u64| {
        s.false_expiries = stats::rate(count, 20.0 * 3_600_000.0);
        s
    };
    let report = decided(
        vec![
            with_rate(base[0].clone(), 40),
            with_rate(base[1].clone(), 30),
        ],
        Targets {
            max_false_expiry_per_hour: Some(2.0),
            ..Targets::default()
        },
    );
    assert_eq!(report.settings[0].false_expiry, Decision::Open);
    assert_eq!(report.settings[1].false_expiry, Decision::Open);
    assert_eq!(wants_more(&report, 2000), [1]);
}

#[test]
fn queued_pauses_make_one_stall() {
    // Two 5 s GCs, the second queued behind the first: a 10 s stall; a third apart.
    let mut pauses = [
        (20_000.0, 25_000.0),
        (10_000.0, 15_000.0),
        (15_000.0, 20_000.0),
    ];
    assert_eq!(longest_stall_ms(&mut pauses), 15_000.0);
    let mut apart = [(0.0, 5_000.0), (5_001.0, 10_001.0)];
    assert_eq!(longest_stall_ms(&mut apart), 5_000.0);
    assert_eq!(longest_stall_ms(&mut []), 0.0);
}
