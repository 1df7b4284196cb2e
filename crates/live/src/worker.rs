//! The worker role: one real OS process per worker incarnation (`fencesim live-worker
//! CONFIG`), holding a lease in etcd and writing through a fencing mode, logging every step.
//!
//! It plays the simulator's worker (`crates/sim/src/worker.rs`) and asks the same
//! [`WorkerPolicy`] (`WorkerSpec::policy`, the same `SpecPolicy` the simulated workers get) at the same points: acquire, then per unit
//! of work the policy's gate before the work, the work, its gate before the write and the
//! write with the token; a keepalive thread renews every `renew_every_ms` and carries out the
//! policy's answer to a failure; a watcher ends the belief at the local deadline when the
//! policy says so; at the end of the period it releases (revokes its lease). Each decision
//! and the request it leads to are one step under the step lock, taken in the order they fell
//! due ([`Worker::wait_turn`]), so the history records what the simulated worker would do.
//! `worker/lease` talks with the lease service (acquire, hold check, keepalive, release),
//! `worker/store` writes.

use std::{
    net::SocketAddr,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use fencesim_model::{
    belief::{deadline_after, Belief},
    history::{BeliefEnd, EventKind},
    policy::{Gate, LeaseState, WorkerPolicy},
    rng::stream,
    Token, NS_PER_MS,
};
use fencesim_scenario::{DeadlineFrom, Scenario};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

mod lease;
mod store;

use store::Store;

use crate::{
    etcd::Client,
    record::{now_unix_ns, Log},
    zk,
};

/// Where a live worker's writes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LiveStore {
    /// An unconditional `UPDATE` on the SQLite file (`none`).
    None,
    /// The seeds' `UPDATE … WHERE fence_token <= ?`, rows affected checked (`sql`).
    Sql,
    /// The same statement, rows affected ignored (`sql-ignore-rows`).
    SqlIgnoreRows,
    /// An etcd transaction guarded on the lock key's create revision (`same-store-txn`).
    SameStoreTxn,
}

/// Everything one worker process needs, written by the supervisor as JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerConfig {
    /// `worker-N`.
    pub name: String,
    /// N.
    pub index: usize,
    /// 1 for the first start, +1 per restart.
    pub incarnation: u32,
    /// The run's seed (work durations are drawn from `name/incarnation-K` of it).
    pub seed: u64,
    /// The scenario, resolved: the worker asks the simulator's own policy
    /// (`WorkerSpec::policy`, as in the simulation) for every decision, and takes its work, resources,
    /// retries and timeouts from `[workers]`.
    pub scenario: Scenario,
    /// The lease service's client address: etcd's or ZooKeeper's.
    pub service: Service,
    /// The lease TTL asked of etcd, in whole seconds (ZooKeeper: the session timeout asked,
    /// in ms, is the scenario's effective TTL).
    pub ttl_s: u64,
    /// Where writes go.
    pub store: LiveStore,
    /// The SQLite file.
    pub db: PathBuf,
    /// This process's event log.
    pub events: PathBuf,
    /// The supervisor's process id: the worker exits when it is gone.
    pub supervisor_pid: u32,
    /// When the run began (Unix ns): the clock fields of its events count from here.
    pub epoch_unix_ns: u64,
    /// The step lock file (see [`step_lock_path`]).
    pub step_lock: PathBuf,
}

/// Which lease service a worker talks to, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// etcd: a lease plus a put-if-absent lock key; the token is the key's create revision.
    Etcd(SocketAddr),
    /// ZooKeeper: a session plus an ephemeral sequential node (Curator's lock recipe); the
    /// lowest sequence number holds the lock and is the token.
    Zookeeper(SocketAddr),
}

impl Service {
    /// The service's address.
    pub fn addr(self) -> SocketAddr {
        match self {
            Service::Etcd(addr) | Service::Zookeeper(addr) => addr,
        }
    }

    /// The same service at `addr`.
    #[must_use]
    pub fn at(self, addr: SocketAddr) -> Service {
        match self {
            Service::Etcd(_) => Service::Etcd(addr),
            Service::Zookeeper(_) => Service::Zookeeper(addr),
        }
    }
}

/// The file a worker holds an exclusive lock on (`flock`) during each step that talks to the
/// lease service or the store and logs what it got, and that the supervisor takes before it
/// stops or kills the worker. So a pause or a crash falls between two such steps, never
/// between a decision (a grant, a commit) and the line that stamps it: the simulator's
/// storage and coordinator are other processes, which a worker's pause cannot split, while
/// live SQLite runs inside the worker. The fault waits for the step in progress (a few ms).
pub fn step_lock_path(dir: &std::path::Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.step"))
}

