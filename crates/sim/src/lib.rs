//! The simulated world on madsim: the only crate that knows madsim.
//!
//! A run is `(Scenario, seed)`: the fault plan is derived first (as data), then a fresh
//! madsim runtime hosts one node per process (coordinator, storage, workers) plus a `net`
//! node that carries messages, while the nemesis on the main task applies the plan. Every
//! node decides by its own clock (`clock`), never by true time. Everything observable is
//! recorded into a god's-eye [`History`](fencesim_model::history::History), which the
//! checker judges after the run.

#![warn(missing_docs)]

#[cfg(not(madsim))]
compile_error!(
    "fencesim-sim must be compiled with `--cfg madsim` (set in .cargo/config.toml). \
     A RUSTFLAGS environment variable silently replaces that setting: unset it."
);

pub mod baseline;
pub mod batch;
mod components;
mod coordinator;
mod expiry;
mod faults;
mod nemesis;
mod net;
mod node;
mod overdue;
mod protocol;
pub mod runner;
mod storage;
mod wait;
mod worker;
mod world;

pub use batch::run_batch;
pub use fencesim_fencing as fencing;
pub use runner::{
    run_seed, sweep, sweep_all, sweep_in_seed_order, Components, PolicyFactory, RunResult,
    StoreFactory, TokenFactory,
};
