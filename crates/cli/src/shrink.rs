//! `fencesim shrink` (one failing seed → a 1-minimal explicit schedule, saved as a scenario
//! file) and `fencesim explore` (proptest over the scenario's fault profile, then shrink).
//! The work is in `fencesim-explore`; this is printing and files. `explore --exhaustive`
//! runs every schedule of a small bound (`fencesim_explore::exhaustive`) instead.
//!
//! Exit codes: 0 a violation was shrunk, written and confirmed by a fresh run of the written
//! file; 1 nothing to shrink (the seed passes, or exploration found nothing); 2 bad input,
//! nothing written.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use fencesim_explore::{
    exhaustive::{self as search, ExhaustiveError},
    ExploreOptions, ShrinkError, ShrinkOptions, Shrunk,
};
use fencesim_model::Invariant;
use fencesim_scenario::Outcome;

use crate::common::InputError;

mod flags;

pub(crate) use flags::{ExhaustiveArgs, GuidedFlags, SearchFlags};

/// `fencesim shrink SCENARIO --seed N [-o FILE]`.
pub(crate) fn shrink(
    path: &Path,
    seed: u64,
    output: Option<&Path>,
    max_runs: usize,
    set: &[fencesim_scenario::Override],
) -> Result<bool, InputError> {
    let scenario = fencesim_scenario::load_with(path, set)?;
    // The saved scenario runs exactly this seed, `seeds = "N..N+1"`; a half-open range
    // cannot end past u64::MAX, so the last seed cannot be saved (no range can hold it,
    // so no `run` or `check` ever runs it either).
    if seed == u64::MAX {
        return Err(InputError(format!(
            "--seed: expected a seed below {} (the shrunk file's `seeds = \"N..N+1\"` must hold it), got {seed}",
            u64::MAX
        )));
    }
    check_output(path, &scenario, seed, output)?;
    if max_runs == 0 {
        return Err(InputError(
            "--max-runs: expected a positive number, got 0".into(),
        ));
    }
    println!(
        "fencesim shrink {} ({}), scenario hash {}, seed {seed}, at most {max_runs} runs",
        scenario.name,
        path.display(),
        scenario.hash()
    );
    let options = ShrinkOptions {
        max_runs,
        ..ShrinkOptions::default()
    };
    match fencesim_explore::shrink(&scenario, seed, &options, &mut |step| println!("{step}")) {
        Ok(shrunk) => save(&shrunk, output),
        Err(error @ (ShrinkError::NotFailing { .. } | ShrinkError::NotAVerdict { .. })) => {
            println!("{error}");
            Ok(false)
        }
        // Not an input error: nothing was shrunk (and a non-reproducing plan is a bug).
        Err(error) => {
            eprintln!("error: {error}");
            Ok(false)
        }
    }
}

