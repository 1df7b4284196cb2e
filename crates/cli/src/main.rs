//! The `fencesim` command line: glue only. Arguments are parsed here, resolved into a
//! validated scenario by `fencesim-scenario`, run by `fencesim-sim`, judged by
//! `fencesim-check`, summarized by `fencesim-verdict`, shown by `fencesim-views` and written by
//! `fencesim::fs`.
//!
//! Exit codes: 0 every expectation met, 1 an expectation failed, 2 usage or input error.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

mod args;
mod check;
mod colour;
mod common;
mod env_seed;
mod live;
mod merge;
mod outputs;
mod profile;
mod progress;
mod replay;
mod run;
mod shard_env;
mod shrink;
mod soak;
mod stdio;
mod tune;

use clap::{Parser, Subcommand};
use common::{shown, write_file, InputError};

/// `fencesim --version`: the package version, the commit it was built from and the madsim it
/// simulates with (a trace hash is comparable only between runs of the same build). Every
/// JSON output names the same build without the commit (`fencesim_model::version::PRODUCER`).
fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        use fencesim_model::version::{FENCESIM, MADSIM};
        format!(
            "{FENCESIM} (commit {}, madsim {MADSIM})",
            env!("FENCESIM_COMMIT")
        )
    })
}

/// The top-level help's closing section: exit codes, environment, examples.
const AFTER_HELP: &str = "\
Exit codes:
  0  every expectation met (tune: a recommendation exists; check-history: no violation)
  1  an expectation failed (tune: no setting meets the targets; check-history: a violation)
  2  usage or input error: a malformed scenario, a bad option, an unwritable output
  130/143/129  interrupted by SIGINT/SIGTERM/SIGHUP (no partial output file is left; `check`
           then prints on stdout the scenarios finished so far and the one interrupted)

Colour:
  --color auto|always|never  colour the verdicts on stdout (check's table, run's expectation
                             line): auto = stdout is a terminal and NO_COLOR is unset or empty;
                             always = even piped, whatever NO_COLOR says; never = plain
  Progress bars (rate, ETA) are drawn on stderr only when it is a terminal; stdout is the same
  bytes either way.

Environment:
  NO_COLOR=1                            no colour with --color auto (no-color.org; empty counts as unset)
  FENCESIM_SEED=N, FENCESIM_SEEDS=A..B  the seeds `run` runs and `replay` replays (check and soak refuse them)
  MADSIM_TEST_SEED=N                    as FENCESIM_SEED, for `run` and `replay`
  FENCESIM_JOBS=N                       seeds at once in the library (`--jobs` in the commands)
  FENCESIM_SHARD_INDEX/_TOTAL, JOB_COMPLETION_INDEX + JOB_COMPLETIONS, CI_NODE_INDEX/_TOTAL,
  CIRCLE_NODE_INDEX/_TOTAL, BUILDKITE_PARALLEL_JOB/_COUNT  read by `check --shard auto`
  RUSTFLAGS must be unset when building: it replaces --cfg madsim from .cargo/config.toml

Examples:
  fencesim check scenarios/ --junit junit.xml --json check.json
  fencesim run scenarios/gc-pause-textbook-none.toml --seeds 0..100
  fencesim replay scenarios/gc-pause-textbook-none.toml --seed 0 --png seed-0.png
  fencesim shrink scenarios/chaos-5-workers-max-token.toml --seed 3
  fencesim tune scenarios/tune/jvm-gc.toml --vary lease.ttl_ms=2000..20000:10 --max-false-expiry-per-hour 2
  fencesim check-history recorded.jsonl --json verdict.json";

