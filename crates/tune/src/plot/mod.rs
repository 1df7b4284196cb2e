//! Pictures of a tune sweep, drawn with plotters (SVG and PNG, embedded font), each showing
//! the decision, not just the data:
//! - the metrics panel (`metrics`): each metric against the first varied field;
//! - the trade-off (`tradeoff`): false expiries per hour of fault exposure against the
//!   ranking metric's p99, the Pareto front through the settings meeting every target.
//!
//! Markers: ● meets the targets, ✕ unsafe, ■ fails (or is undecided on) the outage target,
//! ▲ over the false-expiry budget (or undecided against it). Every interval is drawn, and an
//! interval missing a bound (a p99 under 368 samples has no upper bound) is drawn open: dashed
//! to the plot's edge, with an arrowhead, never closed at the point. Axes fit the data and
//! turn logarithmic when the values span more than 10×; labels are exact values (`7250`, not
//! `7.3k`), thinned so they never overlap. A picture with nothing to draw says what is
//! missing and why instead of staying blank.

use plotters::{
    coord::{types::RangedCoordf64, Shift},
    prelude::*,
    style::text_anchor::{HPos, Pos, VPos},
};

mod metrics;
mod tradeoff;

use crate::report::{round, Decision, Quantiles, SettingResult, TuneReport};
use fencesim_plot::{encode_png, font, register_font, INK};

/// Size of the metrics panel picture.
pub const METRICS_PX: (u32, u32) = (1800, 1300);
/// Size of the trade-off picture.
pub const PARETO_PX: (u32, u32) = (1400, 900);

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(140, 86, 75),
    RGBColor(44, 160, 44),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
];
const GRID: RGBColor = RGBColor(225, 225, 225);
const RECOMMENDED: RGBColor = RGBColor(0, 150, 70);
const UNSAFE: RGBColor = RGBColor(214, 39, 40);
const OUTAGE: RGBColor = RGBColor(148, 103, 189);
const BUDGET: RGBColor = RGBColor(255, 127, 14);
const MEETS: RGBColor = RGBColor(31, 119, 180);
const TARGET: RGBColor = RGBColor(214, 39, 40);
/// The seed counts under the points.
const SEEDS: RGBColor = RGBColor(110, 110, 110);

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Why a setting is drawn as it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Meets,
    Unsafe,
    FailsOutage,
    OverBudget,
}

fn status(s: &SettingResult) -> Status {
    if s.safety == Decision::Fails {
        Status::Unsafe
    } else if matches!(s.outage, Decision::Fails | Decision::Open) {
        Status::FailsOutage
    } else if matches!(s.false_expiry, Decision::Fails | Decision::Open) || !s.meets_targets {
        Status::OverBudget
    } else {
        Status::Meets
    }
}

impl Status {
    const ALL: [Status; 4] = [
        Status::Meets,
        Status::OverBudget,
        Status::FailsOutage,
        Status::Unsafe,
    ];

    fn label(self) -> &'static str {
        match self {
            Status::Meets => "meets the targets",
            Status::Unsafe => "unsafe (I3/I4, panic or runaway)",
            Status::FailsOutage => "fails or undecided: outage target",
            Status::OverBudget => "over the false-expiry budget or undecided",
        }
    }

    fn colour(self) -> RGBColor {
        match self {
            Status::Meets => MEETS,
            Status::Unsafe => UNSAFE,
            Status::FailsOutage => OUTAGE,
            Status::OverBudget => BUDGET,
        }
    }
}

/// A marker for `status` at pixel offset (0, 0), as a drawable element.
fn marker<DB: DrawingBackend, C>(
    chart: &mut ChartContext<'_, DB, C>,
    at: C::From,
    st: Status,
    size: i32,
) -> DrawResult<DB>
where
    C: plotters::coord::CoordTranslate,
    C::From: Clone,
{
    let c = st.colour();
    match st {
        Status::Meets => {
            chart.plotting_area().draw(&EmptyElement::at(at.clone()))?;
            chart
                .plotting_area()
                .draw(&(EmptyElement::at(at) + Circle::new((0, 0), size, c.filled())))
        }
        Status::Unsafe => chart.plotting_area().draw(
            &(EmptyElement::at(at)
                + PathElement::new(vec![(-size, -size), (size, size)], c.stroke_width(3))
                + PathElement::new(vec![(-size, size), (size, -size)], c.stroke_width(3))),
        ),
        Status::FailsOutage => chart.plotting_area().draw(
            &(EmptyElement::at(at) + Rectangle::new([(-size, -size), (size, size)], c.filled())),
        ),
        Status::OverBudget => chart.plotting_area().draw(
            &(EmptyElement::at(at)
                + Polygon::new(
                    vec![(0, -size - 2), (size + 1, size), (-size - 1, size)],
                    c.filled(),
                )),
        ),
    }
}

