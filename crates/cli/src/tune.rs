//! `fencesim tune`: glue between the arguments, `fencesim-tune` (the sweep and the
//! decisions) its `report` (the files) and `plot` (the pictures). Exit codes: 0 a
//! recommendation exists, 1 none meets the targets or a target could not be judged (the
//! reason is printed), 2 bad input.

use std::path::{Path, PathBuf};

use clap::Args;
use fencesim::Components;
use fencesim_tune::compare::MAX_COMPARE_SEEDS;
use fencesim_tune::plot::{tune_metrics_png, tune_metrics_svg, tune_pareto_png, tune_pareto_svg};
use fencesim_tune::report::{
    percent, rate_text, tune_csv, tune_json, tune_markdown, DecideRule, Targets, TuneReport,
    TIE_BREAK,
};
use fencesim_tune::Sweep;

use crate::common::{parse_seeds, InputError};

/// `fencesim tune SCENARIO --vary FIELD=VALUES [--vary ...]`.
#[derive(Args)]
pub(crate) struct TuneArgs {
    /// Scenario file (TOML): the fault profile. Its `[expect]` block is ignored.
    scenario: PathBuf,
    /// A lease or worker timing field and its values: a list
    /// (`lease.ttl_ms=2000,5000,10000`), a range with a count (`lease.ttl_ms=2000..20000:10`),
    /// or a ratio of another varied field (`workers.renew_every_ms=lease.ttl_ms/3`). Several
    /// form a grid of at most 100000 settings; invalid combinations are skipped and listed.
    /// Only lease and worker timings vary (lease.ttl_ms, workers.renew_every_ms, …; the error
    /// lists them); fault-profile fields (faults, network, clocks, duration_ms, workers.count),
    /// a field also given to --set, and values with a `+` sign or a space are refused.
    #[arg(long, required = true, value_name = "FIELD=VALUES")]
    vary: Vec<String>,
    /// The first round of seeds, `A..B` (default: the scenario's `seeds`); adaptive rounds
    /// continue the same sequence.
    #[arg(long)]
    seeds: Option<String>,
    /// The most seeds any setting runs (adaptive rounds stop there); default 2000.
    #[arg(long, value_name = "N")]
    max_seeds: Option<u64>,
    /// Run exactly `--seeds` for every setting (no adaptive rounds).
    #[arg(long)]
    fixed: bool,
    /// How a target is decided: `upper-bound` (default: the upper end of the 95 % interval
    /// must meet it) or `mean` (the point estimate; the old rule).
    #[arg(long, default_value = "upper-bound", value_name = "RULE")]
    decide: String,
    #[command(flatten)]
    jobs: crate::args::JobsArgs,
    /// Output directory: files go to DIR/<scenario name>/tune/.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// `--set` overrides apply to every setting, validated with each setting's `--vary`
    /// values applied.
    #[command(flatten)]
    set: crate::args::SetArgs,
    /// Target: at most this many false expiries per hour of fault exposure.
    #[arg(long)]
    max_false_expiry_per_hour: Option<f64>,
    /// Target: survive an outage (the lease service down, or the holder's link to it cut)
    /// of this many ms: no stand-down, takeover, false expiry or rejected current write
    /// caused by it. Unless the profile holds outages this long, every seed is re-run with
    /// one added (both forms).
    #[arg(long)]
    survive_outage_ms: Option<u64>,
    /// After the sweep, run the recommendation over 10× the first round's seeds and print
    /// both; exit 1 if it no longer meets the targets.
    #[arg(long)]
    verify: bool,
    /// After the (adaptive) sweep, run a fixed sweep of N seeds per setting and print both
    /// sweeps' decisions, runs and CPU time (a maintainer's measurement of adaptive seeds).
    #[arg(long, value_name = "N")]
    compare_fixed: Option<u64>,
}

