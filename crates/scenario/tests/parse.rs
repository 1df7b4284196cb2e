//! The TOML boundary: what resolves, what each mistake reports, and where.
//!
//! These tests edit `MINIMAL_TOML` (the smallest file users are shown) rather than start from
//! `fencesim_testkit::Spec`: the file's text, and the lines errors point at, are what they test.

use std::collections::BTreeMap;

use fencesim_model::{
    lease::{AcquireRule, ExpiredBy, HolderIdentity, OnRestart, TokenScope, TokenSource},
    Coverage, Invariant,
};
use fencesim_scenario::*;

/// The smallest valid file; error cases edit it.
const MINIMAL: &str = fencesim_scenario::MINIMAL_TOML;

/// Marks the line an error must be reported at.
const MARK: &str = "# <-";

/// `MINIMAL` with each `(from, to)` replaced once; a `from` that is absent fails the test, so
/// a case cannot silently stop testing anything.
fn edit(edits: &[(&str, &str)]) -> String {
    let mut text = MINIMAL.to_string();
    for (from, to) in edits {
        assert!(
            text.contains(from),
            "case edits {from:?}, which is not in the file"
        );
        text = text.replacen(from, to, 1);
    }
    text
}

/// Asserts `text` is rejected on `field`, at the line carrying `MARK` (or with no line when
/// nothing is marked), with `expected` in the message.
fn check_err(text: &str, field: &str, expected: &str) {
    let line = text
        .lines()
        .position(|line| line.contains(MARK))
        .map(|index| index + 1);
    let error = match parse_str(text, "case.toml") {
        Ok(_) => panic!("expected an error on {field}, but the file was accepted:\n{text}"),
        Err(error) => error,
    };
    let shown = error.to_string();
    assert_eq!(error.field, field, "field of: {shown}");
    assert_eq!(error.line, line, "line of: {shown}");
    assert_eq!(error.file, "case.toml");
    assert!(
        error.expected.contains(expected),
        "expected {expected:?} in: {shown}"
    );
}

fn parse_ok(text: &str) -> Scenario {
    parse_str(text, "case.toml").unwrap_or_else(|error| panic!("{error}\n{text}"))
}

#[test]
fn minimal_file_resolves_with_every_default_explicit() {
    let expected = Scenario {
        name: "minimal".into(),
        description: "smallest valid scenario".into(),
        duration_ms: 60_000,
        seeds: SeedRange { start: 0, end: 10 },
        lease: LeaseSpec {
            preset: None,
            ttl_ms: 10_000,
            min_ttl_ms: 0,
            max_ttl_ms: 0,
            expiry_factor: 1,
            expiry_check_ms: 0,
            lock_delay_ms: 0,
            election_timeout_ms: 1_000,
            restart_election_ms: 0,
            token_source: TokenSource::DurableCounter,
            token_scope: TokenScope::PerResource,
            on_restart: OnRestart::KeepAndExtend,
            expired_by: ExpiredBy::Service,
            holder_identity: HolderIdentity::Session,
            acquire: AcquireRule::CreateIfAbsent,
        },
        storage: StorageSpec {
            fencing: FencingMode::MaxToken,
            max_token: Durability::Durable,
            compare_scope: CompareScope::PerResource,
            proxy_bypass: vec![],
        },
        workers: WorkerSpec {
            count: 2,
            resources: vec!["job-1".into()],
            lease_scope: LeaseScopeSpec::PerResource,
            work_ms: Dist::Uniform {
                min: 200.0,
                max: 800.0,
            },
            writes_per_lease: 1,
            renew_every_ms: 3_333,
            renew_deadline_ms: 10_000,
            stop_on_renew_failure: true,
            check_lease_before_write: false,
            recheck_deadline_before_write: false,
            deadline_from: DeadlineFrom::RequestSent,
            request_timeout_ms: 1_000,
            acquire_retry_ms: 100,
            acquire_retry_jitter: 0.0,
            side_effects: SideEffects::None,
        },
        network: NetworkSpec {
            latency: LatencySpec {
                base: Dist::Lognormal {
                    median: 0.5,
                    p99: 5.0,
                },
                spike_probability: 0.0,
                spikes_ms: vec![200.0, 400.0, 800.0],
            },
            loss: 0.0,
            duplicate: 0.0,
        },
        clocks: ClocksSpec {
            random_drift_ppm: 0.0,
            random_offset_ms: 0.0,
            nodes: BTreeMap::new(),
        },
        faults: FaultSpec {
            outage: None,
            schedule: vec![TimedFault {
                at_ms: 5_000.0,
                fault: Fault::GcPause {
                    node: "worker-0".into(),
                    duration_ms: 15_000.0,
                },
            }],
            random: vec![],
            swarm: false,
        },
        expect: Expect {
            outcome: Outcome::Safe,
            coverage: vec![Coverage::StaleWriteRejected],
            never: vec![],
        },
    };
    assert_eq!(parse_ok(MINIMAL), expected);
}

