//! A sweep summarized as seeds finish: what `fencesim run` does, in memory that grows with
//! the failing seeds, not with the seed count.

use std::{collections::BTreeMap, sync::Arc, sync::Mutex};

use fencesim_check::SeedOutcome;
use fencesim_scenario::{Scenario, SeedRange};
use fencesim_sim::runner::{sweep_each, Components, StoreFactory};
use fencesim_verdict::{Summary, SummaryBuilder};

/// The result of [`sweep_summarized`].
pub struct Swept {
    /// The summary, byte-identical to `fencesim_verdict::summarize` over every outcome.
    pub summary: Summary,
    /// The outcomes of failing seeds (a violation, a panic or a runaway), in full, by seed.
    pub failing: Vec<SeedOutcome>,
}

/// Outcomes finishing in any order, handed on in the order of the seeds.
struct Reorder<I: Iterator<Item = u64>, F: FnMut(SeedOutcome)> {
    /// The seeds still to hand on, in order; the first is the next one expected.
    expected: std::iter::Peekable<I>,
    /// Finished outcomes waiting for an earlier seed (at most about `jobs` of them).
    waiting: BTreeMap<u64, SeedOutcome>,
    consume: F,
}

impl<I: Iterator<Item = u64>, F: FnMut(SeedOutcome)> Reorder<I, F> {
    fn add(&mut self, outcome: SeedOutcome) {
        self.waiting.insert(outcome.seed, outcome);
        while let Some(&next) = self.expected.peek() {
            let Some(outcome) = self.waiting.remove(&next) else {
                break;
            };
            (self.consume)(outcome);
            self.expected.next();
        }
    }
}

/// Runs `seeds` (ascending, each once) on `jobs` threads and hands each outcome to `consume`
/// in seed order as soon as every earlier seed has finished, keeping only the outcomes that
/// wait for an earlier seed; `on_done` sees each outcome as it finishes (any order). What
/// `consume` sees does not depend on `jobs`.
pub fn sweep_in_seed_order<I>(
    scenario: &Arc<Scenario>,
    seeds: I,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(&SeedOutcome) + Sync),
    consume: impl FnMut(SeedOutcome) + Send,
) where
    I: Iterator<Item = u64> + Clone + Send,
{
    let state = Mutex::new(Reorder {
        expected: seeds.clone().peekable(),
        waiting: BTreeMap::new(),
        consume,
    });
    sweep_each(scenario, seeds, jobs, components, &|outcome| {
        on_done(&outcome);
        state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .add(outcome);
    });
    let state = state
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    debug_assert!(state.waiting.is_empty(), "every seed was handed on");
}

/// Runs `seeds` on `jobs` threads and summarizes them as they finish; `on_done` sees each
/// outcome as it finishes (any order). The result does not depend on `jobs`.
pub fn sweep_summarized(
    scenario: &Arc<Scenario>,
    seeds: SeedRange,
    jobs: usize,
    factory: &StoreFactory,
    on_done: &(dyn Fn(&SeedOutcome) + Sync),
) -> Swept {
    let mut builder = SummaryBuilder::new();
    let mut failing = Vec::new();
    let components = Components::with_store(factory);
    sweep_in_seed_order(
        scenario,
        seeds.iter(),
        jobs,
        &components,
        on_done,
        |outcome: SeedOutcome| {
            builder.push(&outcome);
            if outcome.panic.is_some() || outcome.runaway || !outcome.checked.violations.is_empty()
            {
                failing.push(outcome);
            }
        },
    );
    Swept {
        summary: builder.finish(scenario, seeds),
        failing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarized_as_seeds_finish_equals_summarized_at_the_end() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/gc-pause-textbook-none.toml");
        let scenario = Arc::new(fencesim_scenario::load(&path).expect("the catalogue loads"));
        let seeds = SeedRange { start: 3, end: 11 };
        let factory: StoreFactory = Arc::new(fencesim_sim::runner::builtin_store);
        let outcomes = fencesim_sim::sweep(&scenario, seeds.iter(), 1, &factory, &|_| {});
        let whole = fencesim_verdict::summarize(&scenario, seeds, &outcomes);
        for jobs in [1, 3] {
            let swept = sweep_summarized(&scenario, seeds, jobs, &factory, &|_| {});
            assert_eq!(
                fencesim_verdict::to_json(&swept.summary),
                fencesim_verdict::to_json(&whole)
            );
            let failing: Vec<u64> = swept.failing.iter().map(|o| o.seed).collect();
            assert_eq!(failing, whole.failing_seeds);
            assert!(!failing.is_empty(), "the textbook failure fails");
        }
    }

    #[test]
    fn a_strided_slice_is_handed_on_in_seed_order_whatever_the_jobs() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/gc-pause-textbook-none.toml");
        let scenario = Arc::new(fencesim_scenario::load(&path).expect("the catalogue loads"));
        let factory: StoreFactory = Arc::new(fencesim_sim::runner::builtin_store);
        let components = Components::with_store(&factory);
        let seeds = (2..23).step_by(4);
        for jobs in [1, 3] {
            let mut seen = Vec::new();
            sweep_in_seed_order(&scenario, seeds.clone(), jobs, &components, &|_| {}, |o| {
                seen.push(o.seed)
            });
            assert_eq!(seen, seeds.clone().collect::<Vec<_>>(), "{jobs} jobs");
        }
    }
}
