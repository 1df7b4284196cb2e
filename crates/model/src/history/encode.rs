//! The trace hash's input: a compact binary encoding of each event, fed straight into
//! FNV-1a 64 with no intermediate buffer.
//!
//! The encoding is fixed so the hash is the same on every platform and in every release
//! (a change to it is a documented, one-time break of every trace hash, see
//! reports/README.md): integers are fixed-width little-endian (`u64` 8 bytes, lengths and
//! counts `u32`), floats are their IEEE-754 bit patterns as `u64` (no formatting, no libm),
//! strings are a `u32` byte length then UTF-8 bytes, `Option` is a tag byte `0` (none) or
//! `1` then the value, `bool` one byte, and every enum a one-byte tag: its variant's position
//! in the declaration, counted from 1 (the numbers are written below and never reused). An
//! event is `t_ns`, `node`, the kind's tag, then the kind's fields in declaration order.

use crate::{
    fence::Verdict,
    fnv::Fnv1a,
    history::{
        family::{
            fault_events, lease_answers, lease_endings, lease_restarts, run_events, storage_events,
            worker_events,
        },
        BeliefEnd, EffectVia, Event, EventKind, PauseKind,
    },
    lease::Denial,
};

/// Feeds one value's encoding to the hasher.
pub(super) struct Encoder<'a>(pub(super) &'a mut Fnv1a);

