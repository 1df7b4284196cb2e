//! Running seeds: one fresh madsim runtime on a fresh thread per seed (so nothing leaks
//! between seeds, and a panic ends only its own seed), many seeds in parallel through the
//! batch engine (`crate::batch`).

use std::{
    collections::BTreeMap,
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex},
};

use fencesim_check::{check, SeedOutcome};
use fencesim_model::{
    clock::NodeClock,
    history::{EventKind, History},
    lease::{LeaseConfig, LeaseService},
    nodes, NS_PER_MS,
};
use fencesim_scenario::{
    plan::{plan, FaultPlan},
    Scenario,
};
use futures::FutureExt as _;
use madsim::runtime::{Handle, Runtime};

pub use crate::components::{
    builtin_policy, builtin_store, builtin_tokens, Components, PolicyFactory, StoreFactory,
    TokenFactory,
};
use crate::{
    batch, coordinator, faults, nemesis,
    node::{guarded, panic_message},
    storage,
    wait::lock,
    worker,
    world::World,
};

/// Everything one seed produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The checked outcome.
    pub outcome: SeedOutcome,
    /// Everything that happened, in order.
    pub history: History,
    /// The fault plan the seed ran.
    pub plan: FaultPlan,
    /// Messages the network carried (the bench's per-message cost divides by this).
    pub messages: u64,
}

/// Runs one seed with `components` on a fresh thread with a fresh runtime; a panic in any
/// simulated node is caught and reported in `outcome.panic`. The one way every command and
/// the library run a seed (`Components::default()` is the built-ins).
pub fn run_seed(scenario: &Arc<Scenario>, seed: u64, components: &Components) -> RunResult {
    let scenario = scenario.clone();
    let components = components.clone();
    std::thread::Builder::new()
        .name(format!("seed-{seed}"))
        .spawn(move || simulate(scenario, seed, components))
        .expect("spawn seed thread")
        .join()
        .unwrap_or_else(|payload| {
            panic!("seed {seed}: runner failed: {}", panic_message(&*payload))
        })
}

/// Runs `seeds` with `components` on `jobs` threads (each seed as [`run_seed`], through the
/// batch engine, `crate::batch`) and hands each outcome to `on_done` as it finishes (any
/// order), keeping nothing: a caller that summarizes as seeds finish (`verdict`'s
/// `SummaryBuilder`) sweeps in memory that does not grow with the seed count; one that wants
/// seed order uses [`sweep_in_seed_order`].
pub fn sweep(
    scenario: &Arc<Scenario>,
    seeds: impl IntoIterator<Item = u64>,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(SeedOutcome) + Sync),
) {
    let seeds: Vec<u64> = seeds.into_iter().collect();
    let run = |seed: &u64| run_seed(scenario, *seed, components).outcome;
    batch::run_unordered(&seeds, jobs, run, &|_, outcome| on_done(outcome));
}

/// Runs `seeds` as [`sweep`] does and hands each outcome to `consume` in the order of `seeds`
/// as soon as every earlier seed has finished, keeping only the outcomes that wait for an
/// earlier seed; `on_done` sees each outcome as it finishes (any order). What `consume` sees
/// does not depend on `jobs`.
pub fn sweep_in_seed_order<I>(
    scenario: &Arc<Scenario>,
    seeds: I,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(&SeedOutcome) + Sync),
    consume: impl FnMut(SeedOutcome) + Send,
) where
    I: Iterator<Item = u64> + Clone + Send,
{
    let seeds: Vec<u64> = seeds.collect();
    let run = |seed: &u64| {
        let outcome = run_seed(scenario, *seed, components).outcome;
        on_done(&outcome);
        outcome
    };
    batch::run_in_order(&seeds, jobs, run, consume);
}

/// Every outcome of `seeds`, in the order of `seeds` (see [`sweep_in_seed_order`]).
pub fn sweep_all(
    scenario: &Arc<Scenario>,
    seeds: impl IntoIterator<Item = u64>,
    jobs: usize,
    components: &Components,
) -> Vec<SeedOutcome> {
    let seeds: Vec<u64> = seeds.into_iter().collect();
    batch::run_batch(&seeds, jobs, |seed| {
        run_seed(scenario, *seed, components).outcome
    })
}

