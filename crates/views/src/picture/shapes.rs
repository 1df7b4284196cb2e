//! The bars and marks of a history, built event by event: lease epochs (the checker's
//! tenures) and beliefs, pauses, crashes, partitions and holds as bars; writes, clock steps and
//! panics as marks; and where each event is anchored, for joining violations to evidence.

use std::collections::BTreeMap;

use fencesim_check::index::{Index, Tenure};
use fencesim_model::{
    history::{EventKind, PauseKind},
    nodes, NS_PER_MS,
};
use plotters::style::RGBColor;

use super::{
    layout::Rows, token_colour, CLOCK_TEAL, CRASH_BLACK, GC_GREY, HOLD_BROWN, PARTITION_ORANGE,
    VIOLATION_RED, VM_PURPLE,
};

/// One horizontal block in a lane: `y0..y1` are fractions of the lane's height from its top.
pub(super) struct Bar {
    pub(super) lane: usize,
    pub(super) start_ns: u64,
    pub(super) end_ns: u64,
    pub(super) y0: f64,
    pub(super) y1: f64,
    pub(super) fill: RGBColor,
    /// Filled solid, or drawn as an outline with a light fill (beliefs, holds).
    pub(super) solid: bool,
    pub(super) label: String,
    /// Drawn instead of `label` when that does not fit (empty: nothing).
    pub(super) short_label: String,
    /// The token a lease epoch or belief stands for: its number is the last resort label,
    /// since colours repeat.
    pub(super) token: Option<u64>,
}

/// A point mark in a lane.
pub(super) struct Mark {
    /// The history event drawn.
    pub(super) event: usize,
    /// Evidence of a violation: drawn last, on top of its neighbours.
    pub(super) evidence: bool,
    pub(super) lane: usize,
    pub(super) t_ns: u64,
    pub(super) y: f64,
    pub(super) shape: Shape,
    pub(super) colour: RGBColor,
    pub(super) label: String,
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Shape {
    Accepted,
    Rejected,
    ClockStep,
    Crash,
}

/// The bars and marks of a history, built event by event: intervals open at their first
/// event and become bars at their last (or at the run's end). Lease epochs are the index's
/// tenures.
pub(super) struct Shapes<'a, 'h> {
    index: &'a Index<'h>,
    lanes: &'a [(String, String)],
    rows: &'a Rows,
    net_lane: Option<usize>,
    /// Writes are drawn on the storage's lane, whichever node recorded the verdict (with
    /// same-store-txn the coordinator does): that lane is the protected resource.
    storage_lane: Option<usize>,
    pub(super) bars: Vec<Bar>,
    pub(super) marks: Vec<Mark>,
    /// Where each event is drawn, for joining violations to their evidence.
    pub(super) anchor: Vec<Option<(usize, f64)>>,
    beliefs: BTreeMap<(String, String, u64), u64>,
    pauses: BTreeMap<String, (u64, PauseKind)>,
    crashes: BTreeMap<String, u64>,
    partitions: Vec<(u64, Vec<String>, Vec<String>, bool)>,
    holds: BTreeMap<(String, String), u64>,
}

impl<'a, 'h> Shapes<'a, 'h> {
    pub(super) fn new(index: &'a Index<'h>, lanes: &'a [(String, String)], rows: &'a Rows) -> Self {
        let lane_of = |node: &str| lanes.iter().position(|(n, _)| n == node);
        Shapes {
            index,
            lanes,
            rows,
            net_lane: lane_of(nodes::NET),
            storage_lane: lane_of(nodes::STORAGE),
            bars: Vec::new(),
            marks: Vec::new(),
            anchor: vec![None; index.events().len()],
            beliefs: BTreeMap::new(),
            pauses: BTreeMap::new(),
            crashes: BTreeMap::new(),
            partitions: Vec::new(),
            holds: BTreeMap::new(),
        }
    }

    fn lane_of(&self, node: &str) -> Option<usize> {
        self.lanes.iter().position(|(n, _)| n == node)
    }

