//! `fencesim live`: run etcd-preset scenarios against a real etcd, real worker
//! processes and real SQLite; `--compare` runs the simulator too and writes the fidelity
//! report. `fencesim live-worker` is the worker role (hidden).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
};

use fencesim_live::{
    fidelity::{self, Comparison, Side, Stats},
    run_live, stop_on_signals, Kind, LiveError, MAX_RUNS,
};
use fencesim_scenario::{Outcome, Override, Scenario, SeedRange};

use crate::common::{shown, InputError};

/// `fencesim live SCENARIO...`.
#[derive(clap::Args)]
pub(crate) struct LiveArgs {
    /// Scenario files (TOML) with `[lease] preset = "etcd"`.
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// Live runs per scenario (each lasts the scenario's full length in real time; at
    /// most 1000). Run k uses the scenario's k-th seed for its fault plan and work draws.
    #[arg(long, default_value_t = 3)]
    runs: u32,
    /// Keep each run's merged history and etcd log in DIR/<scenario>/run-<k>/.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also simulate each scenario and write the fidelity report (`--report`).
    #[arg(long)]
    compare: bool,
    /// Where `--compare` writes the report.
    #[arg(long, default_value = "reports/fidelity.md")]
    report: PathBuf,
    /// Seeds `--compare` simulates, `A..B` (default 0..200).
    #[arg(long)]
    sim_seeds: Option<String>,
    #[command(flatten)]
    set: crate::args::SetArgs,
    /// Live runs at once (1 to 8), each with its own etcd, workers and directory.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Read the histories an earlier `--out DIR` kept instead of running live again (to
    /// render the report anew).
    #[arg(long, value_name = "DIR")]
    from_kept: Option<PathBuf>,
}

/// Most live runs at once (`--jobs`): each is mostly asleep, but its timings are measured.
const MAX_JOBS: usize = 8;

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
/// `--compare`, the verdict shares agree and the median windows are within 10 %); 1 otherwise.
pub(crate) fn live(args: &LiveArgs) -> Result<bool, InputError> {
    let set = args.set.overrides()?;
    let sim_seeds = check_args(args)?;
    let loaded = load(args, &set)?;
    if args.from_kept.is_none() {
        private_network(args, &loaded)?;
    }
    let version = service_versions(&loaded)?;
    let stop = stop_on_signals().map_err(|error| InputError(error.to_string()))?;
    let exe = std::env::current_exe()?;
    let mut all_ok = true;
    let mut comparisons = Vec::new();
    for (path, scenario) in &loaded {
        let (ok, comparison) = live_scenario(args, path, scenario, sim_seeds, &exe, &stop)?;
        all_ok &= ok;
        comparisons.extend(comparison);
    }
    if args.compare {
        let header = report_header(args, &loaded, sim_seeds, &version);
        write_report(&args.report, &fidelity::markdown(&header, &comparisons))?;
        println!("wrote {}", args.report.display());
    }
    Ok(all_ok)
}

/// Every input is checked before anything starts: the runs, the simulated seeds (returned),
/// the report's path; [`load`] checks every live seed's fault plan (each seed draws its own).
fn check_args(args: &LiveArgs) -> Result<SeedRange, InputError> {
    if args.runs == 0 || args.runs > MAX_RUNS {
        return Err(InputError(format!(
            "--runs: expected 1..={MAX_RUNS}, got {}",
            args.runs
        )));
    }
    if args.jobs == 0 || args.jobs > MAX_JOBS {
        return Err(InputError(format!(
            "--jobs: expected 1..={MAX_JOBS} live runs at once, got {}",
            args.jobs
        )));
    }
    let sim_seeds = match &args.sim_seeds {
        Some(text) => {
            SeedRange::parse(text).map_err(|error| InputError(format!("--sim-seeds: {error}")))?
        }
        None => SeedRange { start: 0, end: 200 },
    };
    if args.compare {
        // Refuse an unwritable report before an hour of live runs, not after.
        let inputs: Vec<&Path> = args.scenarios.iter().map(PathBuf::as_path).collect();
        fencesim::outputs::preflight_scenarios(
            &[fencesim::outputs::Output::new("--report", &args.report)],
            &inputs,
            None,
        )?;
    }
    Ok(sim_seeds)
}

