//! The file's shape: every field optional, so that a missing field is reported by `resolve`
//! with its full dotted path, like every other semantic error. Fault entries' shapes live with
//! the fault kinds (`crate::fault`).

use std::collections::BTreeMap;

use fencesim_model::{
    lease::{AcquireRule, ExpiredBy, HolderIdentity, OnRestart, TokenScope},
    Invariant,
};
use serde::{de, Deserialize};

use crate::{
    fault::FaultKind,
    spec::{CompareScope, DeadlineFrom, Durability, FencingMode, Preset, SideEffects},
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) duration_ms: Option<i64>,
    pub(crate) seeds: Option<String>,
    pub(crate) lease: Option<RawLease>,
    pub(crate) storage: Option<RawStorage>,
    pub(crate) workers: Option<RawWorkers>,
    pub(crate) network: Option<RawNetwork>,
    pub(crate) clocks: Option<RawClocks>,
    pub(crate) faults: Option<RawFaults>,
    pub(crate) expect: Option<RawExpect>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawTokenSource {
    DurableCounter,
    VolatileCounter,
    WallClock,
    RandomId,
    WrappingCounter,
    Revision,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLease {
    pub(crate) preset: Option<Preset>,
    pub(crate) ttl_ms: Option<i64>,
    pub(crate) min_ttl_ms: Option<i64>,
    pub(crate) max_ttl_ms: Option<i64>,
    pub(crate) expiry_factor: Option<i64>,
    pub(crate) expiry_check_ms: Option<i64>,
    pub(crate) expired_by: Option<ExpiredBy>,
    pub(crate) holder_identity: Option<HolderIdentity>,
    pub(crate) lock_delay_ms: Option<i64>,
    pub(crate) election_timeout_ms: Option<i64>,
    pub(crate) restart_election_ms: Option<i64>,
    pub(crate) token_source: Option<RawTokenSource>,
    pub(crate) token_bits: Option<i64>,
    pub(crate) token_scope: Option<TokenScope>,
    pub(crate) on_restart: Option<OnRestart>,
    pub(crate) acquire: Option<AcquireRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStorage {
    pub(crate) fencing: Option<FencingMode>,
    pub(crate) max_token: Option<Durability>,
    pub(crate) compare_scope: Option<CompareScope>,
    pub(crate) proxy_bypass: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkers {
    pub(crate) count: Option<i64>,
    pub(crate) resources: Option<Vec<String>>,
    pub(crate) shared_lease: Option<String>,
    pub(crate) work_ms: Option<RawDist>,
    pub(crate) writes_per_lease: Option<i64>,
    pub(crate) renew_every_ms: Option<i64>,
    pub(crate) renew_deadline_ms: Option<i64>,
    pub(crate) stop_on_renew_failure: Option<bool>,
    pub(crate) check_lease_before_write: Option<bool>,
    pub(crate) recheck_deadline_before_write: Option<bool>,
    pub(crate) deadline_from: Option<DeadlineFrom>,
    pub(crate) request_timeout_ms: Option<i64>,
    pub(crate) acquire_retry_ms: Option<i64>,
    pub(crate) acquire_retry_jitter: Option<f64>,
    pub(crate) side_effects: Option<SideEffects>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNetwork {
    pub(crate) latency_ms: Option<RawDist>,
    pub(crate) spike_probability: Option<f64>,
    pub(crate) spikes_ms: Option<Vec<f64>>,
    pub(crate) loss: Option<f64>,
    pub(crate) duplicate: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClocks {
    pub(crate) random_drift_ppm: Option<f64>,
    pub(crate) random_offset_ms: Option<f64>,
    pub(crate) nodes: Option<BTreeMap<String, RawClock>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClock {
    pub(crate) offset_ms: Option<f64>,
    pub(crate) drift_ppm: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFaults {
    pub(crate) swarm: Option<bool>,
    pub(crate) schedule: Option<Vec<RawScheduled>>,
    pub(crate) random: Option<Vec<RawRandom>>,
    pub(crate) outage: Option<RawOutage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOutage {
    pub(crate) form: Option<crate::outage::OutageForm>,
    pub(crate) duration_ms: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExpect {
    pub(crate) safe: Option<bool>,
    pub(crate) violates: Option<Vec<Invariant>>,
    pub(crate) coverage: Option<Vec<String>>,
    pub(crate) never: Option<Vec<String>>,
}

/// A distribution as written: a bare number (constant) or an inline table tagged by `dist`.
pub(crate) enum RawDist {
    Number(f64),
    Table(RawDistTable),
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawDistKind {
    Const,
    Uniform,
    Lognormal,
    Exponential,
    Empirical,
}

// One flat table rather than a serde-tagged enum: serde buffers tagged enums, which loses
// the field path and span that errors need. Keys foreign to the `dist` are rejected in
// `resolve`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDistTable {
    pub(crate) dist: Option<RawDistKind>,
    pub(crate) value: Option<f64>,
    pub(crate) min: Option<f64>,
    pub(crate) max: Option<f64>,
    pub(crate) median: Option<f64>,
    pub(crate) p99: Option<f64>,
    pub(crate) mean: Option<f64>,
    // Lists of lists, not pairs, so a point of the wrong length is an error at its index.
    pub(crate) quantiles: Option<Vec<Vec<f64>>>,
    pub(crate) samples: Option<Vec<f64>>,
}

impl<'de> Deserialize<'de> for RawDist {
    fn deserialize<D: de::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = RawDist;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of milliseconds or a table like { dist = \"uniform\", min = 1, max = 5 }")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<RawDist, E> {
                Ok(RawDist::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<RawDist, E> {
                Ok(RawDist::Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<RawDist, E> {
                Ok(RawDist::Number(v))
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<RawDist, A::Error> {
                RawDistTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawDist::Table)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A `[[faults.schedule]]` entry as written: every key any kind takes; `resolve_scheduled`
/// rejects the keys foreign to the entry's kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScheduled {
    pub(super) at_ms: Option<f64>,
    pub(super) kind: Option<FaultKind>,
    pub(super) node: Option<String>,
    pub(super) duration_ms: Option<f64>,
    pub(super) delta_ms: Option<f64>,
    pub(super) nodes: Option<Vec<String>>,
    pub(super) peers: Option<Vec<String>>,
    pub(super) one_way: Option<bool>,
    pub(super) from: Option<String>,
    pub(super) to: Option<String>,
}

/// A `[[faults.random]]` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRandom {
    pub(super) kind: Option<FaultKind>,
    pub(super) rate_per_min: Option<f64>,
    pub(super) duration_ms: Option<RawDist>,
    pub(super) nodes: Option<Vec<String>>,
    pub(super) one_way_probability: Option<f64>,
}
