//! A worker process: acquire → (fence) → work → write(token) → renew in the background;
//! stops writing when renewal fails or its local deadline passes by its own clock.
//!
//! Its local deadline check happens before each unit of work (as `while lease.valid() {
//! work(); write(); }` loops do), so a pause during the work is the textbook stale write.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use fencesim_model::{
    belief::{deadline_after, Belief},
    fence::{ClientProtocol, Verdict, WriteRequest},
    history::{BeliefEnd, EffectVia, EventKind},
    lease::{ExpiredBy, Observation},
    ms_to_ns,
    nodes::{worker, COORDINATOR, STORAGE},
    policy::{Gate, LeaseState, RenewFailureCause, WorkerPolicy},
    rng::{stream, Rng},
    OpId, Scope, Token,
};
use fencesim_scenario::{DeadlineFrom, SideEffects, WorkerSpec};
use rand::Rng as _;

use crate::{
    node::{spawn_guarded, Endpoint},
    protocol::Msg,
    wait::lock,
    world::World,
};

struct Worker {
    name: String,
    world: Arc<World>,
    endpoint: Arc<Endpoint>,
    spec: WorkerSpec,
    /// When to renew, when to stop, what to check before the work and the write.
    policy: Arc<dyn WorkerPolicy>,
    /// Where writes go: the storage, or the coordinator for a lease-checking store.
    store_node: &'static str,
    protocol: ClientProtocol,
    /// This incarnation: the session the lease service knows it by.
    session: u64,
    /// client-go: candidates decide expiry by their own clock from what they observed.
    candidate_decides: bool,
    /// client-go: per scope, the record version last seen change and when (own mono).
    observed: Mutex<BTreeMap<Scope, Observation>>,
}

pub(crate) async fn run(world: Arc<World>, index: usize) {
    let name = worker(index);
    let incarnation = world.start_incarnation(&name);
    // One stream per incarnation: a restarted process draws afresh, deterministically.
    let mut rng = stream(world.seed, &format!("{name}/incarnation-{incarnation}"));
    let (checks_lease, protocol) = {
        let store = lock(&world.store);
        (store.checks_lease_state(), store.protocol())
    };
    let policy = (world.policy)(&world.scenario, &name);
    let me = Arc::new(Worker {
        endpoint: Endpoint::open(&world, &name),
        policy,
        spec: world.scenario.workers.clone(),
        store_node: if checks_lease { COORDINATOR } else { STORAGE },
        protocol,
        session: u64::from(incarnation),
        candidate_decides: world.scenario.lease.expired_by == ExpiredBy::Candidate,
        observed: Mutex::new(BTreeMap::new()),
        world,
        name,
    });
    let mut period = index;
    loop {
        let resource = me.spec.resources[period % me.spec.resources.len()].clone();
        let scope = me.world.scenario.lease_scope_of(&resource);
        match me.acquire(&scope).await {
            Some((token, deadline_mono_ns)) => {
                period += 1;
                me.clone()
                    .hold(&mut rng, scope, token, deadline_mono_ns, resource)
                    .await;
            }
            None => {
                let jitter = me.spec.acquire_retry_jitter;
                // No draw without jitter: the stream stays as it was for every other scenario.
                let factor = if jitter > 0.0 {
                    1.0 + rng.gen::<f64>() * jitter
                } else {
                    1.0
                };
                me.sleep_ms(me.spec.acquire_retry_ms as f64 * factor).await
            }
        }
    }
}

impl Worker {
    fn mono(&self) -> u64 {
        self.endpoint.mono_ns()
    }

    async fn sleep_ms(&self, ms: f64) {
        self.world.sleep_local(&self.name, ms_to_ns(ms)).await;
    }

    fn deadline_base(&self, sent_mono: u64) -> u64 {
        match self.spec.deadline_from {
            DeadlineFrom::RequestSent => sent_mono,
            DeadlineFrom::ReplyReceived => self.mono(),
        }
    }

