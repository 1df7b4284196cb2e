//! Outages, defined once and read from the history alone, so the same definition serves
//! simulated, live and `check-history` histories.
//!
//! An outage of a worker is an interval in which it cannot reach the lease service for a
//! reason outside itself:
//! - [`OutageCause::ServiceDown`]: the lease service is down or restarting (the coordinator's
//!   `Crashed`..`Restarted`) or stopped (its `Paused`..`Resumed`): an outage of every worker;
//! - [`OutageCause::LinkCut`]: the worker's link to the coordinator is partitioned
//!   (`PartitionStarted`..`PartitionHealed` with the worker on one side and the coordinator on
//!   the other, one-way in either direction counts) or held (`HoldStarted`..`HoldReleased`
//!   between the two, either direction).
//!
//! The worker's own faults (its pauses, crashes, clock steps) are not outages. An interval
//! still open when the history ends closes at the run's end.
//!
//! **Caused by an outage** ([`Causes::loss`], the one definition `run`, `check`, `tune` and
//! the reports use): a holder's loss of a lease — a stand-down, a false expiry, a rejected
//! current write, or the end of its tenure that a takeover follows — is the outage's when it
//! would not have happened without the outage. From the history, the causes are tried in
//! this order, the first that applies wins:
//! 1. **crash**: the holder crashed after its last contact with the service on that lease
//!    (the service's last grant or renewal of it) and before the loss;
//! 2. **pause**: a stall of the holder (its GC pauses and VM suspends, back-to-back ones as
//!    one) that overlaps the time from its last contact to the loss and lasted at least that
//!    long: had every renewal up to the stall succeeded, the stall alone would still have
//!    outlasted what the lease survived here (a holder both paused and cut off is the
//!    pause's);
//! 3. **outage**: the holder's run of failed renewals on that lease (its `RenewFailed` events
//!    with that token since its last contact) began inside an outage of that holder (bounds
//!    included), even when the loss lands after the outage ended; with no failed renewal, the
//!    loss itself lies inside one.
//!
//! A takeover whose previous holder released its lease without standing down first (its
//! last write done, then its normal release: a planned handover) follows no loss, so it is
//! never the outage's; one whose holder stood down and then released follows that
//! stand-down's cause.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_model::{
    history::{Event, EventKind, History},
    nodes::{COORDINATOR, NEMESIS, NET, STORAGE},
    NodeName, Token,
};
use serde::{Deserialize, Serialize};

use crate::index::ns_to_ms;

/// Why a worker could not reach the lease service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutageCause {
    /// The lease service was down, restarting or stopped.
    ServiceDown,
    /// The worker's link to the lease service was partitioned or held (either direction).
    LinkCut,
}

/// One interval in which `worker` could not reach the lease service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// The worker cut off.
    pub worker: NodeName,
    /// True time the outage began (ms since the run began).
    pub start_ms: f64,
    /// True time it ended (the run's end if it never did).
    pub end_ms: f64,
    /// Why.
    pub cause: OutageCause,
}

impl Outage {
    /// How long it lasted.
    pub fn duration_ms(&self) -> f64 {
        self.end_ms - self.start_ms
    }
}

/// Every outage in `history`, one per worker and interval: overlapping or touching intervals
/// of the same worker and cause are merged. Ordered by start, then worker, then cause.
pub fn outages(history: &History) -> Vec<Outage> {
    raw(&history.events)
        .into_iter()
        .map(|o| Outage {
            worker: o.worker.to_string(),
            start_ms: ns_to_ms(o.start_ns),
            end_ms: ns_to_ms(o.end_ns),
            cause: o.cause,
        })
        .collect()
}

