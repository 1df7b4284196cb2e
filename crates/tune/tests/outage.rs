//! `--survive-outage-ms` judged for real, end to end through `fencesim_tune`: on the
//! client-go profile without an outage of its own, `tune` adds one (the lease service down,
//! and the holder's link to it cut) to every seed of every setting and judges survival there.
//! The stock 15 s / 10 s stands down under a 60 s cut; 95 s / 63.65 s survives 60 s but not
//! 90 s (a target longer than the profile's outages is not "met" by default); 137 s / 107 s
//! with a 26 s retry stands down 13 s after a 90 s outage ended, which still counts as caused
//! by it. And the outage in the profile or added by `--survive-outage-ms` is judged by the
//! same definition (the checker's), so both give the same answer.

use fencesim_scenario::SeedRange;
use fencesim_tune::report::{Decision, Targets, TuneReport};

/// scenarios/tune/client-go-outage.toml without its scheduled coordinator restart: the
/// profile holds no outage, so every outage target has to be judged on added ones.
fn profile() -> String {
    let path = fencesim_testkit::catalogue_path("tune/client-go-outage");
    let text = std::fs::read_to_string(path).unwrap();
    let without = text.replace(
        "[[faults.schedule]]\nat_ms = 60_000\nkind = \"coordinator-restart\"\nduration_ms = 60_000\n",
        "",
    );
    assert_ne!(text, without, "the profile's scheduled outage was removed");
    without
}

/// A fixed 4-seed tune of `settings` (each a list of `field=value`; the grid is the product
/// of the fields' values, so pass one setting) with an outage target.
fn tune(settings: &[&[&str]], survive_ms: u64) -> TuneReport {
    let fields: Vec<&str> = settings[0]
        .iter()
        .map(|kv| kv.split_once('=').unwrap().0)
        .collect();
    let varies: Vec<(String, fencesim_tune::Vary)> = fields
        .iter()
        .enumerate()
        .map(|(k, field)| {
            let values: Vec<&str> = settings
                .iter()
                .map(|s| s[k].split_once('=').unwrap().1)
                .collect();
            let text = format!("{field}={}", values.join(","));
            let vary = fencesim_tune::parse_vary(&text).unwrap();
            (text, vary)
        })
        .collect();
    let mut sweep = fencesim_tune::prepare(
        &profile(),
        "client-go-no-outage.toml",
        &[],
        &varies,
        Some(SeedRange { start: 0, end: 4 }),
        Some(4),
        Targets {
            survive_outage_ms: Some(survive_ms),
            ..Targets::default()
        },
    )
    .unwrap();
    fencesim_tune::add_outages(&mut sweep).unwrap();
    assert!(!sweep.outage_in_profile, "the profile holds no outage");
    assert_eq!(
        sweep.outages.len(),
        2,
        "both forms added: {:?}",
        sweep.outage_added
    );
    let components = fencesim_sim::runner::Components::default();
    fencesim_tune::run(&sweep, 2, &components, &|_, _| {})
}

fn row<'a>(report: &'a TuneReport, label: &str) -> &'a fencesim_tune::report::SettingResult {
    report
        .settings
        .iter()
        .find(|s| s.label() == label)
        .unwrap_or_else(|| panic!("no setting {label} in {:?}", labels(report)))
}

fn labels(report: &TuneReport) -> Vec<String> {
    report.settings.iter().map(|s| s.label()).collect()
}

#[test]
fn item_1_the_stock_client_go_timings_fail_a_60_s_cut_of_the_holders_link() {
    let report = tune(
        &[&["lease.ttl_ms=15000", "workers.renew_deadline_ms=10000"]],
        60_000,
    );
    let s = row(
        &report,
        "lease.ttl_ms=15000 workers.renew_deadline_ms=10000",
    );
    assert_eq!(s.outage, Decision::Fails, "{}", s.verdict);
    assert!(!s.meets_targets);
    for run in &s.outage_runs {
        assert_eq!(
            run.failed_seeds.seeds, 4,
            "{}: every seed stands down and is taken over: {run:?}",
            run.form
        );
        assert!(run.stand_downs >= 4, "{run:?}");
        if run.form == "holder-link-cut" {
            // The service is up, so a candidate takes over the stood-down holder's lease
            // (with the service down nobody can, until it returns).
            assert!(run.takeovers >= 4, "{run:?}");
        }
    }
    assert!(
        s.outage_runs.iter().any(|r| r.form == "holder-link-cut"),
        "{:?}",
        s.outage_runs
    );
    assert_eq!(report.recommendation.setting, None);
}

