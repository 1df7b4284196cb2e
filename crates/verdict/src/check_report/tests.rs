use fencesim_model::Invariant::{I3, I4};

use super::*;
use crate::summary::{summarize, SeedStride};
use fencesim_testkit::{outcome, scenario, Spec};

/// Outcomes of seeds 0..20 of a `violates I4` scenario: I4 in some seeds, I3 in others, one
/// panic, floats in every seed's metrics.
fn outcomes() -> Vec<SeedOutcome> {
    (0..20)
        .map(|seed| match seed % 7 {
            1 => outcome(seed, &[I4], None),
            4 => outcome(seed, &[I4, I3], None),
            6 if seed == 13 => outcome(seed, &[], Some("storage panicked")),
            _ => outcome(seed, &[], None),
        })
        .collect()
}

fn safe() -> Scenario {
    scenario(Spec {
        name: "b-safe",
        ..Spec::default()
    })
}

fn violating() -> Scenario {
    scenario(Spec {
        name: "a-violates",
        fencing: "none",
        expect: "violates = [\"I4\"]\ncoverage = [\"stale-write-rejected\"]",
        ..Spec::default()
    })
}

/// Seeds 0..20 of the `safe` scenario, none violating.
fn clean() -> Vec<SeedOutcome> {
    (0..20).map(|seed| outcome(seed, &[], None)).collect()
}

/// Every `n`-th outcome from the `k`-th (0-based): the seeds of shard `k + 1` of `n`.
fn slice(outcomes: Vec<SeedOutcome>, k: usize, n: usize) -> Vec<SeedOutcome> {
    outcomes
        .into_iter()
        .enumerate()
        .filter(|(index, _)| index % n == k)
        .map(|(_, outcome)| outcome)
        .collect()
}

/// The report of a whole run: two scenarios over their seeds, given in file order reversed.
fn whole() -> CheckReport {
    check_report(
        None,
        vec![
            scenario_result("scenarios/violates.toml", &violating(), outcomes()),
            scenario_result("scenarios/safe.toml", &safe(), clean()),
        ],
    )
}

/// The partial report of shard `k` of `n` (0-based `k`): every `n`-th outcome of each file.
fn shard(k: usize, n: usize) -> CheckReport {
    check_report(
        Some(format!("{}/{n}", k + 1)),
        vec![
            scenario_result("scenarios/safe.toml", &safe(), slice(clean(), k, n)),
            scenario_result(
                "scenarios/violates.toml",
                &violating(),
                slice(outcomes(), k, n),
            ),
        ],
    )
}

/// Writes `report` and reads it back, as the shards' files travel between machines.
fn through_json(report: &CheckReport, file: &str) -> CheckReport {
    report_from_json(&report_to_json(report), file).expect("a written report reads back")
}

#[test]
fn report_is_sorted_and_knows_whether_all_were_met() {
    let report = whole();
    let files: Vec<&str> = report.scenarios.iter().map(|r| r.file.as_str()).collect();
    assert_eq!(files, ["scenarios/safe.toml", "scenarios/violates.toml"]);
    let [safe, violates] = &report.scenarios[..] else {
        panic!("two scenarios")
    };
    // Seeds 0, 3, 6, ... reject a stale write: the `safe` scenario is covered.
    assert!(
        safe.summary.expectation_met,
        "{}",
        safe.summary.expectation_detail
    );
    // Seed 13 panicked.
    assert!(!violates.summary.expectation_met);
    assert!(!report.all_met);
    assert_eq!(violates.summary.runs, 20);
    // In full: the panic (13), the unexpected I3 (4, 11, 18) and the first seed violating
    // I4 (1); the other violations of the allowed I4 (8, 15) are only counted.
    let kept: Vec<u64> = violates.failures.iter().map(|o| o.seed).collect();
    assert_eq!(kept, [1, 4, 11, 13, 18]);
    assert_eq!(violates.summary.failing_seeds, [1, 4, 8, 11, 13, 15, 18]);
    assert!(safe.failures.is_empty());

    let all_safe = check_report(None, vec![report.scenarios[0].clone()]);
    assert!(all_safe.all_met);
    assert!(check_report(None, vec![]).all_met);
}

