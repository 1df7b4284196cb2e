//! Planted bugs ("mutants"): the switch that turns one on, for measuring the harness's own
//! sensitivity.
//!
//! Each [`Mutant`] is one realistic bug at one site in fencesim (a fencing mode, the lease
//! service, the clocks, the network, the metrics and coverage counters, the checker, or code
//! the catalogue never runs: tune, shrink, check-history, merge, percentiles). The site asks
//! [`active`]; without this crate's `mutants` feature `active` is a `const fn` that returns
//! `false`, so normal builds compile every planted branch away (zero cost).
//!
//! With the feature, one mutant is selected for the whole process: by [`select`] (what
//! `xtask sensitivity` does between mutants), or by the `FENCESIM_MUTANT` environment
//! variable, read once on the first [`active`] call (what `.ci/mutants` does to run a test
//! under a mutant). What each mutant must be caught by (its scenario and its test) is the
//! catalogue of the tool that runs them, `crates/xtask/src/planted.rs`; this crate only names
//! them and holds the switch, so nothing here knows a scenario or a test.

#![warn(missing_docs)]

/// One planted bug. The names are the `FENCESIM_MUTANT` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mutant {
    /// `max-token` (and `proxy`, `fence-on-acquire`): `token + 1 < highest` instead of
    /// `token < highest`, so a token one below the highest is accepted.
    MaxTokenOffByOne,
    /// `max-token`: a durable store forgets its highest tokens on restart (not persisted).
    MaxTokenForgetsDurable,
    /// `sql`: rows affected not checked for `sql` (as `sql-ignore-rows`).
    SqlIgnoresRowsAffected,
    /// `sql` with a volatile database: the table survives a restart (the simulated crash
    /// loses nothing, so the catalogue would call a volatile fence safe).
    SqlVolatileKeepsTable,
    /// `same-store-txn`: compares against the lease on the resource, not the lease scope.
    SameStoreTxnComparesResource,
    /// `fence-on-acquire`: the fence is acknowledged but the epoch is not raised.
    FenceNotRaised,
    /// `proxy`: every writer is treated as a bypass writer.
    ProxyBypassesEveryone,
    /// Lease service: a durable token counter is lost on restart (not persisted).
    LeaseDurableCounterLost,
    /// Lease service: a renewal answers OK but does not move the expiry.
    LeaseRenewDoesNotExtend,
    /// Lease service: lock-delay is ignored after an expiry.
    LeaseLockDelayIgnored,
    /// Lease service: expiry checks revoke at the tick before the expiry (floor, not ceil).
    LeaseExpiryCheckEarly,
    /// Clocks: `mono` keeps running during a VM suspend.
    ClockMonoRunsDuringSuspend,
    /// Clocks: wall-clock steps are ignored.
    ClockStepsIgnored,
    /// Clocks: drift applied with the wrong sign.
    ClockDriftInverted,
    /// Lease service (simulated coordinator): expiry checked against the wall clock instead
    /// of the monotonic clock the expiries were computed on.
    CoordinatorExpiryByWallClock,
    /// Network: partitions drop nothing.
    NetPartitionIgnored,
    /// Network: a held link drops its messages at release instead of delivering them.
    NetHeldMessagesDropped,
    /// Metrics: every expiry counts as an expiry while paused.
    MetricPausedExpiryAnyExpiry,
    /// Metrics: every rejection counts as a rejection of a current write.
    MetricCurrentRejectionCountsAll,
    /// Metrics: accepted writes count as stale-write rejections.
    MetricStaleRejectionCountsAccepts,
    /// Coverage: `false-expiry` is hit by any expiry, a crashed holder's included.
    CoverageFalseExpiryAnyExpiry,
    /// Checker I1: equal tokens pass (`<` instead of `<=`).
    CheckI1EqualTokensPass,
    /// Checker I3: the highest accepted token is kept per writer, not per resource.
    CheckI3KeyedByWriter,
    /// Checker I4: the epoch is looked up on the resource instead of the lease scope.
    CheckI4ResourceScope,
    /// Checker I2: overlapping holders are judged only when the tokens are equal.
    CheckI2EqualTokensOnly,
    /// Checker I5: only gaps between accepted writes count, not the gap to the run's end.
    CheckI5NoGapToEnd,
    /// Tune: the recommendation ranks by the p50 of its ranking metric instead of the p99.
    TuneRankingReadsP50,
    /// Tune: a seed violating only I4 is not counted unsafe.
    TuneUnsafeIgnoresI4,
    /// Tune: the false-expiry target is compared with the wrong sign (≥ instead of ≤).
    TuneFalseExpiryWrongSign,
    /// Tune: each setting runs its own seeds (offset by its index) instead of the common ones.
    TuneSeedsDifferPerSetting,
    /// Checker I5: a write accepted to any resource counts as progress for every resource.
    CheckI5AnyResource,
    /// Shrink: the 1-minimality check skips the last fault of the shrunk schedule.
    ShrinkVerifySkipsLastFault,
    /// check-history: I5 is judged although the history ends before the liveness bound has
    /// passed since `faults-healed`.
    CheckHistoryI5JudgedTooShort,
    /// merge: a seed counted by two shards is not refused.
    MergeAcceptsRepeatedSeed,
    /// Percentiles: the nearest rank is rounded down (`⌊p·n/100⌋`) instead of up.
    PercentileRankRoundsDown,
    /// Lease service: a restarted holder (a new session under the same name) gets its old
    /// lease and token back, as if the service knew holders by name.
    LeaseIgnoresSession,
    /// ZooKeeper preset: the client trusts its lock for the whole session timeout instead of
    /// suspecting the connection at readTimeout (2/3 of it).
    PresetZookeeperSuspectsAtSessionTimeout,
    /// etcd preset: a requested TTL below etcd's minimum (1.5 × the election timeout, whole
    /// seconds) is used as asked.
    PresetEtcdNoMinimumTtl,
    /// client-go preset: holders are known by session, not by their identity string, so a
    /// restarted holder does not resume its own Lease record.
    PresetClientGoIdentityIsSession,
    /// ZooKeeper preset: a requested session timeout above 20 × tickTime is used as asked
    /// instead of being clamped.
    PresetZookeeperNoSessionClamp,
    /// etcd preset: a restarted member serves, and re-extends the leases it kept, at once,
    /// without first winning an election.
    PresetEtcdNoRestartElection,
    /// ZooKeeper preset: the client gives its lock up at the first failed ping instead of
    /// keeping it until readTimeout.
    PresetZookeeperStopsOnRenewFailure,
    /// Consul preset: the session is renewed every TTL/3 (etcd's keepalive period) instead of
    /// `RenewPeriodic`'s TTL/2.
    PresetConsulRenewsEveryThirdOfTtl,
}

