//! The results of a `fencesim tune` sweep (computed by `fencesim-tune`) and their renderings:
//! `tune.csv` (one row per setting), `tune.json`, `tune.md`. Pure functions of the results;
//! every float is rounded so that identical measurements give identical bytes.

use serde::{Deserialize, Serialize};

mod markdown;
pub use markdown::{quantiles_text, rate_text, tune_markdown};

/// A mean over seeds with its 95 % interval (normal approximation, mean ± 1.96·s/√n; the
/// interval is `[mean, mean]` for fewer than two seeds). For display only: no decision
/// reads it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanCi {
    /// Mean over seeds.
    pub mean: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
}

/// A count of events pooled over every seed, per hour of fault exposure, with the exact
/// Poisson (Garwood) 95 % interval on the count divided by the exposure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Events counted over all seeds.
    pub count: u64,
    /// The denominator: fault exposure (the fault window, summed over seeds) in hours.
    pub exposure_h: f64,
    /// `count / exposure_h`.
    pub per_hour: f64,
    /// Lower end of the 95 % interval (per hour).
    pub low: f64,
    /// Upper end of the 95 % interval (per hour).
    pub high: f64,
    /// `(per_hour, low, high)` before rounding to four significant digits, which the
    /// decisions read (a bound of 3.0004 printed as 3.000 does not meet a target of 3); not
    /// serialized, so a rate read back from JSON is judged on its printed figures.
    #[serde(skip)]
    pub exact: Option<[f64; 3]>,
}

/// A count of seeds out of the seeds run, with the 95 % Clopper–Pearson interval on the
/// share (the one method for proportions in every output).
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

impl SeedShare {
    /// `3 of 200 [0.31 %, 4.3 %]`: the count with its interval, as every output prints it.
    pub fn text(&self) -> String {
        format!(
            "{} of {} [{}, {}]",
            self.seeds,
            self.of,
            percent(self.low),
            percent(self.high)
        )
    }
}

/// A share as a percentage with 2 significant digits (at least), e.g. `1.8 %`.
pub fn percent(share: f64) -> String {
    format!("{} %", round(share * 100.0))
}

/// The median and 99th percentile of samples pooled over seeds, each with a 95 %
/// distribution-free (order-statistic, binomial) interval. An end is `None` when there are
/// too few samples for it (a p99 upper bound needs at least 368 samples); everything is
/// `None` when there is no sample.
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
    /// 99th percentile (nearest rank).
    pub p99: Option<f64>,
    /// Lower end of the 99th percentile's interval.
    pub p99_low: Option<f64>,
    /// Upper end of the 99th percentile's interval; `None` with fewer than 368 samples.
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
    /// TTL > longest stall of the profile (a node's pauses back to back) + renew interval +
    /// round trip.
    pub outlives_longest_stall: bool,
    /// The holder keeps its lease through the stated outage by the rule: it does not stop
    /// at the first failed renewal and its renew deadline exceeds the outage + one renew
    /// interval. True when no outage target is stated.
    pub outlives_outage: bool,
    /// All of the above.
    pub ok: bool,
}

/// The state of one target for one setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// No such target was asked for.
    #[default]
    NotAsked,
    /// Met: the interval's upper end is within the target (or, with `--decide mean`, the
    /// point estimate).
    Meets,
    /// Failed: the interval's lower end is past the target (or an unsafe seed was seen).
    Fails,
    /// Still open: the interval straddles the target (more seeds may decide it).
    Open,
}

