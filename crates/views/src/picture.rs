//! The timeline picture of one run (SVG or PNG, drawn with plotters): one lane per node,
//! lease epochs as the service saw them (the checker's tenures, `fencesim_check::index`) and
//! as holders believed them, faults as blocks, writes as markers, violations joined to their
//! evidence, and a legend.
//!
//! Text is drawn with DejaVu Sans Condensed, embedded from `assets/` (Bitstream Vera
//! licence, see `assets/LICENSE-DejaVu.txt`), so no system font is looked up: a fresh
//! machine or CI has none.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_check::{
    index::{Index, Tenure},
    Violation,
};
use fencesim_model::{
    history::{EventKind, History, PauseKind},
    nodes, Invariant, NS_PER_MS,
};
use fencesim_scenario::plan::FaultPlan;
use plotters::{
    coord::Shift,
    prelude::*,
    style::{
        text_anchor::{HPos, Pos, VPos},
        RGBColor,
    },
};

use crate::plot::{font, register_font, INK};

/// What the picture shows. The default: every node, and the window centred on the first
/// violation if there is one (its evidence and some context), else the whole run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PictureOptions {
    /// True time shown, `[start_ns, end_ns]` (`--window`).
    pub window_ns: Option<(u64, u64)>,
    /// Only these nodes' lanes (`--nodes`; `"net"` names the network lane).
    pub nodes: Option<Vec<String>>,
    /// First line of the picture, e.g. `gc-pause-textbook-none seed 0`.
    pub title: Option<String>,
}

/// Picture width in pixels; the height follows from the number of lanes.
pub const WIDTH_PX: u32 = 1600;
const LANE_PX: u32 = 78;
/// Above the lanes: the title, then [`SUBTITLE_LINE_PX`] per subtitle line.
const HEADER_PX: u32 = 52;
const SUBTITLE_LINE_PX: u32 = 19;
const MAX_SUBTITLE_VIOLATIONS: usize = 3;
/// A subtitle line is cut to this many characters (it fits the width at 15 px).
const SUBTITLE_CHARS: usize = 200;
const AXIS_PX: u32 = 40;
const LEGEND_PX: u32 = 64;
const NAME_PX: u32 = 150;
/// Marks closer than this (in pixels) to the previous label in a lane get no label.
const LABEL_GAP_PX: f64 = 6.0;

const GRID: RGBColor = RGBColor(215, 215, 215);
const LANE_SHADE: RGBColor = RGBColor(246, 246, 246);
const GC_GREY: RGBColor = RGBColor(150, 150, 150);
const VM_PURPLE: RGBColor = RGBColor(125, 85, 160);
const CRASH_BLACK: RGBColor = RGBColor(60, 60, 60);
const PARTITION_ORANGE: RGBColor = RGBColor(235, 140, 30);
const HOLD_BROWN: RGBColor = RGBColor(160, 110, 60);
const CLOCK_TEAL: RGBColor = RGBColor(0, 130, 130);
const VIOLATION_RED: RGBColor = RGBColor(215, 0, 0);
/// Token colours, cycled by token value: neighbouring tokens differ. None is a fault's colour
/// (no purple: a VM suspend; no orange: a partition; no grey: a GC pause; no red: a
/// violation), so a block's colour never says two things. When a picture shows more tokens
/// than colours, the legend says so and every epoch carries its number.
const TOKEN_COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(227, 119, 194),
    RGBColor(140, 86, 75),
];
/// A lane with nothing in the window is drawn this high (its name only).
const EMPTY_LANE_PX: u32 = 30;

fn token_colour(token: u64) -> RGBColor {
    TOKEN_COLOURS[(token % TOKEN_COLOURS.len() as u64) as usize]
}

/// A picture could not be drawn (a plotters backend error; not expected with in-memory
/// backends).
#[derive(Debug)]
pub struct PictureError(pub String);

impl std::fmt::Display for PictureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot draw the picture: {}", self.0)
    }
}

impl std::error::Error for PictureError {}

/// The timeline as an SVG document. `nodes` are the lanes in order (`Scenario::node_names`;
/// a `"net"` lane is added when the network had partitions or holds); `plan`, if given,
/// shows each node's configured clock offset and drift.
pub fn picture_svg(
    history: &History,
    violations: &[Violation],
    nodes: &[String],
    plan: Option<&FaultPlan>,
    options: &PictureOptions,
) -> Result<String, PictureError> {
    let layout = Layout::new(history, violations, nodes, plan, options);
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH_PX, layout.height_px)).into_drawing_area();
        draw(&root, &layout).map_err(|e| PictureError(e.to_string()))?;
        root.present().map_err(|e| PictureError(e.to_string()))?;
    }
    Ok(svg)
}

/// The timeline as PNG bytes (8-bit RGB); same arguments as [`picture_svg`].
pub fn picture_png(
    history: &History,
    violations: &[Violation],
    nodes: &[String],
    plan: Option<&FaultPlan>,
    options: &PictureOptions,
) -> Result<Vec<u8>, PictureError> {
    let layout = Layout::new(history, violations, nodes, plan, options);
    let (width, height) = (WIDTH_PX, layout.height_px);
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        draw(&root, &layout).map_err(|e| PictureError(e.to_string()))?;
        root.present().map_err(|e| PictureError(e.to_string()))?;
    }
    crate::plot::encode_png(&rgb, width, height).map_err(PictureError)
}

