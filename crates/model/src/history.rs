//! The god's-eye history of one run: every event with its true (virtual) time.
//!
//! The simulator records; the checker (`fencesim-check`) and the reports only read. The
//! trace hash is computed over a compact binary encoding of the events (`encode`), so two
//! runs are identical exactly when their hashes match (up to hash collisions).
//!
//! These types are internal: the history file format is `wire`'s own versioned schema types,
//! converted to and from these, so renaming a field here does not change any file.

mod encode;
pub mod wire;

use crate::{fence::Verdict, lease::Denial, NodeName, OpId, Scope, Token};

/// One recorded event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// True time in nanoseconds since the run began.
    pub t_ns: u64,
    /// The node where it happened (the network's events use `"net"`, the nemesis `"nemesis"`).
    pub node: NodeName,
    /// What happened.
    pub kind: EventKind,
}

/// Which process-stopping fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseKind {
    /// The process runs no code; its clocks keep running.
    Gc,
    /// The VM runs no code and its monotonic clock stops; wall re-syncs on resume.
    VmSuspend,
}

/// Why a worker stopped believing it holds a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BeliefEnd {
    /// Finished its writes and released.
    Released,
    /// A renewal was refused or timed out and `stop_on_renew_failure` is set.
    RenewFailed,
    /// Its local deadline (by its own clock) passed.
    DeadlinePassed,
    /// A check-before-write found the lease gone.
    CheckFailed,
    /// The storage rejected its write as stale.
    WriteRejected,
    /// The process crashed.
    Crashed,
}

/// How an external side effect was produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectVia {
    /// The worker called the external sink directly (nothing checks its token).
    Direct,
    /// The effect was recorded in the fenced store with the write and relayed after commit.
    Outbox,
}

/// An optional time a recorded history did not give (NaN; left out of a history file).
pub fn unknown_ms() -> f64 {
    f64::NAN
}