#[derive(Parser)]
#[command(
    name = "fencesim",
    version = version(),
    about = "Deterministic chaos testing for lease + fencing-token protocols",
    after_help = AFTER_HELP
)]
struct Cli {
    /// Colour the verdicts on stdout: `auto` (a terminal, and NO_COLOR unset or empty),
    /// `always` (even piped, whatever NO_COLOR says) or `never`.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = colour::ColorChoice::Auto)]
    color: colour::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run `preset = "etcd"` scenarios live: a real etcd on loopback, one OS process per
    /// worker, a real SQLite file, the schedule injected with signals; judged by the same
    /// checker. `--compare` also simulates them and writes the fidelity report.
    #[command(
        after_help = "Example:\n  fencesim live scenarios/gc-pause-textbook-etcd-none.toml --runs 3 --compare --sim-seeds 0..200"
    )]
    Live(live::LiveArgs),
    /// The worker role of `fencesim live` (started by it; not for direct use).
    #[command(hide = true)]
    LiveWorker {
        /// The worker's JSON configuration, written by `fencesim live`.
        config: PathBuf,
    },
    /// The guard role of `fencesim live`: kills a run's processes and removes its directory
    /// when the supervisor's pipe closes (started by it; not for direct use).
    #[command(hide = true)]
    LiveGuard,
    /// Run a scenario over a seed range and check its expectation.
    #[command(
        after_help = "Example:\n  fencesim run scenarios/gc-pause-textbook-none.toml --seeds 0..200 --jobs 2"
    )]
    Run(run::RunArgs),
    /// Soak a scenario for a nightly job: consecutive seeds from a printed base seed for a
    /// wall-clock budget; every seed that contradicts the expectation is recorded in the
    /// scenario's regressions file (which `check` re-runs) after each batch, and on
    /// SIGINT/SIGTERM/SIGHUP with the range covered. Exit 1 if any did, or when the file is
    /// full (it stops there).
    #[command(
        after_help = "Example:\n  fencesim soak scenarios/chaos-5-workers-max-token.toml --budget-s 3600 --jobs 8"
    )]
    Soak(soak::SoakArgs),
    /// Run every scenario (files, or directories of `*.toml`) over its own seed range and
    /// check each expectation: one table, exit 0 only if all are met.
    #[command(
        after_help = "Example:\n  fencesim check scenarios/ --junit junit.xml --json check.json --matrix reports/ --coverage reports/"
    )]
    Check(check::CheckArgs),
    /// Combine the JSON reports of `check --shard K/N` runs into the unsharded report.
    #[command(
        after_help = "Example:\n  fencesim merge check-1.json check-2.json --json check.json --junit junit.xml"
    )]
    Merge {
        /// The shards' `check --json` reports (each seed covered exactly once).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged JSON report (byte-identical to an unsharded `check --json`) to FILE.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write JUnit XML (one testcase per scenario) to FILE.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Write the safety matrix to DIR/matrix.md and DIR/matrix.json.
        #[arg(long)]
        matrix: Option<PathBuf>,
        /// Write the state-space coverage to DIR/coverage.md and DIR/coverage.json.
        #[arg(long, value_name = "DIR")]
        coverage: Option<PathBuf>,
    },
    /// Re-run one seed and show exactly what happened.
    #[command(
        after_help = "Example:\n  fencesim replay scenarios/gc-pause-textbook-none.toml --seed 0 --png failure.png"
    )]
    Replay(replay::ReplayArgs),
    /// Shrink a failing seed to a 1-minimal explicit fault schedule, saved as a scenario file
    /// (default: ./<name>-shrunk-seed-<N>.toml) that `fencesim run` confirms.
    #[command(
        after_help = "Example:\n  fencesim shrink scenarios/gc-pause-textbook-none.toml --seed 0 -o regress.toml"
    )]
    Shrink {
        /// The scenario file.
        scenario: PathBuf,
        /// The failing seed to shrink.
        #[arg(long)]
        seed: u64,
        /// Where to write the shrunk scenario (an explicit schedule). Default:
        /// ./<name>-shrunk-seed-<N>.toml.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// Simulations the search may spend.
        #[arg(long, default_value_t = fencesim_explore::shrink::DEFAULT_MAX_RUNS)]
        max_runs: usize,
        #[command(flatten)]
        set: args::SetArgs,
    },
    /// Search the scenario's fault profile with proptest (on its first seed); shrink and save
    /// the first violation like `shrink`. With --guided: coverage-guided search over fault
    /// plans (new abstract states keep a plan; rare states are mutated first; lineage-driven
    /// proposals). With --exhaustive: run every schedule of at most two faults from the
    /// scenario's fault alphabet at discretized start times, and either find a violation
    /// (shrunk and saved) or state what was covered.
    #[command(
        after_help = "Example:\n  fencesim explore scenarios/chaos-5-workers-max-token.toml --cases 100 -o regress.toml\n  fencesim explore scenarios/chaos-5-workers-max-token.toml --guided --runs 1000 --invariants I4 -o regress.toml\n  fencesim explore scenarios/search/textbook-none.toml --exhaustive --resolution-ms 100 -o regress.toml\n\nExit codes: 0 a violation was shrunk, saved and confirmed; 1 none found; 2 bad input, nothing written. With --exhaustive (a check): 0 no violation (and no panic or runaway) in any schedule of the bound; 1 a violation (or a run that failed without one); 2 bad input, nothing run."
    )]
    Explore {
        /// The scenario file (its `[[faults.random]]` profile is searched).
        scenario: PathBuf,
        /// Fault schedules proptest draws before giving up (1 or more). Default:
        /// PROPTEST_CASES when set, else 100.
        #[arg(long)]
        cases: Option<u32>,
        /// Where to write the first violation's shrunk scenario. Default:
        /// ./<name>-shrunk-seed-<N>.toml.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// For comparison, run up to this many of the scenario's seeds in order until the
        /// first violation (0: skip).
        #[arg(long, default_value_t = 1_000)]
        sweep_seeds: u64,
        #[command(flatten)]
        set: args::SetArgs,
        /// Record the plain sweep's first failing seed, when it contradicts the expectation,
        /// in the scenario's regressions file (`NAME.regressions`; run first by `check`).
        #[arg(long)]
        record_failures: bool,
        #[command(flatten)]
        guided: shrink::GuidedFlags,
        #[command(flatten)]
        exhaustive: shrink::ExhaustiveArgs,
        #[command(flatten)]
        search: shrink::SearchFlags,
    },
    /// Sweep lease timings over a fault profile: every setting of the `--vary` grid runs the
    /// same seeds with the same fault plans; measures safety, false expiries, stand-downs,
    /// takeover and recovery latency, unavailability and renewal load with confidence
    /// intervals, recommends a setting against the targets, and writes
    /// DIR/<scenario>/tune/{tune.csv,tune.json,tune.md,*.png,*.svg}.
    #[command(
        after_help = "Example:\n  fencesim tune scenarios/tune/jvm-gc.toml --vary lease.ttl_ms=2000..20000:10 --seeds 0..200 --max-false-expiry-per-hour 2"
    )]
    Tune(tune::TuneArgs),
    /// Build a fault profile from production data (a JVM GC log, Go gctrace, a Prometheus
    /// histogram, an outage record): prints `[[faults.random]]` blocks with empirical
    /// distributions (or a latency distribution), a fit summary, and writes a fit picture.
    #[command(
        after_help = "Example:\n  fencesim profile jvm-gc crates/profile/fixtures/jvm-g1-gc-star.log --workers 3 --picture g1.png"
    )]
    Profile(profile::ProfileArgs),
    /// Print a shell completion script: `fencesim completions bash > /etc/bash_completion.d/fencesim`
    /// (also zsh, fish, elvish, powershell).
    #[command(
        after_help = "Example:\n  fencesim completions bash > /etc/bash_completion.d/fencesim"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Judge a history recorded by any system (JSON lines in the `replay --trace` format,
    /// reports/README.md) against I1–I5, as far as its events allow: violations with their
    /// proof, metrics; exit 0 none, 1 some, 2 a malformed file.
    #[command(
        after_help = "Example:\n  fencesim check-history docs/histories/gc-pause-lease-41.jsonl --json verdict.json"
    )]
    CheckHistory {
        /// The history, one event per line.
        file: PathBuf,
        /// Write the verdict, violations with their proof events and the metrics as JSON to FILE.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

/// On SIGINT, SIGTERM or SIGHUP: let `soak` record what it found, remove the temp files of
/// unfinished writes, say so, and exit
/// 128 + the signal (130, 143, 129). Files already renamed into place are whole; nothing
/// half-written stays behind. (A SIGKILL cannot be caught: its temps are removed by the next
/// write of the same file, see `fencesim::fs`.)
fn remove_temps_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // Default handling: killed, temps left for the next run to remove.
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let name = match signal {
                SIGINT => "SIGINT",
                SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            // `soak`: what the running batch found is recorded (a whole write) and the range
            // covered printed, before the temps are removed; the lock is held to the exit.
            let _soak = soak::report_interrupt(name);
            let removed = fencesim::fs::remove_pending_temps();
            progress::clear_active();
            // `check`: what finished and what was interrupted, on stdout after its rows; the
            // lock is held to the exit, so no row follows the table.
            let _held = check::report_interrupt(name);
            eprintln!("\ninterrupted by {name}; {removed} unfinished output file(s) removed");
            std::process::exit(128 + signal);
        }
    });
}