/// A plotted axis: linear, or log10 with zeros drawn at a floor (labelled "0").
#[derive(Clone, Copy)]
struct Axis {
    log: bool,
    floor: f64,
    /// Log axis only: some value is zero (or below), drawn at `floor` with the tick "0".
    zero: bool,
    low: f64,
    high: f64,
}

impl Axis {
    /// Fits `values` (non-negative quantities when `non_negative`): log when the positive
    /// values span more than 10×.
    fn fit(values: &[f64], non_negative: bool) -> Axis {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let positive: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
        let min_pos = positive.iter().copied().fold(f64::INFINITY, f64::min);
        let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
        if finite.is_empty() {
            return Axis {
                log: false,
                floor: 0.0,
                zero: false,
                low: 0.0,
                high: 1.0,
            };
        }
        if non_negative && positive.len() >= 2 && max / min_pos > 10.0 {
            let zero = finite.iter().any(|v| *v <= 0.0);
            // A zero sits a third of a decade below the smallest positive value, labelled "0".
            let floor = if zero { min_pos / 3.0 } else { min_pos };
            let (lo, hi) = (floor.log10(), max.log10());
            let pad = (hi - lo).max(0.1) * 0.06;
            return Axis {
                log: true,
                floor,
                zero,
                low: lo - pad,
                high: hi + pad,
            };
        }
        let (mut lo, mut hi) = (min, max);
        let magnitude = hi.abs().max(lo.abs());
        if hi - lo < 1e-9 {
            let half = (hi.abs() * 0.1).max(0.5);
            lo -= half;
            hi += half;
        } else if hi - lo < 0.02 * magnitude {
            // Values this close (p99s of 26,589 and 26,590 ms) would give every tick the same
            // label: the axis spans 2 % of their size, so its ticks read apart and the points
            // are drawn (rightly) almost on top of each other.
            let (mid, half) = ((hi + lo) / 2.0, 0.01 * magnitude);
            lo = mid - half;
            hi = mid + half;
        }
        let pad = (hi - lo) * 0.08;
        // A non-negative axis starts at 0, a little below it when a value is 0, so a marker
        // there is not cut by the axis line.
        let low = if non_negative && lo - pad < 0.0 && lo >= 0.0 {
            if lo == 0.0 {
                -pad * 0.6
            } else {
                0.0
            }
        } else {
            lo - pad
        };
        Axis {
            log: false,
            floor: 0.0,
            zero: false,
            low,
            high: hi + pad,
        }
    }

    fn to(&self, v: f64) -> f64 {
        if self.log {
            v.max(self.floor).log10()
        } else {
            v
        }
    }

    fn from(&self, y: f64) -> f64 {
        if self.log {
            10f64.powf(y)
        } else {
            y
        }
    }

    /// Tick positions (in plotted units) at round values, about `count` of them.
    fn ticks(&self, count: usize) -> Vec<f64> {
        if self.log {
            let mut out = Vec::new();
            // The zero row first (so thinning keeps it), and no decade tick below it: a value
            // drawn there is 0, not "0.0001".
            let bottom = if self.zero {
                out.push(self.floor.log10());
                self.floor.log10()
            } else {
                self.low
            };
            let (lo, hi) = (self.low.floor() as i32, self.high.ceil() as i32);
            let decades = (hi - lo).max(1) as usize;
            let steps: &[f64] = if decades <= 2 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0]
            };
            for e in lo..=hi {
                for m in steps {
                    let y = (m * 10f64.powi(e)).log10();
                    if y > bottom && y >= self.low && y <= self.high {
                        out.push(y);
                    }
                }
            }
            return out;
        }
        nice_ticks(self.low, self.high, count)
    }

    fn label(&self, y: f64) -> String {
        if self.zero && (y - self.floor.log10()).abs() < 1e-12 {
            return "0".to_string();
        }
        number(self.from(y))
    }

    fn suffix(&self) -> &'static str {
        match (self.log, self.zero) {
            (true, true) => " (log scale; 0 at the bottom)",
            (true, false) => " (log scale)",
            _ => "",
        }
    }
}