/// `fencesim explore SCENARIO [--cases N] [-o FILE]`.
pub(crate) fn explore(
    path: &Path,
    cases: Option<u32>,
    output: Option<&Path>,
    sweep_seeds: u64,
    set: &[fencesim_scenario::Override],
    record_failures: bool,
) -> Result<bool, InputError> {
    let scenario = fencesim_scenario::load_with(path, set)?;
    check_output(path, &scenario, scenario.seeds.start, output)?;
    let regressions = fencesim::regressions::path_for(path);
    if record_failures {
        if sweep_seeds == 0 {
            return Err(InputError(
                "--record-failures: records the plain sweep's first failing seed; expected \
                 --sweep-seeds above 0"
                    .into(),
            ));
        }
        // Read now, so a malformed file stops the run before its first case.
        fencesim::regressions::load(&regressions).map_err(InputError)?;
        fencesim::outputs::preflight_scenarios(&[], &[path], Some("--record-failures"))?;
    }
    let (cases, from) = flags::cases(cases)?;
    println!(
        "fencesim explore {} ({}), scenario hash {}, seed {}, {cases} cases{from}",
        scenario.name,
        path.display(),
        scenario.hash(),
        scenario.seeds.start
    );
    let options = ExploreOptions {
        cases,
        sweep_seeds,
        ..ExploreOptions::default()
    };
    let explored = fencesim_explore::explore(&scenario, &options, &mut |step| println!("{step}"));
    let sweep = match &explored.sweep {
        Some(sweep) => match sweep.first_violation {
            Some(seed) => format!(
                "a plain run of seeds {} needed {} seeds (first violation: seed {seed})",
                scenario.seeds, sweep.seeds_run
            ),
            None => format!(
                "a plain run of seeds {} found none in {} seeds",
                scenario.seeds, sweep.seeds_run
            ),
        },
        None => "no plain run for comparison".to_string(),
    };
    if record_failures {
        record_sweep_seed(path, &scenario, set, explored.sweep.as_ref())?;
    }
    let sweep = match explored
        .sweep
        .as_ref()
        .and_then(|s| s.first_not_a_verdict.as_ref())
    {
        Some((seed, what)) => format!("{sweep}; seed {seed} failed without a violation ({what})"),
        None => sweep,
    };
    let not_verdicts = match &explored.first_not_a_verdict {
        Some(what) => format!(
            "; {} cases failed without a violation (first: {what}): a panic or a runaway is \
             not shrunk, since shrinking keeps a schedule only while the checker still finds \
             its violations",
            explored.not_verdicts
        ),
        None => String::new(),
    };
    let Some((schedule, shrunk)) = explored.found else {
        println!(
            "no violation in {} cases{not_verdicts}; {sweep}",
            explored.cases_to_first_violation
        );
        return Ok(false);
    };
    println!(
        "first violation after {} cases ({} proptest runs, shrinking included; proptest's \
         schedule: {} faults); {sweep}",
        explored.cases_to_first_violation,
        explored.proptest_runs,
        schedule.len()
    );
    save(&shrunk, output)
}

/// Everything `fencesim explore` was given.
pub(crate) struct ExploreCommand<'a> {
    pub(crate) path: &'a Path,
    pub(crate) cases: Option<u32>,
    pub(crate) output: Option<&'a Path>,
    pub(crate) sweep_seeds: u64,
    pub(crate) set: &'a [fencesim_scenario::Override],
    pub(crate) record_failures: bool,
    pub(crate) guided: &'a GuidedFlags,
    pub(crate) exhaustive: &'a ExhaustiveArgs,
    pub(crate) search: &'a SearchFlags,
}

/// `fencesim explore`: proptest, `--guided` or `--exhaustive`.
pub(crate) fn explore_command(command: &ExploreCommand) -> Result<bool, InputError> {
    flags::check_modes(command.guided, command.exhaustive)?;
    if command.exhaustive.exhaustive {
        return exhaustive(
            command.path,
            command.exhaustive,
            command.search,
            command.output,
            command.set,
        );
    }
    if command.guided.guided {
        return guided(command);
    }
    if let Some(flag) = command.search.given() {
        return Err(InputError(format!(
            "{flag}: only with --guided or --exhaustive"
        )));
    }
    explore(
        command.path,
        command.cases,
        command.output,
        command.sweep_seeds,
        command.set,
        command.record_failures,
    )
}

/// A refused bound, naming the flag.
fn exhaustive_input_error(error: ExhaustiveError, path: &Path) -> InputError {
    let flag = match error {
        ExhaustiveError::ZeroResolution | ExhaustiveError::ResolutionAboveHorizon { .. } => {
            "--resolution-ms: "
        }
        ExhaustiveError::Horizon { .. } => "--horizon-ms: ",
        ExhaustiveError::TooManyFaults(_) => "--max-faults: ",
        ExhaustiveError::NoInvariants => "--invariants: ",
        ExhaustiveError::TooManySchedules { .. } => "--max-schedules: ",
        ExhaustiveError::EmptyAlphabet => {
            return InputError(format!("{}: {error}", path.display()));
        }
    };
    InputError(format!("{flag}{error}"))
}

