//! What live mode accepts and what it refuses, one row per scenario option: every option the
//! live worker or injector does not implement is refused (naming the field and its value), and
//! every option it does implement is accepted. The CLI's exit code 2 and "before anything
//! starts" are tested in `crates/cli/tests/live.rs`.

use fencesim_live::{check_seeds, live_plan};
use fencesim_scenario::{load_with, Override, Scenario};

/// The textbook etcd scenario with `set` overrides and `extra` TOML appended.
fn scenario(set: &[&str], extra: &str) -> Scenario {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("case.toml");
    let mut text = std::fs::read_to_string(fencesim_testkit::catalogue_path(
        "gc-pause-textbook-etcd-none",
    ))
    .unwrap();
    // `[expect]` is the last table of the base file: appended tables go before it.
    let at = text.find("[expect]").unwrap();
    text.insert_str(at, &format!("{extra}\n"));
    std::fs::write(&path, text).unwrap();
    let set: Vec<Override> = set.iter().map(|s| Override::parse(s).unwrap()).collect();
    load_with(&path, &set).unwrap_or_else(|error| panic!("{set:?} {extra}: {error}"))
}

const COORDINATOR_PAUSE: &str = r#"
[[faults.schedule]]
at_ms = 6_000
kind = "gc-pause"
node = "coordinator"
duration_ms = 1_000
"#;

const STORAGE_PAUSE: &str = r#"
[[faults.schedule]]
at_ms = 6_000
kind = "gc-pause"
node = "storage"
duration_ms = 1_000
"#;

const VM_SUSPEND: &str = r#"
[[faults.schedule]]
at_ms = 9_000
kind = "vm-suspend"
node = "worker-1"
duration_ms = 1_000
"#;

const STORAGE_RESTART: &str = r#"
[[faults.schedule]]
at_ms = 9_000
kind = "storage-restart"
duration_ms = 1_000
"#;

const LATE_PARTITION: &str = r#"
[[faults.schedule]]
at_ms = 9_000
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 1_000
"#;

/// `None`: accepted; `Some(text)`: refused with an error containing `text`.
fn check(set: &[&str], extra: &str, refused: Option<&str>) {
    let scenario = scenario(set, extra);
    let result = live_plan(&scenario, 0);
    match (refused, result) {
        (None, Ok(_)) => {}
        (None, Err(error)) => panic!("{set:?} {extra}: refused, expected accepted: {error}"),
        (Some(text), Ok(_)) => panic!("{set:?} {extra}: accepted, expected refused ({text})"),
        (Some(text), Err(error)) => {
            let error = error.to_string();
            assert!(
                error.contains(text),
                "{set:?} {extra}: {error} (expected {text:?})"
            );
        }
    }
}

