//! "A limit on everything": each input a hostile tester used to make a run unbounded,
//! wrap its arithmetic, or panic the sampler is rejected at validation, naming the field.
//!
//! These tests edit `MINIMAL_TOML` (the smallest file users are shown) rather than start from
//! `fencesim_testkit::Spec`: the file's text, and the lines errors point at, are what they test.

use fencesim_model::rng::Rng;
use fencesim_scenario::{limits, parse_str, Dist, SeedRange};
use rand::SeedableRng;

const MINIMAL: &str = fencesim_scenario::MINIMAL_TOML;

fn edit(edits: &[(&str, &str)]) -> String {
    let mut text = MINIMAL.to_string();
    for (from, to) in edits {
        assert!(text.contains(from), "case edits {from:?}, absent");
        text = text.replacen(from, to, 1);
    }
    text
}

/// Asserts the edited file is rejected on `field` with `expected` in the message.
fn check_err(edits: &[(&str, &str)], field: &str, expected: &str) {
    let text = edit(edits);
    let error = match parse_str(&text, "case.toml") {
        Ok(_) => panic!("expected an error on {field}, but the file was accepted:\n{text}"),
        Err(error) => error,
    };
    assert_eq!(error.field, field, "field of: {error}");
    assert!(
        error.expected.contains(expected),
        "expected {expected:?} in: {error}"
    );
}

/// Edits to the minimal file, the field rejected, a phrase of the message.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);

#[expect(clippy::too_many_lines, reason = "a table: one case per limit")]
#[test]
fn durations_beyond_the_limits_are_rejected() {
    let work = "work_ms = { dist = \"uniform\", min = 200, max = 800 }";
    let cases: &[Case] = &[
        (
            &[("duration_ms = 60_000", "duration_ms = 864_000_000")],
            "duration_ms",
            "at most",
        ),
        (
            &[("duration_ms = 60_000", "duration_ms = 100_000_000")],
            "duration_ms",
            "at most 86400000 ms (1 day)",
        ),
        (
            &[("duration_ms = 15_000", "duration_ms = 1e300")],
            "faults.schedule[0].duration_ms",
            "at most 604800000 ms",
        ),
        (
            &[("duration_ms = 15_000", "duration_ms = 864_000_000.0")],
            "faults.schedule[0].duration_ms",
            "at most",
        ),
        (
            &[("ttl_ms = 10_000", "ttl_ms = 9223372036854775807")],
            "lease.ttl_ms",
            "at most 604800000 ms (7 days)",
        ),
        (
            &[(
                "ttl_ms = 10_000",
                "ttl_ms = 10_000\nlock_delay_ms = 9223372036854775807",
            )],
            "lease.lock_delay_ms",
            "at most",
        ),
        (
            &[(
                "count = 2",
                "count = 2\nrenew_deadline_ms = 20_000_000_000_000",
            )],
            "workers.renew_deadline_ms",
            "at most",
        ),
        (
            &[(work, "work_ms = 0")],
            "workers.work_ms",
            "mean of at least 0.001 ms",
        ),
        (
            &[(work, "work_ms = { dist = \"uniform\", min = 0, max = 0 }")],
            "workers.work_ms",
            "mean of at least",
        ),
        (
            &[(
                work,
                "work_ms = { dist = \"lognormal\", median = 1e-300, p99 = 1e300 }",
            )],
            "workers.work_ms.median",
            "at least 0.000001 ms",
        ),
        (
            &[(
                work,
                "work_ms = { dist = \"lognormal\", median = 1, p99 = 1e300 }",
            )],
            "workers.work_ms.p99",
            "at most",
        ),
        (
            &[(
                work,
                "work_ms = { dist = \"lognormal\", median = 0.001, p99 = 100_000 }",
            )],
            "workers.work_ms.p99",
            "p99 / median",
        ),
        (
            &[(work, "work_ms = { dist = \"exponential\", mean = 1e300 }")],
            "workers.work_ms.mean",
            "at most",
        ),
        (
            &[(
                work,
                "work_ms = { dist = \"uniform\", min = 1, max = 1e300 }",
            )],
            "workers.work_ms.max",
            "at most",
        ),
        // Work at its 7-day limit in a minute's run: the run waited ~4 weeks of simulated
        // time for it (~230 s a seed). The unit of work must fit the run.
        (
            &[(work, "work_ms = 604_800_000")],
            "workers.work_ms",
            "at most duration_ms (60000 ms)",
        ),
        (
            &[(work, "work_ms = { dist = \"exponential\", mean = 13_044 }")],
            "workers.work_ms",
            "fits the run",
        ),
        (
            &[("count = 2", "count = 2\nwrites_per_lease = 1_000_000")],
            "workers.writes_per_lease",
            "1 to 10000",
        ),
        (
            &[("seeds = \"0..10\"", "seeds = \"0..18446744073709551615\"")],
            "seeds",
            "at most 10000000 seeds",
        ),
    ];
    for (edits, field, expected) in cases {
        check_err(edits, field, expected);
    }
    let latency =
        "\n[network]\nlatency_ms = { dist = \"lognormal\", median = 1e-300, p99 = 1e300 }\n";
    let text = format!("{MINIMAL}{latency}");
    let error = parse_str(&text, "case.toml").expect_err("latency accepted");
    assert_eq!(error.field, "network.latency_ms.median");
}