/// The runs of one setting the outage target is judged on: per form of an outage
/// `--survive-outage-ms` added, its re-runs of the same seeds; or (`in-profile`) the
/// setting's own runs when the profile already holds outages that long. Either way, what the
/// outage caused is counted by the checker's one definition (`fencesim_check::outage`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OutageRun {
    /// The form: `service-down`, `holder-link-cut`, or `in-profile` (the profile's own
    /// outages).
    pub form: String,
    /// Seeds in which an outage caused a stand-down, a takeover, a false expiry or a
    /// rejected current write (the seed did not survive it), with the Clopper–Pearson
    /// interval on the share: the target is met when none failed and the upper end is at
    /// most 1 % (`recommend::FAILURE_SHARE_TO_EXCLUDE`).
    pub failed_seeds: SeedShare,
    /// Stand-downs caused by an outage (the failed renewals began inside it), over seeds.
    pub stand_downs: u64,
    /// Takeovers caused by an outage, over seeds.
    pub takeovers: u64,
    /// False expiries caused by an outage, over seeds.
    pub false_expiries: u64,
    /// Current writes rejected because of an outage, over seeds.
    pub current_write_rejections: u64,
    /// Seeds in which the run was unsafe (I3/I4, panic or runaway) under the outage.
    pub unsafe_seeds: u64,
}

/// Takeovers (grants of a scope to a different holder), all of them and by cause.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Takeovers {
    /// Every takeover, over seeds.
    pub all: u64,
    /// After the holder crashed.
    pub after_crash: u64,
    /// After the holder stalled (a GC pause or VM suspend).
    pub after_stall: u64,
    /// Caused by an outage (the checker's `outage_takeovers`: the holder lost the lease to an
    /// outage it would have survived without, not to a crash, a pause or a handover).
    pub after_outage: u64,
}

impl Takeovers {
    /// Takeovers with none of the causes above (e.g. a local deadline shorter than the TTL).
    pub fn other(&self) -> u64 {
        self.all
            .saturating_sub(self.after_crash + self.after_stall + self.after_outage)
    }

    /// `12 (crash 9, stall 2, outage 0, other 1)`.
    pub fn text(&self) -> String {
        format!(
            "{} (crash {}, stall {}, outage {}, other {})",
            self.all,
            self.after_crash,
            self.after_stall,
            self.after_outage,
            self.other()
        )
    }
}

/// The measurements of one setting over its seeds (the same sequence for every setting;
/// with adaptive seeds some settings run further along it).
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
    /// The seeds run, `A..B`.
    pub seeds: String,
    /// Seeds run.
    pub runs: u64,
    /// Seeds where a simulated node panicked.
    pub panics: u64,
    /// Seeds stopped for exceeding their event budget (runaway).
    pub runaways: u64,
    /// Seeds violating I3 (stale accept).
    pub seeds_violating_i3: u64,
    /// Seeds violating I4 (superseded accept).
    pub seeds_violating_i4: u64,
    /// Unsafe seeds: violating I3 or I4, panicking or runaway, with the interval on the share.
    pub unsafe_seeds: SeedShare,
    /// Stale writes accepted: I3 and I4 violations summed over seeds.
    pub stale_accepts: u64,
    /// False expiries per hour of fault exposure.
    pub false_expiries: Rate,
    /// Stand-downs per hour of fault exposure.
    pub stand_downs: Rate,
    /// Stand-downs caused by the profile's own outages, summed over seeds.
    pub outage_stand_downs: u64,
    /// Takeovers by cause.
    pub takeovers: Takeovers,
    /// Crash → some process believes it holds the lease again.
    pub takeover_ms: Quantiles,
    /// Crash → first accepted write by a process that acquired after the crash.
    pub recovery_after_crash_ms: Quantiles,
    /// Pause that ended in takeover → first accepted write by the new holder.
    pub recovery_after_stall_ms: Quantiles,
    /// Share of scope-time with no running holder at work, per seed.
    pub unavailability: MeanCi,
    /// Renewal requests per held lease per second, per seed.
    pub renewals_per_lease_per_s: MeanCi,
    /// What the outage target (`--survive-outage-ms`) is judged on: one entry per added
    /// outage form, or one `in-profile` entry when the profile holds the outage.
    pub outage_runs: Vec<OutageRun>,
    /// The ranking metric and the false-expiry and disruption rates over the seeds every
    /// setting meeting the targets ran (the recommendation compares these); `None` for a
    /// setting that does not meet them.
    pub ranked: Option<Ranked>,
    /// Safety: fails on any unsafe seed.
    pub safety: Decision,
    /// The false-expiry target.
    pub false_expiry: Decision,
    /// The outage target.
    pub outage: Decision,
    /// Whether the setting meets every stated target (safety always).
    pub meets_targets: bool,
    /// Why it does or does not.
    pub verdict: String,
    /// What the rules of thumb say.
    pub rules: RuleCheck,
    /// Per seed run, in seed order, what the ranking reads (not serialized: a report read
    /// back keeps `ranked`, the figures compared).
    #[serde(skip)]
    pub per_seed: Vec<SeedSample>,
}

