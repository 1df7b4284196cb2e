//! Property-based exploration: proptest draws fault schedules from a scenario's fault profile
//! (its `faults.random` entries, plus its explicit schedule), runs each on one fixed seed,
//! lets proptest shrink the first violating schedule, then hands it to [`crate::shrink()`].
//!
//! The strategy draws, per random entry, a number of occurrences (up to about twice the
//! entry's expected count over the safety phase) and for each: a time uniform in
//! `[0, duration_ms)`, a target among the entry's nodes (or every worker), and a size as a
//! quantile of the entry's distribution, so that proptest's shrinking (fewer occurrences,
//! earlier times, lower quantiles) means fewer, earlier, shorter faults. Stop-the-process
//! faults that would overlap an earlier one on the same node are dropped, as `plan` does.
//!
//! Deterministic: the runner's RNG is ChaCha with a fixed seed, persistence is off, and the
//! shrink phase is bounded by iterations, not wall time.

use std::{
    cell::{Cell, RefCell},
    collections::BTreeMap,
    sync::Arc,
};

use fencesim_model::{nodes, Invariant};
use fencesim_scenario::{Dist, Fault, RandomFault, Scenario, TimedFault};
use fencesim_sim::runner::{run_seed, Components};
use proptest::{
    prelude::*,
    strategy::ValueTree,
    test_runner::{Config, RngAlgorithm, TestRng, TestRunner},
};

use crate::shrink::{
    explicit_for_seed, not_a_verdict, shrink, ShrinkOptions, Shrunk, Step, MIN_DURATION_MS,
};

/// Occurrences drawn per random entry at most, whatever its rate.
pub const MAX_OCCURRENCES_PER_ENTRY: usize = 64;

/// How to explore.
#[derive(Clone)]
pub struct ExploreOptions {
    /// Cases proptest runs before concluding nothing violates.
    pub cases: u32,
    /// Seeds the plain sweep may run for the comparison (0: no comparison).
    pub sweep_seeds: u64,
    /// Options of the shrinker run on proptest's result (its components are used throughout).
    pub shrink: ShrinkOptions,
    /// Seed of proptest's ChaCha RNG.
    pub rng_seed: u64,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            cases: 100,
            sweep_seeds: 0,
            shrink: ShrinkOptions::default(),
            rng_seed: 0,
        }
    }
}

/// A plain sweep of the scenario's seeds, in order, up to the first violation.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedSweep {
    /// Seeds run.
    pub seeds_run: u64,
    /// The first violating seed, if any within the budget.
    pub first_violation: Option<u64>,
    /// The first seed before it that failed without a violation (a panic or a runaway),
    /// and what happened: not a violation, so not what the sweep looks for, but not a pass.
    pub first_not_a_verdict: Option<(u64, String)>,
}

/// What exploring found.
#[derive(Clone, Debug)]
pub struct Explored {
    /// Every case runs on this seed (the scenario's first).
    pub seed: u64,
    /// Test cases run before the first violation, counting it (or all cases if none).
    pub cases_to_first_violation: u32,
    /// Simulations proptest ran, shrinking included.
    pub proptest_runs: u32,
    /// Proptest's shrunk schedule, then the shrinker's result; `None`: nothing violated.
    pub found: Option<(Vec<TimedFault>, Shrunk)>,
    /// The plain sweep, when asked for.
    pub sweep: Option<SeedSweep>,
    /// Cases whose run failed without a violation (a panic or a runaway): never taken as the
    /// violation to shrink (shrinking keeps a schedule only while the checker still finds
    /// its violations), but counted and the first one described, so "no violation" is
    /// never said of a run that panicked.
    pub not_verdicts: u32,
    /// The first such case: `panicked: …` or `runaway: …`.
    pub first_not_a_verdict: Option<String>,
}

/// Proptest's runner for `options`: a fixed ChaCha seed, no persistence files, no forks or
/// timeouts, and no `PROPTEST_*` variable read (`Config::default()` reads them and prints
/// warnings), so a search depends only on its options. [`find`] runs the cases and shrinks.
fn runner(options: &ExploreOptions) -> TestRunner {
    let config = Config {
        cases: options.cases,
        max_local_rejects: 0,
        max_global_rejects: 0,
        max_flat_map_regens: 1_000_000,
        failure_persistence: None,
        source_file: None,
        test_name: None,
        fork: false,
        timeout: 0,
        max_shrink_time: 0,
        max_shrink_iters: 0,
        max_default_size_range: 100,
        result_cache: proptest::test_runner::noop_result_cache,
        verbose: 0,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: proptest::test_runner::RngSeed::Random,
        _non_exhaustive: (),
    };
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&options.rng_seed.to_le_bytes());
    key[8..16].copy_from_slice(b"explore!");
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
    TestRunner::new_with_rng(config, rng)
}

/// Proptest's shrink tries on the first violating schedule before the shrinker takes over.
pub const PROPTEST_SHRINK_ITERS: u32 = 64;

