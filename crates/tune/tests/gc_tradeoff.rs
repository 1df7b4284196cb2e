//! On the JVM GC profile, a small TTL grid over the same seeds shows the
//! trade-off — false expiries fall and takeover latency rises as the TTL grows.

use fencesim_scenario::SeedRange;
use fencesim_tune::report::Targets;

#[test]
fn on_the_gc_profile_false_expiries_fall_and_takeover_latency_rises_with_the_ttl() {
    let path = fencesim_testkit::catalogue_path("tune/jvm-gc");
    let text = std::fs::read_to_string(&path).unwrap();
    let vary = "lease.ttl_ms=2000,6000,16000";
    let sweep = fencesim_tune::prepare(
        &text,
        path.to_str().unwrap(),
        &[],
        &[(vary.to_string(), fencesim_tune::parse_vary(vary).unwrap())],
        Some(SeedRange::parse("0..80").unwrap()),
        Some(80),
        Targets::default(),
    )
    .unwrap();
    let components = fencesim_sim::runner::Components::default();
    let report = fencesim_tune::run(&sweep, 2, &components, &|_, _| {});
    let s = &report.settings;
    assert_eq!(s.len(), 3);
    for pair in s.windows(2) {
        let (short, long) = (&pair[0], &pair[1]);
        let what = format!("{} → {}", short.label(), long.label());
        assert!(
            short.false_expiries.per_hour > long.false_expiries.per_hour,
            "false expiries fall, {what}: {:?} vs {:?}",
            short.false_expiries,
            long.false_expiries
        );
        let (a, b) = (
            &short.recovery_after_crash_ms,
            &long.recovery_after_crash_ms,
        );
        assert!(
            a.count >= 20 && b.count >= 20,
            "enough crash samples, {what}"
        );
        assert!(a.p50 < b.p50, "recovery p50 rises, {what}: {a:?} vs {b:?}");
        assert!(
            short.takeover_ms.p50 < long.takeover_ms.p50,
            "takeover p50 rises, {what}"
        );
    }
    // p99s are not compared: under 368 samples a p99 has no upper bound, and with crashes
    // queued behind pauses the tail mixes restart times with the TTL.
    // Not luck: the extremes' intervals do not overlap.
    assert!(s[0].false_expiries.low > s[2].false_expiries.high);
    assert!(s[0].recovery_after_crash_ms.p50_high < s[2].recovery_after_crash_ms.p50_low);
    // Safety holds whatever the TTL (same-store-txn), and renewal load falls with the TTL.
    assert!(s.iter().all(|s| s.unsafe_seeds.seeds == 0));
    assert!(s[0].renewals_per_lease_per_s.mean > s[2].renewals_per_lease_per_s.mean);
}
