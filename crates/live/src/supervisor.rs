//! One live run from start to end: a fresh temp directory, the run's guard, the lease service,
//! the workers, the schedule in real time, and the merged history; everything started is
//! stopped and the directory removed on every way out (an error, SIGINT/SIGTERM).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use fencesim_model::{
    history::{EventKind, History},
    nodes::{worker as worker_name, NEMESIS},
    NS_PER_MS,
};
use fencesim_scenario::Scenario;

use crate::{
    guard::Guard,
    inject::{apply, fault_steps, Run, Workers},
    netns,
    plan::{check_phase_ms, live_plan, run_length_ms, Action, Kind, LivePlan},
    record::{self, now_unix_ns, Log},
    service::{lease_scopes, service_version, LeaseServer},
    LiveError, LiveRun,
};

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
    let (mut server, firewall, private_network) =
        start_service(scenario, seed, &live, temp.path(), &guard)?;
    let supervisor_log_path = temp.path().join("supervisor.jsonl");
    let log = Arc::new(Log::open(&supervisor_log_path).map_err(|error| {
        LiveError::Setup(format!("{}: {error}", supervisor_log_path.display()))
    })?);
    let watch_stop = Arc::new(AtomicBool::new(false));
    let (service, watcher) = server.watch(lease_scopes(scenario), log.clone(), watch_stop.clone());
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

/// The run's lease service started in `dir`, its lock directories made, with the run's
/// firewall when it cuts the network, and whether it runs in the private network namespace.
fn start_service(
    scenario: &Scenario,
    seed: u64,
    live: &LivePlan,
    dir: &Path,
    guard: &Arc<Guard>,
) -> Result<(LeaseServer, Option<netns::Firewall>, bool), LiveError> {
    // In the private network namespace (network cuts), the service listens on every
    // loopback address and each worker reaches it at its own ([`netns::worker_addr`]).
    let private_network = netns::inside();
    if live.cuts_network() && !private_network {
        return Err(LiveError::Setup(format!(
            "scenario `{}` (seed {seed}) cuts the network, which needs the private network namespace `fencesim live` makes",
            scenario.name
        )));
    }
    let server = LeaseServer::start(live.kind, dir, guard, private_network)?;
    let firewall = if live.cuts_network() {
        Some(netns::Firewall::new(server.port()).map_err(LiveError::Setup)?)
    } else {
        None
    };
    server.create_lock_dirs(&lease_scopes(scenario))?;
    Ok((server, firewall, private_network))
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

/// A flag set by the first SIGINT or SIGTERM (Ctrl-C), for [`run_live`]'s `stop`.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>, LiveError> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|error| LiveError::Setup(format!("cannot catch signal {signal}: {error}")))?;
    }
    Ok(stop)
}
