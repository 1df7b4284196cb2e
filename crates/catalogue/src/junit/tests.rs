use fencesim_check::SeedOutcome;
use fencesim_model::Invariant::{I3, I4};

use super::*;
use fencesim_testkit::{outcome, scenario, Spec};
use fencesim_verdict::check_report::{check_report, scenario_result};

/// Outcomes of `seeds`; `make` picks each seed's outcome.
fn run(seeds: std::ops::Range<u64>, make: impl Fn(u64) -> SeedOutcome) -> Vec<SeedOutcome> {
    seeds.map(make).collect()
}

/// Four scenarios: met; `safe` violated in seeds 5 and 7; `violates I4` met in seed 2 but
/// with an unexpected I3 in seed 9; a vacuous `safe` over seeds 10..15.
fn report() -> CheckReport {
    let met = scenario(Spec {
        name: "met",
        ..Spec::default()
    });
    let broken = scenario(Spec {
        name: "broken",
        ..Spec::default()
    });
    let unexpected = scenario(Spec {
        name: "unexpected",
        expect: "violates = [\"I4\"]",
        ..Spec::default()
    });
    let vacuous = scenario(Spec {
        name: "vacuous",
        seeds: "10..15",
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    });
    check_report(
        None,
        vec![
            scenario_result("s/met.toml", &met, run(0..20, |s| outcome(s, &[], None))),
            scenario_result(
                "s/broken.toml",
                &broken,
                run(0..20, |s| match s {
                    5 | 7 => outcome(s, &[I4], None),
                    _ => outcome(s, &[], None),
                }),
            ),
            scenario_result(
                "s/unexpected.toml",
                &unexpected,
                run(0..20, |s| match s {
                    2 => outcome(s, &[I4], None),
                    9 => outcome(s, &[I3, I4], None),
                    _ => outcome(s, &[], None),
                }),
            ),
            scenario_result(
                "s/vacuous.toml",
                &vacuous,
                run(10..15, |s| outcome(s, &[], None)),
            ),
        ],
    )
}

/// Test case name → (failure type, failure message, failure text), for failed ones.
fn failures(document: &roxmltree::Document<'_>) -> BTreeMap<String, (String, String, String)> {
    document
        .descendants()
        .filter(|node| node.has_tag_name("testcase"))
        .filter_map(|case| {
            let failure = case.children().find(|n| n.has_tag_name("failure"))?;
            Some((
                case.attribute("name").unwrap().to_string(),
                (
                    failure.attribute("type").unwrap().to_string(),
                    failure.attribute("message").unwrap().to_string(),
                    failure.text().unwrap_or("").to_string(),
                ),
            ))
        })
        .collect()
}