/// The scenarios, each loaded with the `--set` overrides and every live seed's fault plan
/// checked.
fn load(args: &LiveArgs, set: &[Override]) -> Result<Vec<(PathBuf, Arc<Scenario>)>, InputError> {
    let mut loaded = Vec::new();
    for path in &args.scenarios {
        let scenario = fencesim_scenario::load_with(path, set)?;
        let seeds = live_seeds(&scenario, args.runs);
        fencesim_live::check_seeds(&scenario, seeds)
            .map_err(|error| InputError(format!("{}: {error}", shown(path))))?;
        loaded.push((path.clone(), Arc::new(scenario)));
    }
    Ok(loaded)
}

/// When a live run cuts workers off the lease service: re-runs this command (same pid) in a
/// private network namespace, where the cuts are nftables rules ([`fencesim_live::netns`]),
/// or refuses it before anything starts when this machine cannot make one. Inside it, brings
/// loopback up.
fn private_network(args: &LiveArgs, loaded: &[(PathBuf, Arc<Scenario>)]) -> Result<(), InputError> {
    use fencesim_live::netns;
    let Some((path, seed)) = loaded.iter().find_map(|(path, scenario)| {
        fencesim_live::first_network_cut(scenario, live_seeds(scenario, args.runs))
            .map(|seed| (path, seed))
    }) else {
        return Ok(());
    };
    if netns::inside() {
        return netns::loopback_up().map_err(InputError);
    }
    netns::available().map_err(|why| {
        InputError(format!(
            "{}: seed {seed} partitions workers from the coordinator, which live mode cuts for real: {why}",
            shown(path)
        ))
    })?;
    let exe = std::env::current_exe()?;
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    Err(InputError(netns::reexec(&exe, &argv)))
}

/// The version of every service the scenarios run against, each printed once; an error
/// saying how to install one that cannot be run.
fn service_versions(loaded: &[(PathBuf, Arc<Scenario>)]) -> Result<String, InputError> {
    let mut versions = Vec::new();
    for (path, scenario) in loaded {
        let kind = fencesim_live::live_plan(scenario, scenario.seeds.start)
            .map_err(|error| InputError(format!("{}: {error}", shown(path))))?
            .kind;
        let version = fencesim_live::service_version(kind).map_err(|error| {
            InputError(match kind {
                Kind::Etcd => format!(
                    "{error}\n  live mode needs etcd 3.4 (Debian: apt-get install etcd-server), or FENCESIM_ETCD=/path/to/etcd"
                ),
                Kind::Zookeeper { .. } => format!(
                    "{error}\n  live mode needs ZooKeeper and java (Debian: apt-get install zookeeper), or FENCESIM_ZOOKEEPER_JAR=/path/to/zookeeper.jar"
                ),
            })
        })?;
        if !versions.contains(&version) {
            println!("live: {version}");
            versions.push(version);
        }
    }
    Ok(versions.join(" and "))
}

/// One scenario's live runs (read back from `--from-kept`, or run), each printed, its live
/// verdict against the expected one and, with `--compare`, the comparison with the
/// simulation. Returns whether it passes, and the comparison.
fn live_scenario(
    args: &LiveArgs,
    path: &Path,
    scenario: &Arc<Scenario>,
    sim_seeds: SeedRange,
    exe: &Path,
    stop: &Arc<AtomicBool>,
) -> Result<(bool, Option<Comparison>), InputError> {
    let want = expected(scenario);
    let first = fencesim_live::live_plan(scenario, scenario.seeds.start)
        .map_err(|error| InputError(format!("{}: {error}", shown(path))))?;
    println!(
        "{}: {} live run(s) of {:.1} s each, expected {want}",
        scenario.name,
        args.runs,
        fencesim_live::run_length_ms(scenario, &first) / 1_000.0
    );
    let mut live_side = Side::default();
    let seeds: Vec<u64> = live_seeds(scenario, args.runs).collect();
    let results = match &args.from_kept {
        Some(dir) => read_kept(dir, scenario, &seeds)?,
        None => run_all(args, scenario, &seeds, exe, stop),
    };
    for (run, (seed, result)) in seeds.iter().zip(results).enumerate() {
        let result = match result {
            Ok(result) => result,
            Err(LiveError::Interrupted) => interrupted(),
            Err(error) => return Err(InputError(format!("{}: {error}", shown(path)))),
        };
        print_run(run, *seed, &result, &mut live_side);
    }
    let met = live_side.verdict() == want;
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
        let comparison = compare(path, scenario, live_side, sim_seeds, stop)?;
        let (agree, paired) = comparison.paired_agreement();
        println!(
            "  per-run agreement with the same seed's simulation: {agree}/{paired}; verdict shares {}; median window difference {}; KS {}",
            if comparison.verdicts_agree() { "agree" } else { "DISAGREE" },
            comparison
                .window_difference()
                .map_or("-".to_string(), |d| format!("{:+.1} %", d * 100.0)),
            comparison
                .window_test()
                .map_or("-".to_string(), |(d, p)| format!("D {d:.2}, p {p:.3}"))
        );
        return Ok((met && comparison.passes(), Some(comparison)));
    }
    Ok((met, None))
}

