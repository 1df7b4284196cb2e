//! Properties over generated histories: a correct reference system never trips the checker,
//! and one injected stale accept after a takeover always does.
//!
//! The reference: a lease service that grants (per scope, strictly increasing tokens) only
//! when the scope is free, and a storage that checks each write against the service's own
//! state in the same transaction (`same-store-txn`), so it accepts only the current holder's
//! token. Workers keep believing in and writing with stale tokens; the storage refuses them.

use std::collections::BTreeMap;

use fencesim_model::{
    history::{Event, EventKind, History},
    Invariant, Token, NS_PER_MS,
};
use proptest::prelude::*;

const WORKERS: [&str; 3] = ["w0", "w1", "w2"];
const SCOPES: [&str; 2] = ["job-a", "job-b"];
const LIVENESS_BOUND_MS: u64 = 100;

/// One step of the reference run: what to try, by whom, on which scope, after how long.
#[derive(Clone, Debug)]
struct Step {
    action: u8,
    worker: usize,
    scope: usize,
    after_ms: u64,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = (0u8..7, 0..WORKERS.len(), 0..SCOPES.len(), 0u64..20).prop_map(
        |(action, worker, scope, after_ms)| Step {
            action,
            worker,
            scope,
            after_ms,
        },
    );
    prop::collection::vec(step, 0..60)
}

#[derive(Default)]
struct Reference {
    history: History,
    t_ns: u64,
    next_token: BTreeMap<&'static str, Token>,
    /// The service's state: scope → (holder, token).
    held: BTreeMap<&'static str, (&'static str, Token)>,
    /// What each worker last got on each scope (it may be stale).
    believed: BTreeMap<(&'static str, &'static str), Token>,
    crashed: Vec<&'static str>,
    next_op: u64,
}

impl Reference {
    fn push(&mut self, node: &str, kind: EventKind) {
        self.history.push(self.t_ns, node, kind);
    }

    fn acquire(&mut self, worker: &'static str, scope: &'static str) {
        match self.held.get(scope) {
            Some(&(holder, token)) if holder == worker => {
                self.push(
                    "coordinator",
                    EventKind::Renewed {
                        scope: scope.into(),
                        holder: worker.into(),
                        token,
                    },
                );
            }
            Some(_) => {}
            None => {
                let next = self.next_token.entry(scope).or_insert(1);
                let token = *next;
                *next += 1;
                self.held.insert(scope, (worker, token));
                self.believed.insert((worker, scope), token);
                let grant = EventKind::Granted {
                    scope: scope.into(),
                    holder: worker.into(),
                    token,
                    expires_mono_ms: 0.0,
                };
                self.push("coordinator", grant);
                let belief = EventKind::BeliefStarted {
                    scope: scope.into(),
                    token,
                    local_deadline_mono_ms: 0.0,
                };
                self.push(worker, belief);
            }
        }
    }

    fn expire(&mut self, scope: &'static str) {
        if let Some((holder, token)) = self.held.remove(scope) {
            self.push(
                "coordinator",
                EventKind::Expired {
                    scope: scope.into(),
                    holder: holder.into(),
                    token,
                },
            );
        }
    }

    /// A takeover on `job-a`, so that the run has at least one.
    fn force_takeover(&mut self) {
        self.t_ns += NS_PER_MS;
        for worker in ["w0", "w1"] {
            self.expire("job-a");
            self.acquire(worker, "job-a");
        }
    }

    fn write(&mut self, worker: &'static str, scope: &'static str) {
        let Some(&token) = self.believed.get(&(worker, scope)) else {
            return;
        };
        self.next_op += 1;
        let op = self.next_op;
        let (resource, lease_scope, writer) =
            (scope.to_owned(), scope.to_owned(), worker.to_owned());
        self.push(
            worker,
            EventKind::WriteSent {
                op,
                resource: resource.clone(),
                token,
            },
        );
        let presented = EventKind::WritePresented {
            op,
            resource: resource.clone(),
            lease_scope: lease_scope.clone(),
            writer: writer.clone(),
            token,
        };
        self.push("storage", presented);
        let current = self.held.get(scope).copied();
        let kind = if current == Some((worker, token)) {
            EventKind::WriteAccepted {
                op,
                resource,
                lease_scope,
                writer,
                token,
                previous: None,
            }
        } else {
            let accepted = current.map(|(_, t)| t);
            EventKind::WriteRejected {
                op,
                resource,
                lease_scope,
                writer,
                token,
                accepted,
                reason: "not the holder".into(),
            }
        };
        self.push("storage", kind);
    }

    fn step(&mut self, step: &Step) {
        self.t_ns += step.after_ms * NS_PER_MS;
        let worker = WORKERS[step.worker];
        let scope = SCOPES[step.scope];
        let alive = !self.crashed.contains(&worker);
        match step.action {
            0 if alive => self.acquire(worker, scope),
            1 if alive => self.write(worker, scope),
            2 if alive => match self.held.get(scope) {
                Some(&(holder, token)) if holder == worker => {
                    self.push(
                        "coordinator",
                        EventKind::Renewed {
                            scope: scope.into(),
                            holder: worker.into(),
                            token,
                        },
                    );
                }
                _ => {
                    if let Some(&token) = self.believed.get(&(worker, scope)) {
                        self.push(
                            worker,
                            EventKind::RenewFailed {
                                scope: scope.into(),
                                token,
                                reason: "refused".into(),
                            },
                        );
                    }
                }
            },
            3 => self.expire(scope),
            4 if alive
                && self
                    .held
                    .get(scope)
                    .is_some_and(|&(holder, _)| holder == worker) =>
            {
                let (_, token) = self.held.remove(scope).expect("held");
                let released = EventKind::Released {
                    scope: scope.into(),
                    holder: worker.into(),
                    token,
                };
                self.push("coordinator", released);
            }
            5 if alive => {
                self.crashed.push(worker);
                self.push(worker, EventKind::Crashed);
            }
            6 if !alive => {
                self.crashed.retain(|&w| w != worker);
                self.believed.retain(|&(w, _), _| w != worker);
                self.push(worker, EventKind::Restarted);
            }
            _ => {}
        }
    }

