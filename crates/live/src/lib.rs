//! Live mode: a scenario whose lease service is the `etcd` preset, run against a
//! real etcd 3.4, one real OS process per worker and a real SQLite file, with the schedule
//! injected for real (SIGSTOP/SIGCONT, SIGKILL and restart, an etcd restart, nftables cuts in
//! a private network namespace: [`netns`]). Every process
//! logs the simulator's events stamped with real time; the merged [`History`] is judged by
//! the same checker (`fencesim_check::check`).
//!
//! The worker role is [`worker::run`]; the CLI's hidden `live-worker` subcommand calls it, so
//! each worker is the `fencesim` binary itself. The CLI also runs the simulator for
//! `--compare`; [`fidelity`] turns both sides into `reports/fidelity.md`.

#![warn(missing_docs)]

pub mod etcd;
pub mod fidelity;
pub mod guard;
pub mod http;
pub mod netns;
pub mod record;
pub mod worker;
pub mod zk;

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use fencesim_model::{
    history::{EventKind, History, PauseKind},
    nodes::{worker as worker_name, COORDINATOR, NEMESIS},
    NS_PER_MS,
};
use fencesim_scenario::{
    plan, ClocksSpec, Fault, FencingMode, LeaseSpec, NetworkSpec, Preset, Scenario, SideEffects,
    StorageSpec, TimedFault, WorkerSpec,
};

use crate::{
    etcd::Server,
    guard::Guard,
    record::{now_unix_ns, Log},
    worker::{LiveStore, WorkerConfig},
};

/// Most runs one `fencesim live` may ask for (each lasts the scenario's full length in real
/// time).
pub const MAX_RUNS: u32 = 1_000;

/// Why a scenario cannot run live, or a run failed.
#[derive(Debug)]
pub enum LiveError {
    /// The scenario asks for something live mode cannot do (the message says what).
    Unsupported(String),
    /// etcd, a process or a file failed.
    Setup(String),
    /// SIGINT/SIGTERM arrived; everything started was stopped and removed.
    Interrupted,
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LiveError::Unsupported(text) | LiveError::Setup(text) => f.write_str(text),
            LiveError::Interrupted => {
                f.write_str("interrupted; every process and directory this run started was removed")
            }
        }
    }
}

