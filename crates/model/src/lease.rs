//! The lease service's state machine (etcd/ZooKeeper/Chubby-like), one per coordinator.
//!
//! Expiry is decided by the service's own monotonic clock, passed in as `now` (nanoseconds
//! of the coordinator's `mono`). At most one unexpired lease exists per scope. The state
//! outlives a coordinator process restart (the simulator keeps it as the "disk"); `restart`
//! applies what a restart loses.
//!
//! The presets of real services (etcd, client-go, ZooKeeper, Consul) differ here only in data:
//! expiry-check granularity (`expiry_check_ns`), who decides expiry (`ExpiredBy`), what a
//! holder's identity is (`HolderIdentity`) and where tokens come from (`TokenSource`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::tokens::TokenSource;
use fencesim_planted::{active, Mutant};

use crate::{
    rng::Rng,
    tokens::{BuiltinTokens, TokenIssuer, TokenRequest},
    NodeName, Scope, Token,
};

/// Whether one counter serves every scope or each scope has its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenScope {
    /// One counter per scope.
    PerResource,
    /// One counter for the whole service.
    Global,
}

/// What a coordinator restart does to the leases it held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnRestart {
    /// Leases survive and are re-extended to `now + ttl + election timeout`, as an etcd
    /// leader change does.
    KeepAndExtend,
    /// Leases are forgotten; every scope is free at once.
    Drop,
}

/// Who decides that a lease has expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpiredBy {
    /// The service, by its own monotonic clock (etcd, ZooKeeper, Consul).
    Service,
    /// Nobody on the server: the record stays until a candidate, having seen it unchanged for
    /// the lease duration *by its own clock*, replaces it with a compare-and-swap (Kubernetes
    /// client-go leader election on a `Lease` object).
    Candidate,
}

/// How an acquire treats a scope that is already held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AcquireRule {
    /// Only if no live lease exists: etcd's `Txn` comparing `CreateRevision == 0`, ZooKeeper's
    /// create of the lock node, Consul's `?acquire`, Redis `SET NX`. A contested acquire is
    /// refused.
    #[default]
    CreateIfAbsent,
    /// An unconditional write (Redis `SET key value PX ttl` without `NX`, an etcd `Put` outside
    /// a transaction): a contested acquire replaces the live lease with no expiry, release or
    /// takeover in between, so the service's own state names two holders in turn (I2). A real
    /// misuse, modelled like `fencing = "sql-ignore-rows"`.
    Overwrite,
}

impl AcquireRule {
    /// Whether this is the default rule (left out of a scenario's resolved form).
    pub fn is_default(&self) -> bool {
        *self == AcquireRule::default()
    }
}

/// What identifies a holder to the service, and so what a restarted holder finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HolderIdentity {
    /// A session (etcd lease ID, ZooKeeper session, Consul session) that dies with the
    /// process: a restarted holder is a stranger to its old lease and waits for it to expire.
    Session,
    /// A name that outlives the process (client-go's identity, typically the pod name): a
    /// restarted holder resumes its own still-held record, token unchanged.
    Name,
}

/// Resolved lease-service configuration (all durations in nanoseconds of the service's mono).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseConfig {
    /// The service's expiry TTL: the requested TTL clamped to the service's range, times the
    /// service's expiry factor (Consul's timer runs at 2 × TTL).
    pub ttl_ns: u64,
    /// The service checks for expired leases only every this often (etcd: 500 ms, ZooKeeper:
    /// tickTime); a lease is revoked at the first check at or after its expiry. 0 = exactly at
    /// expiry. The checks' phase is set per process start with `set_check_phase`.
    pub expiry_check_ns: u64,
    /// After a lease expires involuntarily, nobody may acquire the scope for this long
    /// (Consul's lock-delay). Zero disables it.
    pub lock_delay_ns: u64,
    /// Added to the TTL of kept leases after a restart.
    pub election_timeout_ns: u64,
    /// Where tokens come from.
    pub token_source: TokenSource,
    /// Which counter a token comes from.
    pub token_scope: TokenScope,
    /// What a coordinator restart does.
    pub on_restart: OnRestart,
    /// Who decides expiry.
    pub expired_by: ExpiredBy,
    /// What identifies a holder across its restarts.
    pub identity: HolderIdentity,
    /// How an acquire treats a held scope.
    pub acquire: AcquireRule,
}