/// Round ticks between `low` and `high`: steps of 1, 2 or 5 × 10^k.
fn nice_ticks(low: f64, high: f64, count: usize) -> Vec<f64> {
    let span = (high - low).max(1e-12);
    let raw = span / count.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut t = (low / step).ceil() * step;
    while t <= high + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// An exact label: 4 significant digits, no `k` abbreviations.
fn number(x: f64) -> String {
    format!("{}", round(x))
}

/// Keeps the ticks whose labels do not overlap at `px_per_unit` pixels per plotted unit
/// (labels about 8 px per character plus a gap).
fn thin(ticks: Vec<(f64, String)>, px_per_unit: f64) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    for (x, label) in ticks {
        let fits = out.last().is_none_or(|(last, last_label)| {
            (x - last).abs() * px_per_unit >= 4.5 * (last_label.len() + label.len()) as f64 + 12.0
        });
        if fits {
            out.push((x, label));
        }
    }
    out
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Grid lines and exact tick labels at the given plotted positions (plotters' own labels
/// are off: they would round and abbreviate). Labels go on `root` in pixels.
fn draw_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut Chart<'_, DB>,
    x: (&Axis, &[(f64, String)]),
    y: (&Axis, &[(f64, String)]),
    size: f64,
) -> DrawResult<DB> {
    let (x_axis, x_ticks) = x;
    let (y_axis, y_ticks) = y;
    for (t, label) in x_ticks {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(*t, y_axis.low), (*t, y_axis.high)],
            GRID.stroke_width(1),
        )))?;
        let (px, py) = chart.backend_coord(&(*t, y_axis.low));
        root.draw(&Text::new(
            label.clone(),
            (px, py + 6),
            font(size).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    for (t, label) in y_ticks {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x_axis.low, *t), (x_axis.high, *t)],
            GRID.stroke_width(1),
        )))?;
        let (px, py) = chart.backend_coord(&(x_axis.low, *t));
        root.draw(&Text::new(
            label.clone(),
            (px - 6, py),
            font(size).pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// A dashed horizontal line at plotted `y` across the chart.
fn dashed<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    x_axis: &Axis,
    y: f64,
    colour: RGBColor,
) -> DrawResult<DB> {
    let n = 60;
    let step = (x_axis.high - x_axis.low) / n as f64;
    chart.draw_series((0..n).step_by(2).map(|k| {
        let x0 = x_axis.low + step * k as f64;
        PathElement::new(vec![(x0, y), (x0 + step, y)], colour.stroke_width(2))
    }))?;
    Ok(())
}

/// Pixel points every 4 px along the segment `a`–`b` (obstacles for [`boxed_label`]).
fn sample_segment(a: (i32, i32), b: (i32, i32), out: &mut Vec<(i32, i32)>) {
    let steps = ((a.0 - b.0).abs().max((a.1 - b.1).abs()) / 4).max(1);
    for k in 0..=steps {
        out.push((a.0 + (b.0 - a.0) * k / steps, a.1 + (b.1 - a.1) * k / steps));
    }
}

/// Draws `text` on `root` in a white box beside a horizontal line at pixel height `line_y`
/// running from `x0` to `x1`: above or below it, at the left, middle or right, wherever
/// its box covers the fewest `obstacles` (pixel points of markers, bars and lines), so the
/// label never hides the evidence when there is room for it elsewhere.
#[allow(clippy::too_many_arguments)] // pixel geometry, local only
fn boxed_label<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    size: f64,
    colour: RGBColor,
    line_y: i32,
    x0: i32,
    x1: i32,
    obstacles: &[(i32, i32)],
) -> DrawResult<DB> {
    let w = (text.chars().count() as f64 * size * 0.56) as i32 + 8;
    let h = size as i32 + 6;
    let mut best: Option<(usize, (i32, i32))> = None;
    for fx in [0.01, 0.3, 0.55, 1.0] {
        let x = (x0 + ((x1 - x0) as f64 * fx) as i32)
            .min(x1 - w - 2)
            .max(x0 + 2);
        for y in [line_y - h - 3, line_y + 3] {
            let covered = obstacles
                .iter()
                .filter(|(px, py)| {
                    *px >= x - 6 && *px <= x + w + 6 && *py >= y - 6 && *py <= y + h + 6
                })
                .count();
            if best.is_none_or(|(n, _)| covered < n) {
                best = Some((covered, (x, y)));
            }
        }
    }
    let (x, y) = best.map_or((x0 + 2, line_y - h - 3), |b| b.1);
    root.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        WHITE.mix(0.85).filled(),
    ))?;
    root.draw(&Text::new(
        text.to_string(),
        (x + 4, y + 3),
        font(size).color(&colour),
    ))
}