/// Test hook: `FENCESIM_TEST_WRITE_PAUSE_MS=N` holds every output write open for N ms
/// between its temp file and its rename, so the interrupt tests can signal inside it.
fn test_write_pause() {
    if let Some(ms) = std::env::var("FENCESIM_TEST_WRITE_PAUSE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
    {
        fencesim::fs::set_write_pause_ms(ms);
    }
}

/// Panics of simulated nodes are contained: the runner records them and the commands print
/// one line per seed. So the default hook's `thread 'seed-N' panicked at …` text is kept
/// off stderr for seed threads; `replay` keeps the default hook and shows it in full. Any
/// other thread's panic (a bug in fencesim itself) is printed as usual.
fn quiet_seed_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let seed_thread = std::thread::current()
            .name()
            .is_some_and(|name| name.starts_with("seed-"));
        if !seed_thread {
            default(info);
        }
    }));
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    colour::init(cli.color);
    // Live mode catches SIGINT/SIGTERM itself: it must stop etcd and its workers and remove
    // its temp directory before exiting, which an exit from this handler would skip.
    if !matches!(
        cli.command,
        Command::Live(_) | Command::LiveWorker { .. } | Command::LiveGuard
    ) {
        remove_temps_on_signals();
    }
    test_write_pause();
    if !matches!(cli.command, Command::Replay(_)) {
        quiet_seed_panics();
    }
    stdio::install();
    match dispatch(cli.command) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(InputError(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Runs the command: Ok(true) exit 0, Ok(false) exit 1, an `InputError` exit 2.
fn dispatch(command: Command) -> Result<bool, InputError> {
    match command {
        Command::Live(args) => live::live(&args),
        Command::Soak(args) => args.run(),
        Command::LiveWorker { config } => live::worker(&config),
        Command::LiveGuard => live::guard(),
        Command::Run(args) => args.run(),
        Command::Check(args) => args.run(),
        Command::Merge {
            files,
            json,
            junit,
            matrix,
            coverage,
        } => merge::merge(
            &files,
            &outputs::Outputs {
                json,
                junit,
                matrix,
                coverage,
            },
        ),
        Command::Replay(args) => args.run(),
        Command::Shrink {
            scenario,
            seed,
            output,
            max_runs,
            set,
        } => set
            .overrides()
            .and_then(|set| shrink::shrink(&scenario, seed, output.as_deref(), max_runs, &set)),
        Command::Explore {
            scenario,
            cases,
            output,
            sweep_seeds,
            set,
            record_failures,
            guided,
            exhaustive,
            search,
        } => set.overrides().and_then(|set| {
            shrink::explore_command(&shrink::ExploreCommand {
                path: &scenario,
                cases,
                output: output.as_deref(),
                sweep_seeds,
                set: &set,
                record_failures,
                guided: &guided,
                exhaustive: &exhaustive,
                search: &search,
            })
        }),
        Command::Tune(args) => tune::tune(&args),
        Command::Profile(args) => profile::profile(&args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut completion_tree(), "fencesim", &mut script);
            stdio::write_stdout(&script);
            Ok(true)
        }
        Command::CheckHistory { file, json } => check_history(&file, json.as_deref()),
    }
}

/// The commands the completion scripts offer: the hidden ones (`live-worker`, `live-guard`,
/// started by `live` itself) left out, and a value that is not a path (`--shard 2/4`,
/// `--seeds`, `--set`) completed with nothing rather than with file names.
fn completion_tree() -> clap::Command {
    use clap::CommandFactory;
    let full = Cli::command();
    let visible = full
        .get_subcommands()
        .filter(|command| !command.is_hide_set())
        .cloned();
    let root = clap::Command::new("fencesim")
        .about(full.get_about().cloned().unwrap_or_default())
        .args(
            full.get_arguments()
                .filter(|arg| !matches!(arg.get_id().as_str(), "help" | "version"))
                .cloned(),
        )
        .subcommands(visible);
    no_file_names(root)
}

/// `command` and its subcommands with every value that is not a path hinted "no completion".
fn no_file_names(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            let path = arg.get_value_parser().type_id() == std::any::TypeId::of::<PathBuf>();
            let unhinted = arg.get_value_hint() == clap::ValueHint::Unknown;
            if !path && unhinted && arg.get_action().takes_values() {
                arg.value_hint(clap::ValueHint::Other)
            } else {
                arg
            }
        })
        .mut_subcommands(no_file_names)
}