/// One granted lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The scope held.
    pub scope: Scope,
    /// The holder's node name.
    pub holder: NodeName,
    /// The holder's incarnation (its session): a restarted process has a new one.
    pub session: u64,
    /// The token issued with the grant.
    pub token: Token,
    /// When it was granted (service mono).
    pub granted_ns: u64,
    /// When the service considers it expired (service mono); with `ExpiredBy::Candidate`
    /// the nominal renew time + lease duration, enforced by nobody on the server.
    pub expires_ns: u64,
}

/// A record as a `get` returns it (client-go reads the Lease object before deciding).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordView {
    /// The current holder, if any.
    pub holder: Option<NodeName>,
    /// Bumped by every change of the record (grant, renewal, release, takeover): what a
    /// candidate compares to see whether the record changed, and what its update must match.
    pub version: u64,
}

/// A client-go candidate's memory of a record: the version it last saw change and when,
/// by its own monotonic clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The record version last observed.
    pub version: u64,
    /// The candidate's mono time when it first observed that version.
    pub observed_local_ns: u64,
}

impl Observation {
    /// client-go's `tryAcquireOrRenew` decision for candidate `me`, given the record just read
    /// and the candidate's clock: updates the observation (a changed record restarts the
    /// wait) and says whether the candidate may write the record now: it is free, it is its
    /// own (same identity), or it has not changed for `lease_duration_ns` by this clock.
    pub fn may_acquire(
        observed: &mut Option<Observation>,
        record: &RecordView,
        me: &str,
        now_local_ns: u64,
        lease_duration_ns: u64,
    ) -> bool {
        let unchanged = observed.is_some_and(|seen| seen.version == record.version);
        if !unchanged {
            *observed = Some(Observation {
                version: record.version,
                observed_local_ns: now_local_ns,
            });
        }
        let seen = observed.expect("set above");
        match record.holder.as_deref() {
            None => true,
            Some(holder) if holder == me => true,
            Some(_) => now_local_ns >= seen.observed_local_ns + lease_duration_ns,
        }
    }
}

/// Why an acquire did not produce a new grant. (Written to history files as
/// `history::wire`'s own `Denial`, not with a serde derive here.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// Someone else holds an unexpired lease.
    Held {
        /// The current holder.
        holder: NodeName,
        /// Its token.
        token: Token,
    },
    /// The scope is in its lock-delay period.
    LockDelay {
        /// When the lock-delay ends (service mono).
        until_ns: u64,
    },
    /// A compare-and-swap update found the record changed since the caller read it.
    Conflict {
        /// The record's current version.
        version: u64,
    },
}

/// Result of an acquire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// A new lease with a freshly issued token.
    Granted(Lease),
    /// The caller already holds this scope (a retried acquire): its lease is extended and
    /// its token returned unchanged. With `HolderIdentity::Name` this is also how a restarted
    /// holder resumes its record.
    AlreadyHeld(Lease),
    /// A candidate replaced another holder's record it had seen unchanged for the lease
    /// duration (`ExpiredBy::Candidate`): `previous` ended, `lease` is a new grant.
    TookOver {
        /// The record replaced.
        previous: Lease,
        /// The new grant.
        lease: Lease,
    },
    /// No grant.
    Denied(Denial),
}

/// Why a renewal failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RenewRefusal {
    /// No lease on the scope (it expired or was dropped).
    NoLease,
    /// The scope is held under another token (a newer grant).
    Superseded {
        /// The current holder.
        holder: NodeName,
        /// Its token.
        token: Token,
    },
}

/// What a restart did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestartEffect {
    /// Leases forgotten (`drop`).
    pub dropped: Vec<Lease>,
    /// Leases kept and re-extended.
    pub extended: Vec<Lease>,
    /// Whether volatile counters were lost.
    pub counters_lost: bool,
}

/// The lease service state.
pub struct LeaseService {
    config: LeaseConfig,
    leases: BTreeMap<Scope, Lease>,
    /// Where tokens come from: the built-in `config.token_source`, or a user's issuer.
    tokens: Box<dyn TokenIssuer>,
    lock_delay_until: BTreeMap<Scope, u64>,
    /// Record versions per scope (bumped by every change of the record).
    versions: BTreeMap<Scope, u64>,
    /// Expiry checks happen at `check_phase_ns + k * expiry_check_ns`.
    check_phase_ns: u64,
}