/// Total time during which at least one worker was in an outage (ms).
pub(crate) fn union_ms(outages: &[RawOutage<'_>]) -> f64 {
    let mut intervals: Vec<(u64, u64)> = outages.iter().map(|o| (o.start_ns, o.end_ns)).collect();
    intervals.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (start, end) in intervals {
        match current {
            Some((s, e)) if start <= e => current = Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                current = Some((start, end));
            }
            None => current = Some((start, end)),
        }
    }
    if let Some((s, e)) = current {
        total += e - s;
    }
    ns_to_ms(total)
}

#[derive(Clone, Debug)]
pub(crate) struct RawOutage<'h> {
    pub worker: &'h str,
    pub start_ns: u64,
    pub end_ns: u64,
    pub cause: OutageCause,
}

fn is_special(node: &str) -> bool {
    matches!(node, COORDINATOR | STORAGE | NET | NEMESIS)
}

/// Every worker the history names: nodes that record events, holders and writers, and the
/// nodes faults name, less the coordinator, the storage, the network and the nemesis.
fn workers(events: &[Event]) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    for event in events {
        out.insert(event.node.as_str());
        match &event.kind {
            EventKind::Granted { holder, .. }
            | EventKind::Renewed { holder, .. }
            | EventKind::Refused { holder, .. }
            | EventKind::Denied { holder, .. }
            | EventKind::Expired { holder, .. }
            | EventKind::Released { holder, .. }
            | EventKind::Dropped { holder, .. }
            | EventKind::Extended { holder, .. } => {
                out.insert(holder.as_str());
            }
            EventKind::TakenOver { holder, by, .. } => {
                out.insert(holder.as_str());
                out.insert(by.as_str());
            }
            EventKind::WritePresented { writer, .. }
            | EventKind::WriteAccepted { writer, .. }
            | EventKind::WriteRejected { writer, .. } => {
                out.insert(writer.as_str());
            }
            EventKind::PartitionStarted { from, to, .. }
            | EventKind::PartitionHealed { from, to, .. } => {
                out.extend(from.iter().chain(to).map(String::as_str));
            }
            EventKind::HoldStarted { from, to } | EventKind::HoldReleased { from, to, .. } => {
                out.insert(from.as_str());
                out.insert(to.as_str());
            }
            _ => {}
        }
    }
    out.retain(|node| !is_special(node));
    out
}

/// Whether a partition `from` → `to` (empty `to`: every node not in `from`) separates `a`
/// from `b` in the direction `a` → `b`.
fn cuts(from: &[NodeName], to: &[NodeName], a: &str, b: &str) -> bool {
    let in_from = |n: &str| from.iter().any(|f| f == n);
    let in_to = |n: &str| {
        if to.is_empty() {
            !in_from(n)
        } else {
            to.iter().any(|t| t == n)
        }
    };
    in_from(a) && in_to(b)
}

/// Whether the partition cuts `worker` off the coordinator in either direction (a two-way
/// partition cuts both; a one-way one in the direction it names, which is enough).
fn partition_cuts(from: &[NodeName], to: &[NodeName], worker: &str) -> bool {
    cuts(from, to, worker, COORDINATOR) || cuts(from, to, COORDINATOR, worker)
}

