//! Hand-written histories: a tiny builder, one `check` helper, many small cases.

use fencesim_model::{
    fence::Verdict,
    history::{BeliefEnd, EffectVia, EventKind, History, PauseKind},
    Invariant, OpId, Token, NS_PER_MS,
};

use crate::{Checked, Metrics};

mod abstract_state;
mod coverage;
mod index;
mod invariants;
mod metrics;
mod outage;
mod properties;

/// Builds a history event by event; `at(ms)` sets the time of the events that follow.
/// Resources share their lease scope's name unless a method says otherwise.
#[derive(Clone, Default)]
pub(crate) struct H {
    history: History,
    t_ns: u64,
}

pub(crate) fn h() -> H {
    H::default()
}

impl H {
    pub fn at(mut self, ms: u64) -> H {
        self.t_ns = ms * NS_PER_MS;
        self
    }
    fn push(mut self, node: &str, kind: EventKind) -> H {
        self.history.push(self.t_ns, node, kind);
        self
    }
    pub fn build(self) -> History {
        self.history
    }

    // --- run --------------------------------------------------------------------------------
    pub fn run_started(self, liveness_bound_ms: u64) -> H {
        self.push(
            "nemesis",
            EventKind::RunStarted {
                seed: 7,
                liveness_bound_ms,
            },
        )
    }
    pub fn healed(self) -> H {
        self.push("nemesis", EventKind::FaultsHealed)
    }
    pub fn run_ended(self) -> H {
        self.push("nemesis", EventKind::RunEnded)
    }

    // --- lease service ------------------------------------------------------------------------
    pub fn grant(self, scope: &str, holder: &str, token: Token) -> H {
        let kind = EventKind::Granted {
            scope: scope.into(),
            holder: holder.into(),
            token,
            expires_mono_ms: 0.0,
        };
        self.push("coordinator", kind)
    }
    pub fn renew(self, scope: &str, holder: &str, token: Token) -> H {
        self.push(
            "coordinator",
            EventKind::Renewed {
                scope: scope.into(),
                holder: holder.into(),
                token,
            },
        )
    }
    pub fn expire(self, scope: &str, holder: &str, token: Token) -> H {
        self.push(
            "coordinator",
            EventKind::Expired {
                scope: scope.into(),
                holder: holder.into(),
                token,
            },
        )
    }
    pub fn taken_over(self, scope: &str, holder: &str, token: Token, by: &str) -> H {
        self.push(
            "coordinator",
            EventKind::TakenOver {
                scope: scope.into(),
                holder: holder.into(),
                token,
                by: by.into(),
            },
        )
    }
    pub fn release(self, scope: &str, holder: &str, token: Token) -> H {
        self.push(
            "coordinator",
            EventKind::Released {
                scope: scope.into(),
                holder: holder.into(),
                token,
            },
        )
    }
    pub fn drop_lease(self, scope: &str, holder: &str, token: Token) -> H {
        self.push(
            "coordinator",
            EventKind::Dropped {
                scope: scope.into(),
                holder: holder.into(),
                token,
            },
        )
    }
    pub fn extend(self, scope: &str, holder: &str, token: Token) -> H {
        let kind = EventKind::Extended {
            scope: scope.into(),
            holder: holder.into(),
            token,
            expires_mono_ms: 0.0,
        };
        self.push("coordinator", kind)
    }
    pub fn counters_lost(self) -> H {
        self.push("coordinator", EventKind::CountersLost)
    }

    // --- storage ------------------------------------------------------------------------------
    pub fn present(self, op: OpId, resource: &str, writer: &str, token: Token) -> H {
        let kind = EventKind::WritePresented {
            op,
            resource: resource.into(),
            lease_scope: resource.into(),
            writer: writer.into(),
            token,
        };
        self.push("storage", kind)
    }
    pub fn accept(self, op: OpId, resource: &str, writer: &str, token: Token) -> H {
        self.accept_on(op, resource, resource, writer, token)
    }
    pub fn accept_on(
        self,
        op: OpId,
        resource: &str,
        lease_scope: &str,
        writer: &str,
        token: Token,
    ) -> H {
        let kind = EventKind::WriteAccepted {
            op,
            resource: resource.into(),
            lease_scope: lease_scope.into(),
            writer: writer.into(),
            token,
            previous: None,
        };
        self.push("storage", kind)
    }
    pub fn reject(
        self,
        op: OpId,
        resource: &str,
        writer: &str,
        token: Token,
        accepted: Token,
    ) -> H {
        let kind = EventKind::WriteRejected {
            op,
            resource: resource.into(),
            lease_scope: resource.into(),
            writer: writer.into(),
            token,
            accepted: Some(accepted),
            reason: "stale".into(),
        };
        self.push("storage", kind)
    }
    pub fn fence(self, resource: &str, writer: &str, token: Token) -> H {
        let verdict = Verdict::Accepted { previous: None };
        self.push(
            "storage",
            EventKind::Fence {
                resource: resource.into(),
                writer: writer.into(),
                token,
                verdict,
            },
        )
    }
    pub fn fence_rejected(self, resource: &str, writer: &str, token: Token) -> H {
        let verdict = Verdict::Rejected {
            accepted: None,
            reason: "stale".into(),
        };
        self.push(
            "storage",
            EventKind::Fence {
                resource: resource.into(),
                writer: writer.into(),
                token,
                verdict,
            },
        )
    }