impl std::fmt::Debug for LeaseService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseService")
            .field("config", &self.config)
            .field("leases", &self.leases)
            .field("tokens", &self.tokens.name())
            .field("lock_delay_until", &self.lock_delay_until)
            .field("versions", &self.versions)
            .field("check_phase_ns", &self.check_phase_ns)
            .finish()
    }
}

/// Answers "which token currently holds this scope?" for stores that check writes against
/// the lease state itself (`same-store-txn`).
pub trait LeaseView {
    /// The token of the scope's current lease, if any.
    fn holder_token(&self, scope: &str) -> Option<Token>;
}

impl LeaseView for LeaseService {
    fn holder_token(&self, scope: &str) -> Option<Token> {
        self.leases.get(scope).map(|lease| lease.token)
    }
}

impl LeaseService {
    /// The service with the built-in token source `config.token_source`; `rng` is the
    /// service's own stream (used only by `random-id` tokens).
    pub fn new(config: LeaseConfig, rng: Rng) -> Self {
        let tokens = Box::new(BuiltinTokens::new(config.token_source, rng));
        LeaseService::with_tokens(config, tokens)
    }

    /// The service with tokens from `tokens` (`config.token_source` is then not used).
    pub fn with_tokens(config: LeaseConfig, tokens: Box<dyn TokenIssuer>) -> Self {
        LeaseService {
            config,
            leases: BTreeMap::new(),
            tokens,
            lock_delay_until: BTreeMap::new(),
            versions: BTreeMap::new(),
            check_phase_ns: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    /// The current lease on `scope`, if any (callers expire due leases first).
    pub fn lease(&self, scope: &str) -> Option<&Lease> {
        self.leases.get(scope)
    }

    /// Every current lease, by scope.
    pub fn leases(&self) -> impl Iterator<Item = &Lease> {
        self.leases.values()
    }

    /// The record of `scope` as a read returns it.
    pub fn record(&self, scope: &str) -> RecordView {
        RecordView {
            holder: self.leases.get(scope).map(|lease| lease.holder.clone()),
            version: self.versions.get(scope).copied().unwrap_or(0),
        }
    }

    /// Sets where the expiry checks fall (a process start: the phase of etcd's revoke loop
    /// or ZooKeeper's session-expiry buckets relative to the lease grants).
    pub fn set_check_phase(&mut self, phase_ns: u64) {
        self.check_phase_ns = phase_ns;
    }

    /// When the service actually revokes a lease expiring at `expires_ns`: the first expiry
    /// check at or after it.
    pub fn revoked_at_ns(&self, expires_ns: u64) -> u64 {
        let check = self.config.expiry_check_ns;
        if check == 0 {
            return expires_ns;
        }
        if expires_ns <= self.check_phase_ns {
            return self.check_phase_ns;
        }
        let since = expires_ns - self.check_phase_ns;
        if active(Mutant::LeaseExpiryCheckEarly) {
            return self.check_phase_ns + since / check * check;
        }
        self.check_phase_ns + since.div_ceil(check) * check
    }

    /// The earliest revocation among current leases (none when candidates decide expiry).
    pub fn next_expiry_ns(&self) -> Option<u64> {
        if self.config.expired_by == ExpiredBy::Candidate {
            return None;
        }
        self.leases
            .values()
            .map(|lease| self.revoked_at_ns(lease.expires_ns))
            .min()
    }

    fn bump_version(&mut self, scope: &str) {
        *self.versions.entry(scope.to_string()).or_insert(0) += 1;
    }

    /// A delete in the store: the revision counter moves too.
    fn deleted(&mut self, scope: &str) {
        self.bump_version(scope);
        let key = self.counter_key(scope);
        self.tokens.deleted(&key);
    }

    /// A lost attempt on a held scope. With a per-resource `revision` counter (a ZooKeeper
    /// lock directory's cversion) the contender's attempt is a child created and, on seeing
    /// it is not the lowest, deleted again (the lock recipe polled, as the simulated and the
    /// live worker do): the counter moves by 2 per lost attempt, so the next holder's
    /// sequence number counts every attempt since the last grant, as live ZooKeeper's does.
    /// etcd's lost campaign is a failed compare, which writes nothing.
    fn contended(&mut self, scope: &str) {
        if self.config.token_source == TokenSource::Revision
            && self.config.token_scope == TokenScope::PerResource
        {
            let key = self.counter_key(scope);
            // The node's create, then its delete: each moves the parent's cversion once.
            self.tokens.deleted(&key);
            self.tokens.deleted(&key);
        }
    }

    /// A data put committed in the lease service's own store (`same-store-txn`): with etcd's
    /// store-wide revision (`revision` tokens, `global` scope) it moves the counter too, so
    /// the next holder's token skips one per write in between (measured live).
    pub fn data_put(&mut self) {
        if self.config.token_source == TokenSource::Revision
            && self.config.token_scope == TokenScope::Global
        {
            // A put moves a store-wide revision exactly as a delete does.
            self.tokens.deleted("*");
        }
    }

    /// Removes and returns every lease revoked by `now` (its expiry passed and an expiry check
    /// has run since), starting lock-delay for each. Candidates-decide services never expire.
    pub fn expire_due(&mut self, now: u64) -> Vec<Lease> {
        if self.config.expired_by == ExpiredBy::Candidate {
            return Vec::new();
        }
        let due: Vec<Scope> = self
            .leases
            .values()
            .filter(|lease| self.revoked_at_ns(lease.expires_ns) <= now)
            .map(|lease| lease.scope.clone())
            .collect();
        let mut expired = Vec::with_capacity(due.len());
        for scope in due {
            let lease = self.leases.remove(&scope).expect("due lease present");
            self.deleted(&scope);
            if self.config.lock_delay_ns > 0 {
                self.lock_delay_until
                    .insert(scope, now + self.config.lock_delay_ns);
            }
            expired.push(lease);
        }
        expired
    }

    /// Tries to grant `scope` to `holder` in its incarnation `session`. `wall_ms` is the
    /// coordinator's wall clock, used only by `wall-clock` tokens. With `ExpiredBy::Candidate`
    /// the caller's write is a compare-and-swap on the record version it read (`expected`);
    /// otherwise `expected` is ignored.
    pub fn acquire(
        &mut self,
        scope: &str,
        holder: &str,
        session: u64,
        expected: Option<u64>,
        now: u64,
        wall_ms: i64,
    ) -> Acquire {
        debug_assert!(
            self.leases
                .get(scope)
                .is_none_or(|lease| self.revoked_at_ns(lease.expires_ns) > now
                    || self.config.expired_by == ExpiredBy::Candidate),
            "expire_due must run before acquire"
        );
        let candidate = self.config.expired_by == ExpiredBy::Candidate;
        if candidate {
            let version = self.record(scope).version;
            if expected != Some(version) {
                return Acquire::Denied(Denial::Conflict { version });
            }
        }
        let ttl_ns = self.config.ttl_ns;
        let by_name = self.config.identity == HolderIdentity::Name;
        if let Some(lease) = self.leases.get(scope).cloned() {
            let mut same_holder = lease.holder == holder && (lease.session == session || by_name);
            if active(Mutant::LeaseIgnoresSession) {
                // The planted bug: a restarted holder (a new session) gets its old lease back.
                same_holder = lease.holder == holder;
            }
            // An expired lease awaiting its revocation check is nobody's to extend (etcd's
            // Renew refuses an expired lease and waits for the revoke).
            let live = candidate || lease.expires_ns > now;
            if same_holder && live {
                let lease = {
                    let lease = self.leases.get_mut(scope).expect("present");
                    lease.expires_ns = now + ttl_ns;
                    lease.session = session;
                    lease.clone()
                };
                self.bump_version(scope);
                return Acquire::AlreadyHeld(lease);
            }
            if !candidate && self.config.acquire == AcquireRule::Overwrite {
                // An unconditional write: the live lease is overwritten without an expiry,
                // release or takeover being recorded.
                return Acquire::Granted(self.grant(scope, holder, session, now, wall_ms));
            }
            if !candidate {
                self.contended(scope);
                return Acquire::Denied(Denial::Held {
                    holder: lease.holder,
                    token: lease.token,
                });
            }
            // The candidate saw this record unchanged for the lease duration by its own clock
            // (its CAS matched the version it read): it replaces the record.
            let previous = self.leases.remove(scope).expect("present");
            let lease = self.grant(scope, holder, session, now, wall_ms);
            return Acquire::TookOver { previous, lease };
        }
        if active(Mutant::LeaseLockDelayIgnored) {
            // The planted bug ignores the lock-delay.
            self.lock_delay_until.remove(scope);
        }
        if let Some(&until_ns) = self.lock_delay_until.get(scope) {
            if now < until_ns {
                return Acquire::Denied(Denial::LockDelay { until_ns });
            }
            self.lock_delay_until.remove(scope);
        }
        Acquire::Granted(self.grant(scope, holder, session, now, wall_ms))
    }

    fn grant(&mut self, scope: &str, holder: &str, session: u64, now: u64, wall_ms: i64) -> Lease {
        let token = self.issue_token(scope, wall_ms);
        self.bump_version(scope);
        let lease = Lease {
            scope: scope.to_string(),
            holder: holder.to_string(),
            session,
            token,
            granted_ns: now,
            expires_ns: now + self.config.ttl_ns,
        };
        self.leases.insert(scope.to_string(), lease.clone());
        lease
    }

    fn counter_key(&self, scope: &str) -> String {
        match self.config.token_scope {
            TokenScope::PerResource => scope.to_string(),
            TokenScope::Global => "*".to_string(),
        }
    }

    fn issue_token(&mut self, scope: &str, wall_ms: i64) -> Token {
        let counter = self.counter_key(scope);
        self.tokens.issue(&TokenRequest {
            scope,
            counter: &counter,
            wall_ms,
        })
    }

    /// Extends `holder`'s lease on `scope` if it still holds it under `token`.
    pub fn renew(
        &mut self,
        scope: &str,
        holder: &str,
        token: Token,
        now: u64,
    ) -> Result<Lease, RenewRefusal> {
        let candidate = self.config.expired_by == ExpiredBy::Candidate;
        match self.leases.get_mut(scope) {
            // An expired lease awaiting its revocation check cannot be renewed (etcd's Renew
            // returns "lease not found" for it); client-go's record has no server expiry.
            Some(lease) if !candidate && lease.expires_ns <= now => Err(RenewRefusal::NoLease),
            Some(lease) if lease.holder == holder && lease.token == token => {
                let kept_ns = lease.expires_ns;
                lease.expires_ns = now + self.config.ttl_ns;
                if active(Mutant::LeaseRenewDoesNotExtend) {
                    // The planted bug answers OK without moving the expiry.
                    lease.expires_ns = kept_ns;
                }
                let lease = lease.clone();
                self.bump_version(scope);
                Ok(lease)
            }
            Some(lease) => Err(RenewRefusal::Superseded {
                holder: lease.holder.clone(),
                token: lease.token,
            }),
            None => Err(RenewRefusal::NoLease),
        }
    }

    /// Releases the lease if `holder` holds it under `token`; returns the released lease.
    pub fn release(&mut self, scope: &str, holder: &str, token: Token) -> Option<Lease> {
        match self.leases.get(scope) {
            Some(lease) if lease.holder == holder && lease.token == token => {
                let released = self.leases.remove(scope);
                self.deleted(scope);
                released
            }
            _ => None,
        }
    }

    /// Applies a process restart completing at `now`.
    pub fn restart(&mut self, now: u64) -> RestartEffect {
        let mut effect = RestartEffect {
            counters_lost: self.tokens.restart(),
            ..RestartEffect::default()
        };
        self.lock_delay_until.clear();
        match self.config.on_restart {
            OnRestart::Drop => {
                effect.dropped = std::mem::take(&mut self.leases).into_values().collect();
                for lease in &effect.dropped {
                    self.deleted(&lease.scope);
                }
            }
            OnRestart::KeepAndExtend => {
                let until = now + self.config.ttl_ns + self.config.election_timeout_ns;
                for lease in self.leases.values_mut() {
                    lease.expires_ns = lease.expires_ns.max(until);
                    effect.extended.push(lease.clone());
                }
            }
        }
        effect
    }
}

#[cfg(test)]
mod tests;
