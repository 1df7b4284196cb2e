use super::*;

/// Two workers, one resource; an explicit GC pause of worker-0 (1500 ms) and a clock step
/// of worker-1, plus `random` (TOML) appended.
fn scenario(random: &str) -> Scenario {
    let text = format!(
        r#"
name = "tiny"
description = "tiny alphabet"
duration_ms = 10_000
seeds = "3..5"

[lease]
ttl_ms = 2_000
token_source = "durable-counter"

[storage]
fencing = "max-token"

[workers]
count = 2
resources = ["job-1"]
work_ms = 100

[[faults.schedule]]
at_ms = 5_000
kind = "gc-pause"
node = "worker-0"
duration_ms = 1_500

[[faults.schedule]]
at_ms = 7_000
kind = "clock-step"
node = "worker-1"
delta_ms = 100

[[faults.schedule]]
at_ms = 8_000
kind = "gc-pause"
node = "worker-0"
duration_ms = 1_500

[expect]
safe = true
coverage = ["stale-write-rejected"]
{random}
"#
    );
    fencesim_scenario::parse_str(&text, "tiny.toml").unwrap()
}

fn options(resolution_ms: u64, horizon_ms: u64, max_faults: usize) -> ExhaustiveOptions {
    ExhaustiveOptions {
        resolution_ms,
        horizon_ms: Some(horizon_ms),
        max_faults,
        ..ExhaustiveOptions::default()
    }
}

fn pause(node: &str, duration_ms: f64) -> Fault {
    Fault::GcPause {
        node: node.into(),
        duration_ms,
    }
}

fn step(delta_ms: f64) -> Fault {
    Fault::ClockStep {
        node: "worker-1".into(),
        delta_ms,
    }
}

/// The explicit schedule's faults, their times forgotten and the repeated pause kept once.
#[test]
fn the_alphabet_of_an_explicit_schedule() {
    assert_eq!(
        alphabet(&scenario("")),
        vec![pause("worker-0", 1_500.0), step(100.0)]
    );
}

/// A const entry gives one size per target; a uniform one its median and p99; a clock
/// step both signs; a fixed-target kind one letter; duplicates of the schedule fold.
#[test]
fn the_alphabet_of_random_entries() {
    let random = r#"
[[faults.random]]
kind = "gc-pause"
rate_per_min = 1
duration_ms = 1_500

[[faults.random]]
kind = "clock-step"
rate_per_min = 1
nodes = ["worker-1"]
duration_ms = { dist = "uniform", min = 0, max = 1_000 }

[[faults.random]]
kind = "storage-restart"
rate_per_min = 1
duration_ms = 500
"#;
    assert_eq!(
        alphabet(&scenario(random)),
        vec![
            pause("worker-0", 1_500.0),
            step(100.0),
            pause("worker-1", 1_500.0),
            step(500.0),
            step(-500.0),
            step(990.0),
            step(-990.0),
            Fault::StorageRestart { duration_ms: 500.0 },
        ]
    );
}

/// By hand: 2 letters x 3 start times (0, 1000, 2000) = 6 placements; 15 pairs, of which
/// the pauses at 0 and 1000 and at 1000 and 2000 overlap (1500 ms each): 1 + 6 + 13 = 20.
#[test]
fn counts_by_hand() {
    let tiny = scenario("");
    let count = |max_faults| {
        let e = enumeration(&tiny, &options(1_000, 3_000, max_faults)).unwrap();
        (e.total(), e.skipped(), e.schedules().count())
    };
    assert_eq!(count(0), (1, 0, 1));
    assert_eq!(count(1), (7, 0, 7));
    assert_eq!(count(2), (20, 2, 20));
    // 2999 ms still has 3 start times; 3001 ms has 4: 8 placements, 28 pairs, 3 overlaps.
    let e = enumeration(&tiny, &options(1_000, 3_001, 2)).unwrap();
    assert_eq!((e.slots, e.total(), e.skipped()), (4, 1 + 8 + 25, 3));
    let e = enumeration(&tiny, &options(1_000, 2_999, 2)).unwrap();
    assert_eq!(e.slots, 3);
}