#[test]
fn computed_defaults_follow_the_effective_ttl() {
    // min_ttl raises the effective TTL to 30 s: renew = 10 s, timeout capped at 1 s.
    let scenario = parse_ok(&edit(&[(
        "ttl_ms = 10_000",
        "ttl_ms = 1_000\nmin_ttl_ms = 30_000",
    )]));
    assert_eq!(scenario.workers.renew_every_ms, 10_000);
    assert_eq!(scenario.workers.request_timeout_ms, 1_000);
    // A short TTL: timeout = TTL / 2.
    let scenario = parse_ok(&edit(&[("ttl_ms = 10_000", "ttl_ms = 900")]));
    assert_eq!(scenario.workers.renew_every_ms, 300);
    assert_eq!(scenario.workers.request_timeout_ms, 450);
}

#[test]
fn documented_example_is_valid_and_covers_the_format() {
    let doc = include_str!("../../../docs/scenario-format.md");
    let start = doc.find("```toml\n").expect("docs have a toml example") + "```toml\n".len();
    let end = start + doc[start..].find("```").expect("example is closed");
    let scenario = parse_ok(&doc[start..end]);
    assert_eq!(scenario.faults.schedule.len(), 4);
    assert_eq!(scenario.faults.random.len(), 2);
    assert_eq!(
        scenario.clocks.nodes["worker-0"],
        ClockSpec {
            offset_ms: 0.0,
            drift_ppm: 500.0
        }
    );
    assert_eq!(scenario.expect.coverage, [Coverage::StaleWriteRejected]);
}

/// Text edits for `edit`, and what must hold of the result.
type Case = (
    &'static [(&'static str, &'static str)],
    fn(&Scenario) -> bool,
);

#[test]
fn optional_forms_resolve() {
    let cases: &[Case] = &[
        (&[("token_source = \"durable-counter\"", "token_source = \"wrapping-counter\"\ntoken_bits = 8")], |s| {
            s.lease.token_source == TokenSource::WrappingCounter { bits: 8 }
        }),
        (&[("count = 2", "count = 2\nshared_lease = \"all-jobs\"")], |s| {
            s.workers.lease_scope == LeaseScopeSpec::Single("all-jobs".into())
        }),
        (&[("work_ms = { dist = \"uniform\", min = 200, max = 800 }", "work_ms = 250")], |s| {
            s.workers.work_ms == Dist::Const { value: 250.0 }
        }),
        (&[("work_ms = { dist = \"uniform\", min = 200, max = 800 }", "work_ms = { dist = \"exponential\", mean = 7.5 }")], |s| {
            s.workers.work_ms == Dist::Exponential { mean: 7.5 }
        }),
        (&[("fencing = \"max-token\"", "fencing = \"proxy\"\nproxy_bypass = [\"worker-1\"]")], |s| {
            s.storage.proxy_bypass == ["worker-1"]
        }),
        (&[("safe = true", "violates = [\"I4\", \"I3\"]")], |s| {
            s.expect.outcome == Outcome::Violates(vec![Invariant::I4, Invariant::I3])
        }),
        (&[("[expect]", "[faults]\nswarm = true\n\n[[faults.random]]\nkind = \"partition\"\nrate_per_min = 1\nduration_ms = 1_000\none_way_probability = 0.5\n\n[expect]")], |s| {
            s.faults.swarm && s.faults.random[0].one_way_probability == 0.5 && s.faults.random[0].nodes.is_empty()
        }),
        (&[("node = \"worker-0\"\nduration_ms = 15_000", "nodes = [\"worker-0\"]\nduration_ms = 15_000"), ("kind = \"gc-pause\"", "kind = \"partition\"")], |s| {
            s.faults.schedule[0].fault
                == Fault::Partition { nodes: vec!["worker-0".into()], peers: vec![], one_way: false, duration_ms: 15_000.0 }
        }),
    ];
    for (edits, holds) in cases {
        let text = edit(edits);
        assert!(holds(&parse_ok(&text)), "case failed:\n{text}");
    }
}

