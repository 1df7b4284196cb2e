//! Choosing lease timings by measurement (`fencesim tune`): a grid of settings from
//! `--vary` (`grid`), every setting run along **one common seed sequence with the same fault
//! plans** (common random numbers: `plan(&scenario, seed)` reads no lease or worker timing
//! field, and a `--vary` of a field it does read is refused), per-setting statistics with
//! exact intervals (`stats`), and decisions against the user's targets next to what the
//! analytic rules of thumb would pick (`recommend`).
//!
//! Seeds are adaptive by default: the first round runs `--seeds` for every setting; later
//! rounds continue the same sequence (double the seeds, up to `--max-seeds`) for settings
//! whose decision is still open and could still be decided by then, and for safe settings
//! next to an unsafe one, until decided ([`wants_more`]). A setting that fails a target is
//! retired: no number of seeds makes it meet them.
//! With `--survive-outage-ms D` every seed also runs once per outage form with a D-long
//! outage added (unless the profile already holds outages of D).
//!
//! Architecture Invariant: no I/O. The caller reads the scenario file and writes the
//! outputs (`crate::report`, `crate::plot`).

pub mod compare;
pub mod grid;
#[cfg(feature = "pictures")]
pub mod plot;
pub mod rank;
pub mod recommend;
pub mod report;
pub mod stats;

use fencesim_planted::{active, Mutant};
use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use crate::report::{
    round, Decision, FaultCount, FieldValue, OutageRun, Profile, SeedPlan, SeedSample,
    SettingResult, Takeovers, Targets, TuneReport,
};
use fencesim_check::{Metrics, SeedOutcome};
use fencesim_model::Invariant;
use fencesim_scenario::{
    fault::Fault, parse_str_with, plan::plan, Override, Scenario, ScenarioError, SeedRange,
};
use fencesim_sim::runner::Components;

pub use grid::{grid, parse_vary, Item, Setting, Vary, MAX_SETTINGS, PROFILE_FIELDS};

/// The most seeds one setting may run (`--max-seeds`).
pub const MAX_SEEDS_PER_SETTING: u64 = 100_000;

/// How many seeds to run.
#[derive(Clone, Copy, Debug)]
pub struct SeedPolicy {
    /// The first round (every setting).
    pub first: SeedRange,
    /// The most seeds per setting; equal to the first round's length when fixed.
    pub max_seeds: u64,
    /// Whether later rounds run.
    pub adaptive: bool,
}

/// One added outage form with, per setting, the scenario that carries it.
#[derive(Clone)]
pub struct OutageVariant {
    /// `service-down` or `holder-link-cut`.
    pub form: String,
    /// Per setting (same order as `Sweep::settings`).
    pub scenarios: Vec<Arc<Scenario>>,
}

/// A validated sweep, ready to run: the base scenario and one scenario per setting.
#[derive(Clone)]
pub struct Sweep {
    /// The scenario after `--set` (and, when `--set` alone is invalid, the first valid
    /// setting's values), before `--vary`.
    pub base: Arc<Scenario>,
    /// Per setting: the varied values and the resolved scenario.
    pub settings: Vec<(Setting, Arc<Scenario>)>,
    /// Settings of the grid skipped as invalid, each with the reason.
    pub skipped: Vec<String>,
    /// Seeds.
    pub seeds: SeedPolicy,
    /// `--set` overrides, as typed.
    pub overrides: Vec<String>,
    /// `--vary` arguments, as typed.
    pub varied: Vec<String>,
    /// Varied fields given only as ratios of another varied field.
    pub derived: Vec<String>,
    /// Targets for the recommendation.
    pub targets: Targets,
    /// The outage re-runs `--survive-outage-ms` adds (empty when none are needed).
    pub outages: Vec<OutageVariant>,
    /// What the outage re-runs add, one sentence per form.
    pub outage_added: Vec<String>,
    /// The profile already holds outages of at least the target: its own runs judge it.
    pub outage_in_profile: bool,
}