    /// The local deadline after a grant or renewal requested at `sent_mono`.
    fn deadline_after(&self, sent_mono: u64) -> u64 {
        deadline_after(&*self.policy, self.deadline_base(sent_mono))
    }

    fn state(&self, belief: &Mutex<Belief>) -> LeaseState {
        let now = self.mono();
        lock(belief).state(now)
    }

    /// Carries out the policy's answer at a gate; false when the worker must stop.
    async fn pass(&self, gate: Gate, belief: &Mutex<Belief>, scope: &str, token: Token) -> bool {
        match gate {
            Gate::Go => true,
            Gate::Stop(why) => {
                self.end(belief, why);
                false
            }
            Gate::AskLease => {
                if self.check(scope, token).await {
                    true
                } else {
                    self.end(belief, BeliefEnd::CheckFailed);
                    false
                }
            }
        }
    }

    /// client-go's candidate step: read the record, remember when it last changed by this
    /// worker's clock, and say which version to compare-and-swap, if the worker may now.
    async fn observe(&self, scope: &str) -> Option<u64> {
        let target = scope.to_string();
        let reply = self
            .endpoint
            .call(
                COORDINATOR,
                |req| Msg::Get { req, scope: target },
                self.spec.request_timeout_ms,
            )
            .await;
        let Some(Msg::GetReply { record, .. }) = reply else {
            return None;
        };
        let lease_duration_ns =
            fencesim_model::whole_ms_to_ns(self.world.scenario.lease.effective_ttl_ms());
        let mut observed = lock(&self.observed);
        let mut seen = observed.get(scope).copied();
        let may = Observation::may_acquire(
            &mut seen,
            &record,
            &self.name,
            self.mono(),
            lease_duration_ns,
        );
        observed.insert(scope.to_string(), seen.expect("set by may_acquire"));
        may.then_some(record.version)
    }

    /// Returns the token and the local deadline.
    async fn acquire(&self, scope: &str) -> Option<(Token, u64)> {
        let expected = if self.candidate_decides {
            Some(self.observe(scope).await?)
        } else {
            None
        };
        let sent = self.mono();
        let scope = scope.to_string();
        let session = self.session;
        let reply = self
            .endpoint
            .call(
                COORDINATOR,
                |req| Msg::Acquire {
                    req,
                    scope,
                    session,
                    expected,
                },
                self.spec.request_timeout_ms,
            )
            .await;
        match reply {
            Some(Msg::AcquireReply {
                token: Some(token), ..
            }) => Some((token, self.deadline_after(sent))),
            _ => None,
        }
    }

    fn end(&self, belief: &Mutex<Belief>, why: BeliefEnd) {
        let now = self.mono();
        let ended = lock(belief).end(why, now);
        self.record_all(ended);
    }

    fn record_all(&self, events: impl IntoIterator<Item = EventKind>) {
        for event in events {
            self.world.record(&self.name, event);
        }
    }

    fn ended(&self, belief: &Mutex<Belief>) -> bool {
        lock(belief).is_ended()
    }

    /// A client that retries renewals until its deadline stops believing the moment the
    /// deadline passes without a renewal (client-go's RenewDeadline, ZooKeeper's readTimeout).
    async fn watch_deadline(&self, belief: Arc<Mutex<Belief>>) {
        loop {
            if self.ended(&belief) {
                return;
            }
            let left = lock(&belief).deadline_mono_ns.saturating_sub(self.mono());
            if left == 0 {
                self.end(&belief, BeliefEnd::DeadlinePassed);
                return;
            }
            self.world.sleep_local(&self.name, left).await;
        }
    }

