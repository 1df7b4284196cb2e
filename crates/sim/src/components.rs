//! The components of the system under test a run plugs in (the protected store, the
//! workers' lease policy, the lease service's token source) and the built-ins that scenario
//! files configure. What the world holds and the runner builds; no simulation here.

use std::sync::Arc;

use fencesim_model::{
    fence::Fence,
    nodes,
    policy::WorkerPolicy,
    rng::stream,
    tokens::{BuiltinTokens, TokenIssuer},
};
use fencesim_scenario::{FencingMode, Scenario};

/// Builds the protected store for a scenario. The default maps `storage.fencing` to the
/// built-in modes; library users pass their own to test their store.
pub type StoreFactory = Arc<dyn Fn(&Scenario) -> Box<dyn Fence> + Send + Sync>;

/// Builds a worker's lease policy (when to renew, when to stop, what to check before a write)
/// for each incarnation of the worker named in the second argument. The default,
/// [`builtin_policy`], is the scenario's `[workers]` fields.
pub type PolicyFactory = Arc<dyn Fn(&Scenario, &str) -> Arc<dyn WorkerPolicy> + Send + Sync>;

/// Builds the lease service's token source for a seed (the second argument). The default,
/// [`builtin_tokens`], is the scenario's `lease.token_source`.
pub type TokenFactory = Arc<dyn Fn(&Scenario, u64) -> Box<dyn TokenIssuer> + Send + Sync>;

/// The components of the system under test a run plugs in: the protected store, the
/// workers' lease policy and the lease service's token source. `Components::default()` is
/// the built-ins, exactly as scenario files configure them.
#[derive(Clone)]
pub struct Components {
    /// The protected store.
    pub store: StoreFactory,
    /// The workers' lease policy.
    pub policy: PolicyFactory,
    /// The lease service's token source.
    pub tokens: TokenFactory,
}

impl Default for Components {
    fn default() -> Self {
        Components {
            store: Arc::new(builtin_store),
            policy: Arc::new(builtin_policy),
            tokens: Arc::new(builtin_tokens),
        }
    }
}

impl Components {
    /// The built-ins with the store `factory` builds.
    pub fn with_store(factory: &StoreFactory) -> Self {
        Components {
            store: factory.clone(),
            ..Components::default()
        }
    }
}

impl std::fmt::Debug for Components {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Components { store, policy, tokens }")
    }
}

/// The built-in worker policy: the scenario's `[workers]` fields.
pub fn builtin_policy(scenario: &Scenario, _worker: &str) -> Arc<dyn WorkerPolicy> {
    Arc::new(scenario.workers.policy())
}

/// The built-in token sources: the scenario's `lease.token_source`, drawing (random ids only)
/// from the coordinator's own stream.
pub fn builtin_tokens(scenario: &Scenario, seed: u64) -> Box<dyn TokenIssuer> {
    Box::new(BuiltinTokens::new(
        scenario.lease.token_source,
        stream(seed, nodes::COORDINATOR),
    ))
}

/// The built-in fencing modes, as named in scenario files.
pub fn builtin_store(scenario: &Scenario) -> Box<dyn Fence> {
    use fencesim_fencing as f;
    let storage = &scenario.storage;
    let (durable, global) = (storage.max_token, storage.compare_scope);
    #[cfg(feature = "sqlite")]
    let sql = |variant| -> Box<dyn Fence> {
        Box::new(f::SqlFence::new(variant, durable, global).expect("in-memory SQLite opens"))
    };
    match storage.fencing {
        FencingMode::None => Box::new(f::NoFence::new()),
        FencingMode::MaxToken => Box::new(f::MaxToken::new(durable, global)),
        #[cfg(feature = "sqlite")]
        FencingMode::Sql => sql(f::SqlVariant::Le),
        #[cfg(feature = "sqlite")]
        FencingMode::SqlStrict => sql(f::SqlVariant::Lt),
        #[cfg(feature = "sqlite")]
        FencingMode::SqlIgnoreRows => sql(f::SqlVariant::LeIgnoreRows),
        // A build without SQLite cannot run these modes: the seed panics saying so (the
        // runner reports it with the seed) rather than quietly running another store.
        #[cfg(not(feature = "sqlite"))]
        FencingMode::Sql | FencingMode::SqlStrict | FencingMode::SqlIgnoreRows => panic!(
            "storage.fencing = {:?} needs SQLite: build fencesim with its `sqlite` feature \
             (default-features = false leaves it out)",
            storage.fencing
        ),
        FencingMode::ReadThenWrite => Box::new(f::ReadThenWrite::new(durable)),
        FencingMode::FenceOnAcquire => Box::new(f::FenceOnAcquire::new(durable, global)),
        FencingMode::SameStoreTxn => Box::new(f::SameStoreTxn::new()),
        FencingMode::Proxy => {
            Box::new(f::Proxy::new(durable, global, storage.proxy_bypass.clone()))
        }
    }
}
