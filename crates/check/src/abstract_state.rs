//! The abstract protocol state: what of a run's state matters to a lease + fencing protocol,
//! with names and numbers forgotten, so that the states and transitions a run visits can be
//! counted and compared across seeds (state-space coverage).
//!
//! After every event of a history, each lease scope granted so far is abstracted to:
//!
//! - `lease`: the service's own state — `free` (no tenure open), `held` (one open), `double`
//!   (two or more open: an I2 breach);
//! - `store`: each resource written under the scope, its high-water token (the highest token
//!   the storage accepted in a write or a fence since it last lost its state) against the
//!   newest grant's token — `empty`, `below`, `equal`, `above`; a set, joined with `+`;
//! - `inflight`: writes sent and not yet decided by the storage (nor abandoned), by their
//!   epoch — `none`, `current` (the writer holds the scope's newest grant with that token),
//!   `stale` (any other), `current+stale`;
//! - one entry per worker that believes it holds the scope (`BeliefStarted` to `BeliefEnded`
//!   or its crash), as *role*(*process*), sorted:
//!   - role `holder` — its token is the newest grant and the service still holds that
//!     tenure; `expired-holder` — the newest grant, but the service has ended the tenure
//!     (the worker's local deadline outlived the service's expiry); `stale-holder` — a newer
//!     grant superseded its token; `ungranted` — no grant to it with that token (only in
//!     hand-written or recorded histories);
//!   - process `running`, `gc-paused`, `vm-suspended`, or `cut-off` (running but unable to
//!     reach the lease service: an [`outage`](crate::outage) of that worker, by true time).
//!
//! Workers with no belief on a scope (candidates, idle or crashed workers) do not appear:
//! they are the absence of an entry. A state is the scopes' abstractions as a sorted list (a
//! multiset: two scopes alike appear twice), so renaming workers, scopes or resources, or
//! shifting tokens, gives the same state. Its text ([`State::to_string`]) is the canonical
//! key; `no lease granted` is the state before the first grant.
//!
//! A transition is a pair of consecutive different states; an event that changes nothing
//! abstract is no transition. Everything is computed from the history alone (through
//! [`index::Index`]), so live and `check-history` histories get the same coverage.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use fencesim_model::{
    history::{EventKind, History, PauseKind},
    OpId, Token,
};
use serde::{Deserialize, Serialize};

use crate::index::{Epoch, Index};
use crate::outage;

/// The abstract states and transitions one run visited, as their canonical texts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Visited {
    /// Every state visited, the first one included.
    pub states: BTreeSet<String>,
    /// Every `(from, to)` pair of consecutive different states.
    pub transitions: BTreeSet<(String, String)>,
}

impl Visited {
    /// Whether the run visited nothing (an empty history).
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

/// The service's own state of a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lease {
    /// No tenure open.
    Free,
    /// One tenure open.
    Held,
    /// Two or more tenures open (I2).
    Double,
}

/// A resource's high-water token against the scope's newest grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Store {
    /// No write or fence accepted.
    Empty,
    /// Lower than the newest grant's token.
    Below,
    /// The newest grant's token.
    Equal,
    /// Higher than the newest grant's token (a token source that went backwards).
    Above,
}

/// How a believing worker's token stands against the service's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// The newest grant, still held by the service.
    Holder,
    /// The newest grant, but the service ended its tenure.
    ExpiredHolder,
    /// Superseded by a newer grant.
    StaleHolder,
    /// Never granted to this worker with this token.
    Ungranted,
}

/// Whether a believing worker runs and reaches the lease service.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Process {
    /// Runs and reaches the service.
    Running,
    /// GC-paused: runs no code, its clocks run.
    GcPaused,
    /// VM-suspended: runs no code, its monotonic clock stopped.
    VmSuspended,
    /// Runs, but cannot reach the lease service (an outage of this worker).
    CutOff,
}

/// One scope's abstraction (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ScopeState {
    /// The service's state.
    pub lease: Lease,
    /// Each written resource's high-water token against the newest grant, sorted, distinct;
    /// `[Empty]` before the first write.
    pub store: Vec<Store>,
    /// A current-epoch write in flight.
    pub inflight_current: bool,
    /// A stale write in flight.
    pub inflight_stale: bool,
    /// The believing workers, sorted.
    pub workers: Vec<(Role, Process)>,
}

