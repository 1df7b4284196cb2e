//! The results of a `fencesim tune` sweep (computed by `fencesim-tune`) and their renderings:
//! `tune.csv` (one row per setting), `tune.json`, `tune.md`. Pure functions of the results;
//! every float is rounded so that identical measurements give identical bytes.

use serde::{Deserialize, Serialize};

/// A mean over seeds with its 95 % confidence interval (normal approximation,
/// mean ± 1.96·s/√n; the interval is `[mean, mean]` for fewer than two seeds).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanCi {
    /// Mean over seeds.
    pub mean: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
}

/// A count of seeds out of the seeds run, with a 95 % Wilson score interval on the share.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedShare {
    /// Seeds where it happened.
    pub seeds: u64,
    /// Seeds run.
    pub of: u64,
    /// Lower end of the 95 % interval on `seeds / of`.
    pub low: f64,
    /// Upper end of the 95 % interval on `seeds / of`.
    pub high: f64,
}

/// The median and 99th percentile of samples pooled over seeds, each with a 95 %
/// distribution-free (order-statistic, binomial) interval. `None` fields when no sample.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Number of samples.
    pub count: u64,
    /// Median.
    pub p50: Option<f64>,
    /// Lower end of the median's interval.
    pub p50_low: Option<f64>,
    /// Upper end of the median's interval.
    pub p50_high: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Lower end of the 99th percentile's interval.
    pub p99_low: Option<f64>,
    /// Upper end of the 99th percentile's interval (the largest sample when too few).
    pub p99_high: Option<f64>,
}

/// One varied field's value in a setting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldValue {
    /// Dotted field name (`lease.ttl_ms`).
    pub field: String,
    /// The value as applied with `--set`.
    pub value: String,
}

/// What the rules of thumb say about one setting.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RuleCheck {
    /// The renew interval is at most TTL/3 (etcd's keepalive rule).
    pub keepalive_third: bool,
    /// client-go's ordering: LeaseDuration > RenewDeadline > 1.2 × RetryPeriod
    /// (`ttl_ms` > `renew_deadline_ms` > 1.2 × `renew_every_ms`).
    pub client_go_ordering: bool,
    /// TTL > longest pause of the profile + renew interval + round trip.
    pub outlives_longest_pause: bool,
    /// The holder keeps its lease through the stated outage by the rule: it does not stop
    /// at the first failed renewal and its renew deadline exceeds the outage + one renew
    /// interval. True when no outage target is stated.
    pub outlives_outage: bool,
    /// All of the above.
    pub ok: bool,
}

/// The measurements of one setting over the common seeds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SettingResult {
    /// The varied fields' values, in `--vary` order.
    pub values: Vec<FieldValue>,
    /// The resolved scenario's hash (changes with every override).
    pub scenario_hash: String,
    /// The resolved effective TTL.
    pub ttl_ms: u64,
    /// The resolved renew interval.
    pub renew_every_ms: u64,
    /// The resolved local renew deadline.
    pub renew_deadline_ms: u64,
    /// Seeds run.
    pub runs: u64,
    /// Seeds where a simulated node panicked.
    pub panics: u64,
    /// Seeds violating I3 (stale accept).
    pub seeds_violating_i3: u64,
    /// Seeds violating I4 (superseded accept).
    pub seeds_violating_i4: u64,
    /// Seeds violating I3 or I4 (or panicking), with an interval on the share.
    pub unsafe_seeds: SeedShare,
    /// Stale writes accepted: I3 and I4 violations summed over seeds.
    pub stale_accepts: u64,
    /// False expiries per virtual hour of run, per seed.
    pub false_expiries_per_hour: MeanCi,
    /// Stand-downs per virtual hour of run, per seed.
    pub stand_downs_per_hour: MeanCi,
    /// Stand-downs while the lease service was down, summed over seeds.
    pub outage_stand_downs: u64,
    /// Crash → some process holds the lease again.
    pub takeover_ms: Quantiles,
    /// Crash → first accepted write by a process that acquired after the crash.
    pub recovery_after_crash_ms: Quantiles,
    /// Pause that ended in takeover → first accepted write by the new holder.
    pub recovery_after_stall_ms: Quantiles,
    /// Share of scope-time with no running holder at work, per seed.
    pub unavailability: MeanCi,
    /// Renewal requests per held lease per second, per seed.
    pub renewals_per_lease_per_s: MeanCi,
    /// Whether the setting meets the stated targets (safety always).
    pub meets_targets: bool,
    /// Why it does or does not.
    pub verdict: String,
    /// What the rules of thumb say.
    pub rules: RuleCheck,
}

