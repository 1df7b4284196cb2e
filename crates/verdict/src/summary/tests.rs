use fencesim_check::{Checked, Violation};
use fencesim_model::{
    Coverage,
    Invariant::{self, I1, I2, I3, I4, I5},
};
use serde_json::json;

use super::*;

fn violation(invariant: Invariant, seed: u64) -> Violation {
    Violation {
        invariant,
        scope: "job-1".into(),
        t_ns: 1_000,
        message: format!("{invariant} broken in seed {seed}"),
        evidence: vec![0],
    }
}

/// A seed outcome violating `violated` (one violation each), optionally panicked.
fn outcome(seed: u64, violated: &[Invariant], panic: Option<&str>) -> SeedOutcome {
    SeedOutcome {
        seed,
        trace_hash: format!("{:016x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        events: 10,
        checked: Checked {
            violations: violated.iter().map(|inv| violation(*inv, seed)).collect(),
            metrics: Default::default(),
            visited: Default::default(),
        },
        panic: panic.map(str::to_string),
        runaway: false,
    }
}

/// The shared test scenario (`fencesim_testkit`) expecting `expect`.
fn scenario(expect: Outcome) -> Scenario {
    let mut scenario = fencesim_testkit::scenario(fencesim_testkit::Spec::default());
    scenario.expect.outcome = expect;
    scenario
}

/// `outcome` whose run hit the stale-write-rejected coverage condition.
fn rejecting(mut outcome: SeedOutcome) -> SeedOutcome {
    outcome.checked.metrics.stale_write_rejections = 1;
    outcome
}

fn expect(outcome: Outcome, coverage: &[&str]) -> Expect {
    Expect {
        outcome,
        coverage: coverage
            .iter()
            .map(|name| Coverage::parse(name).expect("a coverage condition"))
            .collect(),
        never: Vec::new(),
    }
}

/// Runs `evaluate` without required coverage and checks the verdict and that the detail
/// mentions every `needles`.
#[track_caller]
fn check_evaluate(outcome: Outcome, outcomes: &[SeedOutcome], met: bool, needles: &[&str]) {
    check_evaluate_covered(expect(outcome, &[]), outcomes, met, needles);
}

/// Runs `evaluate` and checks the verdict and that the detail mentions every `needles`.
#[track_caller]
fn check_evaluate_covered(expect: Expect, outcomes: &[SeedOutcome], met: bool, needles: &[&str]) {
    let (actual_met, detail) = evaluate(&expect, outcomes);
    assert_eq!(actual_met, met, "detail: {detail}");
    for needle in needles {
        assert!(detail.contains(needle), "{needle:?} not in {detail:?}");
    }
    assert!(!detail.contains('\n'), "one sentence: {detail:?}");
    assert!(detail.ends_with('.'), "one sentence: {detail:?}");
}

#[test]
fn evaluate_safe() {
    let clean = [outcome(0, &[], None), outcome(1, &[], None)];
    check_evaluate(Outcome::Safe, &clean, true, &["Met", "2 seeds"]);
    check_evaluate(
        Outcome::Safe,
        &[],
        true,
        &["trivially", "no seeds were run"],
    );
    check_evaluate(
        Outcome::Safe,
        &[
            outcome(3, &[], None),
            outcome(9, &[I4], None),
            outcome(5, &[I4, I3], None),
        ],
        false,
        &[
            "Not met (expected safe)",
            "I4 (no superseded accept) was violated in 2 seeds (first seed 5)",
            "I3",
        ],
    );
    check_evaluate(
        Outcome::Safe,
        &[
            outcome(2, &[], Some("worker-0 panicked\nbacktrace...")),
            outcome(1, &[], None),
        ],
        false,
        &["seed 2 panicked: worker-0 panicked"],
    );
}

#[test]
fn evaluate_violates() {
    let expect = || Outcome::Violates(vec![I4, I3]);
    // Met: each listed invariant in some seed, nothing else.
    check_evaluate(
        expect(),
        &[
            outcome(4, &[I4], None),
            outcome(7, &[I3, I4], None),
            outcome(1, &[], None),
        ],
        true,
        &[
            "Met",
            "I3 in 1 seed (first seed 7)",
            "I4 in 2 seeds (first seed 4)",
        ],
    );
    // A listed invariant never violated.
    check_evaluate(
        expect(),
        &[outcome(4, &[I4], None), outcome(5, &[], None)],
        false,
        &[
            "expected violates I3, I4",
            "I3 (no stale accept) was not violated in any of 2 seeds",
        ],
    );
    // An unlisted invariant violated.
    check_evaluate(
        expect(),
        &[
            outcome(4, &[I4, I3], None),
            outcome(8, &[I1], None),
            outcome(6, &[I1], None),
        ],
        false,
        &["unexpected I1 (tokens strictly increase) was violated in 2 seeds (first seed 6)"],
    );
    // A panic fails even when every expected violation happened.
    check_evaluate(
        expect(),
        &[
            outcome(4, &[I4, I3], None),
            outcome(8, &[], Some("boom")),
            outcome(9, &[], Some("x")),
        ],
        false,
        &["seed 8 panicked (and 1 more): boom"],
    );
    // Nothing ran: the expected violations were not seen.
    check_evaluate(
        Outcome::Violates(vec![I5]),
        &[],
        false,
        &["I5", "any of 0 seeds"],
    );
}

#[test]
fn evaluate_requires_coverage() {
    let stale = &["stale-write-rejected"];
    // Covered: met, and the detail says how often.
    check_evaluate_covered(
        expect(Outcome::Safe, stale),
        &[outcome(0, &[], None), rejecting(outcome(1, &[], None))],
        true,
        &[
            "Met",
            "any of 2 seeds",
            "coverage hit: stale-write-rejected in 1 seed",
        ],
    );
    // Safe, but the danger never happened: vacuous, naming the condition and its meaning.
    check_evaluate_covered(
        expect(
            Outcome::Safe,
            &["stale-write-rejected", "lease-expired-while-paused"],
        ),
        &[outcome(0, &[], None), rejecting(outcome(1, &[], None))],
        false,
        &[
            "vacuous: no invariant was violated",
            "lease-expired-while-paused (a lease expired while its holder was paused)",
        ],
    );
    let (_, detail) = evaluate(&expect(Outcome::Safe, stale), &[outcome(0, &[], None)]);
    assert!(detail.starts_with("vacuous:"), "{detail}");
    assert!(!detail.contains("lease-expired"), "{detail}");
    // No seeds at all: nothing was covered.
    check_evaluate_covered(
        expect(Outcome::Safe, stale),
        &[],
        false,
        &["vacuous:", "any of 0 seeds", "stale-write-rejected"],
    );
    // A violation expectation is held to its coverage too.
    check_evaluate_covered(
        expect(Outcome::Violates(vec![I4]), &["takeover"]),
        &[outcome(0, &[I4], None)],
        false,
        &[
            "vacuous: violated as expected, I4 in 1 seed (first seed 0)",
            "takeover (",
        ],
    );
    // (A name that is not a coverage condition cannot reach here: `Coverage` is a closed set.)
    // Invariants failed as well: plainly not met, and the missing coverage is named too.
    let (met, detail) = evaluate(&expect(Outcome::Safe, stale), &[outcome(3, &[I4], None)]);
    assert!(!met);
    assert!(
        detail.starts_with("Not met (expected safe): I4"),
        "{detail}"
    );
    assert!(
        detail.contains("required coverage never hit: stale-write-rejected"),
        "{detail}"
    );
}

/// `outcome` whose run rejected a write whose epoch was still current (a false rejection).
fn falsely_rejecting(mut outcome: SeedOutcome) -> SeedOutcome {
    outcome.checked.metrics.current_write_rejections = 1;
    outcome
}

#[test]
fn evaluate_never() {
    let mut never = expect(Outcome::Safe, &["stale-write-rejected"]);
    never.never = vec![Coverage::CurrentWriteRejected];
    // Never happened: met, and the detail says so.
    check_evaluate_covered(
        never.clone(),
        &[rejecting(outcome(0, &[], None)), outcome(1, &[], None)],
        true,
        &["Met", "never happened, as required: current-write-rejected"],
    );
    // Happened in one seed: not met, naming the first seed, even though every invariant held
    // and the required coverage was hit.
    check_evaluate_covered(
        never,
        &[
            rejecting(outcome(0, &[], None)),
            falsely_rejecting(outcome(4, &[], None)),
            falsely_rejecting(outcome(2, &[], None)),
        ],
        false,
        &[
            "Not met (expected safe)",
            "current-write-rejected must never happen but happened in 2 seeds (first seed 2)",
        ],
    );
}

#[test]
fn summary_counts_coverage_per_seed_and_flags_vacuous() {
    let mut paused = outcome(4, &[], None);
    paused.checked.metrics.paused_expiries = 3;
    let outcomes = [
        rejecting(outcome(2, &[], None)),
        rejecting(outcome(2, &[], None)), // a duplicated seed counts once
        paused,
        outcome(7, &[], None),
    ];
    let mut scenario = scenario(Outcome::Safe);
    let seeds = SeedRange { start: 0, end: 8 };

    let summary = summarize(&scenario, seeds, &outcomes);
    let names: Vec<&str> = Coverage::ALL.iter().map(|c| c.name()).collect();
    let keys: Vec<&str> = summary.coverage.keys().map(|c| c.name()).collect();
    let mut sorted_names = names.clone();
    sorted_names.sort();
    assert_eq!(keys, sorted_names, "every condition, declared or not");
    assert_eq!(summary.coverage[&Coverage::StaleWriteRejected], 1);
    assert_eq!(summary.coverage[&Coverage::LeaseExpiredWhilePaused], 1);
    assert_eq!(summary.coverage[&Coverage::Takeover], 0);
    assert_eq!(
        summary.coverage_required,
        vec![Coverage::StaleWriteRejected]
    );
    assert!(summary.expectation_met && !summary.vacuous);
    assert_eq!(summary.verdict(), ExpectationVerdict::Met);

    scenario.expect.coverage = vec![Coverage::Takeover, Coverage::StaleWriteRejected];
    let summary = summarize(&scenario, seeds, &outcomes);
    assert!(!summary.expectation_met);
    assert!(summary.vacuous);
    assert!(summary.expectation_detail.starts_with("vacuous:"));
    assert_eq!(summary.verdict(), ExpectationVerdict::Vacuous);
    let text = render_summary(&summary);
    assert!(
        text.contains("  coverage: takeover=0 stale-write-rejected=1 VACUOUS\n"),
        "{text}"
    );
    assert!(
        text.contains("expectation safe: VACUOUS — vacuous:"),
        "{text}"
    );

    // A real failure is not vacuous, even with coverage missing.
    let summary = summarize(&scenario, seeds, &[outcome(1, &[I3], None)]);
    assert!(!summary.expectation_met && !summary.vacuous);
    assert_eq!(summary.verdict(), ExpectationVerdict::NotMet);
}

#[test]
fn render_summary_without_required_coverage() {
    let mut scenario = scenario(Outcome::Violates(vec![I4]));
    scenario.expect.coverage.clear();
    let (mut first, mut second) = (outcome(0, &[I4], None), outcome(1, &[], None));
    first.checked.metrics.acquisitions = 1;
    second.checked.metrics.acquisitions = 2;
    first.checked.metrics.takeover_latency_ms = vec![100.0, 200.0, 300.0];
    second.checked.metrics.takeover_latency_ms = vec![400.0, 500.0, 600.0];
    let summary = summarize(&scenario, SeedRange { start: 0, end: 2 }, &[first, second]);
    let text = render_summary(&summary);
    assert!(text.contains("  coverage: none required\n"), "{text}");
    assert!(
        text.contains("expectation violates I4: MET — violated as expected"),
        "{text}"
    );
    assert!(!text.contains("Met:") && !text.contains('{'), "{text}");
    // The metrics as aligned tables (outcome(): 1 and 2 acquisitions, 3 latency samples).
    let lines: Vec<&str> = text.lines().collect();
    let row = |name: &str| {
        *lines
            .iter()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap()
    };
    assert_eq!(
        row("counter"),
        "  counter                        total  max/seed"
    );
    assert_eq!(
        row("acquisitions"),
        "  acquisitions                       3         2"
    );
    let timing = row("takeover_latency_ms");
    assert_eq!(
        timing,
        "  takeover_latency_ms                6     300.0     600.0     600.0"
    );
    assert_eq!(timing.len(), row("timing (ms)").len(), "aligned: {text}");
}

#[test]
fn expectation_text_is_sorted_and_deduplicated() {
    assert_eq!(expectation_text(&Outcome::Safe), "safe");
    assert_eq!(
        expectation_text(&Outcome::Violates(vec![I4, I3, I4])),
        "violates I3, I4"
    );
    assert_eq!(
        expectation_text(&Outcome::Violates(vec![])),
        "violates nothing"
    );
}

#[test]
fn summarize_counts_seeds_per_invariant() {
    let outcomes = [
        outcome(12, &[I4], None),
        outcome(3, &[I4, I3], None),
        outcome(5, &[], Some("storage panicked")),
        outcome(1, &[], None),
        outcome(10, &[I3], None),
    ];
    let summary = summarize(
        &scenario(Outcome::Violates(vec![I3, I4])),
        SeedRange { start: 0, end: 20 },
        &outcomes,
    );
    assert_eq!(summary.runs, 5);
    assert_eq!(summary.failing_seeds, vec![3, 5, 10, 12]);
    assert_eq!(summary.panicked_seeds, vec![5]);
    let counts: Vec<(Invariant, u64)> = summary.violations.clone().into_iter().collect();
    assert_eq!(counts, vec![(I1, 0), (I2, 0), (I3, 2), (I4, 2), (I5, 0)]);
    let firsts: Vec<(Invariant, Option<u64>)> =
        summary.first_violation_seed.clone().into_iter().collect();
    assert_eq!(
        firsts,
        vec![
            (I1, None),
            (I2, None),
            (I3, Some(3)),
            (I4, Some(3)),
            (I5, None)
        ]
    );
    assert_eq!(summary.expectation, "violates I3, I4");
    assert!(!summary.expectation_met);
    assert!(summary.expectation_detail.contains("seed 5 panicked"));
    // Failing seeds only: 3, 5, 10, 12 (seed 1 is clean).
    assert_eq!(summary.failing_trace_hashes.len(), 4);
    assert_eq!(summary.failing_trace_hashes["12"], outcomes[0].trace_hash);
    assert!(!summary.failing_trace_hashes.contains_key("1"));
    assert_eq!(summary.trace_digest.len(), 16);
    assert_eq!(summary.seeds, SeedsJson { start: 0, end: 20 });
    assert_eq!(summary.scenario, "gc-pause-textbook-max-token");
    assert_eq!(
        summary.scenario_hash,
        scenario(Outcome::Violates(vec![I3, I4])).hash()
    );
}

#[test]
fn several_violations_of_one_invariant_count_one_seed() {
    let outcomes = [outcome(2, &[I4, I4, I4], None)];
    let summary = summarize(
        &scenario(Outcome::Safe),
        SeedRange { start: 0, end: 3 },
        &outcomes,
    );
    assert_eq!(summary.violations[&I4], 1);
    assert_eq!(summary.failing_seeds, vec![2]);
}

#[test]
fn summary_is_independent_of_order_and_byte_identical() {
    let scenario = scenario(Outcome::Safe);
    let seeds = SeedRange { start: 0, end: 20 };
    let mut outcomes: Vec<SeedOutcome> = (0..20)
        .map(|seed| match seed % 7 {
            0 => outcome(seed, &[I4], None),
            3 => outcome(seed, &[I2, I1], None),
            5 => outcome(seed, &[], Some("boom")),
            _ => outcome(seed, &[], None),
        })
        .collect();
    let reference = to_json(&summarize(&scenario, seeds, &outcomes));
    assert_eq!(reference, to_json(&summarize(&scenario, seeds, &outcomes)));
    outcomes.reverse();
    assert_eq!(reference, to_json(&summarize(&scenario, seeds, &outcomes)));
    outcomes.rotate_left(7);
    assert_eq!(reference, to_json(&summarize(&scenario, seeds, &outcomes)));

    assert!(reference.ends_with("}\n"));
    let back: Summary = serde_json::from_str(&reference).unwrap();
    assert_eq!(to_json(&back), reference);
}

#[test]
fn json_fields_come_in_declared_order() {
    let json = to_json(&summarize(
        &scenario(Outcome::Safe),
        SeedRange { start: 0, end: 1 },
        &[rejecting(outcome(0, &[], None))],
    ));
    let order = [
        "\"schema_version\": 1",
        "\"producer\": \"fencesim ",
        "\"scenario\"",
        "\"scenario_hash\"",
        "\"seeds\"",
        "\"runs\"",
        "\"failing_seeds\"",
        "\"panicked_seeds\"",
        "\"violations\"",
        "\"first_violation_seed\"",
        "\"expectation\"",
        "\"expectation_met\"",
        "\"expectation_detail\"",
        "\"coverage\"",
        "\"coverage_required\"",
        "\"vacuous\"",
        "\"metrics\"",
        "\"trace_digest\"",
        "\"failing_trace_hashes\"",
    ];
    let positions: Vec<usize> = order.iter().map(|key| json.find(key).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{json}");
    assert!(json.contains("\"expectation_met\": true"));
    assert!(json.contains("\"I5\": null"));
    assert!(json.contains("\"stale-write-rejected\": 1"));
    assert!(json.contains("\"vacuous\": false"));
}

/// Aggregates `per_seed` and compares with `expect`.
#[track_caller]
fn check_aggregate(per_seed: Vec<Value>, expect: Value) {
    assert_eq!(aggregate_metrics(per_seed), expect);
}

#[test]
fn aggregate_integers_sum_with_max_per_seed() {
    check_aggregate(
        vec![
            json!({"takeovers": 2, "writes": 10}),
            json!({"takeovers": 5, "writes": 0}),
        ],
        json!({"takeovers": {"total": 7, "max_per_seed": 5}, "writes": {"total": 10, "max_per_seed": 10}}),
    );
    check_aggregate(
        vec![json!({"delta": -3}), json!({"delta": 1})],
        json!({"delta": {"total": -2, "max_per_seed": 1}}),
    );
}

#[test]
fn aggregate_floats_mean_and_max_rounded() {
    check_aggregate(
        vec![
            json!({"rate": 0.1}),
            json!({"rate": 0.2}),
            json!({"rate": 0.2}),
        ],
        json!({"rate": {"mean": 0.167, "max": 0.2}}),
    );
    // A key absent or null in some seeds: the mean is over the seeds that have it.
    check_aggregate(
        vec![
            json!({"age_ms": 1.5}),
            json!({}),
            json!({"age_ms": null}),
            json!({"age_ms": 2.5}),
        ],
        json!({"age_ms": {"mean": 2.0, "max": 2.5}}),
    );
    check_aggregate(
        vec![json!({"x": -0.0001})],
        json!({"x": {"mean": 0.0, "max": 0.0}}),
    );
    // Too large to scale for rounding: kept as it is, not turned into null.
    check_aggregate(
        vec![json!({"x": f64::MAX})],
        json!({"x": {"mean": f64::MAX, "max": f64::MAX}}),
    );
}

#[test]
fn aggregate_arrays_concatenate_with_nearest_rank_percentiles() {
    let latencies: Vec<u64> = (1..=100).collect();
    check_aggregate(
        vec![
            json!({"takeover_ms": latencies[..40]}),
            json!({"takeover_ms": latencies[40..]}),
        ],
        json!({"takeover_ms": {"count": 100, "p50": 50, "p99": 99, "max": 100}}),
    );
    check_aggregate(
        vec![json!({"lat": [3.33333, 1.0]}), json!({"lat": [2.0]})],
        json!({"lat": {"count": 3, "p50": 2.0, "p99": 3.333, "max": 3.333}}),
    );
    check_aggregate(
        vec![json!({"lat": [7]})],
        json!({"lat": {"count": 1, "p50": 7, "p99": 7, "max": 7}}),
    );
    check_aggregate(
        vec![json!({"lat": []}), json!({"lat": []})],
        json!({"lat": {"count": 0, "p50": null, "p99": null, "max": null}}),
    );
}

#[test]
fn aggregate_other_shapes() {
    check_aggregate(
        vec![
            json!({"per_scope": {"job-1": 2}, "flag": true, "name": "a", "mixed": 1}),
            json!({"per_scope": {"job-1": 3, "job-2": 1}, "flag": false, "name": "b", "mixed": [1]}),
        ],
        json!({
            "flag": {"seeds_true": 1},
            "mixed": null,
            "name": null,
            "per_scope": {"job-1": {"total": 5, "max_per_seed": 3}, "job-2": {"total": 1, "max_per_seed": 1}},
        }),
    );
    check_aggregate(vec![], json!({}));
    // `summarize` aggregates whatever fields `Metrics` has: each one becomes a key.
    let summary = summarize(
        &scenario(Outcome::Safe),
        SeedRange { start: 0, end: 2 },
        &[outcome(0, &[], None), outcome(1, &[], None)],
    );
    let fields = serde_json::to_value(fencesim_check::Metrics::default()).unwrap();
    let fields: BTreeSet<&String> = fields.as_object().unwrap().keys().collect();
    let keys: BTreeSet<&String> = summary.metrics.as_object().unwrap().keys().collect();
    assert_eq!(keys, fields);
}

#[test]
fn aggregated_keys_are_sorted_in_output() {
    let value = aggregate_metrics(vec![json!({"zeta": 1, "alpha": 2, "mid": 3})]);
    let text = serde_json::to_string(&value).unwrap();
    let (a, m, z) = (
        text.find("alpha").unwrap(),
        text.find("mid").unwrap(),
        text.find("zeta").unwrap(),
    );
    assert!(a < m && m < z, "{text}");
}
