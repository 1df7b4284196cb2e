//! Fault kinds, in one place for the scenario layer: each kind's name, the keys a
//! `[[faults.schedule]]` entry of that kind takes, its validation rules and defaults, its text
//! in a printed plan, how a `[[faults.random]]` entry draws one occurrence of it, and how an
//! occurrence renders back to an explicit `[[faults.schedule]]` entry.
//!
//! What each kind *does* to the simulated world lives in one module of `fencesim-sim`
//! (`faults.rs`). ARCHITECTURE.md, "A fault kind", lists the files a new kind touches.

use fencesim_model::{
    nodes,
    rng::{stream, Rng},
};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use toml_edit::{value, Array, Table};

use crate::dist::Dist;

/// The kinds of fault, as named in scenario files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// A GC pause: the process runs no code; its clocks keep running.
    GcPause,
    /// A VM suspend: no code runs and the monotonic clock stops too.
    VmSuspend,
    /// A step of a node's wall clock (NTP step), forward or back.
    ClockStep,
    /// Messages between groups of nodes are dropped.
    Partition,
    /// Messages on a link are held, then delivered late all at once.
    HoldRelease,
    /// The lease service goes down and restarts.
    CoordinatorRestart,
    /// The storage goes down and restarts.
    StorageRestart,
    /// A worker crashes and restarts with no memory.
    WorkerCrash,
    /// A bug in the system under test: the node's code panics.
    Panic,
    /// The link between the lease service and whichever worker holds a lease when it begins
    /// is cut both ways; the service stays up, so another worker can take over.
    HolderLinkCut,
}

/// Which nodes a kind may target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Targets {
    /// Any node (coordinator, storage, a worker).
    AnyNode,
    /// Workers only (a crash restarts a worker; a held write comes from one).
    Workers,
    /// No node: the kind names its process itself (coordinator/storage restarts).
    Fixed,
}

impl FaultKind {
    /// Every value, in documentation order.
    pub const ALL: [FaultKind; 10] = [
        FaultKind::GcPause,
        FaultKind::VmSuspend,
        FaultKind::ClockStep,
        FaultKind::Partition,
        FaultKind::HoldRelease,
        FaultKind::CoordinatorRestart,
        FaultKind::StorageRestart,
        FaultKind::WorkerCrash,
        FaultKind::Panic,
        FaultKind::HolderLinkCut,
    ];

