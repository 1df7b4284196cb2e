//! `fencesim tune`: glue between the arguments, `fencesim-tune` (the sweep and the
//! recommendation) and `fencesim-report` (the files and the pictures).

use std::{
    io::{IsTerminal, Write},
    path::{Path, PathBuf},
    sync::Arc,
};

use clap::Args;
use fencesim::{builtin_store, StoreFactory};
use fencesim_report::tune::{tune_csv, tune_json, tune_markdown, Targets, TuneReport};
use fencesim_report::tune_plot::{
    tune_metrics_png, tune_metrics_svg, tune_pareto_png, tune_pareto_svg,
};

use crate::{default_jobs, overrides, parse_seeds, InputError};

/// `fencesim tune SCENARIO --vary FIELD=VALUES [--vary ...]`.
#[derive(Args)]
pub(crate) struct TuneArgs {
    /// Scenario file (TOML): the fault profile. Its `[expect]` block is ignored.
    scenario: PathBuf,
    /// A field and its values: a list (`lease.ttl_ms=2000,5000,10000`), a range with a count
    /// (`lease.ttl_ms=2000..20000:10`), or a ratio of another varied field
    /// (`workers.renew_every_ms=lease.ttl_ms/3`). Several form a grid.
    #[arg(long, required = true, value_name = "FIELD=VALUES")]
    vary: Vec<String>,
    /// Seeds run for every setting, `A..B`; default: the scenario's `seeds`.
    #[arg(long)]
    seeds: Option<String>,
    /// Parallel runs; the output does not depend on it.
    #[arg(long, default_value_t = default_jobs())]
    jobs: usize,
    /// Output directory: files go to DIR/<scenario name>/tune/.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Override a scenario field for every setting (`lease.on_restart=drop`); repeatable.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    set: Vec<String>,
    /// Target: at most this many false expiries per hour (mean over seeds).
    #[arg(long)]
    max_false_expiry_per_hour: Option<f64>,
    /// Target: no holder stands down during a lease-service outage of this many ms.
    #[arg(long)]
    survive_outage_ms: Option<u64>,
}

pub(crate) fn tune(args: &TuneArgs) -> Result<bool, InputError> {
    let set = overrides(&args.set)?;
    let mut varies = Vec::new();
    for text in &args.vary {
        let vary = fencesim_tune::parse_vary(text).map_err(InputError)?;
        varies.push((text.clone(), vary));
    }
    let seeds = args.seeds.as_deref().map(parse_seeds).transpose()?;
    if args.jobs == 0 {
        return Err(InputError(
            "--jobs: expected a positive number of threads, got 0".into(),
        ));
    }
    if let Some(x) = args.max_false_expiry_per_hour {
        if !(x.is_finite() && x >= 0.0) {
            return Err(InputError(format!(
                "--max-false-expiry-per-hour: expected a number >= 0, got {x}"
            )));
        }
    }
    let file = args.scenario.display().to_string();
    let text = fencesim_scenario::read_scenario_text(&args.scenario)?;
    let targets = Targets {
        max_false_expiry_per_hour: args.max_false_expiry_per_hour,
        survive_outage_ms: args.survive_outage_ms,
    };
    let sweep = fencesim_tune::prepare(&text, &file, &set, &varies, seeds, targets)?;
    let dir = args.out.join(&sweep.base.name).join("tune");
    let planned: Vec<crate::outputs::Output> = FILES
        .iter()
        .map(|file| crate::outputs::Output::new("--out", dir.join(file)))
        .collect();
    crate::outputs::preflight(&planned, &[&args.scenario])?;
    println!(
        "fencesim tune {} ({file}), base hash {}, {} settings × seeds {} ({} runs), {} jobs",
        sweep.base.name,
        sweep.base.hash(),
        sweep.settings.len(),
        sweep.seeds,
        sweep.settings.len() as u64 * sweep.seeds.len(),
        args.jobs
    );
    let live = std::io::stderr().is_terminal();
    let factory: StoreFactory = Arc::new(builtin_store);
    let started = crate::wall_now();
    let report = fencesim_tune::run(&sweep, args.jobs, &factory, &|done, total| {
        if live {
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!(
                "\r  [{}{}] {done}/{total} runs",
                "#".repeat(filled),
                ".".repeat(width - filled)
            );
            let _ = std::io::stderr().flush();
            if done == total {
                eprint!("\r{:<60}\r", "");
            }
        } else if done * 10 / total.max(1) != (done - 1) * 10 / total.max(1) || done == total {
            eprintln!("  {done}/{total} runs");
        }
    });
    let wall = started.elapsed().as_secs_f64();
    write_outputs(&dir, &report)?;
    print_summary(&report);
    println!("wall time {wall:.1} s; outputs in {}", dir.display());
    Ok(true)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    fencesim_report::write_atomic_bytes(path, bytes)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))
}

/// The files `write_outputs` writes into DIR/<scenario>/tune/.
const FILES: [&str; 7] = [
    "tune.csv",
    "tune.json",
    "tune.md",
    "metrics.svg",
    "metrics.png",
    "tradeoff.svg",
    "tradeoff.png",
];

fn write_outputs(dir: &Path, report: &TuneReport) -> Result<(), InputError> {
    write(&dir.join("tune.csv"), tune_csv(report).as_bytes())?;
    write(&dir.join("tune.json"), tune_json(report).as_bytes())?;
    write(&dir.join("tune.md"), tune_markdown(report).as_bytes())?;
    let plot = |e: String| InputError(format!("drawing the tune pictures: {e}"));
    write(
        &dir.join("metrics.svg"),
        tune_metrics_svg(report).map_err(plot)?.as_bytes(),
    )?;
    write(
        &dir.join("metrics.png"),
        &tune_metrics_png(report).map_err(plot)?,
    )?;
    write(
        &dir.join("tradeoff.svg"),
        tune_pareto_svg(report).map_err(plot)?.as_bytes(),
    )?;
    write(
        &dir.join("tradeoff.png"),
        &tune_pareto_png(report).map_err(plot)?,
    )?;
    Ok(())
}

fn print_summary(report: &TuneReport) {
    for s in &report.settings {
        println!("  {:<50} {}", s.label(), s.verdict);
    }
    match report.recommendation.setting {
        Some(i) => println!(
            "recommendation: {} — {}",
            report.settings[i].label(),
            report.recommendation.reason
        ),
        None => println!("recommendation: none — {}", report.recommendation.reason),
    }
    match report.rule_of_thumb.setting {
        Some(i) => println!("rules of thumb: {}", report.settings[i].label()),
        None => println!("rules of thumb: no setting passes every rule"),
    }
    for d in &report.disagreements {
        println!("  disagreement: {d}");
    }
    for w in &report.warnings {
        println!("warning: {w}");
    }
}
