//! The state shared by every simulated node: the recorder, the clocks, the network, and the
//! durable state of the coordinator and the storage (which outlives their restarts).

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex,
    },
    task::Poll,
};

use fencesim_model::{
    clock::NodeClock,
    fence::Fence,
    history::{EventKind, History},
    lease::LeaseService,
    nodes, NodeName,
};
use fencesim_scenario::{plan::FaultPlan, Scenario};
use futures::task::AtomicWaker;
use madsim::runtime::NodeHandle;

use crate::{
    components::PolicyFactory,
    net::Net,
    overdue::Overdue,
    wait::{lock, TrueTime},
};

/// Events a history reserves room for before the run (a 60 s, 5-worker catalogue seed
/// records a few thousand); a busier seed grows it as usual.
const HISTORY_RESERVE: usize = 1 << 15;

pub(crate) struct World {
    pub scenario: Arc<Scenario>,
    pub plan: FaultPlan,
    pub seed: u64,
    /// True time since the run began.
    time: TrueTime,
    history: Mutex<History>,
    pub clocks: BTreeMap<NodeName, NodeClock>,
    pub net: Arc<Net>,
    /// The lease service's state: the coordinator's "disk" (see `LeaseService::restart`).
    pub lease: Mutex<LeaseService>,
    /// The protected store's state: the storage's "disk" (see `Fence::restart`).
    pub store: Mutex<Box<dyn Fence>>,
    /// Builds each worker incarnation's lease policy.
    pub policy: PolicyFactory,
    next_op: AtomicU64,
    /// Set once the history reached `Scenario::event_budget`.
    runaway: AtomicBool,
    /// Set when the run must end early (a node panicked, or the seed ran away): then the
    /// panic message, if any. Nothing is recorded after it, and the main task ends the run.
    stopped: Mutex<Option<Option<String>>>,
    /// Wakes the main task when `stopped` is set.
    stop_waker: AtomicWaker,
    /// How many times each node has started (its RNG stream is per incarnation).
    incarnations: Mutex<BTreeMap<NodeName, u32>>,
    /// Every node's name, shared by the messages that carry it (see [`World::name`]).
    names: BTreeSet<Arc<str>>,
    /// madsim handles of the simulated nodes, by name.
    pub nodes: Mutex<BTreeMap<NodeName, NodeHandle>>,
    /// Every node's unfinished local sleeps, so those that fall due together (at a resume)
    /// end in the order they fell due.
    pub overdue: Overdue,
}

impl World {
    pub fn new(
        scenario: Arc<Scenario>,
        plan: FaultPlan,
        seed: u64,
        clocks: BTreeMap<NodeName, NodeClock>,
        lease: LeaseService,
        store: Box<dyn Fence>,
        policy: PolicyFactory,
    ) -> Self {
        let time = TrueTime::new();
        let net = Arc::new(Net::new(&scenario, seed, time.clone()));
        let reserve = scenario.event_budget().min(HISTORY_RESERVE);
        let workers = scenario.workers.count;
        World {
            scenario,
            plan,
            seed,
            time,
            // Reserved once, up front: growing a history of thousands of events by doubling
            // copied it a dozen times per seed. Untouched capacity costs address space, not
            // memory.
            history: Mutex::new(History {
                events: Vec::with_capacity(reserve),
            }),
            clocks,
            net,
            lease: Mutex::new(lease),
            store: Mutex::new(store),
            policy,
            next_op: AtomicU64::new(1),
            runaway: AtomicBool::new(false),
            stopped: Mutex::new(None),
            stop_waker: AtomicWaker::new(),
            incarnations: Mutex::new(BTreeMap::new()),
            names: [
                nodes::COORDINATOR,
                nodes::STORAGE,
                nodes::NET,
                nodes::NEMESIS,
            ]
            .into_iter()
            .map(str::to_string)
            .chain((0..workers).map(nodes::worker))
            .map(Arc::from)
            .collect(),
            nodes: Mutex::new(BTreeMap::new()),
            overdue: Overdue::default(),
        }
    }