    // --- workers ------------------------------------------------------------------------------
    pub fn sent(self, worker: &str, op: OpId, resource: &str, token: Token) -> H {
        self.push(
            worker,
            EventKind::WriteSent {
                op,
                resource: resource.into(),
                token,
            },
        )
    }
    pub fn abandon(self, worker: &str, op: OpId, resource: &str, token: Token) -> H {
        self.push(
            worker,
            EventKind::WriteAbandoned {
                op,
                resource: resource.into(),
                token,
                stored: None,
            },
        )
    }
    pub fn renew_failed(self, worker: &str, scope: &str, token: Token) -> H {
        self.push(
            worker,
            EventKind::RenewFailed {
                scope: scope.into(),
                token,
                reason: "refused".into(),
            },
        )
    }
    pub fn side_effect(self, worker: &str, op: OpId, scope: &str, token: Token) -> H {
        let kind = EventKind::SideEffect {
            op,
            resource: scope.into(),
            lease_scope: scope.into(),
            worker: worker.into(),
            token,
            via: EffectVia::Direct,
        };
        self.push(worker, kind)
    }
    pub fn believe(self, worker: &str, scope: &str, token: Token) -> H {
        let kind = EventKind::BeliefStarted {
            scope: scope.into(),
            token,
            local_deadline_mono_ms: 0.0,
        };
        self.push(worker, kind)
    }
    pub fn disbelieve(self, worker: &str, scope: &str, token: Token) -> H {
        let kind = EventKind::BeliefEnded {
            scope: scope.into(),
            token,
            why: BeliefEnd::Released,
            local_mono_ms: 0.0,
        };
        self.push(worker, kind)
    }

    pub fn stand_down(self, worker: &str, scope: &str, token: Token, why: BeliefEnd) -> H {
        let kind = EventKind::BeliefEnded {
            scope: scope.into(),
            token,
            why,
            local_mono_ms: 0.0,
        };
        self.push(worker, kind)
    }

    // --- faults -------------------------------------------------------------------------------
    pub fn crash(self, node: &str) -> H {
        self.push(node, EventKind::Crashed)
    }
    pub fn restart(self, node: &str) -> H {
        self.push(node, EventKind::Restarted)
    }
    pub fn pause(self, node: &str) -> H {
        self.push(
            node,
            EventKind::Paused {
                kind: PauseKind::Gc,
                planned_ms: 100.0,
            },
        )
    }
    pub fn partition(self, from: &[&str], to: &[&str], one_way: bool) -> H {
        let kind = EventKind::PartitionStarted {
            from: from.iter().map(|n| n.to_string()).collect(),
            to: to.iter().map(|n| n.to_string()).collect(),
            one_way,
        };
        self.push("nemesis", kind)
    }
    pub fn heal(self, from: &[&str], to: &[&str], one_way: bool) -> H {
        let kind = EventKind::PartitionHealed {
            from: from.iter().map(|n| n.to_string()).collect(),
            to: to.iter().map(|n| n.to_string()).collect(),
            one_way,
        };
        self.push("nemesis", kind)
    }
    pub fn hold(self, from: &str, to: &str) -> H {
        let kind = EventKind::HoldStarted {
            from: from.into(),
            to: to.into(),
        };
        self.push("nemesis", kind)
    }
    pub fn release_hold(self, from: &str, to: &str) -> H {
        let kind = EventKind::HoldReleased {
            from: from.into(),
            to: to.into(),
            released: 0,
        };
        self.push("nemesis", kind)
    }
    pub fn resume(self, node: &str) -> H {
        self.push(
            node,
            EventKind::Resumed {
                kind: PauseKind::Gc,
            },
        )
    }
}

/// Asserts exactly these violations, as `(invariant, evidence)` in report order.
#[track_caller]
pub(crate) fn check(history: H, expected: &[(Invariant, &[usize])]) -> Checked {
    let checked = crate::check(&history.build());
    let actual: Vec<(Invariant, &[usize])> = checked
        .violations
        .iter()
        .map(|v| (v.invariant, v.evidence.as_slice()))
        .collect();
    assert_eq!(actual, expected, "violations: {:#?}", checked.violations);
    checked
}

/// The one message of the one violation of `invariant`.
#[track_caller]
pub(crate) fn message(checked: &Checked, invariant: Invariant) -> &str {
    let mut messages = checked
        .violations
        .iter()
        .filter(|v| v.invariant == invariant);
    let first = messages.next().expect("a violation of that invariant");
    assert!(messages.next().is_none(), "one violation of {invariant}");
    &first.message
}

pub(crate) fn metrics(history: H) -> Metrics {
    crate::check(&history.build()).metrics
}
