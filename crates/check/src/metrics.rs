//! What happened in a run, counted from the history alone (docs/spec.md, "Metrics per run").
//!
//! Epochs are judged as in I4: a token's epoch on a scope is superseded once any later
//! `Granted` on that scope exists; a token never granted has no epoch and is not counted as
//! superseded (I4 reports it instead).

mod availability;

use std::collections::{BTreeMap, BTreeSet};

use fencesim_model::{
    history::{BeliefEnd, Event, EventKind, PauseKind},
    nodes,
};
use fencesim_planted::{active, Mutant};
use serde::{Deserialize, Serialize};

use crate::{
    index::{ns_to_ms, Epoch, FenceStatus, Index},
    outage::{Causes, LossCause},
};

/// Counters and latencies of one run. Times are true (god's-eye) times in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// `Granted` events.
    pub acquisitions: u64,
    /// `Renewed` events (renewals and acquire retries by the current holder).
    pub renewals: u64,
    /// Worker-side `RenewFailed` events (refused or timed out).
    pub renewal_failures: u64,
    /// Grants whose scope's previous grant went to a different holder.
    pub takeovers: u64,
    /// Tokens issued (one per `Granted`).
    pub tokens_allocated: u64,
    /// `Expired` and `TakenOver` events (a client-go takeover is the candidate's expiry).
    pub expiries: u64,
    /// Expiries while the holder was alive (not between its `Crashed` and next `Restarted`):
    /// paused or slow, not dead. An expiry of a lease granted to an incarnation that has
    /// crashed since, and that the restarted process did not resume (no `BeliefStarted` with
    /// that token after the crash), is not false: that holder is dead even if its node runs
    /// again.
    pub false_expiries: u64,
    /// Expiries while the holder was inside a `Paused`..`Resumed` interval.
    pub paused_expiries: u64,
    /// `WriteSent` events.
    pub writes_sent: u64,
    /// `WritePresented` events.
    pub writes_presented: u64,
    /// `WriteAccepted` events.
    pub accepted_writes: u64,
    /// `WriteRejected` events.
    pub stale_write_rejections: u64,
    /// False rejections: `WriteRejected` events whose token's epoch was still current (its
    /// grant is the newest on its scope at the rejection, judged as in I4) and still held by
    /// the service (not yet expired, released, taken over or dropped), e.g. after a volatile
    /// counter restart handed out a token below the stored one.
    pub current_write_rejections: u64,
    /// `WriteAbandoned` events.
    pub writes_abandoned: u64,
    /// `SideEffect` events.
    pub side_effects: u64,
    /// Side effects whose token's epoch had already been superseded when they happened.
    pub superseded_side_effects: u64,
    /// Writes presented at the storage with a superseded token.
    pub stale_presented: u64,
    /// Accepted writes from a superseded epoch whose superseding grant's fence reached the
    /// storage only after the accept.
    pub accepts_in_fence_window: u64,
    /// Per crash of a node that held a lease in the service's state: time from the crash
    /// until some worker next believes it holds that scope (`BeliefStarted` after the crash):
    /// another worker, or the restarted node as a new incarnation, whether the service granted
    /// it a new lease or handed back its old one. Absent if nobody held it again.
    ///
    /// (Earlier this waited for a grant to a *different* holder, which reported
    /// 135 s for a lease whose restarted owner resumed it 9.5 s after the crash.)
    pub takeover_latency_ms: Vec<f64>,
    /// Takeovers (grants to a different holder than the scope's previous grant) whose previous
    /// holder crashed while the service held its lease (the `takeover-after-crash` coverage
    /// condition). One per takeover; see `takeovers_after_stall` for how causes add up.
    pub takeovers_after_crash: u64,
    /// Per crash of a node that held a lease in the service's state: time from the crash to
    /// the first accepted write on that scope by a worker whose belief began after the crash
    /// (another worker, or the restarted node). Absent if there was none.
    pub recovery_after_crash_ms: Vec<f64>,
    /// Per pause (GC or VM suspend) of a node holding a lease that ended in takeover (the
    /// service granted the scope to another holder before the node resumed): time from the
    /// start of the pause to the first accepted write on that scope by another worker whose
    /// belief began after the pause started. Absent if there was none.
    pub recovery_after_stall_ms: Vec<f64>,
    /// Stand-downs: a live holder gave up although the service still held its lease. A
    /// `BeliefEnded` with `renew-failed`, `deadline-passed` or `check-failed` by a worker that
    /// is not crashed, while the service's tenure for that scope, holder and token was still
    /// open (not expired, released or dropped) — e.g. renewals failing during a lease-service
    /// outage or partition, or a local deadline shorter than the service's TTL.
    pub stand_downs: u64,
    /// Stand-downs caused by an outage: ones that would not have happened without it
    /// (`crate::outage`, the one definition: not after a crash of the holder, not when a stall
    /// of the holder alone would have ended the lease, and the holder's run of failed renewals
    /// began inside an outage of it — the lease service down or its link to it cut — even if
    /// the stand-down landed after the outage ended): a holder that did not survive an outage.
    pub outage_stand_downs: u64,
    /// Takeovers caused by an outage: the previous holder did not crash while holding the
    /// lease, did not hand it on (a release with no stand-down before it), and lost it to an
    /// outage (`crate::outage`: its expiry, its record taken over, its lease dropped, or the
    /// stand-down before its release, was the outage's). One of the takeover causes below.
    #[serde(default)]
    pub outage_takeovers: u64,
    /// False expiries (`false_expiries`) caused by an outage of their holder (as above).
    #[serde(default)]
    pub outage_false_expiries: u64,
    /// Rejected current writes (`current_write_rejections`) caused by an outage of the
    /// writer (as above, judged at the rejection).
    #[serde(default)]
    pub outage_current_write_rejections: u64,
    /// Takeovers whose previous holder stalled (GC pause or VM suspend) and lost the lease to
    /// time (its tenure expired, was taken over or dropped, or it stood down and released),
    /// without a crash or an outage: a stall that alone would have ended the lease (see
    /// `crate::outage`), or, when no outage caused the loss either, any pause at the holder's
    /// last contact with the service or after it. Each takeover has at most one cause, tried
    /// in the order crash, stall that alone would have ended it, outage, other stall, so
    /// `takeovers = takeovers_after_crash + takeovers_after_stall + outage_takeovers +`
    /// handoffs with none of these causes (a release after the holder's writes, or a
    /// stand-down for another reason).
    #[serde(default)]
    pub takeovers_after_stall: u64,
    /// Total time during which at least one worker was in an outage (`crate::outage`), ms.
    #[serde(default)]
    pub outage_ms: f64,
    /// The run's fault exposure: from its start to `FaultsHealed` (or to its end if faults
    /// never healed), ms. The denominator of per-hour rates of fault-caused events; `run_ms`
    /// also counts the fault-free liveness phase.
    #[serde(default)]
    pub fault_window_ms: f64,
    /// Faults that actually began, per fault kind, read from the history's fault events.
    #[serde(default)]
    pub faults_begun: FaultsBegun,
    /// Share of scope-time (scopes ever granted × run length) during which no worker was
    /// doing work: no worker that is neither crashed nor paused believed it held the scope
    /// under its newest grant. 0 when no scope was ever granted.
    pub unavailability: f64,
    /// Renewal requests that reached the service: `Renewed` events plus renewals it refused.
    pub renew_requests: u64,
    /// Total time leases were held in the service's state, summed over tenures.
    pub lease_held_ms: f64,
    /// Length of the run (until `RunEnded`, else the last event): the denominator of rates
    /// such as false expiries per hour.
    pub run_ms: f64,
    /// Per grant later fenced by its holder with its token: grant → first accepted fence.
    pub fence_window_ms: Vec<f64>,
    /// Longest tenure in the service's state (grant → expiry / release / drop, or run end).
    pub lease_age_ms_max: f64,
    /// Mean tenure in the service's state.
    pub lease_age_ms_mean: f64,
    /// `BeliefStarted` events that began while another worker believed it held the scope.
    pub overlapping_beliefs: u64,
    /// Time during which two or more workers believed they held the same scope, summed over
    /// scopes.
    pub overlapping_belief_ms: f64,
}

