//! `--vary` parsing and grid expansion: one `check` per case.

use fencesim_tune::{grid, parse_vary};

#[track_caller]
fn check(varies: &[&str], expected: &[&str]) {
    let parsed: Vec<_> = varies.iter().map(|v| parse_vary(v).unwrap()).collect();
    let settings = grid(&parsed).unwrap();
    let shown: Vec<String> = settings
        .iter()
        .map(|s| {
            s.iter()
                .map(|(f, v)| format!("{f}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(shown, expected);
}

#[track_caller]
fn error(varies: &[&str], message: &str) {
    let parsed: Result<Vec<_>, String> = varies.iter().map(|v| parse_vary(v)).collect();
    let error = match parsed {
        Err(e) => e,
        Ok(parsed) => grid(&parsed).expect_err("an error"),
    };
    assert!(error.contains(message), "{error}");
}

#[test]
fn lists_ranges_ratios_and_grids() {
    check(
        &["lease.ttl_ms=2000,5000"],
        &["lease.ttl_ms=2000", "lease.ttl_ms=5000"],
    );
    check(
        &["lease.ttl_ms=2000..20000:4"],
        &[
            "lease.ttl_ms=2000",
            "lease.ttl_ms=8000",
            "lease.ttl_ms=14000",
            "lease.ttl_ms=20000",
        ],
    );
    check(
        &["network.loss=0..0.1:3"],
        &["network.loss=0.0", "network.loss=0.05", "network.loss=0.1"],
    );
    check(
        &["lease.ttl_ms=1000..1002:10"],
        &[
            "lease.ttl_ms=1000",
            "lease.ttl_ms=1001",
            "lease.ttl_ms=1002",
        ],
    );
    check(
        &[
            "lease.ttl_ms=3000,9000",
            "workers.renew_every_ms=lease.ttl_ms/3",
        ],
        &[
            "lease.ttl_ms=3000 workers.renew_every_ms=1000",
            "lease.ttl_ms=9000 workers.renew_every_ms=3000",
        ],
    );
    check(
        &[
            "lease.ttl_ms=1000",
            "workers.renew_every_ms=lease.ttl_ms*0.5,250",
        ],
        &[
            "lease.ttl_ms=1000 workers.renew_every_ms=500",
            "lease.ttl_ms=1000 workers.renew_every_ms=250",
        ],
    );
    check(
        &["lease.ttl_ms=1,2", "lease.on_restart=drop,keep-and-extend"],
        &[
            "lease.ttl_ms=1 lease.on_restart=drop",
            "lease.ttl_ms=1 lease.on_restart=keep-and-extend",
            "lease.ttl_ms=2 lease.on_restart=drop",
            "lease.ttl_ms=2 lease.on_restart=keep-and-extend",
        ],
    );
}

#[test]
fn malformed_varies_are_errors() {
    error(&["lease.ttl_ms"], "FIELD=VALUE");
    error(&["lease.ttl_ms=1,,2"], "empty");
    error(&["lease.ttl_ms=1..5"], "range with a count");
    error(&["lease.ttl_ms=1..5:0"], "count");
    error(&["lease.ttl_ms=a..5:3"], "range with a count");
    error(
        &["workers.renew_every_ms=lease.ttl_ms/3"],
        "ratio of another varied field",
    );
    error(&["lease.ttl_ms=1", "lease.ttl_ms=2"], "varied twice");
}

#[test]
fn a_grid_over_the_cap_is_refused_before_it_is_built() {
    error(
        &[
            "lease.ttl_ms=1000..100000:1000",
            "workers.renew_every_ms=100..999:1000",
        ],
        "at most 100000 settings",
    );
    // 40,000 settings are built (linear construction; `fencesim tune` then starts at once).
    let parsed: Vec<_> = [
        "lease.ttl_ms=1000..40000:200",
        "workers.renew_every_ms=100..299:200",
    ]
    .iter()
    .map(|v| parse_vary(v).unwrap())
    .collect();
    assert_eq!(grid(&parsed).unwrap().len(), 40_000);
}