/// One abstract state: the scopes' abstractions, sorted (a multiset).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct State {
    /// Every scope granted so far, sorted.
    pub scopes: Vec<ScopeState>,
}

impl fmt::Display for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Lease::Free => "free",
            Lease::Held => "held",
            Lease::Double => "double",
        })
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Store::Empty => "empty",
            Store::Below => "below",
            Store::Equal => "equal",
            Store::Above => "above",
        })
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Holder => "holder",
            Role::ExpiredHolder => "expired-holder",
            Role::StaleHolder => "stale-holder",
            Role::Ungranted => "ungranted",
        })
    }
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Process::Running => "running",
            Process::GcPaused => "gc-paused",
            Process::VmSuspended => "vm-suspended",
            Process::CutOff => "cut-off",
        })
    }
}

impl fmt::Display for ScopeState {
    /// `[lease=held store=below inflight=stale: holder(running), stale-holder(gc-paused)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let store: Vec<String> = self.store.iter().map(Store::to_string).collect();
        let store = store.join("+");
        let inflight = match (self.inflight_current, self.inflight_stale) {
            (false, false) => "none",
            (true, false) => "current",
            (false, true) => "stale",
            (true, true) => "current+stale",
        };
        write!(f, "[lease={} store={store} inflight={inflight}", self.lease)?;
        for (k, (role, process)) in self.workers.iter().enumerate() {
            let sep = if k == 0 { ": " } else { ", " };
            write!(f, "{sep}{role}({process})")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scopes.is_empty() {
            return f.write_str("no lease granted");
        }
        for (k, scope) in self.scopes.iter().enumerate() {
            if k > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{scope}")?;
        }
        Ok(())
    }
}

/// The abstract state after each event of `history`, in history order (one per event).
pub fn states(history: &History) -> Vec<State> {
    let index = Index::new(history);
    let mut walk = Walk::new(history, &index);
    (0..history.events.len())
        .map(|k| {
            walk.apply(k);
            walk.state(k + 1)
        })
        .collect()
}

/// The states and transitions `history` visits: [`states`], deduplicated, with the pairs of
/// consecutive different states. An empty history visits nothing.
pub fn visited(history: &History) -> Visited {
    visited_in(history, &Index::new(history))
}

/// [`visited`] with the history's index already built (the checker builds one for all).
pub(crate) fn visited_in<'h>(history: &'h History, index: &Index<'h>) -> Visited {
    let mut walk = Walk::new(history, index);
    // States are numbered as first seen and rendered once, at the end.
    let mut ids: BTreeMap<State, usize> = BTreeMap::new();
    let mut steps: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut previous: Option<(State, usize)> = None;
    for (k, event) in history.events.iter().enumerate() {
        walk.apply(k);
        // The first event always makes a state; later ones only when they can change one.
        if previous.is_some() && !can_change(&event.kind) {
            continue;
        }
        // Only the scopes the event touched are abstracted again; when none of them changed,
        // neither did the state.
        if !walk.refresh(k + 1) && previous.is_some() {
            continue;
        }
        let state = walk.cached_state();
        if previous.as_ref().is_some_and(|(p, _)| *p == state) {
            continue;
        }
        // Cloned only when new: most states recur.
        let id = match ids.get(&state) {
            Some(&id) => id,
            None => {
                let id = ids.len();
                ids.insert(state.clone(), id);
                id
            }
        };
        if let Some((_, from)) = previous {
            steps.insert((from, id));
        }
        previous = Some((state, id));
    }
    let mut texts = vec![String::new(); ids.len()];
    for (state, id) in &ids {
        texts[*id] = state.to_string();
    }
    Visited {
        transitions: steps
            .into_iter()
            .map(|(from, to)| (texts[from].clone(), texts[to].clone()))
            .collect(),
        states: texts.into_iter().collect(),
    }
}

/// Whether an event of this kind can change the abstract state: the others (renewals,
/// refusals, presentations, reads, clock steps, …) change nothing it abstracts, so
/// [`visited`] skips computing a state after them.
fn can_change(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::RunStarted { .. }
            | EventKind::FaultsHealed
            | EventKind::RunEnded
            | EventKind::Renewed { .. }
            | EventKind::Refused { .. }
            | EventKind::Denied { .. }
            | EventKind::Extended { .. }
            | EventKind::CountersLost
            | EventKind::WritePresented { .. }
            | EventKind::TokenRead { .. }
            | EventKind::RenewFailed { .. }
            | EventKind::SideEffect { .. }
            | EventKind::ClockStepped { .. }
            | EventKind::Panicked { .. }
    )
}

