//! The empirical distribution: how a file writes it, every mistake named at its line, its
//! inverse-CDF sampling (quantiles reproduced, deterministic), and its way back to a file.
//!
//! These tests edit `MINIMAL_TOML` (the smallest file users are shown) rather than start from
//! `fencesim_testkit::Spec`: the file's text, and the lines errors point at, are what they test.

use fencesim_model::rng::Rng;
use fencesim_scenario::*;
use proptest::prelude::*;
use rand::SeedableRng as _;

const WORK: &str = "work_ms = { dist = \"uniform\", min = 200, max = 800 }";

/// The minimal file with `workers.work_ms` written as `dist`.
fn with_work(dist: &str) -> String {
    let text = MINIMAL_TOML.replacen(WORK, &format!("work_ms = {dist}"), 1);
    assert_ne!(
        text, MINIMAL_TOML,
        "the minimal file writes work_ms as {WORK}"
    );
    text
}

fn work(dist: &str) -> Dist {
    match parse_str(&with_work(dist), "case.toml") {
        Ok(scenario) => scenario.workers.work_ms,
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn quantiles_and_samples_resolve_to_a_table() {
    assert_eq!(
        work("{ dist = \"empirical\", quantiles = [[0, 1], [0.5, 2], [0.5, 4], [1, 10]] }"),
        Dist::Empirical {
            quantiles: vec![[0.0, 1.0], [0.5, 2.0], [0.5, 4.0], [1.0, 10.0]]
        }
    );
    // Samples in any order become the sorted order statistics at p = i / (n - 1).
    assert_eq!(
        work("{ dist = \"empirical\", samples = [30, 10, 20] }"),
        Dist::Empirical {
            quantiles: vec![[0.0, 10.0], [0.5, 20.0], [1.0, 30.0]]
        }
    );
    // One sample is a constant.
    assert_eq!(
        work("{ dist = \"empirical\", samples = [7] }"),
        Dist::Empirical {
            quantiles: vec![[0.0, 7.0], [1.0, 7.0]]
        }
    );
    // A sub-table with a multi-line list, as `fencesim profile` prints it.
    let text = MINIMAL_TOML.replacen(
        WORK,
        "[workers.work_ms]\ndist = \"empirical\"\nquantiles = [\n  [0, 1],\n  [1, 3],\n]",
        1,
    );
    let text = text.replacen("[[faults.schedule]]", "\n[[faults.schedule]]", 1);
    let scenario = parse_str(&text, "case.toml").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(scenario.workers.work_ms.mean(), 2.0);
}

#[expect(
    clippy::too_many_lines,
    reason = "a table: one case per malformed table"
)]
#[test]
fn mistakes_are_named_at_their_line() {
    let max = limits::MAX_EMPIRICAL_POINTS;
    let too_many = format!(
        "{{ dist = \"empirical\", samples = [{}] }}",
        vec!["1"; max + 1].join(", ")
    );
    let cases: Vec<(String, &str, String)> = vec![
        (
            "{ dist = \"empirical\" }".into(),
            "workers.work_ms",
            "expected `quantiles = [[p, ms], ...]` or `samples = [ms, ...]`".into(),
        ),
        (
            "{ dist = \"empirical\", samples = [1], quantiles = [[0, 1], [1, 2]] }".into(),
            "workers.work_ms.samples",
            "not both".into(),
        ),
        (
            "{ dist = \"empirical\", samples = [1], mean = 3 }".into(),
            "workers.work_ms.mean",
            "expected no `mean` with dist = \"empirical\"".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1]] }".into(),
            "workers.work_ms.quantiles",
            format!("expected 2 to {max} points, got 1"),
        ),
        (
            too_many,
            "workers.work_ms.samples",
            format!("expected 1 to {max} points, got {}", max + 1),
        ),
        (
            "{ dist = \"empirical\", samples = [] }".into(),
            "workers.work_ms.samples",
            format!("expected 1 to {max} points, got 0"),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1], [0.5], [1, 2]] }".into(),
            "workers.work_ms.quantiles[1]",
            "expected a pair [p, ms], got 1 numbers".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1], [0.5, nan], [1, 2]] }".into(),
            "workers.work_ms.quantiles[1]",
            "expected a finite number, got NaN".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1], [1.5, 2]] }".into(),
            "workers.work_ms.quantiles[1]",
            "expected a probability in [0, 1], got 1.5".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1], [0.7, 3], [0.5, 4], [1, 5]] }".into(),
            "workers.work_ms.quantiles[2]",
            "expected p and ms non-decreasing, got [0.5, 4] after [0.7, 3]".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 5], [0.5, 3], [1, 6]] }".into(),
            "workers.work_ms.quantiles[1]",
            "expected p and ms non-decreasing, got [0.5, 3] after [0, 5]".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0.1, 1], [1, 2]] }".into(),
            "workers.work_ms.quantiles",
            "expected the first point's p to be 0 and the last's 1".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1], [0.9, 2]] }".into(),
            "workers.work_ms.quantiles",
            "got 0 and 0.9".into(),
        ),
        (
            "{ dist = \"empirical\", samples = [1, -2] }".into(),
            "workers.work_ms.samples[1]",
            "expected a non-negative number of milliseconds, got -2".into(),
        ),
        (
            "{ dist = \"empirical\", samples = [1, 604800001] }".into(),
            "workers.work_ms.samples[1]",
            "expected at most 604800000 ms (7 days)".into(),
        ),
        (
            "{ dist = \"empirical\", quantiles = [[0, 1], [1, 1e12]] }".into(),
            "workers.work_ms.quantiles[1]",
            "expected at most 604800000 ms (7 days)".into(),
        ),
        (
            "{ dist = \"empirical\", samples = \"1 2 3\" }".into(),
            "workers.work_ms.samples",
            "".into(),
        ),
    ];
    for (dist, field, expected) in cases {
        let text = with_work(&format!("{dist} # <-"));
        let line = text.lines().position(|line| line.contains("# <-")).unwrap() + 1;
        let error = match parse_str(&text, "case.toml") {
            Ok(_) => panic!("accepted {dist}"),
            Err(error) => error,
        };
        let shown = error.to_string();
        assert_eq!(error.field, field, "{shown}");
        assert_eq!(error.line, Some(line), "{shown}");
        assert!(
            error.expected.contains(&expected),
            "{expected:?} in {shown}"
        );
    }
}

