use fencesim_check::SeedOutcome;
use fencesim_model::Invariant::{I3, I4};

use super::*;
use fencesim_testkit::{outcome, scenario, Spec};
use fencesim_verdict::check_report::{check_report, scenario_result};

const GC_PAUSE_TWICE: &str = r#"
[[faults.schedule]]
at_ms = 5_000
kind = "gc-pause"
node = "worker-0"
duration_ms = 15_000

[[faults.schedule]]
at_ms = 30_000
kind = "gc-pause"
node = "worker-1"
duration_ms = 15_000
"#;

const SWARM: &str = r#"
[faults]
swarm = true

[[faults.random]]
kind = "partition"
rate_per_min = 1
duration_ms = { dist = "uniform", min = 1_000, max = 8_000 }

[[faults.random]]
kind = "gc-pause"
rate_per_min = 6
duration_ms = { dist = "lognormal", median = 20, p99 = 3_000 }
"#;

const SCHEDULED_AND_RANDOM: &str = r#"
[[faults.schedule]]
at_ms = 5_000
kind = "vm-suspend"
node = "worker-0"
duration_ms = 15_000

[[faults.random]]
kind = "clock-step"
rate_per_min = 2
duration_ms = { dist = "uniform", min = 128, max = 5_000 }
"#;

/// Outcomes of `seeds`; `make` picks each seed's outcome.
fn run(seeds: std::ops::Range<u64>, make: impl Fn(u64) -> SeedOutcome) -> Vec<SeedOutcome> {
    seeds.map(make).collect()
}

/// Four scenarios, given out of matrix order.
fn report() -> CheckReport {
    let textbook_none = scenario(Spec {
        name: "textbook-none",
        fencing: "none",
        faults: GC_PAUSE_TWICE,
        expect: "violates = [\"I3\", \"I4\"]",
        ..Spec::default()
    });
    let swarm = scenario(Spec {
        name: "swarm-wrapping",
        seeds: "100..110",
        lease: "token_source = \"wrapping-counter\"\ntoken_bits = 8",
        faults: SWARM,
        ..Spec::default()
    });
    let quiet = scenario(Spec {
        name: "quiet",
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    });
    let mixed = scenario(Spec {
        name: "mixed",
        fencing: "same-store-txn",
        lease: "token_source = \"volatile-counter\"",
        faults: SCHEDULED_AND_RANDOM,
        ..Spec::default()
    });
    check_report(
        None,
        vec![
            scenario_result(
                "s/textbook-none.toml",
                &textbook_none,
                run(0..20, |s| match s {
                    3 => outcome(s, &[I4], None),
                    5 => outcome(s, &[I3, I4], None),
                    _ => outcome(s, &[], None),
                }),
            ),
            scenario_result(
                "s/swarm.toml",
                &swarm,
                run(100..110, |s| match s {
                    100 | 104 | 107 => outcome(s, &[I4], None),
                    _ => outcome(s, &[], None),
                }),
            ),
            scenario_result(
                "s/quiet.toml",
                &quiet,
                run(0..20, |s| outcome(s, &[], None)),
            ),
            scenario_result(
                "s/mixed.toml",
                &mixed,
                run(0..20, |s| outcome(s, &[], None)),
            ),
        ],
    )
}