/// A value with its 95 % interval as drawn: (value, low, high); a missing end is open (no
/// such bound: too few samples), drawn dashed to the plot's edge.
type Bounds = (f64, Option<f64>, Option<f64>);

fn q99(q: &Quantiles) -> Option<Bounds> {
    Some((q.p99?, q.p99_low, q.p99_high))
}

fn q50(q: &Quantiles) -> Option<Bounds> {
    Some((q.p50?, q.p50_low, q.p50_high))
}

/// An open end of an interval: a dashed line from `from` to the plot's edge at `to`, ending
/// in an arrowhead (plotted units; the line is vertical or horizontal).
fn open_end<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    from: (f64, f64),
    to: (f64, f64),
    colour: RGBColor,
) -> DrawResult<DB> {
    let (a, b) = (chart.backend_coord(&from), chart.backend_coord(&to));
    let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()) / 6).max(1);
    let at = |k: i32| (a.0 + (b.0 - a.0) * k / steps, a.1 + (b.1 - a.1) * k / steps);
    let area = chart.plotting_area().strip_coord_spec();
    let (ox, oy) = area.get_base_pixel();
    for k in (0..steps).step_by(2) {
        let (p, q) = (at(k), at(k + 1));
        area.draw(&PathElement::new(
            vec![(p.0 - ox, p.1 - oy), (q.0 - ox, q.1 - oy)],
            colour.mix(0.8).stroke_width(2),
        ))?;
    }
    arrowhead(chart, from, to, colour)
}

/// `c` blended with white: `share` of `c` (an opaque colour, so overlapping bars stay legible).
fn lighten(c: RGBColor, share: f64) -> RGBColor {
    let blend = |v: u8| (v as f64 * share + 255.0 * (1.0 - share)).round() as u8;
    RGBColor(blend(c.0), blend(c.1), blend(c.2))
}

/// An arrowhead (an open chevron) at `to`, pointing away from `from` (plotted units, along
/// one axis).
fn arrowhead<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    from: (f64, f64),
    to: (f64, f64),
    colour: RGBColor,
) -> DrawResult<DB> {
    let (a, b) = (chart.backend_coord(&from), chart.backend_coord(&to));
    let area = chart.plotting_area().strip_coord_spec();
    let (ox, oy) = area.get_base_pixel();
    let (dx, dy) = ((b.0 - a.0).signum(), (b.1 - a.1).signum());
    if dx == 0 && dy == 0 {
        return Ok(());
    }
    // An open chevron, not a filled triangle: a ▲ marker means "over the budget".
    let tip = (b.0 - ox, b.1 - oy);
    let (l, r) = if dx != 0 {
        ((tip.0 - 8 * dx, tip.1 - 5), (tip.0 - 8 * dx, tip.1 + 5))
    } else {
        ((tip.0 - 5, tip.1 - 8 * dy), (tip.0 + 5, tip.1 - 8 * dy))
    };
    area.draw(&PathElement::new(vec![l, tip, r], colour.stroke_width(2)))
}