    /// Event `k`: the shapes it opens or closes, and where it is anchored.
    pub(super) fn event(&mut self, k: usize) {
        let event = &self.index.events()[k];
        let lane = self.lane_of(&event.node);
        self.anchor[k] = match &event.kind {
            EventKind::Granted { .. }
            | EventKind::Expired { .. }
            | EventKind::TakenOver { .. }
            | EventKind::Released { .. }
            | EventKind::Dropped { .. }
            | EventKind::Renewed { .. }
            | EventKind::Extended { .. } => self.lease_event(k, lane),
            EventKind::BeliefStarted { .. }
            | EventKind::BeliefEnded { .. }
            | EventKind::Paused { .. }
            | EventKind::Resumed { .. }
            | EventKind::Crashed
            | EventKind::Restarted => self.node_event(k, lane),
            EventKind::PartitionStarted { .. }
            | EventKind::PartitionHealed { .. }
            | EventKind::HoldStarted { .. }
            | EventKind::HoldReleased { .. } => self.network_event(k),
            EventKind::ClockStepped { .. }
            | EventKind::Panicked { .. }
            | EventKind::WriteAccepted { .. }
            | EventKind::WriteRejected { .. } => self.mark_event(k, lane),
            _ => lane.map(|l| (l, 0.5)),
        };
    }

    /// A lease event in the coordinator's lane, in its scope's row; an end of a tenure draws
    /// the tenure's bar.
    fn lease_event(&mut self, k: usize, lane: Option<usize>) -> Option<(usize, f64)> {
        let event = &self.index.events()[k];
        let (EventKind::Granted { scope, .. }
        | EventKind::Expired { scope, .. }
        | EventKind::TakenOver { scope, .. }
        | EventKind::Released { scope, .. }
        | EventKind::Dropped { scope, .. }
        | EventKind::Renewed { scope, .. }
        | EventKind::Extended { scope, .. }) = &event.kind
        else {
            return None;
        };
        let band = self.rows.scope_band(scope);
        let how = match &event.kind {
            EventKind::Granted { .. } => return lane.map(|l| (l, low(band))),
            EventKind::Renewed { .. } | EventKind::Extended { .. } => {
                return lane.map(|l| (l, mid(band)))
            }
            EventKind::Expired { .. } => " (expired)",
            EventKind::TakenOver { .. } => " (taken over)",
            EventKind::Released { .. } => " (released)",
            _ => " (dropped)",
        };
        if let (Some(l), Some(tenure)) = (lane, self.index.tenure_ended_by(k)) {
            let bar = self.epoch_bar(l, tenure, event.t_ns, how);
            self.bars.push(bar);
        }
        lane.map(|l| (l, mid(band)))
    }

    /// The bar of `tenure` in lane `lane`, ending at `end_ns`; `how` it ended.
    fn epoch_bar(&self, lane: usize, tenure: &Tenure, end_ns: u64, how: &str) -> Bar {
        let Tenure {
            scope,
            holder,
            token,
            ..
        } = tenure;
        let (y0, y1) = self.rows.scope_band(scope);
        let scope_text = if self.rows.multi_scope() {
            format!("{scope} ")
        } else {
            String::new()
        };
        Bar {
            lane,
            start_ns: self.index.events()[tenure.grant].t_ns,
            end_ns,
            y0,
            y1,
            fill: token_colour(*token),
            solid: true,
            label: format!("{scope_text}token {token} \u{2192} {holder}{how}"),
            short_label: format!("{token} \u{2192} {}", short_node(holder)),
            token: Some(*token),
        }
    }

    /// A belief, pause, crash or restart in its node's lane.
    fn node_event(&mut self, k: usize, lane: Option<usize>) -> Option<(usize, f64)> {
        let event = &self.index.events()[k];
        let (node, t) = (&event.node, event.t_ns);
        match &event.kind {
            EventKind::BeliefStarted { scope, token, .. } => {
                self.beliefs
                    .insert((node.clone(), scope.clone(), *token), t);
                return lane.map(|l| (l, 0.3));
            }
            EventKind::BeliefEnded { scope, token, .. } => {
                let key = (node.clone(), scope.clone(), *token);
                if let (Some(l), Some(start)) = (lane, self.beliefs.remove(&key)) {
                    let multi_scope = self.rows.multi_scope();
                    self.bars
                        .push(belief_bar(l, scope, *token, start, t, multi_scope));
                }
                return lane.map(|l| (l, 0.3));
            }
            EventKind::Paused { kind, .. } => {
                self.pauses.insert(node.clone(), (t, *kind));
            }
            EventKind::Resumed { .. } => {
                if let (Some(l), Some((start, kind))) = (lane, self.pauses.remove(node)) {
                    self.bars.push(pause_bar(l, start, t, kind));
                }
            }
            EventKind::Crashed => {
                self.crashes.insert(node.clone(), t);
                if let Some((start, kind)) = self.pauses.remove(node) {
                    if let Some(l) = lane {
                        self.bars.push(pause_bar(l, start, t, kind));
                    }
                }
            }
            EventKind::Restarted => {
                if let (Some(l), Some(start)) = (lane, self.crashes.remove(node)) {
                    self.bars.push(Bar {
                        lane: l,
                        start_ns: start,
                        end_ns: t,
                        y0: 0.58,
                        y1: 0.86,
                        fill: CRASH_BLACK,
                        solid: true,
                        label: "down (crashed)".to_string(),
                        short_label: "down".to_string(),
                        token: None,
                    });
                }
            }
            _ => {}
        }
        lane.map(|l| (l, 0.72))
    }

