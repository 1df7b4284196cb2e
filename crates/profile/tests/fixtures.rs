//! On the committed logs, made by a real JVM and a real Go runtime (fixtures/make.sh): the
//! profile's p50, p90, p99 and max pause and its rate equal the log's within 1 %, the log
//! being read here by a separate, simpler scan than the crate's parsers.
//!
//! A profile is validated as a user would use it: its block pasted into `MINIMAL_TOML`, the
//! smallest file users are shown (not `fencesim_testkit::Spec`).

use std::path::PathBuf;

use fencesim_profile::{Block, Data, GcOptions, Profile, Target, MAX_INPUT_BYTES};
use fencesim_scenario::{empirical_quantile, parse_str, Dist, FaultKind, MINIMAL_TOML};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// Linear interpolation between order statistics, written out again for the test.
fn quantile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let position = p * (sorted.len() - 1) as f64;
    let below = position as usize;
    if below + 1 >= sorted.len() {
        return sorted[sorted.len() - 1];
    }
    let weight = position - below as f64;
    sorted[below] * (1.0 - weight) + sorted[below + 1] * weight
}

fn within_one_percent(what: &str, profile: f64, log: f64) {
    let error = (profile - log).abs() / log.abs().max(1e-9);
    assert!(
        error <= 0.01,
        "{what}: profile {profile}, log {log} ({:.3} % apart)",
        100.0 * error
    );
}

/// Compares a block with the log's pauses and rate: the block's distribution (and the same
/// distribution as the printed TOML gives it back) at p50/p90/p99/max, and its rate.
fn compare(block: &Block, printed: &Dist, pauses: &[f64], span_s: f64) {
    assert!(
        pauses.len() >= 5,
        "{}: only {} pauses",
        block.title,
        pauses.len()
    );
    let Dist::Empirical { quantiles } = &block.dist else {
        panic!("not empirical")
    };
    let Dist::Empirical { quantiles: back } = printed else {
        panic!("printed dist not empirical")
    };
    for p in [0.5, 0.9, 0.99, 1.0] {
        let log = quantile(pauses, p);
        within_one_percent(
            &format!("{} p{p}", block.title),
            empirical_quantile(quantiles, p),
            log,
        );
        within_one_percent(
            &format!("{} printed p{p}", block.title),
            empirical_quantile(back, p),
            log,
        );
    }
    let rate = pauses.len() as f64 / (span_s / 60.0);
    within_one_percent(
        &format!("{} rate", block.title),
        block.rate_per_min_each().unwrap(),
        rate,
    );
    let Target::Fault { kind, count, .. } = block.target else {
        panic!("not a fault block")
    };
    assert_eq!(kind, FaultKind::GcPause);
    assert_eq!(count, pauses.len());
}