    async fn hold(
        self: Arc<Self>,
        rng: &mut Rng,
        scope: Scope,
        token: Token,
        deadline_mono_ns: u64,
        resource: String,
    ) {
        let (belief, started) = Belief::start(&*self.policy, &scope, token, deadline_mono_ns);
        let watched = belief.watched;
        self.world.record(&self.name, started);
        let belief = Arc::new(Mutex::new(belief));
        let renewer = self.clone();
        let renew_belief = belief.clone();
        spawn_guarded(&self.world, &self.name, async move {
            renewer.renew_loop(renew_belief).await
        });
        // A client that retries renewals until its deadline (the built-in policy without
        // `stop_on_renew_failure`) stops at it; a deadline that never comes needs no timer.
        if watched {
            let watcher = self.clone();
            let watched = belief.clone();
            spawn_guarded(&self.world, &self.name, async move {
                watcher.watch_deadline(watched).await
            });
        }

        if self.protocol == ClientProtocol::FenceThenWrite
            && !self.fence(&belief, &scope, &resource, token).await
        {
            self.release(&belief, &scope, token).await;
            return;
        }
        for _ in 0..self.spec.writes_per_lease {
            if self.ended(&belief) {
                break;
            }
            let gate = self.policy.before_work(&self.state(&belief));
            if !self.pass(gate, &belief, &scope, token).await {
                break;
            }
            let op = self.world.next_op();
            // Read-modify-write: the stored token is read and compared before the work, the
            // write after it is unconditional. A pause during the work is the TOCTOU race.
            if self.protocol == ClientProtocol::ReadThenWrite {
                match self.read_stored(op, &resource, token).await {
                    Some(true) => {}
                    Some(false) => {
                        self.end(&belief, BeliefEnd::WriteRejected);
                        break;
                    }
                    None => continue,
                }
            }
            let work_ms = self.spec.work_ms.sample(rng);
            self.sleep_ms(work_ms).await;
            if self.ended(&belief) {
                break;
            }
            let gate = self.policy.before_write(&self.state(&belief));
            if !self.pass(gate, &belief, &scope, token).await {
                break;
            }
            if !self.write(&belief, op, &scope, token, &resource).await {
                break;
            }
        }
        self.release(&belief, &scope, token).await;
    }

    /// Ends the lease period, however it ended: gives the lease back and waits for the
    /// coordinator to confirm, so a re-acquire cannot overtake the release (an acquire by the
    /// holder is answered "already held", and the late release would then drop the lease
    /// under a worker that goes on writing). Without a confirmation in time the worker moves
    /// on, as a real client must.
    async fn release(&self, belief: &Mutex<Belief>, scope: &str, token: Token) {
        self.end(belief, BeliefEnd::Released);
        let scope = scope.to_string();
        self.endpoint
            .call(
                COORDINATOR,
                |req| Msg::Release { req, scope, token },
                self.spec.request_timeout_ms,
            )
            .await;
    }

    /// Raises the resource's epoch before the first write; false if the store refused or
    /// the deadline passed while retrying.
    async fn fence(
        &self,
        belief: &Mutex<Belief>,
        scope: &str,
        resource: &str,
        token: Token,
    ) -> bool {
        loop {
            let gate = self.policy.before_work(&self.state(belief));
            if !self.pass(gate, belief, scope, token).await {
                return false;
            }
            let resource = resource.to_string();
            let reply = self
                .endpoint
                .call(
                    self.store_node,
                    |req| Msg::Fence {
                        req,
                        resource,
                        token,
                    },
                    self.spec.request_timeout_ms,
                )
                .await;
            match reply {
                Some(Msg::FenceReply {
                    verdict: Verdict::Accepted { .. },
                    ..
                }) => return true,
                Some(Msg::FenceReply {
                    verdict: Verdict::Rejected { .. },
                    ..
                }) => {
                    self.end(belief, BeliefEnd::WriteRejected);
                    return false;
                }
                _ => continue,
            }
        }
    }

    async fn check(&self, scope: &str, token: Token) -> bool {
        let scope = scope.to_string();
        let reply = self
            .endpoint
            .call(
                COORDINATOR,
                |req| Msg::Check { req, scope, token },
                self.spec.request_timeout_ms,
            )
            .await;
        matches!(reply, Some(Msg::CheckReply { holds: true, .. }))
    }

