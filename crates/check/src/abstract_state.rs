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
//! abstract is no transition. Everything is computed from the history alone (its events and
//! its [`outage`](crate::outage)s), so live and `check-history` histories get the same
//! coverage.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use fencesim_model::{
    history::{Event, EventKind, History, PauseKind},
    OpId, Token,
};
use serde::{Deserialize, Serialize};

use crate::outage::Causes;

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

impl Lease {
    fn name(self) -> &'static str {
        match self {
            Lease::Free => "free",
            Lease::Held => "held",
            Lease::Double => "double",
        }
    }
}

impl Store {
    fn name(self) -> &'static str {
        match self {
            Store::Empty => "empty",
            Store::Below => "below",
            Store::Equal => "equal",
            Store::Above => "above",
        }
    }
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Holder => "holder",
            Role::ExpiredHolder => "expired-holder",
            Role::StaleHolder => "stale-holder",
            Role::Ungranted => "ungranted",
        }
    }
}

impl Process {
    fn name(self) -> &'static str {
        match self {
            Process::Running => "running",
            Process::GcPaused => "gc-paused",
            Process::VmSuspended => "vm-suspended",
            Process::CutOff => "cut-off",
        }
    }
}

impl fmt::Display for Lease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ScopeState {
    /// Appends the text [`Display`](fmt::Display) gives, without the formatting machinery
    /// (every distinct state of every seed is rendered once).
    fn render(&self, out: &mut String) {
        out.push_str("[lease=");
        out.push_str(self.lease.name());
        out.push_str(" store=");
        for (k, store) in self.store.iter().enumerate() {
            if k > 0 {
                out.push('+');
            }
            out.push_str(store.name());
        }
        out.push_str(match (self.inflight_current, self.inflight_stale) {
            (false, false) => " inflight=none",
            (true, false) => " inflight=current",
            (false, true) => " inflight=stale",
            (true, true) => " inflight=current+stale",
        });
        for (k, (role, process)) in self.workers.iter().enumerate() {
            out.push_str(if k == 0 { ": " } else { ", " });
            out.push_str(role.name());
            out.push('(');
            out.push_str(process.name());
            out.push(')');
        }
        out.push(']');
    }
}

impl State {
    /// Appends the text [`Display`](fmt::Display) gives (see [`ScopeState::render`]).
    fn render(&self, out: &mut String) {
        if self.scopes.is_empty() {
            out.push_str("no lease granted");
        }
        for (k, scope) in self.scopes.iter().enumerate() {
            if k > 0 {
                out.push(' ');
            }
            scope.render(out);
        }
    }
}

impl fmt::Display for ScopeState {
    /// `[lease=held store=below inflight=stale: holder(running), stale-holder(gc-paused)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.render(&mut out);
        f.write_str(&out)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.render(&mut out);
        f.write_str(&out)
    }
}

/// The abstract state after each event of `history`, in history order (one per event), every
/// scope abstracted from scratch after every event (what [`visited`] must agree with).
pub fn states(history: &History) -> Vec<State> {
    let causes = Causes::new(&history.events);
    let mut walk = Walk::new(history, causes.by_worker());
    let mut code = Vec::new();
    (0..history.events.len())
        .map(|k| {
            walk.apply(k);
            walk.pass_time(k);
            let mut scopes = Vec::with_capacity(walk.granted.len());
            for &scope in &walk.granted {
                walk.encode(scope, &mut code);
                scopes.push(decode(&code));
            }
            scopes.sort();
            State { scopes }
        })
        .collect()
}

/// The states and transitions `history` visits: [`states`], deduplicated, with the pairs of
/// consecutive different states. An empty history visits nothing.
pub fn visited(history: &History) -> Visited {
    visited_in(history, &Causes::new(&history.events))
}