/// What one seed of a setting contributes to the ranking.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeedSample {
    /// Crash → first accepted write by a new holder, per crash of a holder.
    pub recovery_after_crash_ms: Vec<f64>,
    /// Pause → first accepted write by the new holder, per pause ended in a takeover.
    pub recovery_after_stall_ms: Vec<f64>,
    /// Crash → some process believes it holds the lease again.
    pub takeover_ms: Vec<f64>,
    /// False expiries.
    pub false_expiries: u64,
    /// Stand-downs.
    pub stand_downs: u64,
    /// Fault exposure (the fault window), ms.
    pub exposure_ms: f64,
}

/// A setting as the ranking compares it: over the first `seeds` seeds of the common
/// sequence, the ones every setting meeting the targets ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// Seeds compared (the common prefix).
    pub seeds: u64,
    /// The ranking metric's p50 and p99 with their intervals over those seeds.
    pub quantiles: Quantiles,
    /// False expiries per hour of fault exposure over those seeds.
    pub false_expiries: Rate,
    /// False expiries + stand-downs per hour of fault exposure over those seeds.
    pub disruption: Rate,
}

/// The latency the recommendation ranks by, chosen once per report (never per setting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ranking {
    /// p99 of recovery after a crash: crash → first accepted write by a new holder.
    #[default]
    RecoveryAfterCrashP99,
    /// p99 of recovery after a stall: pause start → first accepted write by a new holder.
    RecoveryAfterStallP99,
    /// p99 of takeover latency: crash → some process believes it holds the lease again.
    TakeoverP99,
}

impl Ranking {
    /// Every ranking metric, in the order the report prefers them.
    pub const ALL: [Ranking; 3] = [
        Ranking::RecoveryAfterCrashP99,
        Ranking::RecoveryAfterStallP99,
        Ranking::TakeoverP99,
    ];

    /// The metric's exact name, as every output prints it.
    pub fn name(self) -> &'static str {
        match self {
            Ranking::RecoveryAfterCrashP99 => {
                "p99 of recovery after a crash (crash → first accepted write by a new holder)"
            }
            Ranking::RecoveryAfterStallP99 => {
                "p99 of recovery after a stall (pause start → first accepted write by a new holder)"
            }
            Ranking::TakeoverP99 => {
                "p99 of takeover latency (crash → some process believes it holds the lease)"
            }
        }
    }

    /// A short name for columns and axes.
    pub fn short(self) -> &'static str {
        match self {
            Ranking::RecoveryAfterCrashP99 => "crash recovery p99 (ms)",
            Ranking::RecoveryAfterStallP99 => "stall recovery p99 (ms)",
            Ranking::TakeoverP99 => "takeover p99 (ms)",
        }
    }

    /// This metric's samples in one seed.
    pub fn samples(self, s: &SeedSample) -> &[f64] {
        match self {
            Ranking::RecoveryAfterCrashP99 => &s.recovery_after_crash_ms,
            Ranking::RecoveryAfterStallP99 => &s.recovery_after_stall_ms,
            Ranking::TakeoverP99 => &s.takeover_ms,
        }
    }

    /// The samples this metric is computed from, in `s`.
    pub fn of(self, s: &SettingResult) -> &Quantiles {
        match self {
            Ranking::RecoveryAfterCrashP99 => &s.recovery_after_crash_ms,
            Ranking::RecoveryAfterStallP99 => &s.recovery_after_stall_ms,
            Ranking::TakeoverP99 => &s.takeover_ms,
        }
    }
}

