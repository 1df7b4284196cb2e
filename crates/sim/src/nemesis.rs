//! The nemesis: applies the fault plan at its planned true times, heals everything, then
//! runs the liveness phase and ends the run.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use fencesim_model::{history::EventKind, ms_to_ns, nodes::NEMESIS};
use fencesim_scenario::TimedFault;

use crate::{
    faults::{begin, finish},
    wait::sleep_exact,
    world::World,
};

/// Applies every fault, then the heal and liveness phases. Returns when the run is over.
///
/// Must be called right after the nodes are built and before anything awaits: faults planned
/// at 0 ms begin synchronously here, so they are in force before any node runs its first
/// step (madsim runs ready tasks in random order).
pub(crate) async fn run(world: Arc<World>) {
    let mut tasks = Vec::new();
    for chain in chains(&world.plan.faults) {
        let world = world.clone();
        let mut chain = chain.into_iter();
        let (index, first) = chain.next().expect("a chain is never empty");
        let task = if first.at_ms <= 0.0 {
            let undo = begin(&world, index, first.fault);
            madsim::task::spawn(async move {
                finish(&world, undo).await;
                run_chain(&world, chain).await;
            })
        } else {
            madsim::task::spawn(async move {
                run_chain(&world, std::iter::once((index, first)).chain(chain)).await;
            })
        };
        tasks.push(task);
    }
    for task in tasks {
        task.await.expect("fault task");
    }
    let heal_ms = world.plan.heal_ms().max(world.scenario.duration_ms as f64);
    world.sleep_until_true(ms_to_ns(heal_ms)).await;
    world.record(NEMESIS, EventKind::FaultsHealed);
    // Twice the bound: I5 asks for no gap longer than the bound between accepted writes from
    // the heal to the end, so the phase must be long enough to see a second gap.
    sleep_exact(Duration::from_millis(
        2 * world.scenario.liveness_bound_ms(),
    ))
    .await;
    world.record(NEMESIS, EventKind::RunEnded);
}

/// Each fault begins and ends in turn.
async fn run_chain(world: &Arc<World>, chain: impl Iterator<Item = (u64, TimedFault)>) {
    for (index, timed) in chain {
        world.sleep_until_true(ms_to_ns(timed.at_ms)).await;
        let undo = begin(world, index, timed.fault);
        finish(world, undo).await;
    }
}

/// The plan's faults (with their index in the plan) as chains run one after another by one
/// task each, in the order of their first fault. A process-stopping fault that begins exactly
/// when the previous one on its node ends (the plan queues drawn faults that way) joins that
/// fault's chain, so the node is resumed or restarted before it is stopped again; every other
/// fault is a chain of its own.
fn chains(faults: &[TimedFault]) -> Vec<Vec<(u64, TimedFault)>> {
    let mut chains: Vec<Vec<(u64, TimedFault)>> = Vec::with_capacity(faults.len());
    // Per node: the chain of its latest process-stopping fault.
    let mut last: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, timed) in faults.iter().enumerate() {
        let entry = (index as u64, timed.clone());
        let Some(node) = timed.fault.stopped_node() else {
            chains.push(vec![entry]);
            continue;
        };
        let joins = last.get(node).copied().filter(|&chain| {
            let (_, previous) = chains[chain].last().expect("a chain is never empty");
            previous.end_ms() >= timed.at_ms
        });
        match joins {
            Some(chain) => chains[chain].push(entry),
            None => {
                last.insert(node, chains.len());
                chains.push(vec![entry]);
            }
        }
    }
    chains
}
