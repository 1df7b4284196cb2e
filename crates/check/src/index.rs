//! Lookups built once from a history and shared by the invariants and the metrics: grants
//! per scope (epochs), accepted fences, and the lease service's tenures.
//!
//! Every map is a `BTreeMap` so iteration (and therefore violation order) is deterministic.

use std::collections::BTreeMap;

use fencesim_model::{
    history::{Event, EventKind, History},
    NodeName, Scope, Token, NS_PER_MS,
};

/// One `Granted` event.
#[derive(Clone, Debug)]
pub(crate) struct Grant {
    /// Index into `history.events`.
    pub index: usize,
    pub holder: NodeName,
    pub token: Token,
}

/// Where a `(scope, holder, token)` epoch stood at some instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Epoch {
    /// No `Granted` for this holder and token on this scope came before.
    NeverGranted,
    /// `grant` is the newest grant on the scope.
    Current { grant: usize },
    /// `grant` was followed by `superseded_by` (the first later grant on the scope).
    Superseded { grant: usize, superseded_by: usize },
}

/// Whether a superseded accept happened before or after the new epoch's fence reached the
/// storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FenceStatus {
    /// `grant` (a superseding grant) had been issued, but its fence was accepted only later,
    /// at `fence`: the accept landed inside the grant→fence window.
    InWindow { grant: usize, fence: usize },
    /// The fence for superseding `grant` had already been accepted at `fence`, yet the stale
    /// write was accepted anyway.
    AfterFence { grant: usize, fence: usize },
    /// No superseding grant's token was ever fenced on this resource.
    NoFence,
}

/// A lease as the service's own state saw it: from `Granted` to the matching
/// `Expired` / `TakenOver` / `Released` / `Dropped` (or still open at the end of the run).
#[derive(Clone, Debug)]
pub(crate) struct Tenure {
    pub scope: Scope,
    pub holder: NodeName,
    pub token: Token,
    pub grant: usize,
    pub end: Option<usize>,
}

impl Tenure {
    /// Whether the service considered this lease held just before event `index`.
    pub fn open_before(&self, index: usize) -> bool {
        self.grant < index && self.end.is_none_or(|end| end >= index)
    }
}

/// A `Granted` while another tenure on the same scope was still open (an I2 breach).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DoubleGrant {
    /// The grant of the newest tenure still open.
    pub open: usize,
    pub grant: usize,
}

pub(crate) struct Index<'h> {
    pub events: &'h [Event],
    /// Grants per scope, in history order.
    pub grants: BTreeMap<&'h str, Vec<Grant>>,
    /// Indices of accepted `Fence` events per `(resource, token)`, in history order.
    fences: BTreeMap<(&'h str, Token), Vec<usize>>,
    /// Indices of accepted `Fence` events per `(writer, token)`, in history order.
    fences_by_writer: BTreeMap<(&'h str, Token), Vec<usize>>,
    pub tenures: Vec<Tenure>,
    pub double_grants: Vec<DoubleGrant>,
    /// Time the run ended: `RunEnded`, else the last event (0 for an empty history).
    pub end_ns: u64,
}

impl<'h> Index<'h> {
    pub fn new(history: &'h History) -> Index<'h> {
        let events = &history.events[..];
        let mut grants: BTreeMap<&str, Vec<Grant>> = BTreeMap::new();
        let mut fences: BTreeMap<(&str, Token), Vec<usize>> = BTreeMap::new();
        let mut fences_by_writer: BTreeMap<(&str, Token), Vec<usize>> = BTreeMap::new();
        let mut tenures: Vec<Tenure> = Vec::new();
        // Per scope, indices into `tenures` that are still open, oldest first.
        let mut open: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut double_grants = Vec::new();
        let mut run_ended = None;

        for (index, event) in events.iter().enumerate() {
            match &event.kind {
                EventKind::Granted {
                    scope,
                    holder,
                    token,
                    ..
                } => {
                    grants.entry(scope).or_default().push(Grant {
                        index,
                        holder: holder.clone(),
                        token: *token,
                    });
                    let open_here = open.entry(scope).or_default();
                    if let Some(&newest) = open_here.last() {
                        double_grants.push(DoubleGrant {
                            open: tenures[newest].grant,
                            grant: index,
                        });
                    }
                    open_here.push(tenures.len());
                    tenures.push(Tenure {
                        scope: scope.clone(),
                        holder: holder.clone(),
                        token: *token,
                        grant: index,
                        end: None,
                    });
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
                    if let Some(open_here) = open.get_mut(scope.as_str()) {
                        let matching = open_here.iter().position(|&t| {
                            tenures[t].holder == *holder && tenures[t].token == *token
                        });
                        if let Some(position) = matching {
                            let tenure = open_here.remove(position);
                            tenures[tenure].end = Some(index);
                        }
                    }
                }
                EventKind::Fence {
                    resource,
                    writer,
                    token,
                    verdict,
                } if verdict.is_accepted() => {
                    fences.entry((resource, *token)).or_default().push(index);
                    fences_by_writer
                        .entry((writer, *token))
                        .or_default()
                        .push(index);
                }
                EventKind::RunEnded if run_ended.is_none() => run_ended = Some(event.t_ns),
                _ => {}
            }
        }

        let end_ns = run_ended.or(events.last().map(|e| e.t_ns)).unwrap_or(0);
        Index {
            events,
            grants,
            fences,
            fences_by_writer,
            tenures,
            double_grants,
            end_ns,
        }
    }

    /// The epoch of `(scope, holder, token)` as of just before event `before`.
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

    /// The tenure that began with `Granted` event `grant`.
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

    pub fn t_ms(&self, index: usize) -> f64 {
        ns_to_ms(self.events[index].t_ns)
    }
}

pub(crate) fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}
