//! The recommendation, the Pareto front, and the rules of thumb.
//!
//! A setting **meets the targets** when it is safe (no seed violates I3 or I4, none panics),
//! its mean false expiries per hour is at most `--max-false-expiry-per-hour`, and, with
//! `--survive-outage-ms D`, no holder stood down while the lease service was down. The
//! **recommendation** is the setting meeting them with the lowest takeover p99 (recovery
//! after a crash, else after a stall, else takeover latency; a setting without any sample
//! ranks last); ties go to fewer false expiries + stand-downs, then to grid order.
//!
//! The **rules of thumb** judge each setting from the configuration and the fault profile
//! alone: renew interval ≤ TTL/3 (etcd keepalive); client-go's ordering LeaseDuration ≥
//! RenewDeadline > 1.2 × RetryPeriod (equality of the first two is accepted because
//! fencesim's default deadline is the TTL counted from the request's sending, which already
//! precedes the service's expiry); TTL > longest pause + renew interval + round trip; and
//! for an outage target D, not stopping at the first failed renewal and RenewDeadline > D +
//! renew interval. They pick the shortest TTL passing every rule.

use fencesim_report::tune::{round, Pick, RuleCheck, SettingResult, TuneReport};
use fencesim_scenario::Scenario;

fn disruption(s: &SettingResult) -> f64 {
    s.false_expiries_per_hour.mean + s.stand_downs_per_hour.mean
}

fn fmt_ms(x: Option<f64>) -> String {
    x.map_or("no sample".to_string(), |x| format!("{x} ms"))
}

