//! Version 1 of the history file format: one [`Record`] per JSON line, exactly the shape
//! every history recorded before the format had a version used (reports/README.md).
//!
//! These types are the format, spelt out: their field names, tags and `Option`s are what
//! other systems write, so they never change. A rename here is a new version (a `v2`
//! module next to this one, with this one still read). The conversions to and from the
//! internal [`Event`] match every variant with no wildcard (family by family, as
//! `history::family` groups them), so a new internal variant does not compile until the
//! format says how it is written.

use serde::{Deserialize, Serialize};

use crate::{
    fence,
    history::{
        self,
        family::{
            fault_events, lease_answers, lease_endings, lease_restarts, run_events, storage_events,
            worker_events,
        },
        is_unknown_ms, unknown_ms, Event,
    },
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

impl From<&Event> for Record {
    fn from(event: &Event) -> Record {
        Record {
            t_ns: event.t_ns,
            node: event.node.clone(),
            kind: Kind::from(&event.kind),
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

impl From<history::PauseKind> for PauseKind {
    fn from(kind: history::PauseKind) -> PauseKind {
        match kind {
            history::PauseKind::Gc => PauseKind::Gc,
            history::PauseKind::VmSuspend => PauseKind::VmSuspend,
        }
    }
}

impl From<PauseKind> for history::PauseKind {
    fn from(kind: PauseKind) -> history::PauseKind {
        match kind {
            PauseKind::Gc => history::PauseKind::Gc,
            PauseKind::VmSuspend => history::PauseKind::VmSuspend,
        }
    }
}

impl From<&history::BeliefEnd> for BeliefEnd {
    fn from(why: &history::BeliefEnd) -> BeliefEnd {
        match why {
            history::BeliefEnd::Released => BeliefEnd::Released,
            history::BeliefEnd::RenewFailed => BeliefEnd::RenewFailed,
            history::BeliefEnd::DeadlinePassed => BeliefEnd::DeadlinePassed,
            history::BeliefEnd::CheckFailed => BeliefEnd::CheckFailed,
            history::BeliefEnd::WriteRejected => BeliefEnd::WriteRejected,
            history::BeliefEnd::Crashed => BeliefEnd::Crashed,
        }
    }
}

impl From<BeliefEnd> for history::BeliefEnd {
    fn from(why: BeliefEnd) -> history::BeliefEnd {
        match why {
            BeliefEnd::Released => history::BeliefEnd::Released,
            BeliefEnd::RenewFailed => history::BeliefEnd::RenewFailed,
            BeliefEnd::DeadlinePassed => history::BeliefEnd::DeadlinePassed,
            BeliefEnd::CheckFailed => history::BeliefEnd::CheckFailed,
            BeliefEnd::WriteRejected => history::BeliefEnd::WriteRejected,
            BeliefEnd::Crashed => history::BeliefEnd::Crashed,
        }
    }
}

impl From<history::EffectVia> for EffectVia {
    fn from(via: history::EffectVia) -> EffectVia {
        match via {
            history::EffectVia::Direct => EffectVia::Direct,
            history::EffectVia::Outbox => EffectVia::Outbox,
        }
    }
}

impl From<EffectVia> for history::EffectVia {
    fn from(via: EffectVia) -> history::EffectVia {
        match via {
            EffectVia::Direct => history::EffectVia::Direct,
            EffectVia::Outbox => history::EffectVia::Outbox,
        }
    }
}

impl From<&lease::Denial> for Denial {
    fn from(denial: &lease::Denial) -> Denial {
        match denial {
            lease::Denial::Held { holder, token } => Denial::Held {
                holder: holder.clone(),
                token: *token,
            },
            lease::Denial::LockDelay { until_ns } => Denial::LockDelay {
                until_ns: *until_ns,
            },
            lease::Denial::Conflict { version } => Denial::Conflict { version: *version },
        }
    }
}

impl From<Denial> for lease::Denial {
    fn from(denial: Denial) -> lease::Denial {
        match denial {
            Denial::Held { holder, token } => lease::Denial::Held { holder, token },
            Denial::LockDelay { until_ns } => lease::Denial::LockDelay { until_ns },
            Denial::Conflict { version } => lease::Denial::Conflict { version },
        }
    }
}

impl From<&fence::Verdict> for Verdict {
    fn from(verdict: &fence::Verdict) -> Verdict {
        match verdict {
            fence::Verdict::Accepted { previous } => Verdict::Accepted {
                previous: *previous,
            },
            fence::Verdict::Rejected { accepted, reason } => Verdict::Rejected {
                accepted: *accepted,
                reason: reason.clone(),
            },
        }
    }
}

impl From<Verdict> for fence::Verdict {
    fn from(verdict: Verdict) -> fence::Verdict {
        match verdict {
            Verdict::Accepted { previous } => fence::Verdict::Accepted { previous },
            Verdict::Rejected { accepted, reason } => fence::Verdict::Rejected { accepted, reason },
        }
    }
}

impl From<&history::EventKind> for Kind {
    fn from(kind: &history::EventKind) -> Kind {
        use history::EventKind as E;
        match kind.clone() {
            kind @ run_events!(E) => run_to_wire(kind),
            kind @ lease_answers!(E) => lease_answer_to_wire(kind),
            kind @ lease_endings!(E) => lease_ending_to_wire(kind),
            kind @ lease_restarts!(E) => lease_restart_to_wire(kind),
            kind @ storage_events!(E) => storage_to_wire(kind),
            kind @ worker_events!(E) => worker_to_wire(kind),
            kind @ fault_events!(E) => fault_to_wire(kind),
        }
    }
}

impl From<Kind> for history::EventKind {
    fn from(kind: Kind) -> history::EventKind {
        match kind {
            kind @ run_events!(Kind) => run_from_wire(kind),
            kind @ lease_answers!(Kind) => lease_answer_from_wire(kind),
            kind @ lease_endings!(Kind) => lease_ending_from_wire(kind),
            kind @ lease_restarts!(Kind) => lease_restart_from_wire(kind),
            kind @ storage_events!(Kind) => storage_from_wire(kind),
            kind @ worker_events!(Kind) => worker_from_wire(kind),
            kind @ fault_events!(Kind) => fault_from_wire(kind),
        }
    }
}

/// The run's boundaries, as written.
fn run_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::RunStarted {
            seed,
            liveness_bound_ms,
        } => Kind::RunStarted {
            seed,
            liveness_bound_ms,
        },
        E::FaultsHealed => Kind::FaultsHealed,
        E::RunEnded => Kind::RunEnded,
        lease_answers!(E)
        | lease_endings!(E)
        | lease_restarts!(E)
        | storage_events!(E)
        | worker_events!(E)
        | fault_events!(E) => unreachable!("routed by `from`"),
    }
}

/// The lease service's answers to acquires and renewals, as written.
fn lease_answer_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::Granted {
            scope,
            holder,
            token,
            expires_mono_ms,
        } => Kind::Granted {
            scope,
            holder,
            token,
            expires_mono_ms,
        },
        E::Renewed {
            scope,
            holder,
            token,
        } => Kind::Renewed {
            scope,
            holder,
            token,
        },
        E::Refused {
            scope,
            holder,
            token,
            reason,
        } => Kind::Refused {
            scope,
            holder,
            token,
            reason,
        },
        E::Denied {
            scope,
            holder,
            denial,
        } => Kind::Denied {
            scope,
            holder,
            denial: Denial::from(&denial),
        },
        run_events!(E)
        | lease_endings!(E)
        | lease_restarts!(E)
        | storage_events!(E)
        | worker_events!(E)
        | fault_events!(E) => unreachable!("routed by `from`"),
    }
}

