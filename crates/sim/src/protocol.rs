//! The messages nodes exchange (requests carry a request id; replies echo it).

use fencesim_model::{
    fence::{Verdict, WriteRequest},
    lease::RecordView,
    Scope, Token,
};

#[derive(Clone, Debug)]
pub(crate) enum Msg {
    /// `session` is the caller's incarnation; `expected` the record version a client-go
    /// candidate read (its update is a compare-and-swap on it).
    Acquire {
        req: u64,
        scope: Scope,
        session: u64,
        expected: Option<u64>,
    },
    /// Read the record (client-go's Get of the Lease object).
    Get {
        req: u64,
        scope: Scope,
    },
    GetReply {
        req: u64,
        record: RecordView,
    },
    /// `token` is `None` when denied.
    AcquireReply {
        req: u64,
        token: Option<Token>,
    },
    Renew {
        req: u64,
        scope: Scope,
        token: Token,
    },
    RenewReply {
        req: u64,
        ok: bool,
        reason: String,
    },
    Release {
        req: u64,
        scope: Scope,
        token: Token,
    },
    ReleaseReply {
        req: u64,
    },
    /// Check-lease-before-write: "do I still hold `scope` under `token`?"
    Check {
        req: u64,
        scope: Scope,
        token: Token,
    },
    CheckReply {
        req: u64,
        holds: bool,
    },
    Write {
        req: u64,
        request: WriteRequest,
        outbox: bool,
    },
    WriteReply {
        req: u64,
        verdict: Verdict,
    },
    ReadToken {
        req: u64,
        op: u64,
        resource: Scope,
    },
    ReadTokenReply {
        req: u64,
        stored: Option<Token>,
    },
    Fence {
        req: u64,
        resource: Scope,
        token: Token,
    },
    FenceReply {
        req: u64,
        verdict: Verdict,
    },
}

impl Msg {
    /// The request id a reply answers, if this is a reply.
    pub(crate) fn reply_to(&self) -> Option<u64> {
        match self {
            Msg::AcquireReply { req, .. }
            | Msg::GetReply { req, .. }
            | Msg::RenewReply { req, .. }
            | Msg::ReleaseReply { req }
            | Msg::CheckReply { req, .. }
            | Msg::WriteReply { req, .. }
            | Msg::ReadTokenReply { req, .. }
            | Msg::FenceReply { req, .. } => Some(*req),
            _ => None,
        }
    }
}

/// A message in flight. Node names are shared (`World::name`), not copied per message.
#[derive(Clone, Debug)]
pub(crate) struct Envelope {
    pub from: std::sync::Arc<str>,
    pub to: std::sync::Arc<str>,
    pub msg: Msg,
}