impl SettingResult {
    /// The values as `field=value` joined by spaces.
    pub fn label(&self) -> String {
        self.values
            .iter()
            .map(|v| format!("{}={}", v.field, v.value))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a target is decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecideRule {
    /// A setting meets a target only when the upper end of its 95 % interval does.
    #[default]
    UpperBound,
    /// The point estimate is compared with the target (the old rule; `--decide mean`).
    Mean,
}

/// What the user asked the recommendation to meet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// At most this many false expiries per hour of fault exposure.
    pub max_false_expiry_per_hour: Option<f64>,
    /// A holder must survive an outage this long: no stand-down, takeover, false expiry or
    /// rejected current write caused by it.
    pub survive_outage_ms: Option<u64>,
    /// How the targets are decided.
    pub decide: DecideRule,
}

/// The fault profile as the rules of thumb see it, from the fault plans of every seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Longest GC pause or VM suspend in any seed's plan.
    pub longest_pause_ms: f64,
    /// Longest stall in any seed's plan: a node's pauses back to back (a pause drawn during
    /// another queues behind it) as one, e.g. 10 s for two queued 5 s GCs. The rules of
    /// thumb read this.
    pub longest_stall_ms: f64,
    /// Longest outage (the lease service down, or a holder cut off from it) in the profile.
    pub longest_outage_ms: f64,
    /// Round trip: twice the network latency's high value (its p99 or max).
    pub round_trip_ms: f64,
    /// Worker crashes over all seeds' plans.
    pub crashes: u64,
    /// GC pauses and VM suspends over all seeds' plans.
    pub pauses: u64,
}

/// Realized against nominal counts of one fault kind, over the base setting's seeds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultCount {
    /// Fault kind (`gc-pause`, `worker-crash`, …).
    pub kind: String,
    /// What the profile's rates and schedule imply, summed over seeds.
    pub nominal: f64,
    /// What the histories show happened, summed over seeds.
    pub realized: u64,
}

/// The safety boundary along one varied field, on the line through the recommendation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Margin {
    /// The varied field.
    pub field: String,
    /// The largest value found unsafe (below the recommendation).
    pub largest_unsafe: Option<String>,
    /// The smallest value found safe.
    pub smallest_safe: Option<String>,
    /// The recommendation's value.
    pub recommended: Option<String>,
    /// Recommended minus largest unsafe, when both are numbers.
    pub distance: Option<f64>,
}

/// A picked setting and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pick {
    /// Index into `TuneReport::settings`, `None` when no setting qualifies.
    pub setting: Option<usize>,
    /// Why.
    pub reason: String,
}

/// How many seeds the sweep ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedPlan {
    /// Adaptive (`--seeds` is the first round) or fixed.
    pub adaptive: bool,
    /// Seeds of the first round, `A..B`.
    pub first_round: String,
    /// The most seeds any setting may run (`--max-seeds`).
    pub max_seeds: u64,
    /// Simulation runs in all (outage re-runs included).
    pub runs: u64,
    /// Rounds run.
    pub rounds: u64,
}