/// Draws up to `cases` schedules from `strategy` until one `fails`, then simplifies it as
/// proptest's runner does (at most [`PROPTEST_SHRINK_ITERS`] tries, then back to the last
/// failing one), without the runner's "Aborting shrinking" line on stderr: the simplest
/// failing schedule found, if any.
fn find(
    runner: &mut TestRunner,
    strategy: &impl Strategy<Value = Vec<TimedFault>>,
    cases: u32,
    fails: &mut dyn FnMut(Vec<TimedFault>) -> bool,
) -> Option<Vec<TimedFault>> {
    for _ in 0..cases {
        let mut tree = strategy
            .new_tree(runner)
            .expect("the schedule strategy rejects nothing");
        if !fails(tree.current()) {
            continue;
        }
        let mut tries = 0;
        if tree.simplify() {
            loop {
                if tries >= PROPTEST_SHRINK_ITERS {
                    while tree.complicate() {}
                    break;
                }
                tries += 1;
                let more = if fails(tree.current()) {
                    tree.simplify()
                } else {
                    tree.complicate()
                };
                if !more {
                    break;
                }
            }
        }
        return Some(tree.current());
    }
    None
}

/// Explores `scenario`'s fault profile; `on_step` sees the shrinker's steps.
pub fn explore(
    scenario: &Scenario,
    options: &ExploreOptions,
    on_step: &mut dyn FnMut(&Step),
) -> Explored {
    let seed = scenario.seeds.start;
    let base = explicit_for_seed(scenario, seed);
    let strategy = schedule_strategy(scenario);
    let mut runner = runner(options);

    let runs = Cell::new(0u32);
    let not_verdicts = Cell::new(0u32);
    let first_not_a_verdict = RefCell::new(None::<String>);
    let first = Cell::new(None::<u32>);
    let target = RefCell::new(None::<Vec<Invariant>>);
    let components = options.shrink.components.clone();
    let found = find(&mut runner, &strategy, options.cases, &mut |schedule| {
        runs.set(runs.get() + 1);
        let mut candidate = base.clone();
        candidate.faults.schedule = schedule;
        let outcome = run_seed(&Arc::new(candidate), seed, &components).outcome;
        if let Some(what) = not_a_verdict(&outcome, scenario) {
            not_verdicts.set(not_verdicts.get() + 1);
            first_not_a_verdict.borrow_mut().get_or_insert(what);
        }
        let violated = outcome.checked.violated();
        let fails = outcome.panic.is_none()
            && !outcome.runaway
            && match &*target.borrow() {
                // Shrinking must keep the violation proptest found first.
                Some(target) => target.iter().all(|i| violated.contains(i)),
                None => !violated.is_empty(),
            };
        if fails && first.get().is_none() {
            first.set(Some(runs.get()));
            *target.borrow_mut() = Some(violated);
        }
        fails
    });
    let sweep = (options.sweep_seeds > 0)
        .then(|| seeds_to_first_violation(scenario, options.sweep_seeds, &components));
    let found = found.map(|schedule| {
        let mut candidate = base.clone();
        candidate.faults.schedule = schedule.clone();
        let mut shrink_options = options.shrink.clone();
        shrink_options.target = target.borrow().clone();
        let shrunk = shrink(&candidate, seed, &shrink_options, on_step)
            .expect("proptest's shrunk schedule fails on the same seed");
        (schedule, shrunk)
    });
    Explored {
        seed,
        cases_to_first_violation: first.get().unwrap_or(runs.get()),
        proptest_runs: runs.get(),
        found,
        sweep,
        not_verdicts: not_verdicts.get(),
        first_not_a_verdict: first_not_a_verdict.into_inner(),
    }
}

/// Runs the scenario's seeds in order until the first violation, at most `max_seeds`.
pub fn seeds_to_first_violation(
    scenario: &Scenario,
    max_seeds: u64,
    components: &Components,
) -> SeedSweep {
    seeds_to_first_violation_of(scenario, max_seeds, components, None)
}

/// [`seeds_to_first_violation`] counting only violations of `target` (`None`: any
/// invariant), the comparison for a search aimed at those invariants.
pub fn seeds_to_first_violation_of(
    scenario: &Scenario,
    max_seeds: u64,
    components: &Components,
    target: Option<&[Invariant]>,
) -> SeedSweep {
    let scenario = Arc::new(scenario.clone());
    let mut seeds_run = 0;
    let mut first_not_a_verdict = None;
    for seed in scenario.seeds.iter().take(max_seeds as usize) {
        seeds_run += 1;
        let outcome = run_seed(&scenario, seed, components).outcome;
        if first_not_a_verdict.is_none() {
            first_not_a_verdict = not_a_verdict(&outcome, &scenario).map(|what| (seed, what));
        }
        let violated = outcome.checked.violated();
        let counted = match target {
            Some(target) => violated.iter().any(|i| target.contains(i)),
            None => !violated.is_empty(),
        };
        if counted {
            return SeedSweep {
                seeds_run,
                first_violation: Some(seed),
                first_not_a_verdict,
            };
        }
    }
    SeedSweep {
        seeds_run,
        first_violation: None,
        first_not_a_verdict,
    }
}

