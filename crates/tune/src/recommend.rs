//! The decisions: per setting and target, the recommendation, the Pareto front, the margins,
//! and the rules of thumb.
//!
//! A setting **meets the targets** when every target is met on its 95 % interval's upper
//! end (`--decide mean`: on the point estimate, the old rule):
//! - safety, always: no unsafe seed (an I3 or I4 violation, a panic or a runaway);
//! - `--max-false-expiry-per-hour X`: the false-expiry rate per hour of fault exposure;
//! - `--survive-outage-ms D`: no seed of the outage re-runs (or, when the profile already
//!   holds outages of D, of the runs themselves) has a stand-down, takeover, false expiry
//!   or rejected current write caused by an outage (the checker's one definition), and the
//!   Clopper–Pearson upper bound on the share of such seeds is at most 1 %
//!   ([`FAILURE_SHARE_TO_EXCLUDE`]): with none failed but too few seeds for that bound the
//!   target is open.
//!
//! A target whose interval straddles its bound is **open**: adaptive seeds try to close it;
//! at `--max-seeds` an open target is not met. The **recommendation** is the setting meeting
//! every target with the lowest p99 of the report's ranking metric (chosen once per report:
//! recovery after a crash when any setting has a sample of it, else recovery after a stall,
//! else takeover latency), compared on the seeds they all ran and only on the evidence
//! (`crate::rank`); see [`TIE_BREAK`] for ties.
//!
//! The **rules of thumb** judge each setting from the configuration and the fault profile
//! alone: renew interval ≤ TTL/3 (etcd keepalive); client-go's ordering LeaseDuration ≥
//! RenewDeadline > 1.2 × RetryPeriod (equality of the first two is accepted because
//! fencesim's default deadline is the TTL counted from the request's sending, which already
//! precedes the service's expiry); TTL > longest stall (a node's pauses back to back: a pause
//! drawn during another queues behind it) + renew interval + round trip; and
//! for an outage target D, not stopping at the first failed renewal and RenewDeadline > D +
//! renew interval. They pick the shortest TTL passing every rule.

use crate::rank::{self, ranked};
use crate::report::{
    round, DecideRule, Decision, Margin, OutageRun, Pick, Ranking, Rate, RuleCheck, SettingResult,
    TuneReport,
};
use fencesim_planted::{active, Mutant};
use fencesim_scenario::Scenario;

/// The unsafe share a safe verdict should exclude at 95 % before it is trusted.
pub const UNSAFE_SHARE_TO_EXCLUDE: f64 = 0.01;

/// The share of seeds failing an outage that a met outage target must exclude at 95 %: with
/// no failed seed, the target stays open until the Clopper–Pearson upper bound is at most
/// this (368 seeds).
pub const FAILURE_SHARE_TO_EXCLUDE: f64 = 0.01;

fn fmt_ms(x: Option<f64>) -> String {
    x.map_or("no sample".to_string(), |x| format!("{x} ms"))
}

/// A rate against an upper target.
pub fn judge_rate(rate: &Rate, max: f64, rule: DecideRule) -> Decision {
    if rate.exposure_h <= 0.0 {
        return Decision::Open;
    }
    let within = |x: f64| {
        if active(Mutant::TuneFalseExpiryWrongSign) {
            x >= max
        } else {
            x <= max
        }
    };
    // The unrounded figures when the rate was computed here (see `Rate::exact`).
    let [per_hour, low, high] = rate.exact.unwrap_or([rate.per_hour, rate.low, rate.high]);
    match rule {
        DecideRule::Mean if within(per_hour) => Decision::Meets,
        DecideRule::Mean => Decision::Fails,
        DecideRule::UpperBound if within(high) => Decision::Meets,
        DecideRule::UpperBound if !within(low) => Decision::Fails,
        DecideRule::UpperBound => Decision::Open,
    }
}

/// Whether more seeds could still decide a rate that is open after `runs` seeds: projected
/// to `max_seeds` (the same rate over `max_seeds / runs` times the exposure), its interval
/// would no longer straddle `max`. A rate that would stay open there is not worth the
/// seeds: the fixed sweep of `max_seeds` would leave it open too, most likely.
pub fn decidable_at(rate: &Rate, runs: u64, max_seeds: u64, max: f64, rule: DecideRule) -> bool {
    if runs == 0 || rate.exposure_h <= 0.0 {
        return runs == 0;
    }
    let scale = max_seeds as f64 / runs as f64;
    let count = (rate.count as f64 * scale).round() as u64;
    let projected = crate::stats::rate(count, rate.exposure_h * scale * 3_600_000.0);
    judge_rate(&projected, max, rule) != Decision::Open
}

/// Judges every target of one setting: fills its decisions, `meets_targets` and `verdict`.
pub fn judge(s: &mut SettingResult, targets: &crate::report::Targets) {
    let mut failures = Vec::new();
    let mut open = Vec::new();
    s.safety = judge_safety(s, &mut failures);
    s.false_expiry = judge_false_expiry(s, targets, &mut failures, &mut open);
    s.outage = judge_outage(s, targets, &mut failures, &mut open);
    s.meets_targets = failures.is_empty() && open.is_empty();
    s.verdict = verdict(s, &failures, &open);
}

/// Safety, always asked: no unsafe seed.
fn judge_safety(s: &SettingResult, failures: &mut Vec<String>) -> Decision {
    if s.unsafe_seeds.seeds > 0 {
        failures.push(format!(
            "unsafe in {} (I3 {}, I4 {}, panics {}, runaways {})",
            s.unsafe_seeds.text(),
            s.seeds_violating_i3,
            s.seeds_violating_i4,
            s.panics,
            s.runaways
        ));
        Decision::Fails
    } else {
        Decision::Meets
    }
}

/// `--max-false-expiry-per-hour`, when asked.
fn judge_false_expiry(
    s: &SettingResult,
    targets: &crate::report::Targets,
    failures: &mut Vec<String>,
    open: &mut Vec<String>,
) -> Decision {
    match targets.max_false_expiry_per_hour {
        None => Decision::NotAsked,
        Some(max) => {
            let d = judge_rate(&s.false_expiries, max, targets.decide);
            let r = &s.false_expiries;
            let what = match targets.decide {
                DecideRule::UpperBound => format!("upper bound {}", r.high),
                DecideRule::Mean => format!("mean {}", r.per_hour),
            };
            match d {
                Decision::Fails => failures.push(format!(
                    "false expiries {}/h [{}, {}] > {max}/h ({what})",
                    r.per_hour, r.low, r.high
                )),
                Decision::Open if r.exposure_h <= 0.0 => {
                    open.push("no fault exposure to measure false expiries over".to_string())
                }
                Decision::Open => open.push(format!(
                    "false expiries {}/h [{}, {}] straddle {max}/h",
                    r.per_hour, r.low, r.high
                )),
                _ => {}
            }
            d
        }
    }
}