/// Everything a tune run measured and concluded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    /// Scenario name.
    pub scenario: String,
    /// The base scenario's hash (after `--set`, before `--vary`).
    pub base_hash: String,
    /// Seeds of the first round, `A..B`: the start of the one sequence every setting runs.
    pub seeds: String,
    /// Adaptive or fixed seeds, and the runs they took.
    pub seed_plan: SeedPlan,
    /// `--set` overrides applied to every setting.
    pub overrides: Vec<String>,
    /// `--vary` arguments as given.
    pub varied: Vec<String>,
    /// Varied fields whose values are all ratios of another varied field: they follow it, so
    /// the pictures do not draw a separate line per value.
    pub derived: Vec<String>,
    /// Settings of the grid skipped as invalid, each with the reason.
    pub skipped: Vec<String>,
    /// Targets for the recommendation.
    pub targets: Targets,
    /// What `--survive-outage-ms` added to the profile (empty when the profile already
    /// holds outages that long, or no outage target was set).
    pub outage_added: Vec<String>,
    /// The fault profile.
    pub profile: Profile,
    /// Realized against nominal fault counts per kind.
    pub fault_counts: Vec<FaultCount>,
    /// The latency the recommendation ranks by.
    pub ranking: Ranking,
    /// One entry per setting, in grid order.
    pub settings: Vec<SettingResult>,
    /// Indices of the safe settings on the Pareto front of (false expiries per hour, the
    /// ranking metric's p99): no other safe setting is at least as good in both and
    /// better in one.
    pub pareto: Vec<usize>,
    /// The simulation's recommendation.
    pub recommendation: Pick,
    /// The settings tied within the evidence with the lowest p99 of the ranking metric (its
    /// 95 % upper bound is not below their lower bounds, or a bound is missing), the lowest
    /// among them: the tie-break chose the recommendation among these. Empty when the lowest
    /// p99 wins on the evidence.
    pub tied: Vec<usize>,
    /// The settings adjacent to the recommendation in grid order.
    pub neighbours: Vec<usize>,
    /// The safety boundary along each varied field.
    pub margins: Vec<Margin>,
    /// What the rules of thumb pick.
    pub rule_of_thumb: Pick,
    /// Settings where the simulation and the rules of thumb disagree, one sentence each.
    pub disagreements: Vec<String>,
    /// Warnings about the run (a safe verdict on too few seeds, a recommendation next to an
    /// unsafe setting, …).
    pub warnings: Vec<String>,
    /// Why the answer is "none" although settings may meet the targets: a target that could
    /// not be judged. Empty when every target was judged.
    pub unjudged: Vec<String>,
}

/// How the ranking compares and breaks ties, stated in every output.
pub const TIE_BREAK: &str = "every setting meeting the targets is compared on the seeds they \
     all ran (the same seeds and fault plans, so a setting's extra seeds buy it nothing); when \
     the lowest p99's 95 % upper bound is not below another's lower bound (or a bound is \
     missing), they are tied within the evidence and the tie goes to the lower p50 of the \
     ranking metric, then to the lower false expiries + stand-downs per hour, then to the \
     earlier setting in grid order; a setting without a sample of the ranking metric ranks \
     after every setting with one";

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

/// The version of the `tune.json` format this build writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The report as pretty JSON: `schema_version` and `producer` first, then its fields in
/// declaration order, floats as stored.
pub fn tune_json(report: &TuneReport) -> String {
    fencesim_model::version::versioned_json(SCHEMA_VERSION, report)
}

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |x| format!("{x}"))
}

/// The CSV columns after the varied fields, in order.
pub const CSV_COLUMNS: [&str; 47] = [
    "scenario_hash",
    "ttl_ms",
    "renew_every_ms",
    "renew_deadline_ms",
    "seeds",
    "runs",
    "panics",
    "runaways",
    "seeds_violating_i3",
    "seeds_violating_i4",
    "unsafe_seeds",
    "unsafe_share_low",
    "unsafe_share_high",
    "stale_accepts",
    "fault_exposure_h",
    "false_expiries",
    "false_expiries_per_hour",
    "false_expiries_per_hour_low",
    "false_expiries_per_hour_high",
    "stand_downs",
    "stand_downs_per_hour",
    "stand_downs_per_hour_low",
    "stand_downs_per_hour_high",
    "outage_stand_downs",
    "takeovers",
    "takeovers_after_crash",
    "takeovers_after_stall",
    "takeovers_after_outage",
    "takeover_ms_count",
    "takeover_ms_p50",
    "takeover_ms_p99",
    "recovery_after_crash_ms_count",
    "recovery_after_crash_ms_p50",
    "recovery_after_crash_ms_p99",
    "recovery_after_crash_ms_p99_low",
    "recovery_after_crash_ms_p99_high",
    "recovery_after_stall_ms_count",
    "recovery_after_stall_ms_p50",
    "recovery_after_stall_ms_p99",
    "outage_failed_seeds",
    "outage_runs",
    "unavailability",
    "renewals_per_lease_per_s",
    "safety",
    "false_expiry_target",
    "outage_target",
    "meets_targets",
];