#[test]
fn one_testcase_per_scenario_and_failures_replay() {
    let report = report();
    let times = BTreeMap::from([
        ("s/met.toml".to_string(), 1.25),
        ("broken".to_string(), 0.5),
        ("s/vacuous.toml".to_string(), f64::NAN),
    ]);
    let xml = junit_xml(&report, &times);
    let document = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let suite = document.root_element();
    assert_eq!(suite.tag_name().name(), "testsuite");
    assert_eq!(suite.attribute("name"), Some("fencesim"));
    assert_eq!(suite.attribute("tests"), Some("4"));
    assert_eq!(suite.attribute("failures"), Some("3"));
    assert_eq!(suite.attribute("time"), Some("1.750"));

    let cases: Vec<(&str, &str, &str)> = suite
        .children()
        .filter(|node| node.has_tag_name("testcase"))
        .map(|case| {
            assert_eq!(case.attribute("classname"), Some("fencesim.scenarios"));
            (
                case.attribute("name").unwrap(),
                case.attribute("file").unwrap(),
                case.attribute("time").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cases,
        [
            ("broken", "s/broken.toml", "0.500"),
            ("met", "s/met.toml", "1.250"),
            ("unexpected", "s/unexpected.toml", "0.000"),
            ("vacuous", "s/vacuous.toml", "0.000"),
        ]
    );

    let failures = failures(&document);
    assert_eq!(failures.len(), 3);
    let (kind, message, text) = &failures["broken"];
    assert_eq!(kind, "NOT MET");
    assert_eq!(message, &report.scenarios[0].summary.expectation_detail);
    assert!(text.starts_with(message.as_str()), "{text}");
    assert!(
        text.contains("failing seeds (2 of 20 run): 5, 7\n"),
        "{text}"
    );
    assert!(
        text.contains("replay: fencesim replay s/broken.toml --seed 5\n"),
        "{text}"
    );

    // The seed to replay is the one contradicting the expectation, not the expected I4.
    let (_, _, text) = &failures["unexpected"];
    assert!(text.contains("failing seeds (1 of 20 run): 9\n"), "{text}");
    assert!(
        text.contains("fencesim replay s/unexpected.toml --seed 9"),
        "{text}"
    );

    // Nothing failed: replay the first seed of the range.
    let (kind, message, text) = &failures["vacuous"];
    assert_eq!(kind, "VACUOUS");
    assert!(message.starts_with("vacuous:"), "{message}");
    assert!(
        text.contains("failing seeds (0 of 5 run): none\n"),
        "{text}"
    );
    assert!(
        text.contains("fencesim replay s/vacuous.toml --seed 10"),
        "{text}"
    );

    // The description and the console summary go to system-out.
    let out = document
        .descendants()
        .find(|node| node.has_tag_name("system-out"))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        out.starts_with("000: a holder pauses past its TTL\n\nbroken: 20 runs"),
        "{out}"
    );

    assert_eq!(xml, junit_xml(&report, &times), "deterministic");
}

#[test]
fn each_recorded_seed_is_a_testcase_failing_while_it_still_contradicts() {
    use fencesim_verdict::recorded::{Entry, RecordedRun};
    let met = scenario(Spec {
        name: "met",
        ..Spec::default()
    });
    let mut result = scenario_result("s/met.toml", &met, run(0..20, |s| outcome(s, &[], None)));
    let entry = |seed: u64, set: &[&str]| Entry {
        seed,
        set: set.iter().map(|s| s.to_string()).collect(),
        scenario_hash: "0123456789abcdef".into(),
        trace_hash: "0123456789abcdef".into(),
        violated: vec!["I3".into()],
    };
    result.recorded_total = 2;
    result.recorded = vec![
        RecordedRun::judge(0, &entry(41, &[]), &met, &outcome(41, &[], None)),
        RecordedRun::judge(
            1,
            &entry(42, &["storage.fencing=none"]),
            &met,
            &outcome(42, &[I3], None),
        ),
    ];
    let report = check_report(None, vec![result]);
    assert!(!report.all_met, "a recorded seed still fails");
    let xml = junit_xml(&report, &BTreeMap::new());
    let document = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let suite = document.root_element();
    assert_eq!(suite.attribute("tests"), Some("3"));
    assert_eq!(suite.attribute("failures"), Some("1"));
    let failures = failures(&document);
    let names: Vec<&String> = failures.keys().collect();
    assert_eq!(
        names,
        ["met recorded seed 42 (under --set storage.fencing=none)"],
        "the scenario's sweep passed; the seed that passes now fails nothing"
    );
    let (kind, message, text) = failures.values().next().unwrap();
    assert_eq!(kind, "REGRESSION");
    assert_eq!(
        message,
        "recorded seed 42 still contradicts the expectation"
    );
    assert!(
        text.contains("replay: fencesim replay s/met.toml --seed 42 --set storage.fencing=none\n"),
        "{text}"
    );
    assert!(xml.contains("recorded seed 41 (#0 of the regressions file): NO LONGER FAILS"));
}

#[test]
fn failing_seeds_are_listed_up_to_twenty() {
    let broken = scenario(Spec {
        name: "broken",
        seeds: "100..150",
        ..Spec::default()
    });
    let report = check_report(
        Some("2/3".into()),
        vec![scenario_result(
            "b.toml",
            &broken,
            run(100..150, |s| outcome(s, &[I4], None)),
        )],
    );
    let xml = junit_xml(&report, &BTreeMap::new());
    let document = roxmltree::Document::parse(&xml).unwrap();
    let (_, _, text) = &failures(&document)["broken"];
    let listed: Vec<String> = (100..120).map(|seed: u64| seed.to_string()).collect();
    let expected = format!(
        "failing seeds (50 of 50 run): {}, … (30 more)\n",
        listed.join(", ")
    );
    assert!(text.contains(&expected), "{text}");
    assert!(text.contains("--seed 100\n"), "{text}");
    let shard = document
        .descendants()
        .find(|node| node.has_tag_name("property"))
        .unwrap();
    assert_eq!(shard.attribute("name"), Some("shard"));
    assert_eq!(shard.attribute("value"), Some("2/3"));
}

#[test]
fn special_characters_are_escaped() {
    let nasty = "a <b> & \"c\" 'd' ]]> \u{1}\tx\ny";
    // Set after parsing: TOML has no escape for U+0001.
    let mut weird = scenario(Spec {
        name: "weird",
        ..Spec::default()
    });
    weird.description = format!("desc {nasty}");
    let file = "dir with space/it's <&>.toml";
    let report = check_report(
        None,
        vec![scenario_result(
            file,
            &weird,
            vec![outcome(3, &[], Some(nasty))],
        )],
    );
    let xml = junit_xml(&report, &BTreeMap::new());
    let document = roxmltree::Document::parse(&xml).expect("well-formed XML");

    let case = document
        .descendants()
        .find(|node| node.has_tag_name("testcase"))
        .unwrap();
    assert_eq!(case.attribute("file"), Some(file));
    let out = case
        .children()
        .find(|node| node.has_tag_name("system-out"))
        .unwrap()
        .text()
        .unwrap();
    // The control character cannot be carried by XML 1.0 at all.
    let readable = nasty.replace('\u{1}', "\u{FFFD}");
    assert!(out.starts_with(&format!("desc {readable}\n")), "{out:?}");

    let (_, message, text) = &failures(&document)["weird"];
    // The panic message is shown up to its first line.
    assert!(
        message.contains("seed 3 panicked: a <b> & \"c\" 'd' ]]> \u{FFFD}\tx"),
        "{message:?}"
    );
    assert_eq!(
        message,
        &report.scenarios[0]
            .summary
            .expectation_detail
            .replace('\u{1}', "\u{FFFD}")
    );
    assert!(
        text.contains(r#"replay: fencesim replay 'dir with space/it'\''s <&>.toml' --seed 3"#),
        "{text}"
    );
}