/// The window shown: the one asked for, clamped to the run; else around the first violation (from the first
/// evidence of the violations at its instant to it, with a fifth of that span, at least 1 s, on each side, clamped to
/// the run); else the whole run.
pub fn picture_window_ns(
    history: &History,
    violations: &[Violation],
    options: &PictureOptions,
) -> (u64, u64) {
    let run_end_ns = history.events.last().map_or(0, |e| e.t_ns).max(1);
    if let Some((start, end)) = options.window_ns {
        // Clamped to the run: nothing happens after its last event, and the picture's
        // clock curves and tick marks are sized by the window (`--window 0..1e14` grew
        // without bound).
        let end = end.min(run_end_ns);
        let start = start.min(end - 1);
        return (start, end);
    }
    let Some(first) = violations.iter().min_by_key(|v| v.t_ns) else {
        return (0, run_end_ns);
    };
    // Every violation of that instant (I3 and I4 often share the stale accept) with all
    // their evidence, so the grants that prove I4 are in the picture too.
    let times = violations
        .iter()
        .filter(|v| v.t_ns == first.t_ns)
        .flat_map(|v| v.evidence.iter())
        .filter_map(|i| history.events.get(*i))
        .map(|e| e.t_ns)
        .chain([first.t_ns]);
    let from = times.clone().min().unwrap_or(first.t_ns);
    let to = times.max().unwrap_or(first.t_ns);
    let pad = ((to - from) / 5).max(1_000 * NS_PER_MS);
    (
        from.saturating_sub(pad),
        (to + pad).min(run_end_ns.max(to + 1)),
    )
}

/// One horizontal block in a lane: `y0..y1` are fractions of the lane's height from its top.
struct Bar {
    lane: usize,
    start_ns: u64,
    end_ns: u64,
    y0: f64,
    y1: f64,
    fill: RGBColor,
    /// Filled solid, or drawn as an outline with a light fill (beliefs, holds).
    solid: bool,
    label: String,
    /// Drawn instead of `label` when that does not fit (empty: nothing).
    short_label: String,
    /// The token a lease epoch or belief stands for: its number is the last resort label,
    /// since colours repeat.
    token: Option<u64>,
}

/// A point mark in a lane.
struct Mark {
    /// The history event drawn.
    event: usize,
    /// Evidence of a violation: drawn last, on top of its neighbours.
    evidence: bool,
    lane: usize,
    t_ns: u64,
    y: f64,
    shape: Shape,
    colour: RGBColor,
    label: String,
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Accepted,
    Rejected,
    ClockStep,
    Crash,
}

/// A violation: where its evidence is drawn, and its text.
struct ViolationMark {
    points: Vec<(usize, u64, f64)>,
    invariant: fencesim_model::Invariant,
}

/// Everything to draw, in lanes and true time, independent of the backend.
struct Layout {
    title: String,
    subtitle: Vec<String>,
    /// Title and subtitle lines: where the lanes start.
    header_px: u32,
    lanes: Vec<(String, String)>,
    /// Each lane's height: [`LANE_PX`], or [`EMPTY_LANE_PX`] when nothing of it is in the
    /// window.
    lane_px: Vec<u32>,
    window: (u64, u64),
    height_px: u32,
    /// Whether the run violated anything (the subtitle is red then, ink otherwise).
    violated: bool,
    /// More tokens in the window than colours: the legend says colours repeat.
    tokens_repeat: bool,
    bars: Vec<Bar>,
    marks: Vec<Mark>,
    violations: Vec<ViolationMark>,
}

impl Layout {
    fn new(
        history: &History,
        violations: &[Violation],
        node_names: &[String],
        plan: Option<&FaultPlan>,
        options: &PictureOptions,
    ) -> Layout {
        let index = Index::new(history);
        let rows = Rows::new(&index);
        let lanes = lanes(history, node_names, plan, options, &rows);
        let mut shapes = Shapes::new(&index, &lanes, &rows);
        for k in 0..history.events.len() {
            shapes.event(k);
        }
        shapes.finish();
        let Shapes {
            bars,
            mut marks,
            anchor,
            ..
        } = shapes;

        let window = picture_window_ns(history, violations, options);
        let marked: Vec<ViolationMark> = violations
            .iter()
            .map(|violation| ViolationMark {
                points: violation
                    .evidence
                    .iter()
                    .filter_map(|i| {
                        let (lane, y) = anchor.get(*i).copied().flatten()?;
                        Some((lane, history.events[*i].t_ns, y))
                    })
                    .collect(),
                invariant: violation.invariant,
            })
            .collect();
        // Evidence marks are drawn after every other mark, so the write inside a red circle
        // is the one the circle means, not a neighbour drawn over it.
        let evidence: BTreeSet<usize> = violations
            .iter()
            .flat_map(|v| v.evidence.iter().copied())
            .collect();
        for mark in &mut marks {
            mark.evidence = evidence.contains(&mark.event);
        }
        let subtitle = subtitle(violations);
        let (lane_px, tokens_repeat) = lane_heights(&lanes, window, &bars, &marks, &marked);
        let header_px = HEADER_PX + SUBTITLE_LINE_PX * subtitle.len() as u32;
        let lanes_px: u32 = if lane_px.is_empty() {
            LANE_PX
        } else {
            lane_px.iter().sum()
        };
        let height_px = header_px + lanes_px + AXIS_PX + LEGEND_PX;
        Layout {
            title: options
                .title
                .clone()
                .unwrap_or_else(|| "fencesim timeline".to_string()),
            subtitle,
            header_px,
            lanes,
            lane_px,
            window,
            height_px,
            violated: !violations.is_empty(),
            tokens_repeat,
            bars,
            marks,
            violations: marked,
        }
    }
}