fn decision(d: Decision) -> &'static str {
    match d {
        Decision::NotAsked => "not-asked",
        Decision::Meets => "meets",
        Decision::Fails => "fails",
        Decision::Open => "open",
    }
}

/// One row per setting: the varied fields, then [`CSV_COLUMNS`], then `rules_ok`.
pub fn tune_csv(report: &TuneReport) -> String {
    let mut header: Vec<String> = report
        .settings
        .first()
        .map(|s| s.values.iter().map(|v| v.field.clone()).collect())
        .unwrap_or_default();
    header.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
    header.push("rules_ok".into());
    let mut out = header.join(",");
    out.push('\n');
    for s in &report.settings {
        let mut row: Vec<String> = s.values.iter().map(|v| csv_cell(&v.value)).collect();
        let outage_failed: u64 = s.outage_runs.iter().map(|o| o.failed_seeds.seeds).sum();
        let outage_runs: u64 = s.outage_runs.iter().map(|o| o.failed_seeds.of).sum();
        row.extend([
            s.scenario_hash.clone(),
            s.ttl_ms.to_string(),
            s.renew_every_ms.to_string(),
            s.renew_deadline_ms.to_string(),
            s.seeds.clone(),
            s.runs.to_string(),
            s.panics.to_string(),
            s.runaways.to_string(),
            s.seeds_violating_i3.to_string(),
            s.seeds_violating_i4.to_string(),
            s.unsafe_seeds.seeds.to_string(),
            s.unsafe_seeds.low.to_string(),
            s.unsafe_seeds.high.to_string(),
            s.stale_accepts.to_string(),
            s.false_expiries.exposure_h.to_string(),
            s.false_expiries.count.to_string(),
            s.false_expiries.per_hour.to_string(),
            s.false_expiries.low.to_string(),
            s.false_expiries.high.to_string(),
            s.stand_downs.count.to_string(),
            s.stand_downs.per_hour.to_string(),
            s.stand_downs.low.to_string(),
            s.stand_downs.high.to_string(),
            s.outage_stand_downs.to_string(),
            s.takeovers.all.to_string(),
            s.takeovers.after_crash.to_string(),
            s.takeovers.after_stall.to_string(),
            s.takeovers.after_outage.to_string(),
            s.takeover_ms.count.to_string(),
            opt(s.takeover_ms.p50),
            opt(s.takeover_ms.p99),
            s.recovery_after_crash_ms.count.to_string(),
            opt(s.recovery_after_crash_ms.p50),
            opt(s.recovery_after_crash_ms.p99),
            opt(s.recovery_after_crash_ms.p99_low),
            opt(s.recovery_after_crash_ms.p99_high),
            s.recovery_after_stall_ms.count.to_string(),
            opt(s.recovery_after_stall_ms.p50),
            opt(s.recovery_after_stall_ms.p99),
            outage_failed.to_string(),
            outage_runs.to_string(),
            s.unavailability.mean.to_string(),
            s.renewals_per_lease_per_s.mean.to_string(),
            decision(s.safety).to_string(),
            decision(s.false_expiry).to_string(),
            decision(s.outage).to_string(),
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
