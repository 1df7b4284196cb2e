//! The lease service's state machine (etcd/ZooKeeper/Chubby-like), one per coordinator.
//!
//! Expiry is decided by the service's own monotonic clock, passed in as `now` (nanoseconds
//! of the coordinator's `mono`). At most one unexpired lease exists per scope. The state
//! outlives a coordinator process restart (the simulator keeps it as the "disk"); `restart`
//! applies what a restart loses.

use std::collections::BTreeMap;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::{rng::Rng, NodeName, Scope, Token};

/// Where fencing tokens come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum TokenSource {
    /// A counter that survives restart (etcd revision-like).
    DurableCounter,
    /// A counter lost on restart: the next grant reuses small tokens (a known hazard).
    VolatileCounter,
    /// The coordinator's wall clock in milliseconds: steps backwards with the clock.
    WallClock,
    /// A random 32-bit id: unique-ish, but with no order, so not a fencing token.
    RandomId,
    /// A durable counter `bits` wide that wraps to zero (token exhaustion).
    /// A durable counter `bits` wide that wraps to zero (token exhaustion).
    WrappingCounter {
        /// Counter width in bits (1..=63).
        bits: u8,
    },
}

/// Whether one counter serves every scope or each scope has its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenScope {
    /// A counter per scope.
    PerResource,
    /// One counter for every scope.
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

/// Resolved lease-service configuration (all durations in nanoseconds of the service's mono).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseConfig {
    /// Effective TTL: the requested TTL raised to the minimum TTL.
    pub ttl_ns: u64,
    /// After a lease expires involuntarily, nobody may acquire the scope for this long
    /// (Consul's lock-delay). Zero disables it.
    pub lock_delay_ns: u64,
    /// Added to the TTL of kept leases after a restart.
    pub election_timeout_ns: u64,
    /// Where fencing tokens come from.
    pub token_source: TokenSource,
    /// Whether one counter serves every scope or each scope has its own.
    pub token_scope: TokenScope,
    /// What a coordinator restart does to held leases.
    pub on_restart: OnRestart,
}

/// One granted lease.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The scope the lease is on.
    pub scope: Scope,
    /// The holder (worker) the service granted it to.
    pub holder: NodeName,
    /// The token issued with the grant.
    pub token: Token,
    /// When it was granted, by the service's monotonic clock (ns).
    pub granted_ns: u64,
    /// When it expires, by the service's monotonic clock (ns).
    pub expires_ns: u64,
}

/// Why an acquire did not produce a new grant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Denial {
    /// Someone else holds an unexpired lease.
    /// Someone else holds an unexpired lease.
    Held {
        /// The current holder.
        holder: NodeName,
        /// Its token.
        token: Token,
    },
    /// The scope is in its lock-delay period.
    /// The scope is in its lock-delay period.
    LockDelay {
        /// When lock-delay ends, by the service's monotonic clock (ns).
        until_ns: u64,
    },
}

/// Result of an acquire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// A new lease with a freshly issued token.
    Granted(Lease),
    /// The caller already holds this scope (a retried acquire): its lease is extended and
    /// its token returned unchanged.
    AlreadyHeld(Lease),
    /// Not granted.
    Denied(Denial),
}

/// Why a renewal failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RenewRefusal {
    /// No lease on the scope (it expired or was dropped).
    NoLease,
    /// The scope is held under another token (a newer grant).
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
    /// Leases the restart forgot.
    pub dropped: Vec<Lease>,
    /// Leases the restart kept and re-extended.
    pub extended: Vec<Lease>,
    /// Whether the token counters were lost.
    pub counters_lost: bool,
}

/// The lease service state.
#[derive(Clone, Debug)]
pub struct LeaseService {
    config: LeaseConfig,
    leases: BTreeMap<Scope, Lease>,
    counters: BTreeMap<Scope, u64>,
    lock_delay_until: BTreeMap<Scope, u64>,
    rng: Rng,
}

/// Answers "which token currently holds this scope?" for stores that check writes against
/// the lease state itself (`same-store-txn`).
pub trait LeaseView {
    /// The token of the lease currently held on `scope`, if any.
    fn holder_token(&self, scope: &str) -> Option<Token>;
}

impl LeaseView for LeaseService {
    fn holder_token(&self, scope: &str) -> Option<Token> {
        self.leases.get(scope).map(|lease| lease.token)
    }
}

impl LeaseService {
    /// `rng` is the service's own stream (used only by `random-id` tokens).
    pub fn new(config: LeaseConfig, rng: Rng) -> Self {
        LeaseService {
            config,
            leases: BTreeMap::new(),
            counters: BTreeMap::new(),
            lock_delay_until: BTreeMap::new(),
            rng,
        }
    }