/// The rows inside lanes: the coordinator's lane has one per lease scope, the storage's one
/// per resource written, each sorted.
struct Rows {
    /// Every scope ever granted (the index's scopes, sorted).
    scopes: Vec<String>,
    /// Every resource with an accepted or rejected write, sorted.
    resources: Vec<String>,
}

impl Rows {
    fn new(index: &Index<'_>) -> Rows {
        let mut resources: Vec<String> = Vec::new();
        for event in index.events() {
            if let EventKind::WriteAccepted { resource, .. }
            | EventKind::WriteRejected { resource, .. } = &event.kind
            {
                if !resources.contains(resource) {
                    resources.push(resource.clone());
                }
            }
        }
        resources.sort();
        Rows {
            scopes: index.scopes().map(str::to_owned).collect(),
            resources,
        }
    }

    /// Several scopes share the coordinator's lane, one row each: their names are shown.
    fn multi_scope(&self) -> bool {
        self.scopes.len() > 1
    }

    /// The band (`y0`, `y1`, fractions of the lane) of `scope`'s row.
    fn scope_band(&self, scope: &str) -> (f64, f64) {
        let row = self.scopes.iter().position(|s| s == scope).unwrap_or(0) as f64;
        let height = 0.76 / self.scopes.len().max(1) as f64;
        (0.12 + row * height, 0.12 + (row + 0.85) * height)
    }

    /// Where `resource`'s write marks sit (a fraction of the storage's lane).
    fn resource_y(&self, resource: &str) -> f64 {
        let row = self
            .resources
            .iter()
            .position(|r| r == resource)
            .unwrap_or(0) as f64;
        let height = 0.8 / self.resources.len().max(1) as f64;
        0.15 + (row + 0.62) * height
    }
}

/// The lanes shown, in order, each with the note under its name: the nodes asked for (but
/// the nemesis), each with its configured clock error; the network's lane when it had
/// partitions or holds; the coordinator's and the storage's rows named when they have several.
fn lanes(
    history: &History,
    node_names: &[String],
    plan: Option<&FaultPlan>,
    options: &PictureOptions,
    rows: &Rows,
) -> Vec<(String, String)> {
    let wanted = |node: &str| {
        options
            .nodes
            .as_ref()
            .is_none_or(|f| f.iter().any(|n| n == node))
    };
    let network_faults = history.events.iter().any(|e| {
        matches!(
            e.kind,
            EventKind::PartitionStarted { .. } | EventKind::HoldStarted { .. }
        )
    });
    let mut lanes: Vec<(String, String)> = Vec::new();
    for node in node_names {
        if node == "nemesis" || node == nodes::NET || !wanted(node) {
            continue;
        }
        if lanes.iter().any(|(n, _)| n == node) {
            continue;
        }
        // Configured clock error, shown under the lane's name where it is not zero.
        let clock = plan
            .and_then(|p| p.clocks.get(node))
            .filter(|c| c.offset_ms != 0.0 || c.drift_ppm != 0.0)
            .map(|c| format!("clock {:+.0} ms, {:+.0} ppm", c.offset_ms, c.drift_ppm))
            .unwrap_or_default();
        lanes.push((node.clone(), clock));
    }
    if network_faults && wanted(nodes::NET) {
        lanes.push((nodes::NET.to_string(), "partitions, holds".to_string()));
    }
    for (node, names) in [
        (nodes::COORDINATOR, &rows.scopes),
        (nodes::STORAGE, &rows.resources),
    ] {
        if names.len() > 1 {
            if let Some(lane) = lanes.iter_mut().find(|(n, _)| n == node) {
                lane.1 = format!("rows: {}", names.join(", "));
            }
        }
    }
    lanes
}

/// The bars and marks of a history, built event by event: intervals open at their first
/// event and become bars at their last (or at the run's end). Lease epochs are the index's
/// tenures.
struct Shapes<'a, 'h> {
    index: &'a Index<'h>,
    lanes: &'a [(String, String)],
    rows: &'a Rows,
    net_lane: Option<usize>,
    /// Writes are drawn on the storage's lane, whichever node recorded the verdict (with
    /// same-store-txn the coordinator does): that lane is the protected resource.
    storage_lane: Option<usize>,
    bars: Vec<Bar>,
    marks: Vec<Mark>,
    /// Where each event is drawn, for joining violations to their evidence.
    anchor: Vec<Option<(usize, f64)>>,
    beliefs: BTreeMap<(String, String, u64), u64>,
    pauses: BTreeMap<String, (u64, PauseKind)>,
    crashes: BTreeMap<String, u64>,
    partitions: Vec<(u64, Vec<String>, Vec<String>, bool)>,
    holds: BTreeMap<(String, String), u64>,
}