pub(crate) fn raw<'h>(events: &'h [Event]) -> Vec<RawOutage<'h>> {
    let end_ns = run_end_ns(events);
    let workers = workers(events);
    let mut out: Vec<RawOutage<'h>> = Vec::new();
    // Open intervals: the service's (crash, pause), each partition and each hold.
    let mut service_down_since: Option<u64> = None;
    let mut service_paused_since: Option<u64> = None;
    let mut partitions: Vec<(&Event, u64)> = Vec::new();
    let mut holds: Vec<(&Event, u64)> = Vec::new();
    let service = |out: &mut Vec<RawOutage<'h>>, start_ns: u64, end_ns: u64| {
        for &worker in &workers {
            out.push(RawOutage {
                worker,
                start_ns,
                end_ns,
                cause: OutageCause::ServiceDown,
            });
        }
    };
    for event in events {
        let coordinator = event.node == COORDINATOR;
        match &event.kind {
            EventKind::Crashed if coordinator => {
                service_down_since.get_or_insert(event.t_ns);
                // A dead process is not paused.
                if let Some(since) = service_paused_since.take() {
                    service(&mut out, since, event.t_ns);
                }
            }
            EventKind::Restarted if coordinator => {
                if let Some(since) = service_down_since.take() {
                    service(&mut out, since, event.t_ns);
                }
            }
            EventKind::Paused { .. } if coordinator => {
                service_paused_since.get_or_insert(event.t_ns);
            }
            EventKind::Resumed { .. } if coordinator => {
                if let Some(since) = service_paused_since.take() {
                    service(&mut out, since, event.t_ns);
                }
            }
            EventKind::PartitionStarted { .. } => partitions.push((event, event.t_ns)),
            EventKind::PartitionHealed { from, to, one_way } => {
                let ends = |kind: &EventKind| {
                    matches!(kind, EventKind::PartitionStarted { from: f, to: t, one_way: o }
                        if f == from && t == to && o == one_way)
                };
                if let Some(since) = close(&mut partitions, ends) {
                    link_cut(&mut out, &workers, event, since, event.t_ns);
                }
            }
            EventKind::HoldStarted { .. } => holds.push((event, event.t_ns)),
            EventKind::HoldReleased { from, to, .. } => {
                let ends = |kind: &EventKind| matches!(kind, EventKind::HoldStarted { from: f, to: t } if f == from && t == to);
                if let Some(since) = close(&mut holds, ends) {
                    link_cut(&mut out, &workers, event, since, event.t_ns);
                }
            }
            _ => {}
        }
    }
    for since in [service_down_since, service_paused_since]
        .into_iter()
        .flatten()
    {
        service(&mut out, since, end_ns.max(since));
    }
    for (started, since) in partitions.into_iter().chain(holds) {
        link_cut(&mut out, &workers, started, since, end_ns.max(since));
    }
    merge(out)
}

/// When the run ended: its `RunEnded` event, else its last event.
fn run_end_ns(events: &[Event]) -> u64 {
    events
        .iter()
        .find(|e| matches!(e.kind, EventKind::RunEnded))
        .or(events.last())
        .map_or(0, |e| e.t_ns)
}

/// Removes the first open interval (its start event, when it began) that `ends` closes, and
/// says when it began.
fn close(open: &mut Vec<(&Event, u64)>, ends: impl Fn(&EventKind) -> bool) -> Option<u64> {
    let position = open.iter().position(|(started, _)| ends(&started.kind))?;
    Some(open.remove(position).1)
}

/// The link-cut outages a partition or hold event (its start or its end) describes.
fn link_cut<'h>(
    out: &mut Vec<RawOutage<'h>>,
    workers: &BTreeSet<&'h str>,
    event: &Event,
    start_ns: u64,
    end_ns: u64,
) {
    for &worker in workers {
        let cut = match &event.kind {
            EventKind::PartitionStarted { from, to, .. }
            | EventKind::PartitionHealed { from, to, .. } => partition_cuts(from, to, worker),
            EventKind::HoldStarted { from, to } | EventKind::HoldReleased { from, to, .. } => {
                (from == worker && to == COORDINATOR) || (from == COORDINATOR && to == worker)
            }
            _ => false,
        };
        if cut {
            out.push(RawOutage {
                worker,
                start_ns,
                end_ns,
                cause: OutageCause::LinkCut,
            });
        }
    }
}

