//! `--vary` parsing and grid expansion: one `check` per case.

use fencesim_scenario::{Override, ScenarioError};
use fencesim_tune::{grid, parse_vary, Item};

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

#[test]
fn a_range_needs_a_count_up_to_1000_and_finite_ends() {
    error(
        &["lease.ttl_ms=1..5:1001"],
        "expected a count in 1..=1000 and finite ends",
    );
    let thousand: Vec<String> = (1..=1000).map(|t| format!("lease.ttl_ms={t}")).collect();
    let thousand: Vec<&str> = thousand.iter().map(String::as_str).collect();
    check(&["lease.ttl_ms=1..1000:1000"], &thousand);
    error(&["lease.ttl_ms=inf..5:3"], "finite ends, got `inf..5:3`");
    error(&["lease.ttl_ms=1..NaN:3"], "finite ends");
    // A count of one is the start; ends written as floats give floats.
    check(&["lease.ttl_ms=2000..5000:1"], &["lease.ttl_ms=2000"]);
    check(
        &["lease.ttl_ms=1E3..2000:2"],
        &["lease.ttl_ms=1000.0", "lease.ttl_ms=2000.0"],
    );
    check(
        &["network.loss=0..0.5e-1:2"],
        &["network.loss=0.0", "network.loss=0.05"],
    );
}

#[test]
fn a_ratio_needs_a_named_field_and_a_positive_finite_number() {
    let items = |text: &str| parse_vary(text).unwrap().items;
    assert_eq!(
        items("workers.renew_every_ms=lease.ttl_ms/4"),
        [Item::Ratio {
            of: "lease.ttl_ms".into(),
            factor: 0.25,
            text: "lease.ttl_ms/4".into()
        }]
    );
    assert_eq!(
        items("workers.renew_every_ms=lease.ttl_ms*4"),
        [Item::Ratio {
            of: "lease.ttl_ms".into(),
            factor: 4.0,
            text: "lease.ttl_ms*4".into()
        }]
    );
    for literal in [
        "lease.ttl_ms/0",
        "lease.ttl_ms/-2",
        "lease.ttl_ms/inf",
        "lease.ttl_ms/x",
        "2/3",
        "/3",
    ] {
        assert_eq!(
            items(&format!("workers.renew_every_ms={literal}")),
            [Item::Literal(literal.into())],
            "{literal}"
        );
    }
    // A ratio of a float is a float; of itself, of a ratio or of a word is refused.
    check(
        &[
            "lease.ttl_ms=1000.0",
            "workers.renew_every_ms=lease.ttl_ms/4",
        ],
        &["lease.ttl_ms=1000.0 workers.renew_every_ms=250.0"],
    );
    error(
        &["lease.ttl_ms=lease.ttl_ms/2"],
        "must be a ratio of another varied field",
    );
    error(
        &["a.b=1,2", "c.d=a.b/2", "e.f=c.d/2"],
        "`c.d/2` must be a ratio of another varied field whose values are numbers",
    );
    error(
        &["lease.on_restart=drop", "lease.ttl_ms=lease.on_restart/2"],
        "--vary lease.ttl_ms: `lease.on_restart/2` needs a number in lease.on_restart, got `drop`",
    );
    // The ratio reads its own base, wherever it sits in the setting.
    check(
        &[
            "lease.on_restart=drop",
            "lease.ttl_ms=3000",
            "workers.renew_every_ms=lease.ttl_ms/3",
        ],
        &["lease.on_restart=drop lease.ttl_ms=3000 workers.renew_every_ms=1000"],
    );
    // Settings that resolve alike are one setting.
    check(&["lease.ttl_ms=1000,1000"], &["lease.ttl_ms=1000"]);
}

#[test]
fn the_cap_admits_exactly_100000_settings_and_names_the_product() {
    let parsed: Vec<_> = [
        "lease.ttl_ms=1..1000:1000",
        "workers.renew_every_ms=1..100:100",
    ]
    .iter()
    .map(|v| parse_vary(v).unwrap())
    .collect();
    assert_eq!(fencesim_tune::grid::grid_size(&parsed), 100_000);
    assert_eq!(grid(&parsed).unwrap().len(), 100_000);
    let parsed: Vec<_> = [
        "lease.ttl_ms=1..1000:1000",
        "workers.renew_every_ms=1..101:101",
    ]
    .iter()
    .map(|v| parse_vary(v).unwrap())
    .collect();
    assert_eq!(
        grid(&parsed).unwrap_err(),
        "expected at most 100000 settings (the cap on a tune grid), got 101000 (1000 × 101); \
         split the sweep or use fewer values"
    );
}

