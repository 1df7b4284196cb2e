//! The checker: reads a recorded [`History`] and says what broke (invariants I1–I5, each
//! violation with the events that prove it) and what happened (the metrics of docs/spec.md).
//!
//! Both read the history through one [`index::Index`] of its lease epochs and tenures (grants
//! per scope, leases as the service held them, accepted fences), which is public so the views
//! draw the same epochs the checker judged.
//!
//! Architecture invariant: this crate knows nothing about madsim, scenarios or fencing
//! implementations. It judges only what the history shows, from a god's-eye view, so it can
//! be tested on hand-written histories.

#![warn(missing_docs)]

use fencesim_model::{history::History, Invariant};
use serde::{Deserialize, Serialize};

pub mod abstract_state;
pub mod coverage;
pub mod index;
mod invariants;
mod metrics;
pub mod outage;
#[cfg(test)]
mod tests;

pub use invariants::Violation;
pub use metrics::{FaultsBegun, Metrics};
pub use outage::{outages, Outage, OutageCause};

/// Everything the checker concludes from one history.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// Every violation, ordered by time.
    pub violations: Vec<Violation>,
    /// What happened, counted.
    pub metrics: Metrics,
    /// The abstract states and transitions the run visited ([`abstract_state`]), which the
    /// summary aggregates over seeds. In memory only: a seed's own list is not part of any
    /// report (the summary's state carries the aggregate).
    #[serde(skip)]
    pub visited: abstract_state::Visited,
}

impl Checked {
    /// The distinct invariants violated, in order.
    pub fn violated(&self) -> Vec<Invariant> {
        let mut out: Vec<Invariant> = self.violations.iter().map(|v| v.invariant).collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Checks every invariant and computes the metrics.
pub fn check(history: &History) -> Checked {
    // One index for every judgement: building it is a pass over the whole history.
    let index = index::Index::new(history);
    // The outages, for the metrics' causes and the abstract states' `cut-off`, found once.
    let causes = outage::Causes::new(&history.events);
    Checked {
        violations: invariants::check_all(&index),
        metrics: metrics::compute(&index, &causes),
        visited: abstract_state::visited_in(history, &causes),
    }
}

/// The verdict on one seed: what the runner hands to reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedOutcome {
    /// The seed run.
    pub seed: u64,
    /// Trace hash of the history (see `History::trace_hash`).
    pub trace_hash: String,
    /// Number of events recorded.
    pub events: usize,
    /// Violations and metrics.
    pub checked: Checked,
    /// Set when a simulated node panicked: the seed failed whatever the invariants say.
    pub panic: Option<String>,
    /// Set when the seed exceeded its event budget (`Scenario::event_budget`) and was stopped:
    /// the seed failed, and its history is cut short. Absent from reports when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub runaway: bool,
}