    /// A partition or a hold, in the network's lane.
    fn network_event(&mut self, k: usize) -> Option<(usize, f64)> {
        let event = &self.index.events()[k];
        let (net_lane, t) = (self.net_lane, event.t_ns);
        match &event.kind {
            EventKind::PartitionStarted { from, to, one_way } => {
                self.partitions
                    .push((t, from.clone(), to.clone(), *one_way));
            }
            EventKind::PartitionHealed { from, to, one_way } => {
                if let Some(position) = self
                    .partitions
                    .iter()
                    .position(|(_, f, p, o)| f == from && p == to && o == one_way)
                {
                    let (start, from, to, one_way) = self.partitions.remove(position);
                    let lanes = self.lanes;
                    let lane_of = |node: &str| lanes.iter().position(|(n, _)| n == node);
                    push_partition(
                        &mut self.bars,
                        &lane_of,
                        net_lane,
                        start,
                        t,
                        &from,
                        &to,
                        one_way,
                    );
                }
            }
            EventKind::HoldStarted { from, to } => {
                self.holds.insert((from.clone(), to.clone()), t);
                return net_lane.map(|l| (l, 0.72));
            }
            EventKind::HoldReleased { from, to, released } => {
                if let (Some(l), Some(start)) =
                    (net_lane, self.holds.remove(&(from.clone(), to.clone())))
                {
                    self.bars.push(Bar {
                        lane: l,
                        start_ns: start,
                        end_ns: t,
                        y0: 0.58,
                        y1: 0.86,
                        fill: HOLD_BROWN,
                        solid: false,
                        label: format!("hold {from} \u{2192} {to} ({released} released)"),
                        short_label: "hold".to_string(),
                        token: None,
                    });
                }
                return net_lane.map(|l| (l, 0.72));
            }
            _ => {}
        }
        net_lane.map(|l| (l, 0.3))
    }

    /// A clock step, a panic or a write's verdict: a point mark.
    fn mark_event(&mut self, k: usize, lane: Option<usize>) -> Option<(usize, f64)> {
        let event = &self.index.events()[k];
        let (lane, y, shape, colour, label) = match &event.kind {
            EventKind::ClockStepped { delta_ms, .. } => (
                lane,
                0.72,
                Shape::ClockStep,
                CLOCK_TEAL,
                format!("clock {delta_ms:+.0} ms"),
            ),
            EventKind::Panicked { .. } => {
                (lane, 0.72, Shape::Crash, VIOLATION_RED, "panic".to_string())
            }
            EventKind::WriteAccepted {
                token,
                writer,
                resource,
                ..
            }
            | EventKind::WriteRejected {
                token,
                writer,
                resource,
                ..
            } => {
                let (shape, suffix) = match &event.kind {
                    EventKind::WriteAccepted { .. } => (Shape::Accepted, ""),
                    _ => (Shape::Rejected, " rejected"),
                };
                (
                    self.storage_lane.or(lane),
                    self.rows.resource_y(resource),
                    shape,
                    token_colour(*token),
                    format!("{token} {}{suffix}", short_node(writer)),
                )
            }
            _ => return lane.map(|l| (l, 0.5)),
        };
        if let Some(l) = lane {
            self.marks.push(Mark {
                event: k,
                evidence: false,
                lane: l,
                t_ns: event.t_ns,
                y,
                shape,
                colour,
                label,
            });
        }
        lane.map(|l| (l, y))
    }

