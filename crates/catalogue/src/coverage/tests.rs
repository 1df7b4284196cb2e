use std::collections::BTreeSet;

use fencesim_check::{abstract_state::Visited, SeedOutcome};
use fencesim_testkit::{outcome, scenario, Spec};
use fencesim_verdict::check_report::{check_report, scenario_result};
use serde_json::{json, Value};

use super::*;

/// A passing outcome of `seed` whose run visited `common` and `others`, with a transition
/// from `common` to each of them.
fn visiting(seed: u64, others: &[&str]) -> SeedOutcome {
    let mut outcome = outcome(seed, &[], None);
    let states: BTreeSet<String> = std::iter::once("common")
        .chain(others.iter().copied())
        .map(str::to_string)
        .collect();
    outcome.checked.visited = Visited {
        states,
        transitions: others
            .iter()
            .map(|to| ("common".to_string(), to.to_string()))
            .collect(),
    };
    outcome
}

/// `alpha`, seeds 0..200: `common` in every seed, `shared` in seeds below 100, `rare-a` in
/// seed 5 only and `late` in seed 195 only (both rare: 1 seed of 200 is under 1 %; `late` is
/// new in the last 10 %, seeds 180..200). `beta`, seeds 0..20: `common` and `shared` in every
/// seed, `beta-only` in seed 3 (1 of 20: not rare). `gamma`, seeds 0..101: `common` only.
fn report() -> CheckReport {
    let alpha = scenario(Spec {
        name: "alpha",
        seeds: "0..200",
        ..Spec::default()
    });
    let beta = scenario(Spec {
        name: "beta",
        seeds: "0..20",
        ..Spec::default()
    });
    let gamma = scenario(Spec {
        name: "gamma",
        seeds: "0..101",
        ..Spec::default()
    });
    let alpha_runs = (0..200)
        .map(|seed| {
            let mut others = Vec::new();
            if seed < 100 {
                others.push("shared");
            }
            match seed {
                5 => others.push("rare-a"),
                195 => others.push("late"),
                _ => {}
            }
            visiting(seed, &others)
        })
        .collect();
    let beta_runs = (0..20)
        .map(|seed| {
            if seed == 3 {
                visiting(seed, &["shared", "beta-only"])
            } else {
                visiting(seed, &["shared"])
            }
        })
        .collect();
    check_report(
        None,
        vec![
            scenario_result("s/beta.toml", &beta, beta_runs),
            scenario_result("s/alpha.toml", &alpha, alpha_runs),
            scenario_result(
                "s/gamma.toml",
                &gamma,
                (0..101).map(|seed| visiting(seed, &[])).collect(),
            ),
        ],
    )
}

#[test]
fn markdown_lists_totals_rows_and_every_rare_state_counting_the_union_once() {
    let markdown = coverage_markdown(&report());
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(lines[0], "# State-space coverage");
    assert!(
        lines[2].contains(&format!("`{COVERAGE_COMMAND}`")),
        "{}",
        lines[2]
    );
    for words in [
        "crates/check/src/abstract_state.rs",
        "fewer than 1 % of its seeds",
        "any `--jobs`",
    ] {
        assert!(lines[2].contains(words), "{words}: {}", lines[2]);
    }
    let section = |title: &str| -> Vec<&str> {
        let start = lines.iter().position(|l| *l == title).expect(title) + 2;
        let end = lines[start..]
            .iter()
            .position(|l| l.starts_with("## "))
            .map_or(lines.len(), |k| start + k);
        lines[start..end].to_vec()
    };
    // The union counts `common` and `shared` (both scenarios reach them) once: 5 states, not
    // 4 + 3; `common>shared` once: 4 transitions, not 3 + 2.
    assert_eq!(
        section("## Catalogue"),
        [
            "- 3 scenarios and 321 seeds run",
            "- 5 distinct abstract states and 4 distinct transitions across the catalogue (the \
             union of the scenarios': a state reached by several scenarios is counted once)",
            "- 3 states reached by only one scenario (each scenario's count is its `only here` \
             below; the states are listed in `coverage.json`, `only_in_one_scenario`)",
            "- 2 rare states in 1 scenario (a state rare in two scenarios counts twice)",
            "- saturated: 2 of 3 scenarios (no new state in the last 10 % of the seeds); not \
             saturated: 1 (a new state in the last 10 %: more seeds may reach more)",
            "",
        ]
    );
    let rows = section("## Per scenario");
    assert_eq!(
        rows[2..],
        [
            "| scenario | seeds | states | transitions | last 10 % | new states in it | only here | rare states |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
            "| alpha | 200 | 4 | 3 | 20 seeds (180..200) | 1 | 2 | 2 |",
            "| beta | 20 | 3 | 2 | 2 seeds (18..20) | 0 | 1 | 0 |",
            "| gamma | 101 | 1 | 0 | 11 seeds (90..101) | 0 | 0 | 0 |",
            "",
        ]
    );
    let rare = section("## Rare states");
    assert_eq!(
        rare[2..],
        [
            "### alpha",
            "",
            "2 rare states of 200 seeds:",
            "",
            "| seeds | first seed | state | replay |",
            "| --- | --- | --- | --- |",
            "| 1 | 195 | `late` | `fencesim replay s/alpha.toml --seed 195` |",
            "| 1 | 5 | `rare-a` | `fencesim replay s/alpha.toml --seed 5` |",
            "",
            "No rare state in the other 2 scenarios: `gamma` (more than 100 seeds); 1 of at \
             most 100 seeds, where one seed is already 1 % or more.",
        ]
    );
    assert!(markdown.ends_with("or more.\n"));
}