fn vary_error(file: &str, expected: String) -> ScenarioError {
    ScenarioError {
        file: file.to_string(),
        line: None,
        field: "--vary".to_string(),
        expected: format!("expected {expected}"),
    }
}

/// Resolves every setting's scenario: `overrides` then the setting's values, each validated
/// like a file. A setting whose combination is invalid (e.g. a renew deadline above its TTL)
/// is skipped and listed; when every setting is invalid the first error is returned (it
/// names the field and says it came from `--set`/`--vary`).
pub fn prepare(
    text: &str,
    file: &str,
    overrides: &[Override],
    varies: &[(String, Vary)],
    seeds: Option<SeedRange>,
    max_seeds: Option<u64>,
    targets: Targets,
) -> Result<Sweep, ScenarioError> {
    let vary_list: Vec<Vary> = varies.iter().map(|(_, v)| v.clone()).collect();
    grid::check_fields(&vary_list, overrides).map_err(|expected| vary_error(file, expected))?;
    let settings = grid(&vary_list).map_err(|expected| vary_error(file, expected))?;
    let mut resolved = Vec::with_capacity(settings.len());
    let mut skipped = Vec::new();
    let mut first_error = None;
    for setting in settings {
        let mut all = overrides.to_vec();
        all.extend(setting.iter().map(|(field, value)| Override {
            field: field.clone(),
            value: value.clone(),
        }));
        match parse_str_with(text, file, &all) {
            Ok(scenario) => resolved.push((setting, Arc::new(scenario))),
            Err(error) => {
                let error = grid::blame(error, &setting, overrides, varies);
                let label: Vec<String> = setting.iter().map(|(f, v)| format!("{f}={v}")).collect();
                // `expected` is the whole phrase ("expected a positive …").
                skipped.push(format!(
                    "{}: {}: {}",
                    label.join(" "),
                    error.field,
                    error.expected
                ));
                first_error.get_or_insert(error);
            }
        }
    }
    if resolved.is_empty() {
        return Err(first_error.expect("a grid has at least one setting"));
    }
    // `--set` is validated with the `--vary` values applied: the base is the scenario with
    // `--set` alone when that is valid, else the first valid setting.
    let base = match parse_str_with(text, file, overrides) {
        Ok(base) => Arc::new(base),
        Err(_) => resolved[0].1.clone(),
    };
    // The settings must share the fault plans: compare a sample of them on the first seed.
    let first = seeds.unwrap_or(base.seeds);
    let reference = plan(&base, first.start).render();
    let step = (resolved.len() / 32).max(1);
    for (setting, scenario) in resolved.iter().step_by(step) {
        if plan(scenario, first.start).render() != reference {
            let label: Vec<String> = setting.iter().map(|(f, v)| format!("{f}={v}")).collect();
            return Err(vary_error(
                file,
                format!(
                    "settings that share the fault plans; {} draws a different fault plan for \
                     seed {} than the base scenario",
                    label.join(" "),
                    first.start
                ),
            ));
        }
    }
    let max_seeds = max_seeds.unwrap_or(first.len().max(2_000));
    Ok(Sweep {
        seeds: SeedPolicy {
            first,
            max_seeds: max_seeds.max(first.len()),
            adaptive: max_seeds > first.len(),
        },
        base,
        settings: resolved,
        skipped,
        overrides: overrides.iter().map(Override::to_arg).collect(),
        varied: varies.iter().map(|(text, _)| text.clone()).collect(),
        derived: vary_list
            .iter()
            .filter(|v| v.items.iter().all(|i| matches!(i, Item::Ratio { .. })))
            .map(|v| v.field.clone())
            .collect(),
        targets,
        outages: Vec::new(),
        outage_added: Vec::new(),
        outage_in_profile: false,
    })
}

