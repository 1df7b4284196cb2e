//! fencesim's reports: the summary JSON of a scenario over its seeds, the check report of a
//! catalogue run (and the merge of sharded ones), JUnit XML, the safety matrix, per-node
//! timelines of a run, and JSON-lines traces, all byte-deterministic (no wall-clock time
//! inside, except the JUnit times the caller passes in).
//!
//! Architecture invariant: this crate only reads what the checker and the scenario say; the
//! only I/O is writing files, always atomically (`fs`), so nothing is ever half-written.

#![warn(missing_docs)]

pub mod check_report;
pub mod fs;
pub mod junit;
pub mod matrix;
pub mod perfetto;
#[cfg(feature = "pictures")]
pub mod picture;
#[cfg(feature = "pictures")]
pub mod plot;
pub mod replay_text;
pub mod summary;
#[cfg(test)]
mod testing;
pub mod timeline;
pub mod trace;
pub mod tune;
#[cfg(feature = "pictures")]
pub mod tune_plot;

pub use check_report::{
    check_report, contradicts, definitely_failed, merge, report_from_json, report_to_json,
    scenario_result, CheckReport, ScenarioResult, ScenarioResultBuilder, Shard,
};
pub use fencesim_scenario::identity::{replay_command, replay_command_with, shell_word};
pub use fs::{write_atomic, write_atomic_bytes};
pub use junit::junit_xml;
pub use matrix::{matrix_json, matrix_markdown};
pub use perfetto::perfetto_json;
#[cfg(feature = "pictures")]
pub use picture::{picture_png, picture_svg, picture_window_ns, PictureError, PictureOptions};
pub use replay_text::{
    compact_metrics, compact_metrics_except, replay_text, ReplayInput, ReplayTextOptions,
};
pub use summary::{
    aggregate_metrics, evaluate, expectation_text, render_summary, summarize, to_json,
    ExpectationVerdict, SeedsJson, Summary, SummaryBuilder, SummaryState,
};
pub use timeline::{
    event_text, render, render_violation, render_with, TimelineOptions, MAX_LINE_CHARS,
};
pub use trace::write_jsonl;
