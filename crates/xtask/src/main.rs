//! fencesim's maintainer tools, apart from the user's `fencesim` binary and run by `.ci/*`:
//! `bench` (what a seed costs against bare madsim; `reports/bench.md`), `sensitivity` (seeds
//! to detection, false positives and the planted-bug table; `reports/sensitivity.md`) and
//! `mutants` (the planted-bug list `.ci/mutants` walks), `search-bench` (the hard-bug
//! benchmark; `reports/search-benchmark.md`) and `tidy` (the recipes checked on the source
//! text). `cargo run --release -p
//! fencesim-xtask -- --help`. Exit codes as `fencesim`'s: 0 met, 1 not met, 2 bad input.

#[cfg(not(madsim))]
compile_error!(
    "fencesim must be built with `--cfg madsim` (set in .cargo/config.toml; a RUSTFLAGS \
     environment variable replaces it: unset RUSTFLAGS)"
);

use std::{path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};
use shared::InputError;

mod bench;
mod planted;
mod search_bench;
mod sensitivity;
mod shared;
mod tidy;

/// fencesim's maintainer tools (not part of the `fencesim` command line).
#[derive(Parser)]
#[command(name = "xtask", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure the harness's sensitivity (reports/sensitivity.md; see `.ci/sensitivity`):
    /// seeds to first detection of every unsafe scenario, false positives of every safe
    /// scenario over a large sweep, and (built with `--features mutants`) the catalogue
    /// under every planted bug.
    Sensitivity {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seeds per safe scenario, from the start of its range (1..=10000000).
        #[arg(long, default_value_t = 20_000)]
        safe_seeds: u64,
        /// Give up detecting an unsafe scenario after this many seeds (1..=1000000).
        #[arg(long, default_value_t = 10_000)]
        detect_max: u64,
        /// Parallel seeds, 1 to 1024; the results do not depend on it. Default: every core.
        #[arg(long, default_value_t = fencesim::default_jobs())]
        jobs: usize,
        /// The Markdown report to write.
        #[arg(short = 'o', long, default_value = "reports/sensitivity.md")]
        output: PathBuf,
        /// Leave out the mutation table (for a build without `--features mutants`).
        #[arg(long)]
        skip_mutants: bool,
    },
    /// List the planted bugs, tab-separated: name, area, site, the scenario and the test
    /// (cargo arguments, test name) that must catch it. Select one with FENCESIM_MUTANT=NAME
    /// in a build with `--features mutants`.
    Mutants,
    /// Measure what a seed costs against a bare-madsim baseline sending the same messages
    /// (ratio per message, scaling with duration, workers and --jobs, peak RSS over seeds);
    /// writes DIR/bench.md and DIR/bench.json and prints whether each target is met.
    Bench(bench::BenchArgs),
    /// The hard-bug benchmark (reports/search-benchmark.md): runs and CPU to the first
    /// violation of each hard case for random swarm and guided search (build with
    /// `--features mutants` for the planted-bug cases).
    SearchBench(search_bench::SearchBenchArgs),
    /// Check the recipes ARCHITECTURE.md gives on the source text: no catch-all arm over a
    /// fault kind, invariant, fencing mode or preset; planted sites where the catalogue says,
    /// each a branch of its own; dependencies through [workspace.dependencies]; file and
    /// function lengths; no module cycles; the code map. Prints its allow-lists; exit 1 on a
    /// problem. `cargo test` runs it (crates/xtask/tests/tidy.rs).
    Tidy {
        /// The workspace root (default: the one this xtask was built in).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Mutants => {
            for info in planted::ALL {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    info.name(),
                    info.area,
                    info.site,
                    info.scenario,
                    info.test.0,
                    info.test.1
                );
            }
            Ok(true)
        }
        Command::Sensitivity {
            paths,
            safe_seeds,
            detect_max,
            jobs,
            output,
            skip_mutants,
        } => fencesim::check_jobs(jobs)
            .map_err(|e| InputError(format!("--jobs: {e}")))
            .and_then(|jobs| {
                sensitivity::sensitivity(&sensitivity::Args {
                    paths: &paths,
                    safe_seeds,
                    detect_max,
                    jobs,
                    output: &output,
                    skip_mutants,
                })
            }),
        Command::Bench(args) => bench::bench(&args),
        Command::SearchBench(args) => search_bench::search_bench(&args),
        Command::Tidy { root } => tidy::tidy(&root.unwrap_or_else(tidy::default_root)),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(InputError(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
