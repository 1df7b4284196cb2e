//! Planted bugs ("mutants") for measuring the harness's own sensitivity.
//!
//! Each [`Mutant`] is one realistic bug at one site in fencesim (a fencing mode, the lease
//! service, the clocks, the network, the metrics and coverage counters, or the checker). The
//! site asks [`active`]; without the `mutants` cargo feature `active` is a `const fn` that
//! returns `false`, so normal builds compile every planted branch away (zero cost).
//!
//! With the feature, one mutant is selected for the whole process: by [`select`] (what
//! `xtask sensitivity` does between mutants), or by the `FENCESIM_MUTANT` environment
//! variable, read once on the first [`active`] call (what `.ci/mutants` does to run a test
//! under a mutant). [`Mutant::ALL`] is the catalogue with, for each mutant, the scenario and
//! the test that must catch it; `reports/sensitivity.md` shows both verified.

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
}

/// Where a mutant is planted and what must catch it.
#[derive(Clone, Copy, Debug)]
pub struct MutantInfo {
    /// The mutant.
    pub mutant: Mutant,
    /// Its `FENCESIM_MUTANT` name.
    pub name: &'static str,
    /// Component: fencing, lease, clock, network, metrics, coverage or checker.
    pub area: &'static str,
    /// File and function of the planted branch.
    pub site: &'static str,
    /// The scenario whose expectation it breaks (for area `tune`: the tuning profile under
    /// scenarios/ whose decisions it breaks). Code the catalogue never runs (see
    /// [`MutantInfo::catalogue_runs_it`]) is left to its named test by `xtask sensitivity`;
    /// `-` when no scenario is meant.
    pub scenario: &'static str,
    /// The test that fails under it: cargo arguments then the test's exact name.
    pub test: (&'static str, &'static str),
}

impl MutantInfo {
    /// The areas whose code `fencesim check` never runs: `tune`, `shrink`, `check-history`,
    /// `merge` and `percentiles` (a summary's percentiles are reported, never judged). Their
    /// planted bugs are held to their named tests by `.ci/mutants`, not to the catalogue.
    pub const OFF_CATALOGUE: &'static [&'static str] =
        &["tune", "shrink", "check-history", "merge", "percentiles"];

    /// Whether the catalogue runs the planted site (so `xtask sensitivity` applies it there).
    pub fn catalogue_runs_it(&self) -> bool {
        !Self::OFF_CATALOGUE.contains(&self.area)
    }
}

macro_rules! info {
    ($m:ident, $name:literal, $area:literal, $site:literal, $scenario:literal, $args:literal, $test:literal) => {
        MutantInfo {
            mutant: Mutant::$m,
            name: $name,
            area: $area,
            site: $site,
            scenario: $scenario,
            test: ($args, $test),
        }
    };
}