impl<'a, 'h> Shapes<'a, 'h> {
    fn new(index: &'a Index<'h>, lanes: &'a [(String, String)], rows: &'a Rows) -> Self {
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
    fn event(&mut self, k: usize) {
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
    fn finish(&mut self) {
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

/// The violations of the first violating instant, one line each (at most two, the second
/// cut if need be), then a count of the others; or "no violation".
fn subtitle(violations: &[Violation]) -> Vec<String> {
    let mut subtitle = Vec::new();
    let Some(first_ns) = violations.iter().map(|v| v.t_ns).min() else {
        subtitle.push("no violation".to_string());
        return subtitle;
    };
    let first: Vec<&Violation> = violations.iter().filter(|v| v.t_ns == first_ns).collect();
    for violation in first.iter().take(MAX_SUBTITLE_VIOLATIONS) {
        let text = format!("{} violated: {}", violation.invariant, violation.message);
        let mut lines = wrap(&text, SUBTITLE_CHARS);
        if lines.len() > 2 {
            lines[1] = cut(&format!("{} {}", lines[1], lines[2]), SUBTITLE_CHARS);
            lines.truncate(2);
        }
        subtitle.extend(lines);
    }
    let later = violations.len() - first.len().min(MAX_SUBTITLE_VIOLATIONS);
    if later > 0 {
        subtitle.push(format!(
            "and {later} more violation{} (see the text replay)",
            if later > 1 { "s" } else { "" }
        ));
    }
    subtitle
}

/// Each lane's height ([`LANE_PX`] if anything of it is in `window`, else
/// [`EMPTY_LANE_PX`]), and whether the window shows more tokens than there are colours.
fn lane_heights(
    lanes: &[(String, String)],
    (start, end): (u64, u64),
    bars: &[Bar],
    marks: &[Mark],
    violations: &[ViolationMark],
) -> (Vec<u32>, bool) {
    let in_window = |from: u64, to: u64| from <= end && to >= start;
    let mut used = vec![false; lanes.len()];
    for bar in bars.iter().filter(|b| in_window(b.start_ns, b.end_ns)) {
        used[bar.lane] = true;
    }
    for mark in marks.iter().filter(|m| in_window(m.t_ns, m.t_ns)) {
        used[mark.lane] = true;
    }
    for (lane, t, _) in violations.iter().flat_map(|v| v.points.iter()) {
        if in_window(*t, *t) {
            used[*lane] = true;
        }
    }
    let lane_px: Vec<u32> = used
        .iter()
        .map(|&used| if used { LANE_PX } else { EMPTY_LANE_PX })
        .collect();
    let mut tokens: Vec<u64> = bars
        .iter()
        .filter(|b| in_window(b.start_ns, b.end_ns))
        .filter_map(|b| b.token)
        .collect();
    tokens.sort_unstable();
    tokens.dedup();
    (lane_px, tokens.len() > TOKEN_COLOURS.len())
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

/// Words packed on lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` cut to `width` characters, ending in `...` when cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

// Every text size in the picture is an even number of pixels: plotters' ab_glyph renderer
// places each glyph at `(size / 2 + its top) as i32`, which rounds a half pixel one way for
// tall glyphs and the other for low ones, so at an odd size a decimal point sits a pixel above
// the digits' baseline ("35000·436" in the PNG). At an even size nothing is rounded.

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws `layout` on `root`. Everything is positioned in pixels from the layout, so both
/// backends draw the same picture.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, layout: &Layout) -> DrawResult<DB> {
    register_font();
    root.fill(&WHITE)?;
    let frame = Frame::new(layout);
    draw_header(root, layout)?;
    draw_lanes(root, layout, &frame)?;
    draw_axis(root, &frame)?;
    draw_bars(root, layout, &frame)?;
    // Marks other than evidence, then the violations' lines and circles, then the evidence
    // marks on top of both, then the violations' labels: what a circle means stays visible.
    let mut marks = MarkLabels::default();
    for mark in layout
        .marks
        .iter()
        .filter(|m| !m.evidence && frame.visible(m.t_ns))
    {
        marks.draw(root, &frame, mark)?;
    }
    let labels = draw_violations(root, layout, &frame)?;
    for mark in layout
        .marks
        .iter()
        .filter(|m| m.evidence && frame.visible(m.t_ns))
    {
        marks.draw(root, &frame, mark)?;
    }
    draw_labels(root, &labels, &frame)?;
    draw_legend(
        root,
        frame.plot_left,
        frame.plot_bottom + 46,
        layout.tokens_repeat,
    )
}

/// Where a layout goes in pixels: the plot's edges, the lanes' tops and the time scale.
struct Frame {
    window: (u64, u64),
    plot_left: i32,
    plot_right: i32,
    plot_top: i32,
    plot_bottom: i32,
    /// Each lane's top; the last entry is the bottom of the last lane.
    lane_top: Vec<i32>,
    lane_px: Vec<u32>,
    px_per_ns: f64,
}

impl Frame {
    fn new(layout: &Layout) -> Frame {
        let (start_ns, end_ns) = layout.window;
        let plot_left = NAME_PX as i32;
        let plot_right = WIDTH_PX as i32 - 24;
        let plot_top = layout.header_px as i32;
        let mut lane_top = vec![plot_top];
        for px in &layout.lane_px {
            lane_top.push(lane_top.last().copied().unwrap_or(plot_top) + *px as i32);
        }
        let plot_bottom = if layout.lane_px.is_empty() {
            plot_top + LANE_PX as i32
        } else {
            lane_top[layout.lane_px.len()]
        };
        let span_ns = (end_ns - start_ns).max(1) as f64;
        Frame {
            window: layout.window,
            plot_left,
            plot_right,
            plot_top,
            plot_bottom,
            lane_top,
            lane_px: layout.lane_px.clone(),
            px_per_ns: f64::from(plot_right - plot_left) / span_ns,
        }
    }

    /// The x of true time `t_ns`, clamped to the window.
    fn x_of(&self, t_ns: u64) -> i32 {
        let (start_ns, end_ns) = self.window;
        let t = t_ns.clamp(start_ns, end_ns);
        self.plot_left + ((t - start_ns) as f64 * self.px_per_ns).round() as i32
    }

    fn visible(&self, t_ns: u64) -> bool {
        self.window.0 <= t_ns && t_ns <= self.window.1
    }

    fn lane_height(&self, lane: usize) -> i32 {
        self.lane_px.get(lane).copied().unwrap_or(LANE_PX) as i32
    }

    /// The y of `fraction` of `lane`'s height from its top.
    fn y_of(&self, lane: usize, fraction: f64) -> i32 {
        self.lane_top[lane] + (fraction * f64::from(self.lane_height(lane))).round() as i32
    }
}

/// Header: title, then the first violation in red ("no violation" in ink: red means one).
fn draw_header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    layout: &Layout,
) -> DrawResult<DB> {
    root.draw(&Text::new(layout.title.clone(), (16, 10), font(22.0)))?;
    let subtitle_colour = if layout.violated { VIOLATION_RED } else { INK };
    for (i, line) in layout.subtitle.iter().enumerate() {
        root.draw(&Text::new(
            line.clone(),
            (16, 40 + SUBTITLE_LINE_PX as i32 * i as i32),
            font(14.0).color(&subtitle_colour),
        ))?;
    }
    Ok(())
}

/// Lanes: shaded alternately, names (and notes) on the left, a line under the last.
fn draw_lanes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    layout: &Layout,
    frame: &Frame,
) -> DrawResult<DB> {
    let (plot_left, plot_right) = (frame.plot_left, frame.plot_right);
    for (lane, (name, note)) in layout.lanes.iter().enumerate() {
        let top = frame.y_of(lane, 0.0);
        let lane_px = frame.lane_height(lane);
        if lane % 2 == 0 {
            root.draw(&Rectangle::new(
                [(plot_left, top), (plot_right, top + lane_px)],
                LANE_SHADE.filled(),
            ))?;
        }
        root.draw(&PathElement::new(
            vec![(plot_left, top), (plot_right, top)],
            GRID,
        ))?;
        let centre = top + lane_px / 2;
        let name_style = font(16.0).pos(Pos::new(HPos::Right, VPos::Center));
        // A compact (empty) lane has room for its name only.
        let note = if lane_px < LANE_PX as i32 {
            ""
        } else {
            note.as_str()
        };
        let name_y = if note.is_empty() { centre } else { centre - 9 };
        root.draw(&Text::new(
            name.clone(),
            (plot_left - 10, name_y),
            name_style,
        ))?;
        if !note.is_empty() {
            let note_colour = if note.starts_with("clock") {
                CLOCK_TEAL
            } else {
                GC_GREY
            };
            let note_style = font(12.0)
                .color(&note_colour)
                .pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(
                note.to_string(),
                (plot_left - 10, centre + 10),
                note_style,
            ))?;
        }
    }
    root.draw(&PathElement::new(
        vec![
            (plot_left, frame.plot_bottom),
            (plot_right, frame.plot_bottom),
        ],
        INK,
    ))?;
    Ok(())
}

/// Time axis: about ten ticks at a round step, labelled in seconds.
fn draw_axis<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, frame: &Frame) -> DrawResult<DB> {
    let (start_ns, end_ns) = frame.window;
    let (plot_top, plot_bottom) = (frame.plot_top, frame.plot_bottom);
    let step_ns = tick_step_ns(end_ns - start_ns);
    let mut tick = start_ns.div_ceil(step_ns) * step_ns;
    while tick <= end_ns {
        let x = frame.x_of(tick);
        root.draw(&PathElement::new(
            vec![(x, plot_top), (x, plot_bottom)],
            GRID,
        ))?;
        root.draw(&PathElement::new(
            vec![(x, plot_bottom), (x, plot_bottom + 5)],
            INK,
        ))?;
        root.draw(&Text::new(
            format_seconds(tick, step_ns),
            (x, plot_bottom + 8),
            font(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        tick += step_ns;
    }
    root.draw(&Text::new(
        format!(
            "true time (s), window {} \u{2013} {} s",
            format_seconds(start_ns, 1_000_000),
            format_seconds(end_ns, 1_000_000)
        ),
        (frame.plot_right, plot_bottom + 24),
        font(12.0).pos(Pos::new(HPos::Right, VPos::Top)),
    ))?;
    Ok(())
}

/// Bars, with their label inside when it fits.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    layout: &Layout,
    frame: &Frame,
) -> DrawResult<DB> {
    let (start_ns, end_ns) = frame.window;
    for bar in &layout.bars {
        if bar.end_ns < start_ns || bar.start_ns > end_ns {
            continue;
        }
        let (x0, x1) = (
            frame.x_of(bar.start_ns),
            frame.x_of(bar.end_ns).max(frame.x_of(bar.start_ns) + 2),
        );
        let (y0, y1) = (frame.y_of(bar.lane, bar.y0), frame.y_of(bar.lane, bar.y1));
        if bar.solid {
            root.draw(&Rectangle::new([(x0, y0), (x1, y1)], bar.fill.filled()))?;
        } else {
            root.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                bar.fill.mix(0.18).filled(),
            ))?;
            root.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                bar.fill.stroke_width(2),
            ))?;
        }
        if bar.label.is_empty() {
            continue;
        }
        let size = if y1 - y0 >= 20 { 12.0 } else { 10.0 };
        let colour = if bar.solid { WHITE } else { INK };
        let style = font(size)
            .color(&colour)
            .pos(Pos::new(HPos::Left, VPos::Center));
        // Upper part: the lower part is where violations join their evidence.
        let label_y = if bar.solid {
            y0 + (y1 - y0) * 2 / 5
        } else {
            (y0 + y1) / 2
        };
        // The full label, the short one, or at least the token's number: colours repeat.
        let number = bar.token.map(|t| t.to_string()).unwrap_or_default();
        for label in [&bar.label, &bar.short_label, &number] {
            if label.is_empty() {
                continue;
            }
            let (width, _) = root.estimate_text_size(label, &style)?;
            if (width as i32) + 8 <= x1 - x0 {
                root.draw(&Text::new(label.clone(), (x0 + 4, label_y), style))?;
                break;
            }
        }
    }
    Ok(())
}

