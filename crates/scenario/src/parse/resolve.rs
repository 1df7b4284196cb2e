//! Resolution, section by section: the one place raw values become spec values, defaults
//! included (and documented in docs/scenario-format.md).

use fencesim_planted::{active, Mutant};
use std::collections::BTreeMap;

use fencesim_model::{
    lease::{ExpiredBy, HolderIdentity, OnRestart, TokenScope, TokenSource},
    Coverage,
};

use super::{join, raw::*, validate::file_name, Ctx, Result};
use crate::{
    limits::{MAX_LIST_LEN, MAX_RUN_DURATION_MS, MAX_WRITES_PER_LEASE, MIN_WORK_MEAN_MS},
    spec::*,
};

impl Ctx<'_> {
    pub(crate) fn resolve(&self, raw: RawScenario) -> Result<Scenario> {
        let name = self.required("name", raw.name)?;
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
        if !name_ok {
            return Err(self.error(
                "name",
                format!("expected a name made of [a-z0-9-]+, got {name:?}"),
            ));
        }
        if name.len() > crate::limits::MAX_NAME_LEN {
            return Err(self.error(
                "name",
                format!(
                    "expected a name of at most {} bytes (it becomes file names), got {} bytes",
                    crate::limits::MAX_NAME_LEN,
                    name.len()
                ),
            ));
        }
        let description = self.required("description", raw.description)?;
        if description.trim().is_empty() {
            return Err(self.error("description", "expected a non-empty description, got \"\""));
        }
        let duration_ms = self.positive_ms_within(
            "duration_ms",
            self.required("duration_ms", raw.duration_ms)?,
            MAX_RUN_DURATION_MS,
        )?;
        let seeds = self.seeds(&self.required("seeds", raw.seeds)?)?;
        let lease = self.lease(self.required("lease", raw.lease)?)?;
        let workers = self.workers(self.required("workers", raw.workers)?, &lease)?;
        let names = fencesim_model::nodes::processes(workers.count);
        let storage = self.storage(self.required("storage", raw.storage)?, workers.count)?;
        let network = self.network(raw.network.unwrap_or_default())?;
        let clocks = self.clocks(raw.clocks.unwrap_or_default(), &names)?;
        let faults = self.faults(raw.faults.unwrap_or_default(), duration_ms, &names)?;
        let expect = self.expect(self.required("expect", raw.expect)?)?;
        Ok(Scenario {
            name,
            description,
            duration_ms,
            seeds,
            lease,
            storage,
            workers,
            network,
            clocks,
            faults,
            expect,
        })
    }

    pub(crate) fn seeds(&self, text: &str) -> Result<SeedRange> {
        SeedRange::parse(text).map_err(|expected| self.error("seeds", expected))
    }

    pub(crate) fn lease(&self, raw: RawLease) -> Result<LeaseSpec> {
        let preset = raw.preset;
        let ttl_ms = self.ttl_ms(&raw)?;
        let (election_timeout_ms, expiry_check_ms, restart_election_ms) =
            self.service_timers(&raw)?;
        let (min_ttl_ms, max_ttl_ms) =
            self.ttl_bounds(&raw, election_timeout_ms, expiry_check_ms)?;
        let expiry_factor = self.expiry_factor(&raw)?;
        let lock_delay_ms = self.lock_delay_ms(&raw)?;
        let token_source = self.token_source(&raw)?;
        // etcd's revision is store-wide; everything else counts per resource by default.
        let default_scope = match preset {
            Some(Preset::Etcd) => TokenScope::Global,
            _ => TokenScope::PerResource,
        };
        let expired_by = raw.expired_by.unwrap_or(match preset {
            Some(Preset::ClientGo) => ExpiredBy::Candidate,
            _ => ExpiredBy::Service,
        });
        let mut holder_identity = raw.holder_identity.unwrap_or(match preset {
            Some(Preset::ClientGo) => HolderIdentity::Name,
            _ => HolderIdentity::Session,
        });
        if active(Mutant::PresetClientGoIdentityIsSession) && raw.holder_identity.is_none() {
            // The planted bug: client-go's holders are known by session.
            holder_identity = HolderIdentity::Session;
        }
        Ok(LeaseSpec {
            preset,
            ttl_ms,
            min_ttl_ms,
            max_ttl_ms,
            expiry_factor,
            expiry_check_ms,
            lock_delay_ms,
            election_timeout_ms,
            restart_election_ms,
            token_source,
            token_scope: raw.token_scope.unwrap_or(default_scope),
            on_restart: raw.on_restart.unwrap_or(OnRestart::KeepAndExtend),
            expired_by,
            holder_identity,
            acquire: raw.acquire.unwrap_or_default(),
        })
    }

    /// `lease.ttl_ms`, or the preset's default.
    fn ttl_ms(&self, raw: &RawLease) -> Result<u64> {
        let preset = raw.preset;
        // Each preset's defaults and their sources: docs/scenario-format.md, "Lease presets".
        let ttl_ms = match (raw.ttl_ms, preset) {
            (Some(ttl), _) => self.positive_ms("lease.ttl_ms", ttl)?,
            // etcd `concurrency.NewSession`: 60 s; Curator's default session: 60 s (clamped
            // by ZooKeeper to 20 × tickTime); client-go's LeaseDuration: 15 s; Consul's
            // `api.Lock` session: 15 s.
            (None, Some(Preset::Etcd | Preset::Zookeeper)) => 60_000,
            (None, Some(Preset::ClientGo | Preset::Consul)) => 15_000,
            (None, None) => self.required::<u64>("lease.ttl_ms", None)?,
        };
        if preset == Some(Preset::Consul) && !(10_000..=86_400_000).contains(&ttl_ms) {
            return Err(self.error(
                "lease.ttl_ms",
                format!("expected a Consul session TTL from 10_000 ms (10 s) to 86_400_000 ms (24 h), got {ttl_ms}"),
            ));
        }
        Ok(ttl_ms)
    }

    /// The lease service's own timers: `(election_timeout_ms, expiry_check_ms,
    /// restart_election_ms)`, each given or the preset's default.
    fn service_timers(&self, raw: &RawLease) -> Result<(u64, u64, u64)> {
        let preset = raw.preset;
        let election_timeout_ms = self.non_negative_ms(
            "lease.election_timeout_ms",
            raw.election_timeout_ms.unwrap_or(1_000),
        )?;
        let expiry_check_ms = match (raw.expiry_check_ms, preset) {
            (Some(check), _) => self.non_negative_ms("lease.expiry_check_ms", check)?,
            // etcd's lessor looks for expired leases every 500 ms (`revokeExpiredLeases`).
            (None, Some(Preset::Etcd)) => 500,
            // ZooKeeper expires sessions in tickTime buckets; tickTime defaults to 2 s.
            (None, Some(Preset::Zookeeper)) => 2_000,
            (None, _) => 0,
        };
        if preset == Some(Preset::Zookeeper) && expiry_check_ms == 0 {
            return Err(self.error(
                "lease.expiry_check_ms",
                "expected ZooKeeper's tickTime (> 0 ms): with preset = \"zookeeper\" it sets the session timeout's bounds, got 0",
            ));
        }
        let mut restart_election_ms = match (raw.restart_election_ms, preset) {
            (Some(election), _) => self.non_negative_ms("lease.restart_election_ms", election)?,
            // A restarted etcd member serves (and its lessor re-extends leases, `Promote`) only
            // once it is leader: raft's randomized election timeout, [1, 2) x election timeout.
            // Measured live: without it the simulated takeover after an etcd restart
            // came ~1.5 s earlier than a real etcd 3.4's.
            (None, Some(Preset::Etcd)) => election_timeout_ms,
            (None, _) => 0,
        };
        if active(Mutant::PresetEtcdNoRestartElection)
            && (raw.restart_election_ms, preset) == (None, Some(Preset::Etcd))
        {
            // The planted bug: a restarted etcd member serves at once, with no election.
            restart_election_ms = 0;
        }
        Ok((election_timeout_ms, expiry_check_ms, restart_election_ms))
    }

    /// `(min_ttl_ms, max_ttl_ms)`: the bounds the service holds a requested TTL to (a maximum
    /// of 0 is none), each given or the preset's default.
    fn ttl_bounds(
        &self,
        raw: &RawLease,
        election_timeout_ms: u64,
        expiry_check_ms: u64,
    ) -> Result<(u64, u64)> {
        let preset = raw.preset;
        let mut min_ttl_ms = match (raw.min_ttl_ms, preset) {
            (Some(min), _) => self.non_negative_ms("lease.min_ttl_ms", min)?,
            // etcd: minTTL = ceil(1.5 × election timeout) in whole seconds (2 s by default).
            (None, Some(Preset::Etcd)) => (3 * election_timeout_ms / 2).div_ceil(1_000) * 1_000,
            (None, Some(Preset::Zookeeper)) => 2 * expiry_check_ms,
            (None, _) => 0,
        };
        if active(Mutant::PresetEtcdNoMinimumTtl)
            && (raw.min_ttl_ms, preset) == (None, Some(Preset::Etcd))
        {
            // The planted bug: etcd uses a requested TTL below its minimum as asked.
            min_ttl_ms = 0;
        }
        let mut max_ttl_ms = match (raw.max_ttl_ms, preset) {
            (Some(max), _) => self.non_negative_ms("lease.max_ttl_ms", max)?,
            (None, Some(Preset::Zookeeper)) => 20 * expiry_check_ms,
            (None, _) => 0,
        };
        if active(Mutant::PresetZookeeperNoSessionClamp)
            && (raw.max_ttl_ms, preset) == (None, Some(Preset::Zookeeper))
        {
            // The planted bug: ZooKeeper uses a session timeout above its maximum as asked.
            max_ttl_ms = 0;
        }
        // 0 is "no maximum"; a maximum below the minimum would silently be ignored.
        if max_ttl_ms > 0 && min_ttl_ms > max_ttl_ms {
            let (field, expected) = if raw.max_ttl_ms.is_some() {
                (
                    "lease.max_ttl_ms",
                    format!(
                        "expected a maximum TTL of at least min_ttl_ms ({min_ttl_ms} ms), or 0 for none, got {max_ttl_ms}"
                    ),
                )
            } else {
                (
                    "lease.min_ttl_ms",
                    format!(
                        "expected a minimum TTL of at most max_ttl_ms ({max_ttl_ms} ms), got {min_ttl_ms}"
                    ),
                )
            };
            return Err(self.error(field, expected));
        }
        Ok((min_ttl_ms, max_ttl_ms))
    }

    /// `lease.expiry_factor` (the service expires a lease at this multiple of its TTL), or the
    /// preset's default.
    fn expiry_factor(&self, raw: &RawLease) -> Result<u64> {
        let preset = raw.preset;
        let expiry_factor = match (raw.expiry_factor, preset) {
            (Some(factor), _) => match u64::try_from(factor) {
                Ok(factor) if (1..=100).contains(&factor) => factor,
                _ => {
                    return Err(self.error(
                        "lease.expiry_factor",
                        format!("expected a whole multiple of the TTL from 1 to 100, got {factor}"),
                    ))
                }
            },
            // Consul's session timer runs at TTL × SessionTTLMultiplier (2).
            (None, Some(Preset::Consul)) => 2,
            (None, _) => 1,
        };
        Ok(expiry_factor)
    }

    /// `lease.lock_delay_ms`, or the preset's default.
    fn lock_delay_ms(&self, raw: &RawLease) -> Result<u64> {
        let preset = raw.preset;
        let lock_delay_ms = match (raw.lock_delay_ms, preset) {
            (Some(delay), _) => self.non_negative_ms("lease.lock_delay_ms", delay)?,
            (None, Some(Preset::Consul)) => 15_000,
            (None, _) => 0,
        };
        if preset == Some(Preset::Consul) && lock_delay_ms > 60_000 {
            return Err(self.error(
                "lease.lock_delay_ms",
                format!(
                    "expected a Consul lock-delay from 0 to 60_000 ms (60 s), got {lock_delay_ms}"
                ),
            ));
        }
        Ok(lock_delay_ms)
    }

    /// `lease.token_source` (with `lease.token_bits`), or the preset's default.
    fn token_source(&self, raw: &RawLease) -> Result<TokenSource> {
        let preset = raw.preset;
        let default_source = match preset {
            Some(Preset::Etcd | Preset::Zookeeper) => Some(RawTokenSource::Revision),
            Some(Preset::ClientGo | Preset::Consul) => Some(RawTokenSource::DurableCounter),
            None => None,
        };
        let source = self.required("lease.token_source", raw.token_source.or(default_source))?;
        let token_source = match (source, raw.token_bits) {
            (RawTokenSource::WrappingCounter, Some(bits)) => match u8::try_from(bits) {
                Ok(bits) if (1..=63).contains(&bits) => TokenSource::WrappingCounter { bits },
                _ => {
                    return Err(self.error(
                        "lease.token_bits",
                        format!("expected a counter width from 1 to 63 bits, got {bits}"),
                    ))
                }
            },
            (RawTokenSource::WrappingCounter, None) => {
                return Err(self.error_at(
                    "lease.token_bits",
                    "lease.token_source",
                    "expected a counter width (1..=63 bits): required with token_source = \"wrapping-counter\", got none",
                ))
            }
            (_, Some(bits)) => {
                return Err(self.error(
                    "lease.token_bits",
                    format!("expected no token_bits: only allowed with token_source = \"wrapping-counter\", got {bits}"),
                ))
            }
            (RawTokenSource::DurableCounter, None) => TokenSource::DurableCounter,
            (RawTokenSource::VolatileCounter, None) => TokenSource::VolatileCounter,
            (RawTokenSource::WallClock, None) => TokenSource::WallClock,
            (RawTokenSource::RandomId, None) => TokenSource::RandomId,
            (RawTokenSource::Revision, None) => TokenSource::Revision,
        };
        Ok(token_source)
    }

    pub(crate) fn workers(&self, raw: RawWorkers, lease: &LeaseSpec) -> Result<WorkerSpec> {
        let count = self.worker_count(raw.count)?;
        let resources = self.resources(raw.resources)?;
        let lease_scope = match raw.shared_lease {
            Some(name) if name.is_empty() => {
                return Err(self.error(
                    "workers.shared_lease",
                    "expected a non-empty lease name, got \"\"",
                ))
            }
            Some(name) => LeaseScopeSpec::Single(name),
            None => LeaseScopeSpec::PerResource,
        };
        let work_ms = self.work_ms(raw.work_ms)?;
        let writes_per_lease = self.writes_per_lease(raw.writes_per_lease)?;
        let preset = lease.preset;
        let (renew_every_ms, renew_deadline_ms) =
            self.renewal(raw.renew_every_ms, raw.renew_deadline_ms, lease)?;
        let request_timeout_ms =
            self.request_timeout_ms(raw.request_timeout_ms, lease.effective_ttl_ms())?;
        // client-go keeps retrying renewals until RenewDeadline, a ZooKeeper client
        // until readTimeout.
        let mut stop_on_renew_failure = raw.stop_on_renew_failure.unwrap_or(!matches!(
            preset,
            Some(Preset::ClientGo | Preset::Zookeeper)
        ));
        if active(Mutant::PresetZookeeperStopsOnRenewFailure)
            && raw.stop_on_renew_failure.is_none()
            && preset == Some(Preset::Zookeeper)
        {
            // The planted bug: the ZooKeeper client gives its lock up at the first failed ping.
            stop_on_renew_failure = true;
        }
        let (acquire_retry_ms, acquire_retry_jitter) = self.acquire_retry(
            raw.acquire_retry_ms,
            raw.acquire_retry_jitter,
            preset,
            renew_every_ms,
        )?;
        Ok(WorkerSpec {
            count,
            resources,
            lease_scope,
            work_ms,
            writes_per_lease,
            renew_every_ms,
            renew_deadline_ms,
            stop_on_renew_failure,
            check_lease_before_write: raw.check_lease_before_write.unwrap_or(false),
            recheck_deadline_before_write: raw.recheck_deadline_before_write.unwrap_or(false),
            deadline_from: raw.deadline_from.unwrap_or(DeadlineFrom::RequestSent),
            request_timeout_ms,
            acquire_retry_ms,
            acquire_retry_jitter,
            side_effects: raw.side_effects.unwrap_or(SideEffects::None),
        })
    }

    /// `workers.count`: 1 to 64.
    fn worker_count(&self, count: Option<i64>) -> Result<usize> {
        let count = self.required("workers.count", count)?;
        match usize::try_from(count) {
            Ok(count) if (1..=64).contains(&count) => Ok(count),
            _ => Err(self.error(
                "workers.count",
                format!("expected 1 to 64 workers, got {count}"),
            )),
        }
    }

    /// `workers.resources`: at least one, each named and distinct.
    fn resources(&self, resources: Option<Vec<String>>) -> Result<Vec<String>> {
        let resources = self.required("workers.resources", resources)?;
        if resources.is_empty() {
            return Err(self.error(
                "workers.resources",
                "expected at least one resource name, got []",
            ));
        }
        for (index, resource) in resources.iter().enumerate() {
            let field = format!("workers.resources[{index}]");
            if resource.is_empty() {
                return Err(self.error(&field, "expected a non-empty resource name, got \"\""));
            }
            if resources[..index].contains(resource) {
                return Err(self.error(
                    &field,
                    format!("expected distinct resource names, got {resource:?} twice"),
                ));
            }
        }
        Ok(resources)
    }

    /// `workers.work_ms`: a distribution whose mean lets virtual time advance.
    fn work_ms(&self, work_ms: Option<RawDist>) -> Result<Dist> {
        let work_ms = self.dist(
            "workers.work_ms",
            self.required("workers.work_ms", work_ms)?,
        )?;
        // Work that takes no time, over a network that may take none, never lets virtual
        // time advance: the run would grow without bound.
        if work_ms.mean() < MIN_WORK_MEAN_MS {
            return Err(self.error(
                "workers.work_ms",
                format!(
                    "expected a mean of at least {MIN_WORK_MEAN_MS} ms (work that takes no time never lets time advance), got {}",
                    work_ms.mean()
                ),
            ));
        }
        Ok(work_ms)
    }

    /// `workers.writes_per_lease`: 1 by default.
    fn writes_per_lease(&self, writes_per_lease: Option<i64>) -> Result<u32> {
        let writes_per_lease = writes_per_lease.unwrap_or(1);
        u64::try_from(writes_per_lease)
            .ok()
            .filter(|writes| (1..=MAX_WRITES_PER_LEASE).contains(writes))
            .and_then(|writes| u32::try_from(writes).ok())
            .ok_or_else(|| {
                self.error(
                    "workers.writes_per_lease",
                    format!("expected 1 to {MAX_WRITES_PER_LEASE} writes per lease, got {writes_per_lease}"),
                )
            })
    }

    /// `(renew_every_ms, renew_deadline_ms)` from the values given (`every`, `deadline`) or the
    /// preset's defaults, checked against the effective TTL and, for client-go, as client-go
    /// checks them.
    fn renewal(
        &self,
        every: Option<i64>,
        deadline: Option<i64>,
        lease: &LeaseSpec,
    ) -> Result<(u64, u64)> {
        let ttl_ms = lease.effective_ttl_ms();
        let preset = lease.preset;
        let mut renew_every_ms = match every {
            Some(renew) => {
                let renew = self.positive_ms("workers.renew_every_ms", renew)?;
                if renew >= ttl_ms {
                    return Err(self.error(
                        "workers.renew_every_ms",
                        format!("expected an interval shorter than the effective TTL ({ttl_ms} ms), got {renew}"),
                    ));
                }
                renew
            }
            None if ttl_ms / 3 == 0 => {
                return Err(self.error_at(
                    "workers.renew_every_ms",
                    "lease.ttl_ms",
                    format!("expected a positive default interval, but effective TTL {ttl_ms} ms / 3 is 0: set it"),
                ))
            }
            // client-go renews every RetryPeriod (2 s); Consul's `RenewPeriodic` every TTL/2;
            // etcd's keepalive and ZooKeeper's ping (readTimeout/2) every TTL/3.
            None if preset == Some(Preset::ClientGo) => 2_000.min(ttl_ms - 1),
            None if preset == Some(Preset::Consul) => ttl_ms / 2,
            None => ttl_ms / 3,
        };
        if active(Mutant::PresetConsulRenewsEveryThirdOfTtl)
            && every.is_none()
            && preset == Some(Preset::Consul)
        {
            // The planted bug: Consul's session is renewed every TTL/3, like etcd's keepalive.
            renew_every_ms = ttl_ms / 3;
        }
        let mut renew_deadline_ms = match deadline {
            Some(deadline) => self.positive_ms("workers.renew_deadline_ms", deadline)?,
            // client-go's RenewDeadline: 10 s.
            None if preset == Some(Preset::ClientGo) => 10_000,
            // The ZooKeeper client suspects the connection (Curator: SUSPENDED, the lock is
            // no longer trusted) when nothing was heard for 2/3 of the session timeout.
            None if preset == Some(Preset::Zookeeper) => ttl_ms * 2 / 3,
            None => ttl_ms,
        };
        if active(Mutant::PresetZookeeperSuspectsAtSessionTimeout)
            && deadline.is_none()
            && preset == Some(Preset::Zookeeper)
        {
            // The planted bug: the client trusts its lock for the whole session timeout.
            renew_deadline_ms = ttl_ms;
        }
        if preset == Some(Preset::ClientGo) {
            // client-go's `NewLeaderElector` validation.
            if ttl_ms <= renew_deadline_ms {
                return Err(self.error_at(
                    "workers.renew_deadline_ms",
                    if deadline.is_some() { "workers.renew_deadline_ms" } else { "lease.ttl_ms" },
                    format!("expected client-go's LeaseDuration (lease.ttl_ms = {ttl_ms}) > RenewDeadline, got RenewDeadline {renew_deadline_ms}"),
                ));
            }
            if renew_deadline_ms as f64 <= 1.2 * renew_every_ms as f64 {
                return Err(self.error(
                    "workers.renew_deadline_ms",
                    format!("expected client-go's RenewDeadline > 1.2 × RetryPeriod (workers.renew_every_ms = {renew_every_ms}), got {renew_deadline_ms}"),
                ));
            }
        }
        Ok((renew_every_ms, renew_deadline_ms))
    }

    /// `workers.request_timeout_ms`: half the effective TTL, at most 1 s, by default.
    fn request_timeout_ms(&self, request_timeout_ms: Option<i64>, ttl_ms: u64) -> Result<u64> {
        let timeout_ms = match request_timeout_ms {
            Some(timeout) => self.positive_ms("workers.request_timeout_ms", timeout)?,
            None if ttl_ms / 2 == 0 => {
                return Err(self.error_at(
                    "workers.request_timeout_ms",
                    "lease.ttl_ms",
                    format!("expected a positive default timeout, but effective TTL {ttl_ms} ms / 2 is 0: set it"),
                ))
            }
            None => (ttl_ms / 2).min(1_000),
        };
        Ok(timeout_ms)
    }

    /// `(acquire_retry_ms, acquire_retry_jitter)`: a candidate's retry interval and its
    /// jitter, each given or the preset's default.
    fn acquire_retry(
        &self,
        acquire_retry_ms: Option<i64>,
        acquire_retry_jitter: Option<f64>,
        preset: Option<Preset>,
        renew_every_ms: u64,
    ) -> Result<(u64, f64)> {
        // client-go's candidates retry every RetryPeriod, jittered by JitterFactor 1.2.
        let client_go = preset == Some(Preset::ClientGo);
        let retry_ms = self.positive_ms(
            "workers.acquire_retry_ms",
            acquire_retry_ms.unwrap_or(if client_go {
                renew_every_ms as i64
            } else {
                100
            }),
        )?;
        let jitter = self.non_negative_f64(
            "workers.acquire_retry_jitter",
            acquire_retry_jitter.unwrap_or(if client_go { 1.2 } else { 0.0 }),
            "multiples of acquire_retry_ms",
        )?;
        Ok((retry_ms, jitter))
    }

    pub(crate) fn storage(&self, raw: RawStorage, workers: usize) -> Result<StorageSpec> {
        let fencing = self.required("storage.fencing", raw.fencing)?;
        let proxy_bypass = raw.proxy_bypass.unwrap_or_default();
        if !proxy_bypass.is_empty() && fencing != FencingMode::Proxy {
            return Err(self.error(
                "storage.proxy_bypass",
                format!(
                    "expected no bypassing workers: only allowed with fencing = \"proxy\", got fencing = {:?}",
                    file_name(&fencing)
                ),
            ));
        }
        for (index, name) in proxy_bypass.iter().enumerate() {
            self.worker(&format!("storage.proxy_bypass[{index}]"), name, workers)?;
        }
        Ok(StorageSpec {
            fencing,
            max_token: raw.max_token.unwrap_or(Durability::Durable),
            compare_scope: raw.compare_scope.unwrap_or(CompareScope::PerResource),
            proxy_bypass,
        })
    }

    pub(crate) fn network(&self, raw: RawNetwork) -> Result<NetworkSpec> {
        let base = match raw.latency_ms {
            Some(dist) => self.dist("network.latency_ms", dist)?,
            None => Dist::Lognormal {
                median: 0.5,
                p99: 5.0,
            },
        };
        let spike_probability = self.probability(
            "network.spike_probability",
            raw.spike_probability.unwrap_or(0.0),
            true,
        )?;
        let spikes_ms = raw.spikes_ms.unwrap_or_else(|| vec![200.0, 400.0, 800.0]);
        self.list_len("network.spikes_ms", spikes_ms.len())?;
        for (index, &spike) in spikes_ms.iter().enumerate() {
            self.positive_f64(
                &format!("network.spikes_ms[{index}]"),
                spike,
                "milliseconds",
            )?;
        }
        if spike_probability > 0.0 && spikes_ms.is_empty() {
            return Err(self.error(
                "network.spikes_ms",
                "expected at least one spike size when spike_probability > 0, got []",
            ));
        }
        Ok(NetworkSpec {
            latency: LatencySpec {
                base,
                spike_probability,
                spikes_ms,
            },
            loss: self.probability("network.loss", raw.loss.unwrap_or(0.0), false)?,
            duplicate: self.probability("network.duplicate", raw.duplicate.unwrap_or(0.0), true)?,
        })
    }

    pub(crate) fn clocks(&self, raw: RawClocks, names: &[String]) -> Result<ClocksSpec> {
        let random_drift_ppm = self.non_negative_f64(
            "clocks.random_drift_ppm",
            raw.random_drift_ppm.unwrap_or(0.0),
            "ppm",
        )?;
        self.drift("clocks.random_drift_ppm", random_drift_ppm)?;
        let random_offset_ms = self.non_negative_f64(
            "clocks.random_offset_ms",
            raw.random_offset_ms.unwrap_or(0.0),
            "milliseconds",
        )?;
        let mut nodes = BTreeMap::new();
        for (name, clock) in raw.nodes.unwrap_or_default() {
            let path = format!("clocks.nodes.{name}");
            self.node(&path, &name, names)?;
            let offset_ms =
                self.bounded_ms_f64(&join(&path, "offset_ms"), clock.offset_ms.unwrap_or(0.0))?;
            let drift_ppm =
                self.drift(&join(&path, "drift_ppm"), clock.drift_ppm.unwrap_or(0.0))?;
            nodes.insert(
                name,
                ClockSpec {
                    offset_ms,
                    drift_ppm,
                },
            );
        }
        Ok(ClocksSpec {
            random_drift_ppm,
            random_offset_ms,
            nodes,
        })
    }

    pub(crate) fn faults(
        &self,
        raw: RawFaults,
        duration_ms: u64,
        names: &[String],
    ) -> Result<FaultSpec> {
        let schedule = raw.schedule.unwrap_or_default();
        self.list_len("faults.schedule", schedule.len())?;
        let schedule = schedule
            .into_iter()
            .enumerate()
            .map(|(index, fault)| {
                self.scheduled(
                    &format!("faults.schedule[{index}]"),
                    fault,
                    duration_ms,
                    names,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        self.check_overlaps(&schedule)?;
        let random = raw.random.unwrap_or_default();
        self.list_len("faults.random", random.len())?;
        let random = random
            .into_iter()
            .enumerate()
            .map(|(index, fault)| self.random(&format!("faults.random[{index}]"), fault, names))
            .collect::<Result<Vec<_>>>()?;
        let outage = match raw.outage {
            None => None,
            Some(outage) => {
                let form = self.required("faults.outage.form", outage.form)?;
                let field = "faults.outage.duration_ms";
                let length = self.required(field, outage.duration_ms)?;
                let length = self.positive_f64(field, length, "milliseconds")?;
                if length >= duration_ms as f64 {
                    return Err(self.error(
                        field,
                        format!("expected an outage shorter than duration_ms ({duration_ms} ms), so it fits inside the safety phase, got {length}"),
                    ));
                }
                Some(crate::outage::InjectedOutage {
                    form,
                    duration_ms: length,
                })
            }
        };
        Ok(FaultSpec {
            schedule,
            random,
            swarm: raw.swarm.unwrap_or(false),
            outage,
        })
    }

    /// At most `MAX_LIST_LEN` entries.
    fn list_len(&self, field: &str, len: usize) -> Result<()> {
        if len <= MAX_LIST_LEN {
            Ok(())
        } else {
            Err(self.error(
                field,
                format!("expected at most {MAX_LIST_LEN} entries, got {len}"),
            ))
        }
    }

    pub(crate) fn expect(&self, raw: RawExpect) -> Result<Expect> {
        let outcome = match (raw.safe, raw.violates) {
            (Some(true), Some(_)) => {
                return Err(self.error(
                    "expect.violates",
                    "expected either `safe = true` or `violates = [...]`, got both",
                ))
            }
            (Some(true), None) => Outcome::Safe,
            (Some(false), None) => {
                return Err(self.error(
                    "expect.safe",
                    "expected `safe = true` (or `violates = [...]` instead), got false",
                ))
            }
            (_, Some(violates)) => {
                if violates.is_empty() {
                    return Err(self.error(
                        "expect.violates",
                        "expected at least one invariant (I1..I5), got [] (use `safe = true`)",
                    ));
                }
                for (index, invariant) in violates.iter().enumerate() {
                    if violates[..index].contains(invariant) {
                        return Err(self.error(
                            &format!("expect.violates[{index}]"),
                            format!("expected distinct invariants, got {invariant} twice"),
                        ));
                    }
                }
                Outcome::Violates(violates)
            }
            (None, None) => {
                return Err(self.error(
                    "expect",
                    "expected `safe = true` or `violates = [...]`, got neither",
                ))
            }
        };
        let coverage = self.conditions("coverage", raw.coverage.unwrap_or_default())?;
        let never = self.conditions("never", raw.never.unwrap_or_default())?;
        for (index, condition) in never.iter().enumerate() {
            if coverage.contains(condition) {
                return Err(self.error(
                    &format!("expect.never[{index}]"),
                    format!(
                        "expected a condition not also required by expect.coverage, got `{}`",
                        condition.name()
                    ),
                ));
            }
        }
        // No vacuous passes: a safe expectation must say what danger it survived.
        if outcome == Outcome::Safe && coverage.is_empty() {
            return Err(self.error(
                "expect.coverage",
                "expected at least one coverage condition with `safe = true` (what danger must \
                 happen for \"safe\" to mean something, e.g. [\"stale-write-rejected\"])",
            ));
        }
        Ok(Expect {
            outcome,
            coverage,
            never,
        })
    }

    /// `expect.<key>`: distinct coverage condition names, resolved.
    fn conditions(&self, key: &str, names: Vec<String>) -> Result<Vec<Coverage>> {
        let mut coverage: Vec<Coverage> = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let field = format!("expect.{key}[{index}]");
            let Some(condition) = Coverage::parse(name) else {
                let known: Vec<&str> = Coverage::ALL.iter().map(|c| c.name()).collect();
                return Err(self.error(
                    &field,
                    format!("expected one of {}, got `{name}`", known.join(", ")),
                ));
            };
            if coverage.contains(&condition) {
                return Err(self.error(
                    &field,
                    format!("expected distinct conditions, got `{name}` twice"),
                ));
            }
            coverage.push(condition);
        }
        Ok(coverage)
    }
}
