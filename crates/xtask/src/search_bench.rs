//! `xtask search-bench`: the hard-bug benchmark (issue 23). For each hard case — a rare
//! catalogue violation, or a planted bug caught by one scenario run from a random profile not
//! written for it — the runs and CPU seconds to the first violation of the case's target
//! invariants, for random swarm (the scenario's seeds in order, as `fencesim run` draws them)
//! for coverage-guided search (`fencesim explore --guided`) and, where the configuration is
//! small (at most 2 workers and 1 resource), for exhaustive search (`fencesim explore
//! --exhaustive` at 100 ms over the whole run, at most 2 faults, or 1 when pairs would exceed
//! its default bound of 200,000 schedules; each replica on the replica's first seed), over
//! several replicas.
//!
//! Replica `r` starts both searches at seed `r * 1_000_000` (so they share their first plain
//! seeds: guided search starts where random swarm starts) and seeds guided search's choices
//! with `r`. A search that finds nothing within the budget is censored at the budget: medians
//! are reported as "> budget" when more than half of the replicas are. CPU seconds are the
//! process's user + system time over the search (read from /proc/self/stat), one search at a
//! time.

use std::{fmt::Write as _, path::PathBuf, sync::Arc};

use fencesim::explore::{
    exhaustive::{exhaustive, ExhaustiveError, ExhaustiveOptions},
    guided, GuidedOptions,
};
use fencesim_model::Invariant;
use fencesim_planted::Mutant;
use fencesim_scenario::{Scenario, SeedRange};
use fencesim_sim::runner::{run_seed, Components};

use crate::shared::InputError;

/// `xtask search-bench` arguments.
#[derive(clap::Args)]
pub(crate) struct SearchBenchArgs {
    /// Replicas per case and search (1..=100).
    #[arg(long, default_value_t = 9)]
    replicas: u64,
    /// Runs each search may spend (1..=100000).
    #[arg(long, default_value_t = 2_000)]
    budget: u64,
    /// Threads per search (the counts do not depend on it).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// The Markdown report to write.
    #[arg(short = 'o', long, default_value = "reports/search-benchmark.md")]
    output: PathBuf,
}

/// One hard case.
struct Case {
    /// The scenario file.
    file: &'static str,
    /// The planted bug it needs (`None`: the real code).
    mutant: Option<&'static str>,
    /// A violation counts when it includes one of these.
    target: &'static [Invariant],
    /// Why it is hard, in a phrase.
    why: &'static str,
}

/// Seeds the screen runs per planted-bug case, with the real code and with the bug.
pub(crate) const SCREEN_SEEDS: u64 = 300;

const CASES: [Case; 7] = [
    Case {
        file: "scenarios/chaos-5-workers-max-token.toml",
        mutant: None,
        target: &[Invariant::I4],
        why: "catalogue: 57 seeds to the first I4 in reports/sensitivity.md",
    },
    Case {
        file: "scenarios/fence-on-acquire-window-random.toml",
        mutant: None,
        target: &[Invariant::I4],
        why: "catalogue: 11 seeds to the first I4",
    },
    Case {
        file: "scenarios/k8s-client-go-clock-skew.toml",
        mutant: None,
        target: &[Invariant::I4],
        why: "catalogue: 7 seeds to the first I4; its coverage is hit in 2 of 300 seeds",
    },
    Case {
        file: "scenarios/benchmark/proxy-under-swarm.toml",
        mutant: Some("proxy-bypasses-everyone"),
        target: &[Invariant::I3],
        why:
            "planted bug caught only by proxy-durable-gc-pause, here under chaos + storage restarts",
    },
    Case {
        file: "scenarios/benchmark/shared-lease-txn-under-chaos.toml",
        mutant: Some("same-store-txn-compares-resource"),
        target: &[Invariant::I5],
        why: "planted bug caught only by mixed-scope-shared-lease-same-store-txn, here under chaos",
    },
    Case {
        file: "scenarios/benchmark/lock-delay-under-chaos.toml",
        mutant: Some("lease-lock-delay-ignored"),
        target: &[Invariant::I3],
        why: "planted bug caught only by preset-consul-lock-delay-none, here under chaos",
    },
    Case {
        file: "scenarios/fence-on-acquire-window-random.toml",
        mutant: Some("fence-not-raised"),
        target: &[Invariant::I3],
        why: "planted bug caught only by i4-gap-fence-on-acquire, here under its random twin",
    },
];

/// What the screen of a planted-bug case saw: seeds (of [`SCREEN_SEEDS`]) violating the
/// target with the real code and with the bug.
#[derive(Clone)]
struct Screen {
    real: u64,
    planted: u64,
}