/// Whether `ms` is [`unknown_ms`].
pub fn is_unknown_ms(ms: &f64) -> bool {
    ms.is_nan()
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    // --- run boundaries -------------------------------------------------------------------
    /// The run began. `liveness_bound_ms` is the I5 bound derived from the configuration.
    RunStarted {
        /// The run seed.
        seed: u64,
        /// The I5 bound derived from the configuration.
        liveness_bound_ms: u64,
    },
    /// All faults healed (end of the safety phase); I5 is measured from here.
    FaultsHealed,
    /// The run ended.
    RunEnded,

    // --- lease service (recorded at the coordinator) ---------------------------------------
    /// A new lease with a freshly issued token. `expires_mono_ms` is by the coordinator's clock.
    Granted {
        /// The lease scope.
        scope: Scope,
        /// The holder (worker) of the lease.
        holder: NodeName,
        /// The fencing token.
        token: Token,
        /// When the lease expires, by the coordinator's monotonic clock (ms). Optional in a
        /// recorded history (many lease services cannot say): absent is NaN, and nothing the
        /// checker judges depends on it.
        expires_mono_ms: f64,
    },
    /// An acquire by the current holder (a retry) or a renewal extended the lease.
    Renewed {
        /// The lease scope.
        scope: Scope,
        /// The holder (worker) of the lease.
        holder: NodeName,
        /// The fencing token.
        token: Token,
    },
    /// A renewal or acquire was refused.
    Refused {
        /// The lease scope.
        scope: Scope,
        /// The worker that asked.
        holder: NodeName,
        /// The token it presented (none for an acquire).
        token: Option<Token>,
        /// Why, in words.
        reason: String,
    },
    /// An acquire was denied because the scope is taken or in lock-delay.
    Denied {
        /// The lease scope.
        scope: Scope,
        /// The worker that asked.
        holder: NodeName,
        /// Why the acquire was denied.
        denial: Denial,
    },
    /// The service expired a lease by its own monotonic clock.
    Expired {
        /// The lease scope.
        scope: Scope,
        /// The holder (worker) of the lease.
        holder: NodeName,
        /// The fencing token.
        token: Token,
    },
    /// The holder gave the lease back.
    Released {
        /// The lease scope.
        scope: Scope,
        /// The holder (worker) of the lease.
        holder: NodeName,
        /// The fencing token.
        token: Token,
    },
    /// A candidate replaced this holder's record after seeing it unchanged for the lease
    /// duration by the candidate's own clock (client-go: the server never expires the
    /// record). Ends the tenure, like `Expired`; the new `Granted` to `by` follows.
    TakenOver {
        /// The scope whose record was replaced.
        scope: Scope,
        /// The holder replaced.
        holder: NodeName,
        /// Its token.
        token: Token,
        /// The candidate that took the record.
        by: NodeName,
    },
    /// A restart forgot this lease (`on_restart = "drop"`).
    Dropped {
        /// The lease scope.
        scope: Scope,
        /// The holder (worker) of the lease.
        holder: NodeName,
        /// The fencing token.
        token: Token,
    },
    /// A restart kept this lease and re-extended it.
    Extended {
        /// The lease scope.
        scope: Scope,
        /// The holder (worker) of the lease.
        holder: NodeName,
        /// The fencing token.
        token: Token,
        /// When the lease expires, by the coordinator's monotonic clock (ms); optional as
        /// in `Granted`.
        expires_mono_ms: f64,
    },
    /// A restart lost the token counters (`volatile-counter`).
    CountersLost,

    // --- storage ----------------------------------------------------------------------------
    /// A write arrived at the storage (before the decision).
    WritePresented {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The lease scope whose token the write presents.
        lease_scope: Scope,
        /// The worker that sent the write.
        writer: NodeName,
        /// The fencing token.
        token: Token,
    },
    /// The storage accepted (committed) a write.
    WriteAccepted {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The lease scope whose token the write presents.
        lease_scope: Scope,
        /// The worker that sent the write.
        writer: NodeName,
        /// The fencing token.
        token: Token,
        /// The highest token the store had accepted before, if any.
        previous: Option<Token>,
    },
    /// The storage rejected a write; `accepted` is the token it compared against.
    WriteRejected {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The lease scope whose token the write presents.
        lease_scope: Scope,
        /// The worker that sent the write.
        writer: NodeName,
        /// The fencing token.
        token: Token,
        /// The token the store compared against, if any.
        accepted: Option<Token>,
        /// Why, in words.
        reason: String,
    },
    /// A read of the stored token (read-then-write).
    TokenRead {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The worker that sent the write.
        writer: NodeName,
        /// The token stored for the resource, if any.
        stored: Option<Token>,
    },
    /// A fence (epoch bump) request and the storage's verdict.
    Fence {
        /// The resource (storage key) written.
        resource: Scope,
        /// The worker that sent the write.
        writer: NodeName,
        /// The fencing token.
        token: Token,
        /// The storage's answer.
        verdict: Verdict,
    },
    /// The storage process lost its volatile state.
    StorageStateLost,

    // --- workers ----------------------------------------------------------------------------
    /// The worker received a grant and now believes it holds `scope`.
    BeliefStarted {
        /// The lease scope.
        scope: Scope,
        /// The fencing token.
        token: Token,
        /// Until when the worker believes it holds the lease, by its own monotonic clock (ms).
        local_deadline_mono_ms: f64,
    },
    /// The worker stopped believing it holds `scope`.
    BeliefEnded {
        /// The lease scope.
        scope: Scope,
        /// The fencing token.
        token: Token,
        /// Why the belief ended.
        why: BeliefEnd,
        /// The worker's monotonic clock when it stopped (ms).
        local_mono_ms: f64,
    },
    /// The worker sent a write.
    WriteSent {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The fencing token.
        token: Token,
    },
    /// The worker abandoned a write on its own (read-then-write saw a newer token).
    WriteAbandoned {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The fencing token.
        token: Token,
        /// The token stored for the resource, if any.
        stored: Option<Token>,
    },
    /// A renewal failed from the worker's point of view (refused or timed out).
    RenewFailed {
        /// The lease scope.
        scope: Scope,
        /// The fencing token.
        token: Token,
        /// Why, in words.
        reason: String,
    },
    /// An external side effect happened for work done under `token`.
    SideEffect {
        /// The write's op id.
        op: OpId,
        /// The resource (storage key) written.
        resource: Scope,
        /// The lease scope whose token the write presents.
        lease_scope: Scope,
        /// The worker whose work caused it.
        worker: NodeName,
        /// The fencing token.
        token: Token,
        /// How the effect was produced.
        via: EffectVia,
    },

    // --- faults (recorded by the nemesis on the affected node) ------------------------------
    /// A process-stopping fault began on this node.
    Paused {
        /// What happened.
        kind: PauseKind,
        /// How long the pause is planned to last (ms).
        planned_ms: f64,
    },
    /// The node runs code again.
    Resumed {
        /// What happened.
        kind: PauseKind,
    },
    /// The node's wall clock stepped; readings after the step are given.
    ClockStepped {
        /// The step, in milliseconds (negative: backwards).
        delta_ms: f64,
        /// The node's wall clock right after the step (ms since the Unix epoch).
        wall_ms: f64,
        /// The node's monotonic clock at the step (ms).
        mono_ms: f64,
    },
    /// The process died (and lost its memory).
    Crashed,
    /// The process started again, with no memory.
    Restarted,
    /// Messages `from` → `to` are dropped (both directions when `one_way` is false).
    PartitionStarted {
        /// Nodes on the cut side (senders for a one-way cut).
        from: Vec<NodeName>,
        /// Nodes on the other side (empty: every other node).
        to: Vec<NodeName>,
        /// Only messages `from` → `to` are dropped.
        one_way: bool,
    },
    /// The partition ended.
    PartitionHealed {
        /// Nodes on the cut side (senders for a one-way cut).
        from: Vec<NodeName>,
        /// Nodes on the other side (empty: every other node).
        to: Vec<NodeName>,
        /// Only messages `from` → `to` are dropped.
        one_way: bool,
    },
    /// Messages `from` → `to` are held in the network...
    HoldStarted {
        /// Nodes on the cut side (senders for a one-way cut).
        from: NodeName,
        /// Nodes on the other side (empty: every other node).
        to: NodeName,
    },
    /// ...and delivered now, late.
    HoldReleased {
        /// Nodes on the cut side (senders for a one-way cut).
        from: NodeName,
        /// Nodes on the other side (empty: every other node).
        to: NodeName,
        /// How many held messages were delivered.
        released: u64,
    },
    /// A node's code panicked (a bug in the system under test, or an injected one).
    Panicked {
        /// The panic message.
        message: String,
    },
}

