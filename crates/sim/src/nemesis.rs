//! The nemesis: applies the fault plan at its planned true times, heals everything, then
//! runs the liveness phase and ends the run.

use std::{sync::Arc, time::Duration};

use fencesim_model::{history::{EventKind, PauseKind}, ms_to_ns, nodes, NS_PER_MS};
use fencesim_scenario::{Fault, TimedFault};
use madsim::runtime::Handle;

use crate::{
    net,
    world::{lock, World},
};

const NEMESIS: &str = "nemesis";

fn node_id(world: &World, name: &str) -> madsim::task::NodeId {
    lock(&world.nodes).get(name).unwrap_or_else(|| panic!("fault names unknown node {name}")).id()
}

async fn sleep_ms(ms: f64) {
    madsim::time::sleep(Duration::from_nanos(ms_to_ns(ms))).await;
}

/// Applies every fault, then the heal and liveness phases. Returns when the run is over.
pub(crate) async fn run(world: Arc<World>) {
    let faults: Vec<TimedFault> = world.plan.faults.clone();
    let mut tasks = Vec::with_capacity(faults.len());
    for (index, timed) in faults.into_iter().enumerate() {
        let world = world.clone();
        tasks.push(madsim::task::spawn(async move { apply(&world, index as u64, timed).await }));
    }
    for task in tasks {
        task.await.expect("fault task");
    }
    let heal_ms = world.plan.heal_ms().max(world.scenario.duration_ms as f64);
    world.sleep_until_true(ms_to_ns(heal_ms)).await;
    world.record(NEMESIS, EventKind::FaultsHealed);
    sleep_ms(world.scenario.liveness_bound_ms() as f64).await;
    world.record(NEMESIS, EventKind::RunEnded);
}

async fn apply(world: &Arc<World>, index: u64, timed: TimedFault) {
    world.sleep_until_true(ms_to_ns(timed.at_ms)).await;
    let handle = Handle::current();
    match timed.fault {
        Fault::GcPause { node, duration_ms } => pause(world, &node, PauseKind::Gc, duration_ms).await,
        Fault::VmSuspend { node, duration_ms } => {
            // The node's clock already knows this freeze (it is part of the plan).
            pause(world, &node, PauseKind::VmSuspend, duration_ms).await
        }
        Fault::ClockStep { node, delta_ms } => {
            // The step is part of the node's clock plan; record the readings right after it.
            let clock = world.clock(&node);
            let now = world.now_ns();
            world.record(
                &node,
                EventKind::ClockStepped {
                    delta_ms,
                    wall_ms: clock.wall_ns(now) as f64 / NS_PER_MS as f64,
                    mono_ms: clock.mono_ns(now) as f64 / NS_PER_MS as f64,
                },
            );
        }
        Fault::Partition { nodes, peers, one_way, duration_ms } => {
            world.net.partition(index, nodes.clone(), peers.clone(), one_way);
            world.record(
                NEMESIS,
                EventKind::PartitionStarted { from: nodes.clone(), to: peers.clone(), one_way },
            );
            sleep_ms(duration_ms).await;
            world.net.heal(index);
            world.record(NEMESIS, EventKind::PartitionHealed { from: nodes, to: peers, one_way });
        }
        Fault::HoldRelease { from, to, duration_ms } => {
            world.net.hold(&from, &to);
            world.record(NEMESIS, EventKind::HoldStarted { from: from.clone(), to: to.clone() });
            sleep_ms(duration_ms).await;
            let held = world.net.take_held(&from, &to);
            world.record(NEMESIS, EventKind::HoldReleased { from, to, released: held.len() as u64 });
            for envelope in held {
                net::carry(world, envelope);
            }
        }
        Fault::CoordinatorRestart { duration_ms } => crash(world, nodes::COORDINATOR, duration_ms).await,
        Fault::StorageRestart { duration_ms } => crash(world, nodes::STORAGE, duration_ms).await,
        Fault::WorkerCrash { node, duration_ms } => crash(world, &node, duration_ms).await,
        Fault::Panic { node } => {
            let id = node_id(world, &node);
            let target = handle.get_node(id).expect("node exists");
            let world = world.clone();
            target.spawn(async move {
                let message = format!("injected panic on {node}");
                world.record(&node, EventKind::Panicked { message: message.clone() });
                panic!("{message}");
            });
        }
    }
}

async fn pause(world: &Arc<World>, node: &str, kind: PauseKind, duration_ms: f64) {
    let id = node_id(world, node);
    world.record(node, EventKind::Paused { kind, planned_ms: duration_ms });
    Handle::current().pause(id);
    sleep_ms(duration_ms).await;
    Handle::current().resume(id);
    world.record(node, EventKind::Resumed { kind });
}

async fn crash(world: &Arc<World>, node: &str, duration_ms: f64) {
    let id = node_id(world, node);
    world.record(node, EventKind::Crashed);
    Handle::current().kill(id);
    sleep_ms(duration_ms).await;
    world.record(node, EventKind::Restarted);
    Handle::current().restart(id);
}