#[test]
fn unknown_fields_are_named_with_their_line() {
    check_err(
        &format!("bogus = 1 {MARK}\n{MINIMAL}"),
        "bogus",
        "unknown field `bogus`",
    );
    check_err(
        &edit(&[("ttl_ms = 10_000", &format!("ttl = 10_000 {MARK}"))]),
        "lease.ttl",
        "unknown field `ttl`",
    );
    check_err(
        &edit(&[("max = 800 }", &format!("max = 800, avg = 3 }} {MARK}"))]),
        "workers.work_ms.avg",
        "unknown field `avg`",
    );
    check_err(
        &edit(&[(
            "duration_ms = 15_000",
            &format!("duration_ms = 15_000\nnode_name = \"x\" {MARK}"),
        )]),
        "faults.schedule[0].node_name",
        "unknown field `node_name`",
    );
    check_err(
        &edit(&[(
            "[expect]",
            &format!("[clocks.nodes.worker-1]\noffset = 3 {MARK}\n\n[expect]"),
        )]),
        "clocks.nodes.worker-1.offset",
        "unknown field `offset`",
    );
    check_err(
        &edit(&[("[expect]", &format!("[netwrok] {MARK}\n\n[expect]"))]),
        "netwrok",
        "unknown field `netwrok`",
    );
}

#[test]
fn keys_foreign_to_a_variant_are_rejected() {
    check_err(
        &edit(&[("max = 800 }", &format!("max = 800, mean = 3 }} {MARK}"))]),
        "workers.work_ms.mean",
        "expected no `mean` with dist = \"uniform\"",
    );
    check_err(
        &edit(&[
            (
                "kind = \"gc-pause\"\nnode = \"worker-0\"",
                "kind = \"clock-step\"\nnode = \"worker-0\"\ndelta_ms = 5",
            ),
            (
                "duration_ms = 15_000",
                &format!("duration_ms = 15_000 {MARK}"),
            ),
        ]),
        "faults.schedule[0].duration_ms",
        "expected no `duration_ms` with kind = \"clock-step\"",
    );
    check_err(
        &edit(&[(
            "fencing = \"max-token\"",
            &format!("fencing = \"sql\"\nproxy_bypass = [\"worker-0\"] {MARK}"),
        )]),
        "storage.proxy_bypass",
        "only allowed with fencing = \"proxy\", got fencing = \"sql\"",
    );
    check_err(
        &edit(&[("[expect]", &format!("[[faults.random]]\nkind = \"gc-pause\"\nrate_per_min = 1\nduration_ms = 5\none_way_probability = 0.5 {MARK}\n\n[expect]"))]),
        "faults.random[0].one_way_probability",
        "partition only",
    );
}

/// A TOML date where a number belongs is called a date, not "a table" (it reaches serde as
/// a private table).
#[test]
fn a_date_where_a_number_belongs_is_called_a_date() {
    check_err(
        &edit(&[("ttl_ms = 10_000", "ttl_ms = 1979-05-27T07:32:00Z # <-")]),
        "lease.ttl_ms",
        "invalid type: a date/time, expected an integer",
    );
    check_err(
        &edit(&[("duration_ms = 60_000", "duration_ms = 1979-05-27 # <-")]),
        "duration_ms",
        "invalid type: a date/time",
    );
}