/// `fencesim explore SCENARIO --exhaustive [--resolution-ms R] [--max-faults K]
/// [--horizon-ms H] [--invariants I3,I4] [--max-schedules N] [--jobs J] [--all] [-o FILE]`.
/// Exit: 0 no violation and no failed run in the whole bound; 1 a violation (shrunk and
/// saved) or a run that failed without one; 2 bad input.
pub(crate) fn exhaustive(
    path: &Path,
    args: &ExhaustiveArgs,
    search: &SearchFlags,
    output: Option<&Path>,
    set: &[fencesim_scenario::Override],
) -> Result<bool, InputError> {
    let scenario = fencesim_scenario::load_with(path, set)?;
    let seed = scenario.seeds.start;
    check_output(path, &scenario, seed, output)?;
    let (jobs, invariants) = search.values()?;
    let options = args.options(jobs, invariants)?;
    let bound = search::enumeration(&scenario, &options)
        .map_err(|error| exhaustive_input_error(error, path))?;
    let total = bound.total();
    println!(
        "fencesim explore --exhaustive {} ({}), scenario hash {}, seed {seed}: {} schedules of \
         at most {} faults ({} faults x {} start times every {} ms below {} ms; {} pairs \
         skipped: two stops overlapping on one node), {jobs} jobs",
        scenario.name,
        path.display(),
        scenario.hash(),
        search::thousands(total),
        bound.max_faults,
        bound.alphabet.len(),
        bound.slots,
        bound.resolution_ms,
        options.horizon_ms.unwrap_or(scenario.duration_ms),
        search::thousands(bound.skipped()),
    );
    for (index, letter) in bound.alphabet.iter().enumerate() {
        println!("  fault {}: {letter}", index + 1);
    }
    // A progress line every ~5 % of the bound.
    let step = (total / 20).max(1);
    let mut next = step;
    let exhausted = search::exhaustive(&scenario, &options, &mut |progress| {
        let run = u128::from(progress.run);
        if run >= next && progress.run < progress.total {
            println!(
                "  {}/{} schedules run ({}%), {} violating",
                search::thousands(run),
                search::thousands(total),
                run * 100 / total,
                progress.violating
            );
            next = (run / step + 1) * step;
        }
    })
    .map_err(|error| exhaustive_input_error(error, path))?;
    println!("{}", exhausted.statement());
    let Some(found) = &exhausted.first_violation else {
        return Ok(exhausted.not_verdicts == 0);
    };
    println!(
        "schedule {} of {}:",
        search::thousands(u128::from(found.index + 1)),
        search::thousands(total)
    );
    for timed in &found.schedule {
        println!("  {}", fencesim_explore::shrink::describe(timed));
    }
    if found.schedule.is_empty() {
        println!("  (no fault)");
    }
    let target: Vec<Invariant> = match &exhausted.invariants {
        Some(target) => found
            .violated
            .iter()
            .copied()
            .filter(|i| target.contains(i))
            .collect(),
        None => found.violated.clone(),
    };
    let candidate = search::candidate(&scenario, seed, &found.schedule);
    let shrink_options = ShrinkOptions {
        target: Some(target),
        ..ShrinkOptions::default()
    };
    match fencesim_explore::shrink(&candidate, seed, &shrink_options, &mut |step| {
        println!("{step}")
    }) {
        Ok(shrunk) => {
            save(&shrunk, output)?;
        }
        Err(error) => eprintln!("error: {error}"),
    }
    Ok(false)
}

/// `explore --record-failures`: the plain sweep's first failing seed (a violation, or a seed
/// that failed without one), run again for its trace, recorded in `path`'s regressions file
/// when it contradicts the expectation. The schedule explore found is saved as its own
/// scenario (`-o`), which is a regression test by itself.
fn record_sweep_seed(
    path: &Path,
    scenario: &fencesim_scenario::Scenario,
    set: &[fencesim_scenario::Override],
    sweep: Option<&fencesim_explore::SeedSweep>,
) -> Result<(), InputError> {
    let first = sweep.and_then(|sweep| {
        [
            sweep.first_violation,
            sweep.first_not_a_verdict.as_ref().map(|(seed, _)| *seed),
        ]
        .into_iter()
        .flatten()
        .min()
    });
    let Some(seed) = first else {
        println!("--record-failures: the plain sweep found no failing seed; nothing recorded");
        return Ok(());
    };
    let scenario = std::sync::Arc::new(scenario.clone());
    let run = fencesim::run_seed(&scenario, seed, &fencesim::Components::default());
    let regressions = fencesim::regressions::path_for(path);
    if !fencesim_verdict::contradicts(&scenario.expect, &run.outcome) {
        println!(
            "--record-failures: seed {seed} violates only what the scenario expects; nothing recorded"
        );
        return Ok(());
    }
    let set_args: Vec<String> = set.iter().map(|o| o.to_arg()).collect();
    let entry = fencesim::regressions::Entry::of(&run.outcome, &scenario.hash(), &set_args);
    let limit = fencesim::regressions::DEFAULT_PER_SIGNATURE;
    let done =
        fencesim::regressions::record(&regressions, &path.display().to_string(), &[entry], limit)
            .map_err(InputError)?;
    if done.added + done.known == 1 {
        println!(
            "--record-failures: seed {seed} (the plain sweep's first failure) {} {}",
            if done.added == 1 {
                "recorded in"
            } else {
                "already recorded in"
            },
            regressions.display()
        );
    } else {
        println!(
            "--record-failures: seed {seed} (the plain sweep's first failure): {}",
            done.describe(&regressions, limit)
        );
    }
    Ok(())
}