impl SettingResult {
    /// The latency the recommendation minimises: recovery after a crash when the profile
    /// crashes holders, else recovery after a stall, else the takeover latency.
    pub fn takeover_p99_ms(&self) -> Option<f64> {
        self.recovery_after_crash_ms
            .p99
            .or(self.recovery_after_stall_ms.p99)
            .or(self.takeover_ms.p99)
    }

    /// The values as `field=value` joined by spaces.
    pub fn label(&self) -> String {
        self.values
            .iter()
            .map(|v| format!("{}={}", v.field, v.value))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What the user asked the recommendation to meet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Upper bound on the mean false expiries per hour.
    pub max_false_expiry_per_hour: Option<f64>,
    /// A holder must not stand down during a lease-service outage this long.
    pub survive_outage_ms: Option<u64>,
}

/// The fault profile as the rules of thumb see it, from the fault plans of every seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Longest GC pause or VM suspend in any seed's plan.
    pub longest_pause_ms: f64,
    /// Longest lease-service outage (coordinator restart) in any seed's plan.
    pub longest_outage_ms: f64,
    /// Round trip: twice the network latency's high value (its p99 or max).
    pub round_trip_ms: f64,
    /// Worker crashes over all seeds' plans.
    pub crashes: u64,
    /// GC pauses and VM suspends over all seeds' plans.
    pub pauses: u64,
}

/// A picked setting and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pick {
    /// Index into `TuneReport::settings`, `None` when no setting qualifies.
    pub setting: Option<usize>,
    /// Why.
    pub reason: String,
}

/// Everything a tune run measured and concluded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    /// Scenario name.
    pub scenario: String,
    /// The base scenario's hash (after `--set`, before `--vary`).
    pub base_hash: String,
    /// Seeds, `A..B`: the same for every setting.
    pub seeds: String,
    /// `--set` overrides applied to every setting.
    pub overrides: Vec<String>,
    /// `--vary` arguments as given.
    pub varied: Vec<String>,
    /// Varied fields whose values are all ratios of another varied field: they follow it, so
    /// the pictures do not draw a separate line per value.
    pub derived: Vec<String>,
    /// Targets for the recommendation.
    pub targets: Targets,
    /// The fault profile.
    pub profile: Profile,
    /// One entry per setting, in grid order.
    pub settings: Vec<SettingResult>,
    /// Indices of the settings on the Pareto front of (false expiries + stand-downs per
    /// hour, takeover p99): no other setting is at least as good in both and better in one.
    pub pareto: Vec<usize>,
    /// The simulation's recommendation.
    pub recommendation: Pick,
    /// The settings adjacent to the recommendation in grid order.
    pub neighbours: Vec<usize>,
    /// What the rules of thumb pick.
    pub rule_of_thumb: Pick,
    /// Settings where the simulation and the rules of thumb disagree, one sentence each.
    pub disagreements: Vec<String>,
    /// Warnings about the run (e.g. a target the profile cannot measure).
    pub warnings: Vec<String>,
}