/// One live run's line: its verdict, when it started, its events and takeovers (added to
/// `live_side`).
fn print_run(run: usize, seed: u64, result: &fencesim_live::LiveRun, live_side: &mut Side) {
    let checked = fencesim_check::check(&result.history);
    let before = live_side.takeovers.len();
    live_side.add(seed, &result.history, &checked);
    let verdict = fidelity::verdict_name(&checked);
    let takeovers: Vec<String> = live_side.takeovers[before..]
        .iter()
        .map(|t| {
            format!(
                "takeover window {:.0} ms (expiry {:.0} ms, token +{})",
                t.window_ms, t.expiry_ms, t.token_step
            )
        })
        .collect();
    println!(
        "  run {} (seed {seed}, {}): {verdict} ({} events){}",
        run + 1,
        if result.phase_ms.is_nan() {
            "kept history".to_string()
        } else {
            format!(
                "started {:.0} ms after the service was ready",
                result.phase_ms
            )
        },
        result.history.events.len(),
        if takeovers.is_empty() {
            String::new()
        } else {
            format!(", {}", takeovers.join(", "))
        }
    );
}

/// The fidelity report's header: the command that made it, against which services, and how.
fn report_header(
    args: &LiveArgs,
    loaded: &[(PathBuf, Arc<Scenario>)],
    sim_seeds: SeedRange,
    version: &str,
) -> String {
    let files: Vec<String> = loaded.iter().map(|(p, _)| shown(p)).collect();
    let header = format!(
        "Made by `cargo run --release -p fencesim-cli -- live {} --runs {} --jobs {} --compare --sim-seeds {sim_seeds}{}` \
         against {version} on loopback (etcd: one member, default election timeout; \
         ZooKeeper: standalone, tickTime = `expiry_check_ms`; {} run(s) at once, each with \
         its own service), real worker processes (SIGSTOP/SIGCONT for pauses) and a real \
         SQLite file. Live run k uses seed k's fault plan and work draws and starts at a \
         drawn offset within one expiry-check period (etcd 500 ms, ZooKeeper one tick) after \
         its service is ready. Live figures vary from run to run; the simulated ones are \
         deterministic.",
        files.join(" "),
        args.runs,
        args.jobs,
        if args.report == Path::new("reports/fidelity.md") {
            String::new()
        } else {
            format!(" --report {}", args.report.display())
        },
        args.jobs
    );
    match &args.from_kept {
        Some(dir) => format!(
            "{header} This file was rendered from the histories that command kept with `--out {}`, \
             by the same command with `--from-kept {}` instead.",
            dir.display(),
            dir.display()
        ),
        None => header,
    }
}

/// Runs `seeds` live, `args.jobs` at a time (the batch engine, `fencesim::run_batch`); the
/// results in seed order. After an interrupt no new run starts (the ones in progress stop and
/// clean up themselves).
fn run_all(
    args: &LiveArgs,
    scenario: &Scenario,
    seeds: &[u64],
    exe: &Path,
    stop: &Arc<AtomicBool>,
) -> Vec<Result<fencesim_live::LiveRun, LiveError>> {
    let runs: Vec<(usize, u64)> = seeds.iter().copied().enumerate().collect();
    fencesim::run_batch(&runs, args.jobs, |&(run, seed)| {
        if stop.load(Ordering::SeqCst) {
            return Err(LiveError::Interrupted);
        }
        let keep = args
            .out
            .as_ref()
            .map(|dir| dir.join(&scenario.name).join(format!("run-{run}")));
        run_live(scenario, seed, exe, stop, keep.as_deref())
    })
}

