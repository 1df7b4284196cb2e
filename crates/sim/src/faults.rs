//! What each fault kind does to the simulated world, in one place: its effect on a node's
//! clocks (steps and VM-suspend freezes are part of the plan, so known before the run), how
//! it begins (synchronously, at its planned instant) and how it ends. The nemesis only
//! schedules; `fencesim_scenario::fault` owns the kinds' names, keys and validation.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use fencesim_model::{
    clock::NodeClock,
    history::{EventKind, PauseKind},
    ms_to_ns,
    nodes::{self, NEMESIS},
    NodeName, NS_PER_MS,
};
use fencesim_scenario::{Fault, TimedFault};
use madsim::runtime::Handle;

use crate::{
    wait::{lock, sleep_exact},
    world::World,
};

/// Adds `timed`'s effect on node clocks, if it has one, to `clocks`.
pub(crate) fn clock_effect(clocks: &mut BTreeMap<NodeName, NodeClock>, timed: &TimedFault) {
    let at = ms_to_ns(timed.at_ms);
    match &timed.fault {
        Fault::ClockStep { node, delta_ms } => {
            let delta_ns = (delta_ms * NS_PER_MS as f64).round() as i64;
            clock_of(clocks, node).add_step(at, delta_ns);
        }
        // A suspended VM's monotonic clock stops; its wall clock re-syncs on resume.
        Fault::VmSuspend { node, duration_ms } => {
            clock_of(clocks, node).add_freeze(at, at + ms_to_ns(*duration_ms));
        }
        _ => {}
    }
}

fn clock_of<'c>(clocks: &'c mut BTreeMap<NodeName, NodeClock>, node: &str) -> &'c mut NodeClock {
    clocks.get_mut(node).expect("planned node has a clock")
}

fn node_id(world: &World, name: &str) -> madsim::task::NodeId {
    lock(&world.nodes)
        .get(name)
        .unwrap_or_else(|| panic!("fault names unknown node {name}"))
        .id()
}

async fn sleep_ms(ms: f64) {
    sleep_exact(Duration::from_nanos(ms_to_ns(ms))).await;
}

/// What ends a fault once its duration has passed.
pub(crate) enum Undo {
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
pub(crate) fn begin(world: &Arc<World>, index: u64, fault: Fault) -> Undo {
    match fault {
        Fault::GcPause { node, duration_ms } => pause(world, node, PauseKind::Gc, duration_ms),
        // The node's clock already knows this freeze (it is part of the plan).
        Fault::VmSuspend { node, duration_ms } => {
            pause(world, node, PauseKind::VmSuspend, duration_ms)
        }
        Fault::ClockStep { node, delta_ms } => {
            clock_stepped(world, &node, delta_ms);
            Undo::Nothing
        }
        Fault::Partition {
            nodes,
            peers,
            one_way,
            duration_ms,
        } => partition(world, index, nodes, peers, one_way, duration_ms),
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
        Fault::HolderLinkCut { duration_ms } => {
            // The worker holding a lease in the service's own state now (the first scope in
            // name order); with no lease held at this instant, worker-0.
            let holder = lock(&world.lease)
                .leases()
                .next()
                .map_or_else(|| nodes::worker(0), |lease| lease.holder.clone());
            let to = vec![nodes::COORDINATOR.to_string()];
            partition(world, index, vec![holder], to, false, duration_ms)
        }
        Fault::Panic { node } => {
            inject_panic(world, node);
            Undo::Nothing
        }
    }
}

/// Records a clock step's readings right after it (the step is part of the node's clock
/// plan).
fn clock_stepped(world: &World, node: &str, delta_ms: f64) {
    let clock = world.clock(node);
    let now = world.now_ns();
    world.record(
        node,
        EventKind::ClockStepped {
            delta_ms,
            wall_ms: clock.wall_ns(now) as f64 / NS_PER_MS as f64,
            mono_ms: clock.mono_ns(now) as f64 / NS_PER_MS as f64,
        },
    );
}

/// Cuts `from` from `to` (and back, unless one-way) until the heal.
fn partition(
    world: &World,
    index: u64,
    from: Vec<String>,
    to: Vec<String>,
    one_way: bool,
    duration_ms: f64,
) -> Undo {
    world
        .net
        .partition(index, from.clone(), to.clone(), one_way);
    world.record(
        NEMESIS,
        EventKind::PartitionStarted {
            from: from.clone(),
            to: to.clone(),
            one_way,
        },
    );
    Undo::Heal {
        index,
        from,
        to,
        one_way,
        after_ms: duration_ms,
    }
}

/// Panics a task on `node` through the node guard, like every node task: it records the
/// panic and stops the run, and the panic never reaches madsim (which would print a line
/// with a build-machine path).
fn inject_panic(world: &Arc<World>, node: String) {
    let id = node_id(world, &node);
    let target = Handle::current().get_node(id).expect("node exists");
    let message = format!("injected panic on {node}");
    target.spawn(crate::node::guarded(world.clone(), node, async move {
        panic!("{message}");
    }));
}

/// Waits out a fault's duration and ends it.
pub(crate) async fn finish(world: &Arc<World>, undo: Undo) {
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
                world.net.carry(envelope);
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
    world.overdue.forget(&node);
    Undo::Restart {
        node,
        after_ms: duration_ms,
    }
}