impl Screen {
    /// Why the case stays out of the race (`None`: it is in).
    fn out(&self) -> Option<String> {
        if self.real > 0 {
            Some(format!(
                "out: the real code already violates the target in {} of {SCREEN_SEEDS} seeds",
                self.real
            ))
        } else if self.planted == 0 {
            Some(format!(
                "out: the bug never violates the target in {SCREEN_SEEDS} seeds"
            ))
        } else {
            None
        }
    }
}

/// Seeds of `scenario`'s first [`SCREEN_SEEDS`] violating `target`, with `mutant` selected.
fn screen_count(
    scenario: &Scenario,
    target: &[Invariant],
    mutant: Option<Mutant>,
    jobs: usize,
) -> u64 {
    fencesim_planted::select(mutant);
    let scenario = Arc::new(scenario.clone());
    let hits = std::sync::atomic::AtomicU64::new(0);
    let seeds = scenario.seeds.start..scenario.seeds.start + SCREEN_SEEDS;
    fencesim_sim::runner::sweep(&scenario, seeds, jobs, &Components::default(), &|outcome| {
        if self::hits(&outcome, target) {
            hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    fencesim_planted::select(None);
    hits.into_inner()
}

/// One search's result.
#[derive(Clone, Copy)]
struct Outcome {
    /// Runs to the first violation, counting it; `None`: none within the budget.
    runs: Option<u64>,
    /// CPU seconds the search spent (to its end).
    cpu_s: f64,
    /// Exhaustive search only: the bound's schedules, when all ran without a violation.
    covered: Option<u64>,
}

/// The process's CPU time so far (user + system), in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Whether a seed violated one of `target` (a panic or a runaway is no violation).
fn hits(outcome: &fencesim::SeedOutcome, target: &[Invariant]) -> bool {
    outcome.panic.is_none()
        && !outcome.runaway
        && outcome
            .checked
            .violated()
            .iter()
            .any(|i| target.contains(i))
}

/// Random swarm: the scenario's seeds from its start, in order, `jobs` at a time.
fn random(scenario: &Scenario, case: &Case, budget: u64, jobs: usize) -> Outcome {
    let scenario = Arc::new(scenario.clone());
    let start = cpu_seconds();
    let components = Components::default();
    let mut spent = 0;
    while spent < budget {
        let chunk = (budget - spent).min(jobs as u64 * 4);
        let seeds: Vec<u64> = (0..chunk)
            .map(|i| scenario.seeds.start + spent + i)
            .collect();
        let results = fencesim_sim::run_batch(&seeds, jobs, |&seed| {
            hits(&run_seed(&scenario, seed, &components).outcome, case.target)
        });
        if let Some(first) = results.iter().position(|&hit| hit) {
            return Outcome {
                runs: Some(spent + first as u64 + 1),
                cpu_s: cpu_seconds() - start,
                covered: None,
            };
        }
        spent += chunk;
    }
    Outcome {
        runs: None,
        cpu_s: cpu_seconds() - start,
        covered: None,
    }
}

fn guided_search(scenario: &Scenario, case: &Case, budget: u64, jobs: usize, r: u64) -> Outcome {
    let start = cpu_seconds();
    let options = GuidedOptions {
        runs: budget,
        rng_seed: r,
        jobs,
        target: Some(case.target.to_vec()),
        ..GuidedOptions::default()
    };
    let result = guided(scenario, &options, &mut |_| {});
    Outcome {
        runs: result.found.as_ref().map(|found| found.run),
        cpu_s: cpu_seconds() - start,
        covered: None,
    }
}

/// Exhaustive search on the scenario's first seed, stopped at the budget; `Err` says why it
/// does not apply.
fn exhaustive_search(
    scenario: &Scenario,
    case: &Case,
    budget: u64,
    jobs: usize,
) -> Result<(Outcome, String), String> {
    if scenario.workers.count > 2 || scenario.workers.resources.len() > 1 {
        return Err(format!(
            "does not apply ({} workers, {} resources)",
            scenario.workers.count,
            scenario.workers.resources.len()
        ));
    }
    let start = cpu_seconds();
    let options = |max_faults| ExhaustiveOptions {
        max_faults,
        invariants: Some(case.target.to_vec()),
        jobs,
        stop_after: Some(budget),
        ..ExhaustiveOptions::default()
    };
    let result = match exhaustive(scenario, &options(2), &mut |_| {}) {
        Err(ExhaustiveError::TooManySchedules { .. }) => {
            exhaustive(scenario, &options(1), &mut |_| {})
        }
        other => other,
    }
    .map_err(|e| format!("does not apply ({e})"))?;
    let bound = format!(
        "<= {} fault{} of {} letters, {} schedules",
        result.max_faults,
        if result.max_faults == 1 { "" } else { "s" },
        result.alphabet.len(),
        result.total
    );
    Ok((
        Outcome {
            runs: result.first_violation.as_ref().map(|v| v.index + 1),
            cpu_s: cpu_seconds() - start,
            covered: (result.first_violation.is_none() && result.run == result.total)
                .then_some(result.total),
        },
        bound,
    ))
}

/// The median of `outcomes`' runs, `None` (censored) past the budget.
fn median_runs(outcomes: &[Outcome]) -> Option<f64> {
    let runs: Vec<f64> = outcomes
        .iter()
        .map(|o| o.runs.map_or(f64::INFINITY, |r| r as f64))
        .collect();
    fencesim_stats::median(&runs).filter(|m| m.is_finite())
}

fn median_cpu(outcomes: &[Outcome]) -> f64 {
    let cpu: Vec<f64> = outcomes.iter().map(|o| o.cpu_s).collect();
    fencesim_stats::median(&cpu).unwrap_or(0.0)
}

fn runs_list(outcomes: &[Outcome], budget: u64) -> String {
    let list: Vec<String> = outcomes
        .iter()
        .map(|o| match (o.runs, o.covered) {
            (Some(r), _) => r.to_string(),
            (None, Some(_)) => "none".to_string(),
            (None, None) => format!(">{budget}"),
        })
        .collect();
    list.join(" ")
}

fn fmt_median(median: Option<f64>, budget: u64) -> String {
    median.map_or(format!("> {budget}"), |m| format!("{m}"))
}

/// One case's results: random swarm's and guided search's outcome per replica.
struct CaseResult {
    name: String,
    case: &'static Case,
    random: Vec<Outcome>,
    guided: Vec<Outcome>,
    /// Exhaustive search's outcomes and its bound, or why it does not apply.
    exhaustive: Result<(Vec<Outcome>, String), String>,
    /// The screen a planted-bug case passed.
    screen: Option<Screen>,
}

impl CaseResult {
    /// Random's median runs over guided's (infinite: only guided found it within budget).
    fn ratio(&self) -> Option<f64> {
        match (median_runs(&self.random), median_runs(&self.guided)) {
            (Some(r), Some(g)) => Some(r / g),
            (None, Some(_)) => Some(f64::INFINITY),
            _ => None,
        }
    }

    fn row(&self, budget: u64) -> String {
        format!(
            "| {} | {} | {} | {} ({}) | {:.2} | {} ({}) | {:.2} | {} | {} |",
            self.name,
            self.case
                .mutant
                .map_or("-".to_string(), |m| format!("`{m}`")),
            self.case
                .target
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            fmt_median(median_runs(&self.random), budget),
            runs_list(&self.random, budget),
            median_cpu(&self.random),
            fmt_median(median_runs(&self.guided), budget),
            runs_list(&self.guided, budget),
            median_cpu(&self.guided),
            self.ratio().map_or("-".into(), |r| {
                if r.is_finite() {
                    format!("{r:.1}x")
                } else {
                    "guided only".into()
                }
            }),
            match &self.exhaustive {
                Ok((outcomes, bound)) => format!(
                    "{} ({}; {bound}), {:.2} s CPU",
                    median_runs(outcomes).map_or_else(
                        || "not reached in half the replicas".to_string(),
                        |m| format!("{m}")
                    ),
                    runs_list(outcomes, budget),
                    median_cpu(outcomes)
                ),
                Err(why) => why.clone(),
            },
        )
    }
}

fn fmt_runs(runs: Option<u64>, budget: u64) -> String {
    runs.map_or(format!(">{budget}"), |x| x.to_string())
}

/// What a case gave: its results, the screen that kept it out, or nothing (no planted bugs
/// in this build).
enum Ran {
    Raced(CaseResult),
    Screened(&'static Case, Screen),
    Skipped,
}

/// The planted bug `case` names, if any.
fn planted_bug(case: &Case) -> Result<Option<Mutant>, InputError> {
    let Some(name) = case.mutant else {
        return Ok(None);
    };
    Mutant::ALL
        .iter()
        .copied()
        .find(|m| m.name() == name)
        .map(Some)
        .ok_or_else(|| InputError(format!("no planted bug {name}")))
}

/// Screens `case` when it plants a bug, then runs every replica of it.
fn run_case(case: &'static Case, args: &SearchBenchArgs, jobs: usize) -> Result<Ran, InputError> {
    let mutant = planted_bug(case)?;
    if mutant.is_some() && !fencesim_planted::select(mutant) {
        return Ok(Ran::Skipped);
    }
    let base = fencesim_scenario::load(std::path::Path::new(case.file))?;
    let screen = mutant.map(|mutant| Screen {
        real: screen_count(&base, case.target, None, jobs),
        planted: screen_count(&base, case.target, Some(mutant), jobs),
    });
    if let Some(screen) = &screen {
        println!(
            "{} screen: target violated in {} of {SCREEN_SEEDS} seeds with the real code, {} \
             with {}",
            base.name,
            screen.real,
            screen.planted,
            case.mutant.unwrap_or_default()
        );
        if screen.out().is_some() {
            return Ok(Ran::Screened(case, screen.clone()));
        }
        fencesim_planted::select(mutant);
    }
    let mut result = CaseResult {
        name: base.name.clone(),
        case,
        random: Vec::new(),
        guided: Vec::new(),
        exhaustive: Ok((Vec::new(), String::new())),
        screen: None,
    };
    for r in 0..args.replicas {
        let mut scenario = base.clone();
        let start = r * 1_000_000;
        scenario.seeds = SeedRange {
            start,
            end: start + args.budget,
        };
        let random_outcome = random(&scenario, case, args.budget, jobs);
        let guided_outcome = guided_search(&scenario, case, args.budget, jobs, r);
        println!(
            "{} replica {r}: random {} runs ({:.1} s CPU), guided {} runs ({:.1} s CPU)",
            base.name,
            fmt_runs(random_outcome.runs, args.budget),
            random_outcome.cpu_s,
            fmt_runs(guided_outcome.runs, args.budget),
            guided_outcome.cpu_s,
        );
        result.random.push(random_outcome);
        result.guided.push(guided_outcome);
        if let Ok((outcomes, bound)) = &mut result.exhaustive {
            match exhaustive_search(&scenario, case, args.budget, jobs) {
                Ok((outcome, this_bound)) => {
                    println!(
                        "{} replica {r}: exhaustive {} runs ({:.1} s CPU; {this_bound})",
                        base.name,
                        fmt_runs(outcome.runs, args.budget),
                        outcome.cpu_s
                    );
                    outcomes.push(outcome);
                    *bound = this_bound;
                }
                Err(why) => result.exhaustive = Err(why),
            }
        }
    }
    fencesim_planted::select(None);
    result.screen = screen;
    Ok(Ran::Raced(result))
}

fn report(
    results: &[CaseResult],
    screened: &[(&'static Case, Screen)],
    skipped: &[&str],
    args: &SearchBenchArgs,
) -> String {
    let mut report = String::new();
    let _ = writeln!(
        report,
        "# Hard-bug benchmark: random swarm against guided search\n"
    );
    let _ = writeln!(
        report,
        "Regenerated by `cargo run --release -p fencesim-xtask --features mutants -- search-bench \
         --replicas {} --budget {} --jobs {}`. Runs to the first violation of each case's target \
         invariants (counting it), median over {} replicas; replica r starts both searches at \
         seed r x 1,000,000 and seeds guided search with r. In parentheses: every replica's \
         count. CPU: median seconds of process CPU per search (machine-dependent; the run \
         counts are not). Ratio: random's median over guided's. Exhaustive search runs its \
         schedules in enumeration order (single faults first) on each replica's first seed, \
         stopped at the budget; `none`: the whole bound ran without a violation.\n",
        args.replicas, args.budget, args.jobs, args.replicas
    );
    let _ = writeln!(
        report,
        "| case | planted bug | target | random: runs (each replica) | random CPU s | guided: runs (each replica) | guided CPU s | ratio | exhaustive: runs (each replica; bound), CPU |"
    );
    let _ = writeln!(report, "|---|---|---|---|---|---|---|---|---|");
    for result in results {
        let _ = writeln!(report, "{}", result.row(args.budget));
    }
    let ratios: Vec<f64> = results.iter().filter_map(CaseResult::ratio).collect();
    let overall = fencesim_stats::median(&ratios);
    let _ = writeln!(
        report,
        "\nMedian ratio over the cases: {}.",
        overall.map_or("-".into(), |r| format!("{r:.1}x"))
    );
    let _ = writeln!(report, "\nWhy each case is hard:\n");
    for result in results {
        let screen = result.screen.as_ref().map_or(String::new(), |s| {
            format!(
                " (screen: the target violated in {} of the first {SCREEN_SEEDS} seeds with the \
                 real code, {} with the bug)",
                s.real, s.planted
            )
        });
        let _ = writeln!(report, "- {}: {}{screen}", result.name, result.case.why);
    }
    if !screened.is_empty() {
        let _ = writeln!(
            report,
            "\nPlanted bugs caught by one scenario that stay out of the race (screened over the \
             first {SCREEN_SEEDS} seeds of the profile, with the real code and with the bug: a \
             case races only when the real code never violates the target and the bug does):\n"
        );
        for (case, screen) in screened {
            let _ = writeln!(
                report,
                "- `{}` in {} (target {}): {}; with the bug {} of {SCREEN_SEEDS}. {}",
                case.mutant.unwrap_or_default(),
                case.file,
                case.target
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                screen.out().unwrap_or_default(),
                screen.planted,
                case.why
            );
        }
    }
    for file in skipped {
        let _ = writeln!(report, "\nSKIPPED {file}: this build has no planted bugs.");
    }
    report
}

pub(crate) fn search_bench(args: &SearchBenchArgs) -> Result<bool, InputError> {
    if !(1..=100).contains(&args.replicas) {
        return Err(InputError(format!(
            "--replicas: expected 1 to 100, got {}",
            args.replicas
        )));
    }
    if !(1..=100_000).contains(&args.budget) {
        return Err(InputError(format!(
            "--budget: expected 1 to 100000 runs, got {}",
            args.budget
        )));
    }
    let jobs = fencesim::check_jobs(args.jobs).map_err(|e| InputError(format!("--jobs: {e}")))?;
    fencesim::outputs::preflight(&[fencesim::outputs::Output::new("-o", &args.output)], &[])?;
    let mut results = Vec::new();
    let mut screened = Vec::new();
    let mut skipped = Vec::new();
    for case in &CASES {
        match run_case(case, args, jobs)? {
            Ran::Raced(result) => results.push(result),
            Ran::Screened(case, screen) => screened.push((case, screen)),
            Ran::Skipped => {
                println!(
                    "{}: SKIPPED (needs planted bug {}: build with --features mutants)",
                    case.file,
                    case.mutant.unwrap_or_default()
                );
                skipped.push(case.file);
            }
        }
    }
    let report = report(&results, &screened, &skipped, args);
    print!("{report}");
    fencesim::fs::write_atomic(&args.output, &report)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", args.output.display())))?;
    println!("written to {}", args.output.display());
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(runs: &[Option<u64>]) -> Vec<Outcome> {
        runs.iter()
            .map(|&runs| Outcome {
                runs,
                cpu_s: 0.0,
                covered: None,
            })
            .collect()
    }

    #[test]
    fn a_planted_case_races_only_when_the_real_code_is_clean_and_the_bug_is_not() {
        assert!(Screen {
            real: 0,
            planted: 19
        }
        .out()
        .is_none());
        let dirty = Screen {
            real: 2,
            planted: 4,
        }
        .out()
        .unwrap();
        assert!(
            dirty.contains("real code already violates the target in 2"),
            "{dirty}"
        );
        let harmless = Screen {
            real: 0,
            planted: 0,
        }
        .out()
        .unwrap();
        assert!(harmless.contains("bug never violates"), "{harmless}");
    }

    #[test]
    fn medians_are_censored_at_the_budget_and_the_ratio_is_randoms_over_guideds() {
        assert_eq!(median_runs(&found(&[Some(4), Some(1), Some(9)])), Some(4.0));
        assert_eq!(median_runs(&found(&[Some(4), Some(6)])), Some(5.0));
        // A search that found nothing sorts past every count: most found, the median stands...
        assert_eq!(median_runs(&found(&[Some(3), None, Some(5)])), Some(5.0));
        // ...most did not: no median.
        assert_eq!(median_runs(&found(&[Some(3), None, None])), None);
        let result = |random: &[Option<u64>], guided: &[Option<u64>]| CaseResult {
            name: "case".into(),
            case: &CASES[0],
            random: found(random),
            guided: found(guided),
            exhaustive: Err("n/a".into()),
            screen: None,
        };
        assert_eq!(result(&[Some(40)], &[Some(8)]).ratio(), Some(5.0));
        assert_eq!(result(&[None], &[Some(8)]).ratio(), Some(f64::INFINITY));
        assert_eq!(result(&[Some(8)], &[None]).ratio(), None);
        assert!(result(&[None], &[Some(8)]).row(100).contains("guided only"));
        assert!(result(&[Some(8)], &[None])
            .row(100)
            .contains("> 100 (>100)"));
    }
}
