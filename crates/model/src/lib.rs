//! fencesim's vocabulary and protocol state machines, free of madsim and of I/O.
//!
//! Everything here is a pure function of its inputs (time is passed in, effects are
//! returned), so it can be tested on hand-written inputs without running a simulation.
//!
//! Glossary (see ARCHITECTURE.md): a *scope* is the key a lease is granted on; a *token* is
//! the number issued with a grant; an *epoch* is the period during which one grant is the
//! newest for its scope; a *resource* is the key the storage protects.

pub mod clock;
pub mod fence;
pub mod history;
pub mod lease;
pub mod rng;

/// A lease scope or a storage resource key, e.g. `"job-1"`.
pub type Scope = String;
/// A node's name, e.g. `"worker-0"`, `"coordinator"`, `"storage"`.
pub type NodeName = String;
/// A fencing token as issued by the lease service.
pub type Token = u64;
/// Identity of one write operation (unique within a run), logged with every rejection.
pub type OpId = u64;

/// Nanoseconds in a millisecond.
pub const NS_PER_MS: u64 = 1_000_000;

/// Well-known node names.
pub mod nodes {
    pub const COORDINATOR: &str = "coordinator";
    pub const STORAGE: &str = "storage";
    pub const NET: &str = "net";
    pub fn worker(index: usize) -> String {
        format!("worker-{index}")
    }
}

/// Milliseconds (possibly fractional) to nanoseconds, saturating at zero.
pub fn ms_to_ns(ms: f64) -> u64 {
    if ms <= 0.0 {
        0
    } else {
        (ms * NS_PER_MS as f64).round() as u64
    }
}

/// The invariants fencesim checks (BRIEF.md, "Invariants and what is reported").
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Invariant {
    /// Tokens strictly increase across grants, per scope, restarts included.
    I1,
    /// At most one holder in the lease service's own state at every instant.
    I2,
    /// The storage never accepts a token lower than one it already accepted.
    I3,
    /// The storage never accepts a write whose epoch was superseded before the acceptance.
    I4,
    /// After the last fault heals, a fenced write commits within the liveness bound.
    I5,
}

impl Invariant {
    pub const ALL: [Invariant; 5] = [
        Invariant::I1,
        Invariant::I2,
        Invariant::I3,
        Invariant::I4,
        Invariant::I5,
    ];

    pub fn parse(text: &str) -> Option<Invariant> {
        Invariant::ALL
            .into_iter()
            .find(|inv| inv.to_string() == text)
    }

    pub fn title(self) -> &'static str {
        match self {
            Invariant::I1 => "tokens strictly increase",
            Invariant::I2 => "single holder in the service's state",
            Invariant::I3 => "no stale accept",
            Invariant::I4 => "no superseded accept",
            Invariant::I5 => "liveness after heal",
        }
    }
}

impl std::fmt::Display for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Coverage conditions a scenario can require ("sometimes" assertions): each must occur in
/// at least one seed of the range, proving the danger the scenario guards against actually
/// happened. Names and meanings; `fencesim-check` computes them from the metrics.
pub const COVERAGE: &[(&str, &str)] = &[
    (
        "stale-write-presented",
        "a write from a superseded epoch reached the storage",
    ),
    (
        "stale-write-rejected",
        "the storage rejected a write as stale",
    ),
    (
        "write-abandoned",
        "a writer saw a newer stored token and abandoned its write",
    ),
    (
        "lease-expired-while-paused",
        "a lease expired while its holder was paused",
    ),
    ("false-expiry", "a lease expired while its holder was alive"),
    (
        "takeover",
        "a scope was granted to a different holder than before",
    ),
    (
        "takeover-after-crash",
        "a crashed holder's scope was taken over",
    ),
    (
        "renewal-failed",
        "a worker's renewal was refused or timed out",
    ),
    (
        "superseded-side-effect",
        "an external side effect happened under a superseded token",
    ),
    ("side-effect", "an external side effect happened"),
    (
        "overlapping-beliefs",
        "two workers believed they held the same scope at once",
    ),
    ("fence-raised", "a new holder's fence reached the storage"),
    (
        "accepted-in-fence-window",
        "a superseded write was accepted between a grant and its fence",
    ),
];