#[test]
fn options_live_mode_implements_are_accepted() {
    for set in [
        &[][..],
        &["workers.check_lease_before_write=true"],
        &["workers.recheck_deadline_before_write=true"],
        &["workers.stop_on_renew_failure=false"],
        &["workers.deadline_from=reply-received"],
        &["workers.request_timeout_ms=500"],
        &["workers.acquire_retry_jitter=1.2"],
        &["workers.side_effects=direct"],
        &["lease.ttl_ms=3000"],
        // A TTL below etcd's minimum that the scenario raises to it itself.
        &["lease.ttl_ms=1000"],
        &["lease.ttl_ms=1000", "lease.min_ttl_ms=3000"],
        &["storage.fencing=sql"],
        &["storage.fencing=sql-ignore-rows"],
        &["storage.fencing=same-store-txn"],
        &["lease.preset=zookeeper", "lease.ttl_ms=6000"],
        &[
            "lease.preset=zookeeper",
            "lease.ttl_ms=6000",
            "lease.expiry_check_ms=1000",
            "storage.fencing=sql",
        ],
    ] {
        check(set, "", None);
    }
    // A two-way partition of workers from the coordinator, at the start (the workers start
    // late) or later (cut for real in the run's own network namespace).
    check(&[], LATE_PARTITION, None);
    check(&[], &LATE_PARTITION.replace("9_000", "0"), None);
    let two = LATE_PARTITION.replace(r#"["worker-1"]"#, r#"["worker-0", "worker-1"]"#);
    check(&[], &two, None);
    // The holder's link cut: the worker the service names as the holder when it begins.
    let holder =
        "[[faults.schedule]]\nat_ms = 9_000\nkind = \"holder-link-cut\"\nduration_ms = 1_000\n";
    check(&[], holder, None);
}

#[expect(
    clippy::too_many_lines,
    reason = "a table: one case per option live mode refuses"
)]
#[test]
fn options_live_mode_cannot_honour_are_refused_naming_the_field() {
    let rows: &[(&[&str], &str, &str)] = &[
        (&["lease.ttl_ms=2500"], "", "`lease.ttl_ms = 2500`"),
        (
            &["lease.ttl_ms=1000", "lease.min_ttl_ms=0"],
            "",
            "`lease.ttl_ms = 1000` with `lease.min_ttl_ms`",
        ),
        (
            &["lease.max_ttl_ms=60000"],
            "",
            "`lease.max_ttl_ms = 60000`",
        ),
        (&["lease.expiry_factor=2"], "", "`lease.expiry_factor = 2`"),
        (
            &["lease.expiry_check_ms=100"],
            "",
            "`lease.expiry_check_ms = 100`",
        ),
        (
            &["lease.lock_delay_ms=500"],
            "",
            "`lease.lock_delay_ms = 500`",
        ),
        (
            &["lease.election_timeout_ms=2000"],
            "",
            "`lease.election_timeout_ms = 2000`",
        ),
        (
            &["lease.restart_election_ms=0"],
            "",
            "`lease.restart_election_ms = 0`",
        ),
        (&["lease.on_restart=drop"], "", "`lease.on_restart = Drop`"),
        (
            &["lease.token_source=durable-counter"],
            "",
            "`lease.token_source",
        ),
        (
            &["lease.token_scope=per-resource"],
            "",
            "`lease.token_scope",
        ),
        (&["lease.expired_by=candidate"], "", "`lease.expired_by"),
        (&["lease.acquire=overwrite"], "", "`lease.acquire"),
        (
            &["lease.holder_identity=name"],
            "",
            "`lease.holder_identity",
        ),
        (
            &["lease.preset=consul", "lease.ttl_ms=10000"],
            "",
            "`lease.preset`",
        ),
        (
            &["lease.preset=client-go", "lease.ttl_ms=15000"],
            "",
            "`lease.preset`",
        ),
        // ZooKeeper: the server's own bounds, and no etcd transaction to guard a write on.
        (
            &[
                "lease.preset=zookeeper",
                "lease.ttl_ms=6000",
                "lease.min_ttl_ms=0",
            ],
            "",
            "`lease.min_ttl_ms = 0`",
        ),
        (
            &[
                "lease.preset=zookeeper",
                "lease.ttl_ms=6000",
                "lease.max_ttl_ms=0",
            ],
            "",
            "`lease.max_ttl_ms = 0`",
        ),
        (
            &[
                "lease.preset=zookeeper",
                "lease.ttl_ms=6000",
                "storage.fencing=same-store-txn",
            ],
            "",
            "`storage.fencing = SameStoreTxn`",
        ),
        (
            &[
                "lease.preset=zookeeper",
                "lease.ttl_ms=6000",
                "lease.restart_election_ms=1000",
            ],
            "",
            "`lease.restart_election_ms = 1000`",
        ),
        (
            &["storage.fencing=max-token"],
            "",
            "`storage.fencing = MaxToken`",
        ),
        (
            &["storage.compare_scope=global"],
            "",
            "`storage.compare_scope",
        ),
        (
            &["workers.side_effects=outbox"],
            "",
            "`workers.side_effects",
        ),
        (&["network.loss=0.01"], "", "`network.loss = 0.01`"),
        (
            &["network.duplicate=0.01"],
            "",
            "`network.duplicate = 0.01`",
        ),
        (
            &["network.spike_probability=0.1"],
            "",
            "`network.spike_probability = 0.1`",
        ),
        (&["network.latency_ms=5"], "", "`network.latency_ms`"),
        (
            &["clocks.random_drift_ppm=50"],
            "",
            "`clocks.random_drift_ppm = 50`",
        ),
        (
            &["clocks.random_offset_ms=100"],
            "",
            "`clocks.random_offset_ms = 100`",
        ),
        (&[], COORDINATOR_PAUSE, "not the coordinator"),
        (&[], STORAGE_PAUSE, "not the storage"),
        (&[], VM_SUSPEND, "monotonic clock"),
        (&[], STORAGE_RESTART, "storage-restart"),
        (
            &[],
            &LATE_PARTITION.replace(r#"["coordinator"]"#, r#"["storage"]"#),
            "two-way partition of workers from the coordinator",
        ),
        (
            &[],
            &LATE_PARTITION.replace("duration_ms", "one_way = true\nduration_ms"),
            "two-way partition",
        ),
        (
            &[],
            &LATE_PARTITION.replace(r#"["worker-1"]"#, r#"["storage"]"#),
            "two-way partition of workers",
        ),
    ];
    for (set, extra, text) in rows {
        check(set, extra, Some(text));
    }
}

#[test]
fn every_live_seeds_fault_plan_is_checked_not_only_the_first() {
    // Clock steps drawn at random: some seeds draw none in the safety phase, others do.
    let scenario = scenario(
        &[],
        r#"
[[faults.random]]
kind = "clock-step"
rate_per_min = 1.0
duration_ms = { dist = "uniform", min = 100, max = 200 }
"#,
    );
    let accepted: Vec<u64> = (0..40)
        .filter(|&seed| live_plan(&scenario, seed).is_ok())
        .collect();
    let first_refused = (0..40).find(|&seed| live_plan(&scenario, seed).is_err());
    assert!(!accepted.is_empty(), "some seed draws no clock step");
    let first_refused = first_refused.expect("some seed draws a clock step");
    // A range starting at an accepted seed still fails on the later one, naming its seed.
    let start = *accepted.iter().find(|&&s| s < first_refused).unwrap_or(&0);
    if start < first_refused {
        assert!(live_plan(&scenario, start).is_ok());
    }
    let error = check_seeds(&scenario, start..first_refused + 1)
        .unwrap_err()
        .to_string();
    assert!(error.contains(&format!("seed {first_refused}")), "{error}");
    assert!(check_seeds(&scenario, accepted[0]..accepted[0] + 1).is_ok());
}
