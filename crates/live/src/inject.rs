//! Injecting a live run's faults for real: the worker processes (started with their
//! configuration, killed and reaped), SIGSTOP/SIGCONT between a worker's steps, a crash and its
//! new incarnation, a service restart, network cuts, each logged as the simulator records it.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::Arc,
    time::Duration,
};

use fencesim_model::{
    history::EventKind,
    nodes::{worker as worker_name, COORDINATOR, NEMESIS},
};
use fencesim_scenario::Scenario;

use crate::{
    guard::Guard,
    netns,
    plan::{Action, LivePlan},
    record::Log,
    service::{lease_scopes, LeaseServer},
    worker::{self, LiveStore, WorkerConfig},
    LiveError,
};

/// Worker processes by name, killed (SIGKILL) and reaped on drop; each registered with the
/// run's guard while it lives.
pub(crate) struct Workers {
    pub(crate) children: BTreeMap<String, (Child, u32)>,
    pub(crate) guard: Arc<Guard>,
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
pub(crate) struct Run<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) dir: PathBuf,
    pub(crate) worker_exe: &'a Path,
    pub(crate) seed: u64,
    pub(crate) store: LiveStore,
    pub(crate) ttl_s: u64,
    pub(crate) service: worker::Service,
    pub(crate) incarnations: BTreeMap<String, u32>,
    pub(crate) logs: Vec<PathBuf>,
    pub(crate) epoch: u64,
    /// The drawn start offset after etcd was ready ([`check_phase_ms`]).
    pub(crate) phase_ms: f64,
    /// Each worker reaches the service at its own loopback address ([`netns::worker_addr`]).
    pub(crate) private_network: bool,
    /// The run's network cuts, when it has any.
    pub(crate) firewall: Option<netns::Firewall>,
    /// The worker each holder cut in progress cut off, by [`Action::CutHolder`]'s id.
    pub(crate) cut_holders: BTreeMap<usize, String>,
}

impl Run<'_> {
    pub(crate) fn start_worker(
        &mut self,
        workers: &mut Workers,
        name: &str,
    ) -> Result<(), LiveError> {
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
pub(crate) fn worker_index(name: &str) -> Result<usize, LiveError> {
    name.strip_prefix("worker-")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| LiveError::Unsupported(format!("`{name}` is not a worker")))
}

/// The begin and end of every fault, in time order (an end before a begin at the same time);
/// `true` for a begin.
pub(crate) fn fault_steps(live: &LivePlan) -> Vec<(f64, bool, &Action)> {
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
pub(crate) fn apply(
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
            let scopes = lease_scopes(run.scenario);
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