/// `--survive-outage-ms`, when asked, on `s.outage_runs` (the re-runs with an added outage,
/// or the profile's own runs): fails on any seed an outage made fail or made unsafe; met
/// when none did and the failure share's upper bound excludes 1 %; open before that.
fn judge_outage(
    s: &SettingResult,
    targets: &crate::report::Targets,
    failures: &mut Vec<String>,
    open: &mut Vec<String>,
) -> Decision {
    let Some(d) = targets.survive_outage_ms else {
        return Decision::NotAsked;
    };
    if s.outage_runs.is_empty() {
        open.push(format!("no outage re-run of {d} ms was made"));
        return Decision::Open;
    }
    let failed: Vec<String> = s
        .outage_runs
        .iter()
        .filter(|o| o.failed_seeds.seeds > 0 || o.unsafe_seeds > 0)
        .map(|o| {
            format!(
                "{} in {} ({} stand-downs, {} takeovers, {} false expiries, {} rejected \
                 current writes caused by it; {} unsafe seeds)",
                outage_form(o),
                o.failed_seeds.text(),
                o.stand_downs,
                o.takeovers,
                o.false_expiries,
                o.current_write_rejections,
                o.unsafe_seeds
            )
        })
        .collect();
    if !failed.is_empty() {
        failures.push(format!(
            "does not survive a {d} ms outage: {}",
            failed.join("; ")
        ));
        return Decision::Fails;
    }
    let too_few: Vec<String> = s
        .outage_runs
        .iter()
        .filter(|o| too_few_for(&o.failed_seeds, FAILURE_SHARE_TO_EXCLUDE))
        .map(|o| format!("{} failed in {}", outage_form(o), o.failed_seeds.text()))
        .collect();
    if targets.decide == DecideRule::UpperBound && !too_few.is_empty() {
        open.push(format!(
            "survived every {d} ms outage so far, but too few seeds to exclude a 1 % failure \
             share ({}; excluding 1 % needs {} seeds)",
            too_few.join("; "),
            crate::stats::seeds_to_exclude(FAILURE_SHARE_TO_EXCLUDE)
        ));
        return Decision::Open;
    }
    Decision::Meets
}

/// How an outage run's form reads in a sentence.
fn outage_form(o: &OutageRun) -> String {
    if o.form == "in-profile" {
        "the profile's own outages".to_string()
    } else {
        o.form.clone()
    }
}

/// Whether a share with no event, `share`, is too few seeds to exclude `limit` at 95 %: its
/// exact Clopper–Pearson upper bound is above it.
fn too_few_for(share: &crate::report::SeedShare, limit: f64) -> bool {
    crate::stats::clopper_pearson(share.seeds, share.of).1 > limit
}

/// The setting's verdict in words: what failed, else what is undecided, else that it meets
/// the targets and how well its unsafe share is bounded.
fn verdict(s: &SettingResult, failures: &[String], open: &[String]) -> String {
    if !failures.is_empty() {
        format!("fails: {}", failures.join("; "))
    } else if !open.is_empty() {
        format!("undecided after {} seeds: {}", s.runs, open.join("; "))
    } else {
        let bound = if too_few_to_exclude(s) {
            " (too few seeds to exclude a 1 % unsafe share)"
        } else {
            ""
        };
        format!(
            "meets the targets; 0 of {} unsafe, share ≤ {}{bound}",
            s.runs,
            crate::report::percent(s.unsafe_seeds.high)
        )
    }
}

/// Whether `s`'s seeds are too few for its safe verdict to exclude an unsafe share of
/// [`UNSAFE_SHARE_TO_EXCLUDE`]: the exact Clopper–Pearson upper bound is above it. Not the
/// rounded bound the report prints: at 367 seeds without an unsafe one that is 1 % exactly
/// (1.0001 % unrounded), while excluding 1 % takes 368 ([`crate::stats::seeds_to_exclude`]).
fn too_few_to_exclude(s: &SettingResult) -> bool {
    too_few_for(&s.unsafe_seeds, UNSAFE_SHARE_TO_EXCLUDE)
}

/// The ranking metric: the first of [`Ranking::ALL`] with a sample in any setting meeting the
/// targets (else in any setting); crash recovery when none has any.
pub fn ranking(settings: &[SettingResult]) -> Ranking {
    let has = |r: Ranking, s: &SettingResult| r.of(s).count > 0;
    for pool in [true, false] {
        for r in Ranking::ALL {
            if settings
                .iter()
                .any(|s| (!pool || s.meets_targets) && has(r, s))
            {
                return r;
            }
        }
    }
    Ranking::RecoveryAfterCrashP99
}

/// Fills verdicts, Pareto front, recommendation, margins and warnings of `report` (the
/// decision logic; no rules of thumb).
pub fn decide(report: &mut TuneReport) {
    let targets = report.targets.clone();
    for s in &mut report.settings {
        judge(s, &targets);
    }
    let ranking = ranking(&report.settings);
    report.ranking = ranking;
    let meeting: Vec<usize> = (0..report.settings.len())
        .filter(|&i| report.settings[i].meets_targets)
        .collect();
    let standing = rank::rank(report, ranking, &meeting);
    report.pareto = rank::pareto_front(report, &meeting);
    report.tied = standing.tied.clone();
    let best = standing.pick;
    report.unjudged.clear();
    report.recommendation = match best {
        Some(i) => recommend(report, ranking, &meeting, &standing, i),
        None => recommend_none(report),
    };
    report.neighbours = match best {
        Some(i) => [i.checked_sub(1), Some(i + 1)]
            .into_iter()
            .flatten()
            .filter(|&j| j < report.settings.len())
            .collect(),
        None => Vec::new(),
    };
    report.margins = margins(report, best);
    let no_points = !report
        .settings
        .iter()
        .any(|s| s.safety == Decision::Meets && ranked(ranking.of(s)).is_some());
    report.warnings = warnings(report, ranking, best, no_points);
}

/// The recommendation of setting `i` (the pick among `meeting`) and why.
fn recommend(
    report: &TuneReport,
    ranking: Ranking,
    meeting: &[usize],
    standing: &rank::Standing,
    i: usize,
) -> Pick {
    let s = &report.settings[i];
    Pick {
        setting: Some(i),
        reason: format!(
            "{}; of the {} of {} settings that meet the targets; false expiries {}/h \
             [{}, {}], stand-downs {}/h, unsafe {}",
            rank::explain(report, ranking, standing),
            meeting.len(),
            report.settings.len(),
            s.false_expiries.per_hour,
            s.false_expiries.low,
            s.false_expiries.high,
            s.stand_downs.per_hour,
            s.unsafe_seeds.text(),
        ),
    }
}