    /// Heal, then make sure every written resource commits within the bound.
    fn finish(&mut self) {
        self.t_ns += NS_PER_MS;
        self.push("nemesis", EventKind::FaultsHealed);
        let healed_ns = self.t_ns;
        for worker in std::mem::take(&mut self.crashed) {
            self.believed.retain(|&(w, _), _| w != worker);
            self.push(worker, EventKind::Restarted);
        }
        let written: Vec<&'static str> = SCOPES
            .into_iter()
            .filter(|scope| {
                self.history.events.iter().any(|e| matches!(&e.kind, EventKind::WriteSent { resource, .. } if resource == scope))
            })
            .collect();
        for scope in written {
            // A holder that restarted has forgotten its lease: the service expires it.
            let current = self.held.get(scope).copied();
            let holder_knows = current
                .is_some_and(|(holder, token)| self.believed.get(&(holder, scope)) == Some(&token));
            if !holder_knows {
                self.expire(scope);
                self.acquire("w0", scope);
            }
            let (holder, _) = self.held[scope];
            self.write(holder, scope);
        }
        self.t_ns = healed_ns + LIVENESS_BOUND_MS * NS_PER_MS;
        self.push("nemesis", EventKind::RunEnded);
    }
}

fn reference_history(steps: &[Step], force_takeover: bool) -> History {
    let mut reference = Reference::default();
    reference.push(
        "nemesis",
        EventKind::RunStarted {
            seed: 1,
            liveness_bound_ms: LIVENESS_BOUND_MS,
        },
    );
    for step in steps {
        reference.step(step);
    }
    if force_takeover {
        reference.force_takeover();
    }
    reference.finish();
    reference.history
}

fn granted(event: &Event) -> Option<(&str, &str, Token)> {
    match &event.kind {
        EventKind::Granted {
            scope,
            holder,
            token,
            ..
        } => Some((scope, holder, *token)),
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_correct_reference_run_is_never_flagged(steps in steps()) {
        let history = reference_history(&steps, false);
        let checked = crate::check(&history);
        prop_assert!(checked.violations.is_empty(), "{:#?}\n{}", checked.violations, history.to_jsonl());
        let m = &checked.metrics;
        prop_assert_eq!(m.accepted_writes + m.stale_write_rejections, m.writes_presented);
        prop_assert_eq!((m.accepts_in_fence_window, m.takeovers <= m.acquisitions), (0, true));
    }

    #[test]
    fn a_stale_accept_after_a_takeover_is_always_flagged(
        steps in steps(),
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
    ) {
        let mut history = reference_history(&steps, true);
        // (old grant, the grant that superseded it with another holder)
        let mut takeovers: Vec<(usize, usize)> = Vec::new();
        let mut last_grant: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, event) in history.events.iter().enumerate() {
            let Some((scope, holder, _)) = granted(event) else { continue };
            if let Some(&old) = last_grant.get(scope) {
                if granted(&history.events[old]).is_some_and(|(_, old_holder, _)| old_holder != holder) {
                    takeovers.push((old, k));
                }
            }
            last_grant.insert(scope, k);
        }
        prop_assert!(!takeovers.is_empty(), "the forced takeover is missing");

        let (old, new) = takeovers[pick.index(takeovers.len())];
        let (scope, writer, token) = granted(&history.events[old]).map(|(s, h, t)| (s.to_owned(), h.to_owned(), t)).unwrap();
        // Insert anywhere after the superseding grant.
        let position = new + 1 + at.index(history.events.len() - new);
        let t_ns = history.events[position - 1].t_ns;
        let stale = Event {
            t_ns,
            node: "storage".into(),
            kind: EventKind::WriteAccepted {
                op: 999_999,
                resource: scope.clone(),
                lease_scope: scope.clone(),
                writer,
                token,
                previous: None,
            },
        };
        let higher_accepted_before = history.events[..position].iter().any(|e| {
            matches!(&e.kind, EventKind::WriteAccepted { resource, token: t, .. } if *resource == scope && *t > token)
        });
        history.events.insert(position, stale);

        let checked = crate::check(&history);
        let flagged = |invariant| checked.violations.iter().filter(move |v| v.invariant == invariant).collect::<Vec<_>>();
        let i4 = flagged(Invariant::I4);
        prop_assert_eq!(i4.len(), 1, "{:#?}", checked.violations);
        prop_assert_eq!(&i4[0].evidence, &vec![old, new, position]);
        let i3 = flagged(Invariant::I3);
        prop_assert_eq!(i3.len(), usize::from(higher_accepted_before), "{:#?}", checked.violations);
        if let Some(v) = i3.first() {
            prop_assert_eq!(v.evidence.last(), Some(&position));
        }
        prop_assert!(
            checked.violations.iter().all(|v| matches!(v.invariant, Invariant::I3 | Invariant::I4)),
            "{:#?}", checked.violations
        );
    }
}