    /// The configuration the service runs with.
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

    /// The earliest expiry among current leases.
    pub fn next_expiry_ns(&self) -> Option<u64> {
        self.leases.values().map(|lease| lease.expires_ns).min()
    }

    /// Removes and returns every lease whose expiry is `<= now`, starting lock-delay for each.
    pub fn expire_due(&mut self, now: u64) -> Vec<Lease> {
        let due: Vec<Scope> = self
            .leases
            .values()
            .filter(|lease| lease.expires_ns <= now)
            .map(|lease| lease.scope.clone())
            .collect();
        let mut expired = Vec::with_capacity(due.len());
        for scope in due {
            let lease = self.leases.remove(&scope).expect("due lease present");
            if self.config.lock_delay_ns > 0 {
                self.lock_delay_until
                    .insert(scope, now + self.config.lock_delay_ns);
            }
            expired.push(lease);
        }
        expired
    }

    /// Tries to grant `scope` to `holder`. `wall_ms` is the coordinator's wall clock, used only
    /// by `wall-clock` tokens.
    pub fn acquire(&mut self, scope: &str, holder: &str, now: u64, wall_ms: i64) -> Acquire {
        debug_assert!(
            self.leases
                .get(scope)
                .is_none_or(|lease| lease.expires_ns > now),
            "expire_due must run before acquire"
        );
        if let Some(lease) = self.leases.get_mut(scope) {
            if lease.holder == holder {
                lease.expires_ns = now + self.config.ttl_ns;
                return Acquire::AlreadyHeld(lease.clone());
            }
            return Acquire::Denied(Denial::Held {
                holder: lease.holder.clone(),
                token: lease.token,
            });
        }
        if let Some(&until_ns) = self.lock_delay_until.get(scope) {
            if now < until_ns {
                return Acquire::Denied(Denial::LockDelay { until_ns });
            }
            self.lock_delay_until.remove(scope);
        }
        let token = self.issue_token(scope, wall_ms);
        let lease = Lease {
            scope: scope.to_string(),
            holder: holder.to_string(),
            token,
            granted_ns: now,
            expires_ns: now + self.config.ttl_ns,
        };
        self.leases.insert(scope.to_string(), lease.clone());
        Acquire::Granted(lease)
    }

    fn issue_token(&mut self, scope: &str, wall_ms: i64) -> Token {
        let key = match self.config.token_scope {
            TokenScope::PerResource => scope.to_string(),
            TokenScope::Global => "*".to_string(),
        };
        match self.config.token_source {
            TokenSource::DurableCounter | TokenSource::VolatileCounter => {
                let counter = self.counters.entry(key).or_insert(0);
                *counter += 1;
                *counter
            }
            TokenSource::WrappingCounter { bits } => {
                let counter = self.counters.entry(key).or_insert(0);
                let modulus = 1u128 << bits;
                *counter = ((u128::from(*counter) + 1) % modulus) as u64;
                *counter
            }
            TokenSource::WallClock => wall_ms.max(0) as u64,
            TokenSource::RandomId => u64::from(self.rng.gen::<u32>()),
        }
    }

    /// Extends `holder`'s lease on `scope` if it still holds it under `token`.
    pub fn renew(
        &mut self,
        scope: &str,
        holder: &str,
        token: Token,
        now: u64,
    ) -> Result<Lease, RenewRefusal> {
        match self.leases.get_mut(scope) {
            Some(lease) if lease.holder == holder && lease.token == token => {
                lease.expires_ns = now + self.config.ttl_ns;
                Ok(lease.clone())
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
                self.leases.remove(scope)
            }
            _ => None,
        }
    }

