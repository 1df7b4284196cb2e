//! Finding and reducing failures: `shrink` turns one failing seed's fault plan into an explicit
//! schedule and reduces it until it is 1-minimal; `explore` searches a scenario's fault profile
//! with proptest, then shrinks what it finds; `guided` searches it guided by state-space
//! coverage, with `lineage`'s proposals (faults that could have made an accepted write stale);
//! `exhaustive` runs every schedule of at most two faults from a finite alphabet at discretized
//! start times, and states what it covered.
//!
//! Both run candidates through `fencesim_sim::runner` with the failing seed, because every
//! random stream other than the fault plan (network, workers, clocks) depends only on the
//! seed: a shrunk schedule replayed with another seed would be a different experiment.
//!
//! Architecture Invariant: this crate does no I/O. It returns scenarios and steps as data;
//! the CLI prints and writes them.

#![warn(missing_docs)]

pub mod exhaustive;
pub mod explore;
pub mod guided;
pub mod lineage;
pub mod profile;
pub mod shrink;

pub use exhaustive::{
    exhaustive, Exhausted, ExhaustiveError, ExhaustiveOptions, NotAVerdict, Progress, Violating,
};
pub use explore::{
    explore, seeds_to_first_violation, seeds_to_first_violation_of, ExploreOptions, Explored,
    SeedSweep,
};
pub use guided::{guided, Guided, GuidedOptions};
pub use shrink::{
    shrink, Change, Minimality, MinimalityCheck, ShrinkError, ShrinkOptions, Shrunk, Step,
};
