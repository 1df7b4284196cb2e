//! The validated scenario: every value resolved, every default made explicit.
//!
//! This is what the simulator consumes and what reports print (with its hash). The TOML
//! boundary that produces it lives in `parse`.

use std::collections::BTreeMap;

pub use fencesim_model::fence::{CompareScope, Durability};
use fencesim_model::{
    fnv::Fnv1a,
    lease::{AcquireRule, ExpiredBy, HolderIdentity, OnRestart, TokenScope, TokenSource},
    Coverage, Invariant,
};
use serde::{Deserialize, Serialize};

pub use crate::dist::{empirical_quantile, Dist};
use crate::fault::{RandomFault, TimedFault};

/// Seeds `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedRange {
    /// First seed (inclusive).
    pub start: u64,
    /// Last seed (exclusive).
    pub end: u64,
}

impl SeedRange {
    /// Parses `A..B` (digits only, no signs or spaces) with `A < B`; the error says what was
    /// expected. The one parser for seed ranges, in files and on the command line.
    pub fn parse(text: &str) -> Result<SeedRange, String> {
        // Digits only: `u64::from_str` would also take "+5", which is not a seed range.
        let number = |part: &str| {
            let digits = !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
            digits.then(|| part.parse::<u64>().ok()).flatten()
        };
        let bounds = text
            .split_once("..")
            .map(|(start, end)| (number(start), number(end)));
        let max = crate::limits::MAX_SEEDS;
        match bounds {
            Some((Some(start), Some(end))) if start < end && end - start > max => Err(format!(
                "expected at most {max} seeds in a range, got {text:?} ({} seeds)",
                end - start
            )),
            Some((Some(start), Some(end))) if start < end => Ok(SeedRange { start, end }),
            Some((Some(_), Some(_))) => Err(format!(
                "expected a non-empty half-open range \"A..B\" with A < B, got {text:?}"
            )),
            _ => Err(format!(
                "expected a half-open range of seeds like \"0..200\", got {text:?}"
            )),
        }
    }

    /// Number of seeds.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Whether the range holds no seed.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    /// The seeds, ascending.
    pub fn iter(&self) -> std::ops::Range<u64> {
        self.start..self.end
    }
}

impl std::fmt::Display for SeedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A lease service people run, modelled with its real semantics (docs/scenario-format.md,
/// "Lease presets"): it supplies defaults for `[lease]` and `[workers]`; explicit fields win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// etcd v3 leases with a `concurrency` session and mutex.
    Etcd,
    /// Kubernetes client-go leader election on a `Lease` object.
    ClientGo,
    /// ZooKeeper sessions with a Curator-style lock (ephemeral sequential nodes).
    Zookeeper,
    /// Consul sessions with a KV lock.
    Consul,
}

/// A preset's name as written in scenario files.
fn preset_name(preset: Preset) -> &'static str {
    match preset {
        Preset::Etcd => "etcd",
        Preset::ClientGo => "client-go",
        Preset::Zookeeper => "zookeeper",
        Preset::Consul => "consul",
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// The lease service, every value resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseSpec {
    /// The preset the defaults came from, if any.
    pub preset: Option<Preset>,
    /// Requested TTL.
    pub ttl_ms: u64,
    /// Minimum TTL the service enforces (etcd: 2 s); a shorter request is raised silently.
    pub min_ttl_ms: u64,
    /// Maximum TTL the service enforces (ZooKeeper: 20 × tickTime); 0 = none. A longer
    /// request is lowered silently.
    pub max_ttl_ms: u64,
    /// The service's expiry timer runs at this multiple of the TTL (Consul: 2).
    pub expiry_factor: u64,
    /// The service checks for expired leases every this often (etcd: 500 ms; ZooKeeper:
    /// tickTime); 0 = exactly at expiry.
    pub expiry_check_ms: u64,
    /// After an involuntary expiry, nobody may acquire the scope for this long (Consul).
    pub lock_delay_ms: u64,
    /// Added to kept leases' TTL after a restart (etcd leader change), and the default
    /// coordinator downtime.
    pub election_timeout_ms: u64,
    /// After a restart the service serves nothing, and re-extends nothing, until it has won an
    /// election lasting a duration drawn uniformly from `[restart_election_ms, 2 ×
    /// restart_election_ms)` (raft's randomized election timeout; etcd: the election timeout).
    /// 0 = it serves at once. Left out of the resolved form (and so of the hash) while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restart_election_ms: u64,
    /// Where tokens come from.
    pub token_source: TokenSource,
    /// Which counter a token comes from.
    pub token_scope: TokenScope,
    /// What a coordinator restart does to leases.
    pub on_restart: OnRestart,
    /// Who decides expiry: the service, or candidates by their own clocks (client-go).
    pub expired_by: ExpiredBy,
    /// What a restarted holder is to the service: a new session, or the same name.
    pub holder_identity: HolderIdentity,
    /// How an acquire treats a held scope: `create-if-absent` (every real service's lock), or
    /// `overwrite`, a lock taken with an unconditional write (Redis `SET` without `NX`), whose
    /// contested acquire replaces the live lease (I2 catches it). Left out of the resolved form
    /// (and so of the scenario hash) while the default.
    #[serde(default, skip_serializing_if = "AcquireRule::is_default")]
    pub acquire: AcquireRule,
}

