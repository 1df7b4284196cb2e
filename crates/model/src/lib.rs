//! fencesim's vocabulary and protocol state machines, free of madsim and of I/O.
//!
//! Everything here is a pure function of its inputs (time is passed in, effects are
//! returned), so it can be tested on hand-written inputs without running a simulation.
//!
//! Glossary (see ARCHITECTURE.md): a *scope* is the key a lease is granted on; a *token* is
//! the number issued with a grant; an *epoch* is the period during which one grant is the
//! newest for its scope; a *resource* is the key the storage protects.

#![warn(missing_docs)]

pub mod belief;
pub mod clock;
pub mod fence;
pub mod fnv;
pub mod history;
pub mod lease;
pub mod policy;
pub mod rng;
pub mod tokens;
pub mod version;

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
    /// The lease service's process.
    pub const COORDINATOR: &str = "coordinator";
    /// The protected storage's process.
    pub const STORAGE: &str = "storage";
    /// The node that carries messages in flight (no fault ever touches it).
    pub const NET: &str = "net";
    /// Where the fault injector records run boundaries and network faults.
    pub const NEMESIS: &str = "nemesis";
    /// The name of worker `index`: `worker-0`, `worker-1`, ...
    pub fn worker(index: usize) -> String {
        format!("worker-{index}")
    }

    /// Every process of a run with `workers` workers, in a fixed order: the coordinator,
    /// the storage, then the workers.
    pub fn processes(workers: usize) -> Vec<String> {
        let mut names = vec![COORDINATOR.to_string(), STORAGE.to_string()];
        names.extend((0..workers).map(worker));
        names
    }
}

/// Milliseconds (possibly fractional) to nanoseconds, saturating at zero and at `u64::MAX`.
/// Validation bounds every duration (`fencesim_scenario::limits`) far below the saturation
/// point (7 days is 6.0e14 ns; u64 holds 1.8e19), so saturating is only a guard.
pub fn ms_to_ns(ms: f64) -> u64 {
    debug_assert!(!ms.is_nan(), "a duration is NaN");
    if ms.is_nan() || ms <= 0.0 {
        0
    } else {
        // `as` saturates at u64::MAX for values beyond it.
        (ms * NS_PER_MS as f64).round() as u64
    }
}

/// Whole milliseconds to nanoseconds. Panics (a broken internal invariant, caught and
/// reported with its seed) rather than wrap: validated durations cannot reach it.
pub fn whole_ms_to_ns(ms: u64) -> u64 {
    ms.checked_mul(NS_PER_MS)
        .expect("a validated duration fits in u64 nanoseconds (see the scenario limits)")
}

/// The invariants fencesim checks (docs/spec.md, "Invariants and what is reported").
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
    /// Every invariant, I1 to I5.
    pub const ALL: [Invariant; 5] = [
        Invariant::I1,
        Invariant::I2,
        Invariant::I3,
        Invariant::I4,
        Invariant::I5,
    ];

    /// The invariant named `text` (`"I1"`..`"I5"`), if any.
    pub fn parse(text: &str) -> Option<Invariant> {
        Invariant::ALL
            .into_iter()
            .find(|inv| inv.to_string() == text)
    }

    /// Whether a violation is a safety failure of the protected storage: it accepted a write
    /// it must not have (I3, a stale token; I4, a superseded epoch), the question fencesim
    /// answers. I1 and I2 are the lease service's own guarantees (their breach is a cause,
    /// judged apart) and I5 is liveness. `tune` counts a seed unsafe by this, so a new
    /// storage invariant says here whether it is one.
    pub fn is_safety(self) -> bool {
        match self {
            Invariant::I3 | Invariant::I4 => true,
            Invariant::I1 | Invariant::I2 | Invariant::I5 => false,
        }
    }

    /// A few words naming what it guarantees.
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
/// happened. `fencesim-check` computes them from a run's metrics.
///
/// Ordered by name (not declaration order), so maps keyed by a condition list it
/// alphabetically, as its name would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coverage {
    /// A write from a superseded epoch reached the storage.
    StaleWritePresented,
    /// The storage rejected a write as stale.
    StaleWriteRejected,
    /// A writer saw a newer stored token and abandoned its write.
    WriteAbandoned,
    /// A lease expired while its holder was paused.
    LeaseExpiredWhilePaused,
    /// A lease expired while its holder was alive.
    FalseExpiry,
    /// A scope was granted to a different holder than before.
    Takeover,
    /// A crashed holder's scope was taken over.
    TakeoverAfterCrash,
    /// A worker's renewal was refused or timed out.
    RenewalFailed,
    /// An external side effect happened under a superseded token.
    SupersededSideEffect,
    /// An external side effect happened.
    SideEffect,
    /// Two workers believed they held the same scope at once.
    OverlappingBeliefs,
    /// A new holder's fence reached the storage.
    FenceRaised,
    /// A superseded write was accepted between a grant and its fence.
    AcceptedInFenceWindow,
    /// The storage rejected a write whose token's epoch was still current (no newer grant on
    /// its scope) and whose lease the service still held: a false rejection, usually meant
    /// as `never`.
    CurrentWriteRejected,
    /// A holder stood down because of an outage: its run of failed renewals began while the
    /// lease service was down or its link to it cut, even if it stood down after the outage.
    OutageStandDown,
}