/// Values are written as shards' numbers are: no sign, no space (a `+` or a space was once
/// read past and the value taken).
#[test]
fn vary_values_take_no_sign_or_space() {
    for text in [
        "lease.ttl_ms=+2000,4000",
        "lease.ttl_ms=2000,+4000",
        "lease.ttl_ms= 2000",
        "lease.ttl_ms=2000, 4000",
        "lease.ttl_ms=2000 ",
        "lease.ttl_ms =2000",
        "lease.ttl_ms=+1000..4000:3",
        "lease.ttl_ms=1000..+4000:3",
        "lease.ttl_ms=1000..4000:+3",
        "workers.renew_every_ms=lease.ttl_ms/+3",
        "workers.renew_every_ms=lease.ttl_ms / 3",
        "lease.ttl_ms=2000\t",
    ] {
        error(&[text], "expected values without spaces or a `+` sign");
    }
    // An exponent's sign is not a leading one.
    check(&["lease.ttl_ms=2e+3"], &["lease.ttl_ms=2e+3"]);
}

fn fields(vary: &str, set: &[&str]) -> Result<(), String> {
    let set: Vec<Override> = set.iter().map(|o| Override::parse(o).unwrap()).collect();
    fencesim_tune::grid::check_fields(&[parse_vary(vary).unwrap()], &set)
}

/// Only timings vary; any other field is refused naming it and what can vary, and a field
/// given to both `--vary` and `--set` is refused naming both.
#[test]
fn only_timing_fields_vary_and_never_with_set() {
    for timing in fencesim_tune::grid::TIMING_FIELDS {
        assert_eq!(fields(&format!("{timing}=1,2"), &[]), Ok(()), "{timing}");
    }
    for field in [
        "name",
        "expect.safe",
        "storage.fencing",
        "lease.preset",
        "lease.on_restart",
        "workers.check_lease_before_write",
        "lease",
    ] {
        let error = fields(&format!("{field}=a,b"), &[]).unwrap_err();
        assert!(
            error.starts_with("a lease or worker timing field (lease.ttl_ms, ")
                && error.contains(&format!("got `{field}`")),
            "{field}: {error}"
        );
    }
    let error = fields("network.loss=0,0.1", &[]).unwrap_err();
    assert!(error.contains("part of the fault profile"), "{error}");
    for set in ["lease.ttl_ms=5000", "lease={ ttl_ms = 5000 }"] {
        let error = fields("lease.ttl_ms=2000,4000", &[set]).unwrap_err();
        assert_eq!(
            error,
            format!("each field in --vary or in --set, not both; got --vary lease.ttl_ms and --set {set}"),
        );
    }
    assert_eq!(
        fields("lease.ttl_ms=2000,4000", &["workers.renew_every_ms=500"]),
        Ok(())
    );
}

fn loader_error(expected: &str) -> ScenarioError {
    ScenarioError {
        file: "s.toml".into(),
        line: None,
        field: "lease.ttl_ms".into(),
        expected: expected.into(),
    }
}

/// A setting's error names the `--vary` the user typed (and the value a range or ratio made),
/// never a `--set` they did not give.
#[test]
fn setting_errors_blame_the_vary_the_user_typed() {
    let typed = |text: &str| (text.to_string(), parse_vary(text).unwrap());
    let varies = [
        typed("lease.ttl_ms=-3000..-1000:3"),
        typed("workers.renew_every_ms=lease.ttl_ms/3"),
    ];
    let setting = vec![
        ("lease.ttl_ms".to_string(), "-3000".to_string()),
        ("workers.renew_every_ms".to_string(), "-1000".to_string()),
    ];
    let set = [Override::parse("lease.expiry_check_ms=100").unwrap()];
    let blamed = |expected: &str| {
        fencesim_tune::grid::blame(loader_error(expected), &setting, &set, &varies).expected
    };
    assert_eq!(
        blamed("expected a positive number, got -3000 (from --set lease.ttl_ms=-3000)"),
        "expected a positive number, got -3000 (from --vary lease.ttl_ms=-3000..-1000:3, \
         the setting lease.ttl_ms=-3000)"
    );
    assert_eq!(
        blamed("expected x (with --set lease.expiry_check_ms=100, lease.ttl_ms=-3000, workers.renew_every_ms=-1000)"),
        "expected x (with --set lease.expiry_check_ms=100; --vary lease.ttl_ms=-3000..-1000:3, \
         the setting lease.ttl_ms=-3000; --vary workers.renew_every_ms=lease.ttl_ms/3, the \
         setting workers.renew_every_ms=-1000)"
    );
    // A real --set stays blamed on --set; a value typed as it is used is quoted alone.
    let own = "expected y (from --set lease.expiry_check_ms=100)";
    assert_eq!(blamed(own), own);
    let varies = [typed("lease.ttl_ms=0")];
    let setting = vec![("lease.ttl_ms".to_string(), "0".to_string())];
    let error = fencesim_tune::grid::blame(
        loader_error("expected positive, got 0 (from --set lease.ttl_ms=0)"),
        &setting,
        &[],
        &varies,
    );
    assert_eq!(
        error.expected,
        "expected positive, got 0 (from --vary lease.ttl_ms=0)"
    );
}
