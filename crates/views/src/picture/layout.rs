//! A history as lanes and true time, independent of the backend: which lanes (and rows in
//! them) are shown and how high, the header's lines, and the shapes (`shapes`) and violation
//! marks to draw.

use std::collections::BTreeSet;

use fencesim_check::{index::Index, Violation};
use fencesim_model::{
    history::{EventKind, History},
    nodes,
};
use fencesim_scenario::plan::FaultPlan;

use super::{
    picture_window_ns,
    shapes::{Bar, Mark, Shapes},
    PictureOptions, AXIS_PX, EMPTY_LANE_PX, HEADER_PX, LANE_PX, LEGEND_PX, MAX_SUBTITLE_VIOLATIONS,
    SUBTITLE_CHARS, SUBTITLE_LINE_PX, TOKEN_COLOURS,
};

/// A violation: where its evidence is drawn, and its text.
pub(super) struct ViolationMark {
    pub(super) points: Vec<(usize, u64, f64)>,
    pub(super) invariant: fencesim_model::Invariant,
}

/// Everything to draw, in lanes and true time, independent of the backend.
pub(super) struct Layout {
    pub(super) title: String,
    pub(super) subtitle: Vec<String>,
    /// Title and subtitle lines: where the lanes start.
    pub(super) header_px: u32,
    pub(super) lanes: Vec<(String, String)>,
    /// Each lane's height: [`LANE_PX`], or [`EMPTY_LANE_PX`] when nothing of it is in the
    /// window.
    pub(super) lane_px: Vec<u32>,
    pub(super) window: (u64, u64),
    pub(super) height_px: u32,
    /// Whether the run violated anything (the subtitle is red then, ink otherwise).
    pub(super) violated: bool,
    /// More tokens in the window than colours: the legend says colours repeat.
    pub(super) tokens_repeat: bool,
    pub(super) bars: Vec<Bar>,
    pub(super) marks: Vec<Mark>,
    pub(super) violations: Vec<ViolationMark>,
}

impl Layout {
    pub(super) fn new(
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
pub(super) struct Rows {
    /// Every scope ever granted (the index's scopes, sorted).
    scopes: Vec<String>,
    /// Every resource with an accepted or rejected write, sorted.
    resources: Vec<String>,
}

impl Rows {
    pub(super) fn new(index: &Index<'_>) -> Rows {
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
    pub(super) fn multi_scope(&self) -> bool {
        self.scopes.len() > 1
    }

    /// The band (`y0`, `y1`, fractions of the lane) of `scope`'s row.
    pub(super) fn scope_band(&self, scope: &str) -> (f64, f64) {
        let row = self.scopes.iter().position(|s| s == scope).unwrap_or(0) as f64;
        let height = 0.76 / self.scopes.len().max(1) as f64;
        (0.12 + row * height, 0.12 + (row + 0.85) * height)
    }

    /// Where `resource`'s write marks sit (a fraction of the storage's lane).
    pub(super) fn resource_y(&self, resource: &str) -> f64 {
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