impl Coverage {
    /// Every condition, in the order documentation lists them.
    pub const ALL: [Coverage; 15] = [
        Coverage::StaleWritePresented,
        Coverage::StaleWriteRejected,
        Coverage::WriteAbandoned,
        Coverage::LeaseExpiredWhilePaused,
        Coverage::FalseExpiry,
        Coverage::Takeover,
        Coverage::TakeoverAfterCrash,
        Coverage::RenewalFailed,
        Coverage::SupersededSideEffect,
        Coverage::SideEffect,
        Coverage::OverlappingBeliefs,
        Coverage::FenceRaised,
        Coverage::AcceptedInFenceWindow,
        Coverage::CurrentWriteRejected,
        Coverage::OutageStandDown,
    ];

    /// The name as written in scenario files, e.g. `"stale-write-rejected"`.
    pub fn name(self) -> &'static str {
        match self {
            Coverage::StaleWritePresented => "stale-write-presented",
            Coverage::StaleWriteRejected => "stale-write-rejected",
            Coverage::WriteAbandoned => "write-abandoned",
            Coverage::LeaseExpiredWhilePaused => "lease-expired-while-paused",
            Coverage::FalseExpiry => "false-expiry",
            Coverage::Takeover => "takeover",
            Coverage::TakeoverAfterCrash => "takeover-after-crash",
            Coverage::RenewalFailed => "renewal-failed",
            Coverage::SupersededSideEffect => "superseded-side-effect",
            Coverage::SideEffect => "side-effect",
            Coverage::OverlappingBeliefs => "overlapping-beliefs",
            Coverage::FenceRaised => "fence-raised",
            Coverage::AcceptedInFenceWindow => "accepted-in-fence-window",
            Coverage::CurrentWriteRejected => "current-write-rejected",
            Coverage::OutageStandDown => "outage-stand-down",
        }
    }

    /// What it means, in one phrase.
    pub fn meaning(self) -> &'static str {
        match self {
            Coverage::StaleWritePresented => "a write from a superseded epoch reached the storage",
            Coverage::StaleWriteRejected => "the storage rejected a write as stale",
            Coverage::WriteAbandoned => "a writer saw a newer stored token and abandoned its write",
            Coverage::LeaseExpiredWhilePaused => "a lease expired while its holder was paused",
            Coverage::FalseExpiry => "a lease expired while its holder was alive",
            Coverage::Takeover => "a scope was granted to a different holder than before",
            Coverage::TakeoverAfterCrash => "a crashed holder's scope was taken over",
            Coverage::RenewalFailed => "a worker's renewal was refused or timed out",
            Coverage::SupersededSideEffect => {
                "an external side effect happened under a superseded token"
            }
            Coverage::SideEffect => "an external side effect happened",
            Coverage::OverlappingBeliefs => "two workers believed they held the same scope at once",
            Coverage::FenceRaised => "a new holder's fence reached the storage",
            Coverage::AcceptedInFenceWindow => {
                "a superseded write was accepted between a grant and its fence"
            }
            Coverage::CurrentWriteRejected => {
                "the storage rejected a write whose lease was still current and held"
            }
            Coverage::OutageStandDown => "a holder stood down because of an outage",
        }
    }

    /// The condition named `name`, if any.
    pub fn parse(name: &str) -> Option<Coverage> {
        Coverage::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl Ord for Coverage {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl PartialOrd for Coverage {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safety_invariants_are_the_storages() {
        let safety: Vec<Invariant> = Invariant::ALL
            .into_iter()
            .filter(|i| i.is_safety())
            .collect();
        assert_eq!(safety, [Invariant::I3, Invariant::I4]);
    }
}
