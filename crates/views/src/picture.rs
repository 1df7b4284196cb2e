//! The timeline picture of one run (SVG or PNG, drawn with plotters): one lane per node,
//! lease epochs as the service saw them (the checker's tenures, `fencesim_check::index`) and
//! as holders believed them, faults as blocks, writes as markers, violations joined to their
//! evidence, and a legend, in the plot kit's embedded font (`fencesim-plot`).
//!
//! This module is the API, the picture's sizes and colours and the window; `layout` turns a
//! history into lanes, rows and a header, `shapes` its events into bars and marks, `draw`
//! puts a layout in pixels (lanes, axis, bars, marks, violations and their labels, legend).

use fencesim_check::Violation;
use fencesim_model::{history::History, NS_PER_MS};
use fencesim_scenario::plan::FaultPlan;
use plotters::style::RGBColor;

use layout::Layout;

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
    fencesim_plot::svg((WIDTH_PX, layout.height_px), &layout).map_err(PictureError)
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
    fencesim_plot::png((WIDTH_PX, layout.height_px), &layout).map_err(PictureError)
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

mod draw;
mod layout;
mod shapes;

#[cfg(test)]
mod tests;