/// Where each row's mark labels stand so far: a label only where it does not run into the
/// previous one of its row, and not when it repeats it.
#[derive(Default)]
struct MarkLabels {
    /// Per (lane, y): where the last label drawn ends.
    label_end: BTreeMap<(usize, i32), i32>,
    /// Per (lane, y): the last label drawn.
    previous_label: BTreeMap<(usize, i32), String>,
}

impl MarkLabels {
    /// Draws `mark`, with its label when there is room for it.
    fn draw<DB: DrawingBackend>(
        &mut self,
        root: &DrawingArea<DB, Shift>,
        frame: &Frame,
        mark: &Mark,
    ) -> DrawResult<DB> {
        let (x, y) = (frame.x_of(mark.t_ns), frame.y_of(mark.lane, mark.y));
        match mark.shape {
            Shape::Accepted => root.draw(&Circle::new((x, y), 4, mark.colour.filled()))?,
            Shape::Rejected => root.draw(&Cross::new((x, y), 5, mark.colour.stroke_width(3)))?,
            Shape::ClockStep => root.draw(&TriangleMarker::new((x, y), 6, mark.colour.filled()))?,
            Shape::Crash => root.draw(&Cross::new((x, y), 7, mark.colour.stroke_width(3)))?,
        }
        // Consecutive writes with the same label repeat nothing new; a label only where it
        // does not run into the previous one of its row.
        if self.previous_label.get(&(mark.lane, y)) == Some(&mark.label) {
            return Ok(());
        }
        let style = font(12.0)
            .color(&INK)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        let (width, _) = root.estimate_text_size(&mark.label, &style)?;
        let free_from = self
            .label_end
            .get(&(mark.lane, y))
            .copied()
            .unwrap_or(-10_000);
        if f64::from(x - free_from) >= LABEL_GAP_PX && x + width as i32 <= frame.plot_right {
            root.draw(&Text::new(mark.label.clone(), (x - 3, y - 7), style))?;
            self.label_end.insert((mark.lane, y), x - 3 + width as i32);
            self.previous_label
                .insert((mark.lane, y), mark.label.clone());
        }
        Ok(())
    }
}