    /// Whatever is still open lasts to the end of the run: tenures (in the coordinator's
    /// lane, by scope and token), beliefs, pauses and partitions.
    pub(super) fn finish(&mut self) {
        let run_end_ns = self.index.events().last().map_or(0, |e| e.t_ns);
        let mut open: Vec<&Tenure> = self
            .index
            .tenures()
            .iter()
            .filter(|t| t.end.is_none())
            .collect();
        open.sort_by(|a, b| (&a.scope, a.token).cmp(&(&b.scope, b.token)));
        if let Some(l) = self.lane_of(nodes::COORDINATOR) {
            for tenure in open {
                let bar = self.epoch_bar(l, tenure, run_end_ns, "");
                self.bars.push(bar);
            }
        }
        let multi_scope = self.rows.multi_scope();
        for ((node, scope, token), start) in std::mem::take(&mut self.beliefs) {
            if let Some(l) = self.lane_of(&node) {
                self.bars
                    .push(belief_bar(l, &scope, token, start, run_end_ns, multi_scope));
            }
        }
        for (node, (start, kind)) in std::mem::take(&mut self.pauses) {
            if let Some(l) = self.lane_of(&node) {
                self.bars.push(pause_bar(l, start, run_end_ns, kind));
            }
        }
        let lanes = self.lanes;
        let lane_of = |node: &str| lanes.iter().position(|(n, _)| n == node);
        for (start, from, to, one_way) in std::mem::take(&mut self.partitions) {
            push_partition(
                &mut self.bars,
                &lane_of,
                self.net_lane,
                start,
                run_end_ns,
                &from,
                &to,
                one_way,
            );
        }
    }
}

fn mid((y0, y1): (f64, f64)) -> f64 {
    (y0 + y1) / 2.0
}

/// Evidence on a bar is joined low in it, so the red line does not cross the bar's label.
fn low((y0, y1): (f64, f64)) -> f64 {
    y0 + (y1 - y0) * 0.8
}

fn belief_bar(
    lane: usize,
    scope: &str,
    token: u64,
    start: u64,
    end: u64,
    multi_scope: bool,
) -> Bar {
    let scope_text = if multi_scope {
        format!("{scope} ")
    } else {
        String::new()
    };
    Bar {
        lane,
        start_ns: start,
        end_ns: end,
        y0: 0.14,
        y1: 0.46,
        fill: token_colour(token),
        solid: false,
        label: format!("believes {scope_text}token {token}"),
        short_label: format!("{scope_text}{token}"),
        token: Some(token),
    }
}

fn pause_bar(lane: usize, start: u64, end: u64, kind: PauseKind) -> Bar {
    let (fill, what) = match kind {
        PauseKind::Gc => (GC_GREY, "GC pause"),
        PauseKind::VmSuspend => (VM_PURPLE, "VM suspend"),
    };
    Bar {
        lane,
        start_ns: start,
        end_ns: end,
        y0: 0.58,
        y1: 0.86,
        fill,
        solid: true,
        label: format!("{what} {} ms", (end - start) / NS_PER_MS),
        short_label: String::new(),
        token: None,
    }
}

/// A partition: a labelled bar in the network lane, and a thin stripe at the bottom of
/// each cut-off node's lane.
#[allow(clippy::too_many_arguments)]
fn push_partition(
    bars: &mut Vec<Bar>,
    lane_of: &dyn Fn(&str) -> Option<usize>,
    net_lane: Option<usize>,
    start: u64,
    end: u64,
    from: &[String],
    to: &[String],
    one_way: bool,
) {
    let side = |nodes: &[String]| {
        if nodes.is_empty() {
            "all others".to_string()
        } else {
            nodes
                .iter()
                .map(|n| short_node(n))
                .collect::<Vec<_>>()
                .join(",")
        }
    };
    let arrow = if one_way { "\u{2192}" } else { "|" };
    if let Some(l) = net_lane {
        bars.push(Bar {
            lane: l,
            start_ns: start,
            end_ns: end,
            y0: 0.14,
            y1: 0.46,
            fill: PARTITION_ORANGE,
            solid: true,
            label: format!("partition {} {arrow} {}", side(from), side(to)),
            short_label: "partition".to_string(),
            token: None,
        });
    }
    for node in from.iter().chain(to) {
        if let Some(l) = lane_of(node) {
            bars.push(Bar {
                lane: l,
                start_ns: start,
                end_ns: end,
                y0: 0.9,
                y1: 0.97,
                fill: PARTITION_ORANGE,
                solid: true,
                label: String::new(),
                short_label: String::new(),
                token: None,
            });
        }
    }
}

/// `worker-3` → `w3`, so marks' labels stay short; other names unchanged.
fn short_node(node: &str) -> String {
    match node.strip_prefix("worker-") {
        Some(number) => format!("w{number}"),
        None => node.to_string(),
    }
}
