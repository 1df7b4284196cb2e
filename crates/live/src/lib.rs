//! Live mode (issue 12): a scenario whose lease service is the `etcd` preset, run against a
//! real etcd 3.4, one real OS process per worker and a real SQLite file, with the schedule
//! injected for real (SIGSTOP/SIGCONT, SIGKILL and restart, an etcd restart). Every process
//! logs the simulator's events stamped with real time; the merged [`History`] is judged by
//! the same checker (`fencesim_check::check`).
//!
//! The worker role is [`worker::run`]; the CLI's hidden `live-worker` subcommand calls it, so
//! each worker is the `fencesim` binary itself. The CLI also runs the simulator for
//! `--compare`; [`fidelity`] turns both sides into `reports/fidelity.md`.

#![warn(missing_docs)]

pub mod etcd;
pub mod fidelity;
pub mod http;
pub mod record;
pub mod worker;

use std::{
    collections::BTreeMap,
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
use fencesim_scenario::{plan, Fault, FencingMode, Preset, Scenario, TimedFault};

use crate::{
    etcd::Server,
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
}

/// What live mode will do for a scenario and seed: the schedule, validated.
#[derive(Clone, Debug)]
pub struct LivePlan {
    store: LiveStore,
    actions: Vec<(f64, Action)>,
    heal_ms: f64,
    /// Notes printed before the run (approximations live mode makes).
    pub notes: Vec<String>,
}

/// Checks that `scenario` can run live and translates its fault plan for `seed`.
pub fn live_plan(scenario: &Scenario, seed: u64) -> Result<LivePlan, LiveError> {
    let unsupported = |what: String| {
        Err(LiveError::Unsupported(format!(
            "scenario `{}`: {what}",
            scenario.name
        )))
    };
    if scenario.lease.preset != Some(Preset::Etcd) {
        return unsupported(
            "live mode needs `[lease] preset = \"etcd\"` (the only service it can start)".into(),
        );
    }
    let store = match scenario.storage.fencing {
        FencingMode::None => LiveStore::None,
        FencingMode::Sql => LiveStore::Sql,
        FencingMode::SqlIgnoreRows => LiveStore::SqlIgnoreRows,
        FencingMode::SameStoreTxn => LiveStore::SameStoreTxn,
        other => {
            return unsupported(format!(
                "`storage.fencing = {other:?}`: live mode runs none, sql, sql-ignore-rows and same-store-txn"
            ))
        }
    };
    let fault_plan = plan(scenario, seed);
    let mut actions = Vec::new();
    let mut notes = Vec::new();
    for TimedFault { at_ms, fault } in &fault_plan.faults {
        let action = match fault.clone() {
            Fault::GcPause { node, duration_ms } => Action::Pause {
                node,
                kind: PauseKind::Gc,
                ms: duration_ms,
            },
            Fault::VmSuspend { node, duration_ms } => {
                notes.push(format!(
                    "vm-suspend of {node} at {at_ms} ms runs as SIGSTOP: its monotonic clock keeps running (a GC pause)"
                ));
                Action::Pause {
                    node,
                    kind: PauseKind::VmSuspend,
                    ms: duration_ms,
                }
            }
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
                && nodes.iter().all(|n| n.starts_with("worker-")) =>
            {
                Action::LateStart {
                    nodes,
                    ms: duration_ms,
                }
            }
            other => {
                return unsupported(format!(
                    "fault `{other}` at {at_ms} ms: live mode injects gc-pause, vm-suspend, \
                     worker-crash, coordinator-restart, and a partition of workers from the \
                     coordinator starting at 0 ms"
                ))
            }
        };
        actions.push((*at_ms, action));
    }
    Ok(LivePlan {
        store,
        actions,
        heal_ms: fault_plan.heal_ms().max(scenario.duration_ms as f64),
        notes,
    })
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
    /// The etcd version line.
    pub etcd_version: String,
}

/// Worker processes by name, killed (SIGKILL) and reaped on drop.
#[derive(Default)]
struct Workers {
    children: BTreeMap<String, (Child, u32)>,
}

impl Workers {
    fn kill(&mut self, name: &str) {
        if let Some((mut child, _)) = self.children.remove(name) {
            let _ = child.kill();
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
    etcd: std::net::SocketAddr,
    incarnations: BTreeMap<String, u32>,
    logs: Vec<PathBuf>,
    epoch: u64,
}

impl Run<'_> {
    fn start_worker(&mut self, workers: &mut Workers, name: &str) -> Result<(), LiveError> {
        let incarnation = {
            let count = self.incarnations.entry(name.to_string()).or_insert(0);
            *count += 1;
            *count
        };
        let index: usize = name
            .trim_start_matches("worker-")
            .parse()
            .map_err(|_| LiveError::Unsupported(format!("`{name}` is not a worker")))?;
        let spec = &self.scenario.workers;
        let lease = &self.scenario.lease;
        let events = self.dir.join(format!("{name}-{incarnation}.jsonl"));
        let config = WorkerConfig {
            name: name.to_string(),
            index,
            incarnation,
            seed: self.seed,
            etcd: self.etcd,
            ttl_s: lease.effective_ttl_ms().div_ceil(1_000),
            renew_every_ms: spec.renew_every_ms,
            renew_deadline_ms: spec.renew_deadline_ms,
            stop_on_renew_failure: spec.stop_on_renew_failure,
            recheck_deadline_before_write: spec.recheck_deadline_before_write,
            work_ms: spec.work_ms.clone(),
            writes_per_lease: spec.writes_per_lease,
            acquire_retry_ms: spec.acquire_retry_ms,
            resources: spec
                .resources
                .iter()
                .map(|r| (r.clone(), self.scenario.lease_scope_of(r)))
                .collect(),
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
        let child = Command::new(self.worker_exe)
            .arg("live-worker")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|error| {
                LiveError::Setup(format!(
                    "cannot start {}: {error}",
                    self.worker_exe.display()
                ))
            })?;
        self.logs.push(events);
        workers
            .children
            .insert(name.to_string(), (child, incarnation));
        Ok(())
    }
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
    let etcd_version = etcd::etcd_version().map_err(LiveError::Setup)?;
    let temp = tempfile::Builder::new()
        .prefix("fencesim-live-")
        .tempdir()
        .map_err(|error| LiveError::Setup(format!("cannot create a temp directory: {error}")))?;
    let mut server = Server::start(temp.path()).map_err(LiveError::Setup)?;
    let client = server.client();
    let supervisor_log_path = temp.path().join("supervisor.jsonl");
    let log = Arc::new(Log::open(&supervisor_log_path).map_err(|error| {
        LiveError::Setup(format!("{}: {error}", supervisor_log_path.display()))
    })?);
    let watch_stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (log, watch_stop) = (log.clone(), watch_stop.clone());
        std::thread::spawn(move || watch(client, log, watch_stop))
    };
    let mut run = Run {
        scenario,
        dir: temp.path().to_path_buf(),
        worker_exe,
        seed,
        store: live.store,
        etcd: client.addr,
        incarnations: BTreeMap::new(),
        logs: vec![supervisor_log_path],
        epoch: 0,
    };
    let mut workers = Workers::default();
    let result = drive(
        scenario,
        &live,
        &mut run,
        &mut workers,
        &mut server,
        &log,
        stop,
    );
    // Every path out: workers, the watch, etcd; the temp directory goes when `temp` drops.
    drop(workers);
    watch_stop.store(true, Ordering::SeqCst);
    server.kill();
    let _ = watcher.join();
    let (epoch, end) = result?;
    let mut logs = Vec::new();
    for path in &run.logs {
        logs.push(
            record::read(path)
                .map_err(|error| LiveError::Setup(format!("{}: {error}", path.display())))?,
        );
    }
    let mut history = record::merge(epoch, logs);
    let end_ns = end.saturating_sub(epoch);
    history.events.retain(|e| e.t_ns <= end_ns);
    if let Some(keep) = keep {
        std::fs::create_dir_all(keep)
            .and_then(|()| std::fs::write(keep.join("history.jsonl"), history.to_jsonl()))
            .and_then(|()| {
                std::fs::copy(temp.path().join("etcd.log"), keep.join("etcd.log")).map(|_| ())
            })
            .map_err(|error| LiveError::Setup(format!("{}: {error}", keep.display())))?;
    }
    Ok(LiveRun {
        history,
        etcd_version,
    })
}

/// The run itself; returns the epoch and the end (Unix ns).
fn drive(
    scenario: &Scenario,
    live: &LivePlan,
    run: &mut Run<'_>,
    workers: &mut Workers,
    server: &mut Server,
    log: &Log,
    stop: &AtomicBool,
) -> Result<(u64, u64), LiveError> {
    let epoch = now_unix_ns();
    run.epoch = epoch;
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
    // Begin and end of every fault, in time order (an end before a begin at the same time).
    let mut steps: Vec<(f64, bool, &Action)> = Vec::new();
    for (start, action) in &live.actions {
        let ms = match action {
            Action::Pause { ms, .. }
            | Action::Crash { ms, .. }
            | Action::EtcdRestart { ms }
            | Action::LateStart { ms, .. } => *ms,
        };
        if !matches!(action, Action::LateStart { .. }) {
            steps.push((*start, true, action));
        }
        steps.push((start + ms, false, action));
    }
    steps.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (time, begin, action) in steps {
        wait_until(at(time), stop)?;
        match (action, begin) {
            (Action::Pause { node, kind, ms }, true) => {
                let Some(pid) = workers.pid(node) else {
                    continue;
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
                    continue;
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
            (Action::LateStart { nodes, .. }, _) => {
                for node in nodes {
                    run.start_worker(workers, node)?;
                }
            }
        }
    }
    wait_until(at(live.heal_ms), stop)?;
    log.record(NEMESIS, EventKind::FaultsHealed, None);
    wait_until(at(run_length_ms(scenario, live)), stop)?;
    let end = now_unix_ns();
    log.record_at(end, NEMESIS, EventKind::RunEnded, None);
    Ok((epoch, end))
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