/// A tenure ending, as written.
fn lease_ending_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::Expired {
            scope,
            holder,
            token,
        } => Kind::Expired {
            scope,
            holder,
            token,
        },
        E::Released {
            scope,
            holder,
            token,
        } => Kind::Released {
            scope,
            holder,
            token,
        },
        E::TakenOver {
            scope,
            holder,
            token,
            by,
        } => Kind::TakenOver {
            scope,
            holder,
            token,
            by,
        },
        run_events!(E)
        | lease_answers!(E)
        | lease_restarts!(E)
        | storage_events!(E)
        | worker_events!(E)
        | fault_events!(E) => unreachable!("routed by `from`"),
    }
}

/// What a lease service's restart did, as written.
fn lease_restart_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::Dropped {
            scope,
            holder,
            token,
        } => Kind::Dropped {
            scope,
            holder,
            token,
        },
        E::Extended {
            scope,
            holder,
            token,
            expires_mono_ms,
        } => Kind::Extended {
            scope,
            holder,
            token,
            expires_mono_ms,
        },
        E::CountersLost => Kind::CountersLost,
        run_events!(E)
        | lease_answers!(E)
        | lease_endings!(E)
        | storage_events!(E)
        | worker_events!(E)
        | fault_events!(E) => unreachable!("routed by `from`"),
    }
}

