//! Test fixtures shared by this crate's tests: real scenarios through the real parser, and
//! hand-made seed outcomes.

use fencesim_check::{Checked, SeedOutcome, Violation};
use fencesim_model::Invariant;
use fencesim_scenario::Scenario;

/// What varies between the test scenarios; everything else is fixed.
pub(crate) struct Spec<'a> {
    pub(crate) name: &'a str,
    pub(crate) description: &'a str,
    pub(crate) seeds: &'a str,
    pub(crate) fencing: &'a str,
    /// Extra lines of `[lease]` after `ttl_ms`, e.g. `token_source = "durable-counter"`.
    pub(crate) lease: &'a str,
    /// TOML appended after `[workers]`: `[faults]` tables.
    pub(crate) faults: &'a str,
    /// The body of `[expect]`.
    pub(crate) expect: &'a str,
}

impl Default for Spec<'_> {
    fn default() -> Self {
        Spec {
            name: "gc-pause-textbook-max-token",
            description: "000: a holder pauses past its TTL",
            seeds: "0..20",
            fencing: "max-token",
            lease: "token_source = \"durable-counter\"",
            faults: "",
            expect: "safe = true\ncoverage = [\"stale-write-rejected\"]",
        }
    }
}

/// A scenario through the real parser, so tests do not restate every spec field.
pub(crate) fn scenario(spec: Spec<'_>) -> Scenario {
    let text = format!(
        r#"
name = {name:?}
description = {description:?}
duration_ms = 60_000
seeds = {seeds:?}
[lease]
ttl_ms = 10_000
{lease}
[storage]
fencing = {fencing:?}
[workers]
count = 2
resources = ["job-1"]
work_ms = {{ dist = "uniform", min = 200, max = 800 }}
{faults}
[expect]
{expect}
"#,
        name = spec.name,
        description = spec.description,
        seeds = spec.seeds,
        lease = spec.lease,
        fencing = spec.fencing,
        faults = spec.faults,
        expect = spec.expect,
    );
    fencesim_scenario::parse_str(&text, "testing.toml")
        .unwrap_or_else(|error| panic!("test scenario is valid: {error}\n{text}"))
}

/// A seed outcome violating `violated` (one violation each), optionally panicked, whose
/// metrics hit `stale-write-rejected` in every third seed and hold floats that do not
/// survive a careless JSON round trip.
pub(crate) fn outcome(seed: u64, violated: &[Invariant], panic: Option<&str>) -> SeedOutcome {
    let mut checked = Checked {
        violations: violated
            .iter()
            .map(|invariant| Violation {
                invariant: *invariant,
                scope: "job-1".into(),
                t_ns: 1_000 + seed,
                message: format!("{invariant} broken in seed {seed}"),
                evidence: vec![0],
            })
            .collect(),
        metrics: Default::default(),
    };
    let metrics = &mut checked.metrics;
    metrics.acquisitions = seed % 5 + 1;
    metrics.stale_write_rejections = [1, 0, 0][(seed % 3) as usize];
    metrics.lease_age_ms_mean = 0.1 + 0.2 * seed as f64 / 3.0;
    metrics.lease_age_ms_max = 1.0 / 3.0 + seed as f64 * 1e-9;
    metrics.takeover_latency_ms =
        vec![2.0_f64.sqrt() * seed as f64, 5e-324, 1.7976931348623157e308];
    SeedOutcome {
        seed,
        trace_hash: format!("{:016x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        events: 10 + seed as usize,
        checked,
        panic: panic.map(str::to_string),
    }
}
