//! Whether one seed's outcome contradicts a scenario's expectation on its own: the decision
//! both a sweep's verdict (`check_report`) and a recorded seed's re-run (`recorded`) take, a
//! leaf both use.

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::{Expect, Outcome};

/// Whether `outcome` contradicts `expect` whatever the other seeds did: a panic, a runaway,
/// a violated invariant the expectation does not list (for `safe`, any), or a `never`
/// condition it hit.
pub fn contradicts(expect: &Expect, outcome: &SeedOutcome) -> bool {
    let allowed: &[Invariant] = match &expect.outcome {
        Outcome::Safe => &[],
        Outcome::Violates(list) => list,
    };
    outcome.panic.is_some()
        || outcome.runaway
        || outcome
            .checked
            .violated()
            .iter()
            .any(|invariant| !allowed.contains(invariant))
        || fencesim_check::coverage::hits(&outcome.checked.metrics)
            .into_iter()
            .any(|condition| expect.never.contains(&condition))
}