/// The storage's events, as written.
fn storage_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::WritePresented {
            op,
            resource,
            lease_scope,
            writer,
            token,
        } => Kind::WritePresented {
            op,
            resource,
            lease_scope,
            writer,
            token,
        },
        E::WriteAccepted {
            op,
            resource,
            lease_scope,
            writer,
            token,
            previous,
        } => Kind::WriteAccepted {
            op,
            resource,
            lease_scope,
            writer,
            token,
            previous,
        },
        E::WriteRejected {
            op,
            resource,
            lease_scope,
            writer,
            token,
            accepted,
            reason,
        } => Kind::WriteRejected {
            op,
            resource,
            lease_scope,
            writer,
            token,
            accepted,
            reason,
        },
        E::TokenRead {
            op,
            resource,
            writer,
            stored,
        } => Kind::TokenRead {
            op,
            resource,
            writer,
            stored,
        },
        E::Fence {
            resource,
            writer,
            token,
            verdict,
        } => Kind::Fence {
            resource,
            writer,
            token,
            verdict: Verdict::from(&verdict),
        },
        E::StorageStateLost => Kind::StorageStateLost,
        run_events!(E)
        | lease_answers!(E)
        | lease_endings!(E)
        | lease_restarts!(E)
        | worker_events!(E)
        | fault_events!(E) => unreachable!("routed by `from`"),
    }
}

/// The workers' events, as written.
fn worker_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::BeliefStarted {
            scope,
            token,
            local_deadline_mono_ms,
        } => Kind::BeliefStarted {
            scope,
            token,
            local_deadline_mono_ms,
        },
        E::BeliefEnded {
            scope,
            token,
            why,
            local_mono_ms,
        } => Kind::BeliefEnded {
            scope,
            token,
            why: BeliefEnd::from(&why),
            local_mono_ms,
        },
        E::WriteSent {
            op,
            resource,
            token,
        } => Kind::WriteSent {
            op,
            resource,
            token,
        },
        E::WriteAbandoned {
            op,
            resource,
            token,
            stored,
        } => Kind::WriteAbandoned {
            op,
            resource,
            token,
            stored,
        },
        E::RenewFailed {
            scope,
            token,
            reason,
        } => Kind::RenewFailed {
            scope,
            token,
            reason,
        },
        E::SideEffect {
            op,
            resource,
            lease_scope,
            worker,
            token,
            via,
        } => Kind::SideEffect {
            op,
            resource,
            lease_scope,
            worker,
            token,
            via: via.into(),
        },
        run_events!(E)
        | lease_answers!(E)
        | lease_endings!(E)
        | lease_restarts!(E)
        | storage_events!(E)
        | fault_events!(E) => unreachable!("routed by `from`"),
    }
}