/// The file `save` writes: `-o FILE`, else `./<name>-shrunk-seed-<N>.toml` (the shrunk
/// scenario's name).
fn output_file(
    scenario: &fencesim_scenario::Scenario,
    seed: u64,
    output: Option<&Path>,
) -> PathBuf {
    output.map_or_else(
        || PathBuf::from(format!("{}-shrunk-seed-{seed}.toml", scenario.name)),
        Path::to_path_buf,
    )
}

/// Fails before any simulation if the output cannot be written later.
fn check_output(
    input: &Path,
    scenario: &fencesim_scenario::Scenario,
    seed: u64,
    output: Option<&Path>,
) -> Result<(), InputError> {
    let file = output_file(scenario, seed, output);
    fencesim::outputs::preflight_scenarios(
        &[fencesim::outputs::Output::new("-o", file)],
        &[input],
        None,
    )
    .map_err(InputError)
}

/// Prints the result, writes the scenario file, and confirms it by loading the written file
/// and running its seed again.
fn save(shrunk: &Shrunk, output: Option<&Path>) -> Result<bool, InputError> {
    let file: PathBuf = match output {
        Some(output) => output.to_path_buf(),
        None => PathBuf::from(format!("{}.toml", shrunk.scenario.name)),
    };
    println!(
        "shrunk seed {}: {} faults -> {} in {} runs{}; still violates {}",
        shrunk.seed,
        shrunk.original_faults,
        shrunk.scenario.faults.schedule.len(),
        shrunk.runs,
        if shrunk.budget_exhausted {
            " (run budget exhausted: not at a fixpoint)"
        } else {
            ""
        },
        names(&shrunk.violated)
    );
    println!(
        "1-minimal: {} ({} single-step reductions checked)",
        shrunk.minimality.is_one_minimal(),
        shrunk.minimality.checks.len()
    );
    for check in &shrunk.minimality.checks {
        println!(
            "  {:<8} {}",
            if check.still_fails { "FAILS" } else { "passes" },
            check.change
        );
    }
    let text = fencesim_scenario::scenario_toml(&shrunk.scenario);
    fencesim::fs::write_atomic(&file, &text)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", file.display())))?;
    println!("written to {}", file.display());

    // A device or FIFO (`-o /dev/null`, accepted by the preflight) is written in place and
    // cannot be read back: the text written is confirmed instead.
    let in_place = matches!(
        fencesim::fs::destination(&file),
        Ok(fencesim::fs::Destination::InPlace(_))
    );
    let written = if in_place {
        fencesim_scenario::parse_str(&text, &file.display().to_string())?
    } else {
        fencesim_scenario::load(&file)?
    };
    let again = fencesim_sim::run_seed(
        &Arc::new(written.clone()),
        shrunk.seed,
        &fencesim::Components::default(),
    );
    let violated = again.outcome.checked.violated();
    let confirmed = written.expect.outcome == Outcome::Violates(violated.clone());
    println!(
        "confirmed by a fresh run of the written file: {confirmed} (violates {})",
        names(&violated)
    );
    if in_place {
        println!(
            "replay: not a file ({} is written in place); save it with -o FILE.toml to replay",
            file.display()
        );
    } else {
        println!(
            "replay: {}",
            shrunk.replay_command(&file.display().to_string())
        );
    }
    Ok(confirmed)
}

fn names(invariants: &[fencesim_model::Invariant]) -> String {
    let names: Vec<String> = invariants.iter().map(|i| i.to_string()).collect();
    format!("[{}]", names.join(", "))
}