/// One fault as live mode injects it.
#[derive(Clone, Debug, PartialEq)]
enum Action {
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
    store: LiveStore,
    /// The TTL asked of etcd (whole seconds, the scenario's effective TTL).
    ttl_s: u64,
    actions: Vec<(f64, Action)>,
    heal_ms: f64,
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
    use fencesim_model::lease::{
        AcquireRule, ExpiredBy, HolderIdentity, OnRestart, TokenScope, TokenSource,
    };
    let LeaseSpec {
        preset,
        ttl_ms,
        min_ttl_ms: _, // through effective_ttl_ms
        max_ttl_ms,
        expiry_factor,
        expiry_check_ms,
        lock_delay_ms,
        election_timeout_ms,
        restart_election_ms,
        token_source,
        token_scope,
        on_restart,
        expired_by,
        holder_identity,
        acquire,
    } = lease;
    let ttl = lease.effective_ttl_ms();
    let common: Vec<Check> = vec![
        (*expiry_factor != 1, format!("`lease.expiry_factor = {expiry_factor}`: the service expires a lease at its TTL (expected 1)")),
        (*lock_delay_ms != 0, format!("`lease.lock_delay_ms = {lock_delay_ms}`: the live service has no lock-delay (expected 0)")),
        (*token_source != TokenSource::Revision, format!("`lease.token_source = {token_source:?}`: live tokens are the service's own (expected \"revision\")")),
        (*on_restart != OnRestart::KeepAndExtend, format!("`lease.on_restart = {on_restart:?}`: a restarted live service keeps its leases and extends them (expected \"keep-and-extend\")")),
        (*expired_by != ExpiredBy::Service, format!("`lease.expired_by = {expired_by:?}`: the live service expires its leases itself (expected \"service\")")),
        (*holder_identity != HolderIdentity::Session, format!("`lease.holder_identity = {holder_identity:?}`: a live worker's lease is its own (expected \"session\")")),
        (*acquire != AcquireRule::CreateIfAbsent, format!("`lease.acquire = {acquire:?}`: live workers take the lock with the service's own create-if-absent (expected \"create-if-absent\")")),
    ];
    let (kind, mut checks) = match preset {
        Some(Preset::Etcd) => {
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
            (Kind::Etcd, vec![
                (*max_ttl_ms != 0, format!("`lease.max_ttl_ms = {max_ttl_ms}`: etcd has no maximum live mode could set (expected 0)")),
                (*expiry_check_ms != ETCD_EXPIRY_CHECK_MS, format!("`lease.expiry_check_ms = {expiry_check_ms}`: etcd's lessor checks every {ETCD_EXPIRY_CHECK_MS} ms and live mode cannot change it")),
                (*election_timeout_ms != ETCD_ELECTION_TIMEOUT_MS, format!("`lease.election_timeout_ms = {election_timeout_ms}`: live etcd runs with its default election timeout of {ETCD_ELECTION_TIMEOUT_MS} ms")),
                (*restart_election_ms != ETCD_ELECTION_TIMEOUT_MS, format!("`lease.restart_election_ms = {restart_election_ms}`: a restarted live etcd elects itself within its election timeout, {ETCD_ELECTION_TIMEOUT_MS} ms (expected that)")),
                (*token_scope != TokenScope::Global, format!("`lease.token_scope = {token_scope:?}`: etcd's revision is store-wide (expected \"global\")")),
            ])
        }
        Some(Preset::Zookeeper) => {
            // The live server runs with tickTime = expiry_check_ms and clamps session
            // timeouts to [2, 20] x tickTime itself, as the preset's min and max TTL say.
            let tick = *expiry_check_ms;
            (Kind::Zookeeper { tick_ms: tick }, vec![
                (!(100..=60_000).contains(&tick), format!("`lease.expiry_check_ms = {tick}`: ZooKeeper's tickTime, live from 100 to 60_000 ms")),
                (lease.min_ttl_ms != 2 * tick, format!("`lease.min_ttl_ms = {}`: ZooKeeper's minimum session timeout is 2 x tickTime ({} ms)", lease.min_ttl_ms, 2 * tick)),
                (*max_ttl_ms != 20 * tick, format!("`lease.max_ttl_ms = {max_ttl_ms}`: ZooKeeper's maximum session timeout is 20 x tickTime ({} ms)", 20 * tick)),
                (*restart_election_ms != 0, format!("`lease.restart_election_ms = {restart_election_ms}`: a standalone ZooKeeper serves at once after a restart (expected 0)")),
                (*token_scope != TokenScope::PerResource, format!("`lease.token_scope = {token_scope:?}`: a lock node's sequence number counts per lock directory (expected \"per-resource\")")),
            ])
        }
        _ => {
            return Err(
                "`lease.preset`: live mode needs `preset = \"etcd\"` or `preset = \"zookeeper\"` (the services it can start)"
                    .into(),
            )
        }
    };
    checks.extend(common);
    Ok((kind, checks))
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

/// One finished live run.
#[derive(Debug)]
pub struct LiveRun {
    /// The merged history.
    pub history: History,
    /// The lease service's version line.
    pub service_version: String,
    /// How long after etcd was ready the run began (ms; [`check_phase_ms`]).
    pub phase_ms: f64,
}

/// Worker processes by name, killed (SIGKILL) and reaped on drop; each registered with the
/// run's guard while it lives.
struct Workers {
    children: BTreeMap<String, (Child, u32)>,
    guard: Arc<Guard>,
}

impl Workers {
    fn kill(&mut self, name: &str) {
        if let Some((mut child, _)) = self.children.remove(name) {
            let _ = child.kill();
            self.guard.reaped(child.id());
            let _ = child.wait();
        }
    }

