//! The protected resource's side of fencing: one trait, many implementations.
//!
//! A [`Fence`] decides whether a write presented at the storage is accepted. The built-in
//! modes (`none`, `max-token`, `sql`, ...) live in the `fencesim-fencing` crate and implement
//! this trait exactly as a user's own store would.

use serde::{Deserialize, Serialize};

use crate::{lease::LeaseView, NodeName, OpId, Scope, Token};

/// Whether a store's (or a fencing proxy's) highest-token state survives its restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// Kept across a restart (on disk).
    Durable,
    /// Lost on restart (in memory only).
    Volatile,
}

/// Which writes a store compares a token against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompareScope {
    /// Each resource keeps its own highest token (matches per-resource leases).
    PerResource,
    /// One highest token across all resources.
    Global,
}

/// A write as it arrives at the storage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteRequest {
    /// The write's op id (unique within a run).
    pub op: OpId,
    /// The storage key written.
    pub resource: Scope,
    /// The lease scope whose token the writer presents.
    pub lease_scope: Scope,
    /// The worker that sent the write.
    pub writer: NodeName,
    /// The token the writer presents.
    pub token: Token,
    /// Opaque payload; never logged (only its op id is).
    pub payload: String,
}

/// The storage's answer to a write or a fence. (Written to history files as
/// `history::wire`'s own `Verdict`, not with a serde derive here.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Committed. `previous` is the highest token the store had accepted for the resource
    /// before this one (as far as the store knows).
    /// Committed.
    Accepted {
        /// The highest token accepted before, if any.
        previous: Option<Token>,
    },
    /// Refused. `accepted` is the token the store compared against.
    Rejected {
        /// The token the store compared against, if any.
        accepted: Option<Token>,
        /// Why, in words (logged; never the payload).
        reason: String,
    },
}

impl Verdict {
    /// Whether the write (or fence) was accepted.
    pub fn is_accepted(&self) -> bool {
        matches!(self, Verdict::Accepted { .. })
    }
}

/// The round trips a writer makes for one protected write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientProtocol {
    /// One conditional (or unconditional) write.
    Direct,
    /// Read the stored token, compare locally, then write unconditionally (the TOCTOU race).
    ReadThenWrite,
    /// After each new grant, first raise the resource's epoch to the new token, then write
    /// (HDFS QJM `newEpoch`, BookKeeper fencing).
    FenceThenWrite,
}

/// A protected resource deciding accept/reject.
///
/// Implementations hold their state in memory that the simulator keeps across a storage
/// restart (it plays the disk); [`Fence::restart`] drops whatever the implementation declares
/// volatile.
pub trait Fence: Send {
    /// Short mode name as written in scenario files, e.g. `"max-token"`.
    fn name(&self) -> String;

    /// How writers must talk to this store.
    fn protocol(&self) -> ClientProtocol {
        ClientProtocol::Direct
    }

    /// True when the store checks writes against the lease service's own state, so the
    /// simulator must host it next to the lease service (`same-store-txn`).
    fn checks_lease_state(&self) -> bool {
        false
    }

    /// Decides a write. `lease` is the lease service's state when
    /// [`Fence::checks_lease_state`] is true, otherwise `None`.
    fn write(&mut self, request: &WriteRequest, lease: Option<&dyn LeaseView>) -> Verdict;

    /// The token currently stored for `resource` (for [`ClientProtocol::ReadThenWrite`]).
    fn read_token(&mut self, resource: &str) -> Option<Token> {
        let _ = resource;
        None
    }

    /// Raises `resource`'s epoch to `token` (for [`ClientProtocol::FenceThenWrite`]).
    fn raise_fence(&mut self, resource: &str, token: Token) -> Verdict {
        let _ = (resource, token);
        Verdict::Accepted { previous: None }
    }

    /// The storage process restarted: drop volatile state.
    fn restart(&mut self);
}