#[test]
fn limits_themselves_are_accepted() {
    let text = edit(&[
        ("duration_ms = 60_000", "duration_ms = 86_400_000"),
        ("ttl_ms = 10_000", "ttl_ms = 604_800_000"),
    ]);
    parse_str(&text, "case.toml").unwrap_or_else(|error| panic!("{error}"));
    assert!(SeedRange::parse("0..10000000").is_ok());
    assert!(SeedRange::parse("0..10000001").is_err());
}

#[test]
fn samples_stay_finite_and_within_the_duration_limit() {
    let max = limits::MAX_DURATION_MS as f64;
    let dists = [
        Dist::Lognormal {
            median: 1e-6,
            p99: 1.0,
        },
        Dist::Lognormal {
            median: 1e-300,
            p99: 1e300,
        },
        Dist::Exponential { mean: max },
        Dist::Uniform { min: 0.0, max },
    ];
    let mut rng = Rng::seed_from_u64(7);
    for dist in dists {
        for _ in 0..1_000 {
            let value = dist.sample(&mut rng);
            assert!(
                value.is_finite() && (0.0..=max).contains(&value),
                "{dist:?}: {value}"
            );
        }
    }
}

#[test]
fn a_scenario_at_every_limit_has_an_event_budget_bounded_by_bytes() {
    // The red team's scenario: a day long, work and network as fast as allowed. Its budget
    // was 1 000 000 + 10 × 86 400 000 events (~9.5 GB per hour of run); a seed's memory must
    // be bounded whatever the duration (the measured cost: limits::MAX_EVENTS_PER_SEED).
    let text = edit(&[
        ("duration_ms = 60_000", "duration_ms = 86_400_000"),
        (
            "work_ms = { dist = \"uniform\", min = 200, max = 800 }",
            "work_ms = { dist = \"const\", value = 0.01 }\n\n[network]\nlatency_ms = { dist = \"const\", value = 0.001 }",
        ),
    ]);
    let scenario = parse_str(&text, "limits.toml").unwrap();
    assert_eq!(scenario.duration_ms, limits::MAX_RUN_DURATION_MS);
    assert_eq!(scenario.event_budget(), limits::MAX_EVENTS_PER_SEED);
    // About 450 bytes of peak memory per event (measured): under 1 GB per seed.
    const { assert!(limits::MAX_EVENTS_PER_SEED * 450 < 1_000_000_000) };
    // Short runs keep their smaller budget.
    let short = parse_str(MINIMAL, "m.toml").unwrap();
    assert_eq!(short.event_budget(), 1_000_000 + 10 * 60_000);
}

/// The documented event budget is the code's: docs/scenario-format.md's and README.md's
/// "events per seed" state `limits::MAX_EVENTS_PER_SEED` and the formula `event_budget` uses.
#[test]
fn the_documented_event_budget_is_the_codes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cap = fencesim_scenario::limits::MAX_EVENTS_PER_SEED;
    let spaced = {
        let digits = cap.to_string();
        let mut out = String::new();
        for (k, c) in digits.chars().enumerate() {
            if k > 0 && (digits.len() - k).is_multiple_of(3) {
                out.push(' ');
            }
            out.push(c);
        }
        out
    };
    for doc in ["docs/scenario-format.md", "README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let line = text
            .lines()
            .position(|l| l.contains("1 000 000 + 10 × "))
            .unwrap_or_else(|| panic!("{doc} states the event budget's formula"));
        let near: String = text
            .lines()
            .skip(line)
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            near.contains(&format!("at most {spaced}")),
            "{doc} states a cap other than {spaced}: {near}"
        );
    }
    let scenario = fencesim_scenario::parse_str(
        &std::fs::read_to_string(root.join("scenarios/gc-pause-textbook-none.toml")).unwrap(),
        "s.toml",
    )
    .unwrap();
    assert_eq!(
        scenario.event_budget(),
        (1_000_000 + 10 * scenario.duration_ms as usize).min(cap)
    );
}
