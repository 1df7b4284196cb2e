//! A sweep summarized as seeds finish: what `fencesim run` does, in memory that grows with
//! the failing seeds, not with the seed count.

use std::sync::Arc;

use fencesim_check::SeedOutcome;
use fencesim_scenario::{Scenario, SeedRange};
use fencesim_sim::runner::Components;
use fencesim_verdict::{Summary, SummaryBuilder};

/// The result of [`sweep_summarized`].
pub struct Swept {
    /// The summary, byte-identical to `fencesim_verdict::summarize` over every outcome.
    pub summary: Summary,
    /// The outcomes of failing seeds (a violation, a panic or a runaway), in full, by seed.
    pub failing: Vec<SeedOutcome>,
}

/// Seed-ordered sweeping lives with the runner; re-exported here, where `run` and `check`
/// have always found it.
pub use fencesim_sim::runner::sweep_in_seed_order;

/// Runs `seeds` on `jobs` threads and summarizes them as they finish; `on_done` sees each
/// outcome as it finishes (any order). The result does not depend on `jobs`.
pub fn sweep_summarized(
    scenario: &Arc<Scenario>,
    seeds: SeedRange,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(&SeedOutcome) + Sync),
) -> Swept {
    let mut builder = SummaryBuilder::new();
    let mut failing = Vec::new();
    sweep_in_seed_order(
        scenario,
        seeds.iter(),
        jobs,
        components,
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
        let scenario = Arc::new(fencesim_testkit::catalogue("gc-pause-textbook-none"));
        let seeds = SeedRange { start: 3, end: 11 };
        let components = Components::default();
        let outcomes = fencesim_sim::sweep_all(&scenario, seeds.iter(), 1, &components);
        let whole = fencesim_verdict::summarize(&scenario, seeds, &outcomes);
        for jobs in [1, 3] {
            let swept = sweep_summarized(&scenario, seeds, jobs, &components, &|_| {});
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
        let scenario = Arc::new(fencesim_testkit::catalogue("gc-pause-textbook-none"));
        let components = Components::default();
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