/// Faults that began in a run, per kind (named as in scenario files), counted from the
/// history: `Paused` (GC or VM suspend), `ClockStepped`, `PartitionStarted` (a `partition` or
/// a `holder-link-cut`: both record it), `HoldStarted`, `Crashed` (of the coordinator, the
/// storage or a worker) and `Panicked` events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct FaultsBegun {
    /// `gc-pause`.
    pub gc_pause: u64,
    /// `vm-suspend`.
    pub vm_suspend: u64,
    /// `clock-step`.
    pub clock_step: u64,
    /// `partition` and `holder-link-cut`.
    pub partition: u64,
    /// `hold-release`.
    pub hold_release: u64,
    /// `coordinator-restart`.
    pub coordinator_restart: u64,
    /// `storage-restart`.
    pub storage_restart: u64,
    /// `worker-crash`.
    pub worker_crash: u64,
    /// `panic` (an injected panic, or a bug).
    pub panic: u64,
}

impl FaultsBegun {
    /// The count for a fault kind's name (`"gc-pause"`, ...); `holder-link-cut` shares the
    /// `partition` count. `None` for an unknown name.
    pub fn get(&self, kind: &str) -> Option<u64> {
        Some(match kind {
            "gc-pause" => self.gc_pause,
            "vm-suspend" => self.vm_suspend,
            "clock-step" => self.clock_step,
            "partition" | "holder-link-cut" => self.partition,
            "hold-release" => self.hold_release,
            "coordinator-restart" => self.coordinator_restart,
            "storage-restart" => self.storage_restart,
            "worker-crash" => self.worker_crash,
            "panic" => self.panic,
            _ => return None,
        })
    }

