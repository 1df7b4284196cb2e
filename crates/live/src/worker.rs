//! The worker role: one real OS process per worker incarnation (`fencesim live-worker
//! CONFIG`), holding a lease in etcd and writing through a fencing mode, logging every step.
//!
//! It plays the simulator's worker (`crates/sim/src/worker.rs`): acquire, then per unit of
//! work check the local deadline, work, write with the token; a keepalive thread renews
//! every `renew_every_ms`; at the end of the period it releases (revokes its lease).

use std::{
    net::SocketAddr,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use fencesim_fencing::{SqlFence, SqlVariant};
use fencesim_model::{
    fence::{CompareScope, Fence, Verdict, WriteRequest},
    history::{BeliefEnd, EventKind},
    nodes::{COORDINATOR, STORAGE},
    rng::stream,
    Token, NS_PER_MS,
};
use fencesim_scenario::Dist;
use serde::{Deserialize, Serialize};

use crate::{
    etcd::{Campaign, Client},
    record::{now_unix_ns, Log},
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
    /// etcd's client address.
    pub etcd: SocketAddr,
    /// The lease TTL asked of etcd, in whole seconds.
    pub ttl_s: u64,
    /// Keepalive interval.
    pub renew_every_ms: u64,
    /// Local deadline after a grant or a successful keepalive.
    pub renew_deadline_ms: u64,
    /// Stop believing at the first failed keepalive.
    pub stop_on_renew_failure: bool,
    /// Check the local deadline again after the work.
    pub recheck_deadline_before_write: bool,
    /// Duration of one unit of work.
    pub work_ms: Dist,
    /// Units of work per lease period.
    pub writes_per_lease: u32,
    /// Pause between failed campaigns.
    pub acquire_retry_ms: u64,
    /// `(resource, lease scope)` pairs, taken in turn per lease period.
    pub resources: Vec<(String, String)>,
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

/// The file a worker holds an exclusive lock on (`flock`) during each step that talks to the
/// lease service or the store and logs what it got, and that the supervisor takes before it
/// stops or kills the worker. So a pause or a crash falls between two such steps, never
/// between a decision (a grant, a commit) and the line that stamps it: the simulator's
/// storage and coordinator are other processes, which a worker's pause cannot split, while
/// live SQLite runs inside the worker. The fault waits for the step in progress (a few ms).
pub fn step_lock_path(dir: &std::path::Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.step"))
}

struct Belief {
    scope: String,
    token: Token,
    deadline_ns: u64,
    ended: Option<BeliefEnd>,
}

struct Worker {
    config: WorkerConfig,
    step_lock: Mutex<std::fs::File>,
    client: Client,
    log: Log,
    store: Mutex<Store>,
    next_op: Mutex<u64>,
}

enum Store {
    Sql(SqlFence),
    Etcd,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// Runs the worker role until the supervisor kills it (or is gone). Errors are set-up
/// failures (the config or the database cannot be opened).
pub fn run(config_path: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(config_path)
        .map_err(|error| format!("{}: {error}", config_path.display()))?;
    let config: WorkerConfig = serde_json::from_str(&text)
        .map_err(|error| format!("{}: {error}", config_path.display()))?;
    let log = Log::open(&config.events)
        .map_err(|error| format!("{}: {error}", config.events.display()))?;
    let store = match config.store {
        LiveStore::SameStoreTxn => Store::Etcd,
        mode => {
            let variant = match mode {
                LiveStore::None => SqlVariant::Unfenced,
                LiveStore::Sql => SqlVariant::Le,
                _ => SqlVariant::LeIgnoreRows,
            };
            Store::Sql(
                SqlFence::open_file(&config.db, variant, CompareScope::PerResource)
                    .map_err(|error| format!("{}: {error}", config.db.display()))?,
            )
        }
    };
    let step_lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&config.step_lock)
        .map_err(|error| format!("{}: {error}", config.step_lock.display()))?;
    let worker = Arc::new(Worker {
        step_lock: Mutex::new(step_lock),
        client: Client { addr: config.etcd },
        log,
        store: Mutex::new(store),
        next_op: Mutex::new(0),
        config,
    });
    let mut rng = stream(
        worker.config.seed,
        &format!(
            "{}/incarnation-{}",
            worker.config.name, worker.config.incarnation
        ),
    );
    let mut period = worker.config.index;
    loop {
        worker.exit_if_orphaned();
        let (resource, scope) =
            worker.config.resources[period % worker.config.resources.len()].clone();
        match worker.acquire(&scope) {
            Some((token, lease)) => {
                period += 1;
                worker
                    .clone()
                    .hold(&mut rng, &scope, &resource, token, lease);
            }
            None => std::thread::sleep(Duration::from_millis(worker.config.acquire_retry_ms)),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Worker {
    fn name(&self) -> &str {
        &self.config.name
    }

    /// A real-time reading as the history's clock fields give it: ms since the run began.
    fn mono_ms(&self, unix_ns: u64) -> f64 {
        ms(unix_ns.saturating_sub(self.config.epoch_unix_ns))
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

    /// Grant a lease, then put-if-absent the lock key with it. The token is the key's create
    /// revision (the `etcd` preset's `token_source = "revision"`).
    fn acquire(&self, scope: &str) -> Option<(Token, i64)> {
        self.step(|| self.acquire_step(scope))
    }

    fn acquire_step(&self, scope: &str) -> Option<(Token, i64)> {
        let (lease, _ttl) = self
            .client
            .grant(self.config.ttl_s)
            .map_err(|error| eprintln!("{}: lease grant: {error}", self.name()))
            .ok()?;
        match self.client.campaign(scope, self.name(), lease) {
            Ok(Campaign::Won { revision }) => {
                let now = now_unix_ns();
                let token = Token::try_from(revision).ok()?;
                self.log.record_at(
                    now,
                    COORDINATOR,
                    EventKind::Granted {
                        scope: scope.to_string(),
                        holder: self.name().to_string(),
                        token,
                        expires_mono_ms: self.mono_ms(now) + (self.config.ttl_s * 1_000) as f64,
                    },
                    Some(revision),
                );
                Some((token, lease))
            }
            Ok(Campaign::Lost { .. }) => {
                let _ = self.client.revoke(lease);
                None
            }
            Err(error) => {
                eprintln!("{}: campaign: {error}", self.name());
                let _ = self.client.revoke(lease);
                None
            }
        }
    }

    fn end(&self, belief: &Mutex<Belief>, why: BeliefEnd) {
        let mut belief = lock(belief);
        if belief.ended.is_some() {
            return;
        }
        belief.ended = Some(why.clone());
        self.log.record(
            self.name(),
            EventKind::BeliefEnded {
                scope: belief.scope.clone(),
                token: belief.token,
                why,
                local_mono_ms: self.mono_ms(now_unix_ns()),
            },
            None,
        );
    }

    fn ended(belief: &Mutex<Belief>) -> bool {
        lock(belief).ended.is_some()
    }

    fn deadline_passed(belief: &Mutex<Belief>) -> bool {
        now_unix_ns() >= lock(belief).deadline_ns
    }

    fn hold(
        self: Arc<Self>,
        rng: &mut fencesim_model::rng::Rng,
        scope: &str,
        resource: &str,
        token: Token,
        lease: i64,
    ) {
        let deadline_ns = now_unix_ns() + self.config.renew_deadline_ms * NS_PER_MS;
        self.log.record(
            self.name(),
            EventKind::BeliefStarted {
                scope: scope.to_string(),
                token,
                local_deadline_mono_ms: self.mono_ms(deadline_ns),
            },
            None,
        );
        let belief = Arc::new(Mutex::new(Belief {
            scope: scope.to_string(),
            token,
            deadline_ns,
            ended: None,
        }));
        let renewer = {
            let me = self.clone();
            let belief = belief.clone();
            std::thread::spawn(move || me.keepalive_loop(&belief, lease))
        };
        for _ in 0..self.config.writes_per_lease {
            if Self::ended(&belief) {
                break;
            }
            if Self::deadline_passed(&belief) {
                self.end(&belief, BeliefEnd::DeadlinePassed);
                break;
            }
            let work_ms = self.config.work_ms.sample(rng);
            std::thread::sleep(Duration::from_secs_f64(work_ms / 1_000.0));
            self.exit_if_orphaned();
            if Self::ended(&belief) {
                break;
            }
            if self.config.recheck_deadline_before_write && Self::deadline_passed(&belief) {
                self.end(&belief, BeliefEnd::DeadlinePassed);
                break;
            }
            if !self.write(scope, resource, token) {
                self.end(&belief, BeliefEnd::WriteRejected);
                break;
            }
        }
        self.end(&belief, BeliefEnd::Released);
        self.step(|| self.release(scope, token, lease));
        let _ = renewer.join();
    }

    fn release(&self, scope: &str, token: Token, lease: i64) {
        if let Ok(revision) = self.client.revoke(lease) {
            self.log.record(
                COORDINATOR,
                EventKind::Released {
                    scope: scope.to_string(),
                    holder: self.name().to_string(),
                    token,
                },
                Some(revision),
            );
        }
    }

    /// Keepalive every `renew_every_ms`; a failed one ends the belief when
    /// `stop_on_renew_failure`, otherwise the belief ends at the local deadline.
    fn keepalive_loop(&self, belief: &Mutex<Belief>, lease: i64) {
        let every = Duration::from_millis(self.config.renew_every_ms);
        let (scope, token) = {
            let b = lock(belief);
            (b.scope.clone(), b.token)
        };
        let mut next = now_unix_ns() + self.config.renew_every_ms * NS_PER_MS;
        loop {
            // Sleep in short steps so the end of the period is noticed promptly.
            while now_unix_ns() < next {
                if Self::ended(belief) {
                    return;
                }
                if !self.config.stop_on_renew_failure && Self::deadline_passed(belief) {
                    self.end(belief, BeliefEnd::DeadlinePassed);
                    return;
                }
                std::thread::sleep(Duration::from_millis(5).min(every));
            }
            if Self::ended(belief) {
                return;
            }
            next = now_unix_ns() + self.config.renew_every_ms * NS_PER_MS;
            let failure = self.step(|| self.keepalive_step(belief, lease, &scope, token));
            if let Some(reason) = failure {
                self.log.record(
                    self.name(),
                    EventKind::RenewFailed {
                        scope: scope.clone(),
                        token,
                        reason,
                    },
                    None,
                );
                if self.config.stop_on_renew_failure {
                    self.end(belief, BeliefEnd::RenewFailed);
                    return;
                }
            }
        }
    }

    /// One keepalive and its log line; the failure's reason, if it failed.
    fn keepalive_step(
        &self,
        belief: &Mutex<Belief>,
        lease: i64,
        scope: &str,
        token: Token,
    ) -> Option<String> {
        {
            let sent = now_unix_ns();
            let failure = match self.client.keepalive(lease) {
                Ok(ttl) if ttl > 0 => {
                    lock(belief).deadline_ns = sent + self.config.renew_deadline_ms * NS_PER_MS;
                    self.log.record(
                        COORDINATOR,
                        EventKind::Renewed {
                            scope: scope.to_string(),
                            holder: self.name().to_string(),
                            token,
                        },
                        None,
                    );
                    None
                }
                Ok(_) => Some("lease not found (TTL 0)".to_string()),
                Err(error) => Some(error.to_string()),
            };
            failure
        }
    }

    /// One write with the token; false when the store rejected it.
    fn write(&self, scope: &str, resource: &str, token: Token) -> bool {
        self.step(|| self.write_step(scope, resource, token))
    }

    fn write_step(&self, scope: &str, resource: &str, token: Token) -> bool {
        let op = {
            let mut next = lock(&self.next_op);
            *next += 1;
            // Unique across workers and incarnations of a run.
            (self.config.index as u64 + 1) * 1_000_000_000
                + u64::from(self.config.incarnation) * 1_000_000
                + *next
        };
        self.log.record(
            self.name(),
            EventKind::WriteSent {
                op,
                resource: resource.to_string(),
                token,
            },
            None,
        );
        let request = WriteRequest {
            op,
            resource: resource.to_string(),
            lease_scope: scope.to_string(),
            writer: self.name().to_string(),
            token,
            payload: format!("{token} by {} op {op}", self.name()),
        };
        let presented_at = now_unix_ns();
        let verdict = match &mut *lock(&self.store) {
            Store::Sql(fence) => fence.write(&request, None),
            Store::Etcd => {
                let signed = i64::try_from(token).unwrap_or(i64::MAX);
                match self.client.guarded_put(scope, resource, signed, &request.payload) {
                    Ok(Ok(previous)) => Verdict::Accepted {
                        previous: previous.and_then(|p| Token::try_from(p).ok()),
                    },
                    Ok(Err(current)) => Verdict::Rejected {
                        accepted: current.and_then(|c| Token::try_from(c).ok()),
                        reason: format!(
                            "txn compare failed: lock key create revision is {current:?}, presented {token}"
                        ),
                    },
                    Err(error) => {
                        // The write's fate is unknown: say nothing the checker would count.
                        eprintln!("{}: guarded put: {error}", self.name());
                        return true;
                    }
                }
            }
        };
        self.log.record_at(
            presented_at,
            STORAGE,
            EventKind::WritePresented {
                op,
                resource: request.resource.clone(),
                lease_scope: request.lease_scope.clone(),
                writer: request.writer.clone(),
                token,
            },
            None,
        );
        let accepted = verdict.is_accepted();
        let kind = match verdict {
            Verdict::Accepted { previous } => EventKind::WriteAccepted {
                op,
                resource: request.resource,
                lease_scope: request.lease_scope,
                writer: request.writer,
                token,
                previous,
            },
            Verdict::Rejected { accepted, reason } => EventKind::WriteRejected {
                op,
                resource: request.resource,
                lease_scope: request.lease_scope,
                writer: request.writer,
                token,
                accepted,
                reason,
            },
        };
        self.log.record(STORAGE, kind, None);
        accepted
    }
}