/// Adds the outage re-runs `--survive-outage-ms D` needs: none when no outage target is set
/// or the profile already holds outages of at least D; else both forms (the lease service
/// down, the holder's link to it cut) on every setting.
pub fn add_outages(sweep: &mut Sweep) -> Result<(), String> {
    let Some(d) = sweep.targets.survive_outage_ms else {
        return Ok(());
    };
    let longest = longest_outage_ms(&sweep.base, sweep.seeds.first);
    if longest >= d as f64 {
        sweep.outage_in_profile = true;
        return Ok(());
    }
    for form in fencesim_scenario::outage::OutageForm::ALL {
        let mut scenarios = Vec::with_capacity(sweep.settings.len());
        for (_, scenario) in &sweep.settings {
            let with = fencesim_scenario::outage::with_outage(scenario, form, d as f64)
                .map_err(|e| format!("--survive-outage-ms {d}: {e}"))?;
            scenarios.push(Arc::new(with));
        }
        sweep.outages.push(OutageVariant {
            form: form.name().to_string(),
            scenarios,
        });
        sweep.outage_added.push(format!(
            "every seed of every setting re-run with a {d} ms {} outage ({}) at a time drawn \
             from the seed inside the fault window (the same instant for every setting); the \
             profile's own longest outage is {longest} ms",
            form.name(),
            match form {
                fencesim_scenario::outage::OutageForm::ServiceDown => "the lease service down",
                fencesim_scenario::outage::OutageForm::HolderLinkCut =>
                    "the holder's link to the lease service cut both ways",
            }
        ));
    }
    Ok(())
}

/// The seed of position `index` in the common sequence, for `setting`.
pub fn seed_of(policy: &SeedPolicy, setting: usize, index: u64) -> u64 {
    let offset = if active(Mutant::TuneSeedsDifferPerSetting) {
        setting as u64 * 1_000
    } else {
        0
    };
    policy
        .first
        .start
        .saturating_add(index)
        .saturating_add(offset)
}

/// Whether `outcome` is unsafe: an I3 or I4 violation, a panic, or a runaway.
pub fn is_unsafe(outcome: &SeedOutcome) -> bool {
    let has = |i: Invariant| outcome.checked.violations.iter().any(|v| v.invariant == i);
    if active(Mutant::TuneUnsafeIgnoresI4) {
        // The planted bug: a seed violating only I4 is not counted unsafe.
        return outcome.panic.is_some() || outcome.runaway || has(Invariant::I3);
    }
    outcome.panic.is_some() || outcome.runaway || has(Invariant::I3) || has(Invariant::I4)
}

/// What one seed contributes to its setting's statistics (the outcome without the history).
#[derive(Clone, Debug, Default)]
pub struct SeedSummary {
    unsafe_seed: bool,
    panic: bool,
    runaway: bool,
    i3: bool,
    i4: bool,
    stale_accepts: u64,
    metrics: Metrics,
}

impl SeedSummary {
    /// The summary of `outcome`.
    pub fn of(outcome: &SeedOutcome) -> SeedSummary {
        let has = |i: Invariant| outcome.checked.violations.iter().any(|v| v.invariant == i);
        SeedSummary {
            unsafe_seed: is_unsafe(outcome),
            panic: outcome.panic.is_some(),
            runaway: outcome.runaway,
            i3: has(Invariant::I3),
            i4: has(Invariant::I4),
            stale_accepts: outcome
                .checked
                .violations
                .iter()
                .filter(|v| matches!(v.invariant, Invariant::I3 | Invariant::I4))
                .count() as u64,
            metrics: outcome.checked.metrics.clone(),
        }
    }
}

/// Every run of one setting so far: the base runs and, per outage form, the re-runs.
#[derive(Clone, Debug, Default)]
pub struct Runs {
    /// Base runs, in seed order.
    pub base: Vec<SeedSummary>,
    /// Per outage form, in seed order.
    pub outages: Vec<Vec<SeedSummary>>,
}