#[test]
fn scenario_result_sorts_outcomes_and_summarizes_over_the_range() {
    let mut shuffled = outcomes();
    shuffled.reverse();
    shuffled.rotate_left(5);
    let result = scenario_result("v.toml", &violating(), shuffled);
    let seeds: Vec<u64> = result.failures.iter().map(|o| o.seed).collect();
    assert_eq!(seeds, [1, 4, 11, 13, 18]);
    assert_eq!(
        result.summary,
        summarize(&violating(), violating().seeds, &outcomes())
    );
    assert_eq!(result.summary.runs, 20);
    // A partial result counts only the outcomes it has; the range stays the scenario's.
    let partial = scenario_result("v.toml", &violating(), outcomes()[..3].to_vec());
    assert_eq!(partial.summary.runs, 3);
    assert_eq!(partial.summary.seeds.end, 20);
}

#[test]
fn json_round_trips_byte_for_byte() {
    let report = whole();
    let json = report_to_json(&report);
    assert!(json.ends_with("}\n"));
    assert_eq!(json, report_to_json(&whole()));
    let back = report_from_json(&json, "check.json").unwrap();
    assert_eq!(back, report, "floats survive the round trip exactly");
    assert_eq!(report_to_json(&back), json);
    for key in ["\"shard\"", "\"scenarios\"", "\"all_met\""] {
        assert!(json.contains(key), "{key}");
    }
}

#[test]
fn report_from_json_names_the_file() {
    let error =
        report_from_json("{\"schema_version\": 1, \"shard\": null}", "shard-2.json").unwrap_err();
    assert!(error.starts_with("shard-2.json: "), "{error}");
    assert!(error.contains("line 1"), "{error}");
    let error = report_from_json("not json", "x/y.json").unwrap_err();
    assert!(
        error.starts_with("x/y.json: not a fencesim check report"),
        "{error}"
    );
}

#[test]
fn merged_shards_are_byte_identical_to_the_whole_run() {
    let whole = whole();
    let expected = report_to_json(&whole);
    for n in [1, 2, 3, 7, 25] {
        let parts: Vec<CheckReport> = (0..n)
            .map(|k| through_json(&shard(k, n), &format!("shard-{k}.json")))
            .collect();
        if n > 1 {
            assert_ne!(report_to_json(&parts[0]), expected);
        }
        let mut reversed = parts.clone();
        reversed.reverse();
        for parts in [parts, reversed] {
            let merged = merge(parts).unwrap();
            assert_eq!(merged.shard, None);
            assert_eq!(report_to_json(&merged), expected, "{n} shards");
        }
    }
    // Merging a merged (or whole) report is the identity.
    assert_eq!(report_to_json(&merge(vec![whole]).unwrap()), expected);
}

#[test]
fn merge_even_and_odd_seeds() {
    // The property: split by even/odd index, merge, compare bytes.
    let scenario = violating();
    let all = outcomes();
    let (even, odd): (Vec<_>, Vec<_>) = all
        .iter()
        .cloned()
        .enumerate()
        .partition(|(index, _)| index % 2 == 0);
    let strip = |v: Vec<(usize, SeedOutcome)>| v.into_iter().map(|(_, o)| o).collect();
    let part = |k: &str, outcomes| {
        check_report(
            Some(k.to_string()),
            vec![scenario_result("v.toml", &scenario, outcomes)],
        )
    };
    let merged = merge(vec![part("1/2", strip(even)), part("2/2", strip(odd))]).unwrap();
    let direct = check_report(None, vec![scenario_result("v.toml", &scenario, all)]);
    assert_eq!(report_to_json(&merged), report_to_json(&direct));
}

/// Merges `parts` and checks the error mentions every `needles`.
#[track_caller]
fn check_merge_error(parts: Vec<CheckReport>, needles: &[&str]) {
    let error = merge(parts).unwrap_err();
    for needle in needles {
        assert!(error.contains(needle), "{needle:?} not in {error:?}");
    }
}