/// What the worker believes about the lease it holds, and which decision is due: everything
/// the worker's threads share, behind one mutex.
#[derive(Default)]
struct State {
    belief: Option<Belief>,
    /// When the unit of work in progress ends (ns since the run began): the write decision
    /// due then must be taken before any renewal outcome or deadline that falls due later
    /// (see [`Worker::wait_turn`]).
    write_due_ns: Option<u64>,
}

/// Who asks for a turn (ties at the same due time go in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Write,
    Deadline,
    Renew,
}

struct Worker {
    config: WorkerConfig,
    /// The simulated worker's policy, the same function's answer: every gate, the renewal
    /// interval, the local deadline and what a failed renewal does are decided by it.
    policy: Arc<dyn WorkerPolicy>,
    step_lock: Mutex<std::fs::File>,
    client: Client,
    /// The ZooKeeper session of the lease held (one session per lease period).
    session: Mutex<Option<zk::Session>>,
    log: Log,
    store: Mutex<Store>,
    next_op: Mutex<u64>,
    state: Mutex<State>,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// The largest worker configuration read (bytes).
pub const WORKER_CONFIG_MAX_BYTES: u64 = 1024 * 1024;

/// Runs the worker role until the supervisor kills it (or is gone). Errors are set-up
/// failures (the config or the database cannot be opened).
pub fn run(config_path: &std::path::Path) -> Result<(), String> {
    let worker = Arc::new(Worker::open(read_config(config_path)?)?);
    let mut rng = stream(
        worker.config.seed,
        &format!(
            "{}/incarnation-{}",
            worker.config.name, worker.config.incarnation
        ),
    );
    let spec = worker.config.scenario.workers.clone();
    let mut period = worker.config.index;
    loop {
        worker.exit_if_orphaned();
        let resource = spec.resources[period % spec.resources.len()].clone();
        let scope = worker.config.scenario.lease_scope_of(&resource);
        match worker.acquire(&scope) {
            Some((token, lease, deadline_ns)) => {
                period += 1;
                worker
                    .clone()
                    .hold(&mut rng, &scope, &resource, token, lease, deadline_ns);
            }
            None => {
                // The simulated worker's draw, from the same stream: no draw without jitter.
                let factor = if spec.acquire_retry_jitter > 0.0 {
                    1.0 + rng.gen::<f64>() * spec.acquire_retry_jitter
                } else {
                    1.0
                };
                std::thread::sleep(Duration::from_secs_f64(
                    spec.acquire_retry_ms as f64 * factor / 1_000.0,
                ));
            }
        }
    }
}

/// The worker's configuration: at most [`WORKER_CONFIG_MAX_BYTES`] of UTF-8 JSON in a regular
/// file (the supervisor writes a few kilobytes; anything more, a FIFO or a device is not one).
fn read_config(path: &std::path::Path) -> Result<WorkerConfig, String> {
    let bytes =
        fencesim_scenario::input::read_limited(path, WORKER_CONFIG_MAX_BYTES).map_err(|error| {
            format!(
                "{}: {}",
                path.display(),
                error.expected("a live worker's configuration")
            )
        })?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: expected UTF-8 JSON", path.display()))?;
    serde_json::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))
}