    /// Reads the stored token for read-then-write: `Some(true)` to go ahead, `Some(false)`
    /// when a newer token is stored (the write is abandoned), `None` when no reply came.
    async fn read_stored(&self, op: OpId, resource: &str, token: Token) -> Option<bool> {
        let target = resource.to_string();
        let reply = self
            .endpoint
            .call(
                self.store_node,
                |req| Msg::ReadToken {
                    req,
                    op,
                    resource: target,
                },
                self.spec.request_timeout_ms,
            )
            .await;
        let Some(Msg::ReadTokenReply { stored, .. }) = reply else {
            return None;
        };
        if stored.is_some_and(|stored| stored > token) {
            self.world.record(
                &self.name,
                EventKind::WriteAbandoned {
                    op,
                    resource: resource.to_string(),
                    token,
                    stored,
                },
            );
            return Some(false);
        }
        Some(true)
    }

    /// One protected write; false when the worker must stop holding.
    async fn write(
        &self,
        belief: &Mutex<Belief>,
        op: OpId,
        scope: &str,
        token: Token,
        resource: &str,
    ) -> bool {
        if self.spec.side_effects == SideEffects::Direct {
            // The external call happens before the fenced write: nothing checks its token.
            self.world.record(
                &self.name,
                EventKind::SideEffect {
                    op,
                    resource: resource.to_string(),
                    lease_scope: scope.to_string(),
                    worker: self.name.clone(),
                    token,
                    via: EffectVia::Direct,
                },
            );
        }
        self.world.record(
            &self.name,
            EventKind::WriteSent {
                op,
                resource: resource.to_string(),
                token,
            },
        );
        let request = WriteRequest {
            op,
            resource: resource.to_string(),
            lease_scope: scope.to_string(),
            writer: self.name.clone(),
            token,
            payload: format!("output of op {op}"),
        };
        let outbox = self.spec.side_effects == SideEffects::Outbox;
        let reply = self
            .endpoint
            .call(
                self.store_node,
                |req| Msg::Write {
                    req,
                    request,
                    outbox,
                },
                self.spec.request_timeout_ms,
            )
            .await;
        if let Some(Msg::WriteReply {
            verdict: Verdict::Rejected { .. },
            ..
        }) = reply
        {
            self.end(belief, BeliefEnd::WriteRejected);
            return false;
        }
        true
    }

    async fn renew_loop(self: Arc<Self>, belief: Arc<Mutex<Belief>>) {
        let (scope, token) = {
            let belief = lock(&belief);
            (belief.scope.clone(), belief.token)
        };
        loop {
            self.sleep_ms(self.policy.renew_every_ms() as f64).await;
            if self.ended(&belief) {
                return;
            }
            let sent = self.mono();
            let renew_scope = scope.clone();
            let reply = self
                .endpoint
                .call(
                    COORDINATOR,
                    |req| Msg::Renew {
                        req,
                        scope: renew_scope,
                        token,
                    },
                    self.spec.request_timeout_ms,
                )
                .await;
            if self.ended(&belief) {
                return;
            }
            if lock(&belief).too_late(self.mono()) {
                // The client has stopped believing; a late success changes nothing.
                self.end(&belief, BeliefEnd::DeadlinePassed);
                return;
            }
            let (reason, cause) = match reply {
                Some(Msg::RenewReply { ok: true, .. }) => {
                    let deadline = self.deadline_after(sent);
                    lock(&belief).renewed(deadline);
                    continue;
                }
                Some(Msg::RenewReply { reason, .. }) => (reason, RenewFailureCause::Refused),
                _ => (
                    "no reply (timeout)".to_string(),
                    RenewFailureCause::Unanswered,
                ),
            };
            let now = self.mono();
            let (events, keep_renewing) =
                lock(&belief).renew_failed(&*self.policy, reason, cause, now);
            self.record_all(events);
            if !keep_renewing {
                return;
            }
        }
    }
}