/// Runs the sweep (adaptive rounds as `sweep.seeds` says) on `jobs` threads and measures.
/// `on_done(finished, planned)` is called after each run (for progress). The result does not
/// depend on `jobs`.
pub fn run(
    sweep: &Sweep,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> TuneReport {
    let n = sweep.settings.len();
    let mut runs: Vec<Runs> = vec![
        Runs {
            base: Vec::new(),
            outages: vec![Vec::new(); sweep.outages.len()],
        };
        n
    ];
    let mut target: Vec<u64> = vec![sweep.seeds.first.len(); n];
    let mut rounds = 0;
    let mut total_runs = 0u64;
    loop {
        rounds += 1;
        // Tasks: (setting, variant, seed index); variant 0 is the base, 1.. the outages.
        let variants = 1 + sweep.outages.len();
        let mut tasks: Vec<(usize, usize, u64)> = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            for index in r.base.len() as u64..target[i] {
                for v in 0..variants {
                    tasks.push((i, v, index));
                }
            }
        }
        if tasks.is_empty() {
            break;
        }
        total_runs += tasks.len() as u64;
        let summaries = run_tasks(sweep, &tasks, jobs, components, on_done);
        for ((i, v, _), summary) in tasks.iter().zip(summaries) {
            if *v == 0 {
                runs[*i].base.push(summary);
            } else {
                runs[*i].outages[v - 1].push(summary);
            }
        }
        if !sweep.seeds.adaptive {
            break;
        }
        let report = measure(sweep, &runs, rounds, total_runs);
        let more = wants_more(&report, sweep.seeds.max_seeds);
        if more.is_empty() {
            break;
        }
        for i in more {
            let ran = runs[i].base.len() as u64;
            target[i] = (ran * 2)
                .max(ran + sweep.seeds.first.len())
                .min(sweep.seeds.max_seeds);
        }
    }
    measure(sweep, &runs, rounds, total_runs)
}

fn run_tasks(
    sweep: &Sweep,
    tasks: &[(usize, usize, u64)],
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Vec<SeedSummary> {
    let finished = AtomicUsize::new(0);
    fencesim_sim::run_batch(tasks, jobs, |&(setting, variant, index)| {
        let scenario = if variant == 0 {
            &sweep.settings[setting].1
        } else {
            &sweep.outages[variant - 1].scenarios[setting]
        };
        let seed = seed_of(&sweep.seeds, setting, index);
        let outcome = fencesim_sim::runner::run_seed(scenario, seed, components).outcome;
        let summary = SeedSummary::of(&outcome);
        on_done(finished.fetch_add(1, Ordering::Relaxed) + 1, tasks.len());
        summary
    })
}

/// The settings that need more seeds, while below `max_seeds`: a setting that meets no
/// failed target yet and either has a target still open that more seeds could still decide
/// (an outage target short of the seeds to exclude a 1 % failure share; a false-expiry rate
/// whose interval, projected to `max_seeds`, would no longer straddle the target), or is
/// safe so far next to an unsafe setting (the safety boundary). A setting that fails a
/// target is retired: it cannot meet them, whatever more seeds show.
pub fn wants_more(report: &TuneReport, max_seeds: u64) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, s) in report.settings.iter().enumerate() {
        if s.runs >= max_seeds || [s.safety, s.false_expiry, s.outage].contains(&Decision::Fails) {
            continue;
        }
        let false_expiry = s.false_expiry == Decision::Open
            && report.targets.max_false_expiry_per_hour.is_some_and(|max| {
                recommend::decidable_at(
                    &s.false_expiries,
                    s.runs,
                    max_seeds,
                    max,
                    report.targets.decide,
                )
            });
        let outage = s.outage == Decision::Open && !s.outage_runs.is_empty();
        let boundary = s.safety == Decision::Meets
            && recommend::line_neighbours(report, i)
                .iter()
                .any(|&j| report.settings[j].safety == Decision::Fails);
        if false_expiry || outage || boundary {
            out.push(i);
        }
    }
    out
}

