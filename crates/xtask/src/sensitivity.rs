//! `xtask sensitivity`: how sensitive the harness is, written as
//! `reports/sensitivity.md` by `.ci/sensitivity`.
//!
//! 1. For every catalogue scenario that expects violations: seeds, in order from the start of
//!    its range, until the first seed violating an expected invariant.
//! 2. For every safe scenario: false positives (seeds with any violation, panic or runaway)
//!    over `--safe-seeds` seeds from the start of its range.
//! 3. With the `mutants` feature: the whole catalogue under each planted bug
//!    (`fencesim-planted`, catalogued in `crates/xtask/src/planted.rs`); every mutant must turn its declared scenario NOT MET.
//!
//! Exit 0 when every unsafe scenario was detected, there is no false positive and every
//! mutant was caught by its scenario; 1 otherwise.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::Arc,
};

use crate::planted::{self, MutantInfo};
use fencesim::{builtin_store, StoreFactory};
use fencesim_scenario::{Outcome, Scenario};

use crate::shared::InputError;

/// Limits of the command's own arguments.
const MAX_SAFE_SEEDS: u64 = 10_000_000;
const MAX_DETECT_SEEDS: u64 = 1_000_000;
/// The false-positive target: 0 in this many seeds per safe scenario.
const FULL_SWEEP: u64 = 20_000;

pub(crate) struct Args<'a> {
    pub paths: &'a [PathBuf],
    pub safe_seeds: u64,
    pub detect_max: u64,
    pub jobs: usize,
    pub output: &'a Path,
    pub skip_mutants: bool,
}

struct Detection {
    name: String,
    expected: Vec<String>,
    first: Option<(u64, u64)>,
    tried: u64,
}

fn detect(scenario: &Arc<Scenario>, max: u64, jobs: usize, factory: &StoreFactory) -> Detection {
    let Outcome::Violates(expected) = &scenario.expect.outcome else {
        unreachable!("only unsafe scenarios are measured for detection")
    };
    let start = scenario.seeds.start;
    let batch = (jobs as u64 * 8).max(8);
    let mut tried = 0;
    let mut first = None;
    while first.is_none() && tried < max {
        let n = batch.min(max - tried);
        let seeds = start.saturating_add(tried)..start.saturating_add(tried + n);
        let outcomes = fencesim_sim::sweep_all(
            scenario,
            seeds,
            jobs,
            &fencesim_sim::Components::with_store(factory),
        );
        first = outcomes
            .iter()
            .find(|o| {
                o.panic.is_none()
                    && o.checked
                        .violations
                        .iter()
                        .any(|v| expected.contains(&v.invariant))
            })
            .map(|o| (o.seed, o.seed - start + 1));
        tried += n;
    }
    Detection {
        name: scenario.name.clone(),
        expected: expected.iter().map(|i| format!("{i:?}")).collect(),
        first,
        tried: first.map_or(tried, |(_, n)| n),
    }
}

struct FalsePositives {
    name: String,
    seeds: u64,
    failing: Vec<u64>,
    seconds: f64,
}

