//! Live mode: a scenario whose lease service is the `etcd` preset, run against a
//! real etcd 3.4, one real OS process per worker and a real SQLite file, with the schedule
//! injected for real (SIGSTOP/SIGCONT, SIGKILL and restart, an etcd restart, nftables cuts in
//! a private network namespace: [`netns`]). Every process
//! logs the simulator's events stamped with real time; the merged [`History`] is judged by
//! the same checker (`fencesim_check::check`).
//!
//! `plan` checks a scenario against what live mode can honour and translates a seed's fault
//! plan into live actions; `supervisor` runs one live run (a temp directory, the service, the
//! workers, the schedule, the merged history), `inject` starts workers and injects each fault,
//! `service` starts and follows etcd or ZooKeeper (their processes: `process`).
//!
//! The worker role is [`worker::run`]; the CLI's hidden `live-worker` subcommand calls it, so
//! each worker is the `fencesim` binary itself. The CLI also runs the simulator for
//! `--compare`; [`fidelity`] turns both sides into `reports/fidelity.md`.

#![warn(missing_docs)]

pub mod etcd;
pub mod fidelity;
pub mod guard;
pub mod http;
mod inject;
pub mod netns;
mod plan;
mod process;
pub mod record;
mod service;
mod supervisor;
pub mod worker;
pub mod zk;

pub use plan::{
    check_phase_ms, check_seeds, first_network_cut, live_plan, run_length_ms, Kind, LivePlan,
};
pub use service::service_version;
pub use supervisor::{run_live, stop_on_signals};

use fencesim_model::history::History;

/// Most runs one `fencesim live` may ask for (each lasts the scenario's full length in real
/// time).
pub const MAX_RUNS: u32 = 1_000;

/// Why a scenario cannot run live, or a run failed.
#[derive(Debug)]
pub enum LiveError {
    /// The scenario asks for something live mode cannot do (the message says what).
    Unsupported(String),
    /// etcd, a process or a file failed.
    Setup(String),
    /// SIGINT/SIGTERM arrived; everything started was stopped and removed.
    Interrupted,
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::Unsupported(text) | LiveError::Setup(text) => f.write_str(text),
            LiveError::Interrupted => {
                f.write_str("interrupted; every process and directory this run started was removed")
            }
        }
    }
}

/// One finished live run.
#[derive(Debug)]
pub struct LiveRun {
    /// The merged history.
    pub history: History,
    /// The lease service's version line.
    pub service_version: String,
    /// How long after etcd was ready the run began (ms; [`check_phase_ms`]).
    pub phase_ms: f64,
}
