//! fencesim as a library: deterministic simulation and chaos testing of a lease +
//! fencing-token protocol from a user's own `cargo test`, with their own protected store
//! ([`Fence`]), worker lease policy ([`WorkerPolicy`]) and token source ([`TokenIssuer`]) —
//! and the checker for histories recorded from real systems ([`load_history`],
//! [`judge_history`]). The `fencesim` binary calls exactly these functions, so a user's
//! components get the CLI's behaviour: the same runs, replays, pictures and traces.
//!
//! This is the one crate a user depends on; it re-exports what a test needs. Tests that use it
//! must be compiled with `--cfg madsim` (a `.cargo/config.toml` with
//! `[build] rustflags = ["--cfg", "madsim"]`; see `examples/` in the repository).
//!
//! ```
//! use std::sync::Arc;
//! use fencesim::{Fence, FenceVerdict, LeaseView, Simulation, WriteRequest};
//!
//! /// A store that forgets to compare tokens: every write is accepted.
//! struct Trusting;
//!
//! impl Fence for Trusting {
//!     fn name(&self) -> String { "trusting".into() }
//!     fn write(&mut self, _: &WriteRequest, _: Option<&dyn LeaseView>) -> FenceVerdict {
//!         FenceVerdict::Accepted { previous: None }
//!     }
//!     fn restart(&mut self) {}
//! }
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/gc-pause-textbook-max-token.toml");
//! let sim = Simulation::load(path).unwrap()
//!     .store(|_| Box::new(Trusting))
//!     .seeds(0..2);
//! // The scenario expects `safe`: the trusting store fails it, naming the seed and proof.
//! let failure = sim.check().unwrap_err();
//! assert_eq!(failure.seed, Some(0));
//! let message = failure.to_string();
//! assert!(message.contains("I3 violated"), "{message}");
//! assert!(message.contains("reproduce: FENCESIM_SEED=0 cargo test"), "{message}");
//! // The same seed replays with the user's store: text, pictures, trace.
//! let replay = sim.replay(0);
//! assert!(replay.failed());
//! assert_eq!(replay.run.outcome.trace_hash, failure.trace_hash.unwrap());
//! ```

#![warn(missing_docs)]

pub mod fs;
pub mod history_file;
pub mod outputs;
pub mod regressions;
pub mod replay;
pub mod simulation;
pub mod summarized;
pub mod trace;

pub use fencesim_check as check;
/// Shrinking a failing seed and exploring a fault profile (`fencesim shrink` / `explore`);
/// [`explore::ShrinkOptions::components`] takes a user's components.
#[cfg(feature = "explore")]
pub use fencesim_explore as explore;
pub use fencesim_model as model;
pub use fencesim_scenario as scenario;
/// Lease timing sweeps (`fencesim tune`); [`tune::run`] takes a user's components.
#[cfg(feature = "tune")]
pub use fencesim_tune as tune;
pub use fencesim_verdict as verdict;
pub use fencesim_views as views;

pub use fencesim_check::{Checked, SeedOutcome, Violation};
pub use fencesim_model::{
    fence::{ClientProtocol, Fence, Verdict as FenceVerdict, WriteRequest},
    history::{BeliefEnd, Event, EventKind, History},
    lease::LeaseView,
    policy::{Gate, LeaseState, RenewFailure, RenewFailureCause, SpecPolicy, WorkerPolicy},
    tokens::{BuiltinTokens, TokenIssuer, TokenRequest},
    Invariant, Token,
};
pub use fencesim_scenario::{Scenario, SeedRange};
/// The one way to run seeds: [`run_seed`] for one, [`sweep`] (any order),
/// [`sweep_in_seed_order`] or [`sweep_all`] for many, each with the full [`Components`];
/// [`run_batch`] runs any list of jobs (each calling [`run_seed`]) with results in order.
pub use fencesim_sim::run_batch;
pub use fencesim_sim::runner::{
    builtin_policy, builtin_store, builtin_tokens, run_seed, sweep, sweep_all, sweep_in_seed_order,
    Components, PolicyFactory, RunResult, StoreFactory, TokenFactory,
};
pub use history_file::{
    history_report_json, judge_history, load_history, parse_history, unsupported_metrics,
    HistoryError, Judged, UnsupportedMetric,
};
pub use replay::{replay, Determinism, Replay};
pub use simulation::{
    check_jobs, default_jobs, EnvSeeds, Failure, Simulation, SimulationError, Sweep, MAX_JOBS,
};
pub use summarized::{sweep_summarized, Swept};