#[test]
fn markdown_matrix() {
    let report = report();
    let markdown = matrix_markdown(&report);
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(lines[0], "# Safety matrix");
    assert!(lines[2]
        .contains("`cargo run --release -p fencesim-cli -- check scenarios/ --matrix reports/`"));
    assert!(lines[2].contains("do not edit it by hand"));
    assert!(
        lines[4].starts_with("Legend: I1 tokens strictly increase, "),
        "{}",
        lines[4]
    );
    assert!(lines[4].contains("I4 no superseded accept"), "{}", lines[4]);
    let table: Vec<&str> = lines[6..].to_vec();
    let held = "held | held | held | held | held";
    assert_eq!(
        table,
        [
            "| fencing | faults | token source | scenario | I1 | I2 | I3 | I4 | I5 | expected | result |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
            "| max-token | gc-pause, partition (swarm) | wrapping-counter(8) | swarm-wrapping | held | held | held | **violated** 3/10, first after 1 seed | held | safe | NOT MET |",
            &format!("| max-token | none | durable-counter | quiet | {held} | safe | VACUOUS |"),
            "| none | gc-pause | durable-counter | textbook-none | held | held | **violated** 1/20, first after 6 seeds | **violated** 2/20, first after 4 seeds | held | violates I3, I4 | met |",
            &format!("| same-store-txn | clock-step, vm-suspend | volatile-counter | mixed | {held} | safe | met |"),
        ]
    );
    assert!(markdown.ends_with("|\n"));
}

#[test]
fn json_matrix_has_the_same_rows() {
    let report = report();
    let json = matrix_json(&report);
    assert!(json.ends_with("}\n"));
    let value: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["generated_by"], MATRIX_COMMAND);
    let rows = value["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|row| row["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["swarm-wrapping", "quiet", "textbook-none", "mixed"]);

    let swarm = &rows[0];
    assert_eq!(swarm["file"], "s/swarm.toml");
    assert_eq!(swarm["fencing"], "max-token");
    assert_eq!(
        swarm["faults"],
        serde_json::json!(["gc-pause", "partition"])
    );
    assert_eq!(swarm["swarm"], true);
    assert_eq!(swarm["token_source"], "wrapping-counter(8)");
    assert_eq!(
        swarm["invariants"]["I4"],
        serde_json::json!({
            "held": false,
            "violating_seeds": 3,
            "runs": 10,
            "first_violation_seed": 100,
            "seeds_to_first_violation": 1,
        })
    );
    assert_eq!(
        swarm["invariants"]["I1"],
        serde_json::json!({
            "held": true,
            "violating_seeds": 0,
            "runs": 10,
            "first_violation_seed": null,
            "seeds_to_first_violation": null,
        })
    );
    assert_eq!(swarm["expectation"], "safe");
    assert_eq!(swarm["result"], "NOT MET");
    assert_eq!(rows[1]["faults"], serde_json::json!([]));
    assert_eq!(rows[1]["result"], "VACUOUS");
    assert_eq!(rows[2]["invariants"]["I3"]["seeds_to_first_violation"], 6);
    assert_eq!(rows[2]["result"], "met");
}

#[test]
fn matrices_are_deterministic_and_independent_of_input_order() {
    let report = report();
    let mut reversed = report.clone();
    reversed.scenarios.reverse();
    assert_eq!(matrix_markdown(&report), matrix_markdown(&reversed));
    assert_eq!(matrix_json(&report), matrix_json(&reversed));
    assert_eq!(matrix_markdown(&report), matrix_markdown(&report.clone()));

    let empty = check_report(None, vec![]);
    assert!(matrix_markdown(&empty)
        .ends_with("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"));
    assert_eq!(
        matrix_json(&empty),
        format!(
            "{{\n  \"schema_version\": 1,\n  \"producer\": \"{}\",\n  \"generated_by\": \"{MATRIX_COMMAND}\",\n  \"rows\": []\n}}\n",
            fencesim_model::version::PRODUCER
        )
    );
}

#[test]
fn cells_escape_table_syntax_and_name_enums_in_kebab_case() {
    assert_eq!(
        table_line(["a|b".to_string(), "c\nd".to_string()].into_iter()),
        "| a\\|b | c d |\n"
    );
    let check = |value: Value, expect: &str| assert_eq!(kebab_name(&Ok(value)), expect);
    check(serde_json::json!("fence-on-acquire"), "fence-on-acquire");
    check(serde_json::json!({"kind": "random-id"}), "random-id");
    check(
        serde_json::json!({"kind": "wrapping-counter", "bits": 32}),
        "wrapping-counter(32)",
    );
}