    /// The kind's name as written in scenario files (`"gc-pause"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::GcPause => "gc-pause",
            FaultKind::VmSuspend => "vm-suspend",
            FaultKind::ClockStep => "clock-step",
            FaultKind::Partition => "partition",
            FaultKind::HoldRelease => "hold-release",
            FaultKind::CoordinatorRestart => "coordinator-restart",
            FaultKind::StorageRestart => "storage-restart",
            FaultKind::WorkerCrash => "worker-crash",
            FaultKind::Panic => "panic",
            FaultKind::HolderLinkCut => "holder-link-cut",
        }
    }

    /// The keys (besides `at_ms` and `kind`) a `[[faults.schedule]]` entry of this kind takes.
    pub(crate) fn schedule_keys(self) -> &'static [&'static str] {
        match self {
            FaultKind::GcPause | FaultKind::VmSuspend | FaultKind::WorkerCrash => {
                &["node", "duration_ms"]
            }
            FaultKind::ClockStep => &["node", "delta_ms"],
            FaultKind::Panic => &["node"],
            FaultKind::Partition => &["nodes", "peers", "one_way", "duration_ms"],
            FaultKind::HoldRelease => &["from", "to", "duration_ms"],
            FaultKind::CoordinatorRestart
            | FaultKind::StorageRestart
            | FaultKind::HolderLinkCut => &["duration_ms"],
        }
    }

    pub(crate) fn targets(self) -> Targets {
        match self {
            FaultKind::WorkerCrash | FaultKind::HoldRelease => Targets::Workers,
            FaultKind::CoordinatorRestart
            | FaultKind::StorageRestart
            | FaultKind::HolderLinkCut => Targets::Fixed,
            FaultKind::GcPause
            | FaultKind::VmSuspend
            | FaultKind::ClockStep
            | FaultKind::Partition
            | FaultKind::Panic => Targets::AnyNode,
        }
    }

    /// A typical fault of this kind in a run with at least two workers: what the format
    /// documentation shows, and what tests run for every kind.
    pub fn example(self) -> Fault {
        let worker = |index: usize| nodes::worker(index);
        match self {
            FaultKind::GcPause => Fault::GcPause {
                node: worker(0),
                duration_ms: 1_500.0,
            },
            FaultKind::VmSuspend => Fault::VmSuspend {
                node: worker(1),
                duration_ms: 2_000.0,
            },
            FaultKind::ClockStep => Fault::ClockStep {
                node: nodes::COORDINATOR.to_string(),
                delta_ms: -128.0,
            },
            FaultKind::Partition => Fault::Partition {
                nodes: vec![worker(0)],
                peers: vec![nodes::STORAGE.to_string()],
                one_way: true,
                duration_ms: 3_000.0,
            },
            FaultKind::HoldRelease => Fault::HoldRelease {
                from: worker(1),
                to: nodes::STORAGE.to_string(),
                duration_ms: 2_500.0,
            },
            FaultKind::CoordinatorRestart => Fault::CoordinatorRestart {
                duration_ms: 1_000.0,
            },
            FaultKind::StorageRestart => Fault::StorageRestart { duration_ms: 500.0 },
            FaultKind::WorkerCrash => Fault::WorkerCrash {
                node: worker(1),
                duration_ms: 4_000.0,
            },
            FaultKind::Panic => Fault::Panic { node: worker(0) },
            FaultKind::HolderLinkCut => Fault::HolderLinkCut {
                duration_ms: 3_000.0,
            },
        }
    }

    /// Whether `[[faults.random]]` may draw this kind (a panic is a bug planted on purpose:
    /// scheduled explicitly, never drawn).
    pub fn can_be_random(self) -> bool {
        self != FaultKind::Panic
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One fault, fully specified.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Fault {
    /// A GC pause: the process runs no code; its clocks keep running.
    GcPause {
        /// The node it happens to.
        node: String,
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// A VM suspend: no code runs and the monotonic clock stops too.
    VmSuspend {
        /// The node it happens to.
        node: String,
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// A step of a node's wall clock (NTP step), forward or back.
    ClockStep {
        /// The node it happens to.
        node: String,
        /// The step, in milliseconds (negative: backwards).
        delta_ms: f64,
    },
    /// Messages between `nodes` and `peers` are dropped (only `nodes` → `peers` when
    /// `one_way`). Empty `peers` means every other node.
    Partition {
        /// The nodes cut off.
        nodes: Vec<String>,
        /// The other side (empty: every other node).
        peers: Vec<String>,
        /// Only `from` → `to` is cut (else both directions).
        one_way: bool,
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// Messages `from` → `to` are held, then all delivered at once.
    HoldRelease {
        /// Sender of the held messages.
        from: String,
        /// Receiver of the held messages.
        to: String,
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// The lease service goes down and restarts.
    CoordinatorRestart {
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// The storage goes down and restarts.
    StorageRestart {
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// A worker crashes and restarts with no memory.
    WorkerCrash {
        /// The node it happens to.
        node: String,
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
    /// The node's code panics (a bug in the system under test).
    Panic {
        /// The node it happens to.
        node: String,
    },
    /// The link between the coordinator and the worker holding a lease when it begins is cut
    /// both ways (which worker is decided by the simulator then, from the lease service's
    /// state; see docs/scenario-format.md).
    HolderLinkCut {
        /// How long it lasts, in milliseconds.
        duration_ms: f64,
    },
}

impl Fault {
    /// What kind.
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::GcPause { .. } => FaultKind::GcPause,
            Fault::VmSuspend { .. } => FaultKind::VmSuspend,
            Fault::ClockStep { .. } => FaultKind::ClockStep,
            Fault::Partition { .. } => FaultKind::Partition,
            Fault::HoldRelease { .. } => FaultKind::HoldRelease,
            Fault::CoordinatorRestart { .. } => FaultKind::CoordinatorRestart,
            Fault::StorageRestart { .. } => FaultKind::StorageRestart,
            Fault::WorkerCrash { .. } => FaultKind::WorkerCrash,
            Fault::Panic { .. } => FaultKind::Panic,
            Fault::HolderLinkCut { .. } => FaultKind::HolderLinkCut,
        }
    }

    /// The node this fault stops running code (GC pause, VM suspend, a crash or restart of a
    /// worker, the coordinator or the storage, a panic), if any: two such faults on one node
    /// must not overlap (a schedule that overlaps them is rejected; a drawn one waits for the
    /// node, see `plan`).
    pub fn stopped_node(&self) -> Option<&str> {
        match self {
            Fault::GcPause { node, .. }
            | Fault::VmSuspend { node, .. }
            | Fault::WorkerCrash { node, .. }
            | Fault::Panic { node } => Some(node),
            Fault::CoordinatorRestart { .. } => Some(nodes::COORDINATOR),
            Fault::StorageRestart { .. } => Some(nodes::STORAGE),
            Fault::ClockStep { .. }
            | Fault::Partition { .. }
            | Fault::HoldRelease { .. }
            | Fault::HolderLinkCut { .. } => None,
        }
    }

    /// Every node the fault names (for checks that a node still exists).
    pub fn named_nodes(&self) -> Vec<&str> {
        match self {
            Fault::GcPause { node, .. }
            | Fault::VmSuspend { node, .. }
            | Fault::ClockStep { node, .. }
            | Fault::WorkerCrash { node, .. }
            | Fault::Panic { node } => vec![node],
            Fault::Partition { nodes, peers, .. } => {
                nodes.iter().chain(peers).map(String::as_str).collect()
            }
            Fault::HoldRelease { from, to, .. } => vec![from, to],
            Fault::CoordinatorRestart { .. }
            | Fault::StorageRestart { .. }
            | Fault::HolderLinkCut { .. } => Vec::new(),
        }
    }

    /// How long the fault lasts (zero for instantaneous ones).
    pub fn duration_ms(&self) -> f64 {
        match self {
            Fault::GcPause { duration_ms, .. }
            | Fault::VmSuspend { duration_ms, .. }
            | Fault::Partition { duration_ms, .. }
            | Fault::HoldRelease { duration_ms, .. }
            | Fault::CoordinatorRestart { duration_ms }
            | Fault::StorageRestart { duration_ms }
            | Fault::HolderLinkCut { duration_ms }
            | Fault::WorkerCrash { duration_ms, .. } => *duration_ms,
            Fault::ClockStep { .. } | Fault::Panic { .. } => 0.0,
        }
    }

    /// The fault's size: its duration, or for a clock step the step's magnitude; `None` for
    /// a kind with no size (a panic).
    pub fn size_ms(&self) -> Option<f64> {
        match self {
            Fault::ClockStep { delta_ms, .. } => Some(delta_ms.abs()),
            Fault::Panic { .. } => None,
            Fault::GcPause { .. }
            | Fault::VmSuspend { .. }
            | Fault::Partition { .. }
            | Fault::HoldRelease { .. }
            | Fault::CoordinatorRestart { .. }
            | Fault::StorageRestart { .. }
            | Fault::HolderLinkCut { .. }
            | Fault::WorkerCrash { .. } => Some(self.duration_ms()),
        }
    }

    /// The same fault with its size set to `size_ms` (> 0; a clock step keeps its sign).
    pub fn with_size_ms(&self, size_ms: f64) -> Fault {
        let mut fault = self.clone();
        match &mut fault {
            Fault::GcPause { duration_ms, .. }
            | Fault::VmSuspend { duration_ms, .. }
            | Fault::Partition { duration_ms, .. }
            | Fault::HoldRelease { duration_ms, .. }
            | Fault::CoordinatorRestart { duration_ms }
            | Fault::StorageRestart { duration_ms }
            | Fault::HolderLinkCut { duration_ms }
            | Fault::WorkerCrash { duration_ms, .. } => *duration_ms = size_ms,
            Fault::ClockStep { delta_ms, .. } => *delta_ms = size_ms.copysign(*delta_ms),
            Fault::Panic { .. } => {}
        }
        fault
    }

    /// One occurrence drawn by a `[[faults.random]]` entry of `kind` at `target` (ignored by
    /// kinds with fixed targets) with size `size_ms` (> 0). `negative` flips a clock step;
    /// `one_way` makes a partition one-way. Panics for a kind that cannot be random.
    pub fn drawn(
        kind: FaultKind,
        target: String,
        size_ms: f64,
        negative: bool,
        one_way: bool,
    ) -> Fault {
        match kind {
            FaultKind::GcPause => Fault::GcPause {
                node: target,
                duration_ms: size_ms,
            },
            FaultKind::VmSuspend => Fault::VmSuspend {
                node: target,
                duration_ms: size_ms,
            },
            FaultKind::WorkerCrash => Fault::WorkerCrash {
                node: target,
                duration_ms: size_ms,
            },
            FaultKind::ClockStep => Fault::ClockStep {
                node: target,
                delta_ms: if negative { -size_ms } else { size_ms },
            },
            // Random partitions isolate one node from everyone else.
            FaultKind::Partition => Fault::Partition {
                nodes: vec![target],
                peers: Vec::new(),
                one_way,
                duration_ms: size_ms,
            },
            // Random holds delay one worker's writes to the storage.
            FaultKind::HoldRelease => Fault::HoldRelease {
                from: target,
                to: nodes::STORAGE.to_string(),
                duration_ms: size_ms,
            },
            FaultKind::CoordinatorRestart => Fault::CoordinatorRestart {
                duration_ms: size_ms,
            },
            FaultKind::StorageRestart => Fault::StorageRestart {
                duration_ms: size_ms,
            },
            FaultKind::HolderLinkCut => Fault::HolderLinkCut {
                duration_ms: size_ms,
            },
            FaultKind::Panic => unreachable!("parse rejects panic as a random kind"),
        }
    }

    /// The keys of this fault's explicit `[[faults.schedule]]` entry, after `at_ms` and
    /// `kind`, in the order the file format documents them.
    fn render_keys(&self, table: &mut Table) {
        match self {
            Fault::GcPause { node, duration_ms }
            | Fault::VmSuspend { node, duration_ms }
            | Fault::WorkerCrash { node, duration_ms } => {
                table.insert("node", value(node.as_str()));
                table.insert("duration_ms", value(*duration_ms));
            }
            Fault::ClockStep { node, delta_ms } => {
                table.insert("node", value(node.as_str()));
                table.insert("delta_ms", value(*delta_ms));
            }
            Fault::Panic { node } => {
                table.insert("node", value(node.as_str()));
            }
            Fault::Partition {
                nodes,
                peers,
                one_way,
                duration_ms,
            } => {
                table.insert("nodes", value(string_array(nodes)));
                table.insert("peers", value(string_array(peers)));
                table.insert("one_way", value(*one_way));
                table.insert("duration_ms", value(*duration_ms));
            }
            Fault::HoldRelease {
                from,
                to,
                duration_ms,
            } => {
                table.insert("from", value(from.as_str()));
                table.insert("to", value(to.as_str()));
                table.insert("duration_ms", value(*duration_ms));
            }
            Fault::CoordinatorRestart { duration_ms }
            | Fault::StorageRestart { duration_ms }
            | Fault::HolderLinkCut { duration_ms } => {
                table.insert("duration_ms", value(*duration_ms));
            }
        }
    }
}

/// How a fault reads in a printed plan: `gc-pause worker-0 for 15000.000 ms`.
impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = self.kind();
        match self {
            Fault::GcPause { node, duration_ms }
            | Fault::VmSuspend { node, duration_ms }
            | Fault::WorkerCrash { node, duration_ms } => {
                write!(f, "{kind} {node} for {duration_ms:.3} ms")
            }
            Fault::ClockStep { node, delta_ms } => write!(f, "{kind} {node} by {delta_ms:+.3} ms"),
            Fault::Partition {
                nodes,
                peers,
                one_way,
                duration_ms,
            } => {
                let peers = if peers.is_empty() {
                    "everyone else".to_string()
                } else {
                    format!("[{}]", peers.join(", "))
                };
                let direction = if *one_way {
                    " (one-way: outbound dropped)"
                } else {
                    ""
                };
                write!(
                    f,
                    "{kind} [{}] from {peers}{direction} for {duration_ms:.3} ms",
                    nodes.join(", ")
                )
            }
            Fault::HoldRelease {
                from,
                to,
                duration_ms,
            } => write!(f, "{kind} {from} -> {to} for {duration_ms:.3} ms"),
            Fault::CoordinatorRestart { duration_ms } | Fault::StorageRestart { duration_ms } => {
                write!(f, "{kind} for {duration_ms:.3} ms")
            }
            Fault::Panic { node } => write!(f, "{kind} {node}"),
            Fault::HolderLinkCut { duration_ms } => write!(
                f,
                "{kind} (the lease holder <-> coordinator, both ways) for {duration_ms:.3} ms"
            ),
        }
    }
}

fn string_array(items: &[String]) -> Array {
    items.iter().map(String::as_str).collect()
}

/// A fault at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedFault {
    /// When it starts, in milliseconds of true time since the run began.
    pub at_ms: f64,
    /// The fault.
    #[serde(flatten)]
    pub fault: Fault,
}

impl TimedFault {
    /// When the fault ends (its start for instantaneous ones).
    pub fn end_ms(&self) -> f64 {
        self.at_ms + self.fault.duration_ms()
    }

    /// The explicit `[[faults.schedule]]` entry that parses back to this fault.
    pub fn to_schedule_entry(&self) -> Table {
        let mut table = Table::new();
        table.insert("at_ms", value(self.at_ms));
        table.insert("kind", value(self.fault.kind().name()));
        self.fault.render_keys(&mut table);
        table
    }
}

/// Faults drawn at random: a Poisson process per kind over the safety phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandomFault {
    /// What kind.
    pub kind: FaultKind,
    /// Mean occurrences per minute of virtual time.
    pub rate_per_min: f64,
    /// Duration of each occurrence (for `clock-step`: the step size, sign drawn 50/50).
    pub duration_ms: Dist,
    /// Candidate target nodes (empty: every worker). Ignored for restarts of the
    /// coordinator/storage.
    pub nodes: Vec<String>,
    /// For `partition`: probability a drawn partition is one-way.
    pub one_way_probability: f64,
}

impl RandomFault {
    /// Draws one occurrence at `at_ms`, or `None` when the drawn size is not positive (files
    /// reject zero-length faults). Every draw happens before the occurrence may be skipped,
    /// so a skip never shifts the draws of later occurrences.
    pub(crate) fn draw(&self, at_ms: f64, workers: usize, rng: &mut Rng) -> Option<TimedFault> {
        let target = match self.kind.targets() {
            Targets::Fixed => String::new(),
            _ if self.nodes.is_empty() => nodes::worker(rng.gen_range(0..workers)),
            _ => self.nodes[rng.gen_range(0..self.nodes.len())].clone(),
        };
        let size_ms = self.duration_ms.sample(rng);
        let negative = self.kind == FaultKind::ClockStep && rng.gen_bool(0.5);
        let one_way =
            self.kind == FaultKind::Partition && rng.gen::<f64>() < self.one_way_probability;
        (size_ms > 0.0).then(|| TimedFault {
            at_ms,
            fault: Fault::drawn(self.kind, target, size_ms, negative, one_way),
        })
    }
}

/// Which outage to inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutageForm {
    /// The lease service is down (a `coordinator-restart` of the outage's length).
    ServiceDown,
    /// The link between the coordinator and whichever worker holds a lease when the outage
    /// begins is cut both ways (a `holder-link-cut`); the service stays up, so another worker
    /// can take over.
    HolderLinkCut,
}

impl OutageForm {
    /// Both forms, in documentation order.
    pub const ALL: [OutageForm; 2] = [OutageForm::ServiceDown, OutageForm::HolderLinkCut];

    /// The form's name in scenario files (`"service-down"`, `"holder-link-cut"`).
    pub fn name(self) -> &'static str {
        match self {
            OutageForm::ServiceDown => "service-down",
            OutageForm::HolderLinkCut => "holder-link-cut",
        }
    }

    /// The fault kind that realizes the form.
    pub fn kind(self) -> FaultKind {
        match self {
            OutageForm::ServiceDown => FaultKind::CoordinatorRestart,
            OutageForm::HolderLinkCut => FaultKind::HolderLinkCut,
        }
    }
}