    /// Applies a process restart completing at `now`.
    pub fn restart(&mut self, now: u64) -> RestartEffect {
        let mut effect = RestartEffect::default();
        if self.config.token_source == TokenSource::VolatileCounter {
            effect.counters_lost = !self.counters.is_empty();
            self.counters.clear();
        }
        self.lock_delay_until.clear();
        match self.config.on_restart {
            OnRestart::Drop => {
                effect.dropped = std::mem::take(&mut self.leases).into_values().collect()
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
mod tests {
    use super::*;
    use crate::rng::stream;

    const MS: u64 = 1_000_000;

    fn service(source: TokenSource, scope: TokenScope, on_restart: OnRestart) -> LeaseService {
        LeaseService::new(
            LeaseConfig {
                ttl_ns: 100 * MS,
                lock_delay_ns: 0,
                election_timeout_ns: 10 * MS,
                token_source: source,
                token_scope: scope,
                on_restart,
            },
            stream(1, "coordinator"),
        )
    }

    fn granted(outcome: Acquire) -> Lease {
        match outcome {
            Acquire::Granted(lease) => lease,
            other => panic!("expected a grant, got {other:?}"),
        }
    }

    #[test]
    fn single_holder_until_expiry_then_larger_token() {
        let mut s = service(
            TokenSource::DurableCounter,
            TokenScope::PerResource,
            OnRestart::Drop,
        );
        let a = granted(s.acquire("job", "a", 0, 0));
        assert_eq!(a.token, 1);
        assert!(matches!(
            s.acquire("job", "b", 50 * MS, 0),
            Acquire::Denied(Denial::Held { .. })
        ));
        assert!(s.expire_due(99 * MS).is_empty());
        assert_eq!(s.expire_due(100 * MS).len(), 1);
        let b = granted(s.acquire("job", "b", 100 * MS, 0));
        assert_eq!(b.token, 2);
        assert_eq!(
            s.renew("job", "a", 1, 101 * MS),
            Err(RenewRefusal::Superseded {
                holder: "b".into(),
                token: 2
            })
        );
    }

    #[test]
    fn retried_acquire_by_holder_keeps_token() {
        let mut s = service(
            TokenSource::DurableCounter,
            TokenScope::PerResource,
            OnRestart::Drop,
        );
        granted(s.acquire("job", "a", 0, 0));
        match s.acquire("job", "a", 10 * MS, 0) {
            Acquire::AlreadyHeld(lease) => {
                assert_eq!((lease.token, lease.expires_ns), (1, 110 * MS))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn volatile_counter_restarts_from_one() {
        let mut s = service(
            TokenSource::VolatileCounter,
            TokenScope::PerResource,
            OnRestart::Drop,
        );
        granted(s.acquire("job", "a", 0, 0));
        let effect = s.restart(5 * MS);
        assert!(effect.counters_lost);
        assert_eq!(effect.dropped.len(), 1);
        assert_eq!(granted(s.acquire("job", "b", 6 * MS, 0)).token, 1);
    }

    #[test]
    fn durable_counter_survives_restart_and_keep_extends() {
        let mut s = service(
            TokenSource::DurableCounter,
            TokenScope::PerResource,
            OnRestart::KeepAndExtend,
        );
        granted(s.acquire("job", "a", 0, 0));
        let effect = s.restart(50 * MS);
        assert_eq!(effect.extended[0].expires_ns, 160 * MS);
        assert!(s.expire_due(159 * MS).is_empty());
        s.expire_due(160 * MS);
        assert_eq!(granted(s.acquire("job", "b", 160 * MS, 0)).token, 2);
    }

    #[test]
    fn global_scope_shares_one_counter() {
        let mut s = service(
            TokenSource::DurableCounter,
            TokenScope::Global,
            OnRestart::Drop,
        );
        assert_eq!(granted(s.acquire("x", "a", 0, 0)).token, 1);
        assert_eq!(granted(s.acquire("y", "b", 0, 0)).token, 2);
    }

    #[test]
    fn wrapping_counter_wraps_to_zero() {
        let mut s = service(
            TokenSource::WrappingCounter { bits: 2 },
            TokenScope::PerResource,
            OnRestart::Drop,
        );
        let mut tokens = Vec::new();
        for i in 0..5 {
            let lease = granted(s.acquire("job", "a", i * 200 * MS, 0));
            tokens.push(lease.token);
            s.release("job", "a", lease.token);
        }
        assert_eq!(tokens, vec![1, 2, 3, 0, 1]);
    }

    #[test]
    fn wall_clock_tokens_follow_the_clock() {
        let mut s = service(
            TokenSource::WallClock,
            TokenScope::PerResource,
            OnRestart::Drop,
        );
        let first = granted(s.acquire("job", "a", 0, 5_000));
        s.release("job", "a", first.token);
        assert_eq!(granted(s.acquire("job", "a", 1, 4_000)).token, 4_000);
    }

    #[test]
    fn lock_delay_blocks_reacquire_after_expiry() {
        let mut s = service(
            TokenSource::DurableCounter,
            TokenScope::PerResource,
            OnRestart::Drop,
        );
        s.config.lock_delay_ns = 15 * MS;
        granted(s.acquire("job", "a", 0, 0));
        s.expire_due(100 * MS);
        assert_eq!(
            s.acquire("job", "b", 110 * MS, 0),
            Acquire::Denied(Denial::LockDelay { until_ns: 115 * MS })
        );
        granted(s.acquire("job", "b", 115 * MS, 0));
    }
}
