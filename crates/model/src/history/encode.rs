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
//! event is `t_ns`, `node`, the kind's tag, then the kind's fields in declaration order
//! (`crates/model/tests/wire_v1.rs` pins the hash of every kind).

use crate::{
    fence::Verdict,
    fnv::Fnv1a,
    history::{BeliefEnd, EffectVia, Event, EventKind, PauseKind},
    lease::Denial,
};

/// Feeds one value's encoding to the hasher.
pub(super) struct Encoder<'a>(pub(super) &'a mut Fnv1a);

impl Encoder<'_> {
    fn u8(&mut self, value: u8) {
        self.0.write(&[value]);
    }

    fn len(&mut self, len: usize) {
        // Strings and lists in a history are bounded far below 4 GiB (scenario limits).
        self.0.write(&(len as u32).to_le_bytes());
    }

    /// `t_ns`, `node`, then the kind.
    pub(super) fn event(&mut self, event: &Event) {
        event.t_ns.encode(self);
        event.node.encode(self);
        event.kind.encode(self);
    }
}

/// A value's encoding.
trait Encode {
    fn encode(&self, e: &mut Encoder<'_>);
}

impl Encode for u64 {
    fn encode(&self, e: &mut Encoder<'_>) {
        e.0.write(&self.to_le_bytes());
    }
}

impl Encode for f64 {
    fn encode(&self, e: &mut Encoder<'_>) {
        self.to_bits().encode(e);
    }
}

impl Encode for bool {
    fn encode(&self, e: &mut Encoder<'_>) {
        e.u8(u8::from(*self));
    }
}

impl Encode for String {
    fn encode(&self, e: &mut Encoder<'_>) {
        e.len(self.len());
        e.0.write(self.as_bytes());
    }
}

impl Encode for Option<u64> {
    fn encode(&self, e: &mut Encoder<'_>) {
        match self {
            None => e.u8(0),
            Some(value) => {
                e.u8(1);
                value.encode(e);
            }
        }
    }
}

impl Encode for Vec<String> {
    fn encode(&self, e: &mut Encoder<'_>) {
        e.len(self.len());
        for name in self {
            name.encode(e);
        }
    }
}

/// `Encode` for an enum: the variant's tag (its number here, never reused), then its fields
/// in declaration order. Every variant is listed, so a new one does not compile until it
/// has a tag.
macro_rules! tagged {
    ($enum:ident { $($tag:literal $variant:ident $({ $($field:ident),* $(,)? })?),* $(,)? }) => {
        impl Encode for $enum {
            fn encode(&self, e: &mut Encoder<'_>) {
                match self {
                    $($enum::$variant $({ $($field),* })? => {
                        e.u8($tag);
                        $($($field.encode(e);)*)?
                    })*
                }
            }
        }
    };
}

tagged!(PauseKind { 1 Gc, 2 VmSuspend });
tagged!(BeliefEnd {
    1 Released,
    2 RenewFailed,
    3 DeadlinePassed,
    4 CheckFailed,
    5 WriteRejected,
    6 Crashed,
});
tagged!(EffectVia { 1 Direct, 2 Outbox });
tagged!(Denial {
    1 Held { holder, token },
    2 LockDelay { until_ns },
    3 Conflict { version },
});
tagged!(Verdict {
    1 Accepted { previous },
    2 Rejected { accepted, reason },
});
tagged!(EventKind {
    1 RunStarted { seed, liveness_bound_ms },
    2 FaultsHealed,
    3 RunEnded,
    4 Granted { scope, holder, token, expires_mono_ms },
    5 Renewed { scope, holder, token },
    6 Refused { scope, holder, token, reason },
    7 Denied { scope, holder, denial },
    8 Expired { scope, holder, token },
    9 Released { scope, holder, token },
    10 TakenOver { scope, holder, token, by },
    11 Dropped { scope, holder, token },
    12 Extended { scope, holder, token, expires_mono_ms },
    13 CountersLost,
    14 WritePresented { op, resource, lease_scope, writer, token },
    15 WriteAccepted { op, resource, lease_scope, writer, token, previous },
    16 WriteRejected { op, resource, lease_scope, writer, token, accepted, reason },
    17 TokenRead { op, resource, writer, stored },
    18 Fence { resource, writer, token, verdict },
    19 StorageStateLost,
    20 BeliefStarted { scope, token, local_deadline_mono_ms },
    21 BeliefEnded { scope, token, why, local_mono_ms },
    22 WriteSent { op, resource, token },
    23 WriteAbandoned { op, resource, token, stored },
    24 RenewFailed { scope, token, reason },
    25 SideEffect { op, resource, lease_scope, worker, token, via },
    26 Paused { kind, planned_ms },
    27 Resumed { kind },
    28 ClockStepped { delta_ms, wall_ms, mono_ms },
    29 Crashed,
    30 Restarted,
    31 PartitionStarted { from, to, one_way },
    32 PartitionHealed { from, to, one_way },
    33 HoldStarted { from, to },
    34 HoldReleased { from, to, released },
    35 Panicked { message },
});