/// Sorted by (start, worker, cause, end), with overlapping or touching intervals of the same
/// worker and cause merged.
fn merge(mut outages: Vec<RawOutage<'_>>) -> Vec<RawOutage<'_>> {
    outages.sort_by(|a, b| {
        (a.worker, a.cause, a.start_ns, a.end_ns).cmp(&(b.worker, b.cause, b.start_ns, b.end_ns))
    });
    let mut merged: Vec<RawOutage<'_>> = Vec::with_capacity(outages.len());
    for outage in outages {
        match merged.last_mut() {
            Some(last)
                if last.worker == outage.worker
                    && last.cause == outage.cause
                    && outage.start_ns <= last.end_ns =>
            {
                last.end_ns = last.end_ns.max(outage.end_ns);
            }
            _ => merged.push(outage),
        }
    }
    merged.sort_by(|a, b| {
        (a.start_ns, a.worker, a.cause, a.end_ns).cmp(&(b.start_ns, b.worker, b.cause, b.end_ns))
    });
    merged
}

/// A lease as the holder knows it: (worker, scope, token).
type Lease<'h> = (&'h str, &'h str, Token);

/// Why a holder lost a lease: the first of the causes in the module docs that applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossCause {
    /// The holder crashed after its last contact with the service.
    Crash,
    /// A stall of the holder alone would have ended the lease.
    Pause,
    /// An outage of the holder: it would not have lost the lease without it.
    Outage,
    /// None of these (a local deadline shorter than the lease, a volatile counter, …).
    Other,
}

/// Answers "was this caused by an outage?" for events of one history.
pub(crate) struct Causes<'h> {
    events: &'h [Event],
    /// Per worker, its outage intervals (ns, bounds included).
    by_worker: BTreeMap<&'h str, Vec<(u64, u64)>>,
    /// Per (worker, scope, token): the indices of its `RenewFailed` events (`true`) and of the
    /// service's `Granted` / `Renewed` of that lease (`false`), in history order. (A restart's
    /// `Extended` is not an answer to the holder, so it does not end a run of failures.)
    renewals: BTreeMap<Lease<'h>, Vec<(usize, bool)>>,
    /// Per worker, the indices of its `Crashed` events, in order.
    crashes: BTreeMap<&'h str, Vec<usize>>,
    /// Per worker, its stalls (ns): its pauses, each from `Paused` to its `Resumed` (to its
    /// `Crashed`, or its planned end when neither came), back-to-back ones merged.
    stalls: BTreeMap<&'h str, Vec<(u64, u64)>>,
    /// Total time at least one worker was in an outage (ms).
    pub union_ms: f64,
}