/// Fault schedules drawn from `scenario`'s fault profile (see the module docs).
pub fn schedule_strategy(scenario: &Scenario) -> impl Strategy<Value = Vec<TimedFault>> {
    let duration_ms = scenario.duration_ms as f64;
    let workers: Vec<String> = (0..scenario.workers.count).map(nodes::worker).collect();
    let entries: Vec<BoxedStrategy<Vec<TimedFault>>> = scenario
        .faults
        .random
        .iter()
        .map(|entry| {
            let expected = entry.rate_per_min * duration_ms / 60_000.0;
            let max = ((2.0 * expected).ceil() as usize + 1).min(MAX_OCCURRENCES_PER_ENTRY);
            let targets = if entry.nodes.is_empty() {
                workers.clone()
            } else {
                entry.nodes.clone()
            };
            let entry = entry.clone();
            let occurrence = (
                0.0..duration_ms,
                0..targets.len().max(1),
                0.0..1.0f64,
                any::<bool>(),
                0.0..1.0f64,
            )
                .prop_map(move |(at_ms, target, quantile, negative, one_way)| {
                    occurrence(&entry, &targets, at_ms, target, quantile, negative, one_way)
                });
            proptest::collection::vec(occurrence, 0..=max).boxed()
        })
        .collect();
    let fixed = scenario.faults.schedule.clone();
    entries.prop_map(move |drawn| {
        let mut faults = fixed.clone();
        faults.extend(drawn.into_iter().flatten());
        without_overlaps(faults)
    })
}

/// One occurrence, built as `plan` builds a drawn one.
pub(crate) fn occurrence(
    entry: &RandomFault,
    targets: &[String],
    at_ms: f64,
    target: usize,
    quantile: f64,
    negative: bool,
    one_way: f64,
) -> TimedFault {
    let node = targets.get(target).cloned().unwrap_or_default();
    let size_ms = quantile_ms(&entry.duration_ms, quantile).max(MIN_DURATION_MS);
    let one_way = one_way < entry.one_way_probability;
    TimedFault {
        at_ms,
        fault: Fault::drawn(entry.kind, node, size_ms, negative, one_way),
    }
}

/// Sorted by time (stable: the explicit schedule first at equal times); a stop-the-process
/// fault overlapping an earlier kept one on the same node is dropped.
pub(crate) fn without_overlaps(mut faults: Vec<TimedFault>) -> Vec<TimedFault> {
    faults.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    let mut stopped: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    faults.retain(|timed| {
        let Some(node) = timed.fault.stopped_node() else {
            return true;
        };
        let (start, end) = (timed.at_ms, timed.at_ms + timed.fault.duration_ms());
        let intervals = stopped.entry(node.to_string()).or_default();
        if intervals.iter().any(|&(s, e)| start < e && s < end) {
            return false;
        }
        intervals.push((start, end));
        true
    });
    faults
}

/// z-score of the 99th percentile of the standard normal distribution (as in `spec`).
const Z_P99: f64 = 2.326_347_874_040_841;

/// The `quantile`-th quantile of `dist` (quantile in [0, 1)).
pub(crate) fn quantile_ms(dist: &Dist, quantile: f64) -> f64 {
    let q = quantile.clamp(1e-9, 1.0 - 1e-9);
    match *dist {
        Dist::Const { value } => value,
        Dist::Empirical { ref quantiles } => fencesim_scenario::empirical_quantile(quantiles, q),
        Dist::Uniform { min, max } => min + q * (max - min).max(0.0),
        Dist::Exponential { mean } => -mean * (1.0 - q).ln(),
        Dist::Lognormal { median, p99 } => {
            let sigma = ((p99 / median).ln() / Z_P99).max(0.0);
            median * (sigma * inverse_normal(q)).exp()
        }
    }
}

/// The standard normal quantile function (Acklam's rational approximation, relative error
/// below 1.2e-9: far finer than any fault duration needs).
fn inverse_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    const LOW: f64 = 0.024_25;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_normal_matches_known_quantiles() {
        let cases = [
            (0.5, 0.0),
            (0.99, Z_P99),
            (0.01, -Z_P99),
            (0.841_344_746, 1.0),
        ];
        for (p, z) in cases {
            assert!((inverse_normal(p) - z).abs() < 1e-6, "p = {p}");
        }
    }

    #[test]
    fn quantiles_of_each_distribution() {
        let lognormal = Dist::Lognormal {
            median: 20.0,
            p99: 300.0,
        };
        assert!((quantile_ms(&lognormal, 0.5) - 20.0).abs() < 1e-6);
        assert!((quantile_ms(&lognormal, 0.99) - 300.0).abs() < 1e-3);
        let uniform = Dist::Uniform {
            min: 1_000.0,
            max: 3_000.0,
        };
        assert_eq!(quantile_ms(&uniform, 0.5), 2_000.0);
        let exponential = Dist::Exponential { mean: 10.0 };
        assert!((quantile_ms(&exponential, 1.0 - (-1.0f64).exp()) - 10.0).abs() < 1e-6);
    }
}