/// The live runs `--out DIR` kept (`DIR/<scenario>/run-<k>/history.jsonl`), read back instead
/// of running them again (to render the report anew); their start offsets were not kept.
fn read_kept(
    dir: &Path,
    scenario: &Scenario,
    seeds: &[u64],
) -> Result<Vec<Result<fencesim_live::LiveRun, LiveError>>, InputError> {
    let mut runs = Vec::new();
    for run in 0..seeds.len() {
        let path = dir
            .join(&scenario.name)
            .join(format!("run-{run}"))
            .join("history.jsonl");
        let history = fencesim::load_history(&path)
            .map_err(|error| InputError(format!("--from-kept: {error}")))?;
        runs.push(Ok(fencesim_live::LiveRun {
            history,
            service_version: String::new(),
            phase_ms: f64::NAN,
        }));
    }
    Ok(runs)
}

/// The seeds of a scenario's live runs: run k uses the scenario's k-th seed.
fn live_seeds(scenario: &Scenario, runs: u32) -> std::ops::Range<u64> {
    scenario.seeds.start..scenario.seeds.start.saturating_add(u64::from(runs))
}

fn interrupted() -> ! {
    eprintln!("live: interrupted; every process and temp directory it started was removed");
    std::process::exit(130);
}

/// Simulates `sim_seeds` and every live run's own seed; stops (exit 130) at SIGINT/SIGTERM.
fn compare(
    path: &Path,
    scenario: &Arc<Scenario>,
    live_side: Side,
    sim_seeds: SeedRange,
    stop: &AtomicBool,
) -> Result<Comparison, InputError> {
    let components = fencesim::Components::default();
    // The simulated seeds, then each live run's own seed that they leave out; every core.
    let mut seeds: Vec<u64> = sim_seeds.iter().collect();
    seeds.extend(
        live_side
            .by_seed
            .keys()
            .filter(|seed| !sim_seeds.iter().contains(*seed)),
    );
    let judged = fencesim::run_batch(&seeds, fencesim::default_jobs(), |&seed| {
        (!stop.load(Ordering::SeqCst)).then(|| {
            let run = fencesim::run_seed(scenario, seed, &components);
            let takeovers = fidelity::takeovers(&run.history);
            (seed, run.outcome.checked, takeovers)
        })
    });
    if stop.load(Ordering::SeqCst) {
        interrupted();
    }
    let mut sim_side = Side::default();
    let mut paired = BTreeMap::new();
    for (seed, checked, takeovers) in judged.into_iter().flatten() {
        if live_side.by_seed.contains_key(&seed) {
            paired.insert(seed, fidelity::verdict_name(&checked));
        }
        if sim_seeds.iter().contains(&seed) {
            sim_side.add_judged(seed, &checked, takeovers);
        }
    }
    let sim = Stats::of(&sim_side.windows());
    println!(
        "  simulated takeover window ({} seeds): n={} min {:.0} p50 {:.0} mean {:.0} max {:.0} ms",
        sim_seeds.len(),
        sim.n,
        sim.min,
        sim.p50,
        sim.mean,
        sim.max
    );
    Ok(Comparison {
        scenario: scenario.name.clone(),
        file: shown(path),
        live: live_side,
        sim: sim_side,
        paired,
    })
}

/// Whole or not at all (`fencesim::fs::write_atomic`), directories created.
fn write_report(path: &Path, text: &str) -> Result<(), InputError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|error| InputError(format!("{}: {error}", dir.display())))?;
    }
    fencesim::fs::write_atomic(path, text)
        .map_err(|error| InputError(format!("--report {}: {error}", path.display())))
}

/// The hidden worker role.
pub(crate) fn worker(config: &Path) -> Result<bool, InputError> {
    fencesim_live::worker::run(config).map_err(InputError)?;
    Ok(true)
}

/// The hidden guard role.
pub(crate) fn guard() -> Result<bool, InputError> {
    fencesim_live::guard::run().map_err(InputError)?;
    Ok(true)
}
