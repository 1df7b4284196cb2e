//! Outputs of a catalogue run for CI systems: JUnit XML (one test case per scenario, with
//! the reproduce line of each failure), the safety matrix (fencing mode × fault, as JSON
//! and Markdown) and the state-space coverage report (abstract states and transitions per
//! scenario and over the catalogue, the rare states with their replay commands, as JSON and
//! Markdown). Each renders a [`fencesim_verdict::CheckReport`]; none decides anything.
//!
//! Architecture invariant: pure renderings, byte-deterministic (the only wall-clock figures
//! are the JUnit times the caller passes in).

#![warn(missing_docs)]

pub mod coverage;
pub mod junit;
pub mod matrix;

pub use coverage::{coverage_json, coverage_markdown};
pub use junit::{junit_xml, junit_xml_skipping, Skipped};
pub use matrix::{matrix_json, matrix_markdown};
