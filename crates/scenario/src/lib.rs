//! Scenario files: the TOML boundary (`parse`), the validated [`Scenario`] (`spec`), and the
//! fault plan derived from a scenario and a seed (`plan`).

pub mod parse;
pub mod plan;
pub mod spec;

pub use parse::{load, parse_str, ScenarioError};
pub use plan::{plan, FaultPlan, SwarmChoice};
pub use spec::*;