impl Mutant {
    /// Every mutant, in catalogue order.
    pub const ALL: [Mutant; 43] = [
        Mutant::MaxTokenOffByOne,
        Mutant::MaxTokenForgetsDurable,
        Mutant::SqlIgnoresRowsAffected,
        Mutant::SqlVolatileKeepsTable,
        Mutant::SameStoreTxnComparesResource,
        Mutant::FenceNotRaised,
        Mutant::ProxyBypassesEveryone,
        Mutant::LeaseDurableCounterLost,
        Mutant::LeaseRenewDoesNotExtend,
        Mutant::LeaseLockDelayIgnored,
        Mutant::LeaseExpiryCheckEarly,
        Mutant::ClockMonoRunsDuringSuspend,
        Mutant::ClockStepsIgnored,
        Mutant::ClockDriftInverted,
        Mutant::CoordinatorExpiryByWallClock,
        Mutant::NetPartitionIgnored,
        Mutant::NetHeldMessagesDropped,
        Mutant::MetricPausedExpiryAnyExpiry,
        Mutant::MetricCurrentRejectionCountsAll,
        Mutant::MetricStaleRejectionCountsAccepts,
        Mutant::CoverageFalseExpiryAnyExpiry,
        Mutant::CheckI1EqualTokensPass,
        Mutant::CheckI3KeyedByWriter,
        Mutant::CheckI4ResourceScope,
        Mutant::CheckI2EqualTokensOnly,
        Mutant::CheckI5NoGapToEnd,
        Mutant::TuneRankingReadsP50,
        Mutant::TuneUnsafeIgnoresI4,
        Mutant::TuneFalseExpiryWrongSign,
        Mutant::TuneSeedsDifferPerSetting,
        Mutant::CheckI5AnyResource,
        Mutant::ShrinkVerifySkipsLastFault,
        Mutant::CheckHistoryI5JudgedTooShort,
        Mutant::MergeAcceptsRepeatedSeed,
        Mutant::PercentileRankRoundsDown,
        Mutant::LeaseIgnoresSession,
        Mutant::PresetZookeeperSuspectsAtSessionTimeout,
        Mutant::PresetEtcdNoMinimumTtl,
        Mutant::PresetClientGoIdentityIsSession,
        Mutant::PresetZookeeperNoSessionClamp,
        Mutant::PresetEtcdNoRestartElection,
        Mutant::PresetZookeeperStopsOnRenewFailure,
        Mutant::PresetConsulRenewsEveryThirdOfTtl,
    ];