/// Faults and what they did to a node, as written.
fn fault_to_wire(kind: history::EventKind) -> Kind {
    use history::EventKind as E;
    match kind {
        E::Paused { kind, planned_ms } => Kind::Paused {
            kind: kind.into(),
            planned_ms,
        },
        E::Resumed { kind } => Kind::Resumed { kind: kind.into() },
        E::ClockStepped {
            delta_ms,
            wall_ms,
            mono_ms,
        } => Kind::ClockStepped {
            delta_ms,
            wall_ms,
            mono_ms,
        },
        E::Crashed => Kind::Crashed,
        E::Restarted => Kind::Restarted,
        E::PartitionStarted { from, to, one_way } => Kind::PartitionStarted { from, to, one_way },
        E::PartitionHealed { from, to, one_way } => Kind::PartitionHealed { from, to, one_way },
        E::HoldStarted { from, to } => Kind::HoldStarted { from, to },
        E::HoldReleased { from, to, released } => Kind::HoldReleased { from, to, released },
        E::Panicked { message } => Kind::Panicked { message },
        run_events!(E)
        | lease_answers!(E)
        | lease_endings!(E)
        | lease_restarts!(E)
        | storage_events!(E)
        | worker_events!(E) => unreachable!("routed by `from`"),
    }
}

/// The run's boundaries, as read.
fn run_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::RunStarted {
            seed,
            liveness_bound_ms,
        } => E::RunStarted {
            seed,
            liveness_bound_ms,
        },
        Kind::FaultsHealed => E::FaultsHealed,
        Kind::RunEnded => E::RunEnded,
        lease_answers!(Kind)
        | lease_endings!(Kind)
        | lease_restarts!(Kind)
        | storage_events!(Kind)
        | worker_events!(Kind)
        | fault_events!(Kind) => unreachable!("routed by `from`"),
    }
}

/// The lease service's answers to acquires and renewals, as read.
fn lease_answer_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::Granted {
            scope,
            holder,
            token,
            expires_mono_ms,
        } => E::Granted {
            scope,
            holder,
            token,
            expires_mono_ms,
        },
        Kind::Renewed {
            scope,
            holder,
            token,
        } => E::Renewed {
            scope,
            holder,
            token,
        },
        Kind::Refused {
            scope,
            holder,
            token,
            reason,
        } => E::Refused {
            scope,
            holder,
            token,
            reason,
        },
        Kind::Denied {
            scope,
            holder,
            denial,
        } => E::Denied {
            scope,
            holder,
            denial: denial.into(),
        },
        run_events!(Kind)
        | lease_endings!(Kind)
        | lease_restarts!(Kind)
        | storage_events!(Kind)
        | worker_events!(Kind)
        | fault_events!(Kind) => unreachable!("routed by `from`"),
    }
}

/// A tenure ending, as read.
fn lease_ending_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::Expired {
            scope,
            holder,
            token,
        } => E::Expired {
            scope,
            holder,
            token,
        },
        Kind::Released {
            scope,
            holder,
            token,
        } => E::Released {
            scope,
            holder,
            token,
        },
        Kind::TakenOver {
            scope,
            holder,
            token,
            by,
        } => E::TakenOver {
            scope,
            holder,
            token,
            by,
        },
        run_events!(Kind)
        | lease_answers!(Kind)
        | lease_restarts!(Kind)
        | storage_events!(Kind)
        | worker_events!(Kind)
        | fault_events!(Kind) => unreachable!("routed by `from`"),
    }
}

/// What a lease service's restart did, as read.
fn lease_restart_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::Dropped {
            scope,
            holder,
            token,
        } => E::Dropped {
            scope,
            holder,
            token,
        },
        Kind::Extended {
            scope,
            holder,
            token,
            expires_mono_ms,
        } => E::Extended {
            scope,
            holder,
            token,
            expires_mono_ms,
        },
        Kind::CountersLost => E::CountersLost,
        run_events!(Kind)
        | lease_answers!(Kind)
        | lease_endings!(Kind)
        | storage_events!(Kind)
        | worker_events!(Kind)
        | fault_events!(Kind) => unreachable!("routed by `from`"),
    }
}

