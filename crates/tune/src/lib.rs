//! Choosing lease timings by measurement (`fencesim tune`): a grid of settings from
//! `--vary` (`grid`), every setting run over the **same seeds with the same fault plans**
//! (common random numbers: `plan(&scenario, seed)` reads no lease or worker timing field, so
//! differences between settings come from the setting, not from luck), per-setting
//! statistics with confidence intervals (`stats`), and a recommendation against the user's
//! targets next to what the analytic rules of thumb would pick (`recommend`).
//!
//! Architecture Invariant: no I/O. The caller reads the scenario file and writes the
//! outputs (`fencesim_report::tune`, `fencesim_report::tune_plot`).

pub mod grid;
pub mod recommend;
pub mod stats;

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc, Mutex,
};

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_report::tune::{round, FieldValue, Profile, SettingResult, Targets, TuneReport};
use fencesim_scenario::{
    fault::Fault, parse_str_with, plan::plan, Override, Scenario, ScenarioError, SeedRange,
};
use fencesim_sim::StoreFactory;

pub use grid::{grid, parse_vary, Item, Setting, Vary};

/// A validated sweep, ready to run: the base scenario and one scenario per setting.
pub struct Sweep {
    /// The scenario after `--set`, before `--vary`.
    pub base: Arc<Scenario>,
    /// Per setting: the varied values and the resolved scenario.
    pub settings: Vec<(Setting, Arc<Scenario>)>,
    /// Seeds run for every setting.
    pub seeds: SeedRange,
    /// `--set` overrides, as typed.
    pub overrides: Vec<String>,
    /// `--vary` arguments, as typed.
    pub varied: Vec<String>,
    /// Varied fields given only as ratios of another varied field.
    pub derived: Vec<String>,
    /// Targets for the recommendation.
    pub targets: Targets,
}

/// Resolves every setting's scenario: `overrides` then the setting's values, each validated
/// like a file (an error names the field and says it came from `--set`/`--vary`).
pub fn prepare(
    text: &str,
    file: &str,
    overrides: &[Override],
    varies: &[(String, Vary)],
    seeds: Option<SeedRange>,
    targets: Targets,
) -> Result<Sweep, ScenarioError> {
    let base = Arc::new(parse_str_with(text, file, overrides)?);
    let vary_list: Vec<Vary> = varies.iter().map(|(_, v)| v.clone()).collect();
    let settings = grid(&vary_list).map_err(|expected| ScenarioError {
        file: file.to_string(),
        line: None,
        field: "--vary".to_string(),
        expected,
    })?;
    let mut resolved = Vec::with_capacity(settings.len());
    for setting in settings {
        let mut all = overrides.to_vec();
        all.extend(setting.iter().map(|(field, value)| Override {
            field: field.clone(),
            value: value.clone(),
        }));
        let scenario = parse_str_with(text, file, &all)?;
        resolved.push((setting, Arc::new(scenario)));
    }
    Ok(Sweep {
        seeds: seeds.unwrap_or(base.seeds),
        base,
        settings: resolved,
        overrides: overrides.iter().map(Override::to_arg).collect(),
        varied: varies.iter().map(|(text, _)| text.clone()).collect(),
        derived: vary_list
            .iter()
            .filter(|v| v.items.iter().all(|i| matches!(i, Item::Ratio { .. })))
            .map(|v| v.field.clone())
            .collect(),
        targets,
    })
}

/// Runs every (setting, seed) on `jobs` threads and measures. `on_done(finished, total)` is
/// called after each run (for progress). The result does not depend on `jobs`.
pub fn run(
    sweep: &Sweep,
    jobs: usize,
    factory: &StoreFactory,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> TuneReport {
    let seeds: Vec<u64> = sweep.seeds.iter().collect();
    let total = sweep.settings.len() * seeds.len();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, SeedOutcome)>> = Mutex::new(Vec::with_capacity(total));
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= total {
                    break;
                }
                let (setting, seed) = (k / seeds.len(), seeds[k % seeds.len()]);
                let scenario = &sweep.settings[setting].1;
                let outcome = fencesim_sim::runner::run_seed_with(scenario, seed, factory).outcome;
                results
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((k, outcome));
                on_done(finished.fetch_add(1, Ordering::Relaxed) + 1, total);
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(k, _)| *k);
    let mut per_setting: Vec<Vec<SeedOutcome>> = vec![Vec::new(); sweep.settings.len()];
    for (k, outcome) in results {
        per_setting[k / seeds.len()].push(outcome);
    }
    measure(sweep, &per_setting)
}