/// The report from every setting's runs: statistics, decisions, the recommendation.
pub fn measure(sweep: &Sweep, runs: &[Runs], rounds: u64, total_runs: u64) -> TuneReport {
    let settings: Vec<SettingResult> = sweep
        .settings
        .iter()
        .zip(runs)
        .map(|((setting, scenario), r)| {
            let mut s = setting_result(setting, scenario, &r.base);
            s.seeds = format!(
                "{}..{}",
                sweep.seeds.first.start,
                sweep.seeds.first.start + r.base.len() as u64
            );
            s.outage_runs = if sweep.outage_in_profile {
                vec![outage_run("in-profile", &r.base)]
            } else {
                sweep
                    .outages
                    .iter()
                    .zip(&r.outages)
                    .map(|(o, summaries)| outage_run(&o.form, summaries))
                    .collect()
            };
            s
        })
        .collect();
    let mut report = TuneReport {
        scenario: sweep.base.name.clone(),
        base_hash: sweep.base.hash(),
        seeds: sweep.seeds.first.to_string(),
        seed_plan: SeedPlan {
            adaptive: sweep.seeds.adaptive,
            first_round: sweep.seeds.first.to_string(),
            max_seeds: sweep.seeds.max_seeds,
            runs: total_runs,
            rounds,
        },
        overrides: sweep.overrides.clone(),
        varied: sweep.varied.clone(),
        derived: sweep.derived.clone(),
        skipped: sweep.skipped.clone(),
        targets: sweep.targets.clone(),
        outage_added: sweep.outage_added.clone(),
        profile: profile(&sweep.base, sweep.seeds.first),
        fault_counts: fault_counts(&sweep.base, sweep.seeds.first, runs),
        settings,
        ..TuneReport::default()
    };
    recommend::decide(&mut report);
    let scenarios: Vec<&Scenario> = sweep.settings.iter().map(|(_, s)| s.as_ref()).collect();
    recommend::rules(&mut report, &scenarios);
    report
        .warnings
        .extend(fault_count_warnings(&report.fault_counts));
    report
}

/// How far the realized count of a fault kind may stray from its nominal count before `tune`
/// warns that the profile that ran is not the profile described: ±10 %.
pub const FAULT_COUNT_TOLERANCE: f64 = 0.10;

/// A warning per fault kind whose realized count is off its nominal count by more than
/// [`FAULT_COUNT_TOLERANCE`] (queued faults that never began before the run ended, a rate
/// the fault window cannot hold, …).
pub fn fault_count_warnings(counts: &[FaultCount]) -> Vec<String> {
    counts
        .iter()
        .filter(|f| {
            f.nominal > 0.0
                && (f.realized as f64 - f.nominal).abs() > FAULT_COUNT_TOLERANCE * f.nominal
        })
        .map(|f| {
            format!(
                "fault {}: realized {} differs from nominal {} by {:+.1} % (more than ±{} %): \
                 the profile that ran is not the one described",
                f.kind,
                f.realized,
                round(f.nominal),
                100.0 * (f.realized as f64 - f.nominal) / f.nominal,
                100.0 * FAULT_COUNT_TOLERANCE
            )
        })
        .collect()
}

/// Nominal (what the profile's rates and schedule imply) against realized (what the
/// histories show) fault counts per kind, over the first setting's base runs.
fn fault_counts(scenario: &Scenario, first: SeedRange, runs: &[Runs]) -> Vec<FaultCount> {
    let Some(r) = runs.first() else {
        return Vec::new();
    };
    let _ = first;
    realized_vs_nominal(scenario, &r.base)
}

/// The fault profile of the base scenario over `seeds`, as the rules of thumb need it.
pub fn profile(scenario: &Scenario, seeds: SeedRange) -> Profile {
    let mut p = Profile {
        round_trip_ms: round(2.0 * scenario.network.latency.base.high()),
        ..Profile::default()
    };
    for seed in seeds.iter() {
        // Per node, its pauses as (start, end), in plan order.
        let mut pauses: std::collections::BTreeMap<String, Vec<(f64, f64)>> =
            std::collections::BTreeMap::new();
        for timed in plan(scenario, seed).faults {
            match &timed.fault {
                Fault::GcPause {
                    node, duration_ms, ..
                }
                | Fault::VmSuspend {
                    node, duration_ms, ..
                } => {
                    p.pauses += 1;
                    p.longest_pause_ms = p.longest_pause_ms.max(*duration_ms);
                    pauses
                        .entry(node.clone())
                        .or_default()
                        .push((timed.at_ms, timed.end_ms()));
                }
                Fault::WorkerCrash { .. } => p.crashes += 1,
                // The rules of thumb read pauses and crashes; outages come from
                // `longest_outage_ms` below.
                Fault::ClockStep { .. }
                | Fault::Partition { .. }
                | Fault::HoldRelease { .. }
                | Fault::CoordinatorRestart { .. }
                | Fault::StorageRestart { .. }
                | Fault::Panic { .. }
                | Fault::HolderLinkCut { .. } => {}
            }
        }
        for list in pauses.values_mut() {
            p.longest_stall_ms = p.longest_stall_ms.max(longest_stall_ms(list));
        }
    }
    p.longest_outage_ms = longest_outage_ms(scenario, seeds);
    p.longest_pause_ms = round(p.longest_pause_ms);
    p.longest_stall_ms = round(p.longest_stall_ms);
    p
}

