//! `--set FIELD=VALUE` overrides, and the property that makes `fencesim tune`'s
//! common random numbers hold: the fault plan does not depend on the lease and worker timing
//! fields a sweep varies.

use fencesim_scenario::*;
use fencesim_testkit::Spec;

/// Three random fault kinds, so overrides can reach into an array of tables.
const FAULTS: &str = r#"
[[faults.random]]
kind = "gc-pause"
rate_per_min = 6
duration_ms = { dist = "lognormal", median = 200, p99 = 5_000 }

[[faults.random]]
kind = "worker-crash"
rate_per_min = 2
duration_ms = { dist = "uniform", min = 1_000, max = 5_000 }

[[faults.random]]
kind = "partition"
rate_per_min = 1
duration_ms = 2_000
"#;

/// The shared base scenario with three workers, seeds 0..10 and `FAULTS`.
fn base() -> String {
    Spec {
        name: "overrides",
        description: "override tests",
        seeds: "0..10",
        count: 3,
        work_ms: "{ dist = \"uniform\", min = 100, max = 300 }",
        faults: FAULTS,
        expect: "safe = true\ncoverage = [\"takeover\"]",
        ..Spec::default()
    }
    .toml()
}

fn with(sets: &[&str]) -> Result<Scenario, ScenarioError> {
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    parse_str_with(&base(), "base.toml", &overrides)
}

#[test]
fn overrides_change_fields_defaults_follow_and_the_hash_changes() {
    let base = with(&[]).unwrap();
    let s = with(&["lease.ttl_ms=9000"]).unwrap();
    assert_eq!(s.lease.ttl_ms, 9_000);
    // Defaults derived from the TTL follow it, as if the file said 9000.
    assert_eq!(s.workers.renew_every_ms, 3_000);
    assert_ne!(s.hash(), base.hash());
    assert_eq!(s.hash(), with(&["lease.ttl_ms=9_000"]).unwrap().hash());

    let s = with(&[
        "network.loss=0.1",                  // a table absent from the file
        "workers.work_ms.max=400",           // inside an inline table
        "lease.on_restart=drop",             // a bare word is a string
        "faults.random[2].duration_ms=3000", // an array of tables
        "workers.stop_on_renew_failure=false",
        "workers.resources=[\"a\", \"b\"]",
    ])
    .unwrap();
    assert_eq!(s.network.loss, 0.1);
    assert_eq!(
        s.workers.work_ms,
        Dist::Uniform {
            min: 100.0,
            max: 400.0
        }
    );
    assert_eq!(s.lease.on_restart, fencesim_model::lease::OnRestart::Drop);
    assert!(!s.workers.stop_on_renew_failure);
    assert_eq!(s.workers.resources, ["a", "b"]);
}

#[test]
fn override_errors_name_the_field_and_say_they_came_from_set() {
    let cases: &[(&str, &str)] = &[
        ("lease.ttl=5", "lease.ttl"),
        ("lease.ttl_ms=soon", "lease.ttl_ms"),
        ("lease.ttl_ms=0", "lease.ttl_ms"),
        ("workers.renew_every_ms=20000", "workers.renew_every_ms"),
        ("network.loss=1.5", "network.loss"),
        (
            "faults.random[7].rate_per_min=1",
            "faults.random[7].rate_per_min",
        ),
        ("lease.ttl_ms.x=1", "lease.ttl_ms.x"),
        ("nonsense=1", "nonsense"),
    ];
    for (set, field) in cases {
        let error = with(&[set]).expect_err(set);
        assert_eq!(error.field, *field, "{set}: {error}");
        assert!(error.expected.contains("--set"), "{set}: {error}");
        assert_eq!(
            error.line, None,
            "{set}: an override has no line in the file"
        );
    }
    assert!(Override::parse("lease.ttl_ms").is_err());
    assert!(Override::parse("=5").is_err());
    assert!(Override::parse("lease..ttl_ms=5").is_err());
}

/// Common random numbers: every setting of a sweep over the lease and worker timing fields
/// must see the same fault plan for a seed.
#[test]
fn the_fault_plan_does_not_depend_on_lease_or_worker_timing_fields() {
    let base = with(&[]).unwrap();
    let variants = [
        with(&["lease.ttl_ms=2000"]).unwrap(),
        with(&["lease.ttl_ms=60000", "workers.renew_every_ms=1000"]).unwrap(),
        with(&[
            "workers.renew_deadline_ms=4000",
            "workers.acquire_retry_ms=2000",
            "workers.request_timeout_ms=300",
            "workers.stop_on_renew_failure=false",
            "lease.election_timeout_ms=5000",
            "lease.min_ttl_ms=12000",
            "lease.lock_delay_ms=1000",
        ])
        .unwrap(),
    ];
    for seed in 0..50 {
        let expected = plan(&base, seed);
        assert!(!expected.faults.is_empty());
        for variant in &variants {
            assert_eq!(plan(variant, seed), expected, "seed {seed}");
        }
    }
    // The injected outage (`fencesim tune --survive-outage-ms`) too: its time is drawn from
    // the seed and the fault window only.
    for form in OutageForm::ALL {
        let outage = |s: &Scenario| with_outage(s, form, 20_000.0).unwrap();
        for seed in 0..50 {
            let expected = plan(&outage(&base), seed);
            assert_eq!(expected.faults.len(), plan(&base, seed).faults.len() + 1);
            for variant in &variants {
                assert_eq!(plan(&outage(variant), seed), expected, "{form} seed {seed}");
            }
        }
    }
}