#[test]
fn json_carries_the_same_figures() {
    let value: Value = serde_json::from_str(&coverage_json(&report())).unwrap();
    assert_eq!(value["generated_by"], COVERAGE_COMMAND);
    assert_eq!(value["rare_percent"], 1);
    assert_eq!(
        value["totals"],
        json!({
            "scenarios": 3,
            "runs": 321,
            "states": 5,
            "transitions": 4,
            "truncated": false,
            "states_in_one_scenario": 3,
            "rare_states": 2,
            "scenarios_with_rare_states": 1,
            "unsaturated_scenarios": 1,
        })
    );
    let alpha = &value["scenarios"][0];
    assert_eq!(alpha["scenario"], "alpha");
    assert_eq!(
        alpha["last_10_percent"],
        json!({"seeds": {"start": 180, "end": 200}, "new_states": 1, "new_transitions": 1})
    );
    assert_eq!(
        alpha["rare"][1],
        json!({
            "state": "rare-a",
            "id": state_id("rare-a"),
            "seeds": 1,
            "first_seed": 5,
            "replay": "fencesim replay s/alpha.toml --seed 5",
        })
    );
    assert_eq!(value["scenarios"][1]["rare"], json!([]));
    let only: Vec<(&str, &str)> = value["only_in_one_scenario"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["scenario"].as_str().unwrap(),
                o["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        only,
        [
            ("alpha", "late"),
            ("alpha", "rare-a"),
            ("beta", "beta-only")
        ]
    );
    assert_eq!(
        value["only_in_one_scenario"][2]["id"],
        state_id("beta-only")
    );
    assert_eq!(value["scenarios"][2]["states_only_here"], 0);
}

#[test]
fn the_last_tenth_rounds_up_and_stays_in_the_range() {
    let share = |start, end| {
        let s = last_share(SeedsJson { start, end });
        (s.start, s.end)
    };
    assert_eq!(share(0, 200), (180, 200));
    assert_eq!(share(100, 105), (104, 105));
    assert_eq!(share(7, 7), (7, 7));
    assert_eq!(share(0, 1), (0, 1));
}

/// The header says CI checks the catalogue's copy, not that CI made this one (an ad-hoc
/// `check --coverage` writes the same header).
#[test]
fn the_header_claims_ci_only_of_the_catalogues_copy() {
    let markdown = coverage_markdown(&report());
    let header = markdown.lines().nth(2).unwrap();
    assert!(
        header.starts_with("Written by `fencesim check --coverage` from the scenarios below."),
        "{header}"
    );
    assert!(
        header.contains("The catalogue's copy, `reports/coverage.md`, is made by"),
        "{header}"
    );
    assert!(
        !header.contains("Generated from the scenario catalogue"),
        "{header}"
    );
    assert!(!header.contains("CI regenerates it"), "{header}");
}

/// A state first reached by the first seed of the last tenth is new in it; one first reached
/// by the seed before is not. Seeds 0..20: the last tenth is 18..20.
#[test]
fn a_state_first_reached_at_the_buckets_first_seed_is_new_in_it() {
    let new_states = |first: u64| {
        let edge = scenario(Spec {
            name: "edge",
            seeds: "0..20",
            ..Spec::default()
        });
        let runs = (0..20)
            .map(|seed| {
                if seed == first {
                    visiting(seed, &["late"])
                } else {
                    visiting(seed, &[])
                }
            })
            .collect();
        let report = check_report(None, vec![scenario_result("s/edge.toml", &edge, runs)]);
        let value: Value = serde_json::from_str(&coverage_json(&report)).unwrap();
        let row = &value["scenarios"][0]["last_10_percent"];
        assert_eq!(row["seeds"], json!({"start": 18, "end": 20}), "{row}");
        (row["new_states"].clone(), row["new_transitions"].clone())
    };
    assert_eq!(new_states(18), (json!(1), json!(1)));
    assert_eq!(new_states(19), (json!(1), json!(1)));
    assert_eq!(new_states(17), (json!(0), json!(0)));
}