pub(crate) fn tune(args: &TuneArgs) -> Result<bool, InputError> {
    let set = args.set.overrides()?;
    let mut varies = Vec::new();
    for text in &args.vary {
        let vary = fencesim_tune::parse_vary(text).map_err(InputError)?;
        varies.push((text.clone(), vary));
    }
    let seeds = args.seeds.as_deref().map(parse_seeds).transpose()?;
    let jobs = args.jobs.get()?;
    check_limits(args)?;
    let decide = decide_rule(&args.decide)?;
    let file = args.scenario.display().to_string();
    let sweep = prepare(args, &file, &set, &varies, seeds, decide)?;
    let dir = args.out.join(&sweep.base.name).join("tune");
    let planned: Vec<fencesim::outputs::Output> = FILES
        .iter()
        .map(|file| fencesim::outputs::Output::new("--out", dir.join(file)))
        .collect();
    fencesim::outputs::preflight_scenarios(&planned, &[&args.scenario], None)?;
    print_header(&sweep, &file, jobs);
    let components = Components::default();
    let started = crate::common::wall_now();
    let cpu_before = cpu_seconds();
    let report = fencesim_tune::run(&sweep, jobs, &components, &progress());
    let cpu = cpu_seconds().zip(cpu_before).map(|(a, b)| a - b);
    let wall = started.elapsed().as_secs_f64();
    write_outputs(&dir, &report)?;
    print_summary(&report);
    println!(
        "{} runs, wall time {wall:.1} s{}; outputs in {}",
        report.seed_plan.runs,
        cpu.map_or(String::new(), |c| format!(", CPU {c:.1} s")),
        dir.display()
    );
    let mut ok = report.recommendation.setting.is_some() && report.unjudged.is_empty();
    if !ok {
        println!(
            "exit 1: {}",
            if report.recommendation.setting.is_none() {
                report.recommendation.reason.clone()
            } else {
                format!(
                    "not every target could be judged: {}",
                    report.unjudged.join("; ")
                )
            }
        );
    }
    if let Some(n) = args.compare_fixed {
        compare_fixed(&sweep, &report, n, jobs, &components, cpu);
    }
    if args.verify {
        ok &= verify(&sweep, &report, jobs, &components);
    }
    Ok(ok)
}

/// The targets' and the seed counts' own limits.
fn check_limits(args: &TuneArgs) -> Result<(), InputError> {
    if let Some(x) = args.max_false_expiry_per_hour {
        if !(x.is_finite() && x >= 0.0) {
            return Err(InputError(format!(
                "--max-false-expiry-per-hour: expected a number >= 0, got {x}"
            )));
        }
    }
    let max = fencesim_tune::MAX_SEEDS_PER_SETTING;
    if let Some(n) = args.max_seeds {
        if !(1..=max).contains(&n) {
            return Err(InputError(format!(
                "--max-seeds: expected 1..={max}, got {n}"
            )));
        }
    }
    if let Some(n) = args.compare_fixed {
        if !(1..=MAX_COMPARE_SEEDS).contains(&n) {
            return Err(InputError(format!(
                "--compare-fixed: expected 1..={MAX_COMPARE_SEEDS} seeds, got {n}"
            )));
        }
    }
    Ok(())
}

/// `--decide upper-bound|mean`.
fn decide_rule(text: &str) -> Result<DecideRule, InputError> {
    match text {
        "upper-bound" => Ok(DecideRule::UpperBound),
        "mean" => Ok(DecideRule::Mean),
        other => Err(InputError(format!(
            "--decide: expected `upper-bound` or `mean`, got `{other}`"
        ))),
    }
}

/// The sweep: every setting of the grid resolved from the scenario file, its seeds and
/// targets, and the outage re-runs `--survive-outage-ms` adds.
fn prepare(
    args: &TuneArgs,
    file: &str,
    set: &[fencesim_scenario::Override],
    varies: &[(String, fencesim_tune::Vary)],
    seeds: Option<fencesim_scenario::SeedRange>,
    decide: DecideRule,
) -> Result<Sweep, InputError> {
    let text = fencesim_scenario::read_scenario_text(&args.scenario)?;
    let targets = Targets {
        max_false_expiry_per_hour: args.max_false_expiry_per_hour,
        survive_outage_ms: args.survive_outage_ms,
        decide,
    };
    let first_len = seeds.map(|s| s.len());
    let max_seeds = if args.fixed {
        first_len.or(Some(0))
    } else {
        args.max_seeds
    };
    let mut sweep = fencesim_tune::prepare(&text, file, set, varies, seeds, max_seeds, targets)?;
    if args.fixed {
        sweep.seeds.max_seeds = sweep.seeds.first.len();
        sweep.seeds.adaptive = false;
    }
    fencesim_tune::add_outages(&mut sweep).map_err(|e| InputError(format!("{file}: {e}")))?;
    Ok(sweep)
}

