//! A worker's talk with its lease service: acquiring a lock (etcd's lease and put-if-absent
//! lock key, or a ZooKeeper session and Curator's ephemeral sequential node), asking whether it
//! is still held, a keepalive (etcd) or a ping (ZooKeeper) with the policy's answer to a
//! failure, and the release; each logged as the simulated coordinator records it.

use fencesim_model::{
    history::{BeliefEnd, EventKind},
    nodes::COORDINATOR,
    policy::RenewFailureCause,
    Token,
};

use super::{lock, ms, Service, Worker};
use crate::{etcd::Campaign, record::now_unix_ns, zk};

impl Worker {
    /// Grant a lease, then put-if-absent the lock key with it. The token is the key's create
    /// revision (the `etcd` preset's `token_source = "revision"`). Returns the token, the
    /// lease and the local deadline.
    pub(super) fn acquire(&self, scope: &str) -> Option<(Token, i64, u64)> {
        self.step(|| self.acquire_step(scope))
    }

    fn acquire_step(&self, scope: &str) -> Option<(Token, i64, u64)> {
        if matches!(self.config.service, Service::Zookeeper(_)) {
            return self.zk_acquire(scope);
        }
        let sent = self.mono();
        let (lease, _ttl) = self
            .client
            .grant(self.config.ttl_s)
            .map_err(|error| eprintln!("{}: lease grant: {error}", self.name()))
            .ok()?;
        match self.client.campaign(scope, self.name(), lease) {
            Ok(Campaign::Won { revision }) => {
                let now = now_unix_ns();
                let token = Token::try_from(revision).ok()?;
                let answered = now.saturating_sub(self.config.epoch_unix_ns);
                self.log.record_at(
                    now,
                    COORDINATOR,
                    EventKind::Granted {
                        scope: scope.to_string(),
                        holder: self.name().to_string(),
                        token,
                        expires_mono_ms: ms(answered) + (self.config.ttl_s * 1_000) as f64,
                    },
                    Some(revision),
                );
                Some((token, lease, self.deadline_after(sent, answered)))
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

    /// Curator's lock on ZooKeeper: a new session (timeout = the effective TTL), an
    /// ephemeral sequential node under the scope's lock directory holding the worker's name;
    /// the lock is ours if our node has the lowest sequence number, which is the token.
    /// Otherwise the node and the session go and the worker retries, as the simulated one.
    fn zk_acquire(&self, scope: &str) -> Option<(Token, i64, u64)> {
        let sent = self.mono();
        let ttl_ms = self.config.scenario.lease.effective_ttl_ms();
        let mut session = zk::Session::connect(self.client.addr, ttl_ms, self.client.timeout)
            .map_err(|error| eprintln!("{}: session: {error}", self.name()))
            .ok()?;
        let dir = zk::lock_dir(scope);
        let attempt = (|| {
            let path = session
                .create(
                    &format!("{dir}/lock-"),
                    self.name().as_bytes(),
                    zk::EPHEMERAL_SEQUENTIAL,
                )?
                .map_err(|code| zk::ZkError(format!("create: error {code}")))?;
            let (children, _) = session
                .children(&dir)?
                .map_err(|code| zk::ZkError(format!("children: error {code}")))?;
            let mine = zk::sequence(&path);
            let lowest = children.iter().filter_map(|c| zk::sequence(c)).min();
            Ok::<_, zk::ZkError>((mine, lowest == mine))
        })();
        match attempt {
            Ok((Some(token), true)) => {
                let now = now_unix_ns();
                let answered = now.saturating_sub(self.config.epoch_unix_ns);
                self.log.record_at(
                    now,
                    COORDINATOR,
                    EventKind::Granted {
                        scope: scope.to_string(),
                        holder: self.name().to_string(),
                        token,
                        expires_mono_ms: ms(answered) + f64::from(session.timeout_ms),
                    },
                    None,
                );
                *lock(&self.session) = Some(session);
                Some((token, 0, self.deadline_after(sent, answered)))
            }
            Ok(_) => {
                let _ = session.close();
                None
            }
            Err(error) => {
                eprintln!("{}: lock: {error}", self.name());
                let _ = session.close();
                None
            }
        }
    }

    /// Whether the lease service still has `scope` held under `token`.
    pub(super) fn holds(&self, scope: &str, token: Token) -> bool {
        match self.config.service {
            Service::Etcd(_) => {
                let signed = i64::try_from(token).unwrap_or(i64::MAX);
                self.client.holds(scope, signed).unwrap_or(false)
            }
            Service::Zookeeper(_) => {
                let mut session = lock(&self.session);
                let Some(session) = session.as_mut() else {
                    return false;
                };
                match session.children(&zk::lock_dir(scope)) {
                    Ok(Ok((children, _))) => {
                        children.iter().filter_map(|c| zk::sequence(c)).min() == Some(token)
                    }
                    _ => false,
                }
            }
        }
    }

    pub(super) fn release(&self, scope: &str, token: Token, lease: i64) {
        if matches!(self.config.service, Service::Zookeeper(_)) {
            // Closing the session deletes its ephemeral node at once.
            let closed = lock(&self.session).take().map(|mut s| s.close());
            if let Some(Ok(_)) = closed {
                self.log.record(
                    COORDINATOR,
                    EventKind::Released {
                        scope: scope.to_string(),
                        holder: self.name().to_string(),
                        token,
                    },
                    None,
                );
            }
            return;
        }
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

    /// One keepalive, its log line and the policy's answer to it; false when the loop ends.
    pub(super) fn keepalive_step(&self, lease: i64, scope: &str, token: Token) -> bool {
        if self.ended() {
            return false;
        }
        let sent = self.mono();
        let reply = match self.config.service {
            Service::Etcd(_) => self.client.keepalive(lease).map_err(|e| e.to_string()),
            Service::Zookeeper(_) => self.zk_ping(),
        };
        let answered = self.mono();
        let now = self.mono();
        if lock(&self.state)
            .belief
            .as_ref()
            .is_some_and(|b| b.too_late(now))
        {
            // The client has stopped believing; a late success changes nothing.
            self.end(BeliefEnd::DeadlinePassed);
            return false;
        }
        let failure = match reply {
            Ok(ttl) if ttl > 0 => {
                let deadline = self.deadline_after(sent, answered);
                if let Some(belief) = lock(&self.state).belief.as_mut() {
                    belief.renewed(deadline);
                }
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
            Ok(_) => Some((
                match self.config.service {
                    Service::Etcd(_) => "lease not found (TTL 0)",
                    Service::Zookeeper(_) => "session expired",
                }
                .to_string(),
                RenewFailureCause::Refused,
            )),
            Err(error) => Some((error, RenewFailureCause::Unanswered)),
        };
        let Some((reason, cause)) = failure else {
            return true;
        };
        let now = self.mono();
        let Some((events, keep_renewing)) = lock(&self.state)
            .belief
            .as_mut()
            .map(|b| b.renew_failed(&*self.policy, reason, cause, now))
        else {
            return false;
        };
        self.record_all(events);
        keep_renewing
    }

    /// A ZooKeeper ping as a keepalive: `Ok(1)` when the session lives, `Ok(0)` when the
    /// server says it has expired (its node is gone), `Err` when there is no answer. A broken
    /// connection is resumed first, as a ZooKeeper client does.
    fn zk_ping(&self) -> Result<i64, String> {
        let mut session = lock(&self.session);
        let Some(session) = session.as_mut() else {
            return Ok(0);
        };
        if session.ping().is_ok() {
            return Ok(1);
        }
        match session.resume() {
            Ok(true) => session.ping().map(|()| 1).map_err(|e| e.to_string()),
            Ok(false) => Ok(0),
            Err(error) => Err(error.to_string()),
        }
    }
}
