//! The event kinds by family, as patterns: `lease_answers!(EventKind)` matches every kind the
//! lease service answers a request with, and so on, in `EventKind`'s declaration order.
//!
//! A function over every kind (the trace hash's encoding, the history file's conversions)
//! matches the families and hands each to its own function, which matches that family's
//! kinds and names the other families in one unreachable arm, never `_`. So every match
//! stays exhaustive: a new kind does not compile until it joins a family here, and then not
//! until its family's function handles it. Each macro takes the enum's name, so the file
//! format's `Kind` (the same variants) is matched by the same lists.

/// The run's boundaries: `RunStarted`, `FaultsHealed`, `RunEnded`.
macro_rules! run_events {
    ($kind:ident) => {
        $kind::RunStarted { .. } | $kind::FaultsHealed | $kind::RunEnded
    };
}

/// The lease service's answers to acquires and renewals: `Granted`, `Renewed`, `Refused`,
/// `Denied`.
macro_rules! lease_answers {
    ($kind:ident) => {
        $kind::Granted { .. } | $kind::Renewed { .. } | $kind::Refused { .. } | $kind::Denied { .. }
    };
}

/// A tenure ending: `Expired`, `Released`, `TakenOver`.
macro_rules! lease_endings {
    ($kind:ident) => {
        $kind::Expired { .. } | $kind::Released { .. } | $kind::TakenOver { .. }
    };
}

/// What a lease service's restart did: `Dropped`, `Extended`, `CountersLost`.
macro_rules! lease_restarts {
    ($kind:ident) => {
        $kind::Dropped { .. } | $kind::Extended { .. } | $kind::CountersLost
    };
}

/// The storage's events: `WritePresented`, `WriteAccepted`, `WriteRejected`, `TokenRead`,
/// `Fence`, `StorageStateLost`.
macro_rules! storage_events {
    ($kind:ident) => {
        $kind::WritePresented { .. }
            | $kind::WriteAccepted { .. }
            | $kind::WriteRejected { .. }
            | $kind::TokenRead { .. }
            | $kind::Fence { .. }
            | $kind::StorageStateLost
    };
}

/// The workers' events: `BeliefStarted`, `BeliefEnded`, `WriteSent`, `WriteAbandoned`,
/// `RenewFailed`, `SideEffect`.
macro_rules! worker_events {
    ($kind:ident) => {
        $kind::BeliefStarted { .. }
            | $kind::BeliefEnded { .. }
            | $kind::WriteSent { .. }
            | $kind::WriteAbandoned { .. }
            | $kind::RenewFailed { .. }
            | $kind::SideEffect { .. }
    };
}

/// Faults and what they did to a node: `Paused`, `Resumed`, `ClockStepped`, `Crashed`,
/// `Restarted`, `PartitionStarted`, `PartitionHealed`, `HoldStarted`, `HoldReleased`,
/// `Panicked`.
macro_rules! fault_events {
    ($kind:ident) => {
        $kind::Paused { .. }
            | $kind::Resumed { .. }
            | $kind::ClockStepped { .. }
            | $kind::Crashed
            | $kind::Restarted
            | $kind::PartitionStarted { .. }
            | $kind::PartitionHealed { .. }
            | $kind::HoldStarted { .. }
            | $kind::HoldReleased { .. }
            | $kind::Panicked { .. }
    };
}

pub(crate) use {
    fault_events, lease_answers, lease_endings, lease_restarts, run_events, storage_events,
    worker_events,
};