/// The report from every setting's outcomes (in seed order): statistics, then the
/// recommendation.
pub fn measure(sweep: &Sweep, outcomes: &[Vec<SeedOutcome>]) -> TuneReport {
    let profile = profile(&sweep.base, sweep.seeds);
    let settings: Vec<SettingResult> = sweep
        .settings
        .iter()
        .zip(outcomes)
        .map(|((setting, scenario), outcomes)| setting_result(setting, scenario, outcomes))
        .collect();
    let mut report = TuneReport {
        scenario: sweep.base.name.clone(),
        base_hash: sweep.base.hash(),
        seeds: sweep.seeds.to_string(),
        overrides: sweep.overrides.clone(),
        varied: sweep.varied.clone(),
        derived: sweep.derived.clone(),
        targets: sweep.targets.clone(),
        profile,
        settings,
        ..TuneReport::default()
    };
    let scenarios: Vec<&Scenario> = sweep.settings.iter().map(|(_, s)| s.as_ref()).collect();
    recommend::recommend(&mut report, &scenarios);
    report
}

/// The fault profile of the base scenario over `seeds`, as the rules of thumb need it.
pub fn profile(scenario: &Scenario, seeds: SeedRange) -> Profile {
    let mut p = Profile {
        round_trip_ms: round(2.0 * scenario.network.latency.base.high()),
        ..Profile::default()
    };
    for seed in seeds.iter() {
        for timed in plan(scenario, seed).faults {
            match timed.fault {
                Fault::GcPause { duration_ms, .. } | Fault::VmSuspend { duration_ms, .. } => {
                    p.pauses += 1;
                    p.longest_pause_ms = p.longest_pause_ms.max(duration_ms);
                }
                Fault::CoordinatorRestart { duration_ms } => {
                    p.longest_outage_ms = p.longest_outage_ms.max(duration_ms);
                }
                Fault::WorkerCrash { .. } => p.crashes += 1,
                _ => {}
            }
        }
    }
    p.longest_pause_ms = round(p.longest_pause_ms);
    p.longest_outage_ms = round(p.longest_outage_ms);
    p
}

fn per_hour(count: u64, run_ms: f64) -> f64 {
    if run_ms <= 0.0 {
        0.0
    } else {
        count as f64 * 3_600_000.0 / run_ms
    }
}

/// One setting's statistics over its seeds.
pub fn setting_result(
    setting: &Setting,
    scenario: &Scenario,
    outcomes: &[SeedOutcome],
) -> SettingResult {
    let has = |o: &SeedOutcome, i: Invariant| o.checked.violations.iter().any(|v| v.invariant == i);
    let runs = outcomes.len() as u64;
    let panics = outcomes.iter().filter(|o| o.panic.is_some()).count() as u64;
    let unsafe_seeds = outcomes
        .iter()
        .filter(|o| o.panic.is_some() || has(o, Invariant::I3) || has(o, Invariant::I4))
        .count() as u64;
    let metrics: Vec<_> = outcomes.iter().map(|o| &o.checked.metrics).collect();
    let pooled = |f: fn(&fencesim_check::Metrics) -> &Vec<f64>| -> Vec<f64> {
        metrics.iter().flat_map(|m| f(m).iter().copied()).collect()
    };
    let rate = |f: fn(&fencesim_check::Metrics) -> f64| -> Vec<f64> {
        metrics.iter().map(|m| f(m)).collect()
    };
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
        panics,
        seeds_violating_i3: outcomes.iter().filter(|o| has(o, Invariant::I3)).count() as u64,
        seeds_violating_i4: outcomes.iter().filter(|o| has(o, Invariant::I4)).count() as u64,
        unsafe_seeds: stats::seed_share(unsafe_seeds, runs),
        stale_accepts: outcomes
            .iter()
            .flat_map(|o| &o.checked.violations)
            .filter(|v| matches!(v.invariant, Invariant::I3 | Invariant::I4))
            .count() as u64,
        false_expiries_per_hour: stats::mean_ci(
            &rate(|m| per_hour(m.false_expiries, m.run_ms)),
            true,
        ),
        stand_downs_per_hour: stats::mean_ci(&rate(|m| per_hour(m.stand_downs, m.run_ms)), true),
        outage_stand_downs: metrics.iter().map(|m| m.outage_stand_downs).sum(),
        takeover_ms: stats::quantiles(&pooled(|m| &m.takeover_latency_ms)),
        recovery_after_crash_ms: stats::quantiles(&pooled(|m| &m.recovery_after_crash_ms)),
        recovery_after_stall_ms: stats::quantiles(&pooled(|m| &m.recovery_after_stall_ms)),
        unavailability: stats::mean_ci(&rate(|m| m.unavailability), true),
        renewals_per_lease_per_s: stats::mean_ci(
            &rate(|m| {
                if m.lease_held_ms > 0.0 {
                    m.renew_requests as f64 * 1000.0 / m.lease_held_ms
                } else {
                    0.0
                }
            }),
            true,
        ),
        ..SettingResult::default()
    }
}