#[test]
fn merge_refuses_inconsistent_parts() {
    let whole = whole();
    let (first, second) = (shard(0, 2), shard(1, 2));

    check_merge_error(vec![], &["no reports"]);

    // The same seed twice.
    check_merge_error(
        vec![first.clone(), first.clone(), second.clone()],
        &["scenarios/safe.toml", "seed 0 appears twice"],
    );

    // A shard left out.
    check_merge_error(
        vec![first.clone()],
        &[
            "scenarios/safe.toml",
            "10 seeds",
            "0..20",
            "1, 3, 5",
            "left out",
        ],
    );

    // A different version of the scenario.
    let mut changed = second.clone();
    let result = &mut changed.scenarios[1];
    let mut scenario = result.scenario.clone();
    scenario.lease.ttl_ms += 1;
    *result = scenario_result(&result.file, &scenario, slice(outcomes(), 1, 2));
    let (old, new) = (
        whole.scenarios[1].summary.scenario_hash.clone(),
        changed.scenarios[1].summary.scenario_hash.clone(),
    );
    assert_ne!(old, new);
    check_merge_error(
        vec![first.clone(), changed],
        &["scenarios/violates.toml", &old, &new],
    );

    // Shards are matched by scenario name, not by the path as typed (`catA` vs
    // `./catA`): the same shards typed differently merge to the same report.
    let mut retyped = second.clone();
    for result in &mut retyped.scenarios {
        result.file = format!("./{}", result.file);
    }
    assert_eq!(
        merge(vec![first.clone(), retyped]).unwrap(),
        merge(vec![first.clone(), second.clone()]).unwrap()
    );

    // Another scenario name under the same file name is another scenario, so the first
    // one's shard is left out.
    let mut renamed = second.clone();
    renamed.scenarios[0].scenario.name = "other".into();
    // (Its hash follows the scenario, or the edit itself is refused.)
    renamed.scenarios[0].summary.scenario_hash = renamed.scenarios[0].scenario.hash();
    check_merge_error(
        vec![first.clone(), renamed],
        &["scenarios/safe.toml", "left out"],
    );

    // A seed outside the range.
    let mut outside = second.clone();
    let mut seeds = slice(clean(), 1, 2);
    seeds.push(outcome(99, &[], None));
    outside.scenarios[0] = scenario_result("scenarios/safe.toml", &safe(), seeds);
    check_merge_error(
        vec![first.clone(), outside],
        &["scenarios/safe.toml", "outside", "99"],
    );

    // A state that does not add up: a failing seed it never counted, or a count that is not
    // the number of seeds.
    let json = report_to_json(&second);
    let failing = json.replacen(r#""failing":[]"#, r#""failing":[7777]"#, 1);
    let stats = json.find(r#""stats""#).expect("a state") + r#""stats":{"#.len();
    let runs = stats + json[stats..].find(r#""runs":"#).unwrap() + r#""runs":"#.len();
    let runs = format!("{}1{}", &json[..runs], &json[runs..]);
    for (edited, needle) in [
        (failing, "names seed 7777"),
        (runs, "expected runs equal to the number of seeds counted"),
    ] {
        assert_ne!(edited, json, "{needle}");
        // Refused as it is read: its summary cannot be finished from an unsound state.
        let error = report_from_json(&edited, "edited.json").unwrap_err();
        assert!(
            error.starts_with("edited.json: scenarios/safe.toml: ") && error.contains(needle),
            "{error}"
        );
    }
}

/// `result` with recorded seeds `runs` re-run out of a file of `total`.
fn with_recorded(
    mut result: ScenarioResult,
    total: usize,
    runs: &[(usize, bool)],
) -> ScenarioResult {
    use crate::recorded::{RecordedRun, Rerun};
    result.recorded_total = total;
    result.recorded = runs
        .iter()
        .map(|&(index, contradicts)| RecordedRun {
            index,
            seed: 100 + index as u64,
            set: if index == 1 {
                vec!["storage.fencing=none".into()]
            } else {
                vec![]
            },
            recorded: vec!["I3".into()],
            now: if contradicts {
                vec!["I3".into()]
            } else {
                vec![]
            },
            rerun: if contradicts {
                Rerun::Same
            } else {
                Rerun::Passes
            },
            scenario_changed: false,
            contradicts,
            detail: String::new(),
        })
        .collect();
    result
}

#[test]
fn a_recorded_seed_that_still_contradicts_fails_the_scenario_and_the_report() {
    let clean_safe = || scenario_result("scenarios/safe.toml", &safe(), clean());
    assert_eq!(clean_safe().verdict(false), ScenarioVerdict::Ok);
    // Recorded seeds that pass now are reported and fail nothing.
    let passing = with_recorded(clean_safe(), 2, &[(0, false), (1, false)]);
    assert_eq!(passing.verdict(false), ScenarioVerdict::Ok);
    assert!(check_report(None, vec![passing]).all_met);
    // One that still contradicts fails the scenario, its report, and a shard's part too.
    let failing = with_recorded(clean_safe(), 2, &[(0, false), (1, true)]);
    assert_eq!(failing.verdict(false), ScenarioVerdict::Failed);
    assert_eq!(failing.verdict(true), ScenarioVerdict::Failed);
    let report = check_report(None, vec![failing.clone()]);
    assert!(!report.all_met);
    assert_eq!(report.failed().len(), 1);
    assert_eq!(report.failed()[0].recorded_failing().count(), 1);
    let back = through_json(&report, "check.json");
    assert_eq!(
        back, report,
        "recorded re-runs are part of the written report"
    );
    assert!(!back.all_met);
    assert!(report_to_json(&report).contains("\"verdict\":\"FAILED\""));
    // A clean shard's part is undecided, not failed.
    assert_eq!(clean_safe().verdict(true), ScenarioVerdict::Partial);
    assert!(check_report(Some("1/2".into()), vec![clean_safe()]).all_met);
}

#[test]
fn recorded_seeds_split_across_shards_and_merge_back_exactly() {
    let total = 5;
    let states: Vec<bool> = vec![false, true, false, false, false];
    let all: Vec<(usize, bool)> = states.iter().copied().enumerate().collect();
    let whole = check_report(
        None,
        vec![with_recorded(
            scenario_result("scenarios/safe.toml", &safe(), clean()),
            total,
            &all,
        )],
    );
    assert!(!whole.all_met);
    let part = |k: usize, n: usize| {
        let shard = Shard {
            k: k as u64 + 1,
            n: n as u64,
        };
        let mine: Vec<(usize, bool)> = all
            .iter()
            .copied()
            .filter(|(index, _)| shard.takes_recorded(*index))
            .collect();
        check_report(
            Some(shard.to_string()),
            vec![with_recorded(
                scenario_result("scenarios/safe.toml", &safe(), slice(clean(), k, n)),
                total,
                &mine,
            )],
        )
    };
    // Seed #1 fails: shard 2 of 2 holds it, and fails for certain; shard 1 is undecided.
    assert!(part(0, 2).all_met && !part(1, 2).all_met);
    let merged = merge(vec![
        through_json(&part(1, 2), "b"),
        through_json(&part(0, 2), "a"),
    ])
    .unwrap();
    assert_eq!(report_to_json(&merged), report_to_json(&whole));
    assert!(!merged.all_met);
    // Each recorded seed exactly once: a part left out, or given twice, is refused.
    let three: Vec<CheckReport> = (0..3).map(|k| part(k, 3)).collect();
    assert_eq!(
        report_to_json(&merge(three.clone()).unwrap()),
        report_to_json(&whole)
    );
    let mut missing = three.clone();
    missing[2].scenarios[0].recorded.clear();
    check_merge_error(
        missing,
        &["scenarios/safe.toml", "recorded seed #2 is in none"],
    );
    let mut stray = three.clone();
    stray[0].scenarios[0].recorded = three[1].scenarios[0].recorded.clone();
    check_merge_error(stray, &["shard 1/3's share", "got 1"]);
    let mut other_file = three;
    other_file[1].scenarios[0].recorded_total = 6;
    check_merge_error(other_file, &["different regressions files"]);
}

#[test]
fn reports_of_another_schema_version_are_refused_naming_both() {
    let json = report_to_json(&whole());
    assert!(json.starts_with(&format!(
        "{{\"schema_version\":{SCHEMA_VERSION},\"producer\":\"{}\",",
        fencesim_model::version::PRODUCER
    )));
    let ours = ReportHeader::of(&json, "a.json").unwrap();
    let next = ReportHeader::of(
        &json.replacen("\"schema_version\":1", "\"schema_version\":2", 1),
        "b.json",
    )
    .unwrap();
    let error = same_schema(&[("a.json", ours.clone()), ("b.json", next.clone())]).unwrap_err();
    assert!(
        error.contains("a.json has schema_version 1")
            && error.contains("b.json has schema_version 2"),
        "{error}"
    );
    let error = same_schema(&[("b.json", next)]).unwrap_err();
    assert!(
        error.starts_with("b.json: expected a check report with schema_version 1"),
        "{error}"
    );
    let old = ReportHeader::of("{\"shard\": null, \"scenarios\": []}", "old.json").unwrap();
    let error = same_schema(&[("a.json", ours), ("old.json", old)]).unwrap_err();
    assert!(error.contains("old.json has no schema_version"), "{error}");
    let error = report_from_json("{\"shard\": null, \"scenarios\": []}", "old.json").unwrap_err();
    assert!(error.contains("no schema_version"), "{error}");
}

#[test]
fn merged_state_digest_and_kept_outcomes_are_the_whole_runs() {
    let whole = whole();
    let merged = merge(vec![shard(2, 3), shard(0, 3), shard(1, 3)]).unwrap();
    for (merged, whole) in merged.scenarios.iter().zip(&whole.scenarios) {
        assert_eq!(merged.state, whole.state);
        assert_eq!(merged.summary.trace_digest, whole.summary.trace_digest);
        assert_eq!(merged.failures, whole.failures);
        assert_eq!(
            merged.state.seed_strides(),
            [SeedStride {
                first: 0,
                step: 1,
                count: 20
            }]
        );
    }
    // A shard records its seeds as one stride.
    let part = shard(1, 3);
    assert_eq!(
        part.scenarios[0].state.seed_strides(),
        [SeedStride {
            first: 1,
            step: 3,
            count: 7
        }]
    );
}

/// A `never` condition hit in one shard fails the scenario whatever the other
/// shards hold, like a forbidden invariant.
#[test]
fn a_never_condition_hit_in_a_shard_is_a_definite_failure() {
    let never = scenario(Spec {
        name: "never",
        expect: "safe = true\ncoverage = [\"stale-write-rejected\"]\nnever = [\"current-write-rejected\"]",
        ..Spec::default()
    });
    let clean: Vec<SeedOutcome> = (0..2).map(|seed| outcome(seed, &[], None)).collect();
    assert!(!definitely_failed(&scenario_result(
        "never.toml",
        &never,
        clean.clone()
    )));
    let mut falsely_rejected = clean;
    falsely_rejected[1].checked.metrics.current_write_rejections = 1;
    assert!(definitely_failed(&scenario_result(
        "never.toml",
        &never,
        falsely_rejected
    )));
}

#[test]
fn every_scenario_reports_the_abstract_states_its_seeds_reached_and_merges_them_exactly() {
    let whole = whole();
    let space = &whole.scenarios[0].summary.state_space;
    // `start`, `kind-0`..`kind-3` and `nine` (seeds 0, 9 and 18), each from `start`.
    assert_eq!((space.states, space.transitions), (6, 5));
    assert_eq!(space.block_seeds, 1);
    let new: Vec<u64> = space.saturation.iter().map(|b| b.new_states).collect();
    let mut expected = vec![0; 20];
    expected[..4].copy_from_slice(&[3, 1, 1, 1]);
    assert_eq!(new, expected);
    let merged = merge(vec![shard(1, 3), shard(0, 3), shard(2, 3)]).unwrap();
    assert_eq!(merged.scenarios[0].summary.state_space, *space);
    let json = report_to_json(&whole);
    assert!(json.contains("\"state_space\""), "{json}");
}

#[test]
fn shards_run_under_different_overrides_are_refused_naming_the_difference() {
    let set = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
    let common = "workers.count=3";
    assert_eq!(
        override_difference(
            &set(&[common, "lease.ttl_ms=5000"]),
            &set(&[common, "lease.ttl_ms=6000"])
        ),
        "--set lease.ttl_ms=5000 in one, --set lease.ttl_ms=6000 in the other"
    );
    assert_eq!(
        override_difference(&set(&[common]), &set(&[common, "storage.fencing=none"])),
        "nothing in one, --set storage.fencing=none in the other"
    );
    assert!(
        override_difference(&set(&["a=1", "a=2"]), &set(&["a=2", "a=1"]))
            .starts_with("the same overrides in another order")
    );
}
