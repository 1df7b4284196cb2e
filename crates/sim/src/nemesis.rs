//! The nemesis: applies the fault plan at its planned true times, heals everything, then
//! runs the liveness phase and ends the run.

use std::{sync::Arc, time::Duration};

use fencesim_model::{
    history::{EventKind, PauseKind},
    ms_to_ns, nodes, NS_PER_MS,
};
use fencesim_scenario::{Fault, TimedFault};
use madsim::runtime::Handle;

use crate::{
    net,
    world::{lock, sleep_exact, World},
};

const NEMESIS: &str = "nemesis";

fn node_id(world: &World, name: &str) -> madsim::task::NodeId {
    lock(&world.nodes)
        .get(name)
        .unwrap_or_else(|| panic!("fault names unknown node {name}"))
        .id()
}

async fn sleep_ms(ms: f64) {
    sleep_exact(Duration::from_nanos(ms_to_ns(ms))).await;
}

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
    sleep_ms(world.scenario.liveness_bound_ms() as f64).await;
    world.record(NEMESIS, EventKind::RunEnded);
}

/// What ends a fault once its duration has passed.
enum Undo {
    Nothing,
    Resume {
        node: String,
        kind: PauseKind,
        after_ms: f64,
    },
    Heal {
        index: u64,
        from: Vec<String>,
        to: Vec<String>,
        one_way: bool,
        after_ms: f64,
    },
    Release {
        from: String,
        to: String,
        after_ms: f64,
    },
    Restart {
        node: String,
        after_ms: f64,
    },
}

/// Starts a fault now (synchronously) and says how it ends.
fn begin(world: &Arc<World>, index: u64, fault: Fault) -> Undo {
    let handle = Handle::current();
    match fault {
        Fault::GcPause { node, duration_ms } => pause(world, node, PauseKind::Gc, duration_ms),
        // The node's clock already knows this freeze (it is part of the plan).
        Fault::VmSuspend { node, duration_ms } => {
            pause(world, node, PauseKind::VmSuspend, duration_ms)
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
            Undo::Nothing
        }
        Fault::Partition {
            nodes,
            peers,
            one_way,
            duration_ms,
        } => {
            world
                .net
                .partition(index, nodes.clone(), peers.clone(), one_way);
            world.record(
                NEMESIS,
                EventKind::PartitionStarted {
                    from: nodes.clone(),
                    to: peers.clone(),
                    one_way,
                },
            );
            Undo::Heal {
                index,
                from: nodes,
                to: peers,
                one_way,
                after_ms: duration_ms,
            }
        }
        Fault::HoldRelease {
            from,
            to,
            duration_ms,
        } => {
            world.net.hold(&from, &to);
            world.record(
                NEMESIS,
                EventKind::HoldStarted {
                    from: from.clone(),
                    to: to.clone(),
                },
            );
            Undo::Release {
                from,
                to,
                after_ms: duration_ms,
            }
        }
        Fault::CoordinatorRestart { duration_ms } => {
            crash(world, nodes::COORDINATOR.to_string(), duration_ms)
        }
        Fault::StorageRestart { duration_ms } => {
            crash(world, nodes::STORAGE.to_string(), duration_ms)
        }
        Fault::WorkerCrash { node, duration_ms } => crash(world, node, duration_ms),
        Fault::Panic { node } => {
            let id = node_id(world, &node);
            let target = handle.get_node(id).expect("node exists");
            let world = world.clone();
            target.spawn(async move {
                let message = format!("injected panic on {node}");
                world.record(
                    &node,
                    EventKind::Panicked {
                        message: message.clone(),
                    },
                );
                panic!("{message}");
            });
            Undo::Nothing
        }
    }
}

/// Waits out a fault's duration and ends it.
async fn finish(world: &Arc<World>, undo: Undo) {
    match undo {
        Undo::Nothing => {}
        Undo::Resume {
            node,
            kind,
            after_ms,
        } => {
            sleep_ms(after_ms).await;
            Handle::current().resume(node_id(world, &node));
            world.record(&node, EventKind::Resumed { kind });
        }
        Undo::Heal {
            index,
            from,
            to,
            one_way,
            after_ms,
        } => {
            sleep_ms(after_ms).await;
            world.net.heal(index);
            world.record(NEMESIS, EventKind::PartitionHealed { from, to, one_way });
        }
        Undo::Release { from, to, after_ms } => {
            sleep_ms(after_ms).await;
            let held = world.net.take_held(&from, &to);
            world.record(
                NEMESIS,
                EventKind::HoldReleased {
                    from,
                    to,
                    released: held.len() as u64,
                },
            );
            for envelope in held {
                net::carry(world, envelope);
            }
        }
        Undo::Restart { node, after_ms } => {
            sleep_ms(after_ms).await;
            world.record(&node, EventKind::Restarted);
            Handle::current().restart(node_id(world, &node));
        }
    }
}

fn pause(world: &Arc<World>, node: String, kind: PauseKind, duration_ms: f64) -> Undo {
    world.record(
        &node,
        EventKind::Paused {
            kind,
            planned_ms: duration_ms,
        },
    );
    Handle::current().pause(node_id(world, &node));
    Undo::Resume {
        node,
        kind,
        after_ms: duration_ms,
    }
}

fn crash(world: &Arc<World>, node: String, duration_ms: f64) -> Undo {
    world.record(&node, EventKind::Crashed);
    Handle::current().kill(node_id(world, &node));
    Undo::Restart {
        node,
        after_ms: duration_ms,
    }
}