/// Violations: evidence circled and joined in red. Returns the labels to place, one per
/// cluster of violating events close together in a lane.
fn draw_violations<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    layout: &Layout,
    frame: &Frame,
) -> Result<Vec<LabelRequest>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut proven: Vec<(usize, (i32, i32), Invariant)> = Vec::new();
    for violation in &layout.violations {
        // A violation is drawn where its violating event (the last evidence) is visible.
        if !violation
            .points
            .last()
            .is_some_and(|(_, t, _)| frame.visible(*t))
        {
            continue;
        }
        let points: Vec<(i32, i32)> = violation
            .points
            .iter()
            .filter(|(_, t, _)| frame.visible(*t))
            .map(|(lane, t, y)| (frame.x_of(*t), frame.y_of(*lane, *y)))
            .collect();
        let Some(last) = points.last().copied() else {
            continue;
        };
        // Points on one row are joined by a bracket under them, not a line over their marks.
        let mut path = vec![points[0]];
        for pair in points.windows(2) {
            let ((xa, ya), (xb, yb)) = (pair[0], pair[1]);
            if ya == yb {
                path.extend([(xa, ya + 14), (xb, yb + 14)]);
            }
            path.push((xb, yb));
        }
        root.draw(&PathElement::new(
            path,
            VIOLATION_RED.mix(0.8).stroke_width(2),
        ))?;
        for point in &points {
            root.draw(&Circle::new(*point, 10, VIOLATION_RED.stroke_width(2)))?;
        }
        let lane = violation.points.last().map_or(0, |(lane, _, _)| *lane);
        proven.push((lane, last, violation.invariant));
    }
    let label_style = violation_label_style();
    let mut labels = Vec::new();
    for (lane, anchor, points, mut invariants) in clusters(proven) {
        invariants.sort();
        let text = violation_label(&invariants, points.len());
        let (width, height) = root.estimate_text_size(&text, &label_style)?;
        let top = frame.y_of(lane, 0.0);
        labels.push(LabelRequest {
            anchor,
            width: width as i32,
            height: height as i32,
            band: (top, top + frame.lane_height(lane)),
            text,
        });
    }
    Ok(labels)
}

