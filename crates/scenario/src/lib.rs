//! Scenario files: the TOML boundary (`parse`), the validated [`Scenario`] (`spec`), and the
//! fault plan derived from a scenario and a seed (`plan`).

pub mod spec;
pub use spec::*;