    fn pid(&self, name: &str) -> Option<u32> {
        self.children.get(name).map(|(child, _)| child.id())
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        let names: Vec<String> = self.children.keys().cloned().collect();
        for name in names {
            self.kill(&name);
        }
    }
}

/// Sends `signal` (`STOP`, `CONT`) with the system's `kill`; the workspace forbids the unsafe
/// `libc::kill`.
fn signal(pid: u32, signal: &str) -> Result<(), LiveError> {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .map_err(|error| LiveError::Setup(format!("cannot run kill: {error}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(LiveError::Setup(format!(
            "kill -{signal} {pid} failed ({status})"
        )))
    }
}

/// Takes `name`'s step lock (waiting for the step in progress, at most 3 s, then going on
/// without it), runs `f`, and releases the lock. See [`worker::step_lock_path`].
fn between_steps<T>(dir: &Path, name: &str, f: impl FnOnce() -> T) -> T {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(worker::step_lock_path(dir, name));
    let mut locked = None;
    if let Ok(file) = file {
        for _ in 0..3_000 {
            if file.try_lock().is_ok() {
                locked = Some(file);
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let result = f();
    if let Some(file) = locked {
        let _ = file.unlock();
    }
    result
}

/// Waits (up to 1 s) until `pid` is in the stopped state, so the worker cannot start a new
/// step between the signal and its delivery.
fn wait_stopped(pid: u32) {
    for _ in 0..1_000 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        if matches!(state, Some("T" | "t") | None) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The run's context for starting workers.
struct Run<'a> {
    scenario: &'a Scenario,
    dir: PathBuf,
    worker_exe: &'a Path,
    seed: u64,
    store: LiveStore,
    ttl_s: u64,
    service: worker::Service,
    incarnations: BTreeMap<String, u32>,
    logs: Vec<PathBuf>,
    epoch: u64,
    /// The drawn start offset after etcd was ready ([`check_phase_ms`]).
    phase_ms: f64,
    /// Each worker reaches the service at its own loopback address ([`netns::worker_addr`]).
    private_network: bool,
    /// The run's network cuts, when it has any.
    firewall: Option<netns::Firewall>,
    /// The worker each holder cut in progress cut off, by [`Action::CutHolder`]'s id.
    cut_holders: BTreeMap<usize, String>,
}

impl Run<'_> {
    fn start_worker(&mut self, workers: &mut Workers, name: &str) -> Result<(), LiveError> {
        let incarnation = {
            let count = self.incarnations.entry(name.to_string()).or_insert(0);
            *count += 1;
            *count
        };
        let index = worker_index(name)?;
        let service = if self.private_network {
            self.service
                .at(netns::worker_addr(index, self.service.addr().port()))
        } else {
            self.service
        };
        let events = self.dir.join(format!("{name}-{incarnation}.jsonl"));
        let config = WorkerConfig {
            name: name.to_string(),
            index,
            incarnation,
            seed: self.seed,
            scenario: self.scenario.clone(),
            service,
            ttl_s: self.ttl_s,
            store: self.store,
            db: self.dir.join("store.sqlite"),
            events: events.clone(),
            supervisor_pid: std::process::id(),
            epoch_unix_ns: self.epoch,
            step_lock: worker::step_lock_path(&self.dir, name),
        };
        let config_path = self.dir.join(format!("{name}-{incarnation}.json"));
        let stderr_path = self.dir.join(format!("{name}-{incarnation}.stderr"));
        let setup =
            |error: std::io::Error| LiveError::Setup(format!("{}: {error}", self.dir.display()));
        std::fs::write(
            &config_path,
            serde_json::to_string(&config).expect("config serializes"),
        )
        .map_err(setup)?;
        let stderr = std::fs::File::create(&stderr_path).map_err(setup)?;
        let mut command = Command::new(self.worker_exe);
        command
            .arg("live-worker")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        workers.guard.mark(&mut command);
        let child = command.spawn().map_err(|error| {
            LiveError::Setup(format!(
                "cannot start {}: {error}",
                self.worker_exe.display()
            ))
        })?;
        self.logs.push(events);
        workers.guard.started(child.id());
        workers
            .children
            .insert(name.to_string(), (child, incarnation));
        Ok(())
    }
}

/// N of `worker-N`.
fn worker_index(name: &str) -> Result<usize, LiveError> {
    name.strip_prefix("worker-")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| LiveError::Unsupported(format!("`{name}` is not a worker")))
}

/// Sleeps until `deadline_unix_ns`, in short steps; `Err(Interrupted)` once `stop` is set.
fn wait_until(deadline_unix_ns: u64, stop: &AtomicBool) -> Result<(), LiveError> {
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err(LiveError::Interrupted);
        }
        let now = now_unix_ns();
        if now >= deadline_unix_ns {
            return Ok(());
        }
        std::thread::sleep(Duration::from_nanos(
            (deadline_unix_ns - now).min(5 * NS_PER_MS),
        ));
    }
}

