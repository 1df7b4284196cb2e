//! `fencesim live` (issue 12): run etcd-preset scenarios against a real etcd, real worker
//! processes and real SQLite; `--compare` runs the simulator too and writes the fidelity
//! report. `fencesim live-worker` is the worker role (hidden).

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use fencesim::{builtin_store, StoreFactory};
use fencesim_live::{
    fidelity::{self, Comparison, Side, Stats},
    run_live, stop_on_signals, LiveError, MAX_RUNS,
};
use fencesim_scenario::{Outcome, Override, Scenario, SeedRange};

use crate::{parse_seeds, shown, InputError};

/// What `fencesim live` was asked.
pub(crate) struct LiveArgs {
    pub(crate) scenarios: Vec<PathBuf>,
    pub(crate) runs: u32,
    pub(crate) out: Option<PathBuf>,
    pub(crate) compare: bool,
    pub(crate) report: PathBuf,
    pub(crate) sim_seeds: Option<String>,
    pub(crate) set: Vec<Override>,
}

fn expected(scenario: &Scenario) -> String {
    match &scenario.expect.outcome {
        Outcome::Safe => "safe".to_string(),
        Outcome::Violates(list) => {
            let mut names: Vec<String> = list.iter().map(ToString::to_string).collect();
            names.sort();
            names.join("+")
        }
    }
}