/// One label per cluster of violating events close together in a lane (a VM suspend's
/// stale writes a few pixels apart): "I3 + I4 violated ×3" rather than six labels. Each
/// cluster: its lane, its anchor (the last point), its distinct points and invariants.
#[allow(clippy::type_complexity)] // (lane, anchor, points, invariants): local only
fn clusters(
    mut proven: Vec<(usize, (i32, i32), Invariant)>,
) -> Vec<(usize, (i32, i32), Vec<(i32, i32)>, Vec<Invariant>)> {
    proven.sort_by_key(|(lane, (x, y), _)| (*lane, *x, *y));
    #[allow(clippy::type_complexity)] // (lane, anchor, first x, points, invariants): local only
    let mut clusters: Vec<(usize, (i32, i32), i32, Vec<(i32, i32)>, Vec<Invariant>)> = Vec::new();
    for (lane, point, invariant) in proven {
        match clusters.last_mut() {
            Some((l, anchor, first_x, points, invariants))
                if *l == lane && point.0 - *first_x <= CLUSTER_PX =>
            {
                *anchor = point;
                if !points.contains(&point) {
                    points.push(point);
                }
                if !invariants.contains(&invariant) {
                    invariants.push(invariant);
                }
            }
            _ => clusters.push((lane, point, point.0, vec![point], vec![invariant])),
        }
    }
    clusters
        .into_iter()
        .map(|(lane, anchor, _, points, invariants)| (lane, anchor, points, invariants))
        .collect()
}

fn violation_label_style() -> TextStyle<'static> {
    font(14.0)
        .color(&VIOLATION_RED)
        .pos(Pos::new(HPos::Left, VPos::Center))
}

/// The violations' labels, placed clear of each other, on a light backing.
fn draw_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &[LabelRequest],
    frame: &Frame,
) -> DrawResult<DB> {
    let label_style = violation_label_style();
    let placed = place_labels(labels, (frame.plot_left, frame.plot_right));
    for (label, (x, y)) in labels.iter().zip(placed) {
        root.draw(&Rectangle::new(
            [
                (x - 3, y - label.height / 2 - 2),
                (x + label.width + 3, y + label.height / 2 + 2),
            ],
            WHITE.mix(0.9).filled(),
        ))?;
        root.draw(&Text::new(label.text.clone(), (x, y), label_style.clone()))?;
    }
    Ok(())
}

/// Violating events closer than this (in pixels) in one lane share one label.
const CLUSTER_PX: i32 = 120;

/// `I4 violated (no superseded accept)`, `I3 + I4 violated (no stale accept; no superseded
/// accept)`, with `×N` when the label stands for N violating events.
fn violation_label(invariants: &[Invariant], events: usize) -> String {
    let names: Vec<String> = invariants.iter().map(|i| i.to_string()).collect();
    let titles: Vec<&str> = invariants.iter().map(|i| i.title()).collect();
    let times = if events > 1 {
        format!(" \u{d7}{events}")
    } else {
        String::new()
    };
    format!(
        "{} violated{times} ({})",
        names.join(" + "),
        titles.join("; ")
    )
}

/// A violation's label to place: next to `anchor` (its violating event, circled), inside
/// `band` (its lane's top and bottom) when it can be.
struct LabelRequest {
    anchor: (i32, i32),
    width: i32,
    height: i32,
    band: (i32, i32),
    text: String,
}

/// Where each label goes (its left end and vertical centre), in order: the first position
/// next to its anchor, below or above it, right or left of it, one to four label heights away,
/// that stays inside its lane and the plot and overlaps no label placed before it nor any
/// anchor's circle. A label that fits nowhere in its lane goes to the nearest position, in or
/// out of it, that overlaps no other label.
fn place_labels(labels: &[LabelRequest], (left, right): (i32, i32)) -> Vec<(i32, i32)> {
    type Rect = (i32, i32, i32, i32);
    let overlaps = |a: Rect, b: Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
    // Every anchor's circle is kept clear, not only the label's own.
    let circles: Vec<Rect> = labels
        .iter()
        .map(|l| {
            (
                l.anchor.0 - 11,
                l.anchor.1 - 11,
                l.anchor.0 + 11,
                l.anchor.1 + 11,
            )
        })
        .collect();
    let mut placed: Vec<Rect> = Vec::new();
    let mut out = Vec::with_capacity(labels.len());
    for label in labels {
        let (ax, ay) = label.anchor;
        let step = label.height + 6;
        let mut candidates: Vec<(i32, i32)> = Vec::new();
        for k in 0..4 {
            for dy in [
                14 + label.height / 2 + k * step,
                -(14 + label.height / 2 + k * step),
            ] {
                for x in [ax + 14, ax - 14 - label.width] {
                    candidates.push((x, ay + dy));
                }
            }
        }
        let rect = |(x, y): (i32, i32)| {
            (
                x - 3,
                y - label.height / 2 - 2,
                x + label.width + 3,
                y + label.height / 2 + 2,
            )
        };
        let in_plot = |r: Rect| r.0 >= left && r.2 <= right;
        let free = |r: Rect| {
            !placed.iter().any(|p| overlaps(*p, r)) && !circles.iter().any(|c| overlaps(*c, r))
        };
        let in_band = |r: Rect| r.1 >= label.band.0 && r.3 <= label.band.1;
        let chosen = candidates
            .iter()
            .copied()
            .find(|c| in_plot(rect(*c)) && in_band(rect(*c)) && free(rect(*c)))
            .or_else(|| {
                // Nowhere in the lane: further out, still clear of other labels.
                (0..12)
                    .flat_map(|k| {
                        let dy = 14 + label.height / 2 + k * step;
                        [(ax + 14, ay + dy), (ax - 14 - label.width, ay + dy)]
                    })
                    .find(|c| in_plot(rect(*c)) && !placed.iter().any(|p| overlaps(*p, rect(*c))))
            })
            .unwrap_or(candidates[0]);
        placed.push(rect(chosen));
        out.push(chosen);
    }
    out
}