/// `fencesim check-history FILE [--json OUT]`.
fn check_history(path: &Path, json: Option<&Path>) -> Result<bool, InputError> {
    if let Some(out) = json {
        fencesim::outputs::preflight(&[fencesim::outputs::Output::new("--json", out)], &[path])?;
    }
    let history = fencesim::load_history(path)?;
    let judged = fencesim::judge_history(&history);
    println!(
        "fencesim check-history {} ({} events, trace hash {})",
        shown(path),
        history.events.len(),
        history.trace_hash()
    );
    for scope in &judged.scope {
        match &scope.missing {
            None => println!("  {} judged ({})", scope.invariant, scope.invariant.title()),
            Some(missing) => println!(
                "  {} not judged ({}): needs {missing}",
                scope.invariant,
                scope.invariant.title()
            ),
        }
    }
    for violation in &judged.checked.violations {
        print!("{}", fencesim_views::render_violation(&history, violation));
    }
    println!("== metrics (non-zero)");
    let left_out: Vec<&str> = judged
        .metrics_not_supported
        .iter()
        .map(|m| m.metric)
        .collect();
    print!(
        "{}",
        fencesim_views::compact_metrics_except(&judged.checked, &left_out)
    );
    if !left_out.is_empty() {
        println!(
            "  not supported by this history's events: {} (needs {})",
            left_out.join(", "),
            judged.metrics_not_supported[0].needs
        );
    }
    // The same abstraction the sweeps count (ARCHITECTURE.md, `abstract_state`).
    let visited = &judged.checked.visited;
    println!(
        "== abstract states: {} visited, {} transitions between them",
        visited.states.len(),
        visited.transitions.len()
    );
    let violated: Vec<String> = judged
        .checked
        .violated()
        .iter()
        .map(|i| i.to_string())
        .collect();
    if violated.is_empty() {
        println!("verdict: no violation of the invariants judged");
    } else {
        println!("verdict: VIOLATED {}", violated.join(", "));
    }
    if let Some(out) = json {
        let text = fencesim::history_report_json(&shown(path), &history, &judged);
        write_file(out, "JSON report", text.as_bytes())?;
    }
    Ok(judged.checked.violations.is_empty())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// Every argument and option of every command, hidden ones aside, with the command path.
    fn undocumented(command: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if arg.is_hide_set() || id == "help" || id == "version" {
                continue;
            }
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            if help.trim().is_empty() {
                out.push(format!("{path} {id}"));
            }
        }
        for sub in command.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            if sub.get_about().is_none() {
                out.push(format!("{path} {} (the command itself)", sub.get_name()));
            }
            if path == "fencesim"
                && !sub
                    .get_after_help()
                    .is_some_and(|text| text.to_string().starts_with("Example:\n  fencesim "))
            {
                out.push(format!("{path} {} (no example)", sub.get_name()));
            }
            undocumented(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_argument_and_option_has_help_text_and_every_command_an_example() {
        let mut missing = Vec::new();
        undocumented(&Cli::command(), "fencesim", &mut missing);
        assert!(
            missing.is_empty(),
            "undocumented in --help: {}",
            missing.join(", ")
        );
    }
}