impl LeaseSpec {
    /// The TTL the service grants: the request clamped to `[min_ttl_ms, max_ttl_ms]`.
    pub fn effective_ttl_ms(&self) -> u64 {
        let raised = self.ttl_ms.max(self.min_ttl_ms);
        if self.max_ttl_ms > 0 {
            raised.min(self.max_ttl_ms.max(self.min_ttl_ms))
        } else {
            raised
        }
    }

    /// How long after a grant or renewal the service's timer fires: the effective TTL times
    /// the expiry factor (before any expiry-check rounding).
    pub fn server_ttl_ms(&self) -> u64 {
        self.effective_ttl_ms() * self.expiry_factor
    }
}

/// The storage's fencing mode (docs/spec.md, "Storage").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FencingMode {
    /// No fencing: every write is accepted (the unsafe baseline).
    None,
    /// Atomic compare against the highest accepted token (same token may write again).
    MaxToken,
    /// `... AND fence_token <= ?`, rows affected checked (same token may write again).
    Sql,
    /// The seeds' own `... AND fence_token < ?`: one write per epoch.
    SqlStrict,
    /// `sql` but rows affected ignored: a zero-row update is reported as committed.
    SqlIgnoreRows,
    /// Read the stored token, compare locally, write unconditionally (the TOCTOU race).
    ReadThenWrite,
    /// A new holder first raises the resource's epoch, then writes (HDFS QJM newEpoch).
    FenceOnAcquire,
    /// The write is checked atomically against the lease state itself (etcd txn).
    SameStoreTxn,
    /// A fencing mediator (max-token) in front of a store that checks nothing.
    Proxy,
}

/// The protected storage, resolved (`[storage]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StorageSpec {
    /// How the storage checks tokens.
    pub fencing: FencingMode,
    /// Whether the store's (or the proxy's) highest-token state survives a restart.
    pub max_token: Durability,
    /// Which writes a token is compared against.
    pub compare_scope: CompareScope,
    /// Workers whose writes bypass the proxy and reach the unchecked store directly
    /// (a misconfigured path). Only with `fencing = "proxy"`.
    pub proxy_bypass: Vec<String>,
}

/// Where a worker's local deadline is measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeadlineFrom {
    /// Local deadline = when the acquire/renew request was sent + TTL (safe side).
    RequestSent,
    /// Local deadline = when the reply arrived + TTL (ignores the request's own delay).
    ReplyReceived,
}

/// External side effects of each unit of work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SideEffects {
    /// No fencing: every write is accepted (the unsafe baseline).
    None,
    /// The worker calls an external sink that checks nothing, after each write is sent.
    Direct,
    /// The effect is recorded in the fenced store with the write and relayed after commit.
    Outbox,
}

/// Which lease scope protects a write to a resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "name")]
pub enum LeaseScopeSpec {
    /// One lease per resource, named after it.
    PerResource,
    /// One lease for everything, with this name.
    Single(String),
}

/// The workers, resolved (`[workers]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerSpec {
    /// Number of workers (`worker-0`..).
    pub count: usize,
    /// Resources the workers compete for; each lease period a worker picks one.
    pub resources: Vec<String>,
    /// The lease scope whose token the write presents.
    pub lease_scope: LeaseScopeSpec,
    /// Duration of one unit of work.
    pub work_ms: Dist,
    /// Units of work (one write each) per lease period.
    pub writes_per_lease: u32,
    /// Renewal (keepalive) interval, by the worker's clock.
    pub renew_every_ms: u64,
    /// How long after a grant or successful renewal (by the worker's own clock, measured per
    /// `deadline_from`) the worker still believes it holds the lease: client-go's
    /// RenewDeadline. Defaults to the effective TTL.
    pub renew_deadline_ms: u64,
    /// Stop believing at the first failed renewal.
    pub stop_on_renew_failure: bool,
    /// Ask the coordinator right before each write.
    pub check_lease_before_write: bool,
    /// Re-check the local deadline (by the worker's own monotonic clock) after the work,
    /// right before sending the write. Catches a GC pause during the work (mono kept
    /// running), not a VM suspend (mono stopped).
    pub recheck_deadline_before_write: bool,
    /// Where the local deadline is measured from.
    pub deadline_from: DeadlineFrom,
    /// How long a worker waits for any reply (by its own clock) before giving up.
    pub request_timeout_ms: u64,
    /// Pause between failed acquire attempts.
    pub acquire_retry_ms: u64,
    /// Each pause is `acquire_retry_ms × (1 + U[0, jitter))` (client-go's JitterFactor 1.2);
    /// 0 = no jitter.
    pub acquire_retry_jitter: f64,
    /// External side effects of each unit of work.
    pub side_effects: SideEffects,
}