#[test]
fn item_2_a_target_longer_than_the_profiles_outages_is_judged_on_an_added_one() {
    let survives_60 = tune(
        &[&["lease.ttl_ms=95000", "workers.renew_deadline_ms=63650"]],
        60_000,
    );
    let label = "lease.ttl_ms=95000 workers.renew_deadline_ms=63650";
    let s = row(&survives_60, label);
    // Survived in all 4 seeds: too few to exclude a 1 % failure share, so still open.
    assert_eq!(s.outage, Decision::Open, "{}", s.verdict);
    assert!(s
        .verdict
        .contains("too few seeds to exclude a 1 % failure share"));
    assert!(
        s.outage_runs.iter().all(|r| r.failed_seeds.seeds == 0),
        "{:?}",
        s.outage_runs
    );
    let fails_90 = tune(
        &[&["lease.ttl_ms=95000", "workers.renew_deadline_ms=63650"]],
        90_000,
    );
    let s = row(&fails_90, label);
    assert_eq!(s.outage, Decision::Fails, "{}", s.verdict);
    // At least 3 of the 4 seeds stand down (a seed whose outage begins while the holder is
    // crashed has no holder to cut off).
    assert!(
        s.outage_runs.iter().all(|r| r.failed_seeds.seeds >= 3),
        "{:?}",
        s.outage_runs
    );
}

#[test]
fn item_3_a_stand_down_landing_after_the_outage_ended_is_caused_by_it() {
    let report = tune(
        &[&[
            "lease.ttl_ms=137000",
            "workers.renew_deadline_ms=107000",
            "workers.renew_every_ms=26000",
        ]],
        90_000,
    );
    let s = row(
        &report,
        "lease.ttl_ms=137000 workers.renew_deadline_ms=107000 workers.renew_every_ms=26000",
    );
    let down = s
        .outage_runs
        .iter()
        .find(|r| r.form == "service-down")
        .expect("the service-down form ran");
    // 3 of the 4 seeds stand down after the service returned (the fourth has no holder when
    // the outage begins); counting only stand-downs inside the outage finds 1 of 4.
    assert!(
        down.failed_seeds.seeds >= 3 && down.stand_downs >= 3,
        "the deadline passes after the service returned; still the outage's doing: {down:?}"
    );
    assert_eq!(s.outage, Decision::Fails, "{}", s.verdict);
}

/// The client-go profile with crashes and a 60 s cut of the holder's link
/// (scenarios/tune/client-go-link-cut.toml), judged with the cut in the profile and, without
/// it, with the same cut added by `--survive-outage-ms 60000`: the same decisions and the
/// same recommendation. Seeds 44..54 hold holders that crash inside the cut (46 and 52),
/// whose takeovers once failed the added-outage path alone ("none" against 95 s).
#[test]
fn the_outage_in_the_profile_and_the_outage_added_give_the_same_answer() {
    let path = fencesim_testkit::catalogue_path("tune/client-go-link-cut");
    let with_cut = std::fs::read_to_string(&path).unwrap();
    let block = "[faults.outage]\nform = \"holder-link-cut\"\nduration_ms = 60_000\n";
    let without = with_cut.replace(block, "");
    assert_ne!(with_cut, without, "the profile's cut was removed");
    let vary = [
        "lease.ttl_ms=60000,95000,120000",
        "workers.renew_deadline_ms=lease.ttl_ms*0.67",
    ];
    let sweep = |text: &str| {
        let varies: Vec<(String, fencesim_tune::Vary)> = vary
            .iter()
            .map(|v| (v.to_string(), fencesim_tune::parse_vary(v).unwrap()))
            .collect();
        let mut sweep = fencesim_tune::prepare(
            text,
            "client-go-link-cut.toml",
            &[],
            &varies,
            Some(SeedRange { start: 44, end: 54 }),
            Some(10),
            Targets {
                survive_outage_ms: Some(60_000),
                // Ten seeds cannot exclude a 1 % failure share: judge on the count alone, so
                // each path has an answer to compare.
                decide: fencesim_tune::report::DecideRule::Mean,
                ..Targets::default()
            },
        )
        .unwrap();
        fencesim_tune::add_outages(&mut sweep).unwrap();
        sweep
    };
    let (in_profile, added) = (sweep(&with_cut), sweep(&without));
    assert!(in_profile.outage_in_profile && in_profile.outages.is_empty());
    assert!(!added.outage_in_profile && added.outages.len() == 2);
    let components = fencesim_sim::runner::Components::default();
    let a = fencesim_tune::run(&in_profile, 2, &components, &|_, _| {});
    let b = fencesim_tune::run(&added, 2, &components, &|_, _| {});
    let decisions = |r: &TuneReport| -> Vec<(String, Decision, bool)> {
        r.settings
            .iter()
            .map(|s| (s.label(), s.outage, s.meets_targets))
            .collect()
    };
    assert_eq!(decisions(&a), decisions(&b), "{a:#?}\n{b:#?}");
    let pick = |r: &TuneReport| r.recommendation.setting.map(|i| r.settings[i].label());
    assert_eq!(
        pick(&a),
        pick(&b),
        "{}\n{}",
        a.recommendation.reason,
        b.recommendation.reason
    );
    assert_eq!(
        pick(&a).as_deref(),
        Some("lease.ttl_ms=95000 workers.renew_deadline_ms=63650")
    );
    // 60 s / 40.2 s stands down in the cut on both paths.
    assert_eq!(a.settings[0].outage, Decision::Fails);
}