/// Fills verdicts, rules, Pareto front, recommendation, rule-of-thumb pick, disagreements
/// and warnings of `report`; `scenarios` are the settings' resolved scenarios.
pub fn recommend(report: &mut TuneReport, scenarios: &[&Scenario]) {
    let targets = report.targets.clone();
    let profile = report.profile.clone();
    for (s, scenario) in report.settings.iter_mut().zip(scenarios) {
        let mut failures = Vec::new();
        if s.unsafe_seeds.seeds > 0 {
            failures.push(format!(
                "unsafe in {} of {} seeds (I3 {}, I4 {}, panics {})",
                s.unsafe_seeds.seeds, s.runs, s.seeds_violating_i3, s.seeds_violating_i4, s.panics
            ));
        }
        if let Some(max) = targets.max_false_expiry_per_hour {
            if s.false_expiries_per_hour.mean > max {
                failures.push(format!(
                    "{} false expiries/h > {max}",
                    s.false_expiries_per_hour.mean
                ));
            }
        }
        if targets.survive_outage_ms.is_some() && s.outage_stand_downs > 0 {
            failures.push(format!(
                "{} stand-downs during lease-service outages",
                s.outage_stand_downs
            ));
        }
        s.meets_targets = failures.is_empty();
        s.verdict = if failures.is_empty() {
            format!(
                "meets the targets; takeover p99 {}",
                fmt_ms(s.takeover_p99_ms())
            )
        } else {
            format!("fails: {}", failures.join("; "))
        };
        let ttl = s.ttl_ms as f64;
        let renew = s.renew_every_ms as f64;
        let deadline = s.renew_deadline_ms as f64;
        let keepalive_third = s.renew_every_ms <= s.ttl_ms.div_ceil(3);
        let client_go_ordering = ttl >= deadline && deadline > 1.2 * renew;
        let outlives_longest_pause = ttl > profile.longest_pause_ms + renew + profile.round_trip_ms;
        let outlives_outage = targets
            .survive_outage_ms
            .is_none_or(|d| !scenario.workers.stop_on_renew_failure && deadline > d as f64 + renew);
        s.rules = RuleCheck {
            keepalive_third,
            client_go_ordering,
            outlives_longest_pause,
            outlives_outage,
            ok: keepalive_third && client_go_ordering && outlives_longest_pause && outlives_outage,
        };
    }

    // Pareto front over (takeover p99, disruption), both lower is better.
    let points: Vec<(usize, f64, f64)> = report
        .settings
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.takeover_p99_ms().map(|x| (i, x, disruption(s))))
        .collect();
    report.pareto = points
        .iter()
        .filter(|&&(i, x, y)| {
            !points
                .iter()
                .any(|&(j, x2, y2)| j != i && x2 <= x && y2 <= y && (x2 < x || y2 < y))
        })
        .map(|p| p.0)
        .collect();

    let key = |i: usize| {
        let s = &report.settings[i];
        (
            s.takeover_p99_ms().unwrap_or(f64::INFINITY),
            disruption(s),
            i,
        )
    };
    let meeting: Vec<usize> = (0..report.settings.len())
        .filter(|&i| report.settings[i].meets_targets)
        .collect();
    let best = meeting.iter().copied().min_by(|&a, &b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.cmp(&kb.2))
    });
    report.recommendation = match best {
        Some(i) => {
            let s = &report.settings[i];
            Pick {
                setting: Some(i),
                reason: format!(
                    "the lowest takeover p99 ({}) of the {} of {} settings that meet the targets; \
                     {} false expiries/h, {} stand-downs/h, unavailability {}",
                    fmt_ms(s.takeover_p99_ms()),
                    meeting.len(),
                    report.settings.len(),
                    s.false_expiries_per_hour.mean,
                    s.stand_downs_per_hour.mean,
                    s.unavailability.mean
                ),
            }
        }
        None => Pick {
            setting: None,
            reason: "no setting meets the targets: widen the grid or relax a target".into(),
        },
    };
    report.neighbours = match best {
        Some(i) => [i.checked_sub(1), Some(i + 1)]
            .into_iter()
            .flatten()
            .filter(|&j| j < report.settings.len())
            .collect(),
        None => Vec::new(),
    };

    let rule_pick = (0..report.settings.len())
        .filter(|&i| report.settings[i].rules.ok)
        .min_by_key(|&i| (report.settings[i].ttl_ms, i));
    report.rule_of_thumb = Pick {
        setting: rule_pick,
        reason: format!(
            "the shortest TTL with renew ≤ TTL/3, TTL ≥ RenewDeadline > 1.2 × renew interval, \
             TTL > longest pause ({} ms) + renew interval + round trip ({} ms){}",
            profile.longest_pause_ms,
            profile.round_trip_ms,
            targets.survive_outage_ms.map_or(String::new(), |d| format!(
                ", and RenewDeadline > outage ({d} ms) + renew interval without stopping at the first failed renewal"
            ))
        ),
    };
    let mut disagreements = Vec::new();
    for s in &report.settings {
        let r = &s.rules;
        let broken: Vec<&str> = [
            (!r.keepalive_third, "renew ≤ TTL/3"),
            (!r.client_go_ordering, "client-go ordering"),
            (
                !r.outlives_longest_pause,
                "TTL > longest pause + renew + RTT",
            ),
            (!r.outlives_outage, "RenewDeadline > outage + renew"),
        ]
        .into_iter()
        .filter_map(|(b, name)| b.then_some(name))
        .collect();
        match (r.ok, s.meets_targets) {
            (true, false) => disagreements.push(format!(
                "{}: the rules accept it, the simulation does not ({})",
                s.label(),
                s.verdict
            )),
            (false, true) => disagreements.push(format!(
                "{}: the rules reject it ({}), the simulation finds it meets the targets",
                s.label(),
                broken.join(", ")
            )),
            _ => {}
        }
    }
    report.disagreements = disagreements;
    if let (Some(r), Some(t)) = (report.recommendation.setting, report.rule_of_thumb.setting) {
        if r != t {
            let (rs, ts) = (&report.settings[r], &report.settings[t]);
            report.disagreements.insert(
                0,
                format!(
                    "the simulation picks {} (takeover p99 {}), the rules pick {} (takeover p99 {})",
                    rs.label(),
                    fmt_ms(rs.takeover_p99_ms()),
                    ts.label(),
                    fmt_ms(ts.takeover_p99_ms())
                ),
            );
        }
    }
    let mut warnings = Vec::new();
    if let Some(d) = targets.survive_outage_ms {
        if profile.longest_outage_ms < d as f64 {
            warnings.push(format!(
                "--survive-outage-ms {d}: the profile's longest lease-service outage is {} ms, so \
                 the simulation can only judge shorter outages; add a coordinator-restart of {d} ms",
                round(profile.longest_outage_ms)
            ));
        }
    }
    if points.is_empty() {
        warnings.push(
            "no setting has a takeover sample: the profile needs worker crashes or long pauses"
                .into(),
        );
    }
    report.warnings = warnings;
}
