//! Version 1 of the history file format: one [`Record`] per JSON line, exactly the shape
//! every history recorded before the format had a version used (reports/README.md).
//!
//! These types are the format, spelt out: their field names, tags and `Option`s are what
//! other systems write, so they never change. A rename here is a new version (a `v2`
//! module next to this one, with this one still read). The conversions to and from the
//! internal [`Event`] are generated both ways from one list of every variant and its fields
//! (`both_ways!`), each a match with no wildcard, so a new internal variant does not compile
//! until the format says how it is written.

use serde::{Deserialize, Serialize};

use crate::{
    fence,
    history::{self, is_unknown_ms, unknown_ms, Event},
    lease,
};

/// One line of a version-1 history file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// True time in nanoseconds since the run (or the recording) began.
    pub t_ns: u64,
    /// The node where it happened.
    pub node: String,
    /// What happened: `event` (the kind's kebab-case name) and the kind's fields.
    #[serde(flatten)]
    pub kind: Kind,
}

/// The process-stopping faults, as written (`kind` of `paused` and `resumed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PauseKind {
    /// `"gc"`.
    Gc,
    /// `"vm-suspend"`.
    VmSuspend,
}

/// Why a belief ended, as written (`why` of `belief-ended`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BeliefEnd {
    /// `"released"`.
    Released,
    /// `"renew-failed"`.
    RenewFailed,
    /// `"deadline-passed"`.
    DeadlinePassed,
    /// `"check-failed"`.
    CheckFailed,
    /// `"write-rejected"`.
    WriteRejected,
    /// `"crashed"`.
    Crashed,
}

/// How a side effect was produced, as written (`via` of `side-effect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EffectVia {
    /// `"direct"`.
    Direct,
    /// `"outbox"`.
    Outbox,
}

/// Why an acquire was denied, as written (`denial` of `denied`: an object tagged `kind`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Denial {
    /// `{"kind":"held","holder","token"}`.
    Held {
        /// The current holder.
        holder: String,
        /// Its token.
        token: u64,
    },
    /// `{"kind":"lock-delay","until_ns"}`.
    LockDelay {
        /// When the lock-delay ends (service mono, ns).
        until_ns: u64,
    },
    /// `{"kind":"conflict","version"}`.
    Conflict {
        /// The record's current version.
        version: u64,
    },
}

/// The storage's answer to a fence, as written (`verdict` of `fence`: an object tagged
/// `verdict`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "verdict")]
pub enum Verdict {
    /// `{"verdict":"accepted","previous"}`.
    Accepted {
        /// The highest token accepted before, or `null`.
        previous: Option<u64>,
    },
    /// `{"verdict":"rejected","accepted","reason"}`.
    Rejected {
        /// The token the store compared against, or `null`.
        accepted: Option<u64>,
        /// Why, in words.
        reason: String,
    },
}

/// The event kinds and their fields, as written: `event` is the kebab-case name. Every
/// field is required (an absent optional token is `null`) except `expires_mono_ms`, which is
/// left out when unknown and read as NaN.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "event")]
#[allow(missing_docs)] // Each field is documented once, in reports/README.md and `EventKind`.
pub enum Kind {
    RunStarted {
        seed: u64,
        liveness_bound_ms: u64,
    },
    FaultsHealed,
    RunEnded,
    Granted {
        scope: String,
        holder: String,
        token: u64,
        #[serde(default = "unknown_ms", skip_serializing_if = "is_unknown_ms")]
        expires_mono_ms: f64,
    },
    Renewed {
        scope: String,
        holder: String,
        token: u64,
    },
    Refused {
        scope: String,
        holder: String,
        token: Option<u64>,
        reason: String,
    },
    Denied {
        scope: String,
        holder: String,
        denial: Denial,
    },
    Expired {
        scope: String,
        holder: String,
        token: u64,
    },
    Released {
        scope: String,
        holder: String,
        token: u64,
    },
    TakenOver {
        scope: String,
        holder: String,
        token: u64,
        by: String,
    },
    Dropped {
        scope: String,
        holder: String,
        token: u64,
    },
    Extended {
        scope: String,
        holder: String,
        token: u64,
        #[serde(default = "unknown_ms", skip_serializing_if = "is_unknown_ms")]
        expires_mono_ms: f64,
    },
    CountersLost,
    WritePresented {
        op: u64,
        resource: String,
        lease_scope: String,
        writer: String,
        token: u64,
    },
    WriteAccepted {
        op: u64,
        resource: String,
        lease_scope: String,
        writer: String,
        token: u64,
        previous: Option<u64>,
    },
    WriteRejected {
        op: u64,
        resource: String,
        lease_scope: String,
        writer: String,
        token: u64,
        accepted: Option<u64>,
        reason: String,
    },
    TokenRead {
        op: u64,
        resource: String,
        writer: String,
        stored: Option<u64>,
    },
    Fence {
        resource: String,
        writer: String,
        token: u64,
        verdict: Verdict,
    },
    StorageStateLost,
    BeliefStarted {
        scope: String,
        token: u64,
        local_deadline_mono_ms: f64,
    },
    BeliefEnded {
        scope: String,
        token: u64,
        why: BeliefEnd,
        local_mono_ms: f64,
    },
    WriteSent {
        op: u64,
        resource: String,
        token: u64,
    },
    WriteAbandoned {
        op: u64,
        resource: String,
        token: u64,
        stored: Option<u64>,
    },
    RenewFailed {
        scope: String,
        token: u64,
        reason: String,
    },
    SideEffect {
        op: u64,
        resource: String,
        lease_scope: String,
        worker: String,
        token: u64,
        via: EffectVia,
    },
    Paused {
        kind: PauseKind,
        planned_ms: f64,
    },
    Resumed {
        kind: PauseKind,
    },
    ClockStepped {
        delta_ms: f64,
        wall_ms: f64,
        mono_ms: f64,
    },
    Crashed,
    Restarted,
    PartitionStarted {
        from: Vec<String>,
        to: Vec<String>,
        one_way: bool,
    },
    PartitionHealed {
        from: Vec<String>,
        to: Vec<String>,
        one_way: bool,
    },
    HoldStarted {
        from: String,
        to: String,
    },
    HoldReleased {
        from: String,
        to: String,
        released: u64,
    },
    Panicked {
        message: String,
    },
}

