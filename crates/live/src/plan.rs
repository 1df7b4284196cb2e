//! What live mode will do for a scenario and seed: every field of the scenario checked
//! against what the live service, workers and store can honour (the first it cannot, named
//! with its value and why), and the seed's fault plan translated into live actions.

use fencesim_model::{history::PauseKind, nodes::COORDINATOR};
use fencesim_scenario::{
    plan, ClocksSpec, Fault, FencingMode, LeaseSpec, NetworkSpec, Preset, Scenario, SideEffects,
    StorageSpec, TimedFault, WorkerSpec,
};

use crate::{worker::LiveStore, LiveError};

/// One fault as live mode injects it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Action {
    /// SIGSTOP, then SIGCONT after `ms` (gc-pause and vm-suspend alike: a stopped process's
    /// monotonic clock keeps running, so a vm-suspend live is a GC pause).
    Pause {
        node: String,
        kind: PauseKind,
        ms: f64,
    },
    /// SIGKILL, then a new incarnation after `ms`.
    Crash { node: String, ms: f64 },
    /// SIGKILL etcd, then start it again on the same data directory after `ms`.
    EtcdRestart { ms: f64 },
    /// A partition cutting workers off the coordinator from the very start: the workers are
    /// started only when it ends (a worker that cannot reach etcd makes no request etcd could
    /// see, so this is what the service observes).
    LateStart { nodes: Vec<String>, ms: f64 },
    /// A partition of workers from the coordinator after the start: every packet between
    /// them and the lease service dropped by nftables in the run's private network namespace
    /// ([`netns`]) for `ms`.
    Cut { nodes: Vec<String>, ms: f64 },
    /// [`Action::Cut`] of the worker holding a lease in the service when it begins (the
    /// first scope in name order; worker-0 when none is held), as the simulator picks it.
    /// `id` tells the heal which worker the begin cut.
    CutHolder { id: usize, ms: f64 },
}

/// What live mode will do for a scenario and seed: the schedule, validated.
#[derive(Clone, Debug)]
pub struct LivePlan {
    /// The lease service.
    pub kind: Kind,
    pub(crate) store: LiveStore,
    /// The TTL asked of etcd (whole seconds, the scenario's effective TTL).
    pub(crate) ttl_s: u64,
    pub(crate) actions: Vec<(f64, Action)>,
    pub(crate) heal_ms: f64,
}

/// Which lease service a scenario runs against live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// etcd 3.4, one member.
    Etcd,
    /// ZooKeeper, standalone, with this tickTime.
    Zookeeper {
        /// tickTime (ms): `lease.expiry_check_ms`.
        tick_ms: u64,
    },
}

impl Kind {
    /// How often the service looks for expired leases (ms): etcd's revoke loop, ZooKeeper's
    /// tick. A run starts at a drawn offset within one such period.
    pub fn check_period_ms(self) -> u64 {
        match self {
            Kind::Etcd => ETCD_EXPIRY_CHECK_MS,
            Kind::Zookeeper { tick_ms } => tick_ms,
        }
    }
}

/// etcd's own timings with its default flags (`--election-timeout 1000`): what the `etcd`
/// preset assumes and live mode cannot change.
const ETCD_ELECTION_TIMEOUT_MS: u64 = 1_000;

/// etcd's lessor looks for expired leases every 500 ms.
const ETCD_EXPIRY_CHECK_MS: u64 = 500;

/// etcd's minimum TTL: ceil(1.5 × election timeout) in whole seconds.
const ETCD_MIN_TTL_MS: u64 = 2_000;

/// The loopback network live mode runs on is the scenario format's default network: nothing
/// else can be honoured.
fn default_network() -> fencesim_scenario::NetworkSpec {
    fencesim_scenario::NetworkSpec {
        latency: fencesim_scenario::LatencySpec {
            base: fencesim_scenario::Dist::Lognormal {
                median: 0.5,
                p99: 5.0,
            },
            spike_probability: 0.0,
            spikes_ms: vec![200.0, 400.0, 800.0],
        },
        loss: 0.0,
        duplicate: 0.0,
    }
}