/// `fencesim explore SCENARIO --guided [--runs N] [--search-seed S]`: coverage-guided search
/// (fencesim_explore::guided), then the shrinker on what it finds. Exit codes as `explore`'s.
fn guided(command: &ExploreCommand) -> Result<bool, InputError> {
    let flags = command.guided;
    let scenario = fencesim_scenario::load_with(command.path, command.set)?;
    check_output(
        command.path,
        &scenario,
        scenario.seeds.start,
        command.output,
    )?;
    let runs = flags.runs()?;
    let search_seed = flags.search_seed.unwrap_or(0);
    let (jobs, invariants) = command.search.values()?;
    let target = invariants
        .as_ref()
        .map_or("any invariant".to_string(), |list| names(list));
    println!(
        "fencesim explore --guided {} ({}), scenario hash {}, search seed {}, budget {} runs, \
         target {target}, lineage {}",
        scenario.name,
        command.path.display(),
        scenario.hash(),
        search_seed,
        runs,
        if flags.no_lineage { "off" } else { "on" }
    );
    let options = fencesim_explore::GuidedOptions {
        runs,
        rng_seed: search_seed,
        jobs,
        target: invariants,
        lineage: !flags.no_lineage,
        ..fencesim_explore::GuidedOptions::default()
    };
    let mut last_states = 0;
    let mut last_printed = 0;
    let guided = fencesim_explore::guided(&scenario, &options, &mut |p| {
        if p.states != last_states || p.runs >= last_printed + 100 || p.runs == runs {
            println!(
                "  runs {:>6}: {} states, {} transitions, corpus {}, {} lineage proposals queued",
                p.runs, p.states, p.transitions, p.corpus, p.queued
            );
            last_states = p.states;
            last_printed = p.runs;
        }
    });
    let [seeds, mutated, lineage] = guided.runs_by_origin;
    println!(
        "searched {} runs ({seeds} plain seeds, {mutated} mutations, {lineage} lineage \
         proposals of {} made): {} abstract states, {} transitions, corpus of {}",
        guided.runs,
        guided.proposals,
        guided.states,
        guided.transitions,
        guided.corpus.len()
    );
    if let Some(what) = &guided.first_not_a_verdict {
        println!(
            "{} runs failed without a violation (first: {what}): not shrunk",
            guided.not_verdicts
        );
    }
    let sweep = sweep_comparison(&scenario, command.sweep_seeds, options.target.as_deref());
    let Some(found) = guided.found else {
        println!("no violation in {} runs; {sweep}", guided.runs);
        return Ok(false);
    };
    println!(
        "first violation at run {} (seed {}, {} faults; {}): violates {}; {sweep}",
        found.run,
        found.candidate.seed,
        found.candidate.scenario.faults.schedule.len(),
        found.candidate.origin,
        names(&found.violated)
    );
    let shrink_options = ShrinkOptions {
        target: Some(found.violated.clone()),
        ..ShrinkOptions::default()
    };
    match fencesim_explore::shrink(
        &found.candidate.scenario,
        found.candidate.seed,
        &shrink_options,
        &mut |step| println!("{step}"),
    ) {
        Ok(shrunk) => save(&shrunk, command.output),
        Err(error) => {
            println!("{error}");
            Ok(false)
        }
    }
}

/// How many seeds a plain sweep needed to violate `target` (`None`: any invariant), for
/// comparison (`--sweep-seeds`, 0: none).
fn sweep_comparison(
    scenario: &fencesim_scenario::Scenario,
    sweep_seeds: u64,
    target: Option<&[Invariant]>,
) -> String {
    let sweep = (sweep_seeds > 0).then(|| {
        fencesim_explore::seeds_to_first_violation_of(
            scenario,
            sweep_seeds,
            &fencesim::Components::default(),
            target,
        )
    });
    let of = target.map_or(String::new(), |target| format!(" of {}", names(target)));
    match sweep {
        Some(fencesim_explore::SeedSweep {
            first_violation: Some(seed),
            seeds_run,
            ..
        }) => format!(
            "a plain run of seeds {} needed {seeds_run} seeds (first violation{of}: seed {seed})",
            scenario.seeds
        ),
        Some(sweep) => format!(
            "a plain run of seeds {} found no violation{of} in {} seeds",
            scenario.seeds, sweep.seeds_run
        ),
        None => "no plain run for comparison".into(),
    }
}