#[expect(clippy::too_many_lines, reason = "a table: one case per bad number")]
#[test]
fn bad_numbers_name_the_field() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "ttl_ms = 10_000",
            "ttl_ms = 0 # <-",
            "lease.ttl_ms",
            "expected a positive number of milliseconds, got 0",
        ),
        (
            "ttl_ms = 10_000",
            "ttl_ms = \"ten\" # <-",
            "lease.ttl_ms",
            "expected an integer",
        ),
        (
            "duration_ms = 60_000",
            "duration_ms = -5 # <-",
            "duration_ms",
            "expected a positive number of milliseconds, got -5",
        ),
        (
            "duration_ms = 15_000",
            "duration_ms = -5 # <-",
            "faults.schedule[0].duration_ms",
            "got -5",
        ),
        (
            "at_ms = 5_000",
            "at_ms = 60_000 # <-",
            "faults.schedule[0].at_ms",
            "inside the safety phase [0, 60000) ms, got 60000",
        ),
        (
            "at_ms = 5_000",
            "at_ms = -1 # <-",
            "faults.schedule[0].at_ms",
            "got -1",
        ),
        (
            "min = 200, max = 800 }",
            "min = 200, max = 100 } # <-",
            "workers.work_ms.max",
            "expected max >= min (200), got 100",
        ),
        (
            "min = 200, max = 800 }",
            "min = -200, max = 800 } # <-",
            "workers.work_ms.min",
            "non-negative",
        ),
        (
            "count = 2",
            "count = 0 # <-",
            "workers.count",
            "expected 1 to 64 workers, got 0",
        ),
        ("count = 2", "count = 65 # <-", "workers.count", "got 65"),
        (
            "[workers]",
            "[workers]\nrenew_every_ms = 10_000 # <-",
            "workers.renew_every_ms",
            "shorter than the effective TTL (10000 ms), got 10000",
        ),
        (
            "[workers]",
            "[workers]\nrequest_timeout_ms = 0 # <-",
            "workers.request_timeout_ms",
            "got 0",
        ),
        (
            "[workers]",
            "[workers]\nwrites_per_lease = 0 # <-",
            "workers.writes_per_lease",
            "expected 1 to 10000 writes per lease",
        ),
        (
            "[expect]",
            "[network]\nloss = 1.0 # <-\n[expect]",
            "network.loss",
            "probability in [0, 1), got 1",
        ),
        (
            "[expect]",
            "[network]\nspikes_ms = [200, 0] # <-\n[expect]",
            "network.spikes_ms[1]",
            "positive",
        ),
        (
            "[expect]",
            "[network]\nlatency_ms = { dist = \"lognormal\", median = 5, p99 = 1 } # <-\n[expect]",
            "network.latency_ms.p99",
            "p99 >= median",
        ),
        (
            "[expect]",
            "[clocks]\nrandom_drift_ppm = -1 # <-\n[expect]",
            "clocks.random_drift_ppm",
            "non-negative",
        ),
        (
            "[expect]",
            "[clocks.nodes.storage]\ndrift_ppm = 1e6 # <-\n[expect]",
            "clocks.nodes.storage.drift_ppm",
            "< 1000000",
        ),
    ];
    for (from, to, field, expected) in cases {
        check_err(&edit(&[(from, to)]), field, expected);
    }
}

#[test]
fn bad_seed_ranges_are_rejected() {
    for seeds in [
        "5..5", "9..2", "abc", "1..", "", "..5", "+1..5", "0..=5", " 0..5", "0...5",
    ] {
        let text = edit(&[("seeds = \"0..10\"", &format!("seeds = {seeds:?} {MARK}"))]);
        check_err(&text, "seeds", &format!("got {seeds:?}"));
    }
}