/// No recommendation, and why; the settings left undecided go to `report.unjudged`.
fn recommend_none(report: &mut TuneReport) -> Pick {
    let open: Vec<String> = report
        .settings
        .iter()
        .filter(|s| s.verdict.starts_with("undecided"))
        .map(|s| format!("{}: {}", s.label(), s.verdict))
        .collect();
    report.unjudged = open;
    Pick {
        setting: None,
        reason: if report.unjudged.is_empty() {
            "no setting meets the targets: widen the grid or relax a target".into()
        } else {
            format!(
                "no setting meets the targets; {} could not be decided (raise \
                 --max-seeds, widen the grid or relax a target)",
                report.unjudged.len()
            )
        },
    }
}

/// What the recommendation rests on that a reader should know: too few seeds to trust its
/// safe verdict, an unsafe neighbour, no sample of the ranking metric (`no_points`).
fn warnings(
    report: &TuneReport,
    ranking: Ranking,
    best: Option<usize>,
    no_points: bool,
) -> Vec<String> {
    let name = ranking.name();
    let mut warnings = Vec::new();
    if let Some(i) = best {
        let s = &report.settings[i];
        if too_few_to_exclude(s) {
            warnings.push(format!(
                "the recommendation's safe verdict rests on {} seeds: 0 unsafe, but the 95 % \
                 upper bound on the unsafe share is {}, above 1 % (excluding 1 % needs {} \
                 seeds)",
                s.runs,
                crate::report::percent(s.unsafe_seeds.high),
                crate::stats::seeds_to_exclude(UNSAFE_SHARE_TO_EXCLUDE)
            ));
        }
        for j in line_neighbours(report, i) {
            let n = &report.settings[j];
            if n.safety == Decision::Fails {
                warnings.push(format!(
                    "the recommendation borders an unsafe setting: {} is unsafe in {}",
                    n.label(),
                    n.unsafe_seeds.text()
                ));
            }
        }
    }
    if no_points && !report.settings.is_empty() {
        warnings.push(format!(
            "no safe setting has a sample of the {name}: the profile needs worker crashes or \
             long pauses that end in takeovers; the ranking falls to the tie-break"
        ));
    }
    warnings
}

/// Numeric value of `field` in `s`.
fn value_of(s: &SettingResult, field: &str) -> Option<f64> {
    s.values
        .iter()
        .find(|v| v.field == field)
        .and_then(|v| v.value.parse().ok())
}

/// Whether `a` and `b` agree on every varied field but `field` and the fields derived from
/// another.
fn same_line(report: &TuneReport, a: &SettingResult, b: &SettingResult, field: &str) -> bool {
    a.values
        .iter()
        .zip(&b.values)
        .all(|(x, y)| x.field == field || report.derived.contains(&x.field) || x.value == y.value)
}

