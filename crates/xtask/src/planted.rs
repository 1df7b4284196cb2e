//! The planted bugs' catalogue: for each [`Mutant`] (named and switched by
//! `fencesim-planted`), where it is planted, the scenario whose expectation it must break and
//! the test that must fail under it. `.ci/mutants` runs each test under its mutant (through
//! `xtask mutants`), `xtask sensitivity` each catalogue mutant over the whole catalogue.

use fencesim_planted::Mutant;

/// Where a mutant is planted and what must catch it.
#[derive(Clone, Copy, Debug)]
pub struct MutantInfo {
    /// The mutant.
    pub mutant: Mutant,
    /// Component: fencing, lease, clock, network, metrics, coverage, checker, or one of
    /// [`MutantInfo::OFF_CATALOGUE`].
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

    /// Its `FENCESIM_MUTANT` name.
    pub fn name(&self) -> &'static str {
        self.mutant.name()
    }

    /// Whether the catalogue runs the planted site (so `xtask sensitivity` applies it there).
    pub fn catalogue_runs_it(&self) -> bool {
        !Self::OFF_CATALOGUE.contains(&self.area)
    }
}

macro_rules! info {
    ($m:ident, $area:literal, $site:literal, $scenario:literal, $args:literal, $test:literal) => {
        MutantInfo {
            mutant: Mutant::$m,
            area: $area,
            site: $site,
            scenario: $scenario,
            test: ($args, $test),
        }
    };
}