/// A write sent and not yet decided.
struct InFlight<'h> {
    writer: &'h str,
    scope: &'h str,
    token: Token,
}

/// The running model of a history, one event at a time.
struct Walk<'i, 'h> {
    history: &'h History,
    index: &'i Index<'h>,
    /// Per scope, the open tenures as `(holder, token)`, oldest first.
    open: BTreeMap<&'h str, Vec<(&'h str, Token)>>,
    /// Per scope, per resource written under it, the high-water token.
    high_water: BTreeMap<&'h str, BTreeMap<&'h str, Option<Token>>>,
    /// `(worker, scope, token)` beliefs.
    beliefs: BTreeSet<(&'h str, &'h str, Token)>,
    /// Paused workers and how.
    paused: BTreeMap<&'h str, PauseKind>,
    /// Per worker, its outages as `[start, end)` in true time.
    outages: BTreeMap<&'h str, Vec<(u64, u64)>>,
    /// Writes in flight, by `(writer, op)`.
    inflight: BTreeMap<(&'h str, OpId), InFlight<'h>>,
    /// Per `(writer, op)`, the lease scope the storage saw the write present.
    op_scope: BTreeMap<(&'h str, OpId), &'h str>,
    /// Per resource, the lease scope of its writes as the storage saw them (accepted fences
    /// name only the resource).
    resource_scope: BTreeMap<&'h str, &'h str>,
    /// The scopes' abstractions as of the last [`Walk::refresh`] (granted scopes only).
    cache: BTreeMap<&'h str, ScopeState>,
    /// The scopes events touched since the last refresh.
    dirty: BTreeSet<&'h str>,
    /// Every scope must be abstracted again (a process paused, resumed or crashed, the
    /// storage lost its state, or a worker's outage began or ended).
    all_dirty: bool,
    /// Every outage's start and end (true time), sorted, and how many have passed.
    boundaries: Vec<u64>,
    boundaries_passed: usize,
}

impl<'i, 'h> Walk<'i, 'h> {
    fn new(history: &'h History, index: &'i Index<'h>) -> Walk<'i, 'h> {
        let mut outages: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
        for o in outage::raw(&history.events) {
            outages
                .entry(o.worker)
                .or_default()
                .push((o.start_ns, o.end_ns));
        }
        let mut op_scope = BTreeMap::new();
        let mut resource_scope = BTreeMap::new();
        for event in &history.events {
            if let EventKind::WritePresented {
                op,
                resource,
                lease_scope,
                writer,
                ..
            }
            | EventKind::WriteAccepted {
                op,
                resource,
                lease_scope,
                writer,
                ..
            }
            | EventKind::WriteRejected {
                op,
                resource,
                lease_scope,
                writer,
                ..
            } = &event.kind
            {
                op_scope
                    .entry((writer.as_str(), *op))
                    .or_insert(lease_scope.as_str());
                resource_scope
                    .entry(resource.as_str())
                    .or_insert(lease_scope.as_str());
            }
        }
        let mut boundaries: Vec<u64> = outages
            .values()
            .flatten()
            .flat_map(|&(start, end)| [start, end])
            .collect();
        boundaries.sort_unstable();
        Walk {
            cache: BTreeMap::new(),
            dirty: BTreeSet::new(),
            all_dirty: true,
            boundaries,
            boundaries_passed: 0,
            history,
            index,
            open: BTreeMap::new(),
            high_water: BTreeMap::new(),
            beliefs: BTreeSet::new(),
            paused: BTreeMap::new(),
            outages,
            inflight: BTreeMap::new(),
            op_scope,
            resource_scope,
        }
    }

    /// Applies event `k`.
    fn apply(&mut self, k: usize) {
        let event = &self.history.events[k];
        let node = event.node.as_str();
        match &event.kind {
            EventKind::Granted {
                scope,
                holder,
                token,
                ..
            } => {
                self.open.entry(scope).or_default().push((holder, *token));
                self.high_water.entry(scope).or_default();
                self.dirty.insert(scope);
            }
            EventKind::Expired {
                scope,
                holder,
                token,
            }
            | EventKind::Released {
                scope,
                holder,
                token,
            }
            | EventKind::TakenOver {
                scope,
                holder,
                token,
                ..
            }
            | EventKind::Dropped {
                scope,
                holder,
                token,
            } => {
                self.ended(scope, holder, *token);
                self.dirty.insert(scope);
            }
            EventKind::WriteAccepted {
                op,
                resource,
                lease_scope,
                writer,
                token,
                ..
            } => {
                self.raise(lease_scope, resource, *token);
                self.dirty.insert(lease_scope);
                self.landed(writer, *op);
            }
            EventKind::WriteRejected { op, writer, .. } => self.landed(writer, *op),
            EventKind::WriteAbandoned { op, .. } => self.landed(node, *op),
            EventKind::Fence {
                resource,
                token,
                verdict,
                ..
            } if verdict.is_accepted() => {
                let scope = self
                    .resource_scope
                    .get(resource.as_str())
                    .copied()
                    .unwrap_or(resource.as_str());
                self.raise(scope, resource, *token);
                self.dirty.insert(scope);
            }
            EventKind::StorageStateLost => self.storage_lost(),
            EventKind::WriteSent {
                op,
                resource,
                token,
            } => self.sent(node, *op, resource, *token),
            EventKind::BeliefStarted { scope, token, .. } => {
                self.beliefs.insert((node, scope, *token));
                self.dirty.insert(scope);
            }
            EventKind::BeliefEnded { scope, token, .. } => {
                self.beliefs.remove(&(node, scope.as_str(), *token));
                self.dirty.insert(scope);
            }
            EventKind::Crashed => {
                self.all_dirty = true;
                self.beliefs.retain(|&(w, _, _)| w != node);
                self.paused.remove(node);
                self.inflight.retain(|_, write| write.writer != node);
            }
            EventKind::Paused { kind, .. } => {
                self.paused.insert(node, *kind);
                self.all_dirty = true;
            }
            EventKind::Resumed { .. } => {
                self.paused.remove(node);
                self.all_dirty = true;
            }
            _ => {}
        }
    }

    /// A tenure ended: the oldest open one with that holder and token, as the index matches.
    fn ended(&mut self, scope: &str, holder: &str, token: Token) {
        if let Some(open) = self.open.get_mut(scope) {
            if let Some(at) = open.iter().position(|&(h, t)| h == holder && t == token) {
                open.remove(at);
            }
        }
    }

    /// `writer` sent write `op`: in flight under the lease scope the storage saw it present,
    /// else the scope of the writer's belief with that token, else the resource's name.
    fn sent(&mut self, writer: &'h str, op: OpId, resource: &'h str, token: Token) {
        let scope = self
            .op_scope
            .get(&(writer, op))
            .copied()
            .or_else(|| {
                self.beliefs
                    .iter()
                    .find(|&&(w, _, t)| w == writer && t == token)
                    .map(|&(_, s, _)| s)
            })
            .unwrap_or(resource);
        let write = InFlight {
            writer,
            scope,
            token,
        };
        self.inflight.insert((writer, op), write);
        self.dirty.insert(scope);
    }

    /// The storage lost its state: every high-water token is gone.
    fn storage_lost(&mut self) {
        self.all_dirty = true;
        for resources in self.high_water.values_mut() {
            for high in resources.values_mut() {
                *high = None;
            }
        }
    }

    /// Write `op` of `writer` was decided or abandoned: no longer in flight.
    fn landed(&mut self, writer: &'h str, op: OpId) {
        if let Some(write) = self.inflight.remove(&(writer, op)) {
            self.dirty.insert(write.scope);
        }
    }

    /// Raises `resource`'s high-water token (kept under `scope`) to `token`.
    fn raise(&mut self, scope: &'h str, resource: &'h str, token: Token) {
        let high = self
            .high_water
            .entry(scope)
            .or_default()
            .entry(resource)
            .or_default();
        *high = Some(high.map_or(token, |h| h.max(token)));
    }

    fn process(&self, worker: &str, t_ns: u64) -> Process {
        match self.paused.get(worker) {
            Some(PauseKind::Gc) => Process::GcPaused,
            Some(PauseKind::VmSuspend) => Process::VmSuspended,
            None => {
                let cut = self
                    .outages
                    .get(worker)
                    .is_some_and(|intervals| intervals.iter().any(|&(s, e)| s <= t_ns && t_ns < e));
                if cut {
                    Process::CutOff
                } else {
                    Process::Running
                }
            }
        }
    }

    /// Abstracts again the scopes touched since the last call (every scope when a process
    /// or the storage changed, or an outage began or ended by now); whether any changed.
    fn refresh(&mut self, before: usize) -> bool {
        let t_ns = self.history.events[before - 1].t_ns;
        let passed = self.boundaries.partition_point(|&b| b <= t_ns);
        if passed != self.boundaries_passed {
            self.boundaries_passed = passed;
            self.all_dirty = true;
        }
        let scopes: Vec<&'h str> = if self.all_dirty {
            self.high_water.keys().copied().collect()
        } else {
            std::mem::take(&mut self.dirty).into_iter().collect()
        };
        self.all_dirty = false;
        self.dirty.clear();
        let mut changed = false;
        for scope in scopes {
            let fresh = self.scope_state(scope, before, t_ns);
            if self.cache.get(scope) != fresh.as_ref() {
                changed = true;
                match fresh {
                    Some(state) => self.cache.insert(scope, state),
                    None => self.cache.remove(scope),
                };
            }
        }
        changed
    }

    /// The state as of the last [`Walk::refresh`].
    fn cached_state(&self) -> State {
        let mut scopes: Vec<ScopeState> = self.cache.values().cloned().collect();
        scopes.sort();
        State { scopes }
    }

    /// The state once every event before `before` has been applied, every scope abstracted
    /// from scratch (what [`states`] gives; [`visited`] keeps a cache instead).
    fn state(&self, before: usize) -> State {
        let t_ns = self.history.events[before - 1].t_ns;
        let mut scopes: Vec<ScopeState> = self
            .high_water
            .keys()
            .filter_map(|&scope| self.scope_state(scope, before, t_ns))
            .collect();
        scopes.sort();
        State { scopes }
    }

    /// Scope `scope`'s abstraction once every event before `before` has been applied, at
    /// true time `t_ns`; `None` while it was never granted.
    fn scope_state(&self, scope: &'h str, before: usize, t_ns: u64) -> Option<ScopeState> {
        let resources = self.high_water.get(scope)?;
        // Scopes are listed from their first grant; a fence or write on a scope never
        // granted (a recorded history) still has no epoch to compare with.
        let newest = self.index.newest_grant(scope, before)?;
        let lease = match self.open.get(scope).map_or(0, Vec::len) {
            0 => Lease::Free,
            1 => Lease::Held,
            _ => Lease::Double,
        };
        let mut store: BTreeSet<Store> = resources
            .values()
            .map(|high| match high {
                None => Store::Empty,
                Some(h) if *h < newest.token => Store::Below,
                Some(h) if *h == newest.token => Store::Equal,
                Some(_) => Store::Above,
            })
            .collect();
        if store.is_empty() {
            // Nothing written yet reads as one empty resource, as it is rendered.
            store.insert(Store::Empty);
        }
        let is_current =
            |writer: &str, token: Token| newest.holder == writer && newest.token == token;
        let mut inflight_current = false;
        let mut inflight_stale = false;
        for write in self.inflight.values().filter(|w| w.scope == scope) {
            if is_current(write.writer, write.token) {
                inflight_current = true;
            } else {
                inflight_stale = true;
            }
        }
        let mut workers: Vec<(Role, Process)> = self
            .beliefs
            .iter()
            .filter(|&&(_, s, _)| s == scope)
            .map(|&(worker, _, token)| {
                let role = match self.index.epoch(scope, worker, token, before) {
                    Epoch::NeverGranted => Role::Ungranted,
                    Epoch::Superseded { .. } => Role::StaleHolder,
                    Epoch::Current { .. } => {
                        let held = self
                            .open
                            .get(scope)
                            .is_some_and(|o| o.contains(&(worker, token)));
                        if held {
                            Role::Holder
                        } else {
                            Role::ExpiredHolder
                        }
                    }
                };
                (role, self.process(worker, t_ns))
            })
            .collect();
        workers.sort();
        Some(ScopeState {
            lease,
            store: store.into_iter().collect(),
            inflight_current,
            inflight_stale,
            workers,
        })
    }
}