/// The settings next to `i` along each varied (non-derived) field: the nearest value below
/// and above on the same line.
pub fn line_neighbours(report: &TuneReport, i: usize) -> Vec<usize> {
    let s = &report.settings[i];
    let mut out = Vec::new();
    for v in &s.values {
        if report.derived.contains(&v.field) {
            continue;
        }
        let Some(x) = value_of(s, &v.field) else {
            continue;
        };
        let line: Vec<(usize, f64)> = report
            .settings
            .iter()
            .enumerate()
            .filter(|(j, t)| *j != i && same_line(report, s, t, &v.field))
            .filter_map(|(j, t)| value_of(t, &v.field).map(|y| (j, y)))
            .collect();
        let below = line
            .iter()
            .filter(|(_, y)| *y < x)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let above = line
            .iter()
            .filter(|(_, y)| *y > x)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        out.extend(below.into_iter().chain(above).map(|(j, _)| *j));
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The safety boundary along each varied field on the line through the recommendation (or
/// through the first setting when there is none).
fn margins(report: &TuneReport, best: Option<usize>) -> Vec<Margin> {
    let Some(anchor) = best.or((!report.settings.is_empty()).then_some(0)) else {
        return Vec::new();
    };
    let a = &report.settings[anchor];
    let mut out = Vec::new();
    for v in &a.values {
        if report.derived.contains(&v.field) {
            continue;
        }
        let line: Vec<(&SettingResult, f64)> = report
            .settings
            .iter()
            .filter(|t| same_line(report, a, t, &v.field))
            .filter_map(|t| value_of(t, &v.field).map(|y| (t, y)))
            .collect();
        if line.len() < 2 {
            continue;
        }
        let text = |t: &SettingResult| {
            t.values
                .iter()
                .find(|w| w.field == v.field)
                .map(|w| w.value.clone())
        };
        let largest_unsafe = line
            .iter()
            .filter(|(t, _)| t.safety == Decision::Fails)
            .max_by(|x, y| x.1.total_cmp(&y.1));
        let smallest_safe = line
            .iter()
            .filter(|(t, y)| {
                t.safety == Decision::Meets && largest_unsafe.is_none_or(|(_, u)| y > u)
            })
            .min_by(|x, y| x.1.total_cmp(&y.1));
        let recommended = best.map(|_| (text(a), value_of(a, &v.field)));
        out.push(Margin {
            field: v.field.clone(),
            largest_unsafe: largest_unsafe.and_then(|(t, _)| text(t)),
            smallest_safe: smallest_safe.and_then(|(t, _)| text(t)),
            recommended: recommended.clone().and_then(|(t, _)| t),
            distance: match (recommended, largest_unsafe) {
                (Some((_, Some(r))), Some((_, u))) => Some(round(r - u)),
                _ => None,
            },
        });
    }
    out
}

/// Fills the rules of thumb, their pick and the disagreements; `scenarios` are the settings'
/// resolved scenarios.
pub fn rules(report: &mut TuneReport, scenarios: &[&Scenario]) {
    let targets = report.targets.clone();
    let profile = report.profile.clone();
    for (s, scenario) in report.settings.iter_mut().zip(scenarios) {
        let ttl = s.ttl_ms as f64;
        let renew = s.renew_every_ms as f64;
        let deadline = s.renew_deadline_ms as f64;
        let keepalive_third = s.renew_every_ms <= s.ttl_ms.div_ceil(3);
        let client_go_ordering = ttl >= deadline && deadline > 1.2 * renew;
        let outlives_longest_stall = ttl > profile.longest_stall_ms + renew + profile.round_trip_ms;
        let outlives_outage = targets
            .survive_outage_ms
            .is_none_or(|d| !scenario.workers.stop_on_renew_failure && deadline > d as f64 + renew);
        s.rules = RuleCheck {
            keepalive_third,
            client_go_ordering,
            outlives_longest_stall,
            outlives_outage,
            ok: keepalive_third && client_go_ordering && outlives_longest_stall && outlives_outage,
        };
    }
    let ranking = report.ranking;
    let rule_pick = (0..report.settings.len())
        .filter(|&i| report.settings[i].rules.ok)
        .min_by_key(|&i| (report.settings[i].ttl_ms, i));
    report.rule_of_thumb = Pick {
        setting: rule_pick,
        reason: format!(
            "the shortest TTL with renew ≤ TTL/3, TTL ≥ RenewDeadline > 1.2 × renew interval, \
             TTL > longest stall ({} ms: queued pauses back to back) + renew interval + round \
             trip ({} ms){}",
            profile.longest_stall_ms,
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
                !r.outlives_longest_stall,
                "TTL > longest stall + renew + RTT",
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
                    "the simulation picks {} ({} {}), the rules pick {} ({})",
                    rs.label(),
                    ranking.short(),
                    fmt_ms(ranked(ranking.of(rs))),
                    ts.label(),
                    fmt_ms(ranked(ranking.of(ts)))
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::report::{FieldValue, OutageRun, Profile, Targets};

    use super::*;
    use crate::stats;

    /// A hand-made setting: `ttl` as its one varied value, `unsafe_seeds` of `runs`, a false
    /// expiry count over `exposure_h` hours, and crash-recovery samples.
    fn setting(
        ttl: u64,
        unsafe_seeds: u64,
        false_expiries: u64,
        recovery: &[f64],
    ) -> SettingResult {
        let runs = 400;
        SettingResult {
            values: vec![FieldValue {
                field: "lease.ttl_ms".into(),
                value: ttl.to_string(),
            }],
            ttl_ms: ttl,
            renew_every_ms: ttl / 3,
            renew_deadline_ms: ttl,
            runs,
            seeds_violating_i4: unsafe_seeds,
            unsafe_seeds: stats::seed_share(unsafe_seeds, runs),
            false_expiries: stats::rate(false_expiries, 16.67 * 3_600_000.0),
            stand_downs: stats::rate(0, 16.67 * 3_600_000.0),
            recovery_after_crash_ms: stats::quantiles(recovery),
            ..SettingResult::default()
        }
    }

    fn report(settings: Vec<SettingResult>, targets: Targets) -> TuneReport {
        let mut r = TuneReport {
            settings,
            targets,
            ..TuneReport::default()
        };
        decide(&mut r);
        r
    }

    fn budget(max: f64) -> Targets {
        Targets {
            max_false_expiry_per_hour: Some(max),
            ..Targets::default()
        }
    }

    fn flat(value: f64, n: usize) -> Vec<f64> {
        vec![value; n]
    }

    #[test]
    fn a_target_exceeded_only_by_the_upper_bound_is_not_met() {
        // 30 in 16.67 h = 1.8/h [1.21, 2.57]: the point is within 2/h, the upper bound not.
        let straddles = setting(4000, 0, 30, &flat(5000.0, 50));
        let under = setting(6000, 0, 5, &flat(7000.0, 50));
        let over = setting(2000, 0, 100, &flat(3000.0, 50));
        let r = report(vec![over, straddles, under], budget(2.0));
        let [over, straddles, under] = [&r.settings[0], &r.settings[1], &r.settings[2]];
        assert!(straddles.false_expiries.per_hour < 2.0);
        assert!(straddles.false_expiries.high > 2.0);
        assert_eq!(straddles.false_expiry, Decision::Open);
        assert!(!straddles.meets_targets, "{}", straddles.verdict);
        assert!(
            straddles.verdict.starts_with("undecided"),
            "{}",
            straddles.verdict
        );
        assert_eq!(over.false_expiry, Decision::Fails);
        assert_eq!(under.false_expiry, Decision::Meets);
        assert!(under.meets_targets);
        assert_eq!(
            r.recommendation.setting,
            Some(2),
            "{}",
            r.recommendation.reason
        );

        // The old rule, labelled: the point estimate meets it.
        let mut mean = budget(2.0);
        mean.decide = DecideRule::Mean;
        let r = report(
            vec![
                setting(4000, 0, 30, &flat(5000.0, 50)),
                setting(6000, 0, 5, &flat(7000.0, 50)),
            ],
            mean,
        );
        assert_eq!(r.settings[0].false_expiry, Decision::Meets);
        assert_eq!(r.recommendation.setting, Some(0));
    }

    #[test]
    fn a_p50_p99_split_changes_the_ranking() {
        // A: fast median, slow tail. B: slower median, short tail. The ranking is the p99,
        // and with 400 samples each their p99 intervals are apart: B wins on the evidence.
        let mut a_samples = flat(1000.0, 380);
        a_samples.extend(flat(60_000.0, 20));
        let mut b_samples = flat(8000.0, 380);
        b_samples.extend(flat(9000.0, 20));
        let a = setting(3000, 0, 0, &a_samples);
        let b = setting(9000, 0, 0, &b_samples);
        assert!(a.recovery_after_crash_ms.p50 < b.recovery_after_crash_ms.p50);
        assert!(a.recovery_after_crash_ms.p99 > b.recovery_after_crash_ms.p99);
        let r = report(vec![a, b], Targets::default());
        assert_eq!(r.ranking, Ranking::RecoveryAfterCrashP99);
        assert_eq!(
            r.recommendation.setting,
            Some(1),
            "{}",
            r.recommendation.reason
        );
        assert!(r.recommendation.reason.starts_with(
            "the lowest p99 of recovery after a crash (crash → first accepted write by a new \
             holder) over the 400 seeds every setting meeting the targets ran: 9000 ms [9000, \
             9000], its 95 % interval below every other's"
        ));
        assert_eq!(r.tied, Vec::<usize>::new());
        // Both safe, on 400 seeds each: nothing to warn about.
        assert_eq!(r.warnings, Vec::<String>::new());
        // The recommendation is the last setting: its one neighbour is before it.
        assert_eq!(r.neighbours, [0]);
    }

    #[test]
    fn an_unsafe_setting_is_never_recommended_and_its_neighbour_is_warned_about() {
        let r = report(
            vec![
                setting(7000, 3, 0, &flat(100.0, 50)),
                setting(7250, 0, 0, &flat(200.0, 50)),
                setting(7500, 0, 0, &flat(300.0, 50)),
            ],
            Targets::default(),
        );
        assert_eq!(r.settings[0].safety, Decision::Fails);
        assert!(!r.settings[0].meets_targets);
        assert_eq!(r.recommendation.setting, Some(1));
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("borders an unsafe setting")),
            "{:?}",
            r.warnings
        );
        assert_eq!(r.margins.len(), 1);
        let m = &r.margins[0];
        assert_eq!(m.largest_unsafe.as_deref(), Some("7000"));
        assert_eq!(m.smallest_safe.as_deref(), Some("7250"));
        assert_eq!(m.distance, Some(250.0));
        // The Pareto front runs through safe settings only.
        assert!(!r.pareto.contains(&0));
    }

    #[test]
    fn a_safe_verdict_on_too_few_seeds_is_warned_about() {
        let mut few = setting(5000, 0, 0, &flat(100.0, 10));
        few.runs = 200;
        few.unsafe_seeds = stats::seed_share(0, 200);
        let r = report(vec![few], Targets::default());
        assert!(r.settings[0].meets_targets);
        assert!(
            r.warnings.iter().any(|w| w.contains("rests on 200 seeds")),
            "{:?}",
            r.warnings
        );
        let many = setting(5000, 0, 0, &flat(100.0, 10));
        let r = report(vec![many], Targets::default());
        assert!(
            !r.warnings.iter().any(|w| w.contains("rests on")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn two_identical_settings_tie_and_the_earlier_wins() {
        let a = setting(5000, 0, 3, &flat(100.0, 10));
        let r = report(vec![a.clone(), a], Targets::default());
        assert_eq!(r.settings[0].verdict, r.settings[1].verdict);
        assert_eq!(r.recommendation.setting, Some(0));
        assert!(
            r.recommendation.reason.contains("tie-break"),
            "{}",
            r.recommendation.reason
        );
    }

    #[test]
    fn an_outage_caused_stand_down_fails_the_outage_target() {
        let targets = Targets {
            survive_outage_ms: Some(90_000),
            ..Targets::default()
        };
        let mut flaps = setting(137_000, 0, 0, &flat(100.0, 10));
        flaps.outage_runs = vec![OutageRun {
            form: "service-down".into(),
            failed_seeds: stats::seed_share(1, 400),
            stand_downs: 1,
            ..OutageRun::default()
        }];
        let mut survives = setting(150_000, 0, 0, &flat(900.0, 10));
        survives.outage_runs = vec![OutageRun {
            form: "service-down".into(),
            failed_seeds: stats::seed_share(0, 400),
            ..OutageRun::default()
        }];
        let r = report(vec![flaps, survives], targets.clone());
        assert_eq!(r.settings[0].outage, Decision::Fails);
        assert!(r.settings[0]
            .verdict
            .contains("does not survive a 90000 ms outage"));
        assert_eq!(r.recommendation.setting, Some(1));
        // Never vacuous: without a re-run the target is not judged, so nothing is met.
        let r = report(vec![setting(150_000, 0, 0, &flat(900.0, 10))], targets);
        assert_eq!(r.settings[0].outage, Decision::Open);
        assert_eq!(r.recommendation.setting, None);
        assert_eq!(r.unjudged.len(), 1, "{:?}", r.unjudged);
    }

    /// `setting` with its own renew interval and deadline (the rules of thumb read them).
    fn timed(ttl: u64, renew: u64, deadline: u64, recovery: f64) -> SettingResult {
        SettingResult {
            renew_every_ms: renew,
            renew_deadline_ms: deadline,
            ..setting(ttl, 0, 0, &flat(recovery, 50))
        }
    }

    #[test]
    fn a_rate_is_judged_at_its_bounds_inclusive() {
        // 2/h [1, 3] over 1 h.
        let rate = Rate {
            count: 2,
            exposure_h: 1.0,
            per_hour: 2.0,
            low: 1.0,
            high: 3.0,
            exact: None,
        };
        let upper = DecideRule::UpperBound;
        assert_eq!(judge_rate(&rate, 3.0, upper), Decision::Meets, "high = max");
        assert_eq!(judge_rate(&rate, 2.99, upper), Decision::Open);
        assert_eq!(judge_rate(&rate, 1.0, upper), Decision::Open, "low = max");
        assert_eq!(judge_rate(&rate, 0.99, upper), Decision::Fails);
        assert_eq!(judge_rate(&rate, 2.0, DecideRule::Mean), Decision::Meets);
        assert_eq!(judge_rate(&rate, 1.99, DecideRule::Mean), Decision::Fails);
        let none = Rate {
            exposure_h: 0.0,
            ..rate
        };
        assert_eq!(judge_rate(&none, 100.0, upper), Decision::Open);
        assert_eq!(judge_rate(&none, 100.0, DecideRule::Mean), Decision::Open);
    }

    #[test]
    fn a_rate_is_judged_on_its_unrounded_bounds() {
        // 0 events: Garwood's upper bound 3.689 events, over an exposure that puts it just
        // above 3 per hour (3.0004), which prints as 3.
        let (_, high) = crate::stats::poisson_interval(0);
        let rate = crate::stats::rate(0, high / 3.0004 * 3_600_000.0);
        assert_eq!(rate.high, 3.0, "printed");
        let upper = DecideRule::UpperBound;
        assert_eq!(judge_rate(&rate, 3.0, upper), Decision::Open);
        assert_eq!(judge_rate(&rate, 3.0005, upper), Decision::Meets);
        // Read back from JSON, only the printed figures remain, and they are judged.
        let read: Rate = serde_json::from_str(&serde_json::to_string(&rate).unwrap()).unwrap();
        assert_eq!(read.exact, None);
        assert_eq!(judge_rate(&read, 3.0, upper), Decision::Meets);
    }

    #[test]
    fn a_false_expiry_target_without_fault_exposure_is_undecided() {
        let mut s = setting(5000, 0, 0, &flat(100.0, 10));
        s.false_expiries = stats::rate(0, 0.0);
        let r = report(vec![s], budget(2.0));
        let s = &r.settings[0];
        assert_eq!(s.false_expiry, Decision::Open);
        assert_eq!(
            s.verdict,
            "undecided after 400 seeds: no fault exposure to measure false expiries over"
        );
        assert_eq!(r.recommendation.setting, None);
        assert_eq!(
            r.recommendation.reason,
            "no setting meets the targets; 1 could not be decided (raise --max-seeds, widen \
             the grid or relax a target)"
        );
        assert_eq!(
            r.unjudged,
            [
                "lease.ttl_ms=5000: undecided after 400 seeds: no fault exposure to measure \
              false expiries over"
            ]
        );
    }

    #[test]
    fn verdicts_name_what_failed_and_what_is_open() {
        let r = report(
            vec![
                setting(2000, 2, 100, &flat(100.0, 10)),
                setting(4000, 0, 30, &flat(100.0, 10)),
                setting(6000, 0, 5, &flat(100.0, 10)),
            ],
            budget(2.0),
        );
        assert_eq!(
            r.settings[0].verdict,
            "fails: unsafe in 2 of 400 [0.0606 %, 1.794 %] (I3 0, I4 2, panics 0, runaways 0); \
             false expiries 5.999/h [4.881, 7.296] > 2/h (upper bound 7.296)"
        );
        assert_eq!(
            r.settings[1].verdict,
            "undecided after 400 seeds: false expiries 1.8/h [1.214, 2.569] straddle 2/h"
        );
        assert_eq!(
            r.settings[2].verdict,
            "meets the targets; 0 of 400 unsafe, share ≤ 0.918 %"
        );
        let mut mean = budget(1.0);
        mean.decide = DecideRule::Mean;
        let r = report(vec![setting(4000, 0, 30, &flat(100.0, 10))], mean);
        assert_eq!(
            r.settings[0].verdict,
            "fails: false expiries 1.8/h [1.214, 2.569] > 1/h (mean 1.8)"
        );
        assert_eq!(
            r.recommendation.reason,
            "no setting meets the targets: widen the grid or relax a target"
        );
        assert!(r.unjudged.is_empty());
        // Too few seeds to exclude a 1 % unsafe share: said in the verdict.
        let mut few = setting(5000, 0, 0, &flat(100.0, 10));
        few.runs = 200;
        few.unsafe_seeds = stats::seed_share(0, 200);
        let r = report(vec![few], Targets::default());
        assert_eq!(
            r.settings[0].verdict,
            "meets the targets; 0 of 200 unsafe, share ≤ 1.828 % (too few seeds to exclude a \
             1 % unsafe share)"
        );
    }

    #[test]
    fn an_outage_target_on_the_profiles_own_outages_fails_on_any_seed_the_outage_made_fail() {
        let targets = Targets {
            survive_outage_ms: Some(90_000),
            ..Targets::default()
        };
        let in_profile = |failed: u64, stand_downs: u64, takeovers: u64| OutageRun {
            form: "in-profile".into(),
            failed_seeds: stats::seed_share(failed, 400),
            stand_downs,
            takeovers,
            ..OutageRun::default()
        };
        let mut stands_down = setting(5000, 0, 0, &flat(100.0, 10));
        stands_down.outage_runs = vec![in_profile(2, 2, 0)];
        let mut taken_over = setting(6000, 0, 0, &flat(100.0, 10));
        taken_over.outage_runs = vec![in_profile(1, 0, 1)];
        let mut survives = setting(7000, 0, 0, &flat(900.0, 10));
        survives.outage_runs = vec![in_profile(0, 0, 0)];
        let r = report(vec![stands_down, taken_over, survives], targets);
        assert_eq!(r.settings[0].outage, Decision::Fails);
        assert_eq!(
            r.settings[0].verdict,
            "fails: does not survive a 90000 ms outage: the profile's own outages in 2 of 400 \
             [0.0606 %, 1.794 %] (2 stand-downs, 0 takeovers, 0 false expiries, 0 rejected \
             current writes caused by it; 0 unsafe seeds)"
        );
        assert_eq!(r.settings[1].outage, Decision::Fails);
        assert!(r.settings[1].verdict.contains("0 stand-downs, 1 takeovers"));
        assert_eq!(r.settings[2].outage, Decision::Meets);
        assert_eq!(r.recommendation.setting, Some(2));
    }

    /// Survived in every seed so far is not enough: the target is met only when the
    /// Clopper–Pearson upper bound on the failure share is at most 1 % (368 seeds); before
    /// that it is open, so adaptive rounds go on (`crate::wants_more`).
    #[test]
    fn an_outage_target_survived_on_too_few_seeds_is_open() {
        let targets = Targets {
            survive_outage_ms: Some(60_000),
            ..Targets::default()
        };
        let on = |seeds: u64| {
            let mut s = setting(5000, 0, 0, &flat(100.0, 10));
            s.outage_runs = vec![OutageRun {
                form: "holder-link-cut".into(),
                failed_seeds: stats::seed_share(0, seeds),
                ..OutageRun::default()
            }];
            report(vec![s], targets.clone())
        };
        let r = on(367);
        assert_eq!(r.settings[0].outage, Decision::Open);
        assert_eq!(
            r.settings[0].verdict,
            "undecided after 400 seeds: survived every 60000 ms outage so far, but too few \
             seeds to exclude a 1 % failure share (holder-link-cut failed in 0 of 367 [0 %, 1 \
             %]; excluding 1 % needs 368 seeds)"
        );
        assert_eq!(r.recommendation.setting, None);
        assert_eq!(r.unjudged.len(), 1);
        assert_eq!(on(368).settings[0].outage, Decision::Meets);
        // The old rule (`--decide mean`) meets it on no failure at all.
        let mut mean = targets.clone();
        mean.decide = DecideRule::Mean;
        let mut s = setting(5000, 0, 0, &flat(100.0, 10));
        s.outage_runs = vec![OutageRun {
            form: "service-down".into(),
            failed_seeds: stats::seed_share(0, 100),
            ..OutageRun::default()
        }];
        assert_eq!(report(vec![s], mean).settings[0].outage, Decision::Meets);
    }

    #[test]
    fn an_outage_re_run_fails_on_a_failed_or_an_unsafe_seed() {
        let targets = Targets {
            survive_outage_ms: Some(60_000),
            ..Targets::default()
        };
        let run = |failed: u64, unsafe_seeds: u64| OutageRun {
            form: "holder-link-cut".into(),
            failed_seeds: stats::seed_share(failed, 4),
            stand_downs: failed,
            takeovers: failed,
            false_expiries: 0,
            current_write_rejections: 0,
            unsafe_seeds,
        };
        let mut failed = setting(5000, 0, 0, &flat(100.0, 10));
        failed.outage_runs = vec![run(0, 0), run(1, 0)];
        let mut unsafe_only = setting(6000, 0, 0, &flat(100.0, 10));
        unsafe_only.outage_runs = vec![run(0, 1)];
        let mut survives = setting(7000, 0, 0, &flat(900.0, 10));
        let none_of_400 = OutageRun {
            failed_seeds: stats::seed_share(0, 400),
            ..run(0, 0)
        };
        survives.outage_runs = vec![none_of_400.clone(), none_of_400];
        let r = report(vec![failed, unsafe_only, survives], targets);
        assert_eq!(
            r.settings[0].verdict,
            "fails: does not survive a 60000 ms outage: holder-link-cut in 1 of 4 [0.6309 %, \
             80.59 %] (1 stand-downs, 1 takeovers, 0 false expiries, 0 rejected current \
             writes caused by it; 0 unsafe seeds)"
        );
        assert_eq!(r.settings[1].outage, Decision::Fails);
        assert!(r.settings[1].verdict.contains("; 1 unsafe seeds)"));
        assert_eq!(r.settings[2].outage, Decision::Meets);
        assert_eq!(r.recommendation.setting, Some(2));
    }

    #[test]
    fn the_ranking_metric_is_the_first_with_a_sample_among_settings_meeting_the_targets() {
        let stall = |ttl: u64, unsafe_seeds: u64, p99: f64| SettingResult {
            recovery_after_stall_ms: stats::quantiles(&flat(p99, 400)),
            takeover_ms: stats::quantiles(&flat(p99 / 2.0, 10)),
            ..setting(ttl, unsafe_seeds, 0, &[])
        };
        // Only an unsafe setting has crash-recovery samples: the safe ones rank by stall
        // recovery.
        let r = report(
            vec![
                setting(4000, 3, 0, &flat(100.0, 10)),
                stall(5000, 0, 800.0),
                stall(6000, 0, 700.0),
            ],
            Targets::default(),
        );
        assert_eq!(r.ranking, Ranking::RecoveryAfterStallP99);
        assert_eq!(r.recommendation.setting, Some(2));
        assert_eq!(
            r.recommendation.reason,
            "the lowest p99 of recovery after a stall (pause start → first accepted write by \
             a new holder) over the 400 seeds every setting meeting the targets ran: 700 ms \
             [700, 700], its 95 % interval below every other's; of the 2 of 3 settings that \
             meet the targets; false expiries 0/h [0, 0.2213], stand-downs 0/h, unsafe 0 of \
             400 [0 %, 0.918 %]"
        );
        // Only takeover samples: takeover latency.
        let take = |ttl: u64, p99: f64| SettingResult {
            takeover_ms: stats::quantiles(&flat(p99, 10)),
            ..setting(ttl, 0, 0, &[])
        };
        let r = report(
            vec![take(5000, 900.0), take(6000, 300.0)],
            Targets::default(),
        );
        assert_eq!(r.ranking, Ranking::TakeoverP99);
        assert_eq!(r.recommendation.setting, Some(1));
        // No setting meets the targets: the first metric with a sample in any setting.
        let r = report(
            vec![stall(5000, 3, 800.0), setting(6000, 2, 0, &[])],
            Targets::default(),
        );
        assert_eq!(r.ranking, Ranking::RecoveryAfterStallP99);
        assert_eq!(ranking(&[]), Ranking::RecoveryAfterCrashP99);
    }

    #[test]
    fn the_pareto_front_keeps_every_setting_no_other_beats_on_both_axes() {
        // (recovery p99, false expiries/h): 0 (100, 6), 1 (200, 1.8), 2 (300, 1.8) beaten by
        // 1 on the p99 alone, 3 (400, 0.3), 4 (100, 6) equal to 0 (neither beats the other),
        // 5 (400, 1.02) beaten by 3 on the false expiries alone.
        let r = report(
            vec![
                setting(2000, 0, 100, &flat(100.0, 10)),
                setting(3000, 0, 30, &flat(200.0, 10)),
                setting(4000, 0, 30, &flat(300.0, 10)),
                setting(5000, 0, 5, &flat(400.0, 10)),
                setting(6000, 0, 100, &flat(100.0, 10)),
                setting(7000, 0, 17, &flat(400.0, 10)),
            ],
            Targets::default(),
        );
        assert_eq!(r.pareto, [0, 1, 3, 4]);
        // Only through settings meeting every target: over a budget of 5/h, the first
        // (6/h) is off the front, and 2 (beaten only by 1 on the p99) stays off.
        let mut over = r.clone();
        over.targets = budget(5.0);
        decide(&mut over);
        assert!(!over.settings[0].meets_targets);
        assert_eq!(over.pareto, [1, 3]);
    }

    #[test]
    fn the_neighbours_and_margins_follow_each_varied_field_on_the_recommendations_line() {
        let at = |ttl: u64, renew: u64, unsafe_seeds: u64, p99: f64| {
            let mut s = setting(ttl, unsafe_seeds, 0, &flat(p99, 10));
            s.values.push(FieldValue {
                field: "workers.renew_every_ms".into(),
                value: renew.to_string(),
            });
            s
        };
        // A 3 × 2 grid: TTL 4000, 6000, 8000 × renew 1000, 2000; 4000 is unsafe at both.
        let r = report(
            vec![
                at(4000, 1000, 2, 50.0),
                at(4000, 2000, 2, 50.0),
                at(6000, 1000, 0, 300.0),
                at(6000, 2000, 0, 200.0),
                at(8000, 1000, 0, 400.0),
                at(8000, 2000, 0, 500.0),
            ],
            Targets::default(),
        );
        assert_eq!(r.recommendation.setting, Some(3));
        // Along the TTL: 4000/2000 below, 8000/2000 above; along the renew interval:
        // 6000/1000.
        assert_eq!(line_neighbours(&r, 3), [1, 2, 5]);
        assert_eq!(r.neighbours, [2, 4]);
        assert_eq!(
            r.margins,
            [
                Margin {
                    field: "lease.ttl_ms".into(),
                    largest_unsafe: Some("4000".into()),
                    smallest_safe: Some("6000".into()),
                    recommended: Some("6000".into()),
                    distance: Some(2000.0),
                },
                Margin {
                    field: "workers.renew_every_ms".into(),
                    largest_unsafe: None,
                    smallest_safe: Some("1000".into()),
                    recommended: Some("2000".into()),
                    distance: None,
                },
            ]
        );
        assert!(r
            .warnings
            .iter()
            .any(|w| w.contains("borders an unsafe setting: lease.ttl_ms=4000")));
        // A derived field is not a line of its own.
        let mut derived = r.clone();
        derived.derived = vec!["workers.renew_every_ms".into()];
        assert_eq!(line_neighbours(&derived, 3), [1, 4]);
        assert_eq!(margins(&derived, Some(3)).len(), 1);
        // Without a recommendation the margins run through the first setting.
        let m = margins(&r, None);
        assert_eq!(m[0].recommended, None);
        assert_eq!(m[0].largest_unsafe.as_deref(), Some("4000"));
        assert_eq!(m[0].distance, None);
    }

    #[test]
    fn the_rules_of_thumb_judge_each_rule_at_its_bound_and_pick_the_shortest_ttl() {
        let settings = vec![
            timed(6000, 2000, 6000, 100.0), // 6000 < 4000 + 2000 + 100: too short for the stall (not the 2500 ms pause)
            timed(6100, 2000, 6100, 150.0), // TTL = pause + renew + RTT exactly: too short
            timed(9000, 3000, 9000, 300.0), // renew = TTL/3, TTL = deadline: passes every rule
            timed(9500, 2500, 3000, 300.0), // deadline = 1.2 × renew: not above it
            timed(10000, 3334, 10000, 300.0), // renew = ⌈TTL/3⌉: passes
            timed(12000, 4001, 12000, 300.0), // renew > ⌈TTL/3⌉
            timed(8000, 2000, 9000, 300.0), // deadline > TTL
            timed(11000, 3000, 11000, 300.0), // passes, unsafe in the simulation
        ];
        let mut settings = settings;
        settings[7].unsafe_seeds = stats::seed_share(1, 400);
        settings[7].seeds_violating_i4 = 1;
        let mut r = report(settings, Targets::default());
        r.profile = Profile {
            longest_pause_ms: 2500.0,
            longest_stall_ms: 4000.0,
            round_trip_ms: 100.0,
            ..Profile::default()
        };
        let scenario = fencesim_testkit::Spec::default().scenario();
        rules(&mut r, &[&scenario; 8]);
        let checks: Vec<(bool, bool, bool, bool, bool)> = r
            .settings
            .iter()
            .map(|s| {
                let c = &s.rules;
                (
                    c.keepalive_third,
                    c.client_go_ordering,
                    c.outlives_longest_stall,
                    c.outlives_outage,
                    c.ok,
                )
            })
            .collect();
        assert_eq!(
            checks,
            [
                (true, true, false, true, false),
                (true, true, false, true, false),
                (true, true, true, true, true),
                (true, false, true, true, false),
                (true, true, true, true, true),
                (false, true, true, true, false),
                (true, false, true, true, false),
                (true, true, true, true, true),
            ]
        );
        assert_eq!(r.rule_of_thumb.setting, Some(2));
        assert_eq!(
            r.rule_of_thumb.reason,
            "the shortest TTL with renew ≤ TTL/3, TTL ≥ RenewDeadline > 1.2 × renew interval, \
             TTL > longest stall (4000 ms: queued pauses back to back) + renew interval + round \
             trip (100 ms)"
        );
        assert_eq!(r.recommendation.setting, Some(0));
        assert_eq!(
            r.disagreements,
            [
                "the simulation picks lease.ttl_ms=6000 (crash recovery p99 (ms) 100 ms), the \
                 rules pick lease.ttl_ms=9000 (300 ms)",
                "lease.ttl_ms=6000: the rules reject it (TTL > longest stall + renew + RTT), \
                 the simulation finds it meets the targets",
                "lease.ttl_ms=6100: the rules reject it (TTL > longest stall + renew + RTT), \
                 the simulation finds it meets the targets",
                "lease.ttl_ms=9500: the rules reject it (client-go ordering), the simulation \
                 finds it meets the targets",
                "lease.ttl_ms=12000: the rules reject it (renew ≤ TTL/3), the simulation finds \
                 it meets the targets",
                "lease.ttl_ms=8000: the rules reject it (client-go ordering), the simulation \
                 finds it meets the targets",
                "lease.ttl_ms=11000: the rules accept it, the simulation does not (fails: \
                 unsafe in 1 of 400 [0.0063 %, 1.385 %] (I3 0, I4 1, panics 0, runaways 0))",
            ]
        );
    }

    #[test]
    fn the_outage_rule_needs_a_deadline_past_the_outage_and_no_stop_at_the_first_failure() {
        let targets = Targets {
            survive_outage_ms: Some(30_000),
            ..Targets::default()
        };
        let mut r = report(
            vec![
                timed(40_000, 3000, 33_000, 100.0), // deadline = outage + renew: not above
                timed(40_000, 3000, 33_001, 100.0),
                timed(40_000, 3000, 33_001, 100.0), // stops at the first failed renewal
            ],
            targets,
        );
        let worker = |stop: &str| {
            fencesim_testkit::Spec {
                workers: stop,
                ..fencesim_testkit::Spec::default()
            }
            .scenario()
        };
        let keeps = worker("stop_on_renew_failure = false");
        let stops = worker("stop_on_renew_failure = true");
        assert!(stops.workers.stop_on_renew_failure && !keeps.workers.stop_on_renew_failure);
        rules(&mut r, &[&keeps, &keeps, &stops]);
        let outlives: Vec<bool> = r.settings.iter().map(|s| s.rules.outlives_outage).collect();
        assert_eq!(outlives, [false, true, false]);
        assert_eq!(r.rule_of_thumb.setting, Some(1));
        assert!(
            r.rule_of_thumb.reason.ends_with(
                ", and RenewDeadline > outage (30000 ms) + renew interval without stopping at \
                 the first failed renewal"
            ),
            "{}",
            r.rule_of_thumb.reason
        );
        // Nothing meets the targets (no outage re-run), so no pick is compared.
        assert_eq!(r.recommendation.setting, None);
        assert_eq!(r.disagreements[0], "lease.ttl_ms=40000: the rules accept it, the simulation does not (undecided after 400 seeds: no outage re-run of 30000 ms was made)");
    }

    #[test]
    fn a_tie_goes_to_the_lower_sum_of_false_expiries_and_stand_downs() {
        // A: no false expiry but 5 stand-downs; B: 3 false expiries, no stand-down.
        let mut a = setting(5000, 0, 0, &flat(100.0, 10));
        a.stand_downs = stats::rate(5, 16.67 * 3_600_000.0);
        let b = setting(6000, 0, 3, &flat(100.0, 10));
        let r = report(vec![a, b], Targets::default());
        assert_eq!(
            r.recommendation.setting,
            Some(1),
            "{}",
            r.recommendation.reason
        );
    }

    #[test]
    fn the_smallest_safe_value_lies_above_the_largest_unsafe_one() {
        // Along the TTL: 4000 safe, 6000 unsafe, 8000 and 9000 safe.
        let r = report(
            vec![
                setting(4000, 0, 0, &flat(100.0, 10)),
                setting(6000, 2, 0, &flat(100.0, 10)),
                setting(8000, 0, 0, &flat(300.0, 10)),
                setting(9000, 0, 0, &flat(400.0, 10)),
            ],
            Targets::default(),
        );
        assert_eq!(r.recommendation.setting, Some(0));
        let m = &r.margins[0];
        assert_eq!(m.largest_unsafe.as_deref(), Some("6000"));
        assert_eq!(m.smallest_safe.as_deref(), Some("8000"));
        assert_eq!(m.recommended.as_deref(), Some("4000"));
        assert_eq!(m.distance, Some(-2000.0));
        assert_eq!(r.neighbours, [1]);
    }

    #[test]
    fn a_safe_verdict_needs_368_seeds_to_exclude_a_1_percent_unsafe_share() {
        // At 367 seeds the upper bound is 1.0001 %, printed as 1 %: still too few.
        let on = |runs: u64| {
            let mut s = setting(5000, 0, 0, &flat(100.0, 10));
            s.runs = runs;
            s.unsafe_seeds = stats::seed_share(0, runs);
            report(vec![s], Targets::default())
        };
        let r = on(367);
        assert_eq!(r.settings[0].unsafe_seeds.high, 0.01);
        assert_eq!(
            r.settings[0].verdict,
            "meets the targets; 0 of 367 unsafe, share ≤ 1 % (too few seeds to exclude a 1 % \
             unsafe share)"
        );
        assert!(
            r.warnings.iter().any(|w| w.contains("rests on 367 seeds")),
            "{:?}",
            r.warnings
        );
        let r = on(368);
        assert_eq!(
            r.settings[0].verdict,
            "meets the targets; 0 of 368 unsafe, share ≤ 0.9974 %"
        );
        assert_eq!(r.warnings, Vec::<String>::new());
    }

    #[test]
    fn without_samples_the_reason_says_why_and_names_the_tie_break() {
        let r = report(
            vec![setting(5000, 0, 9, &[]), setting(6000, 0, 3, &[])],
            Targets::default(),
        );
        assert_eq!(
            r.recommendation.setting,
            Some(1),
            "lower disruption wins the tie"
        );
        assert!(
            r.recommendation.reason.contains("tie-break"),
            "{}",
            r.recommendation.reason
        );
        assert!(!r.recommendation.reason.contains("(no sample)"));
        assert!(r
            .warnings
            .iter()
            .any(|w| w.contains("no safe setting has a sample")));
    }
}