impl WorkerSpec {
    /// The built-in worker policy these fields describe: what the simulated workers and the
    /// live worker (`crates/live`) both decide with, unless a user's policy replaces it.
    pub fn policy(&self) -> fencesim_model::policy::SpecPolicy {
        fencesim_model::policy::SpecPolicy {
            renew_every_ms: self.renew_every_ms,
            renew_deadline_ms: self.renew_deadline_ms,
            stop_on_renew_failure: self.stop_on_renew_failure,
            recheck_deadline_before_write: self.recheck_deadline_before_write,
            check_lease_before_write: self.check_lease_before_write,
        }
    }
}

/// Network latency: a base distribution plus rare retransmit spikes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySpec {
    /// Latency of every message.
    pub base: Dist,
    /// Probability that a message suffers one extra spike.
    pub spike_probability: f64,
    /// Spike sizes, chosen uniformly (e.g. TCP retransmits 200/400/800 ms).
    pub spikes_ms: Vec<f64>,
}

/// The network, resolved (`[network]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkSpec {
    /// Per-message latency.
    pub latency: LatencySpec,
    /// Probability each message is lost.
    pub loss: f64,
    /// Probability each message is delivered twice.
    pub duplicate: f64,
}

/// One node's clock parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockSpec {
    /// Wall-clock offset from true time (ms).
    pub offset_ms: f64,
    /// Rate error in parts per million (positive: fast).
    pub drift_ppm: f64,
}

/// Node clocks, resolved (`[clocks]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClocksSpec {
    /// Nodes without an explicit entry draw drift uniformly in `±random_drift_ppm`...
    pub random_drift_ppm: f64,
    /// ...and offset uniformly in `±random_offset_ms`.
    pub random_offset_ms: f64,
    /// Explicit clocks by node name.
    pub nodes: BTreeMap<String, ClockSpec>,
}

/// Faults, resolved (`[faults]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultSpec {
    /// Faults at explicit times.
    pub schedule: Vec<TimedFault>,
    /// Faults drawn at random per seed.
    pub random: Vec<RandomFault>,
    /// Swarm testing: per seed, each random kind is switched on with probability 1/2 and its
    /// rate scaled by a factor drawn in [0.25, 1]; the draw is printed with the plan.
    pub swarm: bool,
    /// `[faults.outage]`: one outage per seed at a drawn time (absent from the serialized
    /// scenario, and so from its hash, when there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<crate::fault::InjectedOutage>,
}

/// What the scenario expects over its seed range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// No invariant is violated in any seed.
    Safe,
    /// Exactly these invariants are violated, each in at least one seed (and no others).
    Violates(Vec<Invariant>),
}

/// The expectation, resolved (`[expect]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expect {
    /// Safe, or which invariants are violated.
    pub outcome: Outcome,
    /// Coverage conditions that must occur in at least one seed (checked by `fencesim check`).
    pub coverage: Vec<Coverage>,
    /// Conditions that must occur in no seed (`never = [...]`, e.g. `current-write-rejected`):
    /// one seed hitting one is a failure. Left out of the resolved form while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never: Vec<Coverage>,
}

/// A validated scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// The scenario name (`[a-z0-9-]+`).
    pub name: String,
    /// What the scenario shows and expects, in words.
    pub description: String,
    /// Length of the safety phase (faults happen only inside it).
    pub duration_ms: u64,
    /// The seeds `fencesim run` and `check` use by default.
    pub seeds: SeedRange,
    /// `[lease]`.
    pub lease: LeaseSpec,
    /// `[storage]`.
    pub storage: StorageSpec,
    /// `[workers]`.
    pub workers: WorkerSpec,
    /// `[network]`.
    pub network: NetworkSpec,
    /// `[clocks]`.
    pub clocks: ClocksSpec,
    /// `[faults]`.
    pub faults: FaultSpec,
    /// `[expect]`.
    pub expect: Expect,
}