/// Every mutant with its site, scenario and test, in `Mutant::ALL`'s order.
pub const ALL: &[MutantInfo] = &[
    info!(
        MaxTokenOffByOne,
        "fencing",
        "fencing/src/max_token.rs: HighestTokens::admit",
        "gc-pause-textbook-max-token",
        "-p fencesim-fencing --lib",
        "max_token::tests::stale_rejected_equal_and_newer_accepted"
    ),
    info!(
        MaxTokenForgetsDurable,
        "fencing",
        "fencing/src/max_token.rs: HighestTokens::restart",
        "storage-restart-durable-max-token",
        "-p fencesim-fencing --lib",
        "max_token::tests::durable_restart_keeps_highest"
    ),
    info!(
        SqlIgnoresRowsAffected,
        "fencing",
        "fencing/src/sql.rs: SqlFence::write_row",
        "gc-pause-textbook-sql",
        "-p fencesim-fencing --lib",
        "sql::tests::le_rejects_stale_accepts_equal"
    ),
    info!(
        SqlVolatileKeepsTable,
        "fencing",
        "fencing/src/sql.rs: SqlFence::restart",
        "storage-restart-volatile-sql",
        "-p fencesim-fencing --lib",
        "sql::tests::volatile_restart_drops_the_table_so_stale_is_accepted"
    ),
    info!(
        SameStoreTxnComparesResource,
        "fencing",
        "fencing/src/same_store_txn.rs: SameStoreTxn::write",
        "mixed-scope-shared-lease-same-store-txn",
        "-p fencesim-fencing --lib",
        "same_store_txn::tests::compares_the_lease_scope_not_the_resource"
    ),
    info!(
        FenceNotRaised,
        "fencing",
        "fencing/src/fence_on_acquire.rs: FenceOnAcquire::raise_fence",
        "i4-gap-fence-on-acquire",
        "-p fencesim-fencing --lib",
        "fence_on_acquire::tests::old_holder_accepted_before_new_fence_rejected_after"
    ),
    info!(
        ProxyBypassesEveryone,
        "fencing",
        "fencing/src/proxy.rs: Proxy::write",
        "proxy-durable-gc-pause",
        "-p fencesim-fencing --lib",
        "proxy::tests::proxied_stale_write_rejected_bypass_accepted"
    ),
    info!(
        LeaseDurableCounterLost,
        "lease",
        "model/src/tokens.rs: BuiltinTokens::restart",
        "durable-counter-restart",
        "-p fencesim-model --lib",
        "lease::tests::durable_counter_survives_restart_and_keep_extends"
    ),
    info!(
        LeaseRenewDoesNotExtend,
        "lease",
        "model/src/lease.rs: LeaseService::renew",
        "preset-etcd-partition-local-deadline-none",
        "-p fencesim-model --lib",
        "lease::tests::renew_moves_the_expiry"
    ),
    info!(
        LeaseLockDelayIgnored,
        "lease",
        "model/src/lease.rs: LeaseService::acquire",
        "preset-consul-lock-delay-none",
        "-p fencesim-model --lib",
        "lease::tests::lock_delay_blocks_reacquire_after_expiry"
    ),
    info!(
        LeaseExpiryCheckEarly,
        "lease",
        "model/src/lease.rs: LeaseService::revoked_at_ns",
        "preset-etcd-partition-local-deadline-none",
        "-p fencesim-model --lib",
        "lease::tests::expiry_checks_revoke_at_the_first_tick_after_expiry"
    ),
    info!(
        ClockMonoRunsDuringSuspend,
        "clock",
        "model/src/clock.rs: NodeClock::running_ns",
        "vm-suspend-local-deadline-none",
        "-p fencesim-model --lib",
        "clock::tests::suspend_freezes_mono_and_wall_jumps_on_resume"
    ),
    info!(
        ClockStepsIgnored,
        "clock",
        "model/src/clock.rs: NodeClock::wall_ns",
        "wall-clock-tokens-step-back",
        "-p fencesim-model --lib",
        "clock::tests::steps_move_wall_but_never_mono"
    ),
    info!(
        ClockDriftInverted,
        "clock",
        "model/src/clock.rs: NodeClock::rate",
        "k8s-client-go-clock-skew",
        "-p fencesim-model --lib",
        "clock::tests::drift_scales_both_clocks"
    ),
    info!(
        CoordinatorExpiryByWallClock,
        "lease",
        "sim/src/expiry.rs: expire_due",
        "coordinator-clock-step-local-deadline-none",
        "-p fencesim-sim --test e2e",
        "a_coordinator_wall_clock_step_expires_nothing"
    ),
    info!(
        NetPartitionIgnored,
        "network",
        "sim/src/net.rs: Net::send",
        "preset-zookeeper-session-clamp-and-suspect",
        "-p fencesim-sim --test e2e",
        "a_partition_drops_the_holders_renewals"
    ),
    info!(
        NetHeldMessagesDropped,
        "network",
        "sim/src/net.rs: Net::take_held",
        "check-lease-before-write-held-write-none",
        "-p fencesim-sim --test e2e",
        "a_held_link_delivers_every_held_write_at_release"
    ),
    info!(
        MetricPausedExpiryAnyExpiry,
        "metrics",
        "check/src/metrics.rs: NodeStates::count_expiry",
        "gc-pause-within-ttl-then-crash-max-token",
        "-p fencesim-check --lib",
        "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
    ),
    info!(
        MetricCurrentRejectionCountsAll,
        "metrics",
        "check/src/metrics.rs: rejected_current",
        "gc-pause-textbook-max-token",
        "-p fencesim-check --lib",
        "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
    ),
    info!(
        MetricStaleRejectionCountsAccepts,
        "metrics",
        "check/src/metrics.rs: count_write",
        "gc-pause-local-deadline-none",
        "-p fencesim-check --lib",
        "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
    ),
    info!(
        CoverageFalseExpiryAnyExpiry,
        "coverage",
        "check/src/coverage.rs: hit",
        "gc-pause-within-ttl-then-crash-max-token",
        "-p fencesim-check --lib",
        "tests::coverage::every_condition_is_hit_when_its_event_happened_and_only_then"
    ),
    info!(
        CheckI1EqualTokensPass,
        "checker",
        "check/src/invariants/tokens_increase.rs: check",
        "volatile-counter-restart-repeats-token",
        "-p fencesim-check --lib",
        "tests::invariants::i1_repeated_token_after_restart_is_caught"
    ),
    info!(
        CheckI3KeyedByWriter,
        "checker",
        "check/src/invariants/stale_accept.rs: check",
        "gc-pause-textbook-none",
        "-p fencesim-check --lib",
        "tests::invariants::i3_lower_token_after_higher_accept_is_caught_with_i4"
    ),
    info!(
        CheckI4ResourceScope,
        "checker",
        "check/src/invariants/superseded_accept.rs: check",
        "mixed-scope-shared-lease-same-store-txn",
        "-p fencesim-check --lib",
        "tests::invariants::i4_is_judged_on_the_lease_scope_not_the_resource"
    ),
    info!(
        CheckI2EqualTokensOnly,
        "checker",
        "check/src/invariants/single_holder.rs: check",
        "canary-double-grant",
        "-p fencesim-check --lib",
        "tests::invariants::i2_grant_while_held_is_caught"
    ),
    info!(
        CheckI5NoGapToEnd,
        "checker",
        "check/src/invariants/liveness.rs: first_long_gap",
        "shared-lease-sticky-job-starves",
        "-p fencesim-check --lib",
        "tests::invariants::i5_progress_that_stops_after_the_heal_is_caught"
    ),
    info!(
        TuneRankingReadsP50,
        "tune",
        "tune/src/rank.rs: ranked",
        "tune/jvm-gc",
        "-p fencesim-tune --lib",
        "recommend::tests::a_p50_p99_split_changes_the_ranking"
    ),
    info!(
        TuneUnsafeIgnoresI4,
        "tune",
        "tune/src/lib.rs: is_unsafe",
        "tune/gc-none",
        "-p fencesim-tune --lib",
        "tests::an_i4_only_seed_makes_its_setting_unsafe"
    ),
    info!(
        TuneFalseExpiryWrongSign,
        "tune",
        "tune/src/recommend.rs: judge_rate",
        "tune/jvm-gc",
        "-p fencesim-tune --lib",
        "recommend::tests::a_target_exceeded_only_by_the_upper_bound_is_not_met"
    ),
    info!(
        TuneSeedsDifferPerSetting,
        "tune",
        "tune/src/lib.rs: seed_of",
        "tune/jvm-gc",
        "-p fencesim-tune --test sweep",
        "two_identical_settings_give_identical_rows"
    ),
    info!(
        CheckI5AnyResource,
        "checker",
        "check/src/invariants/liveness.rs: first_long_gap",
        "shared-lease-sticky-job-starves",
        "-p fencesim-check --lib",
        "tests::invariants::i5_one_resource_stalling_while_another_progresses_is_caught"
    ),
    info!(
        ShrinkVerifySkipsLastFault,
        "shrink",
        "explore/src/shrink.rs: Shrinker::verify",
        "-",
        "-p fencesim-explore --test shrink",
        "gc_pause_textbook_none_seed_0_shrinks_to_at_most_two_faults"
    ),
    info!(
        CheckHistoryI5JudgedTooShort,
        "check-history",
        "fencesim/src/history_file.rs: liveness_missing",
        "-",
        "-p fencesim --lib",
        "history_file::tests::i5_is_judged_only_when_the_history_lasts_the_bound_past_the_heal"
    ),
    info!(
        MergeAcceptsRepeatedSeed,
        "merge",
        "verdict/src/check_report.rs: check_seeds_counted_once",
        "-",
        "-p fencesim-verdict --lib",
        "check_report::tests::merge_refuses_inconsistent_parts"
    ),
    info!(
        PercentileRankRoundsDown,
        "percentiles",
        "verdict/src/summary/numeric.rs: Histogram::rank_bucket",
        "-",
        "-p fencesim-verdict --lib",
        "summary::tests::aggregate_arrays_concatenate_with_nearest_rank_percentiles"
    ),
    info!(
        LeaseIgnoresSession,
        "lease",
        "model/src/lease.rs: LeaseService::acquire",
        "preset-etcd-restarted-holder-is-a-new-session-none",
        "-p fencesim-model --lib",
        "lease::tests::a_new_session_of_the_same_holder_waits_for_the_old_lease"
    ),
    info!(
        PresetZookeeperSuspectsAtSessionTimeout,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-zookeeper-suspect-before-session-expiry-slow-clock-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
    info!(
        PresetEtcdNoMinimumTtl,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-etcd-minimum-ttl-delays-the-takeover-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
    info!(
        PresetClientGoIdentityIsSession,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-client-go-restarted-holder-resumes-its-record-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
    info!(
        PresetZookeeperNoSessionClamp,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-zookeeper-session-clamp-expires-a-paused-holder-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
    info!(
        PresetEtcdNoRestartElection,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-etcd-restart-election-delays-the-takeover-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
    info!(
        PresetZookeeperStopsOnRenewFailure,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-zookeeper-unanswered-ping-keeps-the-lock-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
    info!(
        PresetConsulRenewsEveryThirdOfTtl,
        "lease",
        "scenario/src/parse/resolve/presets.rs: planted",
        "preset-consul-half-ttl-renewals-expire-a-paused-holder-none",
        "-p fencesim-scenario --test parse",
        "presets_resolve_their_defaults"
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutant_has_exactly_one_entry_in_order() {
        let listed: Vec<Mutant> = ALL.iter().map(|info| info.mutant).collect();
        assert_eq!(listed, Mutant::ALL.to_vec());
    }

    #[test]
    fn every_entry_names_a_site_a_test_and_a_catalogue_one_its_scenario() {
        for info in ALL {
            assert!(info.site.contains(".rs: "), "{}", info.name());
            assert!(info.test.0.starts_with("-p "), "{}", info.name());
            if info.catalogue_runs_it() {
                assert_ne!(
                    info.scenario,
                    "-",
                    "{}: a catalogue mutant names its scenario",
                    info.name()
                );
            }
        }
    }
}