#[test]
fn expectations_are_exactly_one_outcome() {
    check_err(
        &edit(&[("safe = true", &format!("violates = [\"I9\"] {MARK}"))]),
        "expect.violates[0]",
        "unknown variant `I9`",
    );
    check_err(
        &edit(&[(
            "safe = true",
            &format!("safe = true\nviolates = [\"I3\"] {MARK}"),
        )]),
        "expect.violates",
        "got both",
    );
    check_err(
        &edit(&[("safe = true", &format!("violates = [] {MARK}"))]),
        "expect.violates",
        "at least one invariant",
    );
    check_err(
        &edit(&[(
            "safe = true",
            &format!("violates = [\"I3\", \"I3\"] {MARK}"),
        )]),
        "expect.violates[1]",
        "distinct invariants, got I3 twice",
    );
    check_err(
        &edit(&[("safe = true", &format!("safe = false {MARK}"))]),
        "expect.safe",
        "got false",
    );
    check_err(
        &edit(&[
            ("[expect]", &format!("[expect] {MARK}")),
            ("safe = true", ""),
        ]),
        "expect",
        "got neither",
    );
}

#[test]
fn coverage_is_validated_and_required_for_safe() {
    check_err(
        &edit(&[(
            "coverage = [\"stale-write-rejected\"]",
            &format!("coverage = [] {MARK}"),
        )]),
        "expect.coverage",
        "at least one coverage condition",
    );
    check_err(
        &edit(&[(
            "coverage = [\"stale-write-rejected\"]",
            &format!("coverage = [\"stale-write-rejected\", \"sometimes\"] {MARK}"),
        )]),
        "expect.coverage[1]",
        "got `sometimes`",
    );
}

#[test]
fn never_is_validated_and_disjoint_from_coverage() {
    let never = edit(&[(
        "coverage = [\"stale-write-rejected\"]",
        "coverage = [\"stale-write-rejected\"]\nnever = [\"current-write-rejected\"]",
    )]);
    let scenario = parse_str(&never, "case.toml").expect("valid");
    assert_eq!(scenario.expect.never, [Coverage::CurrentWriteRejected]);
    check_err(
        &edit(&[(
            "coverage = [\"stale-write-rejected\"]",
            &format!("coverage = [\"stale-write-rejected\"]\nnever = [\"nowhere\"] {MARK}"),
        )]),
        "expect.never[0]",
        "got `nowhere`",
    );
    check_err(
        &edit(&[(
            "coverage = [\"stale-write-rejected\"]",
            &format!(
                "coverage = [\"stale-write-rejected\"]\nnever = [\"stale-write-rejected\"] {MARK}"
            ),
        )]),
        "expect.never[0]",
        "not also required by expect.coverage",
    );
}

#[test]
fn node_names_must_exist() {
    check_err(
        &edit(&[(
            "node = \"worker-0\"",
            &format!("node = \"worker-2\" {MARK}"),
        )]),
        "faults.schedule[0].node",
        "expected a node name (coordinator, storage, worker-0..worker-1), got \"worker-2\"",
    );
    check_err(
        &edit(&[
            ("kind = \"gc-pause\"", "kind = \"worker-crash\""),
            ("node = \"worker-0\"", &format!("node = \"storage\" {MARK}")),
        ]),
        "faults.schedule[0].node",
        "expected a worker name",
    );
    check_err(
        &edit(&[(
            "[expect]",
            &format!("[clocks.nodes.worker-9] {MARK}\noffset_ms = 1\n\n[expect]"),
        )]),
        "clocks.nodes.worker-9",
        "got \"worker-9\"",
    );
    check_err(
        &edit(&[(
            "fencing = \"max-token\"",
            &format!("fencing = \"proxy\"\nproxy_bypass = [\"coordinator\"] {MARK}"),
        )]),
        "storage.proxy_bypass[0]",
        "expected a worker name",
    );
}

