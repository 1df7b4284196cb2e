//! Where a lease service's fencing tokens come from, as a plug-in: the [`TokenIssuer`] trait
//! and the built-in sources of [`TokenSource`] implemented through it ([`BuiltinTokens`]).
//!
//! The lease service asks its issuer for a token at every new grant and tells it about every
//! delete in its store (expiry, release, drop: etcd's revision moves) and about its restarts.
//! A user's issuer (a hybrid logical clock, a token from a database sequence, …) plugs in the
//! same way and is judged by I1 like the built-ins.
//!
//! ```
//! use fencesim_model::tokens::{TokenIssuer, TokenRequest};
//!
//! /// Tokens from a sequence that hands out blocks of 100 and loses its block on restart.
//! struct Blocks { next: u64, block_end: u64, high: u64 }
//!
//! impl TokenIssuer for Blocks {
//!     fn name(&self) -> String { "blocks-of-100".into() }
//!     fn issue(&mut self, _: &TokenRequest<'_>) -> u64 {
//!         if self.next == self.block_end {
//!             self.next = self.high;
//!             self.block_end = self.high + 100;
//!             self.high += 100;
//!         }
//!         self.next += 1;
//!         self.next
//!     }
//!     fn restart(&mut self) -> bool {
//!         self.block_end = self.next; // the rest of the block is lost, never reused
//!         false
//!     }
//! }
//!
//! let mut blocks = Blocks { next: 0, block_end: 0, high: 0 };
//! let request = TokenRequest { scope: "job", counter: "job", wall_ms: 0 };
//! assert_eq!(blocks.issue(&request), 1);
//! blocks.restart();
//! assert_eq!(blocks.issue(&request), 101);
//! ```

use std::collections::BTreeMap;

use fencesim_planted::{active, Mutant};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::{rng::Rng, Token};

/// Where fencing tokens come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum TokenSource {
    /// A counter that survives restart (etcd revision-like).
    DurableCounter,
    /// A counter lost on restart: the next grant reuses small tokens (a known hazard).
    VolatileCounter,
    /// The coordinator's wall clock in milliseconds: steps backwards with the clock.
    WallClock,
    /// A random 32-bit id: unique-ish, but with no order, so not a fencing token.
    RandomId,
    /// A durable counter `bits` wide that wraps to zero (token exhaustion).
    WrappingCounter {
        /// The counter's width.
        bits: u8,
    },
    /// A durable counter bumped by every write to the store: a grant's put *and* an
    /// expiry's, release's or drop's delete. The token is the grant's revision, so successive
    /// holders' tokens typically differ by 2: etcd's revision (with `token_scope = "global"`),
    /// or a ZooKeeper parent's cversion, which numbers sequential children (per resource).
    Revision,
}

/// What the service knows when it asks for a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenRequest<'a> {
    /// The lease scope being granted.
    pub scope: &'a str,
    /// The counter it draws from: the scope with `token_scope = "per-resource"`, `"*"` with
    /// `"global"`.
    pub counter: &'a str,
    /// The coordinator's wall clock (ms since the Unix epoch), which may step.
    pub wall_ms: i64,
}

/// A source of fencing tokens for the lease service. It is called by the coordinator only,
/// in simulated time, so it must be deterministic: no `std::time`, no unseeded randomness.
pub trait TokenIssuer: Send {
    /// The source's name, for messages.
    fn name(&self) -> String;
    /// The token for a new grant.
    fn issue(&mut self, request: &TokenRequest<'_>) -> Token;
    /// A delete happened in the service's store (an expiry, a release, a drop) on `counter`:
    /// revision-like sources move. Default: nothing.
    fn deleted(&mut self, counter: &str) {
        let _ = counter;
    }
    /// The coordinator process restarted. Returns true when the source lost state that
    /// previously issued tokens depended on (recorded as `counters-lost`). Default: nothing
    /// lost.
    fn restart(&mut self) -> bool {
        false
    }
}

/// The built-in token sources of scenario files (`lease.token_source`).
#[derive(Clone, Debug)]
pub struct BuiltinTokens {
    source: TokenSource,
    counters: BTreeMap<String, u64>,
    /// The coordinator's own stream (used only by `random-id` tokens).
    rng: Rng,
}

impl BuiltinTokens {
    /// `rng` is the coordinator's own stream, drawn from only by `random-id`.
    pub fn new(source: TokenSource, rng: Rng) -> Self {
        BuiltinTokens {
            source,
            counters: BTreeMap::new(),
            rng,
        }
    }
}

impl TokenIssuer for BuiltinTokens {
    fn name(&self) -> String {
        match self.source {
            TokenSource::DurableCounter => "durable-counter".into(),
            TokenSource::VolatileCounter => "volatile-counter".into(),
            TokenSource::WallClock => "wall-clock".into(),
            TokenSource::RandomId => "random-id".into(),
            TokenSource::WrappingCounter { bits } => format!("wrapping-counter({bits})"),
            TokenSource::Revision => "revision".into(),
        }
    }

    fn issue(&mut self, request: &TokenRequest<'_>) -> Token {
        match self.source {
            TokenSource::DurableCounter | TokenSource::VolatileCounter | TokenSource::Revision => {
                let counter = self
                    .counters
                    .entry(request.counter.to_string())
                    .or_insert(0);
                *counter += 1;
                *counter
            }
            TokenSource::WrappingCounter { bits } => {
                let counter = self
                    .counters
                    .entry(request.counter.to_string())
                    .or_insert(0);
                let modulus = 1u128 << bits;
                *counter = ((u128::from(*counter) + 1) % modulus) as u64;
                *counter
            }
            TokenSource::WallClock => request.wall_ms.max(0) as u64,
            TokenSource::RandomId => u64::from(self.rng.gen::<u32>()),
        }
    }

    fn deleted(&mut self, counter: &str) {
        if self.source == TokenSource::Revision {
            *self.counters.entry(counter.to_string()).or_insert(0) += 1;
        }
    }

    fn restart(&mut self) -> bool {
        if active(Mutant::LeaseDurableCounterLost) && self.source == TokenSource::DurableCounter {
            // The planted bug loses a durable counter as if it were volatile.
            let lost = !self.counters.is_empty();
            self.counters.clear();
            return lost;
        }
        if self.source == TokenSource::VolatileCounter {
            let lost = !self.counters.is_empty();
            self.counters.clear();
            return lost;
        }
        false
    }
}
