//! fencesim as a library: what the `fencesim` command does, callable from a user's own code
//! with their own store (a [`StoreFactory`]), so that library users get exactly the CLI's
//! behaviour. The binary (`main.rs`) only parses arguments, prints and writes files.

#![warn(missing_docs)]

pub mod replay;
pub mod summarized;

pub use fencesim_sim::runner::{builtin_store, run_seed_with, sweep, RunResult, StoreFactory};
pub use replay::{check_determinism, replay, Determinism, Replay};
pub use summarized::{sweep_summarized, Swept};