/// The legend of the markers, drawn in a strip.
fn draw_marker_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x0: i32,
    y: i32,
) -> DrawResult<DB> {
    let mut x = x0;
    for st in Status::ALL {
        let c = st.colour();
        let at = (x + 8, y + 7);
        match st {
            Status::Meets => area.draw(&Circle::new(at, 6, c.filled()))?,
            Status::Unsafe => {
                area.draw(&PathElement::new(
                    vec![(at.0 - 6, at.1 - 6), (at.0 + 6, at.1 + 6)],
                    c.stroke_width(3),
                ))?;
                area.draw(&PathElement::new(
                    vec![(at.0 - 6, at.1 + 6), (at.0 + 6, at.1 - 6)],
                    c.stroke_width(3),
                ))?;
            }
            Status::FailsOutage => area.draw(&Rectangle::new(
                [(at.0 - 6, at.1 - 6), (at.0 + 6, at.1 + 6)],
                c.filled(),
            ))?,
            Status::OverBudget => area.draw(&Polygon::new(
                vec![(at.0, at.1 - 8), (at.0 + 7, at.1 + 6), (at.0 - 7, at.1 + 6)],
                c.filled(),
            ))?,
        }
        area.draw(&Text::new(st.label(), (x + 22, y), font(15.0)))?;
        x += 40 + 8 * st.label().len() as i32;
    }
    area.draw(&Circle::new(
        (x + 8, y + 7),
        10,
        RECOMMENDED.stroke_width(3),
    ))?;
    area.draw(&Text::new("recommended", (x + 24, y), font(15.0)))?;
    x += 140;
    area.draw(&PathElement::new(
        vec![(x, y + 7), (x + 30, y + 7)],
        TARGET.stroke_width(2),
    ))?;
    area.draw(&Text::new("target", (x + 36, y), font(15.0)))?;
    Ok(())
}
/// Ticks of a vertical axis `px_h` pixels high: about `count`, at least a label's height
/// apart (vertical labels need only their height).
fn vertical_ticks(axis: &Axis, count: usize, px_h: u32) -> Vec<(f64, String)> {
    let px = (px_h as f64 - 100.0) / (axis.high - axis.low).max(1e-12);
    let mut out: Vec<(f64, String)> = Vec::new();
    for y in axis.ticks(count) {
        if out
            .last()
            .is_none_or(|last| (y - last.0).abs() * px >= 18.0)
        {
            out.push((y, axis.label(y)));
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Which {
    Metrics,
    Pareto,
}

impl Which {
    fn draw<DB: DrawingBackend>(
        self,
        root: &DrawingArea<DB, Shift>,
        report: &TuneReport,
    ) -> DrawResult<DB> {
        match self {
            Which::Metrics => metrics::draw_metrics(root, report),
            Which::Pareto => tradeoff::draw_pareto(root, report),
        }
    }
}

fn svg(size: (u32, u32), report: &TuneReport, draw: Which) -> Result<String, String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        draw.draw(&root, report).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}

fn png(size: (u32, u32), report: &TuneReport, draw: Which) -> Result<Vec<u8>, String> {
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw.draw(&root, report).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    encode_png(&rgb, size.0, size.1)
}

/// Each metric against the first varied field, as SVG.
pub fn tune_metrics_svg(report: &TuneReport) -> Result<String, String> {
    svg(METRICS_PX, report, Which::Metrics)
}

/// Each metric against the first varied field, as PNG.
pub fn tune_metrics_png(report: &TuneReport) -> Result<Vec<u8>, String> {
    png(METRICS_PX, report, Which::Metrics)
}

/// The trade-off with the Pareto front and the recommendation, as SVG.
pub fn tune_pareto_svg(report: &TuneReport) -> Result<String, String> {
    svg(PARETO_PX, report, Which::Pareto)
}

/// The trade-off with the Pareto front and the recommendation, as PNG.
pub fn tune_pareto_png(report: &TuneReport) -> Result<Vec<u8>, String> {
    png(PARETO_PX, report, Which::Pareto)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{FieldValue, Pick, Rate, SeedShare, Targets};

    fn report() -> TuneReport {
        let settings = (0..4)
            .map(|k| {
                let ttl = 7_250 + 2_000 * k;
                let q = |base: f64| Quantiles {
                    count: 10,
                    p50: Some(base),
                    p50_low: Some(base * 0.9),
                    p50_high: Some(base * 1.1),
                    p99: Some(base * 1.2),
                    p99_low: Some(base),
                    p99_high: None,
                };
                SettingResult {
                    values: vec![FieldValue {
                        field: "lease.ttl_ms".into(),
                        value: ttl.to_string(),
                    }],
                    ttl_ms: ttl,
                    runs: 10,
                    unsafe_seeds: SeedShare {
                        seeds: u64::from(k == 0),
                        of: 10,
                        low: 0.0,
                        high: 0.28,
                    },
                    safety: if k == 0 {
                        Decision::Fails
                    } else {
                        Decision::Meets
                    },
                    false_expiries: Rate {
                        count: 40 / (k + 1),
                        exposure_h: 10.0,
                        per_hour: 4.0 / (k + 1) as f64,
                        low: 2.0 / (k + 1) as f64,
                        high: 6.0 / (k + 1) as f64,
                        exact: None,
                    },
                    recovery_after_crash_ms: q(ttl as f64),
                    meets_targets: k > 1,
                    ..SettingResult::default()
                }
            })
            .collect();
        TuneReport {
            scenario: "plot-test".into(),
            seeds: "0..10".into(),
            settings,
            targets: Targets {
                max_false_expiry_per_hour: Some(1.5),
                ..Targets::default()
            },
            pareto: vec![1, 2, 3],
            recommendation: Pick {
                setting: Some(2),
                reason: "test".into(),
            },
            ..TuneReport::default()
        }
    }

    #[test]
    fn pictures_are_valid_svg_and_decodable_png_of_the_stated_size() {
        let report = report();
        for svg in [
            tune_metrics_svg(&report).unwrap(),
            tune_pareto_svg(&report).unwrap(),
        ] {
            let doc = roxmltree::Document::parse(&svg).expect("valid XML");
            assert_eq!(doc.root_element().tag_name().name(), "svg");
            assert!(svg.contains("lease.ttl_ms") || svg.contains("crash recovery"));
            // Exact labels, never abbreviated; the target and the marker legend drawn.
            assert!(svg.contains("7250"), "exact label");
            assert!(!svg.contains("7.3k"));
            assert!(svg.contains("target"));
            assert!(svg.contains("unsafe (I3/I4, panic or runaway)"));
        }
        for (png, size) in [
            (tune_metrics_png(&report).unwrap(), METRICS_PX),
            (tune_pareto_png(&report).unwrap(), PARETO_PX),
        ] {
            let decoder = png::Decoder::new(png.as_slice());
            let reader = decoder.read_info().expect("a PNG");
            assert_eq!((reader.info().width, reader.info().height), size);
        }
        assert_eq!(
            tune_pareto_png(&report).unwrap(),
            tune_pareto_png(&report).unwrap()
        );
    }

    #[test]
    fn the_outage_target_and_each_points_seeds_are_drawn() {
        let mut report = report();
        let svg = tune_metrics_svg(&report).unwrap();
        assert!(svg.contains("not asked: no outage target (--survive-outage-ms)"));
        report.targets.survive_outage_ms = Some(60_000);
        for (k, s) in report.settings.iter_mut().enumerate() {
            s.runs = 100 * (k as u64 + 1);
            s.outage_runs = vec![crate::report::OutageRun {
                form: "holder-link-cut".into(),
                failed_seeds: crate::stats::seed_share(k as u64, s.runs),
                ..crate::report::OutageRun::default()
            }];
        }
        let svg = tune_metrics_svg(&report).unwrap();
        assert!(
            svg.contains("survive 60000 ms: none failed, upper bound ≤ 1 %"),
            "the outage target's line is labelled"
        );
        // The seed counts are the grey texts.
        let grey: Vec<&str> = svg
            .split("fill=\"#6E6E6E\">")
            .skip(1)
            .filter_map(|rest| rest.split("</text>").next())
            .map(str::trim)
            .collect();
        for runs in ["100", "200", "300", "400"] {
            assert!(grey.contains(&runs), "seeds {runs} drawn: {grey:?}");
        }
        let svg = tune_pareto_svg(&report).unwrap();
        assert!(
            svg.contains("(300 seeds)"),
            "each point labelled with its seeds"
        );
    }

    #[test]
    fn a_picture_without_samples_says_what_is_missing() {
        let mut report = report();
        for s in &mut report.settings {
            s.recovery_after_crash_ms = Quantiles::default();
        }
        let svg = tune_pareto_svg(&report).unwrap();
        assert!(
            svg.contains("nothing to draw: no setting has a sample"),
            "{svg}"
        );
        let svg = tune_metrics_svg(&report).unwrap();
        assert!(svg.contains("no sample in any setting: no crash of a holder"));
        let empty = TuneReport::default();
        assert!(tune_metrics_svg(&empty)
            .unwrap()
            .contains("nothing to draw"));
        assert!(tune_pareto_svg(&empty).unwrap().contains("nothing to draw"));
    }

    #[test]
    fn axes_turn_logarithmic_beyond_a_tenfold_span() {
        assert!(Axis::fit(&[0.375, 1.0, 45.0], true).log);
        assert!(!Axis::fit(&[2.0, 3.0, 15.0], true).log);
        let a = Axis::fit(&[0.0, 0.5, 40.0], true);
        assert!(a.log);
        assert!(a.to(0.0).is_finite(), "zero drawn at the floor");
        assert_eq!(number(7250.0), "7250");
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
    }

    #[test]
    fn values_a_hair_apart_get_an_axis_whose_tick_labels_differ() {
        // tune-jvm-gc's trade-off: every p99 is 26,589 or 26,590 ms.
        let a = Axis::fit(&[26_589.0, 26_590.0, 26_589.0], true);
        let labels: Vec<String> = a.ticks(6).iter().map(|t| a.label(*t)).collect();
        assert!(labels.len() >= 3, "{labels:?}");
        let mut distinct = labels.clone();
        distinct.dedup();
        assert_eq!(distinct, labels, "no label repeated");
        assert!(a.low < 26_589.0 && a.high > 26_590.0);
        // A wide span is left as it was.
        let b = Axis::fit(&[1_000.0, 2_000.0], false);
        assert!(b.low > 900.0 && b.high < 2_100.0, "{} {}", b.low, b.high);
    }

    #[test]
    fn a_zero_on_a_log_axis_is_labelled_0_and_no_tick_lies_below_it() {
        let a = Axis::fit(&[0.0, 0.05, 40.0], true);
        let ticks = a.ticks(5);
        assert_eq!(
            a.label(ticks[0]),
            "0",
            "the zero row comes first, labelled 0"
        );
        assert_eq!(ticks[0], a.to(0.0), "at the height zeros are drawn");
        assert!(ticks[1..].iter().all(|t| *t > ticks[0]));
        assert!(ticks[1..].iter().all(|t| a.label(*t) != "0"));
        assert!(a.suffix().contains("0 at the bottom"));
        // Without a zero, no "0" tick and the plain suffix.
        let b = Axis::fit(&[0.05, 40.0], true);
        assert!(b.ticks(5).iter().all(|t| b.label(*t) != "0"));
        assert_eq!(b.suffix(), " (log scale)");
        // A linear axis with a zero starts just below 0 (the marker is not cut by the axis).
        let c = Axis::fit(&[0.0, 3.0], true);
        assert!(!c.log && c.low < 0.0 && c.low > -1.0);
    }

    #[test]
    fn a_target_label_goes_where_it_hides_the_fewest_points() {
        // Obstacles crowd the left half above and below the line: the label goes right.
        let obstacles: Vec<(i32, i32)> =
            (0..100).flat_map(|x| [(x * 4, 90), (x * 4, 110)]).collect();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (1000, 200)).into_drawing_area();
            register_font();
            boxed_label(&root, "target 2", 14.0, TARGET, 100, 0, 1000, &obstacles).unwrap();
            root.present().unwrap();
        }
        let x: f64 = svg
            .split("<rect x=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|v| v.parse().ok())
            .expect("a box drawn");
        assert!(
            x > 400.0,
            "box at x={x}, inside the crowded left half: {svg}"
        );
    }
}
