//! `read-then-write`: a separate token read, a local compare in the writer, then an
//! unconditional write — the time-of-check/time-of-use race.

use std::collections::BTreeMap;

use fencesim_model::{
    fence::{ClientProtocol, Durability, Fence, Verdict, WriteRequest},
    lease::LeaseView,
    Scope, Token,
};

/// Stores whatever token a write presents; the only check is the writer's own, made on a
/// token it read in an earlier round trip, so a newer write can land in between.
#[derive(Clone, Debug)]
pub struct ReadThenWrite {
    durable: bool,
    stored: BTreeMap<Scope, Token>,
}

impl ReadThenWrite {
    /// Creates it.
    pub fn new(durability: Durability) -> Self {
        ReadThenWrite {
            durable: durability == Durability::Durable,
            stored: BTreeMap::new(),
        }
    }
}

impl Fence for ReadThenWrite {
    fn name(&self) -> String {
        "read-then-write".to_string()
    }

    fn protocol(&self) -> ClientProtocol {
        ClientProtocol::ReadThenWrite
    }

    /// Unconditional: even a lower token overwrites (the stored token may go down).
    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        let previous = self.stored.insert(request.resource.clone(), request.token);
        Verdict::Accepted { previous }
    }

    fn read_token(&mut self, resource: &str) -> Option<Token> {
        self.stored.get(resource).copied()
    }

    fn restart(&mut self) {
        if !self.durable {
            self.stored.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{
        check, write,
        Op::{Read, Restart},
    };

    #[test]
    fn protocol_is_read_then_write() {
        assert_eq!(
            ReadThenWrite::new(Durability::Durable).protocol(),
            ClientProtocol::ReadThenWrite
        );
    }

    #[test]
    fn toctou_race_stale_write_lands_after_its_read() {
        // The old holder reads 41 and compares locally (41 >= 41: go), the new holder
        // writes 42, then the old holder's unconditional write lands and lowers the token.
        check(
            &mut ReadThenWrite::new(Durability::Durable),
            None,
            &[
                (write("job-1", 41), "accepted"),
                (Read("job-1"), "token=41"),
                (write("job-1", 42), "accepted previous=41"),
                (write("job-1", 41), "accepted previous=42"),
                (Read("job-1"), "token=41"),
            ],
        );
    }

    #[test]
    fn read_of_unknown_resource_is_none() {
        check(
            &mut ReadThenWrite::new(Durability::Durable),
            None,
            &[(Read("job-1"), "token=none")],
        );
    }

    #[test]
    fn durable_restart_keeps_stored_token() {
        check(
            &mut ReadThenWrite::new(Durability::Durable),
            None,
            &[
                (write("job-1", 7), "accepted"),
                (Restart, "restarted"),
                (Read("job-1"), "token=7"),
            ],
        );
    }

    #[test]
    fn volatile_restart_forgets_stored_token() {
        check(
            &mut ReadThenWrite::new(Durability::Volatile),
            None,
            &[
                (write("job-1", 7), "accepted"),
                (Restart, "restarted"),
                (Read("job-1"), "token=none"),
                (write("job-1", 3), "accepted"),
            ],
        );
    }
}