/// Rounds to 4 significant digits (at most 6 decimals), so reports are stable.
pub fn round(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() { 0.0 } else { x };
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    let digits = digits.clamp(0, 6);
    let scale = 10f64.powi(digits);
    let r = (x * scale).round() / scale;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// The report as pretty JSON (fields in declaration order, floats as stored).
pub fn tune_json(report: &TuneReport) -> String {
    let mut text = serde_json::to_string_pretty(report).expect("tune reports serialize");
    text.push('\n');
    text
}

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |x| format!("{x}"))
}

/// The CSV columns after the varied fields, in order.
pub const CSV_COLUMNS: [&str; 30] = [
    "scenario_hash",
    "ttl_ms",
    "renew_every_ms",
    "renew_deadline_ms",
    "runs",
    "panics",
    "seeds_violating_i3",
    "seeds_violating_i4",
    "unsafe_seeds",
    "stale_accepts",
    "false_expiries_per_hour",
    "false_expiries_per_hour_low",
    "false_expiries_per_hour_high",
    "stand_downs_per_hour",
    "stand_downs_per_hour_low",
    "stand_downs_per_hour_high",
    "outage_stand_downs",
    "takeover_ms_count",
    "takeover_ms_p50",
    "takeover_ms_p99",
    "recovery_after_crash_ms_count",
    "recovery_after_crash_ms_p50",
    "recovery_after_crash_ms_p99",
    "recovery_after_stall_ms_count",
    "recovery_after_stall_ms_p50",
    "recovery_after_stall_ms_p99",
    "unavailability",
    "renewals_per_lease_per_s",
    "meets_targets",
    "rules_ok",
];

