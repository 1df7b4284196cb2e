//! Lookups built once from a history and shared by the invariants and the metrics: grants
//! per scope (epochs), accepted fences, and the lease service's tenures.
//!
//! Every map is a `BTreeMap` so iteration (and therefore violation order) is deterministic.

//! The epoch and tenure index of a history: every lease grant and every lease as the service
//! held it, found once and shared. The invariants, the metrics and the views (timeline
//! picture, Perfetto trace) all read lease epochs from here, so there is one definition of
//! each:
//!
//! - a [`Grant`] is one `Granted` event; a scope's grants, in history order, are its epochs
//!   (glossary: the period during which one grant is the newest for its scope, superseded the
//!   moment a newer grant is issued; [`Index::epoch`] says where one stood at an instant, as
//!   [`Epoch`]);
//! - a [`Tenure`] is a lease as the service's own state saw it, from its `Granted` to the
//!   `Expired` / `TakenOver` / `Released` / `Dropped` for the same scope, holder and token
//!   (the oldest such open lease, if several), or open at the end of the run;
//! - a [`DoubleGrant`] is a `Granted` while another tenure on the scope was open (I2);
//! - accepted `Fence` events, for where a superseding epoch's fence stood
//!   ([`Index::fence_status`], [`FenceStatus`]).
//!
//! Every map is a `BTreeMap` so iteration (and therefore violation order) is deterministic.

use std::collections::BTreeMap;

use fencesim_model::{
    history::{Event, EventKind, History},
    NodeName, Scope, Token, NS_PER_MS,
};

/// One `Granted` event: the start of an epoch on its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// Index of the `Granted` event in `history.events`.
    pub index: usize,
    /// The node granted the lease.
    pub holder: NodeName,
    /// The token issued with it.
    pub token: Token,
}

/// Where a `(scope, holder, token)` epoch stood at some instant ([`Index::epoch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epoch {
    /// No `Granted` for this holder and token on this scope came before.
    NeverGranted,
    /// `grant` is the newest grant on the scope.
    Current {
        /// Index of its `Granted` event.
        grant: usize,
    },
    /// `grant` was followed by `superseded_by` (the first later grant on the scope).
    Superseded {
        /// Index of its `Granted` event.
        grant: usize,
        /// Index of the first later `Granted` event on the scope.
        superseded_by: usize,
    },
}

/// Whether a superseded accept happened before or after the new epoch's fence reached the
/// storage ([`Index::fence_status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceStatus {
    /// `grant` (a superseding grant) had been issued, but its fence was accepted only later,
    /// at `fence`: the accept landed inside the grant→fence window.
    InWindow {
        /// Index of the superseding `Granted` event.
        grant: usize,
        /// Index of its accepted `Fence` event.
        fence: usize,
    },
    /// The fence for superseding `grant` had already been accepted at `fence`, yet the stale
    /// write was accepted anyway.
    AfterFence {
        /// Index of the superseding `Granted` event.
        grant: usize,
        /// Index of its accepted `Fence` event.
        fence: usize,
    },
    /// No superseding grant's token was ever fenced on this resource.
    NoFence,
}

/// A lease as the service's own state saw it: from `Granted` to the matching
/// `Expired` / `TakenOver` / `Released` / `Dropped` (same scope, holder and token), or still
/// open at the end of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenure {
    /// The scope leased.
    pub scope: Scope,
    /// The holder it was granted to.
    pub holder: NodeName,
    /// Its token.
    pub token: Token,
    /// Index of its `Granted` event.
    pub grant: usize,
    /// Index of the event that ended it; `None`: open at the end of the run.
    pub end: Option<usize>,
}

impl Tenure {
    /// Whether the service considered this lease held just before event `index`.
    pub fn open_before(&self, index: usize) -> bool {
        self.grant < index && self.end.is_none_or(|end| end >= index)
    }
}

/// A `Granted` while another tenure on the same scope was still open (an I2 breach).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoubleGrant {
    /// The grant of the newest tenure still open.
    pub open: usize,
    /// The grant made while it was open.
    pub grant: usize,
}

