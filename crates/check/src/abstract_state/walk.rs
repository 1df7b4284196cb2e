//! The walk: a running model of a history, one event at a time, from which each granted
//! scope's abstraction is encoded (a few bytes) again only when an event touched it.

use std::collections::BTreeMap;

use fencesim_model::{
    history::{Event, EventKind, History, PauseKind},
    OpId, Token,
};

use super::{
    names::{Names, NONE},
    Codes,
};

/// A write sent and not yet decided (names as [`Walk::names`] ids).
struct InFlight {
    writer: u32,
    op: OpId,
    scope: u32,
    token: Token,
}

/// What the walk keeps of one name used as a lease scope (names as [`Walk::names`] ids).
#[derive(Default)]
pub(super) struct ScopeData {
    /// The open tenures as `(holder, token)`, oldest first.
    open: Vec<(u32, Token)>,
    /// Every grant so far as `(holder, token)`, oldest first (the last is the newest).
    grants: Vec<(u32, Token)>,
    /// Each resource written under the scope and its high-water token.
    resources: Vec<(u32, Option<Token>)>,
    /// The `(worker, token)` beliefs, distinct.
    beliefs: Vec<(u32, Token)>,
    /// The code as of the last [`Walk::refresh`], and its id in [`Codes`] (`None` before the
    /// scope's first grant).
    code: Vec<u8>,
    pub(super) id: Option<u32>,
    /// In [`Walk::dirty`].
    dirty: bool,
}

/// The running model of a history, one event at a time.
pub(super) struct Walk<'h> {
    events: &'h [Event],
    /// Every name the walk reads (scopes, resources, workers), by id, first seen first: the
    /// fields below index by these ids.
    names: Vec<&'h str>,
    /// Per event, the ids of its names: `[scope, resource, worker]` (a grant's or tenure
    /// end's holder as the worker, a write's lease scope as the scope), [`NONE`] where unused.
    ids: Vec<[u32; 3]>,
    /// Per `(writer, op)`, the lease scope the storage saw the write present.
    /// Per writer, sorted by op.
    op_scope: Vec<Vec<(OpId, u32)>>,
    /// Per resource, the lease scope of its writes as the storage saw them (accepted fences
    /// name only the resource); [`NONE`] if none.
    resource_scope: Vec<u32>,
    /// Per name used as a scope.
    pub(super) scopes: Vec<ScopeData>,
    /// The scopes granted so far (those a state lists), in first-grant order.
    pub(super) granted: Vec<u32>,
    /// Per worker, whether and how it is paused.
    paused: Vec<Option<PauseKind>>,
    /// Per worker, whether one of its outages covers the time of the last
    /// [`Walk::pass_time`].
    cut: Vec<bool>,
    /// Per worker with outages, its outages as `[start, end)` in true time.
    outages: Vec<(u32, Vec<(u64, u64)>)>,
    /// Every outage's start and end (true time), sorted, and how many have passed.
    boundaries: Vec<u64>,
    boundaries_passed: usize,
    /// Writes in flight.
    inflight: Vec<InFlight>,
    /// The scopes events touched since the last refresh.
    dirty: Vec<u32>,
    /// Every scope must be abstracted again (a process paused, resumed or crashed, the
    /// storage lost its state, or a worker's outage began or ended).
    all_dirty: bool,
}

/// A write the storage saw (presented, accepted or rejected) with names `[lease scope,
/// resource, writer]`: the first lease scope seen for its `(writer, op)` and for its
/// resource. `op_scope` is per writer, sorted by op (ops mostly come in order).
fn presented(
    op_scope: &mut Vec<Vec<(OpId, u32)>>,
    resource_scope: &mut Vec<u32>,
    ids: [u32; 3],
    op: OpId,
) {
    let [scope, resource, writer] = ids.map(|id| id as usize);
    if op_scope.len() <= writer {
        op_scope.resize_with(writer + 1, Vec::new);
    }
    let ops = &mut op_scope[writer];
    match ops.last() {
        Some(&(last, _)) if last >= op => {
            if let Err(at) = ops.binary_search_by_key(&op, |&(o, _)| o) {
                ops.insert(at, (op, ids[0]));
            }
        }
        _ => ops.push((op, ids[0])),
    }
    if resource_scope.len() <= resource {
        resource_scope.resize(resource + 1, NONE);
    }
    if resource_scope[resource] == NONE {
        resource_scope[resource] = scope as u32;
    }
}

