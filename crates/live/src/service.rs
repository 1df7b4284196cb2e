//! A live run's lease service: etcd or ZooKeeper started (`crate::process`), the lock
//! directories it needs, who holds a lock now, and a thread that follows its locks and logs
//! every expiry.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use fencesim_model::{history::EventKind, nodes::COORDINATOR};
use fencesim_scenario::Scenario;

use crate::{
    etcd::{self, Server},
    guard::Guard,
    plan::Kind,
    record::Log,
    worker, zk, LiveError,
};

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

/// The lease scopes of `scenario`'s resources, in name order.
pub(crate) fn lease_scopes(scenario: &Scenario) -> BTreeSet<String> {
    scenario
        .workers
        .resources
        .iter()
        .map(|r| scenario.lease_scope_of(r))
        .collect()
}

/// The version line of the service `kind` names, or why it cannot be run.
pub fn service_version(kind: Kind) -> Result<String, String> {
    match kind {
        Kind::Etcd => etcd::etcd_version(),
        Kind::Zookeeper { .. } => zk::zookeeper_version(),
    }
}

/// The live lease service of a run.
pub(crate) enum LeaseServer {
    Etcd(Server),
    Zookeeper(zk::Server),
}

impl LeaseServer {
    /// Starts the service `kind` names in `dir`, its process registered with `guard`,
    /// listening on 127.0.0.1 or, with `every_loopback_address` (only ever in the private
    /// network namespace), on all of them.
    pub(crate) fn start(
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
    pub(crate) fn port(&self) -> u16 {
        match self {
            LeaseServer::Etcd(server) => server.client().addr.port(),
            LeaseServer::Zookeeper(server) => server.addr().port(),
        }
    }

    /// ZooKeeper: the lock directory of every scope, created before a worker campaigns in it
    /// (etcd needs none).
    pub(crate) fn create_lock_dirs(&self, scopes: &BTreeSet<String>) -> Result<(), LiveError> {
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
    pub(crate) fn watch(
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
    pub(crate) fn holder(&self, scopes: &BTreeSet<String>) -> Option<String> {
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

    pub(crate) fn kill(&mut self) {
        match self {
            LeaseServer::Etcd(server) => server.kill(),
            LeaseServer::Zookeeper(server) => server.kill(),
        }
    }

    pub(crate) fn restart(&mut self) -> Result<(), String> {
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