    /// Its `FENCESIM_MUTANT` name.
    pub fn name(self) -> &'static str {
        match self {
            Mutant::MaxTokenOffByOne => "max-token-off-by-one",
            Mutant::MaxTokenForgetsDurable => "max-token-forgets-durable",
            Mutant::SqlIgnoresRowsAffected => "sql-ignores-rows-affected",
            Mutant::SqlVolatileKeepsTable => "sql-volatile-keeps-table",
            Mutant::SameStoreTxnComparesResource => "same-store-txn-compares-resource",
            Mutant::FenceNotRaised => "fence-not-raised",
            Mutant::ProxyBypassesEveryone => "proxy-bypasses-everyone",
            Mutant::LeaseDurableCounterLost => "lease-durable-counter-lost",
            Mutant::LeaseRenewDoesNotExtend => "lease-renew-does-not-extend",
            Mutant::LeaseLockDelayIgnored => "lease-lock-delay-ignored",
            Mutant::LeaseExpiryCheckEarly => "lease-expiry-check-early",
            Mutant::ClockMonoRunsDuringSuspend => "clock-mono-runs-during-suspend",
            Mutant::ClockStepsIgnored => "clock-steps-ignored",
            Mutant::ClockDriftInverted => "clock-drift-inverted",
            Mutant::CoordinatorExpiryByWallClock => "coordinator-expiry-by-wall-clock",
            Mutant::NetPartitionIgnored => "net-partition-ignored",
            Mutant::NetHeldMessagesDropped => "net-held-messages-dropped",
            Mutant::MetricPausedExpiryAnyExpiry => "metric-paused-expiry-any-expiry",
            Mutant::MetricCurrentRejectionCountsAll => "metric-current-rejection-counts-all",
            Mutant::MetricStaleRejectionCountsAccepts => "metric-stale-rejection-counts-accepts",
            Mutant::CoverageFalseExpiryAnyExpiry => "coverage-false-expiry-any-expiry",
            Mutant::CheckI1EqualTokensPass => "check-i1-equal-tokens-pass",
            Mutant::CheckI3KeyedByWriter => "check-i3-keyed-by-writer",
            Mutant::CheckI4ResourceScope => "check-i4-resource-scope",
            Mutant::CheckI2EqualTokensOnly => "check-i2-equal-tokens-only",
            Mutant::CheckI5NoGapToEnd => "check-i5-no-gap-to-end",
            Mutant::TuneRankingReadsP50 => "tune-ranking-reads-p50",
            Mutant::TuneUnsafeIgnoresI4 => "tune-unsafe-ignores-i4",
            Mutant::TuneFalseExpiryWrongSign => "tune-false-expiry-wrong-sign",
            Mutant::TuneSeedsDifferPerSetting => "tune-seeds-differ-per-setting",
            Mutant::CheckI5AnyResource => "check-i5-any-resource",
            Mutant::ShrinkVerifySkipsLastFault => "shrink-verify-skips-last-fault",
            Mutant::CheckHistoryI5JudgedTooShort => "check-history-i5-judged-too-short",
            Mutant::MergeAcceptsRepeatedSeed => "merge-accepts-repeated-seed",
            Mutant::PercentileRankRoundsDown => "percentile-rank-rounds-down",
            Mutant::LeaseIgnoresSession => "lease-ignores-session",
            Mutant::PresetZookeeperSuspectsAtSessionTimeout => {
                "preset-zookeeper-suspects-at-session-timeout"
            }
            Mutant::PresetEtcdNoMinimumTtl => "preset-etcd-no-minimum-ttl",
            Mutant::PresetClientGoIdentityIsSession => "preset-client-go-identity-is-session",
            Mutant::PresetZookeeperNoSessionClamp => "preset-zookeeper-no-session-clamp",
            Mutant::PresetEtcdNoRestartElection => "preset-etcd-no-restart-election",
            Mutant::PresetZookeeperStopsOnRenewFailure => "preset-zookeeper-stops-on-renew-failure",
            Mutant::PresetConsulRenewsEveryThirdOfTtl => "preset-consul-renews-every-third-of-ttl",
        }
    }

    /// The mutant called `name`.
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL.into_iter().find(|mutant| mutant.name() == name)
    }
}