impl std::fmt::Display for OutageForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `[faults.outage]`: one outage of `form` lasting `duration_ms` in every seed, beginning at a
/// time drawn from the seed's `"faults/outage"` stream, uniformly in
/// `[min(OUTAGE_LEAD_MS, room / 2), room]` where `room = duration_ms (of the scenario) -
/// duration_ms (of the outage)`: inside the safety phase with room for the whole outage, and
/// after a lead that lets the workers elect a holder first. The time depends only on the seed,
/// the scenario's `duration_ms` and the outage's length (never on lease or worker timings), so
/// every setting of a sweep meets the outage at the same instant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InjectedOutage {
    /// Which outage.
    pub form: OutageForm,
    /// How long it lasts (ms); shorter than the scenario's `duration_ms`.
    pub duration_ms: f64,
}

/// The injected outage begins no earlier than this (or half the room, if that is shorter), so
/// that a holder usually exists when it begins.
pub const OUTAGE_LEAD_MS: f64 = 10_000.0;

impl InjectedOutage {
    /// The fault that realizes it.
    pub fn fault(&self) -> Fault {
        match self.form {
            OutageForm::ServiceDown => Fault::CoordinatorRestart {
                duration_ms: self.duration_ms,
            },
            OutageForm::HolderLinkCut => Fault::HolderLinkCut {
                duration_ms: self.duration_ms,
            },
        }
    }

    /// Its drawn time and fault in run `seed` of a scenario lasting `scenario_duration_ms`
    /// (before queueing in the plan).
    pub(crate) fn occurrence(&self, scenario_duration_ms: u64, seed: u64) -> TimedFault {
        let room = (scenario_duration_ms as f64 - self.duration_ms).max(0.0);
        let lead = OUTAGE_LEAD_MS.min(room / 2.0);
        let mut rng = stream(seed, "faults/outage");
        let at_ms = if room > lead {
            rng.gen_range(lead..=room)
        } else {
            lead
        };
        TimedFault {
            at_ms,
            fault: self.fault(),
        }
    }
}