/// Per event, the ids of its names, and what the storage saw of each write.
struct EventIds {
    /// `[scope, resource, worker]` per event ([`Walk::ids`]).
    ids: Vec<[u32; 3]>,
    /// [`Walk::op_scope`].
    op_scope: Vec<Vec<(OpId, u32)>>,
    /// [`Walk::resource_scope`], as far as the names seen.
    resource_scope: Vec<u32>,
}

impl EventIds {
    fn of<'h>(events: &'h [Event], names: &mut Names<'h>) -> EventIds {
        let mut id = |name: &'h str| names.id(name);
        let mut ids = vec![[NONE; 3]; events.len()];
        let mut op_scope: Vec<Vec<(OpId, u32)>> = Vec::new();
        let mut resource_scope: Vec<u32> = Vec::new();
        for (event, slot) in events.iter().zip(&mut ids) {
            match &event.kind {
                EventKind::Granted { scope, holder, .. }
                | EventKind::Expired { scope, holder, .. }
                | EventKind::Released { scope, holder, .. }
                | EventKind::TakenOver { scope, holder, .. }
                | EventKind::Dropped { scope, holder, .. } => {
                    *slot = [id(scope), NONE, id(holder)];
                }
                EventKind::WritePresented {
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
                } => {
                    let ids = [id(lease_scope), id(resource), id(writer)];
                    presented(&mut op_scope, &mut resource_scope, ids, *op);
                    *slot = ids;
                }
                EventKind::Fence {
                    resource, verdict, ..
                } if verdict.is_accepted() => *slot = [NONE, id(resource), NONE],
                EventKind::WriteSent { resource, .. } => {
                    *slot = [NONE, id(resource), id(&event.node)];
                }
                EventKind::BeliefStarted { scope, .. } | EventKind::BeliefEnded { scope, .. } => {
                    *slot = [id(scope), NONE, id(&event.node)];
                }
                EventKind::WriteAbandoned { .. }
                | EventKind::Crashed
                | EventKind::Paused { .. }
                | EventKind::Resumed { .. } => *slot = [NONE, NONE, id(&event.node)],
                _ => {}
            }
        }
        EventIds {
            ids,
            op_scope,
            resource_scope,
        }
    }
}