    fn count(&mut self, event: &Event) {
        let node = event.node.as_str();
        match &event.kind {
            EventKind::Paused {
                kind: PauseKind::Gc,
                ..
            } => self.gc_pause += 1,
            EventKind::Paused {
                kind: PauseKind::VmSuspend,
                ..
            } => self.vm_suspend += 1,
            EventKind::ClockStepped { .. } => self.clock_step += 1,
            EventKind::PartitionStarted { .. } => self.partition += 1,
            EventKind::HoldStarted { .. } => self.hold_release += 1,
            EventKind::Crashed if node == nodes::COORDINATOR => self.coordinator_restart += 1,
            EventKind::Crashed if node == nodes::STORAGE => self.storage_restart += 1,
            EventKind::Crashed => self.worker_crash += 1,
            EventKind::Panicked { .. } => self.panic += 1,
            _ => {}
        }
    }
}

/// The metrics of `index`'s history; `causes` is built from the same history
/// ([`Causes::new`]; the checker builds one for the metrics and the abstract-state walk).
pub(crate) fn compute(index: &Index<'_>, causes: &Causes<'_>) -> Metrics {
    let mut m = Metrics::default();
    grant_metrics(index, &mut m);
    count_events(index, causes, &mut m);
    service_metrics(index, &mut m);
    belief_metrics(index, &mut m);
    recovery_metrics(index, causes, &mut m);
    takeover_causes(index, causes, &mut m);
    availability::availability_metrics(index, &mut m);
    m.outage_ms = causes.union_ms;
    m.fault_window_ms = index
        .events()
        .iter()
        .find(|e| matches!(e.kind, EventKind::FaultsHealed))
        .map_or(index.end_ns(), |e| e.t_ns) as f64
        / fencesim_model::NS_PER_MS as f64;
    for event in index.events() {
        m.faults_begun.count(event);
    }
    m
}

/// Per grant: acquisitions, tokens allocated, and the grant → first fence window.
fn grant_metrics(index: &Index<'_>, m: &mut Metrics) {
    for tenure in index.tenures() {
        m.acquisitions += 1;
        m.tokens_allocated += 1;
        if let Some(fence) = index.first_fence_by(&tenure.holder, tenure.token, tenure.grant) {
            m.fence_window_ms
                .push(index.t_ms(fence) - index.t_ms(tenure.grant));
        }
    }
}