/// How a legend entry is drawn.
enum Glyph {
    Solid(RGBColor),
    Outline(RGBColor),
    Dot(RGBColor),
    Cross(RGBColor),
    Triangle(RGBColor),
    Violation,
}

/// The legend: two rows under the axis.
const LEGEND: [&[(Glyph, &str)]; 2] = [
    &[
        (
            Glyph::Solid(TOKEN_COLOURS[1]),
            "lease epoch in the service's state: token \u{2192} holder (colour = token)",
        ),
        (
            Glyph::Outline(TOKEN_COLOURS[1]),
            "what the worker believes it holds",
        ),
        (
            Glyph::Dot(TOKEN_COLOURS[1]),
            "write accepted (token, writer)",
        ),
        (Glyph::Cross(TOKEN_COLOURS[1]), "write rejected"),
        (
            Glyph::Violation,
            "violation: its evidence circled and joined",
        ),
    ],
    &[
        (Glyph::Solid(GC_GREY), "GC pause"),
        (Glyph::Solid(VM_PURPLE), "VM suspend"),
        (Glyph::Solid(CRASH_BLACK), "crashed"),
        (
            Glyph::Solid(PARTITION_ORANGE),
            "partition (net lane; stripe on cut-off nodes)",
        ),
        (Glyph::Outline(HOLD_BROWN), "messages held, then released"),
        (Glyph::Triangle(CLOCK_TEAL), "clock step"),
    ],
];

/// The legend's first entry when more tokens are shown than there are colours.
fn repeating_colours_text() -> String {
    format!(
        "lease epoch: token {} holder (colours repeat every {} tokens: the number names it)",
        '\u{2192}',
        TOKEN_COLOURS.len()
    )
}

fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    left: i32,
    top: i32,
    tokens_repeat: bool,
) -> DrawResult<DB> {
    let style = font(12.0).pos(Pos::new(HPos::Left, VPos::Center));
    for (row, entries) in LEGEND.iter().enumerate() {
        let y = top + row as i32 * 24;
        let mut x = left;
        for (glyph, label) in entries.iter() {
            let swatch = [(x, y - 7), (x + 24, y + 7)];
            match glyph {
                Glyph::Solid(colour) => root.draw(&Rectangle::new(swatch, colour.filled()))?,
                Glyph::Outline(colour) => {
                    root.draw(&Rectangle::new(swatch, colour.mix(0.18).filled()))?;
                    root.draw(&Rectangle::new(swatch, colour.stroke_width(2)))?;
                }
                Glyph::Dot(colour) => root.draw(&Circle::new((x + 12, y), 4, colour.filled()))?,
                Glyph::Cross(colour) => {
                    root.draw(&Cross::new((x + 12, y), 5, colour.stroke_width(3)))?
                }
                Glyph::Triangle(colour) => {
                    root.draw(&TriangleMarker::new((x + 12, y), 6, colour.filled()))?
                }
                Glyph::Violation => {
                    root.draw(&PathElement::new(
                        vec![(x, y), (x + 24, y)],
                        VIOLATION_RED.stroke_width(2),
                    ))?;
                    root.draw(&Circle::new((x + 12, y), 7, VIOLATION_RED.stroke_width(2)))?;
                }
            }
            let label = if tokens_repeat && row == 0 && x == left {
                repeating_colours_text()
            } else {
                label.to_string()
            };
            root.draw(&Text::new(label.clone(), (x + 30, y), style.clone()))?;
            let (width, _) = root.estimate_text_size(&label, &style)?;
            x += 30 + width as i32 + 26;
        }
    }
    Ok(())
}

/// A round tick step (1, 2 or 5 times a power of ten, in ns) giving about ten ticks.
fn tick_step_ns(span_ns: u64) -> u64 {
    let target = (span_ns / 10).max(1);
    let mut power: u64 = 1_000;
    loop {
        for factor in [1, 2, 5] {
            if factor * power >= target {
                return factor * power;
            }
        }
        power *= 10;
    }
}

/// `t_ns` in seconds with as many decimals as `step_ns` needs.
fn format_seconds(t_ns: u64, step_ns: u64) -> String {
    let decimals = match step_ns {
        s if s >= 1_000_000_000 => 0,
        s if s >= 100_000_000 => 1,
        s if s >= 10_000_000 => 2,
        s if s >= 1_000_000 => 3,
        _ => 6,
    };
    format!("{:.*}", decimals, t_ns as f64 / 1e9)
}

#[cfg(test)]
mod tests;
