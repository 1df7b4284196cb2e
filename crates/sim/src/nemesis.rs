//! The nemesis: applies the fault plan at its planned true times, heals everything, then
//! runs the liveness phase and ends the run.

use std::{sync::Arc, time::Duration};

use fencesim_model::{history::EventKind, ms_to_ns, nodes::NEMESIS};
use fencesim_scenario::TimedFault;

use crate::{
    faults::{begin, finish},
    world::{sleep_exact, World},
};

/// Applies every fault, then the heal and liveness phases. Returns when the run is over.
///
/// Must be called right after the nodes are built and before anything awaits: faults planned
/// at 0 ms begin synchronously here, so they are in force before any node runs its first
/// step (madsim runs ready tasks in random order).
pub(crate) async fn run(world: Arc<World>) {
    let faults: Vec<TimedFault> = world.plan.faults.clone();
    let mut tasks = Vec::with_capacity(faults.len());
    for (index, timed) in faults.into_iter().enumerate() {
        let world = world.clone();
        let index = index as u64;
        let task = if timed.at_ms <= 0.0 {
            let undo = begin(&world, index, timed.fault);
            madsim::task::spawn(async move { finish(&world, undo).await })
        } else {
            madsim::task::spawn(async move {
                world.sleep_until_true(ms_to_ns(timed.at_ms)).await;
                let undo = begin(&world, index, timed.fault);
                finish(&world, undo).await;
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