/// Checks every field of `scenario` against what live mode implements: the first field it
/// cannot honour, named with its value and why. Every field of the resolved scenario is
/// taken apart here and in the section functions below, so a new one does not compile until
/// live mode decides about it.
fn check_fields(scenario: &Scenario) -> Result<(LiveStore, u64, Kind), String> {
    let Scenario {
        name: _,
        description: _,
        duration_ms: _,
        seeds: _,
        lease,
        storage,
        workers,
        network,
        clocks,
        faults: _, // per seed, in `translate`
        expect: _,
    } = scenario;
    let ttl = lease.effective_ttl_ms();
    let (kind, mut checks) = lease_checks(lease)?;
    let (store, storage_checks) = storage_checks(storage, kind)?;
    checks.extend(storage_checks);
    checks.push(workers_check(workers));
    checks.extend(network_check(network));
    checks.extend(clocks_checks(clocks));
    match checks.into_iter().find(|(refused, _)| *refused) {
        Some((_, why)) => Err(why),
        None => Ok((store, ttl / 1_000, kind)),
    }
}

/// A setting live mode may refuse: whether it does, and why.
type Check = (bool, String);

/// `[lease]`: the service `preset` names, and the checks of its settings against that
/// service; an error for a TTL the service would change or a preset live mode cannot run.
fn lease_checks(lease: &LeaseSpec) -> Result<(Kind, Vec<Check>), String> {
    let (kind, mut checks) = match lease.preset {
        Some(Preset::Etcd) => (Kind::Etcd, etcd_checks(lease)?),
        Some(Preset::Zookeeper) => {
            // The live server runs with tickTime = expiry_check_ms.
            let tick_ms = lease.expiry_check_ms;
            (Kind::Zookeeper { tick_ms }, zookeeper_checks(lease))
        }
        _ => {
            return Err(
                "`lease.preset`: live mode needs `preset = \"etcd\"` or `preset = \"zookeeper\"` (the services it can start)"
                    .into(),
            )
        }
    };
    checks.extend(common_lease_checks(lease));
    Ok((kind, checks))
}

/// `[lease]` against what both live services do: every field taken apart, so a new one does
/// not compile until live mode decides about it.
fn common_lease_checks(lease: &LeaseSpec) -> Vec<Check> {
    use fencesim_model::lease::{AcquireRule, ExpiredBy, HolderIdentity, OnRestart, TokenSource};
    let LeaseSpec {
        preset: _,     // lease_checks
        ttl_ms: _,     // through effective_ttl_ms, per service
        min_ttl_ms: _, // through effective_ttl_ms
        max_ttl_ms: _, // per service
        expiry_factor,
        expiry_check_ms: _, // per service
        lock_delay_ms,
        election_timeout_ms: _, // etcd_checks
        restart_election_ms: _, // per service
        token_source,
        token_scope: _, // per service
        on_restart,
        expired_by,
        holder_identity,
        acquire,
    } = lease;
    vec![
        (*expiry_factor != 1, format!("`lease.expiry_factor = {expiry_factor}`: the service expires a lease at its TTL (expected 1)")),
        (*lock_delay_ms != 0, format!("`lease.lock_delay_ms = {lock_delay_ms}`: the live service has no lock-delay (expected 0)")),
        (*token_source != TokenSource::Revision, format!("`lease.token_source = {token_source:?}`: live tokens are the service's own (expected \"revision\")")),
        (*on_restart != OnRestart::KeepAndExtend, format!("`lease.on_restart = {on_restart:?}`: a restarted live service keeps its leases and extends them (expected \"keep-and-extend\")")),
        (*expired_by != ExpiredBy::Service, format!("`lease.expired_by = {expired_by:?}`: the live service expires its leases itself (expected \"service\")")),
        (*holder_identity != HolderIdentity::Session, format!("`lease.holder_identity = {holder_identity:?}`: a live worker's lease is its own (expected \"session\")")),
        (*acquire != AcquireRule::CreateIfAbsent, format!("`lease.acquire = {acquire:?}`: live workers take the lock with the service's own create-if-absent (expected \"create-if-absent\")")),
    ]
}

