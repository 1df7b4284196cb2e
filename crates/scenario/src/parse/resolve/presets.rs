//! The lease presets as one table of defaults: what `[lease] preset = "…"` supplies for every
//! `[lease]` and `[workers]` field a file leaves out, and the limits the service itself puts
//! on the values (docs/scenario-format.md, "Lease presets", gives the sources). A row is a
//! preset's differences from no preset; a value that follows from another (etcd's minimum
//! TTL from its election timeout) is a function of it. The planted preset bugs change a row
//! (`planted`), so they reach exactly the defaults a file leaves out.

use fencesim_model::lease::{ExpiredBy, HolderIdentity, TokenScope};
use fencesim_planted::{active, Mutant};

use crate::{parse::raw::RawTokenSource, spec::Preset};

/// The defaults of one preset (or of none), and its service's limits.
#[derive(Clone, Copy)]
pub(crate) struct Defaults {
    /// `lease.ttl_ms` (`None`: the file must give it).
    pub ttl_ms: Option<u64>,
    /// The TTLs the service takes, and how the error says so.
    pub ttl_range_ms: Option<(u64, u64, &'static str)>,
    /// `lease.expiry_check_ms`.
    pub expiry_check_ms: u64,
    /// Why the service needs `expiry_check_ms > 0`, if it does.
    pub expiry_check_needed: Option<&'static str>,
    /// `lease.restart_election_ms`, from the election timeout.
    pub restart_election_ms: fn(u64) -> u64,
    /// `lease.min_ttl_ms`, from the election timeout and the expiry check.
    pub min_ttl_ms: fn(u64, u64) -> u64,
    /// `lease.max_ttl_ms` (0: none), from the expiry check.
    pub max_ttl_ms: fn(u64) -> u64,
    /// `lease.expiry_factor`.
    pub expiry_factor: u64,
    /// `lease.lock_delay_ms`.
    pub lock_delay_ms: u64,
    /// The longest lock-delay the service takes, and how the error says so.
    pub max_lock_delay_ms: Option<(u64, &'static str)>,
    /// `lease.token_source` (`None`: the file must give it).
    pub token_source: Option<RawTokenSource>,
    /// `lease.token_scope`.
    pub token_scope: TokenScope,
    /// `lease.expired_by`.
    pub expired_by: ExpiredBy,
    /// `lease.holder_identity`.
    pub holder_identity: HolderIdentity,
    /// `workers.renew_every_ms`, from the effective TTL.
    pub renew_every_ms: fn(u64) -> u64,
    /// `workers.renew_deadline_ms`, from the effective TTL.
    pub renew_deadline_ms: fn(u64) -> u64,
    /// `workers.stop_on_renew_failure`.
    pub stop_on_renew_failure: bool,
    /// Whether the timings are checked as client-go's `NewLeaderElector` checks them.
    pub leader_elector_checks: bool,
    /// `workers.acquire_retry_ms`, from the renewal interval.
    pub acquire_retry_ms: fn(u64) -> u64,
    /// `workers.acquire_retry_jitter`.
    pub acquire_retry_jitter: f64,
}

/// No preset: the generic defaults.
const NONE: Defaults = Defaults {
    ttl_ms: None,
    ttl_range_ms: None,
    expiry_check_ms: 0,
    expiry_check_needed: None,
    restart_election_ms: |_| 0,
    min_ttl_ms: |_, _| 0,
    max_ttl_ms: |_| 0,
    expiry_factor: 1,
    lock_delay_ms: 0,
    max_lock_delay_ms: None,
    token_source: None,
    token_scope: TokenScope::PerResource,
    expired_by: ExpiredBy::Service,
    holder_identity: HolderIdentity::Session,
    // etcd's keepalive and ZooKeeper's ping (readTimeout/2) renew every TTL/3.
    renew_every_ms: |ttl_ms| ttl_ms / 3,
    renew_deadline_ms: |ttl_ms| ttl_ms,
    stop_on_renew_failure: true,
    leader_elector_checks: false,
    acquire_retry_ms: |_| 100,
    acquire_retry_jitter: 0.0,
};

/// etcd v3: a `concurrency.NewSession` (60 s) and mutex.
const ETCD: Defaults = Defaults {
    ttl_ms: Some(60_000),
    // The lessor looks for expired leases every 500 ms (`revokeExpiredLeases`).
    expiry_check_ms: 500,
    // A restarted member serves (and its lessor re-extends leases, `Promote`) only once it
    // is leader: raft's randomized election timeout, [1, 2) x election timeout. Measured
    // live: without it the simulated takeover after an etcd restart came ~1.5 s earlier
    // than a real etcd 3.4's.
    restart_election_ms: |election_ms| election_ms,
    // minTTL = ceil(1.5 × election timeout) in whole seconds (2 s by default).
    min_ttl_ms: |election_ms, _| (3 * election_ms / 2).div_ceil(1_000) * 1_000,
    token_source: Some(RawTokenSource::Revision),
    // The revision is store-wide.
    token_scope: TokenScope::Global,
    ..NONE
};

/// Kubernetes client-go leader election on a `Lease` object.
const CLIENT_GO: Defaults = Defaults {
    // LeaseDuration.
    ttl_ms: Some(15_000),
    token_source: Some(RawTokenSource::DurableCounter),
    expired_by: ExpiredBy::Candidate,
    holder_identity: HolderIdentity::Name,
    // RetryPeriod (2 s).
    renew_every_ms: |ttl_ms| 2_000.min(ttl_ms - 1),
    // RenewDeadline.
    renew_deadline_ms: |_| 10_000,
    // It keeps retrying renewals until RenewDeadline.
    stop_on_renew_failure: false,
    leader_elector_checks: true,
    // Candidates retry every RetryPeriod, jittered by JitterFactor 1.2.
    acquire_retry_ms: |renew_every_ms| renew_every_ms,
    acquire_retry_jitter: 1.2,
    ..NONE
};

/// ZooKeeper with a Curator-style lock.
const ZOOKEEPER: Defaults = Defaults {
    // Curator's default session: 60 s (clamped by ZooKeeper to 20 × tickTime).
    ttl_ms: Some(60_000),
    // Sessions expire in tickTime buckets; tickTime defaults to 2 s.
    expiry_check_ms: 2_000,
    expiry_check_needed: Some(
        "expected ZooKeeper's tickTime (> 0 ms): with preset = \"zookeeper\" it sets the session timeout's bounds, got 0",
    ),
    min_ttl_ms: |_, tick_ms| 2 * tick_ms,
    max_ttl_ms: |tick_ms| 20 * tick_ms,
    token_source: Some(RawTokenSource::Revision),
    // The client suspects the connection (Curator: SUSPENDED, the lock is no longer
    // trusted) when nothing was heard for 2/3 of the session timeout.
    renew_deadline_ms: |ttl_ms| ttl_ms * 2 / 3,
    // It keeps retrying (pinging) until readTimeout.
    stop_on_renew_failure: false,
    ..NONE
};

/// Consul sessions (`api.Lock`: 15 s) with a KV lock.
const CONSUL: Defaults = Defaults {
    ttl_ms: Some(15_000),
    ttl_range_ms: Some((
        10_000,
        86_400_000,
        "expected a Consul session TTL from 10_000 ms (10 s) to 86_400_000 ms (24 h)",
    )),
    // The session timer runs at TTL × SessionTTLMultiplier (2).
    expiry_factor: 2,
    lock_delay_ms: 15_000,
    max_lock_delay_ms: Some((
        60_000,
        "expected a Consul lock-delay from 0 to 60_000 ms (60 s)",
    )),
    token_source: Some(RawTokenSource::DurableCounter),
    // `RenewPeriodic`: every TTL/2.
    renew_every_ms: |ttl_ms| ttl_ms / 2,
    ..NONE
};

/// The defaults of `preset` (planted bugs included, in a build with them).
pub(crate) fn defaults(preset: Option<Preset>) -> Defaults {
    let mut row = match preset {
        None => NONE,
        Some(Preset::Etcd) => ETCD,
        Some(Preset::ClientGo) => CLIENT_GO,
        Some(Preset::Zookeeper) => ZOOKEEPER,
        Some(Preset::Consul) => CONSUL,
    };
    planted(preset, &mut row);
    row
}

/// The planted preset bugs, each a wrong value in its preset's row.
fn planted(preset: Option<Preset>, row: &mut Defaults) {
    if active(Mutant::PresetClientGoIdentityIsSession) && preset == Some(Preset::ClientGo) {
        // client-go's holders are known by session.
        row.holder_identity = HolderIdentity::Session;
    }
    if active(Mutant::PresetEtcdNoRestartElection) && preset == Some(Preset::Etcd) {
        // A restarted etcd member serves at once, with no election.
        row.restart_election_ms = |_| 0;
    }
    if active(Mutant::PresetEtcdNoMinimumTtl) && preset == Some(Preset::Etcd) {
        // etcd uses a requested TTL below its minimum as asked.
        row.min_ttl_ms = |_, _| 0;
    }
    if active(Mutant::PresetZookeeperNoSessionClamp) && preset == Some(Preset::Zookeeper) {
        // ZooKeeper uses a session timeout above its maximum as asked.
        row.max_ttl_ms = |_| 0;
    }
    if active(Mutant::PresetZookeeperStopsOnRenewFailure) && preset == Some(Preset::Zookeeper) {
        // The ZooKeeper client gives its lock up at the first failed ping.
        row.stop_on_renew_failure = true;
    }
    if active(Mutant::PresetConsulRenewsEveryThirdOfTtl) && preset == Some(Preset::Consul) {
        // Consul's session is renewed every TTL/3, like etcd's keepalive.
        row.renew_every_ms = |ttl_ms| ttl_ms / 3;
    }
    if active(Mutant::PresetZookeeperSuspectsAtSessionTimeout) && preset == Some(Preset::Zookeeper)
    {
        // The client trusts its lock for the whole session timeout.
        row.renew_deadline_ms = |ttl_ms| ttl_ms;
    }
}