/// A run's history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// Every event, in time order.
    pub events: Vec<Event>,
}

impl History {
    /// Appends an event (events must be pushed in time order).
    pub fn push(&mut self, t_ns: u64, node: impl Into<NodeName>, kind: EventKind) {
        debug_assert!(
            self.events.last().is_none_or(|last| last.t_ns <= t_ns),
            "history must be recorded in time order"
        );
        self.events.push(Event {
            t_ns,
            node: node.into(),
            kind,
        });
    }

    /// The index of the first event where `self` and `other` differ (an event missing from
    /// the shorter history counts as a difference), or `None` when they are equal.
    pub fn first_difference(&self, other: &History) -> Option<usize> {
        let common = self.events.len().min(other.events.len());
        (0..common)
            .find(|&index| self.events[index] != other.events[index])
            .or((self.events.len() != other.events.len()).then_some(common))
    }

    /// FNV-1a 64 over the binary encoding of every event (fixed-width little-endian
    /// integers, floats as their bit patterns, length-prefixed strings, one-byte tags; see
    /// `history/encode.rs`): equal exactly when the histories are equal (up to hash
    /// collisions). Stable across platforms and releases. (Earlier it hashed the JSON
    /// lines; every hash changed once then.)
    pub fn trace_hash(&self) -> String {
        let mut hash = TraceHasher::new();
        for event in &self.events {
            hash.push(event);
        }
        hash.hex()
    }
}

/// The trace hash computed incrementally, one event at a time, as a recorder sees them:
/// after the same events it equals [`History::trace_hash`].
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceHasher(crate::fnv::Fnv1a);

