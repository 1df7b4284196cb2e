//! (being written)
use fencesim_model::history::History;
use serde::{Deserialize, Serialize};
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {}
pub(crate) fn compute(_history: &History) -> Metrics { todo!("being written") }