impl<'h> Causes<'h> {
    /// Per worker, its outage intervals (true time, ns): `[start, end]` as merged.
    pub fn by_worker(&self) -> &BTreeMap<&'h str, Vec<(u64, u64)>> {
        &self.by_worker
    }

    pub fn new(events: &'h [Event]) -> Causes<'h> {
        let outages = raw(events);
        let union_ms = union_ms(&outages);
        let mut by_worker: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
        for outage in &outages {
            by_worker
                .entry(outage.worker)
                .or_default()
                .push((outage.start_ns, outage.end_ns));
        }
        let mut renewals: BTreeMap<Lease<'_>, Vec<(usize, bool)>> = BTreeMap::new();
        let mut crashes: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, event) in events.iter().enumerate() {
            match &event.kind {
                EventKind::RenewFailed { scope, token, .. } => renewals
                    .entry((event.node.as_str(), scope.as_str(), *token))
                    .or_default()
                    .push((index, true)),
                EventKind::Granted {
                    scope,
                    holder,
                    token,
                    ..
                }
                | EventKind::Renewed {
                    scope,
                    holder,
                    token,
                } => renewals
                    .entry((holder.as_str(), scope.as_str(), *token))
                    .or_default()
                    .push((index, false)),
                EventKind::Crashed => crashes.entry(event.node.as_str()).or_default().push(index),
                _ => {}
            }
        }
        Causes {
            events,
            by_worker,
            renewals,
            crashes,
            stalls: stalls(events),
            union_ms,
        }
    }

    /// Whether `worker` was in an outage at true time `t_ns` (bounds included).
    pub fn in_outage(&self, worker: &str, t_ns: u64) -> bool {
        self.by_worker
            .get(worker)
            .is_some_and(|intervals| intervals.iter().any(|&(s, e)| s <= t_ns && t_ns <= e))
    }

    /// The first event of `worker`'s run of failed renewals of `(scope, token)` before event
    /// `before`: the earliest `RenewFailed` with no grant or renewal of that lease after it.
    pub fn run_start(
        &self,
        worker: &str,
        scope: &str,
        token: Token,
        before: usize,
    ) -> Option<usize> {
        let list = self.renewals.get(&(worker, scope, token))?;
        let end = list.partition_point(|&(index, _)| index < before);
        let mut start = None;
        for &(index, failed) in list[..end].iter().rev() {
            if !failed {
                break;
            }
            start = Some(index);
        }
        start
    }

    /// The service's last grant or renewal of `worker`'s lease `(scope, token)`
    /// before event `before`.
    pub fn last_contact(
        &self,
        worker: &str,
        scope: &str,
        token: Token,
        before: usize,
    ) -> Option<usize> {
        let list = self.renewals.get(&(worker, scope, token))?;
        let end = list.partition_point(|&(index, _)| index < before);
        list[..end]
            .iter()
            .rev()
            .find(|&&(_, failed)| !failed)
            .map(|&(index, _)| index)
    }

    /// Why `worker` lost its lease `(scope, token)` at event `at` (a stand-down, an expiry or
    /// takeover of its record, a rejected current write): crash, pause, outage or none of
    /// them, tried in that order (module docs).
    pub fn loss(&self, worker: &str, scope: &str, token: Token, at: usize) -> LossCause {
        let contact = self.last_contact(worker, scope, token, at);
        let t_at = self.events[at].t_ns;
        let t_contact = contact.map_or(0, |c| self.events[c].t_ns);
        let crashed = self.crashes.get(worker).is_some_and(|list| {
            list.iter()
                .any(|&c| contact.is_none_or(|contact| c > contact) && c < at)
        });
        if crashed {
            return LossCause::Crash;
        }
        let unrenewed = t_at.saturating_sub(t_contact);
        let stalled = self.stalls.get(worker).is_some_and(|list| {
            list.iter()
                .any(|&(s, e)| s <= t_at && e > t_contact && e - s >= unrenewed)
        });
        if stalled {
            return LossCause::Pause;
        }
        let witness = self.run_start(worker, scope, token, at).unwrap_or(at);
        if self.in_outage(worker, self.events[witness].t_ns) {
            LossCause::Outage
        } else {
            LossCause::Other
        }
    }
}

/// Per worker, its stalls: each pause from its `Paused` to its `Resumed` (or the node's
/// `Crashed`; with neither, its planned end), a pause that begins when the previous one ended
/// (queued behind it) merged with it.
fn stalls(events: &[Event]) -> BTreeMap<&str, Vec<(u64, u64)>> {
    fn close<'h>(
        out: &mut BTreeMap<&'h str, Vec<(u64, u64)>>,
        node: &'h str,
        (start, end): (u64, u64),
    ) {
        let list = out.entry(node).or_default();
        match list.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => list.push((start, end)),
        }
    }
    let mut open: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut out: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for event in events {
        let node = event.node.as_str();
        match &event.kind {
            EventKind::Paused { planned_ms, .. } => {
                let planned = (planned_ms.max(0.0) * fencesim_model::NS_PER_MS as f64) as u64;
                open.insert(node, (event.t_ns, event.t_ns.saturating_add(planned)));
            }
            EventKind::Resumed { .. } | EventKind::Crashed => {
                if let Some((start, _)) = open.remove(node) {
                    close(&mut out, node, (start, event.t_ns));
                }
            }
            _ => {}
        }
    }
    for (node, interval) in open {
        close(&mut out, node, interval);
    }
    out
}