/// [`visited`] with the history's outages already found (the checker finds them once for the
/// metrics and this walk).
///
/// Cheap by construction, since it runs on every seed of every sweep: names are interned as
/// small integers once, each scope's abstraction is a few bytes (see [`Walk::encode`]) computed
/// again only for the scopes an event touched, states are numbered by their sorted scope codes,
/// and the canonical texts are rendered once per distinct state of the run, at the end.
pub(crate) fn visited_in<'h>(history: &'h History, causes: &Causes<'h>) -> Visited {
    let mut walk = Walk::new(history, causes.by_worker());
    let mut codes = Codes::default();
    // States, as the sorted ids of their scopes' codes, numbered as first seen.
    let mut ids: BTreeMap<Vec<u32>, u32> = BTreeMap::new();
    let mut keys: Vec<Vec<u32>> = Vec::new();
    let mut steps: Vec<(u32, u32)> = Vec::new();
    let mut previous: Option<u32> = None;
    let (mut key, mut code) = (Vec::new(), Vec::new());
    for (k, event) in history.events.iter().enumerate() {
        walk.apply(k);
        // The first event always makes a state; later ones only when they can change one.
        if previous.is_some() && !can_change(&event.kind) {
            continue;
        }
        walk.pass_time(k);
        // Only the scopes the event touched are abstracted again; when none of them changed,
        // neither did the state.
        if !walk.refresh(&mut code, &mut codes) && previous.is_some() {
            continue;
        }
        key.clear();
        key.extend(
            walk.granted
                .iter()
                .filter_map(|&s| walk.scopes[s as usize].id),
        );
        key.sort_unstable();
        let id = match ids.get(key.as_slice()) {
            Some(&id) => id,
            None => {
                let id = keys.len() as u32;
                ids.insert(key.clone(), id);
                keys.push(key.clone());
                id
            }
        };
        if previous == Some(id) {
            continue;
        }
        if let Some(from) = previous {
            steps.push((from, id));
        }
        previous = Some(id);
    }
    let texts: Vec<String> = keys
        .iter()
        .map(|key| {
            let mut scopes: Vec<ScopeState> = key
                .iter()
                .map(|&id| decode(&codes.codes[id as usize]))
                .collect();
            scopes.sort();
            let mut text = String::with_capacity(64 * scopes.len().max(1));
            State { scopes }.render(&mut text);
            text
        })
        .collect();
    // The sets are built from sorted input (no comparisons of texts but the check that it
    // is sorted): the states' ranks in text order sort the transitions.
    let mut order: Vec<u32> = (0..texts.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| texts[a as usize].cmp(&texts[b as usize]));
    let mut rank = vec![0u32; texts.len()];
    for (r, &id) in order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    let mut steps: Vec<(u32, u32)> = steps
        .into_iter()
        .map(|(from, to)| (rank[from as usize], rank[to as usize]))
        .collect();
    steps.sort_unstable();
    steps.dedup();
    let texts: Vec<String> = order.iter().map(|&id| texts[id as usize].clone()).collect();
    Visited {
        transitions: steps
            .into_iter()
            .map(|(from, to)| (texts[from as usize].clone(), texts[to as usize].clone()))
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

/// No name (an unused slot of [`Walk::ids`]).
const NONE: u32 = u32::MAX;

/// The scope codes of one run ([`Walk::encode`]), numbered as first seen.
#[derive(Default)]
struct Codes {
    ids: BTreeMap<Vec<u8>, u32>,
    codes: Vec<Vec<u8>>,
}

impl Codes {
    fn id(&mut self, code: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(code) {
            return id;
        }
        let id = self.codes.len() as u32;
        self.codes.push(code.to_vec());
        self.ids.insert(code.to_vec(), id);
        id
    }
}

const LEASES: [Lease; 3] = [Lease::Free, Lease::Held, Lease::Double];
const STORES: [Store; 4] = [Store::Empty, Store::Below, Store::Equal, Store::Above];
const ROLES: [Role; 4] = [
    Role::Holder,
    Role::ExpiredHolder,
    Role::StaleHolder,
    Role::Ungranted,
];
const PROCESSES: [Process; 4] = [
    Process::Running,
    Process::GcPaused,
    Process::VmSuspended,
    Process::CutOff,
];

/// The scope state a code ([`Walk::encode`]) stands for.
fn decode(code: &[u8]) -> ScopeState {
    let head = code[0];
    ScopeState {
        lease: LEASES[usize::from(head & 3)],
        store: STORES
            .iter()
            .enumerate()
            .filter(|&(bit, _)| head >> 2 & (1 << bit) != 0)
            .map(|(_, &store)| store)
            .collect(),
        inflight_current: head & 0x40 != 0,
        inflight_stale: head & 0x80 != 0,
        workers: code[1..]
            .iter()
            .map(|&w| (ROLES[usize::from(w >> 2)], PROCESSES[usize::from(w & 3)]))
            .collect(),
    }
}

/// Names interned as small integers, first seen first: an open-addressed table keyed by a
/// hash of the names (looked up, never iterated, so its order reaches no result).
struct Names<'h> {
    names: Vec<&'h str>,
    /// Per id, its name's [`Short`] form.
    shorts: Vec<Option<Short>>,
    /// Ids, [`NONE`] where empty; a power of two long, at most half full.
    slots: Vec<u32>,
}