/// `[lease]` against a live etcd with its default flags: an error for a TTL it would round or
/// raise.
fn etcd_checks(lease: &LeaseSpec) -> Result<Vec<Check>, String> {
    use fencesim_model::lease::TokenScope;
    let (ttl_ms, ttl) = (lease.ttl_ms, lease.effective_ttl_ms());
    if !ttl.is_multiple_of(1_000) {
        return Err(format!(
            "`lease.ttl_ms = {ttl_ms}` (effective TTL {ttl} ms): etcd grants whole seconds, so it \
             would run as {} s live; set a multiple of 1000",
            ttl.div_ceil(1_000)
        ));
    }
    if ttl < ETCD_MIN_TTL_MS {
        return Err(format!(
            "`lease.ttl_ms = {ttl_ms}` with `lease.min_ttl_ms` (effective TTL {ttl} ms): etcd \
             raises any TTL below its minimum of {} s to it, so it would run as {} s live",
            ETCD_MIN_TTL_MS / 1_000,
            ETCD_MIN_TTL_MS / 1_000
        ));
    }
    let LeaseSpec {
        max_ttl_ms,
        expiry_check_ms,
        election_timeout_ms,
        restart_election_ms,
        token_scope,
        ..
    } = lease;
    Ok(vec![
        (*max_ttl_ms != 0, format!("`lease.max_ttl_ms = {max_ttl_ms}`: etcd has no maximum live mode could set (expected 0)")),
        (*expiry_check_ms != ETCD_EXPIRY_CHECK_MS, format!("`lease.expiry_check_ms = {expiry_check_ms}`: etcd's lessor checks every {ETCD_EXPIRY_CHECK_MS} ms and live mode cannot change it")),
        (*election_timeout_ms != ETCD_ELECTION_TIMEOUT_MS, format!("`lease.election_timeout_ms = {election_timeout_ms}`: live etcd runs with its default election timeout of {ETCD_ELECTION_TIMEOUT_MS} ms")),
        (*restart_election_ms != ETCD_ELECTION_TIMEOUT_MS, format!("`lease.restart_election_ms = {restart_election_ms}`: a restarted live etcd elects itself within its election timeout, {ETCD_ELECTION_TIMEOUT_MS} ms (expected that)")),
        (*token_scope != TokenScope::Global, format!("`lease.token_scope = {token_scope:?}`: etcd's revision is store-wide (expected \"global\")")),
    ])
}

/// `[lease]` against a standalone ZooKeeper with tickTime = `expiry_check_ms`, which clamps
/// session timeouts to [2, 20] x tickTime itself, as the preset's min and max TTL say.
fn zookeeper_checks(lease: &LeaseSpec) -> Vec<Check> {
    use fencesim_model::lease::TokenScope;
    let LeaseSpec {
        min_ttl_ms,
        max_ttl_ms,
        expiry_check_ms: tick,
        restart_election_ms,
        token_scope,
        ..
    } = lease;
    vec![
        (!(100..=60_000).contains(tick), format!("`lease.expiry_check_ms = {tick}`: ZooKeeper's tickTime, live from 100 to 60_000 ms")),
        (*min_ttl_ms != 2 * tick, format!("`lease.min_ttl_ms = {min_ttl_ms}`: ZooKeeper's minimum session timeout is 2 x tickTime ({} ms)", 2 * tick)),
        (*max_ttl_ms != 20 * tick, format!("`lease.max_ttl_ms = {max_ttl_ms}`: ZooKeeper's maximum session timeout is 20 x tickTime ({} ms)", 20 * tick)),
        (*restart_election_ms != 0, format!("`lease.restart_election_ms = {restart_election_ms}`: a standalone ZooKeeper serves at once after a restart (expected 0)")),
        (*token_scope != TokenScope::PerResource, format!("`lease.token_scope = {token_scope:?}`: a lock node's sequence number counts per lock directory (expected \"per-resource\")")),
    ]
}