/// Per-event counters, expiries and epoch judgements of writes: one pass.
fn count_events(index: &Index<'_>, causes: &Causes<'_>, m: &mut Metrics) {
    let mut nodes = NodeStates::default();
    for (k, event) in index.events().iter().enumerate() {
        match &event.kind {
            EventKind::Renewed { .. } => {
                m.renewals += 1;
                m.renew_requests += 1;
            }
            EventKind::Refused { token: Some(_), .. } => m.renew_requests += 1,
            EventKind::RenewFailed { .. } => m.renewal_failures += 1,
            EventKind::Expired { .. } | EventKind::TakenOver { .. } => {
                nodes.count_expiry(index, causes, k, m);
            }
            _ => count_write(index, causes, k, m),
        }
        nodes.observe(k, event);
    }
}

/// What the expiry metrics know of the nodes as of an event: which are crashed or paused,
/// each one's last crash, and each `(node, scope, token)`'s last `BeliefStarted`.
#[derive(Default)]
struct NodeStates<'h> {
    crashed: BTreeSet<&'h str>,
    paused: BTreeSet<&'h str>,
    last_crash: BTreeMap<&'h str, usize>,
    last_belief: BTreeMap<(&'h str, &'h str, u64), usize>,
}

impl<'h> NodeStates<'h> {
    /// Event `k` happened.
    fn observe(&mut self, k: usize, event: &'h Event) {
        let node = event.node.as_str();
        match &event.kind {
            EventKind::BeliefStarted { scope, token, .. } => {
                self.last_belief.insert((node, scope.as_str(), *token), k);
            }
            EventKind::Crashed => {
                self.last_crash.insert(node, k);
                self.crashed.insert(node);
                // A dead process is not paused; `Resumed` would not follow.
                self.paused.remove(node);
            }
            EventKind::Restarted => {
                self.crashed.remove(node);
            }
            EventKind::Paused { .. } => {
                self.paused.insert(node);
            }
            EventKind::Resumed { .. } => {
                self.paused.remove(node);
            }
            _ => {}
        }
    }

    /// Expiry `k` (an `Expired` or a `TakenOver`): false, outage-caused, while paused.
    fn count_expiry(&self, index: &Index<'_>, causes: &Causes<'_>, k: usize, m: &mut Metrics) {
        let (EventKind::Expired {
            holder,
            scope,
            token,
        }
        | EventKind::TakenOver {
            holder,
            scope,
            token,
            ..
        }) = &index.events()[k].kind
        else {
            return;
        };
        m.expiries += 1;
        let holder_died = index.tenure_ended_by(k).is_some_and(|tenure| {
            self.last_crash.get(holder.as_str()).is_some_and(|&crash| {
                crash > tenure.grant
                    && self
                        .last_belief
                        .get(&(holder.as_str(), scope.as_str(), *token))
                        .is_none_or(|&belief| belief < crash)
            })
        });
        if !self.crashed.contains(holder.as_str()) && !holder_died {
            m.false_expiries += 1;
            if causes.loss(holder, scope, *token, k) == LossCause::Outage {
                m.outage_false_expiries += 1;
            }
        }
        if active(Mutant::MetricPausedExpiryAnyExpiry) {
            // The planted bug: every expiry counts as an expiry while paused.
            m.paused_expiries += 1;
        } else if self.paused.contains(holder.as_str()) {
            m.paused_expiries += 1;
        }
    }
}

