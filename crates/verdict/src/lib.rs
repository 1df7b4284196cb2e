//! Verdicts: what a sweep of seeds means for a scenario and for the catalogue. The summary of
//! one scenario over its seeds (built streaming, in seed order, with exact numeric
//! aggregates), its expectation and vacuity checks (`expect`, `require`), and the check
//! report of a catalogue run with the exact merge of sharded ones, and the recorded seeds
//! (regressions) whose re-runs are part of a scenario's verdict. The pass/fail logic the
//! commands' exit codes come from lives here, apart from the views and the CI outputs.
//!
//! Architecture invariant: pure functions of the checker's outcomes and the scenario; no
//! I/O (callers write the JSON this crate renders), byte-deterministic output.

#![warn(missing_docs)]

pub mod check_report;
mod contradiction;
pub mod recorded;
pub mod summary;

pub use check_report::{
    check_report, merge, report_from_json, report_to_json, same_schema, scenario_result,
    CheckReport, ReportHeader, ScenarioResult, ScenarioResultBuilder, ScenarioVerdict, Shard,
};
pub use contradiction::contradicts;
pub use recorded::{Entry, RecordedRun, Rerun};
pub use summary::{
    aggregate_metrics, evaluate, expectation_text, render_summary, summarize, to_json,
    ExpectationVerdict, SeedsJson, Summary, SummaryBuilder, SummaryState,
};