#[test]
fn token_bits_go_with_the_wrapping_counter_only() {
    check_err(
        &edit(&[(
            "token_source = \"durable-counter\"",
            &format!("token_source = \"wrapping-counter\" {MARK}"),
        )]),
        "lease.token_bits",
        "required with token_source = \"wrapping-counter\"",
    );
    check_err(
        &edit(&[(
            "token_source = \"durable-counter\"",
            &format!("token_source = \"durable-counter\"\ntoken_bits = 8 {MARK}"),
        )]),
        "lease.token_bits",
        "only allowed with token_source = \"wrapping-counter\"",
    );
    check_err(
        &edit(&[(
            "token_source = \"durable-counter\"",
            &format!("token_source = \"wrapping-counter\"\ntoken_bits = 64 {MARK}"),
        )]),
        "lease.token_bits",
        "from 1 to 63 bits, got 64",
    );
}

#[test]
fn missing_and_mistyped_values() {
    // A missing key is reported at the table it belongs in.
    check_err(
        &edit(&[
            ("[lease]", &format!("[lease] {MARK}")),
            ("token_source = \"durable-counter\"\n", ""),
        ]),
        "lease.token_source",
        "required",
    );
    check_err(&edit(&[("name = \"minimal\"\n", "")]), "name", "required");
    check_err(
        &edit(&[(
            "fencing = \"max-token\"",
            &format!("fencing = \"maxtoken\" {MARK}"),
        )]),
        "storage.fencing",
        "unknown variant `maxtoken`",
    );
    check_err(
        &edit(&[("name = \"minimal\"", &format!("name = \"Minimal\" {MARK}"))]),
        "name",
        "[a-z0-9-]+",
    );
    check_err(
        &edit(&[(
            "name = \"minimal\"",
            &format!("name = \"minimal\"\nname = \"again\" {MARK}"),
        )]),
        "(syntax)",
        "duplicate key",
    );
}

#[test]
fn schedules_are_validated() {
    check_err(
        &edit(&[("[expect]", &format!("[[faults.schedule]] {MARK}\nat_ms = 10_000\nkind = \"vm-suspend\"\nnode = \"worker-0\"\nduration_ms = 1_000\n\n[expect]"))]),
        "faults.schedule[1]",
        "expected no overlap with faults.schedule[0] (gc-pause on worker-0 over 5000..20000 ms), got vm-suspend over 10000..11000 ms",
    );
    // Back to back is not an overlap, nor is the same time on another node.
    parse_ok(&edit(&[("[expect]", "[[faults.schedule]]\nat_ms = 20_000\nkind = \"gc-pause\"\nnode = \"worker-0\"\nduration_ms = 1\n\n[[faults.schedule]]\nat_ms = 5_000\nkind = \"worker-crash\"\nnode = \"worker-1\"\nduration_ms = 1\n\n[expect]")]));
    check_err(
        &edit(&[(
            "kind = \"gc-pause\"\nnode = \"worker-0\"\nduration_ms = 15_000",
            &format!("kind = \"clock-step\"\nnode = \"worker-0\"\ndelta_ms = 0 {MARK}"),
        )]),
        "faults.schedule[0].delta_ms",
        "non-zero",
    );
    check_err(
        &edit(&[(
            "kind = \"gc-pause\"\nnode = \"worker-0\"",
            &format!("kind = \"hold-release\"\nfrom = \"worker-0\"\nto = \"worker-0\" {MARK}"),
        )]),
        "faults.schedule[0].to",
        "other than `from`",
    );
    check_err(
        &edit(&[("[expect]", &format!("[[faults.random]]\nkind = \"panic\" {MARK}\nrate_per_min = 1\nduration_ms = 5\n\n[expect]"))]),
        "faults.random[0].kind",
        "other than \"panic\"",
    );
    check_err(
        &edit(&[("[expect]", &format!("[[faults.random]]\nkind = \"gc-pause\"\nrate_per_min = 0 {MARK}\nduration_ms = 5\n\n[expect]"))]),
        "faults.random[0].rate_per_min",
        "positive",
    );
}

#[test]
fn load_reads_files_and_names_missing_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ok.toml");
    std::fs::write(&path, MINIMAL).expect("write");
    assert_eq!(load(&path).expect("valid file"), parse_ok(MINIMAL));

    let missing = dir.path().join("missing.toml");
    let error = load(&missing).expect_err("missing file");
    assert_eq!(error.field, "(file)");
    assert_eq!(error.line, None);
    assert_eq!(error.file, missing.display().to_string());
    assert!(error.to_string().starts_with(&format!(
        "{}: (file): expected a readable",
        missing.display()
    )));
}