/// Exit 0 when every live run's verdict is the scenario's expected one (and, with
/// `--compare`, the verdicts agree and the windows are within 10 %); 1 otherwise.
pub(crate) fn live(args: &LiveArgs) -> Result<bool, InputError> {
    if args.runs == 0 || args.runs > MAX_RUNS {
        return Err(InputError(format!(
            "--runs: expected 1..={MAX_RUNS}, got {}",
            args.runs
        )));
    }
    if args.compare {
        // Refuse an unwritable report before an hour of live runs, not after.
        let inputs: Vec<&Path> = args.scenarios.iter().map(PathBuf::as_path).collect();
        crate::outputs::preflight(
            &[crate::outputs::Output::new("--report", &args.report)],
            &inputs,
        )?;
    }
    let mut loaded = Vec::new();
    for path in &args.scenarios {
        let scenario = fencesim_scenario::load_with(path, &args.set)?;
        // Refuse before starting anything.
        fencesim_live::live_plan(&scenario, scenario.seeds.start)
            .map_err(|error| InputError(format!("{}: {error}", shown(path))))?;
        loaded.push((path.clone(), Arc::new(scenario)));
    }
    let version = fencesim_live::etcd::etcd_version().map_err(|error| {
        InputError(format!(
            "{error}\n  live mode needs etcd 3.4 (Debian: apt-get install etcd-server), or FENCESIM_ETCD=/path/to/etcd"
        ))
    })?;
    println!("live: {version}");
    let stop = stop_on_signals().map_err(|error| InputError(error.to_string()))?;
    let exe = std::env::current_exe()?;
    let mut all_ok = true;
    let mut comparisons = Vec::new();
    for (path, scenario) in &loaded {
        let want = expected(scenario);
        println!(
            "{}: {} live run(s) of {:.1} s each, expected {want}",
            scenario.name,
            args.runs,
            fencesim_live::run_length_ms(
                scenario,
                &fencesim_live::live_plan(scenario, scenario.seeds.start)
                    .map_err(|e| InputError(e.to_string()))?
            ) / 1_000.0
        );
        let mut live_side = Side::default();
        for run in 0..args.runs {
            let seed = scenario.seeds.start + u64::from(run);
            if run == 0 {
                for note in fencesim_live::live_plan(scenario, seed)
                    .map(|p| p.notes)
                    .unwrap_or_default()
                {
                    println!("  note: {note}");
                }
            }
            let keep = args
                .out
                .as_ref()
                .map(|dir| dir.join(&scenario.name).join(format!("run-{run}")));
            let result = match run_live(scenario, seed, &exe, &stop, keep.as_deref()) {
                Ok(result) => result,
                Err(LiveError::Interrupted) => {
                    eprintln!("live: interrupted; every process and temp directory it started was removed");
                    std::process::exit(130);
                }
                Err(error) => return Err(InputError(format!("{}: {error}", shown(path)))),
            };
            let checked = fencesim_check::check(&result.history);
            let before = live_side.takeovers.len();
            live_side.add(&result.history, &checked);
            let verdict = fidelity::verdict(&checked);
            let verdict = if verdict.is_empty() {
                "safe".to_string()
            } else {
                verdict.into_iter().collect::<Vec<_>>().join("+")
            };
            let takeovers: Vec<String> = live_side.takeovers[before..]
                .iter()
                .map(|t| {
                    format!(
                        "takeover window {:.0} ms (expiry {:.0} ms, token +{})",
                        t.window_ms, t.expiry_ms, t.token_step
                    )
                })
                .collect();
            let ok = verdict == want;
            println!(
                "  run {}: {verdict}{} ({} events){}",
                run + 1,
                if ok {
                    ""
                } else {
                    "  (not the scenario's verdict)"
                },
                result.history.events.len(),
                if takeovers.is_empty() {
                    String::new()
                } else {
                    format!(", {}", takeovers.join(", "))
                }
            );
        }
        let met = live_side.verdict() == want;
        all_ok &= met;
        println!(
            "  live verdict {} (invariants violated in at least one run): {}",
            live_side.verdict(),
            if met {
                "as expected"
            } else {
                "NOT the expected verdict"
            }
        );
        let windows = Stats::of(&live_side.windows());
        println!(
            "  live takeover window: n={} min {:.0} p50 {:.0} mean {:.0} max {:.0} ms",
            windows.n, windows.min, windows.p50, windows.mean, windows.max
        );
        if args.compare {
            let seeds = match &args.sim_seeds {
                Some(text) => parse_seeds(text)?,
                None => SeedRange { start: 0, end: 200 },
            };
            let mut sim_side = Side::default();
            let factory: StoreFactory = Arc::new(builtin_store);
            for seed in seeds.start..seeds.end {
                let result = fencesim::run_seed_with(scenario, seed, &factory);
                let checked = fencesim_check::check(&result.history);
                sim_side.add(&result.history, &checked);
            }
            let sim = Stats::of(&sim_side.windows());
            println!(
                "  simulated takeover window ({} seeds): n={} min {:.0} p50 {:.0} mean {:.0} max {:.0} ms",
                seeds.len(), sim.n, sim.min, sim.p50, sim.mean, sim.max
            );
            let comparison = Comparison {
                scenario: scenario.name.clone(),
                file: shown(path),
                live: live_side,
                sim: sim_side,
            };
            let agree = comparison.verdicts_agree();
            let close = comparison
                .window_difference()
                .is_none_or(|d| d.abs() <= fidelity::WINDOW_TOLERANCE);
            println!(
                "  verdicts {}; window difference {}",
                if agree { "agree" } else { "DISAGREE" },
                comparison
                    .window_difference()
                    .map_or("-".to_string(), |d| format!("{:+.1} %", d * 100.0))
            );
            all_ok &= agree && close;
            comparisons.push(comparison);
        }
    }
    if args.compare {
        let files: Vec<String> = loaded.iter().map(|(p, _)| shown(p)).collect();
        let seeds = args
            .sim_seeds
            .clone()
            .unwrap_or_else(|| "0..200".to_string());
        let header = format!(
            "Made by `cargo run --release -p fencesim -- live {} --runs {} --compare --sim-seeds {seeds}` \
             against {version} on loopback (one member, default election timeout), real worker \
             processes (SIGSTOP/SIGCONT for pauses) and a real SQLite file. Live figures vary \
             from run to run; the simulated ones are deterministic. A scenario's verdict is \
             the invariants violated in at least one run or seed (as `[expect]` and the \
             catalogue judge it); the counts per distinct verdict follow it.",
            files.join(" "),
            args.runs
        );
        write_report(&args.report, &fidelity::markdown(&header, &comparisons))?;
        println!("wrote {}", args.report.display());
    }
    Ok(all_ok)
}

/// Whole or not at all (`fencesim_report::fs::write_atomic`), directories created.
fn write_report(path: &Path, text: &str) -> Result<(), InputError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|error| InputError(format!("{}: {error}", dir.display())))?;
    }
    fencesim_report::fs::write_atomic(path, text)
        .map_err(|error| InputError(format!("--report {}: {error}", path.display())))
}

/// The hidden worker role.
pub(crate) fn worker(config: &Path) -> Result<bool, InputError> {
    fencesim_live::worker::run(config).map_err(InputError)?;
    Ok(true)
}