/// The storage's events, as read.
fn storage_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::WritePresented {
            op,
            resource,
            lease_scope,
            writer,
            token,
        } => E::WritePresented {
            op,
            resource,
            lease_scope,
            writer,
            token,
        },
        Kind::WriteAccepted {
            op,
            resource,
            lease_scope,
            writer,
            token,
            previous,
        } => E::WriteAccepted {
            op,
            resource,
            lease_scope,
            writer,
            token,
            previous,
        },
        Kind::WriteRejected {
            op,
            resource,
            lease_scope,
            writer,
            token,
            accepted,
            reason,
        } => E::WriteRejected {
            op,
            resource,
            lease_scope,
            writer,
            token,
            accepted,
            reason,
        },
        Kind::TokenRead {
            op,
            resource,
            writer,
            stored,
        } => E::TokenRead {
            op,
            resource,
            writer,
            stored,
        },
        Kind::Fence {
            resource,
            writer,
            token,
            verdict,
        } => E::Fence {
            resource,
            writer,
            token,
            verdict: verdict.into(),
        },
        Kind::StorageStateLost => E::StorageStateLost,
        run_events!(Kind)
        | lease_answers!(Kind)
        | lease_endings!(Kind)
        | lease_restarts!(Kind)
        | worker_events!(Kind)
        | fault_events!(Kind) => unreachable!("routed by `from`"),
    }
}

/// The workers' events, as read.
fn worker_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::BeliefStarted {
            scope,
            token,
            local_deadline_mono_ms,
        } => E::BeliefStarted {
            scope,
            token,
            local_deadline_mono_ms,
        },
        Kind::BeliefEnded {
            scope,
            token,
            why,
            local_mono_ms,
        } => E::BeliefEnded {
            scope,
            token,
            why: why.into(),
            local_mono_ms,
        },
        Kind::WriteSent {
            op,
            resource,
            token,
        } => E::WriteSent {
            op,
            resource,
            token,
        },
        Kind::WriteAbandoned {
            op,
            resource,
            token,
            stored,
        } => E::WriteAbandoned {
            op,
            resource,
            token,
            stored,
        },
        Kind::RenewFailed {
            scope,
            token,
            reason,
        } => E::RenewFailed {
            scope,
            token,
            reason,
        },
        Kind::SideEffect {
            op,
            resource,
            lease_scope,
            worker,
            token,
            via,
        } => E::SideEffect {
            op,
            resource,
            lease_scope,
            worker,
            token,
            via: via.into(),
        },
        run_events!(Kind)
        | lease_answers!(Kind)
        | lease_endings!(Kind)
        | lease_restarts!(Kind)
        | storage_events!(Kind)
        | fault_events!(Kind) => unreachable!("routed by `from`"),
    }
}

/// Faults and what they did to a node, as read.
fn fault_from_wire(kind: Kind) -> history::EventKind {
    use history::EventKind as E;
    match kind {
        Kind::Paused { kind, planned_ms } => E::Paused {
            kind: kind.into(),
            planned_ms,
        },
        Kind::Resumed { kind } => E::Resumed { kind: kind.into() },
        Kind::ClockStepped {
            delta_ms,
            wall_ms,
            mono_ms,
        } => E::ClockStepped {
            delta_ms,
            wall_ms,
            mono_ms,
        },
        Kind::Crashed => E::Crashed,
        Kind::Restarted => E::Restarted,
        Kind::PartitionStarted { from, to, one_way } => E::PartitionStarted { from, to, one_way },
        Kind::PartitionHealed { from, to, one_way } => E::PartitionHealed { from, to, one_way },
        Kind::HoldStarted { from, to } => E::HoldStarted { from, to },
        Kind::HoldReleased { from, to, released } => E::HoldReleased { from, to, released },
        Kind::Panicked { message } => E::Panicked { message },
        run_events!(Kind)
        | lease_answers!(Kind)
        | lease_endings!(Kind)
        | lease_restarts!(Kind)
        | storage_events!(Kind)
        | worker_events!(Kind) => unreachable!("routed by `from`"),
    }
}