/// A name of at most 16 bytes as its length and two 8-byte words (its first and its last 8
/// bytes, overlapping, zero-padded): equal exactly when the names are, compared without a
/// call to `memcmp` (names are compared once per event that has one).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Short(u64, u64, usize);

impl Short {
    fn of(name: &str) -> Option<Short> {
        let bytes = name.as_bytes();
        let word = |at: usize| {
            let part: [u8; 8] = bytes[at..at + 8].try_into().expect("8 bytes");
            u64::from_le_bytes(part)
        };
        match bytes.len() {
            0..=7 => {
                let word = bytes.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
                Some(Short(word, 0, bytes.len()))
            }
            8..=16 => Some(Short(word(0), word(bytes.len() - 8), bytes.len())),
            _ => None,
        }
    }

    fn hash(self) -> u64 {
        (self.0 ^ self.1.rotate_left(29) ^ self.2 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

impl Default for Names<'_> {
    fn default() -> Self {
        Names {
            names: Vec::new(),
            shorts: Vec::new(),
            slots: vec![NONE; 32],
        }
    }
}

impl<'h> Names<'h> {
    fn id(&mut self, name: &'h str) -> u32 {
        let short = Short::of(name);
        let hash = short.map_or_else(|| long_hash(name), Short::hash);
        let mask = self.slots.len() - 1;
        let mut at = (hash >> 32) as usize & mask;
        loop {
            match self.slots[at] {
                NONE => break,
                id if short.map_or_else(
                    || self.names[id as usize] == name,
                    |short| self.shorts[id as usize] == Some(short),
                ) =>
                {
                    return id
                }
                _ => at = (at + 1) & mask,
            }
        }
        let id = self.names.len() as u32;
        self.names.push(name);
        self.shorts.push(short);
        self.slots[at] = id;
        if self.names.len() * 2 > self.slots.len() {
            let mask = self.slots.len() * 2 - 1;
            self.slots = vec![NONE; mask + 1];
            for (id, (name, short)) in self.names.iter().zip(&self.shorts).enumerate() {
                let hash = short.map_or_else(|| long_hash(name), Short::hash);
                let mut at = (hash >> 32) as usize & mask;
                while self.slots[at] != NONE {
                    at = (at + 1) & mask;
                }
                self.slots[at] = id as u32;
            }
        }
        id
    }
}

/// FNV-1a 64 of a name longer than 16 bytes.
fn long_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A write sent and not yet decided (names as [`Walk::names`] ids).
struct InFlight {
    writer: u32,
    op: OpId,
    scope: u32,
    token: Token,
}

/// What the walk keeps of one name used as a lease scope (names as [`Walk::names`] ids).
#[derive(Default)]
struct ScopeData {
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
    id: Option<u32>,
    /// In [`Walk::dirty`].
    dirty: bool,
}

/// The running model of a history, one event at a time.
struct Walk<'h> {
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
    scopes: Vec<ScopeData>,
    /// The scopes granted so far (those a state lists), in first-grant order.
    granted: Vec<u32>,
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

impl<'h> Walk<'h> {
    fn new(history: &'h History, outages: &BTreeMap<&'h str, Vec<(u64, u64)>>) -> Walk<'h> {
        let events = &history.events[..];
        let mut names = Names::default();
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
    fn apply(&mut self, k: usize) {
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
            EventKind::BeliefStarted { token, .. } => {
                let beliefs = &mut self.scopes[scope as usize].beliefs;
                if !beliefs.contains(&(worker, *token)) {
                    beliefs.push((worker, *token));
                }
                self.touch(scope);
            }
            EventKind::BeliefEnded { token, .. } => {
                let beliefs = &mut self.scopes[scope as usize].beliefs;
                if let Some(at) = beliefs.iter().position(|&b| b == (worker, *token)) {
                    beliefs.swap_remove(at);
                }
                self.touch(scope);
            }
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
    fn pass_time(&mut self, k: usize) {
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
    fn refresh(&mut self, code: &mut Vec<u8>, codes: &mut Codes) -> bool {
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
                data.id = Some(codes.id(code));
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
    fn encode(&self, scope: u32, code: &mut Vec<u8>) {
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