/// Whether a decision `mine` (its due time, its role) must let another go first: one that
/// fell due earlier and is already overdue at `now`.
fn must_wait(mine: (u64, Role), others: &[(u64, Role)], now: u64) -> bool {
    others
        .iter()
        .any(|other| other.1 != mine.1 && *other < mine && other.0 <= now)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Worker {
    /// The worker `config` describes: its log, store and step lock opened.
    fn open(config: WorkerConfig) -> Result<Worker, String> {
        let log = Log::open(&config.events)
            .map_err(|error| format!("{}: {error}", config.events.display()))?;
        let store = Store::open(&config)?;
        let step_lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&config.step_lock)
            .map_err(|error| format!("{}: {error}", config.step_lock.display()))?;
        Ok(Worker {
            policy: Arc::new(config.scenario.workers.policy()),
            step_lock: Mutex::new(step_lock),
            client: Client {
                addr: config.service.addr(),
                timeout: Duration::from_millis(config.scenario.workers.request_timeout_ms),
            },
            session: Mutex::new(None),
            log,
            store: Mutex::new(store),
            next_op: Mutex::new(0),
            state: Mutex::new(State::default()),
            config,
        })
    }

    fn name(&self) -> &str {
        &self.config.name
    }

    /// The worker's own monotonic reading: ns since the run began (the history's clock).
    fn mono(&self) -> u64 {
        now_unix_ns().saturating_sub(self.config.epoch_unix_ns)
    }

    /// Runs `f` holding the step lock (see [`step_lock_path`]).
    fn step<T>(&self, f: impl FnOnce() -> T) -> T {
        let file = lock(&self.step_lock);
        // Without the lock (an I/O error), the step runs unprotected rather than not at all.
        let locked = file.lock().is_ok();
        let result = f();
        if locked {
            let _ = file.unlock();
        }
        result
    }

    /// The supervisor is gone (killed without its clean-up): stop, never linger.
    fn exit_if_orphaned(&self) {
        if std::os::unix::process::parent_id() != self.config.supervisor_pid {
            std::process::exit(0);
        }
    }

    /// Waits until no other decision that fell due before `due_ns` is still untaken.
    ///
    /// After a pause (SIGSTOP/SIGCONT) every timer of the worker is overdue at once and its
    /// threads race. The simulated worker's sleeps that fell due during the pause end in the
    /// order they fell due (`crates/sim/src/overdue.rs`): a decision that fell due during the
    /// pause (the write after the work, a deadline) is taken with what the worker knew then, and a renewal sent at the resume changes the belief only when its reply
    /// comes back, a round trip later. So here a renewal (due "now", its reply later) waits
    /// for every overdue write or deadline decision, and those go in the order they fell due.
    fn wait_turn(&self, role: Role, due_ns: u64) {
        let mine = (due_ns, role);
        loop {
            let now = self.mono();
            let waiting = {
                let state = lock(&self.state);
                let mut others = Vec::new();
                if let Some(write) = state.write_due_ns {
                    others.push((write, Role::Write));
                }
                if let Some(belief) = state.belief.as_ref().filter(|b| b.watched) {
                    if !belief.is_ended() {
                        others.push((belief.deadline_mono_ns, Role::Deadline));
                    }
                }
                must_wait(mine, &others, now)
            };
            if !waiting {
                return;
            }
            self.exit_if_orphaned();
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// The local deadline after a grant or renewal requested at `sent_ns` and answered at
    /// `answered_ns`: the policy's belief period from the base `workers.deadline_from` names.
    fn deadline_after(&self, sent_ns: u64, answered_ns: u64) -> u64 {
        let base = match self.config.scenario.workers.deadline_from {
            DeadlineFrom::RequestSent => sent_ns,
            DeadlineFrom::ReplyReceived => answered_ns,
        };
        deadline_after(&*self.policy, base)
    }

    /// The policy's view of the belief now; `None` once it has ended (or there is none).
    fn lease_state(&self) -> Option<LeaseState> {
        let now = self.mono();
        let state = lock(&self.state);
        let belief = state.belief.as_ref()?;
        (!belief.is_ended()).then(|| belief.state(now))
    }

    /// Ends the belief (once) and logs why; call it inside a step.
    fn end(&self, why: BeliefEnd) {
        let now = self.mono();
        let ended = lock(&self.state)
            .belief
            .as_mut()
            .and_then(|belief| belief.end(why, now));
        self.record_all(ended);
    }

    /// Logs the worker's own events.
    fn record_all(&self, events: impl IntoIterator<Item = EventKind>) {
        for event in events {
            self.log.record(self.name(), event, None);
        }
    }

    fn ended(&self) -> bool {
        lock(&self.state)
            .belief
            .as_ref()
            .is_none_or(Belief::is_ended)
    }

    /// Carries out the policy's answer at a gate, inside a step; false when the worker must
    /// stop (the belief has ended).
    fn pass(&self, gate: Gate, scope: &str, token: Token) -> bool {
        match gate {
            Gate::Go => true,
            Gate::Stop(why) => {
                self.end(why);
                false
            }
            Gate::AskLease => {
                if self.holds(scope, token) {
                    true
                } else {
                    self.end(BeliefEnd::CheckFailed);
                    false
                }
            }
        }
    }

    /// One gate decision, taken in a step: false when the worker must stop holding.
    fn decide(&self, gate: impl FnOnce(&LeaseState) -> Gate, scope: &str, token: Token) -> bool {
        let Some(state) = self.lease_state() else {
            return false;
        };
        self.pass(gate(&state), scope, token)
    }

    /// Sleeps until `mono_ns` (the worker's clock), in short steps so a vanished supervisor
    /// is noticed.
    fn sleep_until(&self, mono_ns: u64) {
        loop {
            let now = self.mono();
            if now >= mono_ns {
                return;
            }
            std::thread::sleep(Duration::from_nanos((mono_ns - now).min(50 * NS_PER_MS)));
            self.exit_if_orphaned();
        }
    }

    fn hold(
        self: Arc<Self>,
        rng: &mut fencesim_model::rng::Rng,
        scope: &str,
        resource: &str,
        token: Token,
        lease: i64,
        deadline_ns: u64,
    ) {
        let (belief, started) = Belief::start(&*self.policy, scope, token, deadline_ns);
        let watched = belief.watched;
        self.step(|| {
            lock(&self.state).belief = Some(belief);
            self.record_all([started]);
        });
        let renewer = {
            let me = self.clone();
            let (scope, token) = (scope.to_string(), token);
            std::thread::spawn(move || me.keepalive_loop(lease, &scope, token))
        };
        // A deadline that never comes needs no watcher.
        let watcher = watched.then(|| {
            let me = self.clone();
            std::thread::spawn(move || me.watch_deadline())
        });
        let spec = &self.config.scenario.workers;
        for _ in 0..spec.writes_per_lease {
            let go = self.step(|| self.decide(|s| self.policy.before_work(s), scope, token));
            if !go {
                break;
            }
            let op = self.next_op();
            let work_ms = spec.work_ms.sample(rng);
            let due = self.mono() + (work_ms * NS_PER_MS as f64) as u64;
            lock(&self.state).write_due_ns = Some(due);
            self.sleep_until(due);
            self.wait_turn(Role::Write, due);
            // The decision and the write in one step: a renewal's outcome or a deadline either
            // came before it (and the policy saw it) or comes after the write went out.
            let go = self.step(|| {
                lock(&self.state).write_due_ns = None;
                self.decide(|s| self.policy.before_write(s), scope, token)
                    && self.write(op, scope, resource, token)
            });
            if !go {
                break;
            }
        }
        self.step(|| {
            self.end(BeliefEnd::Released);
            self.release(scope, token, lease);
        });
        let _ = renewer.join();
        if let Some(watcher) = watcher {
            let _ = watcher.join();
        }
        lock(&self.state).belief = None;
    }

    /// A policy that ends the belief at the local deadline (clients that keep retrying
    /// renewals until it): the simulated worker's `watch_deadline`.
    fn watch_deadline(&self) {
        loop {
            let deadline = {
                let state = lock(&self.state);
                match state.belief.as_ref() {
                    Some(b) if !b.is_ended() => b.deadline_mono_ns,
                    _ => return,
                }
            };
            let now = self.mono();
            if now < deadline {
                std::thread::sleep(Duration::from_nanos((deadline - now).min(5 * NS_PER_MS)));
                self.exit_if_orphaned();
                continue;
            }
            self.wait_turn(Role::Deadline, deadline);
            let done = self.step(|| {
                let state = self.lease_state();
                match state {
                    None => true,
                    Some(s) if s.deadline_passed() => {
                        self.end(BeliefEnd::DeadlinePassed);
                        true
                    }
                    // A renewal moved the deadline meanwhile.
                    Some(_) => false,
                }
            });
            if done {
                return;
            }
        }
    }

    /// Keepalive every `renew_every_ms` after the previous one returned (as the simulated
    /// worker's renew loop); what a failure does is the policy's `on_renew_failure`.
    fn keepalive_loop(&self, lease: i64, scope: &str, token: Token) {
        let every_ns = self.policy.renew_every_ms().saturating_mul(NS_PER_MS);
        let mut next = self.mono() + every_ns;
        loop {
            // Sleep in short steps so the end of the period is noticed promptly.
            while self.mono() < next {
                if self.ended() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
                self.exit_if_orphaned();
            }
            if self.ended() {
                return;
            }
            self.wait_turn(Role::Renew, self.mono());
            let go_on = self.step(|| self.keepalive_step(lease, scope, token));
            if !go_on {
                return;
            }
            next = self.mono() + every_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_a_resume_overdue_decisions_go_in_the_order_they_fell_due() {
        let now = 8_000;
        // The write fell due during the pause (3 400); a keepalive sent at the resume (due
        // now) waits for it: the stale write goes out, as in the simulation.
        assert!(must_wait((now, Role::Renew), &[(3_400, Role::Write)], now));
        assert!(!must_wait((3_400, Role::Write), &[], now));
        // A write not yet due does not hold a keepalive up.
        assert!(!must_wait((now, Role::Renew), &[(8_300, Role::Write)], now));
        // A deadline that fell due before the write goes first, and the write waits for it.
        assert!(must_wait(
            (3_400, Role::Write),
            &[(3_000, Role::Deadline)],
            now
        ));
        assert!(!must_wait(
            (3_000, Role::Deadline),
            &[(3_400, Role::Write)],
            now
        ));
        // A tie goes to the write.
        assert!(!must_wait(
            (3_000, Role::Write),
            &[(3_000, Role::Deadline)],
            now
        ));
        assert!(must_wait(
            (3_000, Role::Deadline),
            &[(3_000, Role::Write)],
            now
        ));
        // Never waits for itself.
        assert!(!must_wait((now, Role::Renew), &[(10, Role::Renew)], now));
    }
}