impl Scenario {
    /// Lease settings that have no effect as resolved, or that contradict the lease preset:
    /// accepted (the file is valid) but worth a warning, each naming its field. With
    /// `expired_by = "candidate"` (client-go's default) no server expires leases, so
    /// `expiry_check_ms` and `lock_delay_ms` (both applied only by the service's own expiry)
    /// do nothing; `holder_identity = "name"` lets a restarted holder resume its lease, which
    /// etcd, ZooKeeper and Consul never do (they know holders by session).
    pub fn preset_warnings(&self) -> Vec<String> {
        let lease = &self.lease;
        let mut out = Vec::new();
        let preset = lease.preset.map_or("no preset".to_string(), |p| {
            format!("preset {:?}", preset_name(p))
        });
        if lease.expired_by == ExpiredBy::Candidate {
            for (field, value) in [
                ("lease.expiry_check_ms", lease.expiry_check_ms),
                ("lease.lock_delay_ms", lease.lock_delay_ms),
            ] {
                if value > 0 {
                    out.push(format!(
                        "{field} = {value} has no effect: with expired_by = \"candidate\" \
                         ({preset}) no server expires leases; candidates take over by their own \
                         clock"
                    ));
                }
            }
        }
        if lease.holder_identity == HolderIdentity::Name
            && matches!(
                lease.preset,
                Some(Preset::Etcd | Preset::Zookeeper | Preset::Consul)
            )
        {
            out.push(format!(
                "lease.holder_identity = \"name\" contradicts {preset}: that service knows \
                 holders by session, so a restarted holder never resumes its lease there"
            ));
        }
        if lease.expired_by == ExpiredBy::Candidate && lease.preset == Some(Preset::Consul) {
            out.push(
                "lease.expired_by = \"candidate\" contradicts preset \"consul\": Consul's \
                 server expires sessions (its expiry factor and lock-delay stop applying)"
                    .to_string(),
            );
        }
        out
    }

    /// Every node name, in a fixed order.
    pub fn node_names(&self) -> Vec<String> {
        fencesim_model::nodes::processes(self.workers.count)
    }

    /// The lease scope that protects writes to `resource`.
    pub fn lease_scope_of(&self, resource: &str) -> String {
        match &self.workers.lease_scope {
            LeaseScopeSpec::PerResource => resource.to_string(),
            LeaseScopeSpec::Single(name) => name.clone(),
        }
    }

    /// Most events one seed may record: 1 000 000 + 10 per millisecond of `duration_ms`, and
    /// never more than [`crate::limits::MAX_EVENTS_PER_SEED`]. A seed over it is stopped and
    /// reported as runaway (`SeedOutcome::runaway`).
    pub fn event_budget(&self) -> usize {
        // Busy catalogue seeds record tens of thousands of events per simulated minute; the
        // budget is two orders of magnitude above that. The cap bounds a seed's memory by
        // bytes whatever the duration: each event costs a documented amount (limits.rs).
        (1_000_000 + 10 * self.duration_ms as usize).min(crate::limits::MAX_EVENTS_PER_SEED)
    }

    /// The I5 bound: after the last fault heals, a write must commit within this many ms.
    ///
    /// A stale lease may need a full effective TTL to expire (plus election timeout if a
    /// restart re-extended it, plus lock-delay), a worker may be mid-backoff, then one unit of
    /// work and a few round trips (each bounded by the request timeout) follow. Doubled for
    /// slack: a violation of this bound is a liveness bug, not noise.
    pub fn liveness_bound_ms(&self) -> u64 {
        let lease = &self.lease;
        let workers = &self.workers;
        let retry_ms =
            (workers.acquire_retry_ms as f64 * (1.0 + workers.acquire_retry_jitter)).ceil() as u64;
        let one_cycle = lease.server_ttl_ms()
            + lease.expiry_check_ms
            + lease.election_timeout_ms
            + 2 * lease.restart_election_ms
            + lease.lock_delay_ms
            + retry_ms
            + workers.work_ms.high().ceil() as u64
            + 4 * workers.request_timeout_ms;
        2 * one_cycle
    }

    /// A stable hash of the resolved scenario (hex), printed in every report.
    pub fn hash(&self) -> String {
        let json = serde_json::to_string(self).expect("scenario serializes");
        let mut hash = Fnv1a::new();
        hash.write(json.as_bytes());
        hash.hex()
    }
}