/// What is about to run: the scenario, its settings, seeds and jobs, and the outages added.
fn print_header(sweep: &Sweep, file: &str, jobs: usize) {
    println!(
        "fencesim tune {} ({file}), base hash {}, {} settings{}, seeds {} ({}), {} jobs",
        sweep.base.name,
        sweep.base.hash(),
        sweep.settings.len(),
        if sweep.skipped.is_empty() {
            String::new()
        } else {
            format!(" ({} invalid skipped)", sweep.skipped.len())
        },
        sweep.seeds.first,
        if sweep.seeds.adaptive {
            format!(
                "first round; adaptive up to {} per setting",
                sweep.seeds.max_seeds
            )
        } else {
            "fixed".to_string()
        },
        jobs
    );
    for a in &sweep.outage_added {
        println!("  added for --survive-outage-ms: {a}");
    }
}

/// The runs' progress: a bar with runs/s and the ETA on a terminal, else a line every
/// 10 % of each round.
fn progress() -> impl Fn(usize, usize) + Sync {
    let progress = crate::progress::Progress::new("runs", crate::progress::Plain::EveryTenth);
    progress.start(0, "tune: this round's runs (settings × seeds)".to_string());
    move |done, total| progress.set(done as u64, total as u64)
}

/// This process's CPU time (user + system, every thread) in seconds, from /proc/self/stat
/// (Linux; clock ticks of 1/100 s). `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs a fixed `n`-seed sweep of the same settings and prints both sweeps' decisions
/// (`fencesim_tune::compare`), runs and CPU time, and whether the adaptive sweep met its
/// target (`fencesim_tune::compare::target_met`).
fn compare_fixed(
    sweep: &Sweep,
    adaptive: &TuneReport,
    n: u64,
    jobs: usize,
    components: &Components,
    adaptive_cpu: Option<f64>,
) {
    println!(
        "compare: a fixed sweep of {n} seeds per setting ({} runs)",
        n * sweep.settings.len() as u64 * (1 + sweep.outages.len() as u64)
    );
    let cpu_before = cpu_seconds();
    let started = crate::common::wall_now();
    let (report, c) =
        fencesim_tune::compare::compare_fixed(sweep, adaptive, n, jobs, components, &progress());
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu_before).map(|(a, b)| a - b);
    println!("  setting | adaptive seeds | adaptive decision | fixed decision");
    for row in &c.rows {
        println!(
            "  {} | {} | {} | {}{}",
            row.label,
            row.adaptive_seeds,
            row.adaptive,
            row.fixed,
            if row.equal { "" } else { "  (DIFFERENT)" }
        );
    }
    println!(
        "  recommendation: adaptive {}, fixed {}",
        c.adaptive_pick, c.fixed_pick
    );
    let (ar, fr) = (adaptive.seed_plan.runs, report.seed_plan.runs);
    println!(
        "  runs: adaptive {ar}, fixed {fr} ({:.1} % of the fixed sweep's runs)",
        100.0 * ar as f64 / fr.max(1) as f64
    );
    let target = fencesim_tune::compare::CPU_SHARE_TARGET;
    let share = match (adaptive_cpu, cpu) {
        (Some(a), Some(f)) => {
            println!(
                "  CPU: adaptive {a:.1} s, fixed {f:.1} s ({:.1} %); fixed wall {wall:.1} s",
                100.0 * a / f.max(1e-9)
            );
            a / f.max(1e-9)
        }
        // No CPU clock here: judge by runs.
        _ => ar as f64 / fr.max(1) as f64,
    };
    println!(
        "  decisions equal: {}; target (the same decisions at ≤ {} % of the fixed sweep's \
         CPU): {}",
        if c.equal { "yes" } else { "NO" },
        100.0 * target,
        if fencesim_tune::compare::target_met(&c, share) {
            "met"
        } else {
            "NOT MET"
        }
    );
}