#[test]
fn display_is_file_line_field_expected() {
    let error =
        parse_str(&edit(&[("ttl_ms = 10_000", "ttl_ms = 0")]), "a/b.toml").expect_err("ttl 0");
    assert_eq!(
        error.to_string(),
        "a/b.toml:7: lease.ttl_ms: expected a positive number of milliseconds, got 0"
    );
}

// Lease presets supply defaults and semantics; explicit fields win.

/// `MINIMAL` with `[lease]` replaced by `lease` and `extra` appended to `[workers]`.
fn preset(lease: &str, workers: &str) -> String {
    edit(&[
        (
            "ttl_ms = 10_000\ntoken_source = \"durable-counter\"\n",
            lease,
        ),
        (
            "work_ms = { dist = \"uniform\", min = 200, max = 800 }\n",
            &format!("work_ms = {{ dist = \"uniform\", min = 200, max = 800 }}\n{workers}"),
        ),
    ])
}

#[test]
fn presets_resolve_their_defaults() {
    let etcd = parse_ok(&preset("preset = \"etcd\"\nttl_ms = 1_000\n", ""));
    let lease = &etcd.lease;
    assert_eq!(lease.preset, Some(Preset::Etcd));
    assert_eq!((lease.ttl_ms, lease.effective_ttl_ms()), (1_000, 2_000));
    assert_eq!(lease.expiry_check_ms, 500);
    assert_eq!(lease.token_source, TokenSource::Revision);
    assert_eq!(lease.token_scope, TokenScope::Global);
    assert_eq!(lease.holder_identity, HolderIdentity::Session);
    assert_eq!(etcd.workers.renew_every_ms, 666);
    // etcd's minimum follows the election timeout: ceil(1.5 x 3 s) = 5 s.
    let slow = parse_ok(&preset(
        "preset = \"etcd\"\nttl_ms = 1_000\nelection_timeout_ms = 3_000\n",
        "",
    ));
    assert_eq!(slow.lease.effective_ttl_ms(), 5_000);
    // A restarted etcd serves after an election of [1, 2) x the election timeout.
    assert_eq!(lease.restart_election_ms, 1_000);
    assert_eq!(slow.lease.restart_election_ms, 3_000);
    // An explicit field overrides the preset.
    let own = parse_ok(&preset(
        "preset = \"etcd\"\nttl_ms = 1_000\nmin_ttl_ms = 0\ntoken_source = \"durable-counter\"\n",
        "",
    ));
    assert_eq!(own.lease.effective_ttl_ms(), 1_000);
    assert_eq!(own.lease.token_source, TokenSource::DurableCounter);
    let serves_at_once = parse_ok(&preset(
        "preset = \"etcd\"\nttl_ms = 1_000\nrestart_election_ms = 0\n",
        "",
    ));
    assert_eq!(serves_at_once.lease.restart_election_ms, 0);

    let client_go = parse_ok(&preset("preset = \"client-go\"\n", ""));
    let (lease, workers) = (&client_go.lease, &client_go.workers);
    assert_eq!(lease.ttl_ms, 15_000);
    assert_eq!(lease.expired_by, ExpiredBy::Candidate);
    assert_eq!(lease.holder_identity, HolderIdentity::Name);
    assert_eq!(
        (
            workers.renew_deadline_ms,
            workers.renew_every_ms,
            workers.acquire_retry_ms
        ),
        (10_000, 2_000, 2_000)
    );
    assert_eq!(workers.acquire_retry_jitter, 1.2);
    assert!(!workers.stop_on_renew_failure);

    let zookeeper = parse_ok(&preset("preset = \"zookeeper\"\nttl_ms = 100_000\n", ""));
    assert_eq!(zookeeper.lease.effective_ttl_ms(), 40_000, "20 x tickTime");
    assert_eq!(
        zookeeper.workers.renew_deadline_ms, 26_666,
        "2/3 of the session"
    );
    // One lost ping is no disconnect: the client keeps its lock until readTimeout.
    assert!(!zookeeper.workers.stop_on_renew_failure);
    let short = parse_ok(&preset(
        "preset = \"zookeeper\"\nttl_ms = 1_000\nexpiry_check_ms = 500\n",
        "",
    ));
    assert_eq!(short.lease.effective_ttl_ms(), 1_000, "2 x tickTime");

    let consul = parse_ok(&preset("preset = \"consul\"\n", ""));
    assert_eq!(
        (consul.lease.ttl_ms, consul.lease.server_ttl_ms()),
        (15_000, 30_000)
    );
    assert_eq!(consul.lease.lock_delay_ms, 15_000);
    assert_eq!(consul.workers.renew_every_ms, 7_500, "RenewPeriodic: TTL/2");

    // Without a preset, a restarted holder is a new session.
    assert_eq!(
        parse_ok(MINIMAL).lease.holder_identity,
        HolderIdentity::Session
    );
}