impl Encoder<'_> {
    fn u8(&mut self, value: u8) {
        self.0.write(&[value]);
    }

    fn u64(&mut self, value: u64) {
        self.0.write(&value.to_le_bytes());
    }

    fn f64(&mut self, value: f64) {
        self.u64(value.to_bits());
    }

    fn bool(&mut self, value: bool) {
        self.u8(u8::from(value));
    }

    fn len(&mut self, len: usize) {
        // Strings and lists in a history are bounded far below 4 GiB (scenario limits).
        self.0.write(&(len as u32).to_le_bytes());
    }

    fn str(&mut self, value: &str) {
        self.len(value.len());
        self.0.write(value.as_bytes());
    }

    fn opt(&mut self, value: Option<u64>) {
        match value {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                self.u64(v);
            }
        }
    }

    fn names(&mut self, names: &[String]) {
        self.len(names.len());
        for name in names {
            self.str(name);
        }
    }

    fn pause(&mut self, kind: PauseKind) {
        self.u8(match kind {
            PauseKind::Gc => 1,
            PauseKind::VmSuspend => 2,
        });
    }

    fn denial(&mut self, denial: &Denial) {
        match denial {
            Denial::Held { holder, token } => {
                self.u8(1);
                self.str(holder);
                self.u64(*token);
            }
            Denial::LockDelay { until_ns } => {
                self.u8(2);
                self.u64(*until_ns);
            }
            Denial::Conflict { version } => {
                self.u8(3);
                self.u64(*version);
            }
        }
    }

    fn verdict(&mut self, verdict: &Verdict) {
        match verdict {
            Verdict::Accepted { previous } => {
                self.u8(1);
                self.opt(*previous);
            }
            Verdict::Rejected { accepted, reason } => {
                self.u8(2);
                self.opt(*accepted);
                self.str(reason);
            }
        }
    }

    fn belief_end(&mut self, why: &BeliefEnd) {
        self.u8(match why {
            BeliefEnd::Released => 1,
            BeliefEnd::RenewFailed => 2,
            BeliefEnd::DeadlinePassed => 3,
            BeliefEnd::CheckFailed => 4,
            BeliefEnd::WriteRejected => 5,
            BeliefEnd::Crashed => 6,
        });
    }

    fn via(&mut self, via: EffectVia) {
        self.u8(match via {
            EffectVia::Direct => 1,
            EffectVia::Outbox => 2,
        });
    }

    /// Tag, `scope`, `holder`, `token`: the shape most lease events share.
    fn tenure(&mut self, tag: u8, scope: &str, holder: &str, token: u64) {
        self.u8(tag);
        self.str(scope);
        self.str(holder);
        self.u64(token);
    }

    /// `op`, `resource`, `lease_scope`, writer, `token`: the shape of the storage's events.
    fn write_op(&mut self, op: u64, resource: &str, lease_scope: &str, writer: &str, token: u64) {
        self.u64(op);
        self.str(resource);
        self.str(lease_scope);
        self.str(writer);
        self.u64(token);
    }

    /// `t_ns`, `node`, then the kind, each family's by its own function (`history::family`).
    pub(super) fn event(&mut self, event: &Event) {
        self.u64(event.t_ns);
        self.str(&event.node);
        match &event.kind {
            kind @ run_events!(EventKind) => self.run_event(kind),
            kind @ lease_answers!(EventKind) => self.lease_answer(kind),
            kind @ lease_endings!(EventKind) => self.lease_ending(kind),
            kind @ lease_restarts!(EventKind) => self.lease_restart(kind),
            kind @ storage_events!(EventKind) => self.storage_event(kind),
            kind @ worker_events!(EventKind) => self.worker_event(kind),
            kind @ fault_events!(EventKind) => self.fault_event(kind),
        }
    }

    /// The run's boundaries.
    fn run_event(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::RunStarted {
                seed,
                liveness_bound_ms,
            } => {
                self.u8(1);
                self.u64(*seed);
                self.u64(*liveness_bound_ms);
            }
            K::FaultsHealed => self.u8(2),
            K::RunEnded => self.u8(3),
            lease_answers!(K)
            | lease_endings!(K)
            | lease_restarts!(K)
            | storage_events!(K)
            | worker_events!(K)
            | fault_events!(K) => unreachable!("routed by `event`"),
        }
    }

    /// The lease service's answers to acquires and renewals.
    fn lease_answer(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::Granted {
                scope,
                holder,
                token,
                expires_mono_ms,
            } => {
                self.tenure(4, scope, holder, *token);
                self.f64(*expires_mono_ms);
            }
            K::Renewed {
                scope,
                holder,
                token,
            } => self.tenure(5, scope, holder, *token),
            K::Refused {
                scope,
                holder,
                token,
                reason,
            } => {
                self.u8(6);
                self.str(scope);
                self.str(holder);
                self.opt(*token);
                self.str(reason);
            }
            K::Denied {
                scope,
                holder,
                denial,
            } => {
                self.u8(7);
                self.str(scope);
                self.str(holder);
                self.denial(denial);
            }
            run_events!(K)
            | lease_endings!(K)
            | lease_restarts!(K)
            | storage_events!(K)
            | worker_events!(K)
            | fault_events!(K) => unreachable!("routed by `event`"),
        }
    }

    /// A tenure ending.
    fn lease_ending(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::Expired {
                scope,
                holder,
                token,
            } => self.tenure(8, scope, holder, *token),
            K::Released {
                scope,
                holder,
                token,
            } => self.tenure(9, scope, holder, *token),
            K::TakenOver {
                scope,
                holder,
                token,
                by,
            } => {
                self.tenure(10, scope, holder, *token);
                self.str(by);
            }
            run_events!(K)
            | lease_answers!(K)
            | lease_restarts!(K)
            | storage_events!(K)
            | worker_events!(K)
            | fault_events!(K) => unreachable!("routed by `event`"),
        }
    }

    /// What a lease service's restart did.
    fn lease_restart(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::Dropped {
                scope,
                holder,
                token,
            } => self.tenure(11, scope, holder, *token),
            K::Extended {
                scope,
                holder,
                token,
                expires_mono_ms,
            } => {
                self.tenure(12, scope, holder, *token);
                self.f64(*expires_mono_ms);
            }
            K::CountersLost => self.u8(13),
            run_events!(K)
            | lease_answers!(K)
            | lease_endings!(K)
            | storage_events!(K)
            | worker_events!(K)
            | fault_events!(K) => unreachable!("routed by `event`"),
        }
    }

    /// The storage's events.
    fn storage_event(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::WritePresented {
                op,
                resource,
                lease_scope,
                writer,
                token,
            } => {
                self.u8(14);
                self.write_op(*op, resource, lease_scope, writer, *token);
            }
            K::WriteAccepted {
                op,
                resource,
                lease_scope,
                writer,
                token,
                previous,
            } => {
                self.u8(15);
                self.write_op(*op, resource, lease_scope, writer, *token);
                self.opt(*previous);
            }
            K::WriteRejected {
                op,
                resource,
                lease_scope,
                writer,
                token,
                accepted,
                reason,
            } => {
                self.u8(16);
                self.write_op(*op, resource, lease_scope, writer, *token);
                self.opt(*accepted);
                self.str(reason);
            }
            K::TokenRead {
                op,
                resource,
                writer,
                stored,
            } => {
                self.u8(17);
                self.u64(*op);
                self.str(resource);
                self.str(writer);
                self.opt(*stored);
            }
            K::Fence {
                resource,
                writer,
                token,
                verdict,
            } => {
                self.u8(18);
                self.str(resource);
                self.str(writer);
                self.u64(*token);
                self.verdict(verdict);
            }
            K::StorageStateLost => self.u8(19),
            run_events!(K)
            | lease_answers!(K)
            | lease_endings!(K)
            | lease_restarts!(K)
            | worker_events!(K)
            | fault_events!(K) => unreachable!("routed by `event`"),
        }
    }

    /// The workers' events.
    fn worker_event(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::BeliefStarted {
                scope,
                token,
                local_deadline_mono_ms,
            } => {
                self.u8(20);
                self.str(scope);
                self.u64(*token);
                self.f64(*local_deadline_mono_ms);
            }
            K::BeliefEnded {
                scope,
                token,
                why,
                local_mono_ms,
            } => {
                self.u8(21);
                self.str(scope);
                self.u64(*token);
                self.belief_end(why);
                self.f64(*local_mono_ms);
            }
            K::WriteSent {
                op,
                resource,
                token,
            } => {
                self.u8(22);
                self.u64(*op);
                self.str(resource);
                self.u64(*token);
            }
            K::WriteAbandoned {
                op,
                resource,
                token,
                stored,
            } => {
                self.u8(23);
                self.u64(*op);
                self.str(resource);
                self.u64(*token);
                self.opt(*stored);
            }
            K::RenewFailed {
                scope,
                token,
                reason,
            } => {
                self.u8(24);
                self.str(scope);
                self.u64(*token);
                self.str(reason);
            }
            K::SideEffect {
                op,
                resource,
                lease_scope,
                worker,
                token,
                via,
            } => {
                self.u8(25);
                self.write_op(*op, resource, lease_scope, worker, *token);
                self.via(*via);
            }
            run_events!(K)
            | lease_answers!(K)
            | lease_endings!(K)
            | lease_restarts!(K)
            | storage_events!(K)
            | fault_events!(K) => unreachable!("routed by `event`"),
        }
    }

    /// Faults and what they did to a node.
    fn fault_event(&mut self, kind: &EventKind) {
        use EventKind as K;
        match kind {
            K::Paused { kind, planned_ms } => {
                self.u8(26);
                self.pause(*kind);
                self.f64(*planned_ms);
            }
            K::Resumed { kind } => {
                self.u8(27);
                self.pause(*kind);
            }
            K::ClockStepped {
                delta_ms,
                wall_ms,
                mono_ms,
            } => {
                self.u8(28);
                self.f64(*delta_ms);
                self.f64(*wall_ms);
                self.f64(*mono_ms);
            }
            K::Crashed => self.u8(29),
            K::Restarted => self.u8(30),
            K::PartitionStarted { from, to, one_way } => {
                self.u8(31);
                self.names(from);
                self.names(to);
                self.bool(*one_way);
            }
            K::PartitionHealed { from, to, one_way } => {
                self.u8(32);
                self.names(from);
                self.names(to);
                self.bool(*one_way);
            }
            K::HoldStarted { from, to } => {
                self.u8(33);
                self.str(from);
                self.str(to);
            }
            K::HoldReleased { from, to, released } => {
                self.u8(34);
                self.str(from);
                self.str(to);
                self.u64(*released);
            }
            K::Panicked { message } => {
                self.u8(35);
                self.str(message);
            }
            run_events!(K)
            | lease_answers!(K)
            | lease_endings!(K)
            | lease_restarts!(K)
            | storage_events!(K)
            | worker_events!(K) => unreachable!("routed by `event`"),
        }
    }
}