/// `[storage]`: the live store for its fencing mode (an error for one live mode does not run)
/// and the checks of its other settings.
fn storage_checks(storage: &StorageSpec, kind: Kind) -> Result<(LiveStore, Vec<Check>), String> {
    let StorageSpec {
        fencing,
        max_token: _, // live storage never restarts (storage-restart is refused)
        compare_scope,
        proxy_bypass: _, // only with `fencing = "proxy"`, refused below
    } = storage;
    let store = match fencing {
        FencingMode::None => LiveStore::None,
        FencingMode::Sql => LiveStore::Sql,
        FencingMode::SqlIgnoreRows => LiveStore::SqlIgnoreRows,
        FencingMode::SameStoreTxn if kind == Kind::Etcd => LiveStore::SameStoreTxn,
        other => {
            return Err(format!(
                "`storage.fencing = {other:?}`: live mode runs none, sql, sql-ignore-rows and same-store-txn"
            ))
        }
    };
    let checks = vec![
        (
            *compare_scope != fencesim_model::fence::CompareScope::PerResource,
            format!("`storage.compare_scope = {compare_scope:?}`: the live SQLite store compares per resource (expected \"per-resource\")"),
        ),
    ];
    Ok((store, checks))
}

/// `[workers]`: every setting but the side effects is the simulated worker's own.
fn workers_check(workers: &WorkerSpec) -> Check {
    let WorkerSpec {
        count: _,
        resources: _,
        lease_scope: _,
        work_ms: _,
        writes_per_lease: _,
        renew_every_ms: _,
        renew_deadline_ms: _,
        stop_on_renew_failure: _,
        check_lease_before_write: _, // asked of etcd (a range read of the lock key)
        recheck_deadline_before_write: _,
        deadline_from: _,
        request_timeout_ms: _, // the worker's HTTP timeout
        acquire_retry_ms: _,
        acquire_retry_jitter: _, // drawn from the simulated worker's stream
        side_effects,
    } = workers;
    (
        *side_effects == SideEffects::Outbox,
        "`workers.side_effects = \"outbox\"`: live storage has no outbox relay (none and direct run live)".into(),
    )
}

/// `[network]`: only the default network, loopback's.
fn network_check(network: &NetworkSpec) -> Option<Check> {
    if *network == default_network() {
        return None;
    }
    let what = if network.loss != 0.0 {
        format!("`network.loss = {}`", network.loss)
    } else if network.duplicate != 0.0 {
        format!("`network.duplicate = {}`", network.duplicate)
    } else if network.latency.spike_probability != 0.0 {
        format!(
            "`network.spike_probability = {}`",
            network.latency.spike_probability
        )
    } else {
        "`network.latency_ms`".to_string()
    };
    Some((
        true,
        format!("{what}: live mode runs on loopback, whose latency and loss are the machine's (leave [network] out)"),
    ))
}

/// `[clocks]`: no offset or drift; every live process reads the machine's one clock.
fn clocks_checks(clocks: &ClocksSpec) -> Vec<Check> {
    let ClocksSpec {
        random_drift_ppm,
        random_offset_ms,
        nodes,
    } = clocks;
    let mut checks = vec![
        (
            *random_drift_ppm != 0.0,
            format!("`clocks.random_drift_ppm = {random_drift_ppm}`: every live process reads the machine's one clock"),
        ),
        (
            *random_offset_ms != 0.0,
            format!("`clocks.random_offset_ms = {random_offset_ms}`: every live process reads the machine's one clock"),
        ),
    ];
    if let Some((node, clock)) = nodes
        .iter()
        .find(|(_, c)| c.offset_ms != 0.0 || c.drift_ppm != 0.0)
    {
        checks.push((
            true,
            format!(
                "`clocks.{node}` (offset {} ms, drift {} ppm): every live process reads the machine's one clock",
                clock.offset_ms, clock.drift_ppm
            ),
        ));
    }
    checks
}