/// The skips counted without enumerating agree with the enumeration, for pauses longer
/// than several slots, touching ones and equal start times.
#[test]
fn the_counted_skips_match_the_enumerated_ones() {
    let random = r#"
[[faults.random]]
kind = "vm-suspend"
rate_per_min = 1
nodes = ["worker-0"]
duration_ms = 2_000

[[faults.random]]
kind = "coordinator-restart"
rate_per_min = 1
duration_ms = 300
"#;
    let tiny = scenario(random);
    for resolution_ms in [250, 500, 1_000] {
        let e = enumeration(&tiny, &options(resolution_ms, 4_000, 2)).unwrap();
        let p = e.placements();
        let enumerated = e.schedules().count() as u128;
        assert_eq!(enumerated, e.total(), "resolution {resolution_ms}");
        assert_eq!(1 + p + p * (p - 1) / 2 - enumerated, e.skipped());
    }
}

#[test]
fn the_order_is_by_size_then_time_then_letter() {
    let e = enumeration(&scenario(""), &options(1_000, 3_000, 2)).unwrap();
    let all: Vec<Vec<TimedFault>> = e.schedules().collect();
    let at = |at_ms: f64, fault: Fault| TimedFault { at_ms, fault };
    let (gc, clock) = (pause("worker-0", 1_500.0), step(100.0));
    assert!(all[0].is_empty());
    assert_eq!(all[1], vec![at(0.0, gc.clone())]);
    assert_eq!(all[2], vec![at(0.0, clock.clone())]);
    assert_eq!(all[3], vec![at(1_000.0, gc.clone())]);
    assert_eq!(all[6], vec![at(2_000.0, clock.clone())]);
    assert_eq!(all[7], vec![at(0.0, gc.clone()), at(0.0, clock.clone())]);
    // The pause at 1000 ms overlaps the one at 0: skipped.
    assert_eq!(
        all[8],
        vec![at(0.0, gc.clone()), at(1_000.0, clock.clone())]
    );
    assert_eq!(all[9], vec![at(0.0, gc.clone()), at(2_000.0, gc.clone())]);
    assert_eq!(
        all[11],
        vec![at(0.0, clock.clone()), at(1_000.0, gc.clone())]
    );
    assert_eq!(
        all[12],
        vec![at(0.0, clock.clone()), at(1_000.0, clock.clone())]
    );
    assert_eq!(
        all[19],
        vec![at(2_000.0, gc.clone()), at(2_000.0, clock.clone())]
    );
    for schedule in &all {
        assert!(schedule.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert!(!(schedule.len() == 2 && stops_overlap(&schedule[0], &schedule[1])));
    }
}

#[test]
fn refusals() {
    let tiny = scenario("");
    let refused = |options: ExhaustiveOptions| enumeration(&tiny, &options).unwrap_err();
    let too_many = ExhaustiveOptions {
        max_schedules: 19,
        ..options(1_000, 3_000, 2)
    };
    let error = refused(too_many.clone());
    assert_eq!(
        error,
        ExhaustiveError::TooManySchedules {
            total: 20,
            max_schedules: 19,
            letters: 2,
            slots: 3,
            resolution_ms: 1_000,
            horizon_ms: 3_000,
            max_faults: 2,
        }
    );
    let message = error.to_string();
    assert!(message.starts_with("20 schedules"), "{message}");
    assert!(message.contains("--horizon-ms"), "{message}");
    assert!(enumeration(
        &tiny,
        &ExhaustiveOptions {
            max_schedules: 20,
            ..too_many
        }
    )
    .is_ok());
    assert_eq!(
        refused(options(0, 3_000, 2)),
        ExhaustiveError::ZeroResolution
    );
    assert_eq!(
        refused(options(100, 3_000, 3)),
        ExhaustiveError::TooManyFaults(3)
    );
    assert_eq!(
        refused(options(100, 10_001, 2)),
        ExhaustiveError::Horizon {
            horizon_ms: 10_001,
            duration_ms: 10_000
        }
    );
    assert!(matches!(
        refused(options(100, 0, 2)),
        ExhaustiveError::Horizon { .. }
    ));
    assert!(matches!(
        refused(options(5_000, 3_000, 2)),
        ExhaustiveError::ResolutionAboveHorizon { .. }
    ));
    assert_eq!(
        refused(ExhaustiveOptions {
            invariants: Some(Vec::new()),
            ..options(100, 3_000, 2)
        }),
        ExhaustiveError::NoInvariants
    );
    // Huge bounds are counted, not enumerated, before they are refused.
    let huge = refused(ExhaustiveOptions {
        max_schedules: 1,
        ..options(1, 10_000, 2)
    });
    assert!(
        matches!(huge, ExhaustiveError::TooManySchedules { total, .. } if total > 100_000_000),
        "{huge:?}"
    );
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(80_601), "80,601");
    assert_eq!(thousands(1_234_567), "1,234,567");
}
