//! `none`: accepts every write — the unsafe baseline every other mode is measured against.

use std::collections::BTreeMap;

use fencesim_model::{
    fence::{Fence, Verdict, WriteRequest},
    lease::LeaseView,
    Scope, Token,
};

/// Accepts every write. Remembers the highest token seen per resource only so that the
/// verdict's `previous` can be logged next to the other modes'.
#[derive(Clone, Debug, Default)]
pub struct NoFence {
    highest_seen: BTreeMap<Scope, Token>,
}

impl NoFence {
    /// Creates it.
    pub fn new() -> Self {
        NoFence::default()
    }
}

impl Fence for NoFence {
    fn name(&self) -> String {
        "none".to_string()
    }

    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        let previous = self.highest_seen.get(&request.resource).copied();
        let highest = previous.map_or(request.token, |seen| seen.max(request.token));
        self.highest_seen.insert(request.resource.clone(), highest);
        Verdict::Accepted { previous }
    }

    /// Nothing to drop: the seen tokens are logging aids, not a check, so keeping them
    /// cannot change a verdict.
    fn restart(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{check, write, Op::Restart};

    #[test]
    fn accepts_stale_and_equal_tokens() {
        check(
            &mut NoFence::new(),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (write("job-1", 41), "accepted previous=42"),
                (write("job-1", 42), "accepted previous=42"),
                (write("job-2", 1), "accepted"),
            ],
        );
    }

    #[test]
    fn restart_keeps_logging_state() {
        check(
            &mut NoFence::new(),
            None,
            &[
                (write("job-1", 5), "accepted"),
                (Restart, "restarted"),
                (write("job-1", 3), "accepted previous=5"),
            ],
        );
    }
}
