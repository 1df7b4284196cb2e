//! Scenario files: the TOML boundary (`parse`), the validated [`Scenario`] (`spec`), the fault
//! kinds (`fault`), the fault plan derived from a scenario and a seed (`plan`), and the way
//! back from a scenario to a file (`render`).

#![warn(missing_docs)]

pub mod fault;
pub mod parse;
pub mod plan;
pub mod render;
pub mod spec;

pub use fault::{Fault, FaultKind, RandomFault, TimedFault};
pub use parse::{load, parse_str, ScenarioError};
pub use plan::{plan, FaultPlan, SwarmChoice};
pub use render::scenario_toml;
pub use spec::*;