    /// True time since the run began, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        self.time.now_ns()
    }

    /// The run's true time, for tasks that wait on it ([`Alarm::sleep_until`]).
    pub fn time(&self) -> &TrueTime {
        &self.time
    }

    /// Sleeps exactly `duration` of true time (see [`TrueTime::sleep_exact`]).
    pub async fn sleep_exact(&self, duration: std::time::Duration) {
        self.time.sleep_exact(duration).await;
    }

    /// Appends an event. At the seed's event budget, marks the world runaway and stops the
    /// run instead ([`World::stop`]); after a stop nothing more is recorded, so the history
    /// ends where the run failed. No panic leaves a task: madsim prints a line with a
    /// build-machine path for every panic that reaches it.
    pub fn record(&self, node: &str, kind: EventKind) {
        let now = self.now_ns();
        let mut history = lock(&self.history);
        if lock(&self.stopped).is_some() {
            return;
        }
        if history.events.len() >= self.scenario.event_budget() {
            self.runaway.store(true, Ordering::Relaxed);
            drop(history);
            self.stop(None);
            return;
        }
        history.push(now, node, kind);
    }

    /// Ends the run early: `panic` is the panic message of a node (`None` for a runaway).
    /// The first stop wins; the main task sees it through [`World::stopped`].
    pub fn stop(&self, panic: Option<String>) {
        let mut stopped = lock(&self.stopped);
        if stopped.is_none() {
            *stopped = Some(panic);
        }
        drop(stopped);
        self.stop_waker.wake();
    }

    /// Resolves once the run was stopped ([`World::stop`]).
    pub async fn stopped(&self) {
        futures::future::poll_fn(|cx| {
            self.stop_waker.register(cx.waker());
            if lock(&self.stopped).is_some() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }

    /// The panic message the run was stopped with, if a node panicked.
    pub fn stop_panic(&self) -> Option<String> {
        lock(&self.stopped).clone().flatten()
    }

    /// Whether the seed exceeded its event budget.
    pub fn is_runaway(&self) -> bool {
        self.runaway.load(Ordering::Relaxed)
    }

    pub fn take_history(&self) -> History {
        std::mem::take(&mut *lock(&self.history))
    }

    /// `name` as a shared string: a node's name costs no allocation per message.
    pub fn name(&self, name: &str) -> Arc<str> {
        self.names
            .get(name)
            .cloned()
            .unwrap_or_else(|| Arc::from(name))
    }

    pub fn next_op(&self) -> u64 {
        self.next_op.fetch_add(1, Ordering::Relaxed)
    }

    /// Registers a (re)start of `node`; returns its incarnation number (0 for the first).
    pub fn start_incarnation(&self, node: &str) -> u32 {
        let mut incarnations = lock(&self.incarnations);
        let entry = incarnations.entry(node.to_string()).or_insert(0);
        let current = *entry;
        *entry += 1;
        current
    }

    pub fn clock(&self, node: &str) -> &NodeClock {
        self.clocks
            .get(node)
            .unwrap_or_else(|| panic!("no clock for node {node}"))
    }

    /// `node`'s monotonic clock now, in nanoseconds.
    pub fn mono_ns(&self, node: &str) -> u64 {
        self.clock(node).mono_ns(self.now_ns())
    }

    /// `node`'s wall clock now, in milliseconds since the Unix epoch.
    pub fn wall_ms(&self, node: &str) -> i64 {
        self.clock(node)
            .wall_ns(self.now_ns())
            .div_euclid(1_000_000)
    }

    /// Sleeps until `node`'s monotonic clock has advanced by `local_ns`. Re-checks after each
    /// wake-up, so a VM suspend (which freezes `mono`) extends the sleep as it would a guest's
    /// timer. Sleeps of one node that fell due together (while it was paused) end in the
    /// order they fell due, not in madsim's random order ([`Overdue`]).
    pub async fn sleep_local(&self, node: &str, local_ns: u64) {
        let clock = self.clock(node);
        let mut now = self.now_ns();
        let target = clock.mono_ns(now) + local_ns;
        let mut wake = clock.true_time_until_mono(now, target);
        if wake <= now {
            return;
        }
        let sleep = self.overdue.sleep(self.name(node), target, wake);
        loop {
            self.sleep_exact(std::time::Duration::from_nanos(wake - now))
                .await;
            now = self.now_ns();
            wake = clock.true_time_until_mono(now, target);
            if wake <= now {
                break;
            }
            sleep.reschedule(wake);
        }
        sleep.finish(|| self.now_ns()).await;
    }

    /// Sleeps until true time `t_ns` (for the nemesis, which lives outside every node).
    pub async fn sleep_until_true(&self, t_ns: u64) {
        let now = self.now_ns();
        if t_ns > now {
            self.sleep_exact(std::time::Duration::from_nanos(t_ns - now))
                .await;
        }
    }
}