/// Write and side-effect event `k` (any other event is ignored): counted, and judged by its
/// epoch as in I4.
fn count_write(index: &Index<'_>, causes: &Causes<'_>, k: usize, m: &mut Metrics) {
    let superseded = |scope: &str, writer: &str, token: u64| {
        matches!(
            index.epoch(scope, writer, token, k),
            Epoch::Superseded { .. }
        )
    };
    match &index.events()[k].kind {
        EventKind::WriteSent { .. } => m.writes_sent += 1,
        EventKind::WritePresented {
            lease_scope,
            writer,
            token,
            ..
        } => {
            m.writes_presented += 1;
            if superseded(lease_scope, writer, *token) {
                m.stale_presented += 1;
            }
        }
        EventKind::WriteAccepted {
            resource,
            lease_scope,
            writer,
            token,
            ..
        } => {
            m.accepted_writes += 1;
            if active(Mutant::MetricStaleRejectionCountsAccepts) {
                m.stale_write_rejections += 1;
            }
            if let Epoch::Superseded { grant, .. } = index.epoch(lease_scope, writer, *token, k) {
                if matches!(
                    index.fence_status(lease_scope, resource, grant, k),
                    FenceStatus::InWindow { .. }
                ) {
                    m.accepts_in_fence_window += 1;
                }
            }
        }
        EventKind::WriteRejected {
            lease_scope,
            writer,
            token,
            ..
        } => {
            m.stale_write_rejections += 1;
            if rejected_current(index, k, lease_scope, writer, *token) {
                m.current_write_rejections += 1;
                if causes.loss(writer, lease_scope, *token, k) == LossCause::Outage {
                    m.outage_current_write_rejections += 1;
                }
            }
        }
        EventKind::WriteAbandoned { .. } => m.writes_abandoned += 1,
        EventKind::SideEffect {
            lease_scope,
            worker,
            token,
            ..
        } => {
            m.side_effects += 1;
            if superseded(lease_scope, worker, *token) {
                m.superseded_side_effects += 1;
            }
        }
        _ => {}
    }
}

/// Whether the rejected write `k` was a false rejection: its epoch is the newest on its scope
/// and the service still held it (a write whose lease had ended is rightly refused).
fn rejected_current(index: &Index<'_>, k: usize, scope: &str, writer: &str, token: u64) -> bool {
    if active(Mutant::MetricCurrentRejectionCountsAll) {
        // The planted bug counts every rejection as a rejection of a current write.
        return true;
    }
    match index.epoch(scope, writer, token, k) {
        Epoch::Current { grant } => index.held_before(grant, k),
        _ => false,
    }
}

/// Lease ages and time held, from the service's tenures.
fn service_metrics(index: &Index<'_>, m: &mut Metrics) {
    let ages: Vec<f64> = index
        .tenures()
        .iter()
        .map(|tenure| {
            let end_ns = tenure
                .end
                .map_or(index.end_ns(), |end| index.events()[end].t_ns);
            ns_to_ms(end_ns.saturating_sub(index.events()[tenure.grant].t_ns))
        })
        .collect();
    m.lease_age_ms_max = ages.iter().copied().fold(0.0, f64::max);
    m.lease_age_ms_mean = if ages.is_empty() {
        0.0
    } else {
        ages.iter().sum::<f64>() / ages.len() as f64
    };

    m.lease_held_ms = ages.iter().sum();
    m.run_ms = ns_to_ms(index.end_ns());
}

/// Overlapping beliefs: a belief opens on `BeliefStarted` (replacing the node's previous
/// belief on that scope) and closes on `BeliefEnded` with its token or on the node's crash.
fn belief_metrics(index: &Index<'_>, m: &mut Metrics) {
    // Per scope: believing node → token, and since when two or more nodes believed.
    let mut believers: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    let mut overlap_since: BTreeMap<&str, u64> = BTreeMap::new();
    let mut overlap_ns: u64 = 0;

    for event in index.events() {
        let node = event.node.as_str();
        let touched: Vec<&str> = match &event.kind {
            EventKind::BeliefStarted { scope, token, .. } => {
                let on_scope = believers.entry(scope).or_default();
                if on_scope.keys().any(|&other| other != node) {
                    m.overlapping_beliefs += 1;
                }
                on_scope.insert(node, *token);
                vec![scope.as_str()]
            }
            EventKind::BeliefEnded { scope, token, .. } => {
                let on_scope = believers.entry(scope).or_default();
                if on_scope.get(node) == Some(token) {
                    on_scope.remove(node);
                }
                vec![scope.as_str()]
            }
            EventKind::Crashed => believers
                .iter_mut()
                .filter_map(|(scope, on_scope)| on_scope.remove(node).map(|_| *scope))
                .collect(),
            _ => continue,
        };
        for scope in touched {
            let overlapping = believers.get(scope).is_some_and(|b| b.len() >= 2);
            match (overlapping, overlap_since.get(scope).copied()) {
                (true, None) => {
                    overlap_since.insert(scope, event.t_ns);
                }
                (false, Some(since)) => {
                    overlap_ns += event.t_ns - since;
                    overlap_since.remove(scope);
                }
                _ => {}
            }
        }
    }
    overlap_ns += overlap_since
        .values()
        .map(|&since| index.end_ns().saturating_sub(since))
        .sum::<u64>();
    m.overlapping_belief_ms = ns_to_ms(overlap_ns);
}