impl<'h> Walk<'h> {
    pub(super) fn new(
        history: &'h History,
        outages: &BTreeMap<&'h str, Vec<(u64, u64)>>,
    ) -> Walk<'h> {
        let events = &history.events[..];
        let mut names = Names::default();
        let EventIds {
            ids,
            op_scope,
            mut resource_scope,
        } = EventIds::of(events, &mut names);
        let mut id = |name: &'h str| names.id(name);
        let outages: Vec<(u32, Vec<(u64, u64)>)> = outages
            .iter()
            .map(|(worker, intervals)| (id(worker), intervals.clone()))
            .collect();
        let mut boundaries: Vec<u64> = outages
            .iter()
            .flat_map(|(_, intervals)| intervals)
            .flat_map(|&(start, end)| [start, end])
            .collect();
        boundaries.sort_unstable();
        let names = names.names;
        let n = names.len();
        resource_scope.resize(n, NONE);
        Walk {
            events,
            names,
            ids,
            op_scope,
            resource_scope,
            scopes: (0..n).map(|_| ScopeData::default()).collect(),
            granted: Vec::new(),
            paused: vec![None; n],
            cut: vec![false; n],
            outages,
            boundaries,
            boundaries_passed: 0,
            inflight: Vec::new(),
            dirty: Vec::new(),
            all_dirty: true,
        }
    }

    /// Marks `scope` to be abstracted again.
    fn touch(&mut self, scope: u32) {
        let data = &mut self.scopes[scope as usize];
        if !data.dirty {
            data.dirty = true;
            self.dirty.push(scope);
        }
    }

    /// Applies event `k`.
    pub(super) fn apply(&mut self, k: usize) {
        let [scope, resource, worker] = self.ids[k];
        match &self.events[k].kind {
            EventKind::Granted { token, .. } => {
                let data = &mut self.scopes[scope as usize];
                data.open.push((worker, *token));
                if data.grants.is_empty() {
                    self.granted.push(scope);
                }
                data.grants.push((worker, *token));
                self.touch(scope);
            }
            EventKind::Expired { token, .. }
            | EventKind::Released { token, .. }
            | EventKind::TakenOver { token, .. }
            | EventKind::Dropped { token, .. } => {
                // The oldest open tenure with that holder and token, as the index matches.
                let open = &mut self.scopes[scope as usize].open;
                if let Some(at) = open.iter().position(|&o| o == (worker, *token)) {
                    open.remove(at);
                }
                self.touch(scope);
            }
            EventKind::WriteAccepted { op, token, .. } => {
                self.raise(scope, resource, *token);
                self.touch(scope);
                self.landed(worker, *op);
            }
            EventKind::WriteRejected { op, .. } | EventKind::WriteAbandoned { op, .. } => {
                self.landed(worker, *op);
            }
            EventKind::Fence { token, verdict, .. } if verdict.is_accepted() => {
                let scope = match self.resource_scope[resource as usize] {
                    NONE => resource,
                    scope => scope,
                };
                self.raise(scope, resource, *token);
                self.touch(scope);
            }
            EventKind::StorageStateLost => {
                self.all_dirty = true;
                for data in &mut self.scopes {
                    for (_, high) in &mut data.resources {
                        *high = None;
                    }
                }
            }
            EventKind::WriteSent { op, token, .. } => self.sent(worker, *op, resource, *token),
            EventKind::BeliefStarted { token, .. } => self.believe(scope, worker, *token, true),
            EventKind::BeliefEnded { token, .. } => self.believe(scope, worker, *token, false),
            EventKind::Crashed => {
                self.all_dirty = true;
                for data in &mut self.scopes {
                    data.beliefs.retain(|&(w, _)| w != worker);
                }
                self.paused[worker as usize] = None;
                self.inflight.retain(|write| write.writer != worker);
            }
            EventKind::Paused { kind, .. } => {
                self.paused[worker as usize] = Some(*kind);
                self.all_dirty = true;
            }
            EventKind::Resumed { .. } => {
                self.paused[worker as usize] = None;
                self.all_dirty = true;
            }
            _ => {}
        }
    }

    /// `worker` began (`started`) or stopped believing it holds `scope` with `token`.
    fn believe(&mut self, scope: u32, worker: u32, token: Token, started: bool) {
        let beliefs = &mut self.scopes[scope as usize].beliefs;
        let at = beliefs.iter().position(|&b| b == (worker, token));
        match (started, at) {
            (true, None) => beliefs.push((worker, token)),
            (false, Some(at)) => {
                beliefs.swap_remove(at);
            }
            (true, Some(_)) | (false, None) => {}
        }
        self.touch(scope);
    }

    /// `writer` sent write `op`: in flight under the lease scope the storage saw it present,
    /// else the scope of the writer's belief with that token (the first by name), else the
    /// resource's name.
    fn sent(&mut self, writer: u32, op: OpId, resource: u32, token: Token) {
        let presented = self.op_scope.get(writer as usize).and_then(|ops| {
            ops.binary_search_by_key(&op, |&(o, _)| o)
                .ok()
                .map(|at| ops[at].1)
        });
        let scope = presented.or_else(|| {
            let mut first: Option<u32> = None;
            for (scope, data) in self.scopes.iter().enumerate() {
                let scope = scope as u32;
                let earlier =
                    first.is_none_or(|f| self.names[scope as usize] < self.names[f as usize]);
                if earlier && data.beliefs.contains(&(writer, token)) {
                    first = Some(scope);
                }
            }
            first
        });
        let scope = scope.unwrap_or(resource);
        let write = InFlight {
            writer,
            op,
            scope,
            token,
        };
        match self
            .inflight
            .iter_mut()
            .find(|w| (w.writer, w.op) == (writer, op))
        {
            Some(old) => *old = write,
            None => self.inflight.push(write),
        }
        self.touch(scope);
    }

    /// Write `op` of `writer` was decided or abandoned: no longer in flight.
    fn landed(&mut self, writer: u32, op: OpId) {
        if let Some(at) = self
            .inflight
            .iter()
            .position(|w| (w.writer, w.op) == (writer, op))
        {
            let write = self.inflight.swap_remove(at);
            self.touch(write.scope);
        }
    }

    /// Raises `resource`'s high-water token (kept under `scope`) to `token`.
    fn raise(&mut self, scope: u32, resource: u32, token: Token) {
        let resources = &mut self.scopes[scope as usize].resources;
        match resources.iter_mut().find(|(r, _)| *r == resource) {
            Some((_, high)) => *high = Some(high.map_or(token, |h| h.max(token))),
            None => resources.push((resource, Some(token))),
        }
    }

    /// Brings the workers' outages to the time of event `k`: when an outage began or ended
    /// since the last call, every scope must be abstracted again.
    pub(super) fn pass_time(&mut self, k: usize) {
        let t_ns = self.events[k].t_ns;
        let passed = self.boundaries.partition_point(|&b| b <= t_ns);
        if passed != self.boundaries_passed {
            self.boundaries_passed = passed;
            self.all_dirty = true;
            for (worker, intervals) in &self.outages {
                self.cut[*worker as usize] = intervals.iter().any(|&(s, e)| s <= t_ns && t_ns < e);
            }
        }
    }

    /// Abstracts again the scopes touched since the last call (every scope when a process
    /// or the storage changed, or an outage began or ended); whether any changed.
    pub(super) fn refresh(&mut self, code: &mut Vec<u8>, codes: &mut Codes) -> bool {
        let mut dirty = std::mem::take(&mut self.dirty);
        for &scope in &dirty {
            self.scopes[scope as usize].dirty = false;
        }
        if self.all_dirty {
            self.all_dirty = false;
            dirty.clear();
            dirty.extend_from_slice(&self.granted);
        }
        let mut changed = false;
        for &scope in &dirty {
            if self.scopes[scope as usize].grants.is_empty() {
                continue;
            }
            self.encode(scope, code);
            let data = &mut self.scopes[scope as usize];
            if data.id.is_none() || data.code != *code {
                data.code.clear();
                data.code.extend_from_slice(code);
                let id = codes.id(code);
                codes.moved(data.id.replace(id), id);
                changed = true;
            }
        }
        dirty.clear();
        self.dirty = dirty;
        changed
    }

    /// Scope `scope`'s abstraction (it has been granted) as a code: one byte for the lease
    /// (bits 0–1: `Lease` in declaration order), the set of high-water marks (bits 2–5, one
    /// per `Store`) and the writes in flight (bit 6 current, bit 7 stale), then one byte per
    /// believing worker (`Role` in bits 2–3, `Process` in bits 0–1), sorted, as
    /// [`ScopeState`] sorts them.
    pub(super) fn encode(&self, scope: u32, code: &mut Vec<u8>) {
        let data = &self.scopes[scope as usize];
        let Some(&(holder, newest)) = data.grants.last() else {
            unreachable!("only granted scopes are abstracted");
        };
        let lease: u8 = match data.open.len() {
            0 => 0,
            1 => 1,
            _ => 2,
        };
        let mut store: u8 = 0;
        for &(_, high) in &data.resources {
            store |= 1
                << match high {
                    None => 0,
                    Some(h) if h < newest => 1,
                    Some(h) if h == newest => 2,
                    Some(_) => 3,
                };
        }
        if store == 0 {
            // Nothing written yet reads as one empty resource, as it is rendered.
            store = 1;
        }
        let (mut current, mut stale) = (false, false);
        for write in self.inflight.iter().filter(|w| w.scope == scope) {
            if write.writer == holder && write.token == newest {
                current = true;
            } else {
                stale = true;
            }
        }
        code.clear();
        code.push(lease | store << 2 | u8::from(current) << 6 | u8::from(stale) << 7);
        for &(worker, token) in &data.beliefs {
            let role: u8 = match data.grants.iter().rposition(|&g| g == (worker, token)) {
                None => 3,
                Some(at) if at + 1 < data.grants.len() => 2,
                Some(_) if data.open.contains(&(worker, token)) => 0,
                Some(_) => 1,
            };
            let process: u8 = match self.paused[worker as usize] {
                Some(PauseKind::Gc) => 1,
                Some(PauseKind::VmSuspend) => 2,
                None if self.cut[worker as usize] => 3,
                None => 0,
            };
            code.push(role << 2 | process);
        }
        code[1..].sort_unstable();
    }
}