/// The profile's TOML pasted into the minimal scenario: it must validate, and it gives back
/// each block's distribution and rate.
fn pasted(profile: &Profile) -> Vec<(f64, Dist)> {
    let text = format!("{MINIMAL_TOML}\n{}", profile.toml());
    let scenario = parse_str(&text, "pasted.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    scenario
        .faults
        .random
        .iter()
        .map(|entry| (entry.rate_per_min, entry.duration_ms.clone()))
        .collect()
}

/// `[12.345s]` at the start of a line, in seconds.
fn uptime_s(line: &str) -> Option<f64> {
    let inside = line.strip_prefix('[')?.split(']').next()?;
    inside.strip_suffix('s')?.parse().ok()
}

/// Every pause of a JVM log by a plain scan: lines with `Pause ` whose last word is `<n>ms`.
fn jvm_scan(text: &str) -> (Vec<f64>, Vec<f64>, f64) {
    let (mut other, mut full) = (Vec::new(), Vec::new());
    let times: Vec<f64> = text.lines().filter_map(uptime_s).collect();
    for line in text.lines() {
        if !line.contains(" Pause ") {
            continue;
        }
        let last = line.split(' ').next_back().unwrap();
        let Some(ms) = last
            .strip_suffix("ms")
            .and_then(|ms| ms.parse::<f64>().ok())
        else {
            continue;
        };
        if line.contains("Pause Full") || line.contains("Pause Degenerated") {
            full.push(ms);
        } else {
            other.push(ms);
        }
    }
    let span = times.iter().cloned().fold(f64::MIN, f64::max)
        - times.iter().cloned().fold(f64::MAX, f64::min);
    (other, full, span)
}

fn jvm_profile(name: &str) -> Profile {
    let file = std::fs::File::open(fixture(name)).unwrap();
    fencesim_profile::jvm_gc(file, name, MAX_INPUT_BYTES, GcOptions { workers: 1 })
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn jvm_g1_profile_matches_the_log() {
    let name = "jvm-g1-gc-star.log";
    let (other, full, span) = jvm_scan(&read(name));
    let profile = jvm_profile(name);
    assert!(profile.heading.starts_with("G1"), "{}", profile.heading);
    assert_eq!(
        profile.blocks.len(),
        2,
        "young and full pauses: {:?}",
        profile.heading
    );
    assert!(!full.is_empty(), "the G1 fixture has full collections");
    let back = pasted(&profile);
    compare(&profile.blocks[0], &back[0].1, &other, span);
    compare(&profile.blocks[1], &back[1].1, &full, span);
    assert_eq!(back[0].0, profile.blocks[0].rate_per_min().unwrap());
    // Every line is accounted for, and a `-Xlog:gc*` log has no line the parser cannot read.
    let report = &profile.report;
    assert_eq!(report.lines, read(name).lines().count());
    assert_eq!(report.used, other.len() + full.len());
    assert_eq!(report.used + report.skipped + report.unusable, report.lines);
    assert_eq!(report.unusable, 0, "{}", report.describe(name));
}

#[test]
fn jvm_second_collector_profiles_match_their_logs() {
    for (name, collector) in [
        ("jvm-shenandoah-gc.log", "Shenandoah"),
        ("jvm-zgc-gc-star.log", "The Z Garbage Collector"),
    ] {
        let (other, full, span) = jvm_scan(&read(name));
        let profile = jvm_profile(name);
        assert!(
            profile.heading.starts_with(collector),
            "{}",
            profile.heading
        );
        let back = pasted(&profile);
        compare(&profile.blocks[0], &back[0].1, &other, span);
        if !full.is_empty() {
            compare(&profile.blocks[1], &back[1].1, &full, span);
        }
        assert_eq!(
            profile.report.unusable,
            0,
            "{}",
            profile.report.describe(name)
        );
    }
}

#[test]
fn go_profile_matches_the_trace() {
    let name = "go-gctrace.log";
    let text = read(name);
    let mut pauses = Vec::new();
    let mut span = 0.0f64;
    for line in text.lines().filter(|line| line.starts_with("gc ")) {
        let words: Vec<&str> = line.split(' ').collect();
        let at: f64 = words[2][1..words[2].len() - 1].parse().unwrap();
        let clock = words[words.iter().position(|w| *w == "clock,").unwrap() - 2];
        let phases: Vec<f64> = clock.split('+').map(|p| p.parse().unwrap()).collect();
        pauses.push(phases[0]);
        pauses.push(phases[2]);
        span = span.max(at + phases.iter().sum::<f64>() / 1e3);
    }
    let file = std::fs::File::open(fixture(name)).unwrap();
    let profile = fencesim_profile::go_gc(file, name, MAX_INPUT_BYTES, GcOptions { workers: 1 })
        .unwrap_or_else(|e| panic!("{e}"));
    let back = pasted(&profile);
    compare(&profile.blocks[0], &back[0].1, &pauses, span);
    // The program's own last line is not a gctrace line: counted, shown, not dropped.
    assert!(
        profile.report.unusable <= 1,
        "{}",
        profile.report.describe(name)
    );
}

#[test]
fn workers_multiply_the_rate() {
    let name = "jvm-g1-gc-star.log";
    let one = jvm_profile(name);
    let file = std::fs::File::open(fixture(name)).unwrap();
    let three =
        fencesim_profile::jvm_gc(file, name, MAX_INPUT_BYTES, GcOptions { workers: 3 }).unwrap();
    let (rate_one, rate_three) = (
        one.blocks[0].rate_per_min().unwrap(),
        three.blocks[0].rate_per_min().unwrap(),
    );
    assert!(
        (rate_three / (3.0 * rate_one) - 1.0).abs() < 1e-5,
        "{rate_one} x 3 != {rate_three}"
    );
    assert_eq!(one.blocks[0].dist, three.blocks[0].dist);
}

#[test]
fn fit_summary_compares_data_with_draws() {
    let profile = jvm_profile("jvm-g1-gc-star.log");
    let block = &profile.blocks[0];
    let compared = block.fit();
    let Data::Samples(samples) = &block.data else {
        panic!()
    };
    assert_eq!(compared.len(), 4);
    for c in &compared {
        assert_eq!(c.data_ms, fencesim_stats::quantile(samples, c.p));
        // Each drawn quantile is within sampling error of the table's: between its quantiles
        // at p ± 0.005 (for 100 000 draws a binomial standard error in p is at most 0.0016).
        let low = fencesim_stats::quantile(samples, (c.p - 0.005).max(0.0));
        let high = fencesim_stats::quantile(samples, (c.p + 0.005).min(1.0));
        assert!(
            c.drawn_ms >= low && c.drawn_ms <= high,
            "drawn p{} {} outside the data's [{low}, {high}]",
            c.p,
            c.drawn_ms
        );
    }
    let lines = profile.fit_lines();
    assert!(
        lines[0].contains("p50 ") && lines[0].contains("max "),
        "{lines:?}"
    );
}

/// `histogram_quantile` written out again: linear within the bucket holding rank p·N.
fn histogram_quantile(buckets: &[(f64, f64)], p: f64) -> f64 {
    let total = buckets.last().unwrap().1;
    let rank = p * total;
    let mut lower = (0.0, 0.0);
    for &(le, count) in buckets {
        if count >= rank && count > lower.1 {
            if le.is_infinite() {
                return lower.0;
            }
            return lower.0 + (le - lower.0) * (rank - lower.1) / (count - lower.1);
        }
        lower = (le, count);
    }
    lower.0
}

#[test]
fn etcd_lease_grant_histogram_profile_matches_histogram_quantile() {
    let name = "etcd-metrics.prom";
    let text = read(name);
    let mut buckets = Vec::new();
    for line in text.lines() {
        if line.starts_with("grpc_server_handling_seconds_bucket{")
            && line.contains("grpc_method=\"LeaseGrant\"")
        {
            let le = line
                .split("le=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse::<f64>().unwrap() * 1e3
            };
            let count: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
            buckets.push((le, count));
        }
    }
    assert!(buckets.len() > 5);
    let file = std::fs::File::open(fixture(name)).unwrap();
    let profile = fencesim_profile::prometheus(
        file,
        name,
        MAX_INPUT_BYTES,
        Some("grpc_server_handling_seconds"),
        &[("grpc_method".into(), "LeaseGrant".into())],
        None,
        fencesim_profile::Measures::OneWay,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        profile.heading.contains("300 observations"),
        "{}",
        profile.heading
    );
    assert!(
        profile.notes[0].contains("interpolated linearly"),
        "{:?}",
        profile.notes
    );
    let Dist::Empirical { quantiles } = &profile.blocks[0].dist else {
        panic!()
    };
    for p in [0.1, 0.5, 0.9, 0.99] {
        within_one_percent(
            &format!("p{p}"),
            empirical_quantile(quantiles, p),
            histogram_quantile(&buckets, p),
        );
    }
    // The block validates as the network's latency.
    let text = format!("{MINIMAL_TOML}\n{}", profile.toml());
    let scenario = parse_str(&text, "pasted.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(scenario.network.latency.base, profile.blocks[0].dist);
    // Round trips give each message half.
    let file = std::fs::File::open(fixture(name)).unwrap();
    let halved = fencesim_profile::prometheus(
        file,
        name,
        MAX_INPUT_BYTES,
        Some("grpc_server_handling_seconds"),
        &[("grpc_method".into(), "LeaseGrant".into())],
        None,
        fencesim_profile::Measures::RoundTrip,
    )
    .unwrap();
    let Dist::Empirical { quantiles: half } = &halved.blocks[0].dist else {
        panic!()
    };
    let median = empirical_quantile(quantiles, 0.5);
    within_one_percent("halved median", empirical_quantile(half, 0.5), median / 2.0);
}

#[test]
fn outage_record_profile() {
    let name = "lease-service-outages.csv";
    let file = std::fs::File::open(fixture(name)).unwrap();
    let profile = fencesim_profile::outages(
        file,
        name,
        MAX_INPUT_BYTES,
        fencesim_profile::OutageTarget::Service,
        Some(366.0 * 24.0),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let block = &profile.blocks[0];
    let Target::Fault { kind, count, .. } = block.target else {
        panic!()
    };
    assert_eq!(kind, FaultKind::CoordinatorRestart);
    assert_eq!(count, 12);
    within_one_percent(
        "rate",
        block.rate_per_min().unwrap(),
        12.0 / (366.0 * 24.0 * 60.0),
    );
    let Data::Samples(lengths) = &block.data else {
        panic!()
    };
    // The longest: 05:58:30 to 06:01:02; the shortest 1.1 s.
    assert_eq!(lengths[lengths.len() - 1], 152_000.0);
    assert_eq!(lengths[0], 1_100.0);
    assert_eq!(
        profile.report.unusable,
        0,
        "{}",
        profile.report.describe(name)
    );
    let back = pasted(&profile);
    assert_eq!(back[0].1, block.dist);
}