/// The longest stall of one node: its pauses `(start, end)`, a pause that begins when (or
/// before) the previous one ended — queued behind it — joined to it.
pub fn longest_stall_ms(pauses: &mut [(f64, f64)]) -> f64 {
    pauses.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut longest = 0.0_f64;
    let mut current: Option<(f64, f64)> = None;
    for &(start, end) in pauses.iter() {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                longest = longest.max(e - s);
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    if let Some((s, e)) = current {
        longest = longest.max(e - s);
    }
    longest
}

/// One setting's statistics over its base runs (in seed order).
pub fn setting_result(
    setting: &Setting,
    scenario: &Scenario,
    summaries: &[SeedSummary],
) -> SettingResult {
    let runs = summaries.len() as u64;
    let count = |f: fn(&SeedSummary) -> bool| summaries.iter().filter(|s| f(s)).count() as u64;
    let sum = |f: fn(&Metrics) -> u64| summaries.iter().map(|s| f(&s.metrics)).sum::<u64>();
    let pooled = |f: fn(&Metrics) -> &Vec<f64>| -> Vec<f64> {
        summaries
            .iter()
            .flat_map(|s| f(&s.metrics).iter().copied())
            .collect()
    };
    let per_seed =
        |f: fn(&Metrics) -> f64| -> Vec<f64> { summaries.iter().map(|s| f(&s.metrics)).collect() };
    let exposure_ms: f64 = summaries.iter().map(|s| exposure_ms(&s.metrics)).sum();
    let takeover_causes =
        summaries
            .iter()
            .map(|s| takeovers(&s.metrics))
            .fold(Takeovers::default(), |a, b| Takeovers {
                all: a.all + b.all,
                after_crash: a.after_crash + b.after_crash,
                after_stall: a.after_stall + b.after_stall,
                after_outage: a.after_outage + b.after_outage,
            });
    SettingResult {
        values: setting
            .iter()
            .map(|(field, value)| FieldValue {
                field: field.clone(),
                value: value.clone(),
            })
            .collect(),
        scenario_hash: scenario.hash(),
        ttl_ms: scenario.lease.effective_ttl_ms(),
        renew_every_ms: scenario.workers.renew_every_ms,
        renew_deadline_ms: scenario.workers.renew_deadline_ms,
        runs,
        panics: count(|s| s.panic),
        runaways: count(|s| s.runaway),
        seeds_violating_i3: count(|s| s.i3),
        seeds_violating_i4: count(|s| s.i4),
        unsafe_seeds: stats::seed_share(count(|s| s.unsafe_seed), runs),
        stale_accepts: summaries.iter().map(|s| s.stale_accepts).sum(),
        false_expiries: stats::rate(sum(|m| m.false_expiries), exposure_ms),
        stand_downs: stats::rate(sum(|m| m.stand_downs), exposure_ms),
        outage_stand_downs: sum(|m| m.outage_stand_downs),
        takeovers: takeover_causes,
        takeover_ms: stats::quantiles(&pooled(|m| &m.takeover_latency_ms)),
        recovery_after_crash_ms: stats::quantiles(&pooled(|m| &m.recovery_after_crash_ms)),
        recovery_after_stall_ms: stats::quantiles(&pooled(|m| &m.recovery_after_stall_ms)),
        unavailability: stats::mean_ci(&per_seed(|m| m.unavailability), true),
        renewals_per_lease_per_s: stats::mean_ci(
            &per_seed(|m| {
                if m.lease_held_ms > 0.0 {
                    m.renew_requests as f64 * 1000.0 / m.lease_held_ms
                } else {
                    0.0
                }
            }),
            true,
        ),
        per_seed: summaries.iter().map(|s| seed_sample(&s.metrics)).collect(),
        ..SettingResult::default()
    }
}

/// What one seed contributes to the ranking.
fn seed_sample(m: &Metrics) -> SeedSample {
    SeedSample {
        recovery_after_crash_ms: m.recovery_after_crash_ms.clone(),
        recovery_after_stall_ms: m.recovery_after_stall_ms.clone(),
        takeover_ms: m.takeover_latency_ms.clone(),
        false_expiries: m.false_expiries,
        stand_downs: m.stand_downs,
        exposure_ms: exposure_ms(m),
    }
}

/// One outage form's runs of a setting (its re-runs, or its own runs for `in-profile`).
pub fn outage_run(form: &str, summaries: &[SeedSummary]) -> OutageRun {
    let caused = |m: &Metrics| outage_caused(m);
    let failed = summaries
        .iter()
        .filter(|s| {
            let c = caused(&s.metrics);
            c.0 + c.1 + c.2 + c.3 > 0
        })
        .count() as u64;
    let sum = |k: usize| {
        summaries
            .iter()
            .map(|s| {
                let c = caused(&s.metrics);
                [c.0, c.1, c.2, c.3][k]
            })
            .sum::<u64>()
    };
    OutageRun {
        form: form.to_string(),
        failed_seeds: stats::seed_share(failed, summaries.len() as u64),
        stand_downs: sum(0),
        takeovers: sum(1),
        false_expiries: sum(2),
        current_write_rejections: sum(3),
        unsafe_seeds: summaries.iter().filter(|s| s.unsafe_seed).count() as u64,
    }
}

// --- The outage definition, fault exposure and fault counts, as the checker and scenario
// crates define them (one definition for the metric, the coverage and tune). ---

/// Fault exposure of one run: the fault window, the denominator of every per-hour rate.
fn exposure_ms(m: &Metrics) -> f64 {
    m.fault_window_ms
}

/// Takeovers of one run by cause.
fn takeovers(m: &Metrics) -> Takeovers {
    Takeovers {
        all: m.takeovers,
        after_crash: m.takeovers_after_crash,
        after_stall: m.takeovers_after_stall,
        after_outage: m.outage_takeovers,
    }
}

/// (stand-downs, takeovers, false expiries, rejected current writes) caused by an outage, as
/// the checker defines it once (`fencesim_check::outage`): losses that would not have
/// happened without the outage.
fn outage_caused(m: &Metrics) -> (u64, u64, u64, u64) {
    (
        m.outage_stand_downs,
        m.outage_takeovers,
        m.outage_false_expiries,
        m.outage_current_write_rejections,
    )
}

/// The longest outage in the profile over `seeds` (the service down, or a holder cut off).
fn longest_outage_ms(scenario: &Scenario, seeds: SeedRange) -> f64 {
    round(fencesim_scenario::outage::longest_outage_ms(
        scenario,
        seeds.iter(),
    ))
}

/// Realized (faults that began, from the histories) against nominal (the profile's rates
/// and schedule) fault counts per kind, summed over the runs.
fn realized_vs_nominal(scenario: &Scenario, runs: &[SeedSummary]) -> Vec<FaultCount> {
    fencesim_scenario::outage::nominal_fault_counts(scenario)
        .into_iter()
        .map(|(kind, per_seed)| FaultCount {
            kind: kind.name().to_string(),
            nominal: round(per_seed * runs.len() as f64),
            realized: runs
                .iter()
                .map(|s| s.metrics.faults_begun.get(kind.name()).unwrap_or(0))
                .sum(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
