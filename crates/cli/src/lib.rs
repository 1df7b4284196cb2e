//! fencesim as a library: what the `fencesim` command does, callable from a user's own code
//! with their own store (a [`StoreFactory`]), so that library users get exactly the CLI's
//! behaviour. The binary (`main.rs`) only parses arguments, prints and writes files.

#![warn(missing_docs)]

pub mod history_file;
pub mod replay;

pub use fencesim_model::Invariant;
pub use fencesim_sim::runner::{builtin_store, run_seed_with, sweep, RunResult, StoreFactory};
pub use history_file::{
    history_report_json, judge_history, load_history, parse_history, HistoryError, Judged,
};
pub use replay::{check_determinism, replay, Determinism, Replay};