impl Mutant {
    /// Every mutant with its site, scenario and test.
    pub const ALL: &'static [MutantInfo] = &[
        info!(
            MaxTokenOffByOne,
            "max-token-off-by-one",
            "fencing",
            "fencing/src/max_token.rs: MaxTokens::admit",
            "gc-pause-textbook-max-token",
            "-p fencesim-fencing --lib",
            "max_token::tests::stale_rejected_equal_and_newer_accepted"
        ),
        info!(
            MaxTokenForgetsDurable,
            "max-token-forgets-durable",
            "fencing",
            "fencing/src/max_token.rs: MaxTokens::restart",
            "storage-restart-durable-max-token",
            "-p fencesim-fencing --lib",
            "max_token::tests::durable_restart_keeps_highest"
        ),
        info!(
            SqlIgnoresRowsAffected,
            "sql-ignores-rows-affected",
            "fencing",
            "fencing/src/sql.rs: SqlFence::write_row",
            "gc-pause-textbook-sql",
            "-p fencesim-fencing --lib",
            "sql::tests::le_rejects_stale_accepts_equal"
        ),
        info!(
            SqlVolatileKeepsTable,
            "sql-volatile-keeps-table",
            "fencing",
            "fencing/src/sql.rs: SqlFence::restart",
            "storage-restart-volatile-sql",
            "-p fencesim-fencing --lib",
            "sql::tests::volatile_restart_drops_the_table_so_stale_is_accepted"
        ),
        info!(
            SameStoreTxnComparesResource,
            "same-store-txn-compares-resource",
            "fencing",
            "fencing/src/same_store_txn.rs: write",
            "mixed-scope-shared-lease-same-store-txn",
            "-p fencesim-fencing --lib",
            "same_store_txn::tests::compares_the_lease_scope_not_the_resource"
        ),
        info!(
            FenceNotRaised,
            "fence-not-raised",
            "fencing",
            "fencing/src/fence_on_acquire.rs: raise_fence",
            "i4-gap-fence-on-acquire",
            "-p fencesim-fencing --lib",
            "fence_on_acquire::tests::old_holder_accepted_before_new_fence_rejected_after"
        ),
        info!(
            ProxyBypassesEveryone,
            "proxy-bypasses-everyone",
            "fencing",
            "fencing/src/proxy.rs: Proxy::write",
            "proxy-durable-gc-pause",
            "-p fencesim-fencing --lib",
            "proxy::tests::proxied_stale_write_rejected_bypass_accepted"
        ),
        info!(
            LeaseDurableCounterLost,
            "lease-durable-counter-lost",
            "lease",
            "model/src/tokens.rs: BuiltinTokens::restart",
            "durable-counter-restart",
            "-p fencesim-model --lib",
            "lease::tests::durable_counter_survives_restart_and_keep_extends"
        ),
        info!(
            LeaseRenewDoesNotExtend,
            "lease-renew-does-not-extend",
            "lease",
            "model/src/lease.rs: LeaseService::renew",
            "preset-etcd-partition-local-deadline-none",
            "-p fencesim-model --lib",
            "lease::tests::renew_moves_the_expiry"
        ),
        info!(
            LeaseLockDelayIgnored,
            "lease-lock-delay-ignored",
            "lease",
            "model/src/lease.rs: LeaseService::acquire",
            "preset-consul-lock-delay-none",
            "-p fencesim-model --lib",
            "lease::tests::lock_delay_blocks_reacquire_after_expiry"
        ),
        info!(
            LeaseExpiryCheckEarly,
            "lease-expiry-check-early",
            "lease",
            "model/src/lease.rs: LeaseService::revoked_at_ns",
            "preset-etcd-partition-local-deadline-none",
            "-p fencesim-model --lib",
            "lease::tests::expiry_checks_revoke_at_the_first_tick_after_expiry"
        ),
        info!(
            ClockMonoRunsDuringSuspend,
            "clock-mono-runs-during-suspend",
            "clock",
            "model/src/clock.rs: NodeClock::running_ns",
            "vm-suspend-local-deadline-none",
            "-p fencesim-model --lib",
            "clock::tests::suspend_freezes_mono_and_wall_jumps_on_resume"
        ),
        info!(
            ClockStepsIgnored,
            "clock-steps-ignored",
            "clock",
            "model/src/clock.rs: NodeClock::wall_ns",
            "wall-clock-tokens-step-back",
            "-p fencesim-model --lib",
            "clock::tests::steps_move_wall_but_never_mono"
        ),
        info!(
            ClockDriftInverted,
            "clock-drift-inverted",
            "clock",
            "model/src/clock.rs: NodeClock::rate",
            "k8s-client-go-clock-skew",
            "-p fencesim-model --lib",
            "clock::tests::drift_scales_both_clocks"
        ),
        info!(
            CoordinatorExpiryByWallClock,
            "coordinator-expiry-by-wall-clock",
            "lease",
            "sim/src/coordinator.rs: expire_due",
            "coordinator-clock-step-local-deadline-none",
            "-p fencesim-sim --test e2e",
            "a_coordinator_wall_clock_step_expires_nothing"
        ),
        info!(
            NetPartitionIgnored,
            "net-partition-ignored",
            "network",
            "sim/src/net.rs: send",
            "preset-zookeeper-session-clamp-and-suspect",
            "-p fencesim-sim --test e2e",
            "a_partition_drops_the_holders_renewals"
        ),
        info!(
            NetHeldMessagesDropped,
            "net-held-messages-dropped",
            "network",
            "sim/src/net.rs: Net::take_held",
            "check-lease-before-write-held-write-none",
            "-p fencesim-sim --test e2e",
            "a_held_link_delivers_every_held_write_at_release"
        ),
        info!(
            MetricPausedExpiryAnyExpiry,
            "metric-paused-expiry-any-expiry",
            "metrics",
            "check/src/metrics.rs: paused_expiries",
            "gc-pause-within-ttl-then-crash-max-token",
            "-p fencesim-check --lib",
            "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
        ),
        info!(
            MetricCurrentRejectionCountsAll,
            "metric-current-rejection-counts-all",
            "metrics",
            "check/src/metrics.rs: current_write_rejections",
            "gc-pause-textbook-max-token",
            "-p fencesim-check --lib",
            "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
        ),
        info!(
            MetricStaleRejectionCountsAccepts,
            "metric-stale-rejection-counts-accepts",
            "metrics",
            "check/src/metrics.rs: stale_write_rejections",
            "gc-pause-local-deadline-none",
            "-p fencesim-check --lib",
            "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
        ),
        info!(
            CoverageFalseExpiryAnyExpiry,
            "coverage-false-expiry-any-expiry",
            "coverage",
            "check/src/coverage.rs: hit",
            "gc-pause-within-ttl-then-crash-max-token",
            "-p fencesim-check --lib",
            "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
        ),
        info!(
            CheckI1EqualTokensPass,
            "check-i1-equal-tokens-pass",
            "checker",
            "check/src/invariants/tokens_increase.rs: check",
            "volatile-counter-restart-repeats-token",
            "-p fencesim-check --lib",
            "tests::invariants::i1_repeated_token_after_restart_is_caught"
        ),
        info!(
            CheckI3KeyedByWriter,
            "check-i3-keyed-by-writer",
            "checker",
            "check/src/invariants/stale_accept.rs: check",
            "gc-pause-textbook-none",
            "-p fencesim-check --lib",
            "tests::invariants::i3_lower_token_after_higher_accept_is_caught_with_i4"
        ),
        info!(
            CheckI4ResourceScope,
            "check-i4-resource-scope",
            "checker",
            "check/src/invariants/superseded_accept.rs: check",
            "mixed-scope-shared-lease-same-store-txn",
            "-p fencesim-check --lib",
            "tests::invariants::i4_is_judged_on_the_lease_scope_not_the_resource"
        ),
        info!(
            CheckI2EqualTokensOnly,
            "check-i2-equal-tokens-only",
            "checker",
            "check/src/invariants/single_holder.rs: check",
            "canary-double-grant",
            "-p fencesim-check --lib",
            "tests::invariants::i2_grant_while_held_is_caught"
        ),
        info!(
            CheckI5NoGapToEnd,
            "check-i5-no-gap-to-end",
            "checker",
            "check/src/invariants/liveness.rs: first_long_gap",
            "canary-stalled-store",
            "-p fencesim-check --lib",
            "tests::invariants::i5_progress_that_stops_after_the_heal_is_caught"
        ),
        info!(
            TuneRankingReadsP50,
            "tune-ranking-reads-p50",
            "tune",
            "tune/src/recommend.rs: ranked",
            "tune/jvm-gc",
            "-p fencesim-tune --lib",
            "recommend::tests::a_p50_p99_split_changes_the_ranking"
        ),
        info!(
            TuneUnsafeIgnoresI4,
            "tune-unsafe-ignores-i4",
            "tune",
            "tune/src/lib.rs: is_unsafe",
            "tune/gc-none",
            "-p fencesim-tune --lib",
            "tests::an_i4_only_seed_makes_its_setting_unsafe"
        ),
        info!(
            TuneFalseExpiryWrongSign,
            "tune-false-expiry-wrong-sign",
            "tune",
            "tune/src/recommend.rs: judge_rate",
            "tune/jvm-gc",
            "-p fencesim-tune --lib",
            "recommend::tests::a_target_exceeded_only_by_the_upper_bound_is_not_met"
        ),
        info!(
            TuneSeedsDifferPerSetting,
            "tune-seeds-differ-per-setting",
            "tune",
            "tune/src/lib.rs: seed_of",
            "tune/jvm-gc",
            "-p fencesim-tune --test sweep",
            "two_identical_settings_give_identical_rows"
        ),
        info!(
            CheckI5AnyResource,
            "check-i5-any-resource",
            "checker",
            "check/src/invariants/liveness.rs: first_long_gap",
            "canary-stalled-resource",
            "-p fencesim-check --lib",
            "tests::invariants::i5_one_resource_stalling_while_another_progresses_is_caught"
        ),
        info!(
            ShrinkVerifySkipsLastFault,
            "shrink-verify-skips-last-fault",
            "shrink",
            "explore/src/shrink.rs: Shrinker::verify",
            "-",
            "-p fencesim-explore --test shrink",
            "gc_pause_textbook_none_seed_0_shrinks_to_at_most_two_faults"
        ),
        info!(
            CheckHistoryI5JudgedTooShort,
            "check-history-i5-judged-too-short",
            "check-history",
            "fencesim/src/history_file.rs: judge_history",
            "-",
            "-p fencesim --lib",
            "history_file::tests::i5_is_judged_only_when_the_history_lasts_the_bound_past_the_heal"
        ),
        info!(
            MergeAcceptsRepeatedSeed,
            "merge-accepts-repeated-seed",
            "merge",
            "verdict/src/check_report.rs: check_seeds_counted_once",
            "-",
            "-p fencesim-verdict --lib",
            "check_report::tests::merge_refuses_inconsistent_parts"
        ),
        info!(
            PercentileRankRoundsDown,
            "percentile-rank-rounds-down",
            "percentiles",
            "verdict/src/summary/numeric.rs: Histogram::rank_bucket",
            "-",
            "-p fencesim-verdict --lib",
            "summary::tests::aggregate_arrays_concatenate_with_nearest_rank_percentiles"
        ),
    ];

    /// The mutant called `name`.
    pub fn from_name(name: &str) -> Option<Mutant> {
        Mutant::ALL
            .iter()
            .find(|info| info.name == name)
            .map(|info| info.mutant)
    }

    /// This mutant's catalogue entry.
    pub fn info(self) -> &'static MutantInfo {
        Mutant::ALL
            .iter()
            .find(|info| info.mutant == self)
            .expect("every mutant is in Mutant::ALL")
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
                .position(|info| info.mutant == m)
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
            Some(Mutant::ALL[value].mutant)
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
        for info in Mutant::ALL {
            assert_eq!(Mutant::from_name(info.name), Some(info.mutant));
            assert_eq!(info.mutant.info().name, info.name);
        }
        let mut names: Vec<&str> = Mutant::ALL.iter().map(|info| info.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Mutant::ALL.len());
        assert!(Mutant::ALL.len() >= 20);
    }

    #[cfg(not(feature = "mutants"))]
    #[test]
    fn nothing_is_active_without_the_feature() {
        assert!(!select(Some(Mutant::MaxTokenOffByOne)));
        assert!(Mutant::ALL.iter().all(|info| !active(info.mutant)));
    }
}