fn false_positives(
    scenario: &Arc<Scenario>,
    n: u64,
    jobs: usize,
    factory: &StoreFactory,
) -> FalsePositives {
    let start = scenario.seeds.start;
    let started = crate::shared::wall_now();
    // Streamed: only the failing seeds are kept, not every seed's outcome.
    let counted = std::sync::Mutex::new((0u64, Vec::new()));
    fencesim_sim::runner::sweep(
        scenario,
        start..start.saturating_add(n),
        jobs,
        &fencesim_sim::runner::Components::with_store(factory),
        &|o| {
            let mut counted = counted
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            counted.0 += 1;
            if o.panic.is_some() || o.runaway || !o.checked.violations.is_empty() {
                counted.1.push(o.seed);
            }
        },
    );
    let (seeds, mut failing) = counted
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    failing.sort_unstable();
    FalsePositives {
        name: scenario.name.clone(),
        seeds,
        failing,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// The scenarios whose expectation is NOT MET, with the reason, over their own seed ranges.
fn catalogue(
    scenarios: &[(PathBuf, Arc<Scenario>)],
    jobs: usize,
    factory: &StoreFactory,
) -> NotMet {
    let mut not_met = Vec::new();
    for (file, scenario) in scenarios {
        let outcomes = fencesim_sim::sweep_all(
            scenario,
            scenario.seeds.iter(),
            jobs,
            &fencesim_sim::Components::with_store(factory),
        );
        let result =
            fencesim_verdict::scenario_result(&file.display().to_string(), scenario, outcomes);
        if !result.summary.expectation_met {
            not_met.push((scenario.name.clone(), result.summary.expectation_detail));
        }
    }
    not_met
}

/// The command's own arguments, checked before anything runs.
fn check_args(args: &Args<'_>) -> Result<(), InputError> {
    if !(1..=MAX_SAFE_SEEDS).contains(&args.safe_seeds) {
        return Err(InputError(format!(
            "--safe-seeds: expected 1..={MAX_SAFE_SEEDS}, got {}",
            args.safe_seeds
        )));
    }
    if !(1..=MAX_DETECT_SEEDS).contains(&args.detect_max) {
        return Err(InputError(format!(
            "--detect-max: expected 1..={MAX_DETECT_SEEDS}, got {}",
            args.detect_max
        )));
    }
    if !args.skip_mutants && !fencesim_planted::ENABLED {
        return Err(InputError(
            "the mutation table needs a build with `--features mutants` \
             (cargo run --release -p fencesim-xtask --features mutants -- sensitivity ...), \
             or pass --skip-mutants"
                .into(),
        ));
    }
    Ok(())
}

pub(crate) fn sensitivity(args: &Args<'_>) -> Result<bool, InputError> {
    check_args(args)?;
    let files = fencesim_scenario::input::scenario_files(args.paths)?;
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    fencesim::outputs::preflight(
        &[fencesim::outputs::Output::new("-o", args.output)],
        &inputs,
    )?;
    let mut scenarios = Vec::with_capacity(files.len());
    for file in &files {
        scenarios.push((file.clone(), Arc::new(fencesim_scenario::load(file)?)));
    }
    let factory: StoreFactory = Arc::new(builtin_store);
    fencesim_planted::select(None);
    let started = crate::shared::wall_now();
    let (detections, fps) = detections_and_false_positives(&scenarios, args, &factory);
    let mutants = if args.skip_mutants {
        Vec::new()
    } else {
        mutation_table(&files, &scenarios, args, &factory)?
    };
    let total = started.elapsed().as_secs_f64();

    let (text, ok) = render(args, &detections, &fps, &mutants, total);
    fencesim::fs::write_atomic(args.output, &text)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", args.output.display())))?;
    println!("wrote {} ({:.0} s)", args.output.display(), total);
    Ok(ok)
}

/// Seeds to detection of every unsafe scenario, false positives of every safe one.
fn detections_and_false_positives(
    scenarios: &[(PathBuf, Arc<Scenario>)],
    args: &Args<'_>,
    factory: &StoreFactory,
) -> (Vec<Detection>, Vec<FalsePositives>) {
    let mut detections = Vec::new();
    let mut fps = Vec::new();
    for (_, scenario) in scenarios {
        match scenario.expect.outcome {
            Outcome::Violates(_) => {
                let d = detect(scenario, args.detect_max, args.jobs, factory);
                eprintln!(
                    "detect {}: {}",
                    d.name,
                    d.first.map_or(
                        format!("not within {} seeds", d.tried),
                        |(seed, n)| format!("seed {seed} ({n} seeds)")
                    )
                );
                detections.push(d);
            }
            Outcome::Safe => {
                let fp = false_positives(scenario, args.safe_seeds, args.jobs, factory);
                eprintln!(
                    "safe {}: {} false positives in {} seeds, {:.1} s ({:.0} seeds/s)",
                    fp.name,
                    fp.failing.len(),
                    fp.seeds,
                    fp.seconds,
                    fp.seeds as f64 / fp.seconds.max(1e-9)
                );
                fps.push(fp);
            }
        }
    }
    (detections, fps)
}

/// The scenarios a run leaves NOT MET, each with its reason.
type NotMet = Vec<(String, String)>;

/// The catalogue under each planted bug it runs: the scenarios each leaves NOT MET.
fn mutation_table(
    files: &[PathBuf],
    scenarios: &[(PathBuf, Arc<Scenario>)],
    args: &Args<'_>,
    factory: &StoreFactory,
) -> Result<Vec<(&'static MutantInfo, NotMet)>, InputError> {
    let baseline = catalogue(scenarios, args.jobs, factory);
    if !baseline.is_empty() {
        return Err(InputError(format!(
            "the catalogue is not all met without a mutant ({} NOT MET: {}); fix it first",
            baseline.len(),
            baseline[0].0
        )));
    }
    let mut mutants = Vec::new();
    // Planted bugs in code the catalogue never runs (tune, shrink, check-history, merge,
    // percentiles): `.ci/mutants` holds them to their named tests instead.
    for info in planted::ALL.iter().filter(|info| info.catalogue_runs_it()) {
        fencesim_planted::select(Some(info.mutant));
        // Loaded again under the mutant: some planted bugs live in the scenario's
        // resolution (a preset's defaults), which the files loaded above went through
        // without them.
        let mut mutated = Vec::with_capacity(files.len());
        for file in files {
            mutated.push((file.clone(), Arc::new(fencesim_scenario::load(file)?)));
        }
        let not_met = catalogue(&mutated, args.jobs, factory);
        fencesim_planted::select(None);
        eprintln!(
            "mutant {}: {} scenarios NOT MET",
            info.name(),
            not_met.len()
        );
        mutants.push((info, not_met));
    }
    Ok(mutants)
}

fn render(
    args: &Args<'_>,
    detections: &[Detection],
    fps: &[FalsePositives],
    mutants: &[(&MutantInfo, NotMet)],
    total_seconds: f64,
) -> (String, bool) {
    let mut s = String::new();
    render_run(&mut s, args, total_seconds);
    let mut ok = render_detections(&mut s, detections);
    ok &= render_false_positives(&mut s, args, fps);
    if mutants.is_empty() {
        let _ = writeln!(s, "\n## Mutation table\n\nNot run (`--skip-mutants`).");
        return (s, ok);
    }
    ok &= render_mutants(&mut s, mutants);
    (s, ok)
}

/// The title and the command this run was.
fn render_run(s: &mut String, args: &Args<'_>, total_seconds: f64) {
    let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
    let paths = paths.join(" ");
    let _ = writeln!(
        s,
        "# Sensitivity\n\nRegenerated by `.ci/sensitivity` (which first runs `.ci/mutants`, the \
         test half of the mutation table). This run: `fencesim sensitivity {} \
         --safe-seeds {} --detect-max {} --jobs {}`, {:.0} s in all on this machine \
         (wall times and seeds/s depend on the machine and its load; every count does not).\n",
        paths, args.safe_seeds, args.detect_max, args.jobs, total_seconds
    );
}

/// Seeds to first detection, per unsafe scenario; false when one was not detected.
fn render_detections(s: &mut String, detections: &[Detection]) -> bool {
    let mut ok = true;
    let _ = writeln!(
        s,
        "## Seeds to first detection (unsafe scenarios)\n\nSeeds run in order from the start of \
         the scenario's range until the first seed that violates one of its expected \
         invariants (lower is better; 1 means the first seed).\n\n\
         | scenario | expects | first detecting seed | seeds to first detection |\n|---|---|---|---|"
    );
    for d in detections {
        let (seed, n) = match d.first {
            Some((seed, n)) => (seed.to_string(), n.to_string()),
            None => {
                ok = false;
                ("none".to_string(), format!("> {} (NOT DETECTED)", d.tried))
            }
        };
        let _ = writeln!(
            s,
            "| {} | {} | {seed} | {n} |",
            d.name,
            d.expected.join(", ")
        );
    }
    ok
}

/// False positives, per safe scenario; false when there is one.
fn render_false_positives(s: &mut String, args: &Args<'_>, fps: &[FalsePositives]) -> bool {
    let mut ok = true;
    let total_seeds: u64 = fps.iter().map(|fp| fp.seeds).sum();
    let total_fp: usize = fps.iter().map(|fp| fp.failing.len()).sum();
    let seconds: f64 = fps.iter().map(|fp| fp.seconds).sum();
    let _ = writeln!(
        s,
        "\n## False positives (safe scenarios)\n\n{} seeds per scenario from the start of its \
         range; a false positive is a seed with any violation, a panic or a runaway. In all: \
         {total_fp} false positives in {total_seeds} seeds, {seconds:.0} s at {} jobs \
         ({:.0} seeds/s).\n",
        args.safe_seeds,
        args.jobs,
        total_seeds as f64 / seconds.max(1e-9)
    );
    if args.safe_seeds < FULL_SWEEP && !fps.is_empty() {
        let minutes = (FULL_SWEEP * fps.len() as u64) as f64
            / (total_seeds as f64 / seconds.max(1e-9))
            / 60.0;
        let _ = writeln!(
            s,
            "This is below the target of {FULL_SWEEP} seeds per scenario; the full sweep \
             (`.ci/sensitivity`, SAFE_SEEDS={FULL_SWEEP}) would take about {minutes:.0} min at \
             this rate.\n"
        );
    }
    let _ = writeln!(
        s,
        "| scenario | seeds | false positives | wall (s) | seeds/s |\n|---|---|---|---|---|"
    );
    for fp in fps {
        if !fp.failing.is_empty() {
            ok = false;
        }
        let listed = if fp.failing.is_empty() {
            "0".to_string()
        } else {
            let shown: Vec<String> = fp.failing.iter().take(5).map(u64::to_string).collect();
            format!("**{}** (seeds {})", fp.failing.len(), shown.join(", "))
        };
        let _ = writeln!(
            s,
            "| {} | {} | {listed} | {:.1} | {:.0} |",
            fp.name,
            fp.seeds,
            fp.seconds,
            fp.seeds as f64 / fp.seconds.max(1e-9)
        );
    }
    ok
}

/// The mutation table; false when a mutant survived its named scenario.
fn render_mutants(s: &mut String, mutants: &[(&MutantInfo, NotMet)]) -> bool {
    let mut ok = true;
    let caught = mutants
        .iter()
        .filter(|(info, not_met)| not_met.iter().any(|(name, _)| name == info.scenario))
        .count();
    let _ = writeln!(
        s,
        "\n## Mutation table\n\n{} planted bugs (`crates/planted`, catalogued in \
         `crates/xtask/src/planted.rs`, compiled only with `--features mutants`), each applied \
         alone to the whole catalogue (every scenario over its own seed range). {caught} of {} are caught by their named \
         scenario. \"Caught by test\" names the test that fails under the mutant: \
         `.ci/mutants` runs each one with `FENCESIM_MUTANT=<name>` and fails unless it fails \
         (and the plain `cargo test` run shows it passes without).\n\n\
         | mutant | area | where | caught by scenario (expectation NOT MET) | scenarios NOT MET | caught by test |\n|---|---|---|---|---|---|",
        mutants.len(),
        mutants.len()
    );
    for (info, not_met) in mutants {
        let named = not_met.iter().find(|(name, _)| name == info.scenario);
        let by_scenario = match named {
            Some((name, detail)) => format!("{name}: {}", detail.replace('|', "\\|")),
            None => {
                ok = false;
                format!("**SURVIVED** {} (met)", info.scenario)
            }
        };
        let others: Vec<&str> = not_met.iter().map(|(name, _)| name.as_str()).collect();
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} ({}) | `cargo test {} -- {}` |",
            info.name(),
            info.area,
            info.site,
            by_scenario,
            not_met.len(),
            others.join(", "),
            info.test.0,
            info.test.1
        );
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(paths: &[PathBuf], safe_seeds: u64) -> Args<'_> {
        Args {
            paths,
            safe_seeds,
            detect_max: 500,
            jobs: 2,
            output: Path::new("reports/sensitivity.md"),
            skip_mutants: false,
        }
    }

    fn detections() -> Vec<Detection> {
        vec![
            Detection {
                name: "gc-pause-textbook-none".into(),
                expected: vec!["I3".into(), "I4".into()],
                first: Some((0, 1)),
                tried: 8,
            },
            Detection {
                name: "never-caught".into(),
                expected: vec!["I1".into()],
                first: None,
                tried: 500,
            },
        ]
    }

    fn false_positives() -> Vec<FalsePositives> {
        vec![
            FalsePositives {
                name: "gc-pause-textbook-sql".into(),
                seeds: 1_000,
                failing: Vec::new(),
                seconds: 4.0,
            },
            FalsePositives {
                name: "noisy".into(),
                seeds: 1_000,
                failing: (10..17).collect(),
                seconds: 6.0,
            },
        ]
    }

    #[test]
    fn the_report_names_every_miss_false_positive_and_survivor() {
        let paths = [PathBuf::from("scenarios")];
        let infos = planted::ALL;
        let mutants = vec![
            (
                &infos[0],
                vec![(
                    infos[0].scenario.to_string(),
                    "expected safe | got I4".to_string(),
                )],
            ),
            (&infos[1], vec![("other".to_string(), "met".to_string())]),
        ];
        let (text, ok) = render(
            &args(&paths, 1_000),
            &detections(),
            &false_positives(),
            &mutants,
            61.0,
        );
        assert!(!ok);
        let expected = format!(
            "{}{}{}{}",
            EXPECTED_HEAD,
            EXPECTED_FALSE_POSITIVES,
            EXPECTED_MUTANTS_HEAD,
            format_args!(
                "| `{}` | {} | {} | {}: expected safe \\| got I4 | 1 ({}) | `cargo test {} -- {}` |\n\
                 | `{}` | {} | {} | **SURVIVED** {} (met) | 1 (other) | `cargo test {} -- {}` |\n",
                infos[0].name(),
                infos[0].area,
                infos[0].site,
                infos[0].scenario,
                infos[0].scenario,
                infos[0].test.0,
                infos[0].test.1,
                infos[1].name(),
                infos[1].area,
                infos[1].site,
                infos[1].scenario,
                infos[1].test.0,
                infos[1].test.1,
            )
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn without_mutants_the_table_says_it_was_not_run() {
        let paths = [PathBuf::from("scenarios")];
        let detected = &detections()[..1];
        let clean = &false_positives()[..1];
        let (text, ok) = render(&args(&paths, FULL_SWEEP), detected, clean, &[], 61.0);
        assert!(ok);
        assert!(
            text.ends_with("## Mutation table\n\nNot run (`--skip-mutants`).\n"),
            "{text}"
        );
        assert!(!text.contains("below the target"), "{text}");
    }

    const EXPECTED_HEAD: &str = "# Sensitivity\n\nRegenerated by `.ci/sensitivity` (which first runs `.ci/mutants`, the test half of the mutation table). This run: `fencesim sensitivity scenarios --safe-seeds 1000 --detect-max 500 --jobs 2`, 61 s in all on this machine (wall times and seeds/s depend on the machine and its load; every count does not).\n\n\
## Seeds to first detection (unsafe scenarios)\n\nSeeds run in order from the start of the scenario's range until the first seed that violates one of its expected invariants (lower is better; 1 means the first seed).\n\n\
| scenario | expects | first detecting seed | seeds to first detection |\n|---|---|---|---|\n\
| gc-pause-textbook-none | I3, I4 | 0 | 1 |\n\
| never-caught | I1 | none | > 500 (NOT DETECTED) |\n";

    const EXPECTED_FALSE_POSITIVES: &str = "\n## False positives (safe scenarios)\n\n1000 seeds per scenario from the start of its range; a false positive is a seed with any violation, a panic or a runaway. In all: 7 false positives in 2000 seeds, 10 s at 2 jobs (200 seeds/s).\n\n\
This is below the target of 20000 seeds per scenario; the full sweep (`.ci/sensitivity`, SAFE_SEEDS=20000) would take about 3 min at this rate.\n\n\
| scenario | seeds | false positives | wall (s) | seeds/s |\n|---|---|---|---|---|\n\
| gc-pause-textbook-sql | 1000 | 0 | 4.0 | 250 |\n\
| noisy | 1000 | **7** (seeds 10, 11, 12, 13, 14) | 6.0 | 167 |\n";

    const EXPECTED_MUTANTS_HEAD: &str = "\n## Mutation table\n\n2 planted bugs (`crates/planted`, catalogued in `crates/xtask/src/planted.rs`, compiled only with `--features mutants`), each applied alone to the whole catalogue (every scenario over its own seed range). 1 of 2 are caught by their named scenario. \"Caught by test\" names the test that fails under the mutant: `.ci/mutants` runs each one with `FENCESIM_MUTANT=<name>` and fails unless it fails (and the plain `cargo test` run shows it passes without).\n\n\
| mutant | area | where | caught by scenario (expectation NOT MET) | scenarios NOT MET | caught by test |\n|---|---|---|---|---|---|\n";
}