/// Runs the recommendation over 10× the first round's seeds (`fencesim_tune::compare::verify`)
/// and prints both; true when it still meets the targets.
fn verify(sweep: &Sweep, report: &TuneReport, jobs: usize, components: &Components) -> bool {
    let Some(verification) =
        fencesim_tune::compare::verify(sweep, report, jobs, components, &progress())
    else {
        println!("verify: no recommendation to verify");
        return false;
    };
    let n = verification.seeds;
    let (s, v) = (
        &report.settings[verification.setting],
        &verification.report.settings[0],
    );
    println!("verify {} over {n} seeds ({}):", s.label(), v.seeds);
    println!(
        "  unsafe: sweep {}, verify {}",
        s.unsafe_seeds.text(),
        v.unsafe_seeds.text()
    );
    println!(
        "  false expiries/h: sweep {}, verify {}",
        rate_text(&s.false_expiries),
        rate_text(&v.false_expiries)
    );
    for (a, b) in s.outage_runs.iter().zip(&v.outage_runs) {
        println!(
            "  {} outage failed: sweep {}, verify {}",
            a.form,
            a.failed_seeds.text(),
            b.failed_seeds.text()
        );
    }
    println!(
        "  {}: sweep {:?}, verify {:?}",
        report.ranking.short(),
        report.ranking.of(s).p99,
        report.ranking.of(v).p99
    );
    let holds = verification.holds();
    println!(
        "  the recommendation {} ({})",
        if holds { "holds" } else { "DOES NOT HOLD" },
        v.verdict
    );
    holds
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

/// Writes the [`FILES`] as one set, as `check` writes its outputs: every file drawn and its
/// temp written first, then all renamed together (a signal leaves the old set or the new
/// one, never a mix).
fn write_outputs(dir: &Path, report: &TuneReport) -> Result<(), InputError> {
    let plot = |e: String| InputError(format!("drawing the tune pictures: {e}"));
    let contents: [Vec<u8>; 7] = [
        tune_csv(report).into_bytes(),
        tune_json(report).into_bytes(),
        tune_markdown(report).into_bytes(),
        tune_metrics_svg(report).map_err(plot)?.into_bytes(),
        tune_metrics_png(report).map_err(plot)?,
        tune_pareto_svg(report).map_err(plot)?.into_bytes(),
        tune_pareto_png(report).map_err(plot)?,
    ];
    let mut set = fencesim::fs::OutputSet::new();
    for (file, bytes) in FILES.iter().zip(&contents) {
        let path = dir.join(file);
        set.add(&path, bytes)
            .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))?;
    }
    set.commit().map_err(|e| InputError(e.to_string()))
}

/// The sweep's summary on the console: skipped settings, fault counts, every setting's line,
/// then [`print_recommendation`].
fn print_summary(report: &TuneReport) {
    for s in &report.skipped {
        println!("  skipped (invalid): {s}");
    }
    for a in &report.fault_counts {
        println!(
            "  fault {}: realized {} of nominal {}",
            a.kind,
            a.realized,
            fencesim_tune::report::round(a.nominal)
        );
    }
    println!(
        "  decisions: {}",
        match report.targets.decide {
            DecideRule::UpperBound =>
                "a target is met only when the upper end of its 95 % interval is",
            DecideRule::Mean => "--decide mean: point estimates against targets (the old rule)",
        }
    );
    for s in &report.settings {
        println!(
            "  {:<50} {} seeds, unsafe {}, false expiries/h {}, takeovers {}: {}",
            s.label(),
            s.runs,
            s.unsafe_seeds.text(),
            rate_text(&s.false_expiries),
            s.takeovers.text(),
            s.verdict
        );
    }
    print_recommendation(report);
}

/// The ranking, the recommendation, its margins, the rules of thumb and what is left unjudged.
fn print_recommendation(report: &TuneReport) {
    println!("ranking: the lowest {}; {TIE_BREAK}", report.ranking.name());
    match report.recommendation.setting {
        Some(i) => println!(
            "recommendation: {} — {}",
            report.settings[i].label(),
            report.recommendation.reason
        ),
        None => println!("recommendation: none — {}", report.recommendation.reason),
    }
    for m in &report.margins {
        println!(
            "  safety boundary along {}: largest unsafe {}, smallest safe {}{}",
            m.field,
            m.largest_unsafe.as_deref().unwrap_or("(none in the grid)"),
            m.smallest_safe.as_deref().unwrap_or("(none)"),
            m.distance.map_or(String::new(), |d| format!(
                "; the recommendation is {d} above it"
            ))
        );
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
    for u in &report.unjudged {
        println!("not judged: {u}");
    }
    if let Some(i) = report.recommendation.setting {
        let s = &report.settings[i];
        println!(
            "  recommended setting: unsafe in {} seeds (share ≤ {} at 95 %)",
            s.unsafe_seeds.text(),
            percent(s.unsafe_seeds.high)
        );
    }
}