/// Follows etcd's lock keys and logs every delete as an expiry (the merge drops those a
/// worker's release explains). Reconnects after an etcd restart from the next revision.
fn watch(client: etcd::Client, log: Arc<Log>, stop: Arc<AtomicBool>) {
    let mut next_revision: i64 = 1;
    while !stop.load(Ordering::SeqCst) {
        let _ = client.watch_locks(next_revision, |event| {
            let kv = event.get("kv").cloned().unwrap_or_default();
            let rev = etcd::int(&kv, "mod_revision");
            next_revision = next_revision.max(rev + 1);
            if event.get("type").and_then(|t| t.as_str()) == Some("DELETE") {
                let key = etcd::text(&kv, "key");
                let prev = event.get("prev_kv").cloned().unwrap_or_default();
                log.record(
                    COORDINATOR,
                    EventKind::Expired {
                        scope: key.trim_start_matches("/fencesim/lock/").to_string(),
                        holder: etcd::text(&prev, "value"),
                        token: u64::try_from(etcd::int(&prev, "create_revision")).unwrap_or(0),
                    },
                    Some(rev),
                );
            }
            !stop.load(Ordering::SeqCst)
        });
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `scenario` live once: a fresh temp directory (etcd's data, the SQLite file, the logs),
/// etcd, the workers, the schedule, then the merged history. Everything started is stopped
/// and the directory removed on every path out, including `stop` (SIGINT) and errors.
/// `keep` copies the run's logs there first.
pub fn run_live(
    scenario: &Scenario,
    seed: u64,
    worker_exe: &Path,
    stop: &Arc<AtomicBool>,
    keep: Option<&Path>,
) -> Result<LiveRun, LiveError> {
    let live = live_plan(scenario, seed)?;
    let service_version = service_version(live.kind).map_err(LiveError::Setup)?;
    let temp = tempfile::Builder::new()
        .prefix("fencesim-live-")
        .tempdir()
        .map_err(|error| LiveError::Setup(format!("cannot create a temp directory: {error}")))?;
    // Declared after `temp`, so dropped (its pipe closed, stragglers killed) before it.
    let guard = Arc::new(Guard::start(worker_exe, temp.path()).map_err(LiveError::Setup)?);
    // In the private network namespace (network cuts), the service listens on every
    // loopback address and each worker reaches it at its own ([`netns::worker_addr`]).
    let private_network = netns::inside();
    if live.cuts_network() && !private_network {
        return Err(LiveError::Setup(format!(
            "scenario `{}` (seed {seed}) cuts the network, which needs the private network namespace `fencesim live` makes",
            scenario.name
        )));
    }
    let mut server = LeaseServer::start(live.kind, temp.path(), &guard, private_network)?;
    let firewall = if live.cuts_network() {
        Some(netns::Firewall::new(server.port()).map_err(LiveError::Setup)?)
    } else {
        None
    };
    let scopes: BTreeSet<String> = scenario
        .workers
        .resources
        .iter()
        .map(|r| scenario.lease_scope_of(r))
        .collect();
    server.create_lock_dirs(&scopes)?;
    let supervisor_log_path = temp.path().join("supervisor.jsonl");
    let log = Arc::new(Log::open(&supervisor_log_path).map_err(|error| {
        LiveError::Setup(format!("{}: {error}", supervisor_log_path.display()))
    })?);
    let watch_stop = Arc::new(AtomicBool::new(false));
    let (service, watcher) = server.watch(scopes, log.clone(), watch_stop.clone());
    let mut run = Run {
        scenario,
        dir: temp.path().to_path_buf(),
        worker_exe,
        seed,
        store: live.store,
        ttl_s: live.ttl_s,
        service,
        incarnations: BTreeMap::new(),
        logs: vec![supervisor_log_path],
        epoch: 0,
        phase_ms: 0.0,
        private_network,
        firewall,
        cut_holders: BTreeMap::new(),
    };
    let mut workers = Workers {
        children: BTreeMap::new(),
        guard: guard.clone(),
    };
    let result = drive(
        scenario,
        &live,
        &mut run,
        &mut workers,
        &mut server,
        &log,
        stop,
    );
    // Every path out: workers, the watch, the service; the temp directory goes when `temp`
    // drops.
    drop(workers);
    watch_stop.store(true, Ordering::SeqCst);
    server.kill();
    let _ = watcher.join();
    let (epoch, end) = result?;
    let history = merged_history(&run.logs, epoch, end)?;
    if let Some(keep) = keep {
        keep_run(keep, &history, temp.path(), live.kind)?;
    }
    Ok(LiveRun {
        history,
        service_version,
        phase_ms: run.phase_ms,
    })
}

/// Every process's log of the run merged into one history, cut at its `end` (Unix ns).
fn merged_history(logs: &[PathBuf], epoch: u64, end: u64) -> Result<History, LiveError> {
    let mut read = Vec::new();
    for path in logs {
        read.push(
            record::read(path)
                .map_err(|error| LiveError::Setup(format!("{}: {error}", path.display())))?,
        );
    }
    let mut history = record::merge(epoch, read);
    let end_ns = end.saturating_sub(epoch);
    history.events.retain(|e| e.t_ns <= end_ns);
    Ok(history)
}

/// `--out`: the merged history and the service's log, copied from the run's directory `dir`
/// to `keep`.
fn keep_run(keep: &Path, history: &History, dir: &Path, kind: Kind) -> Result<(), LiveError> {
    let service_log = match kind {
        Kind::Etcd => "etcd.log",
        Kind::Zookeeper { .. } => "zookeeper.log",
    };
    std::fs::create_dir_all(keep)
        .and_then(|()| std::fs::write(keep.join("history.jsonl"), history.to_jsonl()))
        .and_then(|()| std::fs::copy(dir.join(service_log), keep.join(service_log)).map(|_| ()))
        .map_err(|error| LiveError::Setup(format!("{}: {error}", keep.display())))
}

/// The version line of the service `kind` names, or why it cannot be run.
pub fn service_version(kind: Kind) -> Result<String, String> {
    match kind {
        Kind::Etcd => etcd::etcd_version(),
        Kind::Zookeeper { .. } => zk::zookeeper_version(),
    }
}

/// The live lease service of a run.
enum LeaseServer {
    Etcd(Server),
    Zookeeper(zk::Server),
}

impl LeaseServer {
    /// Starts the service `kind` names in `dir`, its process registered with `guard`,
    /// listening on 127.0.0.1 or, with `every_loopback_address` (only ever in the private
    /// network namespace), on all of them.
    fn start(
        kind: Kind,
        dir: &Path,
        guard: &Arc<Guard>,
        every_loopback_address: bool,
    ) -> Result<LeaseServer, LiveError> {
        Ok(match kind {
            Kind::Etcd => LeaseServer::Etcd(
                Server::start_listening(dir, Some(guard.clone()), every_loopback_address)
                    .map_err(LiveError::Setup)?,
            ),
            Kind::Zookeeper { tick_ms } => LeaseServer::Zookeeper(
                zk::Server::start_listening(
                    dir,
                    tick_ms,
                    Some(guard.clone()),
                    every_loopback_address,
                )
                .map_err(LiveError::Setup)?,
            ),
        })
    }

    /// The service's client port.
    fn port(&self) -> u16 {
        match self {
            LeaseServer::Etcd(server) => server.client().addr.port(),
            LeaseServer::Zookeeper(server) => server.addr().port(),
        }
    }

    /// ZooKeeper: the lock directory of every scope, created before a worker campaigns in it
    /// (etcd needs none).
    fn create_lock_dirs(&self, scopes: &BTreeSet<String>) -> Result<(), LiveError> {
        if let LeaseServer::Zookeeper(zk_server) = self {
            let mut session =
                zk::Session::connect(zk_server.addr(), 10_000, Duration::from_secs(2))
                    .map_err(|error| LiveError::Setup(format!("ZooKeeper: {error}")))?;
            for scope in scopes {
                zk::ensure_path(&mut session, &zk::lock_dir(scope))
                    .map_err(|error| LiveError::Setup(format!("ZooKeeper: {error}")))?;
            }
            let _ = session.close();
        }
        Ok(())
    }

    /// The workers' address of the service, and a thread that logs its expiries of `scopes`
    /// in `log` until `stop` is set ([`watch`], [`watch_zookeeper`]).
    fn watch(
        &self,
        scopes: BTreeSet<String>,
        log: Arc<Log>,
        stop: Arc<AtomicBool>,
    ) -> (worker::Service, std::thread::JoinHandle<()>) {
        match self {
            LeaseServer::Etcd(etcd_server) => {
                let client = etcd_server.client();
                (
                    worker::Service::Etcd(client.addr),
                    std::thread::spawn(move || watch(client, log, stop)),
                )
            }
            LeaseServer::Zookeeper(zk_server) => {
                let addr = zk_server.addr();
                (
                    worker::Service::Zookeeper(addr),
                    std::thread::spawn(move || watch_zookeeper(addr, &scopes, &log, &stop)),
                )
            }
        }
    }

    /// The worker holding the lock of the first of `scopes` (in name order) that is held
    /// now, as the service itself says; `None` when none is (or it cannot be asked).
    fn holder(&self, scopes: &BTreeSet<String>) -> Option<String> {
        match self {
            LeaseServer::Etcd(server) => {
                let client = server.client();
                scopes
                    .iter()
                    .find_map(|scope| client.holder(scope).ok().flatten())
            }
            LeaseServer::Zookeeper(server) => {
                let mut session =
                    zk::Session::connect(server.addr(), 10_000, Duration::from_secs(1)).ok()?;
                let holder = scopes.iter().find_map(|scope| {
                    let dir = zk::lock_dir(scope);
                    let Ok(Ok((children, _))) = session.children(&dir) else {
                        return None;
                    };
                    let (_, lowest) = children
                        .iter()
                        .filter_map(|name| zk::sequence(name).map(|n| (n, name)))
                        .min()?;
                    match session.get(&format!("{dir}/{lowest}")) {
                        Ok(Ok((data, _))) => Some(String::from_utf8_lossy(&data).into_owned()),
                        _ => None,
                    }
                });
                let _ = session.close();
                holder
            }
        }
    }

    fn kill(&mut self) {
        match self {
            LeaseServer::Etcd(server) => server.kill(),
            LeaseServer::Zookeeper(server) => server.kill(),
        }
    }

    fn restart(&mut self) -> Result<(), String> {
        match self {
            LeaseServer::Etcd(server) => server.restart(),
            LeaseServer::Zookeeper(server) => server.restart(),
        }
    }
}

/// Follows ZooKeeper's lock directories (polling every 5 ms with its own session) and logs
/// every lock node that vanished as an expiry of its holder's lease; the merge keeps only
/// those of granted tenures that no release explains, stamped no later than the scope's
/// next grant. Reconnects after a ZooKeeper restart.
fn watch_zookeeper(
    addr: std::net::SocketAddr,
    scopes: &BTreeSet<String>,
    log: &Log,
    stop: &AtomicBool,
) {
    // Per scope: node name -> (holder, token).
    let mut known: BTreeMap<String, BTreeMap<String, (String, u64)>> = BTreeMap::new();
    while !stop.load(Ordering::SeqCst) {
        let Ok(mut session) = zk::Session::connect(addr, 10_000, Duration::from_secs(1)) else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        'poll: while !stop.load(Ordering::SeqCst) {
            for scope in scopes {
                let dir = zk::lock_dir(scope);
                let Ok(Ok((children, _))) = session.children(&dir) else {
                    break 'poll;
                };
                let seen = known.entry(scope.clone()).or_default();
                let gone: Vec<String> = seen
                    .keys()
                    .filter(|name| !children.contains(name))
                    .cloned()
                    .collect();
                for name in gone {
                    if let Some((holder, token)) = seen.remove(&name) {
                        log.record(
                            COORDINATOR,
                            EventKind::Expired {
                                scope: scope.clone(),
                                holder,
                                token,
                            },
                            None,
                        );
                    }
                }
                for name in children {
                    if seen.contains_key(&name) {
                        continue;
                    }
                    let Some(token) = zk::sequence(&name) else {
                        continue;
                    };
                    // A node gone before it was read was a lost campaign: nothing to follow.
                    if let Ok(Ok((data, _))) = session.get(&format!("{dir}/{name}")) {
                        let holder = String::from_utf8_lossy(&data).into_owned();
                        seen.insert(name, (holder, token));
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = session.close();
    }
}

/// How long after the service is ready a run with `seed` begins (ms): uniform within one
/// expiry-check period of `kind` (etcd: [0, 500)), from the seed's own `live/revoke-phase`
/// stream, so it is recorded by the seed and differs per run.
pub fn check_phase_ms(seed: u64, kind: Kind) -> f64 {
    use rand::Rng as _;
    fencesim_model::rng::stream(seed, "live/revoke-phase")
        .gen_range(0.0..kind.check_period_ms() as f64)
}

/// The run itself; returns the epoch and the end (Unix ns).
fn drive(
    scenario: &Scenario,
    live: &LivePlan,
    run: &mut Run<'_>,
    workers: &mut Workers,
    server: &mut LeaseServer,
    log: &Log,
    stop: &AtomicBool,
) -> Result<(u64, u64), LiveError> {
    // etcd's lessor looks for expired leases every 500 ms from its own start, so a run begun
    // right after etcd answers would meet that loop at nearly one phase every time. The
    // simulator draws the phase per coordinator start; here the run starts at a drawn offset
    // after etcd is ready, so live windows sample the same spread.
    let phase_ms = check_phase_ms(run.seed, live.kind);
    wait_until(now_unix_ns() + (phase_ms * NS_PER_MS as f64) as u64, stop)?;
    let epoch = now_unix_ns();
    run.epoch = epoch;
    run.phase_ms = phase_ms;
    let at = |ms: f64| epoch + (ms.max(0.0) * NS_PER_MS as f64) as u64;
    log.record_at(
        epoch,
        NEMESIS,
        EventKind::RunStarted {
            seed: run.seed,
            liveness_bound_ms: scenario.liveness_bound_ms(),
        },
        None,
    );
    start_workers(scenario, live, run, workers)?;
    for (time, begin, action) in fault_steps(live) {
        wait_until(at(time), stop)?;
        apply(action, begin, run, workers, server, log)?;
    }
    wait_until(at(live.heal_ms), stop)?;
    log.record(NEMESIS, EventKind::FaultsHealed, None);
    wait_until(at(run_length_ms(scenario, live)), stop)?;
    let end = now_unix_ns();
    log.record_at(end, NEMESIS, EventKind::RunEnded, None);
    Ok((epoch, end))
}

/// Starts every worker but those a partition at 0 ms keeps from starting (they start when it
/// ends).
fn start_workers(
    scenario: &Scenario,
    live: &LivePlan,
    run: &mut Run<'_>,
    workers: &mut Workers,
) -> Result<(), LiveError> {
    let late: Vec<String> = live
        .actions
        .iter()
        .filter_map(|(_, a)| match a {
            Action::LateStart { nodes, .. } => Some(nodes.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    for index in 0..scenario.workers.count {
        let name = worker_name(index);
        if !late.contains(&name) {
            run.start_worker(workers, &name)?;
        }
    }
    Ok(())
}

/// The begin and end of every fault, in time order (an end before a begin at the same time);
/// `true` for a begin.
fn fault_steps(live: &LivePlan) -> Vec<(f64, bool, &Action)> {
    let mut steps: Vec<(f64, bool, &Action)> = Vec::new();
    for (start, action) in &live.actions {
        let ms = match action {
            Action::Pause { ms, .. }
            | Action::Crash { ms, .. }
            | Action::EtcdRestart { ms }
            | Action::LateStart { ms, .. }
            | Action::Cut { ms, .. }
            | Action::CutHolder { ms, .. } => *ms,
        };
        if !matches!(action, Action::LateStart { .. }) {
            steps.push((*start, true, action));
        }
        steps.push((start + ms, false, action));
    }
    steps.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    steps
}

/// Begins (`begin`) or ends `action`, and logs it as the simulator would.
fn apply(
    action: &Action,
    begin: bool,
    run: &mut Run<'_>,
    workers: &mut Workers,
    server: &mut LeaseServer,
    log: &Log,
) -> Result<(), LiveError> {
    match (action, begin) {
        (Action::Pause { node, kind, ms }, true) => {
            let Some(pid) = workers.pid(node) else {
                return Ok(());
            };
            between_steps(&run.dir, node, || {
                log.record(
                    node,
                    EventKind::Paused {
                        kind: *kind,
                        planned_ms: *ms,
                    },
                    None,
                );
                let sent = signal(pid, "STOP");
                wait_stopped(pid);
                sent
            })?;
        }
        (Action::Pause { node, kind, .. }, false) => {
            let Some(pid) = workers.pid(node) else {
                return Ok(());
            };
            signal(pid, "CONT")?;
            log.record(node, EventKind::Resumed { kind: *kind }, None);
        }
        (Action::Crash { node, .. }, true) => {
            between_steps(&run.dir, node, || {
                workers.kill(node);
                log.record(node, EventKind::Crashed, None);
            });
        }
        (Action::Crash { node, .. }, false) => {
            run.start_worker(workers, node)?;
            log.record(node, EventKind::Restarted, None);
        }
        (Action::EtcdRestart { .. }, true) => {
            server.kill();
            log.record(COORDINATOR, EventKind::Crashed, None);
        }
        (Action::EtcdRestart { .. }, false) => {
            server.restart().map_err(LiveError::Setup)?;
            log.record(COORDINATOR, EventKind::Restarted, None);
        }
        (Action::Cut { nodes, .. }, begin) => cut(run, nodes, begin, log)?,
        (Action::CutHolder { id, .. }, true) => {
            let scopes: BTreeSet<String> = run
                .scenario
                .workers
                .resources
                .iter()
                .map(|r| run.scenario.lease_scope_of(r))
                .collect();
            let holder = server.holder(&scopes).unwrap_or_else(|| worker_name(0));
            run.cut_holders.insert(*id, holder.clone());
            cut(run, &[holder], true, log)?;
        }
        (Action::CutHolder { id, .. }, false) => {
            if let Some(holder) = run.cut_holders.remove(id) {
                cut(run, &[holder], false, log)?;
            }
        }
        (Action::LateStart { nodes, .. }, _) => {
            for node in nodes {
                run.start_worker(workers, node)?;
            }
        }
    }
    Ok(())
}

/// Cuts (`begin`) or reconnects `nodes` and the lease service, and logs it as the simulator
/// does.
fn cut(run: &mut Run<'_>, nodes: &[String], begin: bool, log: &Log) -> Result<(), LiveError> {
    let firewall = run
        .firewall
        .as_mut()
        .ok_or_else(|| LiveError::Setup("a network cut without the run's firewall".into()))?;
    for node in nodes {
        firewall
            .set(worker_index(node)?, begin)
            .map_err(LiveError::Setup)?;
    }
    let (from, to) = (nodes.to_vec(), vec![COORDINATOR.to_string()]);
    let one_way = false;
    log.record(
        NEMESIS,
        if begin {
            EventKind::PartitionStarted { from, to, one_way }
        } else {
            EventKind::PartitionHealed { from, to, one_way }
        },
        None,
    );
    Ok(())
}

/// A flag set by the first SIGINT or SIGTERM (Ctrl-C), for [`run_live`]'s `stop`.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, LiveError> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|error| LiveError::Setup(format!("cannot catch signal {signal}: {error}")))?;
    }
    Ok(stop)
}