/// The first `BeliefStarted` on `scope` after event `after` by a worker accepted by `who`.
fn first_belief_after(
    index: &Index<'_>,
    scope: &str,
    after: usize,
    who: impl Fn(&str) -> bool,
) -> Option<usize> {
    index.events()[after + 1..]
        .iter()
        .position(|event| {
            matches!(&event.kind, EventKind::BeliefStarted { scope: s, .. } if s == scope)
                && who(&event.node)
        })
        .map(|offset| after + 1 + offset)
}

/// The first `WriteAccepted` on lease scope `scope` after event `after` whose writer is
/// accepted by `who` and started believing it held `scope` after `after`.
fn first_write_after(
    index: &Index<'_>,
    scope: &str,
    after: usize,
    who: impl Fn(&str) -> bool,
) -> Option<usize> {
    let mut believers: BTreeSet<&str> = BTreeSet::new();
    for (k, event) in index.events().iter().enumerate().skip(after + 1) {
        match &event.kind {
            EventKind::BeliefStarted { scope: s, .. } if s == scope && who(&event.node) => {
                believers.insert(event.node.as_str());
            }
            EventKind::WriteAccepted {
                lease_scope,
                writer,
                ..
            } if lease_scope == scope && believers.contains(writer.as_str()) => return Some(k),
            _ => {}
        }
    }
    None
}

/// Takeover latency, recovery after a crash or a stall, and stand-downs.
fn recovery_metrics(index: &Index<'_>, causes: &Causes<'_>, m: &mut Metrics) {
    for (k, event) in index.events().iter().enumerate() {
        let node = event.node.as_str();
        match &event.kind {
            EventKind::Crashed if node == nodes::COORDINATOR => {}
            EventKind::Crashed => {
                for tenure in index
                    .tenures()
                    .iter()
                    .filter(|t| t.holder == node && t.open_before(k))
                {
                    let scope = tenure.scope.as_str();
                    if let Some(held) = first_belief_after(index, scope, k, |_| true) {
                        m.takeover_latency_ms.push(index.t_ms(held) - index.t_ms(k));
                    }
                    if let Some(write) = first_write_after(index, scope, k, |_| true) {
                        m.recovery_after_crash_ms
                            .push(index.t_ms(write) - index.t_ms(k));
                    }
                }
            }
            EventKind::Paused { .. } => {
                let resumed = index.events()[k + 1..]
                    .iter()
                    .position(|e| {
                        e.node == node
                            && matches!(e.kind, EventKind::Resumed { .. } | EventKind::Crashed)
                    })
                    .map_or(index.events().len(), |offset| k + 1 + offset);
                for tenure in index
                    .tenures()
                    .iter()
                    .filter(|t| t.holder == node && t.open_before(k))
                {
                    let scope = tenure.scope.as_str();
                    let taken_over = index
                        .grants_between(scope, k, resumed)
                        .iter()
                        .any(|g| g.holder != node);
                    if !taken_over {
                        continue;
                    }
                    if let Some(write) = first_write_after(index, scope, k, |w| w != node) {
                        m.recovery_after_stall_ms
                            .push(index.t_ms(write) - index.t_ms(k));
                    }
                }
            }
            EventKind::BeliefEnded {
                scope,
                token,
                why: BeliefEnd::RenewFailed | BeliefEnd::DeadlinePassed | BeliefEnd::CheckFailed,
                ..
            } => {
                let still_held = index.tenures().iter().any(|t| {
                    t.scope == *scope && t.holder == node && t.token == *token && t.open_before(k)
                });
                // During a lease-service outage its state is frozen: a lease it still holds
                // counts, which is exactly the stand-down an outage provokes.
                if still_held {
                    m.stand_downs += 1;
                    if causes.loss(node, scope, *token, k) == LossCause::Outage {
                        m.outage_stand_downs += 1;
                    }
                }
            }
            _ => {}
        }
    }
}