#[test]
fn preset_rules_name_the_field() {
    check_err(
        &preset("preset = \"consul\"\nttl_ms = 5_000 # <-\n", ""),
        "lease.ttl_ms",
        "10_000 ms (10 s) to 86_400_000 ms (24 h), got 5000",
    );
    check_err(
        &preset("preset = \"consul\"\nlock_delay_ms = 61_000 # <-\n", ""),
        "lease.lock_delay_ms",
        "0 to 60_000 ms (60 s), got 61000",
    );
    check_err(
        &preset(
            "preset = \"client-go\"\n",
            "renew_deadline_ms = 2_000 # <-\n",
        ),
        "workers.renew_deadline_ms",
        "RenewDeadline > 1.2 × RetryPeriod",
    );
    check_err(
        &preset(
            "preset = \"client-go\"\n",
            "renew_deadline_ms = 15_000 # <-\n",
        ),
        "workers.renew_deadline_ms",
        "LeaseDuration (lease.ttl_ms = 15000) > RenewDeadline",
    );
    check_err(
        &preset("preset = \"zookeeper\"\nexpiry_check_ms = 0 # <-\n", ""),
        "lease.expiry_check_ms",
        "tickTime",
    );
}

/// Lease settings that do nothing under the resolved semantics, or contradict the preset, are
/// accepted with a warning naming the field; the catalogue has none.
#[test]
fn ineffective_or_contradicting_preset_overrides_are_warned() {
    let lease = |extra: &str| {
        parse_ok(&edit(&[(
            "ttl_ms = 10_000\ntoken_source = \"durable-counter\"",
            &format!("ttl_ms = 15_000\n{extra}"),
        )]))
        .preset_warnings()
    };
    assert!(lease("preset = \"client-go\"").is_empty());
    let w = lease("preset = \"client-go\"\nlock_delay_ms = 5_000\nexpiry_check_ms = 100");
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("lease.expiry_check_ms = 100 has no effect"),
        "{w:?}"
    );
    assert!(
        w[1].starts_with("lease.lock_delay_ms = 5000 has no effect"),
        "{w:?}"
    );
    // The same values under a service that expires leases itself do something: no warning.
    assert!(lease("preset = \"etcd\"\nlock_delay_ms = 5_000").is_empty());
    let w = lease("preset = \"etcd\"\nholder_identity = \"name\"");
    assert!(
        w.len() == 1 && w[0].contains("holder_identity") && w[0].contains("\"etcd\""),
        "{w:?}"
    );
    let w = lease("preset = \"consul\"\nexpired_by = \"candidate\"");
    assert!(
        w.iter()
            .any(|w| w.starts_with("lease.expired_by = \"candidate\" contradicts")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|w| w.starts_with("lease.lock_delay_ms")),
        "{w:?}"
    );
    for path in fencesim_testkit::catalogue_files("") {
        let scenario = fencesim_scenario::load(&path).unwrap();
        assert!(
            scenario.preset_warnings().is_empty(),
            "{}: {:?}",
            path.display(),
            scenario.preset_warnings()
        );
    }
}