/// Grants, tenures and accepted fences of one history, built once by [`Index::new`]; every
/// event is named by its index in `history.events`.
#[derive(Clone, Debug)]
pub struct Index<'h> {
    events: &'h [Event],
    /// Grants per scope, in history order.
    grants: BTreeMap<&'h str, Vec<Grant>>,
    /// Indices of accepted `Fence` events per `(resource, token)`, in history order.
    fences: BTreeMap<(&'h str, Token), Vec<usize>>,
    /// Indices of accepted `Fence` events per `(writer, token)`, in history order.
    fences_by_writer: BTreeMap<(&'h str, Token), Vec<usize>>,
    /// Every tenure, in grant order.
    tenures: Vec<Tenure>,
    /// The event that ended a tenure → its position in `tenures`.
    ended_by: BTreeMap<usize, usize>,
    double_grants: Vec<DoubleGrant>,
    /// Time the run ended: `RunEnded`, else the last event (0 for an empty history).
    end_ns: u64,
}

impl<'h> Index<'h> {
    /// Reads `history` once.
    pub fn new(history: &'h History) -> Index<'h> {
        let events = &history.events[..];
        let mut index = Index {
            events,
            grants: BTreeMap::new(),
            fences: BTreeMap::new(),
            fences_by_writer: BTreeMap::new(),
            tenures: Vec::new(),
            ended_by: BTreeMap::new(),
            double_grants: Vec::new(),
            end_ns: 0,
        };
        // Per scope, indices into `tenures` that are still open, oldest first.
        let mut open: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut run_ended = None;
        for (k, event) in events.iter().enumerate() {
            match &event.kind {
                EventKind::Granted {
                    scope,
                    holder,
                    token,
                    ..
                } => index.granted(&mut open, k, scope, holder, *token),
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
                } => index.ended(&mut open, k, scope, holder, *token),
                EventKind::Fence {
                    resource,
                    writer,
                    token,
                    verdict,
                } if verdict.is_accepted() => {
                    index.fences.entry((resource, *token)).or_default().push(k);
                    index
                        .fences_by_writer
                        .entry((writer, *token))
                        .or_default()
                        .push(k);
                }
                EventKind::RunEnded if run_ended.is_none() => run_ended = Some(event.t_ns),
                _ => {}
            }
        }
        index.end_ns = run_ended.or(events.last().map(|e| e.t_ns)).unwrap_or(0);
        index
    }

    /// A `Granted` at event `k`: a grant, a tenure, and a double grant if one was open.
    fn granted(
        &mut self,
        open: &mut BTreeMap<&'h str, Vec<usize>>,
        k: usize,
        scope: &'h str,
        holder: &str,
        token: Token,
    ) {
        self.grants.entry(scope).or_default().push(Grant {
            index: k,
            holder: holder.to_owned(),
            token,
        });
        let open_here = open.entry(scope).or_default();
        if let Some(&newest) = open_here.last() {
            self.double_grants.push(DoubleGrant {
                open: self.tenures[newest].grant,
                grant: k,
            });
        }
        open_here.push(self.tenures.len());
        self.tenures.push(Tenure {
            scope: scope.to_owned(),
            holder: holder.to_owned(),
            token,
            grant: k,
            end: None,
        });
    }

    /// A lease ended at event `k`: closes the oldest open tenure with that holder and token.
    fn ended(
        &mut self,
        open: &mut BTreeMap<&'h str, Vec<usize>>,
        k: usize,
        scope: &str,
        holder: &str,
        token: Token,
    ) {
        let Some(open_here) = open.get_mut(scope) else {
            return;
        };
        let tenures = &self.tenures;
        let matching = open_here
            .iter()
            .position(|&t| tenures[t].holder == holder && tenures[t].token == token);
        if let Some(position) = matching {
            let tenure = open_here.remove(position);
            self.tenures[tenure].end = Some(k);
            self.ended_by.insert(k, tenure);
        }
    }

    /// The history's events.
    pub fn events(&self) -> &'h [Event] {
        self.events
    }

    /// Every scope ever granted, in sorted order.
    pub fn scopes(&self) -> impl Iterator<Item = &'h str> + '_ {
        self.grants.keys().copied()
    }

    /// The grants on `scope`, in history order (empty for a scope never granted).
    pub fn grants(&self, scope: &str) -> &[Grant] {
        self.grants.get(scope).map_or(&[], Vec::as_slice)
    }

    /// The newest grant on `scope` issued before event `before`.
    pub fn newest_grant(&self, scope: &str, before: usize) -> Option<&Grant> {
        let grants = self.grants(scope);
        grants[..grants.partition_point(|g| g.index < before)].last()
    }

    /// Every tenure, in grant order.
    pub fn tenures(&self) -> &[Tenure] {
        &self.tenures
    }

    /// The tenure that event `end` ended (an `Expired`, `TakenOver`, `Released` or `Dropped`
    /// that matched an open tenure).
    pub fn tenure_ended_by(&self, end: usize) -> Option<&Tenure> {
        self.ended_by.get(&end).map(|&t| &self.tenures[t])
    }

    /// Grants made while another tenure on their scope was open (I2), in history order.
    pub fn double_grants(&self) -> &[DoubleGrant] {
        &self.double_grants
    }

    /// Time the run ended (ns): `RunEnded`, else the last event; 0 for an empty history.
    pub fn end_ns(&self) -> u64 {
        self.end_ns
    }

    /// The event that ends the epoch begun by `Granted` event `grant` in the service's state:
    /// the first of the next grant on its scope (which supersedes it) and the end of its
    /// tenure. `None` when it lasts to the end of the run, or `grant` is not a grant. Epochs of
    /// one scope so bounded never overlap, even across a double grant.
    pub fn epoch_end(&self, grant: usize) -> Option<usize> {
        let tenure = self.tenure_of(grant)?;
        let grants = self.grants(&tenure.scope);
        let next = grants
            .get(grants.partition_point(|g| g.index <= grant))
            .map(|g| g.index);
        match (tenure.end, next) {
            (Some(end), Some(next)) => Some(end.min(next)),
            (end, next) => end.or(next),
        }
    }

    /// The epoch of `(scope, holder, token)` as of just before event `before`: the newest
    /// grant of that holder and token on the scope issued before it, and whether a later
    /// grant on the scope (to anyone) had superseded it by then.
    pub fn epoch(&self, scope: &str, holder: &str, token: Token, before: usize) -> Epoch {
        let Some(grants) = self.grants.get(scope) else {
            return Epoch::NeverGranted;
        };
        let issued = grants.partition_point(|g| g.index < before);
        let Some(position) = grants[..issued]
            .iter()
            .rposition(|g| g.holder == holder && g.token == token)
        else {
            return Epoch::NeverGranted;
        };
        match grants[..issued].get(position + 1) {
            None => Epoch::Current {
                grant: grants[position].index,
            },
            Some(next) => Epoch::Superseded {
                grant: grants[position].index,
                superseded_by: next.index,
            },
        }
    }

    /// Whether the tenure that began with `Granted` event `grant` was still held by the
    /// service just before event `before` (not yet expired, released, taken over or dropped).
    /// `false` when `grant` is not a grant.
    pub fn held_before(&self, grant: usize, before: usize) -> bool {
        // Tenures are pushed in grant order, so their `grant` indices are sorted.
        let at = self.tenures.partition_point(|t| t.grant < grant);
        self.tenures
            .get(at)
            .is_some_and(|t| t.grant == grant && t.open_before(before))
    }

    /// The tenure that began with `Granted` event `grant` (`None` when it is not a grant).
    pub fn tenure_of(&self, grant: usize) -> Option<&Tenure> {
        // Tenures are pushed in grant order, so their `grant` indices are sorted.
        let at = self.tenures.partition_point(|t| t.grant < grant);
        self.tenures.get(at).filter(|t| t.grant == grant)
    }

    /// The grants on `scope` strictly between events `after` and `before`.
    pub fn grants_between(&self, scope: &str, after: usize, before: usize) -> &[Grant] {
        let Some(grants) = self.grants.get(scope) else {
            return &[];
        };
        let start = grants.partition_point(|g| g.index <= after);
        let end = grants.partition_point(|g| g.index < before);
        &grants[start..end.max(start)]
    }

    /// For a write on `resource` accepted at `accept` from an epoch granted at `grant` on
    /// `scope` and superseded since: where the superseding epochs' fences stood.
    pub fn fence_status(
        &self,
        scope: &str,
        resource: &str,
        grant: usize,
        accept: usize,
    ) -> FenceStatus {
        let superseding = self.grants_between(scope, grant, accept);
        let fences_of = |g: &Grant| {
            self.fences
                .get(&(resource, g.token))
                .map(Vec::as_slice)
                .unwrap_or(&[])
        };
        // A fence already in place outweighs one still on its way: report the store ignoring it.
        for g in superseding {
            if let Some(&fence) = fences_of(g).iter().find(|&&f| f > g.index && f < accept) {
                return FenceStatus::AfterFence {
                    grant: g.index,
                    fence,
                };
            }
        }
        for g in superseding {
            if let Some(&fence) = fences_of(g).iter().find(|&&f| f > accept) {
                return FenceStatus::InWindow {
                    grant: g.index,
                    fence,
                };
            }
        }
        FenceStatus::NoFence
    }

    /// The first accepted fence by `writer` with `token`, on any resource, after `after`.
    pub fn first_fence_by(&self, writer: &str, token: Token, after: usize) -> Option<usize> {
        let fences = self.fences_by_writer.get(&(writer, token))?;
        fences.iter().copied().find(|&f| f > after)
    }

    /// True time of event `index`, in milliseconds.
    pub(crate) fn t_ms(&self, index: usize) -> f64 {
        ns_to_ms(self.events[index].t_ns)
    }
}

/// Nanoseconds as (fractional) milliseconds.
pub(crate) fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}