#[test]
fn quantile_function_interpolates_and_jumps() {
    let table = [[0.0, 1.0], [0.5, 2.0], [0.5, 4.0], [1.0, 10.0]];
    for (p, expected) in [
        (0.0, 1.0),
        (0.25, 1.5),
        (0.4999, 1.9998),
        (0.5, 4.0),
        (0.75, 7.0),
        (1.0, 10.0),
        (-1.0, 1.0),
        (2.0, 10.0),
    ] {
        let got = empirical_quantile(&table, p);
        assert!(
            (got - expected).abs() < 1e-9,
            "q({p}) = {got}, expected {expected}"
        );
    }
    let dist = Dist::Empirical {
        quantiles: table.to_vec(),
    };
    // Mean: 0.5 * 1.5 + 0.5 * 7 (the jump has no width).
    assert!((dist.mean() - 4.25).abs() < 1e-12);
    assert_eq!(dist.high(), 10.0);
}

/// A table from proptest: 2 to 40 points, p from 0 to 1, both columns non-decreasing.
fn table() -> impl Strategy<Value = Vec<[f64; 2]>> {
    (
        prop::collection::vec((0.0f64..1.0, 0.0f64..1_000.0), 0..38),
        0.0f64..50.0,
    )
        .prop_map(|(inner, low)| {
            let mut ps: Vec<f64> = inner.iter().map(|&(p, _)| p).collect();
            let mut values: Vec<f64> = inner.iter().map(|&(_, ms)| low + ms).collect();
            ps.sort_by(f64::total_cmp);
            values.sort_by(f64::total_cmp);
            let mut points = vec![[0.0, low]];
            points.extend(ps.into_iter().zip(values).map(|(p, ms)| [p, ms]));
            let top = points.last().unwrap()[1] + 1.0;
            points.push([1.0, top]);
            points
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    /// 100 000 draws reproduce the table's quantiles within sampling error: the empirical
    /// CDF of the draws just below and at each table value is within 5 binomial standard
    /// errors of the table's p (a value repeated over a range of p is an atom: below it the
    /// CDF is its lowest p, at it the highest).
    #[test]
    fn draws_reproduce_the_tables_quantiles(quantiles in table(), seed in any::<u64>()) {
        let dist = Dist::Empirical { quantiles: quantiles.clone() };
        let mut rng = Rng::seed_from_u64(seed);
        const DRAWS: usize = 100_000;
        let mut draws: Vec<f64> = (0..DRAWS).map(|_| dist.sample(&mut rng)).collect();
        draws.sort_by(f64::total_cmp);
        let (low, high) = (quantiles[0][1], quantiles[quantiles.len() - 1][1]);
        prop_assert!(draws[0] >= low && draws[DRAWS - 1] <= high);
        for &[p, ms] in &quantiles {
            // Where the table is flat in ms (or jumps in p) the CDF at ms is a range.
            let p_low = quantiles.iter().filter(|point| point[1] == ms).map(|point| point[0]).fold(p, f64::min);
            let p_high = quantiles.iter().filter(|point| point[1] == ms).map(|point| point[0]).fold(p, f64::max);
            let below = draws.partition_point(|&draw| draw < ms) as f64 / DRAWS as f64;
            let at_most = draws.partition_point(|&draw| draw <= ms) as f64 / DRAWS as f64;
            let error = 5.0 * (0.25 / DRAWS as f64).sqrt();
            prop_assert!((below - p_low).abs() <= error, "P(X < {ms}) = {below}, table p {p_low}");
            prop_assert!((at_most - p_high).abs() <= error, "P(X <= {ms}) = {at_most}, table p {p_high}");
        }
        // The sample quantiles follow the interpolated quantile function.
        for p in [0.1, 0.5, 0.9, 0.99] {
            let drawn = draws[(p * (DRAWS - 1) as f64) as usize];
            let lower = empirical_quantile(&quantiles, (p - 0.01).max(0.0));
            let upper = empirical_quantile(&quantiles, (p + 0.01).min(1.0));
            prop_assert!(drawn >= lower && drawn <= upper, "p{p}: drew {drawn}, table {lower}..{upper}");
        }
    }

    #[test]
    fn same_seed_same_draws(quantiles in table(), seed in any::<u64>()) {
        let dist = Dist::Empirical { quantiles };
        let draw = |seed| {
            let mut rng = Rng::seed_from_u64(seed);
            (0..1_000).map(|_| dist.sample(&mut rng)).collect::<Vec<f64>>()
        };
        prop_assert_eq!(draw(seed), draw(seed));
        prop_assert_ne!(draw(seed), draw(seed.wrapping_add(1)));
    }

    /// A table renders to a file that parses to the same table, bit for bit.
    #[test]
    fn renders_back_to_itself(quantiles in table()) {
        let mut scenario = parse_str(MINIMAL_TOML, "minimal.toml").unwrap();
        scenario.workers.work_ms = Dist::Empirical { quantiles };
        let text = scenario_toml(&scenario);
        let back = parse_str(&text, "rendered.toml").unwrap_or_else(|error| panic!("{error}\n{text}"));
        prop_assert_eq!(back.hash(), scenario.hash());
        prop_assert_eq!(back, scenario);
    }
}
