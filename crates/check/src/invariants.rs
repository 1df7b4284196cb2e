//! (being written)
use fencesim_model::history::History;
pub(crate) fn check_all(_history: &History) -> Vec<crate::Violation> { todo!("being written") }