impl TraceHasher {
    /// A hasher that has seen no event.
    pub fn new() -> TraceHasher {
        TraceHasher(crate::fnv::Fnv1a::new())
    }

    /// Feeds one event.
    pub fn push(&mut self, event: &Event) {
        encode::Encoder(&mut self.0).event(event);
    }

    /// The hash as 16 lowercase hex digits.
    pub fn hex(self) -> String {
        self.0.hex()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_changes_with_any_event_field() {
        let mut a = History::default();
        a.push(1, "worker-0", EventKind::Crashed);
        let mut b = a.clone();
        assert_eq!(a.trace_hash(), b.trace_hash());
        b.events[0].t_ns = 2;
        assert_ne!(a.trace_hash(), b.trace_hash());
    }

    #[test]
    fn hash_is_pinned() {
        // The encoding is a cross-platform, cross-release contract: these values change only
        // with a documented break (reports/README.md, "Trace hash").
        assert_eq!(History::default().trace_hash(), "cbf29ce484222325");
        let mut h = History::default();
        h.push(1, "worker-0", EventKind::Crashed);
        h.push(
            2_500_000,
            "coordinator",
            EventKind::Granted {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 7,
                expires_mono_ms: 10_000.25,
            },
        );
        h.push(
            3_000_000,
            "nemesis",
            EventKind::PartitionStarted {
                from: vec!["worker-0".into()],
                to: vec![],
                one_way: true,
            },
        );
        assert_eq!(h.trace_hash(), PINNED);
    }

    // Computed independently (Python: struct.pack("<Q"/"<I"/"<d") and FNV-1a 64).
    const PINNED: &str = "37c05308abd3843f";

    #[test]
    fn incremental_equals_whole() {
        let mut h = History::default();
        h.push(1, "worker-0", EventKind::Crashed);
        h.push(2, "worker-0", EventKind::Restarted);
        let mut incremental = TraceHasher::new();
        for event in &h.events {
            incremental.push(event);
        }
        assert_eq!(incremental.hex(), h.trace_hash());
    }

    #[test]
    fn every_field_kind_changes_the_hash() {
        let base = |kind| {
            let mut h = History::default();
            h.push(5, "storage", kind);
            h.trace_hash()
        };
        let a = base(EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms: 1.5,
        });
        let b = base(EventKind::Paused {
            kind: PauseKind::VmSuspend,
            planned_ms: 1.5,
        });
        let c = base(EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms: 1.25,
        });
        assert_ne!(a, b);
        assert_ne!(a, c);
        // Length prefixes: moving a byte between adjacent strings changes the hash.
        let d = base(EventKind::HoldStarted {
            from: "ab".into(),
            to: "c".into(),
        });
        let e = base(EventKind::HoldStarted {
            from: "a".into(),
            to: "bc".into(),
        });
        assert_ne!(d, e);
    }

    #[test]
    fn first_difference_names_the_first_differing_event() {
        let mut a = History::default();
        a.push(1, "worker-0", EventKind::Crashed);
        a.push(2, "worker-0", EventKind::Restarted);
        assert_eq!(a.first_difference(&a.clone()), None);
        let mut b = a.clone();
        b.events[1].t_ns = 3;
        assert_eq!(a.first_difference(&b), Some(1));
        b.events.truncate(1);
        assert_eq!(a.first_difference(&b), Some(1));
        assert_eq!(b.first_difference(&a), Some(1));
        assert_eq!(History::default().first_difference(&a), Some(0));
    }

    #[test]
    fn events_round_trip_through_jsonl() {
        let mut h = History::default();
        h.push(
            5,
            "coordinator",
            EventKind::Granted {
                scope: "job-1".into(),
                holder: "worker-0".into(),
                token: 41,
                expires_mono_ms: 10.0,
            },
        );
        let text = h.to_jsonl();
        assert_eq!(
            wire::parse_jsonl(&text, wire::Strictness::Lenient).unwrap(),
            h
        );
        assert!(text.contains("\"event\":\"granted\""));
    }
}
