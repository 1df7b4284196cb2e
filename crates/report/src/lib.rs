//! fencesim's reports: the summary JSON of a scenario over its seeds, per-node timelines of a
//! run, and JSON-lines traces, all byte-deterministic (no wall-clock time inside).
//!
//! Architecture invariant: this crate only reads what the checker and the scenario say; the
//! only I/O is writing files, always atomically (`fs`), so nothing is ever half-written.

pub mod fs;
pub mod summary;
pub mod timeline;
pub mod trace;

pub use fs::write_atomic;
pub use summary::{
    aggregate_metrics, evaluate, expectation_text, render_summary, summarize, to_json, SeedsJson,
    Summary,
};
pub use timeline::{event_text, render, render_violation, MAX_LINE_CHARS};
pub use trace::write_jsonl;