/// `From` both ways between a wire enum and its internal twin, whose variants have the same
/// names and fields: each field is converted with `.into()` (the identity for a plain value,
/// the twin's conversion for a nested enum). Both matches list every variant, so a variant
/// added to either enum does not compile until it is listed here.
macro_rules! both_ways {
    ($wire:ty, $internal:ty { $($variant:ident $({ $($field:ident),* $(,)? })?),* $(,)? }) => {
        impl From<$internal> for $wire {
            fn from(value: $internal) -> Self {
                type Internal = $internal;
                match value {
                    $(Internal::$variant $({ $($field),* })? =>
                        Self::$variant $({ $($field: $field.into()),* })?,)*
                }
            }
        }
        impl From<$wire> for $internal {
            fn from(value: $wire) -> Self {
                type Wire = $wire;
                match value {
                    $(Wire::$variant $({ $($field),* })? =>
                        Self::$variant $({ $($field: $field.into()),* })?,)*
                }
            }
        }
    };
}

both_ways!(PauseKind, history::PauseKind { Gc, VmSuspend });
both_ways!(
    BeliefEnd,
    history::BeliefEnd {
        Released,
        RenewFailed,
        DeadlinePassed,
        CheckFailed,
        WriteRejected,
        Crashed,
    }
);
both_ways!(EffectVia, history::EffectVia { Direct, Outbox });
both_ways!(Denial, lease::Denial {
    Held { holder, token },
    LockDelay { until_ns },
    Conflict { version },
});
both_ways!(Verdict, fence::Verdict {
    Accepted { previous },
    Rejected { accepted, reason },
});
both_ways!(Kind, history::EventKind {
    RunStarted { seed, liveness_bound_ms },
    FaultsHealed,
    RunEnded,
    Granted { scope, holder, token, expires_mono_ms },
    Renewed { scope, holder, token },
    Refused { scope, holder, token, reason },
    Denied { scope, holder, denial },
    Expired { scope, holder, token },
    Released { scope, holder, token },
    TakenOver { scope, holder, token, by },
    Dropped { scope, holder, token },
    Extended { scope, holder, token, expires_mono_ms },
    CountersLost,
    WritePresented { op, resource, lease_scope, writer, token },
    WriteAccepted { op, resource, lease_scope, writer, token, previous },
    WriteRejected { op, resource, lease_scope, writer, token, accepted, reason },
    TokenRead { op, resource, writer, stored },
    Fence { resource, writer, token, verdict },
    StorageStateLost,
    BeliefStarted { scope, token, local_deadline_mono_ms },
    BeliefEnded { scope, token, why, local_mono_ms },
    WriteSent { op, resource, token },
    WriteAbandoned { op, resource, token, stored },
    RenewFailed { scope, token, reason },
    SideEffect { op, resource, lease_scope, worker, token, via },
    Paused { kind, planned_ms },
    Resumed { kind },
    ClockStepped { delta_ms, wall_ms, mono_ms },
    Crashed,
    Restarted,
    PartitionStarted { from, to, one_way },
    PartitionHealed { from, to, one_way },
    HoldStarted { from, to },
    HoldReleased { from, to, released },
    Panicked { message },
});

impl From<&Event> for Record {
    fn from(event: &Event) -> Record {
        Record {
            t_ns: event.t_ns,
            node: event.node.clone(),
            kind: event.kind.clone().into(),
        }
    }
}

impl From<Record> for Event {
    fn from(record: Record) -> Event {
        Event {
            t_ns: record.t_ns,
            node: record.node,
            kind: record.kind.into(),
        }
    }
}