fn lease_config(scenario: &Scenario) -> LeaseConfig {
    let lease = &scenario.lease;
    LeaseConfig {
        ttl_ns: fencesim_model::whole_ms_to_ns(lease.server_ttl_ms()),
        expiry_check_ns: fencesim_model::whole_ms_to_ns(lease.expiry_check_ms),
        lock_delay_ns: fencesim_model::whole_ms_to_ns(lease.lock_delay_ms),
        election_timeout_ns: fencesim_model::whole_ms_to_ns(lease.election_timeout_ms),
        token_source: lease.token_source,
        token_scope: lease.token_scope,
        on_restart: lease.on_restart,
        expired_by: lease.expired_by,
        identity: lease.holder_identity,
        acquire: lease.acquire,
    }
}

/// Every node's clock for this seed: drawn parameters plus the plan's clock effects.
fn clocks(plan: &FaultPlan) -> BTreeMap<String, NodeClock> {
    let mut clocks: BTreeMap<String, NodeClock> = plan
        .clocks
        .iter()
        .map(|(name, spec)| {
            let offset_ns = (spec.offset_ms * NS_PER_MS as f64).round() as i64;
            (name.clone(), NodeClock::new(offset_ns, spec.drift_ppm))
        })
        .collect();
    for timed in &plan.faults {
        faults::clock_effect(&mut clocks, timed);
    }
    clocks
}

fn simulate(scenario: Arc<Scenario>, seed: u64, components: Components) -> RunResult {
    let plan = plan(&scenario, seed);
    let clocks = clocks(&plan);
    let lease = LeaseService::with_tokens(
        lease_config(&scenario),
        (components.tokens)(&scenario, seed),
    );
    let store = (components.store)(&scenario);
    let policy = components.policy.clone();
    let runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    let slot: Arc<Mutex<Option<Arc<World>>>> = Arc::new(Mutex::new(None));
    let run_slot = slot.clone();
    let run_plan = plan.clone();
    let run_scenario = scenario.clone();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(async move {
            let world = Arc::new(World::new(
                run_scenario,
                run_plan,
                seed,
                clocks,
                lease,
                store,
                policy,
            ));
            *lock(&run_slot) = Some(world.clone());
            world.record(
                nodes::NEMESIS,
                EventKind::RunStarted {
                    seed,
                    liveness_bound_ms: world.scenario.liveness_bound_ms(),
                },
            );
            start_nodes(&world);
            // A node's panic or a runaway stops the run early (`World::stop`).
            let nemesis = nemesis::run(world.clone()).fuse();
            let stopped = world.stopped().fuse();
            futures::pin_mut!(nemesis, stopped);
            futures::select_biased! {
                () = stopped => {},
                () = nemesis => {},
            }
            let handle = Handle::current();
            for node in lock(&world.nodes).values() {
                handle.kill(node.id());
            }
        })
    }));
    let world = lock(&slot).take().expect("world was built");
    // A panic caught by a node's guard stopped the run; one that escaped a task unguarded
    // unwound out of the runtime.
    let panic = world
        .stop_panic()
        .or_else(|| result.err().map(|payload| panic_message(&*payload)));
    let history = world.take_history();
    let runaway = world.is_runaway();
    let messages = world.net.carried();
    drop(world);
    drop(runtime);
    let outcome = SeedOutcome {
        seed,
        trace_hash: history.trace_hash(),
        events: history.events.len(),
        checked: check(&history),
        panic,
        runaway,
    };
    RunResult {
        outcome,
        history,
        plan,
        messages,
    }
}

fn start_nodes(world: &Arc<World>) {
    let handle = Handle::current();
    let carrier = handle.create_node().name(nodes::NET).build();
    world.net.set_carrier(carrier.clone());
    let mut built = BTreeMap::new();
    built.insert(nodes::NET.to_string(), carrier);

    let w = world.clone();
    let node = handle
        .create_node()
        .name(nodes::COORDINATOR)
        .init(move || {
            guarded(
                w.clone(),
                nodes::COORDINATOR.to_string(),
                coordinator::run(w.clone()),
            )
        })
        .build();
    built.insert(nodes::COORDINATOR.to_string(), node);

    let w = world.clone();
    let node = handle
        .create_node()
        .name(nodes::STORAGE)
        .init(move || {
            guarded(
                w.clone(),
                nodes::STORAGE.to_string(),
                storage::run(w.clone()),
            )
        })
        .build();
    built.insert(nodes::STORAGE.to_string(), node);

    for index in 0..world.scenario.workers.count {
        let name = nodes::worker(index);
        let w = world.clone();
        let node_name = name.clone();
        let node = handle
            .create_node()
            .name(name.clone())
            .init(move || guarded(w.clone(), node_name.clone(), worker::run(w.clone(), index)))
            .build();
        built.insert(name, node);
    }
    *lock(&world.nodes) = built;
}
