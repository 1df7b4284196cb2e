//! A layout in pixels, the same on every backend: the header, the lanes and their names, the
//! time axis, the bars with their labels, the marks with theirs (skipped where they would run
//! into the previous one), the violations circled and joined with their labels placed clear
//! of each other (`fencesim_plot::labels`), and the legend. Every text size is even (see
//! `fencesim_plot::font`).

use std::collections::BTreeMap;

use fencesim_model::Invariant;
use fencesim_plot::{font, labels, Draw, DrawResult, INK};
use plotters::{
    coord::Shift,
    prelude::*,
    style::text_anchor::{HPos, Pos, VPos},
};

use super::{
    layout::Layout,
    shapes::{Mark, Shape},
    CLOCK_TEAL, CRASH_BLACK, GC_GREY, GRID, HOLD_BROWN, LABEL_GAP_PX, LANE_PX, LANE_SHADE, NAME_PX,
    PARTITION_ORANGE, SUBTITLE_LINE_PX, TOKEN_COLOURS, VIOLATION_RED, VM_PURPLE, WIDTH_PX,
};

impl Draw for Layout {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        draw(root, self)
    }
}

/// Draws `layout` on `root`. Everything is positioned in pixels from the layout, so both
/// backends draw the same picture.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, layout: &Layout) -> DrawResult<DB> {
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
    // About ten ticks, at least a microsecond apart.
    let step_ns = fencesim_plot::ticks::round_step(end_ns - start_ns, 10, 1_000);
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
) -> Result<Vec<(labels::Label, String)>, DrawingAreaErrorKind<DB::ErrorType>> {
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
        let label = labels::Label {
            anchor,
            width: width as i32,
            height: height as i32,
            band: (top, top + frame.lane_height(lane)),
        };
        labels.push((label, text));
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
    requests: &[(labels::Label, String)],
    frame: &Frame,
) -> DrawResult<DB> {
    let label_style = violation_label_style();
    let boxes: Vec<labels::Label> = requests.iter().map(|(label, _)| *label).collect();
    let placed = labels::place(&boxes, (frame.plot_left, frame.plot_right));
    for ((label, text), at) in requests.iter().zip(placed) {
        let (left, top, right, bottom) = label.rect(at);
        root.draw(&Rectangle::new(
            [(left, top), (right, bottom)],
            WHITE.mix(0.9).filled(),
        ))?;
        root.draw(&Text::new(text.clone(), at, label_style.clone()))?;
    }
    Ok(())
}

/// Violating events closer than this (in pixels) in one lane share one label.
const CLUSTER_PX: i32 = 120;

/// `I4 violated (no superseded accept)`, `I3 + I4 violated (no stale accept; no superseded
/// accept)`, with `×N` when the label stands for N violating events.
pub(super) fn violation_label(invariants: &[Invariant], events: usize) -> String {
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
pub(super) fn repeating_colours_text() -> String {
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