/// Translates one seed's fault plan into live actions, refusing any fault live mode cannot
/// inject.
fn translate(scenario: &Scenario, seed: u64) -> Result<(Vec<(f64, Action)>, f64), String> {
    let fault_plan = plan(scenario, seed);
    let mut actions = Vec::new();
    for TimedFault { at_ms, fault } in &fault_plan.faults {
        let worker = |node: &str| node.starts_with("worker-");
        let action = match fault.clone() {
            Fault::GcPause { node, duration_ms } if worker(&node) => Action::Pause {
                node,
                kind: PauseKind::Gc,
                ms: duration_ms,
            },
            Fault::WorkerCrash { node, duration_ms } => Action::Crash {
                node,
                ms: duration_ms,
            },
            Fault::CoordinatorRestart { duration_ms } => Action::EtcdRestart { ms: duration_ms },
            Fault::Partition {
                nodes,
                peers,
                one_way: false,
                duration_ms,
            } if *at_ms <= 0.0
                && peers == [COORDINATOR.to_string()]
                && nodes.iter().all(|n| worker(n)) =>
            {
                Action::LateStart {
                    nodes,
                    ms: duration_ms,
                }
            }
            Fault::Partition {
                nodes,
                peers,
                one_way: false,
                duration_ms,
            } if peers == [COORDINATOR.to_string()] && nodes.iter().all(|n| worker(n)) => {
                Action::Cut {
                    nodes,
                    ms: duration_ms,
                }
            }
            Fault::HolderLinkCut { duration_ms } => Action::CutHolder {
                id: actions.len(),
                ms: duration_ms,
            },
            Fault::GcPause { node, .. } => {
                return Err(format!(
                    "fault `{fault}` at {at_ms} ms (seed {seed}): live mode pauses workers only, not the {node}"
                ))
            }
            Fault::VmSuspend { .. } => {
                return Err(format!(
                    "fault `{fault}` at {at_ms} ms (seed {seed}): a live process cannot have its monotonic clock stopped (SIGSTOP would make it a gc-pause)"
                ))
            }
            other => {
                return Err(format!(
                    "fault `{other}` at {at_ms} ms (seed {seed}): live mode injects gc-pause of a \
                     worker, worker-crash, coordinator-restart, a two-way partition of \
                     workers from the coordinator, and a holder-link-cut"
                ))
            }
        };
        actions.push((*at_ms, action));
    }
    Ok((actions, fault_plan.heal_ms()))
}

/// Checks that `scenario` can run live and translates its fault plan for `seed`.
pub fn live_plan(scenario: &Scenario, seed: u64) -> Result<LivePlan, LiveError> {
    let unsupported =
        |what: String| LiveError::Unsupported(format!("scenario `{}`: {what}", scenario.name));
    let (store, ttl_s, kind) = check_fields(scenario).map_err(unsupported)?;
    let (actions, heal_ms) = translate(scenario, seed).map_err(unsupported)?;
    Ok(LivePlan {
        kind,
        store,
        ttl_s,
        actions,
        heal_ms: heal_ms.max(scenario.duration_ms as f64),
    })
}

impl LivePlan {
    /// Whether the run cuts workers off the lease service, and so needs the private network
    /// namespace [`netns::reexec`] makes.
    pub fn cuts_network(&self) -> bool {
        self.actions
            .iter()
            .any(|(_, action)| matches!(action, Action::Cut { .. } | Action::CutHolder { .. }))
    }
}

/// The first seed in `seeds` whose run cuts the network (see [`LivePlan::cuts_network`]).
pub fn first_network_cut(scenario: &Scenario, seeds: std::ops::Range<u64>) -> Option<u64> {
    seeds
        .into_iter()
        .find(|&seed| live_plan(scenario, seed).is_ok_and(|plan| plan.cuts_network()))
}

/// Checks that every seed in `seeds` can run live (each draws its own fault plan), before
/// anything starts.
pub fn check_seeds(scenario: &Scenario, seeds: std::ops::Range<u64>) -> Result<(), LiveError> {
    for seed in seeds {
        live_plan(scenario, seed)?;
    }
    Ok(())
}

/// How long a live run lasts: like the simulator, the safety phase, then twice the
/// liveness bound after the heal (ms).
pub fn run_length_ms(scenario: &Scenario, plan: &LivePlan) -> f64 {
    plan.heal_ms + 2.0 * scenario.liveness_bound_ms() as f64
}

/// How long after the service is ready a run with `seed` begins (ms): uniform within one
/// expiry-check period of `kind` (etcd: [0, 500)), from the seed's own `live/revoke-phase`
/// stream, so it is recorded by the seed and differs per run.
pub fn check_phase_ms(seed: u64, kind: Kind) -> f64 {
    use rand::Rng as _;
    fencesim_model::rng::stream(seed, "live/revoke-phase")
        .gen_range(0.0..kind.check_period_ms() as f64)
}
