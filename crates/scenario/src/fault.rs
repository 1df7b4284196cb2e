//! Fault kinds, in one place for the scenario layer: each kind's name, the keys a
//! `[[faults.schedule]]` entry of that kind takes, its validation rules and defaults, its text
//! in a printed plan, how a `[[faults.random]]` entry draws one occurrence of it, and how an
//! occurrence renders back to an explicit `[[faults.schedule]]` entry.
//!
//! What each kind *does* to the simulated world lives in one module of `fencesim-sim`
//! (`faults.rs`). ARCHITECTURE.md, "Adding a fault kind", lists the files a new kind touches.

use std::collections::BTreeMap;

use fencesim_model::{nodes, rng::Rng};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use toml_edit::{value, Array, Table};

use crate::{
    parse::{join, Ctx, RawDist, Result},
    spec::Dist,
    ScenarioError,
};

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
enum Targets {
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
    fn schedule_keys(self) -> &'static [&'static str] {
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

    fn targets(self) -> Targets {
        match self {
            FaultKind::WorkerCrash | FaultKind::HoldRelease => Targets::Workers,
            FaultKind::CoordinatorRestart
            | FaultKind::StorageRestart
            | FaultKind::HolderLinkCut => Targets::Fixed,
            _ => Targets::AnyNode,
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
            _ => None,
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
            other => Some(other.duration_ms()),
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

// ---------------------------------------------------------------------------------------
// The file's shape and validation of fault entries.

/// A `[[faults.schedule]]` entry as written: every key any kind takes; `resolve_scheduled`
/// rejects the keys foreign to the entry's kind.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScheduled {
    at_ms: Option<f64>,
    kind: Option<FaultKind>,
    node: Option<String>,
    duration_ms: Option<f64>,
    delta_ms: Option<f64>,
    nodes: Option<Vec<String>>,
    peers: Option<Vec<String>>,
    one_way: Option<bool>,
    from: Option<String>,
    to: Option<String>,
}

/// A `[[faults.random]]` entry as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRandom {
    kind: Option<FaultKind>,
    rate_per_min: Option<f64>,
    duration_ms: Option<RawDist>,
    nodes: Option<Vec<String>>,
    one_way_probability: Option<f64>,
}

impl Ctx<'_> {
    /// A node this kind may target: any node, or a worker for kinds that need one.
    fn target(&self, kind: FaultKind, field: &str, name: &str, names: &[String]) -> Result<String> {
        match kind.targets() {
            Targets::Workers => self.worker(field, name, names.len() - 2),
            _ => self.node(field, name, names),
        }
    }

    pub(crate) fn scheduled(
        &self,
        path: &str,
        raw: RawScheduled,
        duration_ms: u64,
        names: &[String],
    ) -> Result<TimedFault> {
        let field = |key: &str| join(path, key);
        let at_ms = self.finite(&field("at_ms"), self.required(&field("at_ms"), raw.at_ms)?)?;
        if !(0.0..duration_ms as f64).contains(&at_ms) {
            return Err(self.error(
                &field("at_ms"),
                format!(
                    "expected a time inside the safety phase [0, {duration_ms}) ms, got {at_ms}"
                ),
            ));
        }
        let kind = self.required(&field("kind"), raw.kind)?;
        self.only_keys(
            path,
            &format!("kind = \"{kind}\""),
            kind.schedule_keys(),
            &[
                ("node", raw.node.is_some()),
                ("duration_ms", raw.duration_ms.is_some()),
                ("delta_ms", raw.delta_ms.is_some()),
                ("nodes", raw.nodes.is_some()),
                ("peers", raw.peers.is_some()),
                ("one_way", raw.one_way.is_some()),
                ("from", raw.from.is_some()),
                ("to", raw.to.is_some()),
            ],
        )?;
        let node = || -> Result<String> {
            let name = self.required(&field("node"), raw.node.clone())?;
            self.target(kind, &field("node"), &name, names)
        };
        let duration = || -> Result<f64> {
            let duration_ms = self.required(&field("duration_ms"), raw.duration_ms)?;
            self.positive_f64(&field("duration_ms"), duration_ms, "milliseconds")
        };
        let fault = match kind {
            FaultKind::GcPause => Fault::GcPause {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::VmSuspend => Fault::VmSuspend {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::WorkerCrash => Fault::WorkerCrash {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::ClockStep => {
                let node = node()?;
                let delta_ms = self.bounded_ms_f64(
                    &field("delta_ms"),
                    self.required(&field("delta_ms"), raw.delta_ms)?,
                )?;
                if delta_ms == 0.0 {
                    return Err(self.error(
                        &field("delta_ms"),
                        "expected a non-zero step in milliseconds, got 0",
                    ));
                }
                Fault::ClockStep { node, delta_ms }
            }
            FaultKind::Panic => Fault::Panic { node: node()? },
            FaultKind::Partition => {
                let nodes = self.required(&field("nodes"), raw.nodes.clone())?;
                if nodes.is_empty() {
                    return Err(self.error(
                        &field("nodes"),
                        "expected at least one node to isolate, got []",
                    ));
                }
                let peers = raw.peers.clone().unwrap_or_default();
                for (index, name) in nodes.iter().enumerate() {
                    let item = format!("{}[{index}]", field("nodes"));
                    self.node(&item, name, names)?;
                    if nodes[..index].contains(name) {
                        return Err(self.error(
                            &item,
                            format!("expected distinct nodes, got {name:?} twice"),
                        ));
                    }
                }
                for (index, name) in peers.iter().enumerate() {
                    let item = format!("{}[{index}]", field("peers"));
                    self.node(&item, name, names)?;
                    if nodes.contains(name) {
                        return Err(self.error(
                            &item,
                            format!("expected a node not in `nodes`, got {name:?}"),
                        ));
                    }
                }
                Fault::Partition {
                    nodes,
                    peers,
                    one_way: raw.one_way.unwrap_or(false),
                    duration_ms: duration()?,
                }
            }
            FaultKind::HoldRelease => {
                let from = self.required(&field("from"), raw.from.clone())?;
                let from = self.node(&field("from"), &from, names)?;
                let to = self.required(&field("to"), raw.to.clone())?;
                let to = self.node(&field("to"), &to, names)?;
                if from == to {
                    return Err(self.error(
                        &field("to"),
                        format!("expected a node other than `from`, got {to:?}"),
                    ));
                }
                Fault::HoldRelease {
                    from,
                    to,
                    duration_ms: duration()?,
                }
            }
            FaultKind::CoordinatorRestart => Fault::CoordinatorRestart {
                duration_ms: duration()?,
            },
            FaultKind::StorageRestart => Fault::StorageRestart {
                duration_ms: duration()?,
            },
            FaultKind::HolderLinkCut => Fault::HolderLinkCut {
                duration_ms: duration()?,
            },
        };
        Ok(TimedFault { at_ms, fault })
    }

    /// A node cannot be paused, suspended or crashed twice at once: the simulator would have
    /// to invent which one ends first. Two entries overlap when each starts before the other
    /// ends (`[at, end)` intervals; an empty one overlaps only an interval strictly around
    /// it). Sort and sweep per node: O(n log n), so a schedule at the list limit validates
    /// in milliseconds (issue 9: the pairwise check took 13 s for 40 000 entries).
    pub(crate) fn check_overlaps(&self, schedule: &[TimedFault]) -> Result<()> {
        let mut by_node: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, timed) in schedule.iter().enumerate() {
            if let Some(node) = timed.fault.stopped_node() {
                by_node.entry(node).or_default().push(index);
            }
        }
        for (node, mut indices) in by_node {
            indices.sort_by(|&a, &b| {
                schedule[a]
                    .at_ms
                    .total_cmp(&schedule[b].at_ms)
                    .then(a.cmp(&b))
            });
            // The entry with the latest end among those starting strictly earlier.
            let mut before: Option<usize> = None;
            let mut group_start = 0;
            while group_start < indices.len() {
                let at_ms = schedule[indices[group_start]].at_ms;
                let group_end = indices[group_start..]
                    .iter()
                    .position(|&i| schedule[i].at_ms != at_ms)
                    .map_or(indices.len(), |n| group_start + n);
                let group = &indices[group_start..group_end];
                // A non-empty entry earlier in this group (same start: they overlap).
                let mut same_start: Option<usize> = None;
                for &index in group {
                    let empty = schedule[index].end_ms() <= at_ms;
                    let witness = before
                        .filter(|&b| at_ms < schedule[b].end_ms())
                        .or(if empty { None } else { same_start });
                    if let Some(other) = witness {
                        return Err(self.overlap_error(
                            schedule,
                            node,
                            other.min(index),
                            other.max(index),
                        ));
                    }
                    if !empty && same_start.is_none() {
                        same_start = Some(index);
                    }
                }
                for &index in group {
                    if before.is_none_or(|b| schedule[index].end_ms() > schedule[b].end_ms()) {
                        before = Some(index);
                    }
                }
                group_start = group_end;
            }
        }
        Ok(())
    }

    fn overlap_error(
        &self,
        schedule: &[TimedFault],
        node: &str,
        earlier_index: usize,
        later_index: usize,
    ) -> ScenarioError {
        let (earlier, later) = (&schedule[earlier_index], &schedule[later_index]);
        self.error(
            &format!("faults.schedule[{later_index}]"),
            format!(
                "expected no overlap with faults.schedule[{earlier_index}] ({} on {node} over {}..{} ms), got {} over {}..{} ms",
                earlier.fault.kind(),
                earlier.at_ms,
                earlier.end_ms(),
                later.fault.kind(),
                later.at_ms,
                later.end_ms()
            ),
        )
    }

    pub(crate) fn random(
        &self,
        path: &str,
        raw: RawRandom,
        names: &[String],
    ) -> Result<RandomFault> {
        let field = |key: &str| join(path, key);
        let kind = self.required(&field("kind"), raw.kind)?;
        if !kind.can_be_random() {
            return Err(self.error(
                &field("kind"),
                format!("expected a random fault kind other than \"{kind}\" (schedule a {kind} explicitly), got \"{kind}\""),
            ));
        }
        let rate_per_min = self.required(&field("rate_per_min"), raw.rate_per_min)?;
        let rate_per_min = self.positive_f64(
            &field("rate_per_min"),
            rate_per_min,
            "occurrences per minute",
        )?;
        if rate_per_min > crate::limits::MAX_RATE_PER_MIN {
            return Err(self.error(
                &field("rate_per_min"),
                format!(
                    "expected at most {} occurrences per minute, got {rate_per_min}",
                    crate::limits::MAX_RATE_PER_MIN
                ),
            ));
        }
        let duration_ms = self.dist(
            &field("duration_ms"),
            self.required(&field("duration_ms"), raw.duration_ms)?,
        )?;
        let nodes = raw.nodes.unwrap_or_default();
        for (index, name) in nodes.iter().enumerate() {
            let item = format!("{}[{index}]", field("nodes"));
            self.target(kind, &item, name, names)?;
        }
        let one_way_probability = match raw.one_way_probability {
            Some(probability) if kind != FaultKind::Partition => {
                return Err(self.error(
                    &field("one_way_probability"),
                    format!("expected no one_way_probability with kind = \"{kind}\" (partition only), got {probability}"),
                ))
            }
            Some(probability) => self.probability(&field("one_way_probability"), probability, true)?,
            None => 0.0,
        };
        Ok(RandomFault {
            kind,
            rate_per_min,
            duration_ms,
            nodes,
            one_way_probability,
        })
    }
}

#[cfg(test)]
mod overlap_tests {
    use super::*;

    /// The pairwise rule the sweep replaces: is any entry overlapped by an earlier one?
    fn pairwise(schedule: &[TimedFault]) -> bool {
        schedule.iter().enumerate().any(|(j, later)| {
            schedule[..j].iter().any(|earlier| {
                later.fault.stopped_node().is_some()
                    && earlier.fault.stopped_node() == later.fault.stopped_node()
                    && later.at_ms < earlier.end_ms()
                    && earlier.at_ms < later.end_ms()
            })
        })
    }

    fn pause(node: usize, at_ms: f64, duration_ms: f64) -> TimedFault {
        TimedFault {
            at_ms,
            fault: Fault::GcPause {
                node: format!("worker-{node}"),
                duration_ms,
            },
        }
    }

    fn ctx_check(schedule: &[TimedFault]) -> Result<()> {
        let doc = toml_edit::ImDocument::parse("").unwrap();
        let ctx = Ctx {
            file: "test.toml",
            text: "",
            doc,
        };
        ctx.check_overlaps(schedule)
    }

    /// A small LCG: the test needs variety, not quality.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    #[test]
    fn the_sweep_finds_an_overlap_exactly_when_the_pairwise_rule_does() {
        let mut rng = Lcg(9);
        let (mut with, mut without) = (0, 0);
        for _ in 0..20_000 {
            let len = 1 + rng.below(6) as usize;
            let schedule: Vec<TimedFault> = (0..len)
                .map(|_| {
                    // Small grids so equal starts, back-to-back entries and empty ones occur.
                    pause(
                        rng.below(2) as usize,
                        rng.below(8) as f64,
                        rng.below(4) as f64,
                    )
                })
                .collect();
            let expected = pairwise(&schedule);
            let found = ctx_check(&schedule);
            assert_eq!(found.is_err(), expected, "{schedule:?}: {found:?}");
            if expected {
                with += 1;
            } else {
                without += 1;
            }
        }
        assert!(with > 1_000 && without > 1_000, "{with} / {without}");
    }

    /// `cargo test --release -p fencesim-scenario --lib overlap_tests::bench -- --ignored
    /// --nocapture`: the sweep and the pairwise rule on 1 000 (the list limit) and 40 000
    /// back-to-back pauses (no overlap: the worst case, every pair is looked at).
    #[test]
    #[ignore = "benchmark: prints timings"]
    fn bench() {
        for len in [1_000, 40_000] {
            let schedule: Vec<TimedFault> = (0..len)
                .map(|i| pause(i % 4, (i / 4) as f64 * 10.0, 10.0))
                .collect();
            #[allow(clippy::disallowed_methods)] // wall time of a benchmark, not a simulation
            let started = std::time::Instant::now();
            ctx_check(&schedule).unwrap();
            let sweep = started.elapsed();
            #[allow(clippy::disallowed_methods)]
            let started = std::time::Instant::now();
            assert!(!pairwise(&schedule));
            let pairwise = started.elapsed();
            println!("{len} entries: sort + sweep {sweep:?}, pairwise {pairwise:?}");
        }
    }
}
