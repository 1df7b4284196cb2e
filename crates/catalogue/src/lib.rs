//! Outputs of a catalogue run for CI systems: JUnit XML (one test case per scenario, with
//! the reproduce line of each failure) and the safety matrix (fencing mode × fault, as JSON
//! and Markdown). Both render a [`fencesim_verdict::CheckReport`]; neither decides anything.
//!
//! Architecture invariant: pure renderings, byte-deterministic (the only wall-clock figures
//! are the JUnit times the caller passes in).

#![warn(missing_docs)]

pub mod junit;
pub mod matrix;

pub use junit::junit_xml;
pub use matrix::{matrix_json, matrix_markdown};