/// One row per setting: the varied fields, then [`CSV_COLUMNS`].
pub fn tune_csv(report: &TuneReport) -> String {
    let mut header: Vec<String> = report
        .settings
        .first()
        .map(|s| s.values.iter().map(|v| v.field.clone()).collect())
        .unwrap_or_default();
    header.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
    let mut out = header.join(",");
    out.push('\n');
    for s in &report.settings {
        let mut row: Vec<String> = s.values.iter().map(|v| csv_cell(&v.value)).collect();
        row.extend([
            s.scenario_hash.clone(),
            s.ttl_ms.to_string(),
            s.renew_every_ms.to_string(),
            s.renew_deadline_ms.to_string(),
            s.runs.to_string(),
            s.panics.to_string(),
            s.seeds_violating_i3.to_string(),
            s.seeds_violating_i4.to_string(),
            s.unsafe_seeds.seeds.to_string(),
            s.stale_accepts.to_string(),
            s.false_expiries_per_hour.mean.to_string(),
            s.false_expiries_per_hour.low.to_string(),
            s.false_expiries_per_hour.high.to_string(),
            s.stand_downs_per_hour.mean.to_string(),
            s.stand_downs_per_hour.low.to_string(),
            s.stand_downs_per_hour.high.to_string(),
            s.outage_stand_downs.to_string(),
            s.takeover_ms.count.to_string(),
            opt(s.takeover_ms.p50),
            opt(s.takeover_ms.p99),
            s.recovery_after_crash_ms.count.to_string(),
            opt(s.recovery_after_crash_ms.p50),
            opt(s.recovery_after_crash_ms.p99),
            s.recovery_after_stall_ms.count.to_string(),
            opt(s.recovery_after_stall_ms.p50),
            opt(s.recovery_after_stall_ms.p99),
            s.unavailability.mean.to_string(),
            s.renewals_per_lease_per_s.mean.to_string(),
            s.meets_targets.to_string(),
            s.rules.ok.to_string(),
        ]);
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn ci(m: &MeanCi) -> String {
    format!("{} [{}, {}]", m.mean, m.low, m.high)
}

fn quantiles(q: &Quantiles) -> String {
    match (q.p50, q.p99) {
        (Some(p50), Some(p99)) => format!("{p50} / {p99} (n={})", q.count),
        _ => "– (n=0)".to_string(),
    }
}

/// The Markdown report: the recommendation and its neighbours, the rules of thumb and where
/// they disagree, then a table of every setting.
pub fn tune_markdown(report: &TuneReport) -> String {
    let mut out = format!("# Tuning `{}`\n\n", report.scenario);
    out.push_str(&format!(
        "Seeds `{}` (the same seeds and fault plans for every setting); base scenario hash \
         `{}`.\n",
        report.seeds, report.base_hash
    ));
    for v in &report.varied {
        out.push_str(&format!("- `--vary {v}`\n"));
    }
    for o in &report.overrides {
        out.push_str(&format!("- `--set {o}`\n"));
    }
    let p = &report.profile;
    out.push_str(&format!(
        "\nFault profile over all seeds: {} pauses (longest {} ms), {} worker crashes, longest \
         lease-service outage {} ms, round trip {} ms.\n\n",
        p.pauses, p.longest_pause_ms, p.crashes, p.longest_outage_ms, p.round_trip_ms
    ));
    let t = &report.targets;
    out.push_str(&format!(
        "Targets: safety (no I3/I4 violation, no panic); false expiries per hour ≤ {}; \
         survive a lease-service outage of {}.\n\n",
        t.max_false_expiry_per_hour
            .map_or("(none)".to_string(), |x| x.to_string()),
        t.survive_outage_ms
            .map_or("(none)".to_string(), |x| format!("{x} ms")),
    ));
    out.push_str("## Recommendation\n\n");
    match report.recommendation.setting {
        Some(i) => out.push_str(&format!(
            "**{}** — {}\n\n",
            report.settings[i].label(),
            report.recommendation.reason
        )),
        None => out.push_str(&format!("None — {}\n\n", report.recommendation.reason)),
    }
    if !report.neighbours.is_empty() {
        out.push_str("Neighbours:\n");
        for &i in &report.neighbours {
            let s = &report.settings[i];
            out.push_str(&format!("- {}: {}\n", s.label(), s.verdict));
        }
        out.push('\n');
    }
    out.push_str("## Rules of thumb\n\n");
    match report.rule_of_thumb.setting {
        Some(i) => out.push_str(&format!(
            "They pick **{}** — {}\n\n",
            report.settings[i].label(),
            report.rule_of_thumb.reason
        )),
        None => out.push_str(&format!(
            "They pick nothing — {}\n\n",
            report.rule_of_thumb.reason
        )),
    }
    if report.disagreements.is_empty() {
        out.push_str("The simulation agrees with the rules on every setting.\n\n");
    } else {
        out.push_str("Where the simulation disagrees with the rules:\n");
        for d in &report.disagreements {
            out.push_str(&format!("- {d}\n"));
        }
        out.push('\n');
    }
    for w in &report.warnings {
        out.push_str(&format!("> warning: {w}\n\n"));
    }
    out.push_str("## Settings\n\n");
    out.push_str(
        "Means with 95 % intervals over seeds; latencies as p50 / p99 over all samples (n).\n\n",
    );
    out.push_str(
        "| setting | unsafe seeds | false expiries/h | stand-downs/h | takeover p50/p99 ms | \
         crash recovery p50/p99 ms | stall recovery p50/p99 ms | unavailability | renewals/lease/s | \
         verdict |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (i, s) in report.settings.iter().enumerate() {
        let mark = if report.recommendation.setting == Some(i) {
            " ★"
        } else {
            ""
        };
        out.push_str(&format!(
            "| {}{mark} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            s.label(),
            s.unsafe_seeds.seeds,
            s.unsafe_seeds.of,
            ci(&s.false_expiries_per_hour),
            ci(&s.stand_downs_per_hour),
            quantiles(&s.takeover_ms),
            quantiles(&s.recovery_after_crash_ms),
            quantiles(&s.recovery_after_stall_ms),
            s.unavailability.mean,
            s.renewals_per_lease_per_s.mean,
            s.verdict,
        ));
    }
    out
}
