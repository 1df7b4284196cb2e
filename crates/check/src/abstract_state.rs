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
//! key; `no lease granted` is the state before the first grant. A state of more than
//! [`COUNTED_ABOVE`] scopes (a recorded service's many leases; no catalogue run) writes each
//! distinct scope abstraction once with its count (`2000x[lease=held …]`), so that states,
//! their texts and the walk stay linear in the history however many scopes it names.
//!
//! A transition is a pair of consecutive different states; an event that changes nothing
//! abstract is no transition. Everything is computed from the history alone (its events and
//! its [`outage`](crate::outage)s), so live and `check-history` histories get the same
//! coverage.

mod names;
mod text;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use fencesim_model::history::{EventKind, History};
use serde::{Deserialize, Serialize};

use crate::outage::Causes;
pub use text::is_canonical;
use walk::Walk;

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
        if self.scopes.len() > COUNTED_ABOVE {
            let mut counted: Vec<(ScopeState, u32)> = Vec::new();
            for scope in &self.scopes {
                match counted.last_mut() {
                    Some((last, n)) if last == scope => *n += 1,
                    _ => counted.push((scope.clone(), 1)),
                }
            }
            return render_counted(&counted, out);
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
    // States, as their multisets of scope code ids (`[id, count, id, count, …]`, ids
    // ascending), numbered as first seen: a key's length is the number of distinct scope
    // codes, not of scopes, so a recording of many scopes alike stays linear in memory.
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
        key.extend(codes.held.iter().flat_map(|(&id, &count)| [id, count]));
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
    rendered(&keys, &codes, steps)
}

/// A state of more than this many scopes is written with each distinct scope abstraction
/// once, prefixed by its count when it repeats (`2000x[lease=held …]`): its text stays as
/// long as its distinct scopes, not its scopes (a recording of 10,000 scopes would otherwise
/// write every scope into each of its ~20,000 states). No catalogue run comes near it.
pub const COUNTED_ABOVE: usize = 16;

/// The states (`keys`: each one's multiset of scope code ids, as [`visited_in`] builds
/// them) and the steps between them (as state numbers) as their canonical texts.
fn rendered(keys: &[Vec<u32>], codes: &Codes, steps: Vec<(u32, u32)>) -> Visited {
    let texts: Vec<String> = keys
        .iter()
        .map(|key| {
            let mut scopes: Vec<(ScopeState, u32)> = key
                .chunks_exact(2)
                .map(|pair| (decode(&codes.codes[pair[0] as usize]), pair[1]))
                .collect();
            scopes.sort();
            let total: usize = scopes.iter().map(|&(_, n)| n as usize).sum();
            let mut text = String::with_capacity(64 * scopes.len().max(1));
            if total > COUNTED_ABOVE {
                render_counted(&scopes, &mut text);
            } else {
                let scopes = scopes
                    .into_iter()
                    .flat_map(|(scope, n)| std::iter::repeat_n(scope, n as usize))
                    .collect();
                State { scopes }.render(&mut text);
            }
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

/// A state of more than [`COUNTED_ABOVE`] scopes: each distinct scope abstraction once,
/// sorted, with `N x` before it when `N` scopes share it.
fn render_counted(scopes: &[(ScopeState, u32)], out: &mut String) {
    for (k, (scope, n)) in scopes.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        if *n > 1 {
            out.push_str(&n.to_string());
            out.push('x');
        }
        scope.render(out);
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

/// The scope codes of one run ([`Walk::encode`]), numbered as first seen.
#[derive(Default)]
struct Codes {
    ids: BTreeMap<Vec<u8>, u32>,
    codes: Vec<Vec<u8>>,
    /// The current state as a multiset: per code id, how many granted scopes have it now
    /// (ids with none left out).
    held: BTreeMap<u32, u32>,
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

    /// A scope's code id changed from `old` (none before its first abstraction) to `new`.
    fn moved(&mut self, old: Option<u32>, new: u32) {
        if let Some(old) = old {
            match self.held.get_mut(&old) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    self.held.remove(&old);
                }
            }
        }
        *self.held.entry(new).or_insert(0) += 1;
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
