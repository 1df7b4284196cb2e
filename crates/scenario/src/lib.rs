//! Scenario files: the TOML boundary (`parse`), the validated [`Scenario`] (`spec`), the fault
//! kinds (`fault`), the fault plan derived from a scenario and a seed (`plan`), and the way
//! back from a scenario to a file (`render`).

#![warn(missing_docs)]

pub mod dist;
pub mod fault;
pub mod identity;
pub mod input;
pub mod limits;
pub mod outage;
pub mod parse;
pub mod plan;
pub mod render;
pub mod spec;

pub use fault::{Fault, FaultKind, RandomFault, TimedFault};
pub use identity::{replay_command, replay_command_with, shell_word};
pub use outage::{
    longest_outage_ms, nominal_fault_counts, with_outage, InjectedOutage, OutageForm,
};
pub use parse::{
    load, load_with, parse_str, parse_str_with, read_scenario_text, Override, ScenarioError,
};
pub use plan::{plan, FaultPlan, QueuedFault, SkippedFault, SwarmChoice};
pub use render::scenario_toml;
pub use spec::*;

/// The smallest valid scenario file: only the required fields, everything else defaulted
/// (see docs/scenario-format.md). A starting point for a new scenario, and the fixture tests
/// edit.
pub const MINIMAL_TOML: &str = include_str!("minimal.toml");