/// Whether `mutant` is the selected planted bug. Always `false` without the `mutants` feature.
#[cfg(not(feature = "mutants"))]
#[inline(always)]
pub const fn active(_mutant: Mutant) -> bool {
    false
}

/// Whether the `mutants` feature is compiled in.
pub const ENABLED: bool = cfg!(feature = "mutants");

#[cfg(feature = "mutants")]
mod selected {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::Mutant;

    const UNREAD: usize = usize::MAX;
    const NONE: usize = usize::MAX - 1;
    static SELECTED: AtomicUsize = AtomicUsize::new(UNREAD);

    fn encode(mutant: Option<Mutant>) -> usize {
        mutant.map_or(NONE, |m| {
            Mutant::ALL
                .iter()
                .position(|&mutant| mutant == m)
                .expect("every mutant is in Mutant::ALL")
        })
    }

    pub(super) fn get() -> Option<Mutant> {
        let mut value = SELECTED.load(Ordering::Relaxed);
        if value == UNREAD {
            // Read once: an unknown name panics (a harness misuse, never a user input path).
            let from_env = std::env::var("FENCESIM_MUTANT").ok().map(|name| {
                Mutant::from_name(&name)
                    .unwrap_or_else(|| panic!("FENCESIM_MUTANT={name}: no such mutant"))
            });
            value = encode(from_env);
            SELECTED.store(value, Ordering::Relaxed);
        }
        if value == NONE {
            None
        } else {
            Some(Mutant::ALL[value])
        }
    }

    pub(super) fn set(mutant: Option<Mutant>) {
        SELECTED.store(encode(mutant), Ordering::Relaxed);
    }
}

/// Whether `mutant` is the selected planted bug.
#[cfg(feature = "mutants")]
pub fn active(mutant: Mutant) -> bool {
    selected::get() == Some(mutant)
}

/// Selects the planted bug for the whole process (`None`: the real code). Returns `false`,
/// selecting nothing, when the `mutants` feature is not compiled in.
pub fn select(mutant: Option<Mutant>) -> bool {
    #[cfg(feature = "mutants")]
    {
        selected::set(mutant);
        true
    }
    #[cfg(not(feature = "mutants"))]
    {
        let _ = mutant;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for mutant in Mutant::ALL {
            assert_eq!(Mutant::from_name(mutant.name()), Some(mutant));
        }
        let mut names: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Mutant::ALL.len());
        assert_eq!(Mutant::from_name("no-such-mutant"), None);
    }

    #[cfg(not(feature = "mutants"))]
    #[test]
    fn nothing_is_active_without_the_feature() {
        assert!(!select(Some(Mutant::MaxTokenOffByOne)));
        assert!(Mutant::ALL.iter().all(|&mutant| !active(mutant)));
    }

    #[cfg(feature = "mutants")]
    #[test]
    fn select_turns_exactly_one_on() {
        assert!(select(Some(Mutant::ClockStepsIgnored)));
        assert!(active(Mutant::ClockStepsIgnored));
        assert!(!active(Mutant::MaxTokenOffByOne));
        assert!(select(None));
        assert!(Mutant::ALL.iter().all(|&mutant| !active(mutant)));
    }
}