/// Per node, its `Crashed`, `Paused`, `Resumed` events; per tenure, its stand-downs.
type Lifecycles<'h> = (
    BTreeMap<&'h str, Vec<usize>>,
    BTreeMap<(&'h str, &'h str, u64), Vec<usize>>,
);

/// The events [`takeover_causes`] looks back on, by node and by tenure.
fn lifecycles<'h>(index: &'h Index<'_>) -> Lifecycles<'h> {
    let mut lifecycle: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut stand_downs: BTreeMap<(&str, &str, u64), Vec<usize>> = BTreeMap::new();
    for (k, event) in index.events().iter().enumerate() {
        match &event.kind {
            EventKind::Crashed | EventKind::Paused { .. } | EventKind::Resumed { .. } => {
                lifecycle.entry(event.node.as_str()).or_default().push(k);
            }
            EventKind::BeliefEnded {
                scope,
                token,
                why: BeliefEnd::RenewFailed | BeliefEnd::DeadlinePassed | BeliefEnd::CheckFailed,
                ..
            } => stand_downs
                .entry((event.node.as_str(), scope.as_str(), *token))
                .or_default()
                .push(k),
            _ => {}
        }
    }
    (lifecycle, stand_downs)
}

/// Every takeover (a grant to another holder than the scope's previous grant) with its cause:
/// the previous holder crashed while holding; else the cause of its loss (`crate::outage`:
/// a stall that alone would have ended the lease, an outage); else, lost with a pause at or
/// after its last contact, a stall; a lease handed on (released without a stand-down) has
/// no cause.
fn takeover_causes(index: &Index<'_>, causes: &Causes<'_>, m: &mut Metrics) {
    let (lifecycle, stand_downs) = lifecycles(index);
    for scope in index.scopes() {
        for pair in index.grants(scope).windows(2) {
            let (previous, grant) = (&pair[0], &pair[1]);
            if previous.holder == grant.holder {
                continue;
            }
            m.takeovers += 1;
            let holder = previous.holder.as_str();
            let tenure = index.tenure_of(previous.index);
            let events = lifecycle.get(holder).map(Vec::as_slice).unwrap_or(&[]);
            let between = |from: usize, to: usize| {
                events.iter().copied().filter(move |&e| from < e && e < to)
            };
            let crashed = tenure.is_some_and(|t| {
                between(previous.index, grant.index).any(|e| {
                    matches!(index.events()[e].kind, EventKind::Crashed) && t.open_before(e)
                })
            });
            if crashed {
                m.takeovers_after_crash += 1;
                continue;
            }
            // Where the holder lost the lease: its tenure's end, or its last stand-down before
            // a release; none when it handed the lease on.
            let stood_down = stand_downs
                .get(&(holder, scope, previous.token))
                .and_then(|list| list.iter().copied().rfind(|&s| s < grant.index));
            let end = tenure.and_then(|t| t.end);
            let lost_at = match end.map(|e| &index.events()[e].kind) {
                Some(EventKind::Expired { .. } | EventKind::TakenOver { .. }) => end,
                Some(EventKind::Dropped { .. }) => end,
                Some(EventKind::Released { .. }) => stood_down,
                _ => Some(grant.index),
            };
            let Some(lost_at) = lost_at else {
                continue;
            };
            match causes.loss(holder, scope, previous.token, lost_at) {
                LossCause::Crash => m.takeovers_after_crash += 1,
                LossCause::Pause => m.takeovers_after_stall += 1,
                LossCause::Outage => m.outage_takeovers += 1,
                LossCause::Other => {
                    // Paused at its last contact with the service, or paused since.
                    let contact = causes
                        .last_contact(holder, scope, previous.token, grant.index)
                        .unwrap_or(previous.index);
                    let paused =
                        |e: usize| matches!(index.events()[e].kind, EventKind::Paused { .. });
                    let paused_at_contact = events
                        .iter()
                        .copied()
                        .rfind(|&e| e < contact)
                        .is_some_and(paused);
                    if paused_at_contact || between(contact, grant.index).any(paused) {
                        m.takeovers_after_stall += 1;
                    }
                }
            }
        }
    }
}
