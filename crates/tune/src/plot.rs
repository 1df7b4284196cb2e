//! Pictures of a tune sweep, drawn with plotters (SVG and PNG, embedded font), each showing
//! the decision, not just the data:
//! - the metrics panel: each metric against the first varied field, one line per value of
//!   the other varied fields, its 95 % interval as a band, the target as a dashed line on
//!   the false-expiry panel, and every setting's marker saying what decided it;
//! - the trade-off: false expiries per hour of fault exposure against the ranking metric's
//!   p99, interval bars on both axes, the target line, the Pareto front through safe
//!   settings only, and the recommendation ringed.
//!
//! Markers: ● meets the targets, ✕ unsafe, ■ fails the outage target, ▲ over the
//! false-expiry budget (or undecided against it). Axes fit the data and turn logarithmic
//! when the values span more than 10×; labels are exact values (`7250`, not `7.3k`),
//! thinned so they never overlap. A picture with nothing to draw says what is missing and
//! why instead of staying blank.

use plotters::{
    coord::{types::RangedCoordf64, Shift},
    prelude::*,
    style::text_anchor::{HPos, Pos, VPos},
};

use crate::report::{round, Decision, Quantiles, SettingResult, TuneReport};
use fencesim_plot::{encode_png, font, register_font, INK};

/// Size of the metrics panel picture.
pub const METRICS_PX: (u32, u32) = (1800, 1000);
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
            Status::FailsOutage => "fails the outage target",
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
        if hi - lo < 1e-9 {
            let half = (hi.abs() * 0.1).max(0.5);
            lo -= half;
            hi += half;
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

/// One metric as plotted: its title and per setting its value and interval.
struct Metric {
    title: &'static str,
    of: fn(&SettingResult) -> Option<(f64, f64, f64)>,
    /// Why a setting has no value.
    missing: &'static str,
}

fn q99(q: &Quantiles) -> Option<(f64, f64, f64)> {
    let p = q.p99?;
    Some((p, q.p99_low.unwrap_or(p), q.p99_high.unwrap_or(p)))
}

fn q50(q: &Quantiles) -> Option<(f64, f64, f64)> {
    let p = q.p50?;
    Some((p, q.p50_low.unwrap_or(p), q.p50_high.unwrap_or(p)))
}

const METRICS: [Metric; 8] = [
    Metric {
        title: "false expiries per hour of fault exposure",
        of: |s| {
            let r = &s.false_expiries;
            (r.exposure_h > 0.0).then_some((r.per_hour, r.low, r.high))
        },
        missing: "no fault exposure",
    },
    Metric {
        title: "stand-downs per hour of fault exposure",
        of: |s| {
            let r = &s.stand_downs;
            (r.exposure_h > 0.0).then_some((r.per_hour, r.low, r.high))
        },
        missing: "no fault exposure",
    },
    Metric {
        title: "recovery after crash p99 (ms)",
        of: |s| q99(&s.recovery_after_crash_ms),
        missing: "no crash of a holder",
    },
    Metric {
        title: "recovery after crash p50 (ms)",
        of: |s| q50(&s.recovery_after_crash_ms),
        missing: "no crash of a holder",
    },
    Metric {
        title: "recovery after stall p99 (ms)",
        of: |s| q99(&s.recovery_after_stall_ms),
        missing: "no pause ended in a takeover",
    },
    Metric {
        title: "unsafe seeds (share; I3/I4, panic, runaway)",
        of: |s| {
            let u = &s.unsafe_seeds;
            (u.of > 0).then(|| (u.seeds as f64 / u.of as f64, u.low, u.high))
        },
        missing: "no seed run",
    },
    Metric {
        title: "unavailability (share of time)",
        of: |s| {
            Some((
                s.unavailability.mean,
                s.unavailability.low,
                s.unavailability.high,
            ))
        },
        missing: "",
    },
    Metric {
        title: "renewals per lease per second",
        of: |s| {
            let r = &s.renewals_per_lease_per_s;
            Some((r.mean, r.low, r.high))
        },
        missing: "",
    },
];

/// The x value of a setting: its first varied field, as a number (its index if not one).
fn x_of(index: usize, s: &SettingResult) -> f64 {
    s.values
        .first()
        .and_then(|v| v.value.parse::<f64>().ok())
        .unwrap_or(index as f64)
}

/// The series a setting belongs to: the values of the varied fields after the first that
/// are not derived from another (ratios).
fn series_of(report: &TuneReport, s: &SettingResult) -> String {
    s.values
        .iter()
        .skip(1)
        .filter(|v| !report.derived.contains(&v.field))
        .map(|v| format!("{}={}", v.field, v.value))
        .collect::<Vec<_>>()
        .join(" ")
}

fn series(report: &TuneReport) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &report.settings {
        let name = series_of(report, s);
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

fn x_field(report: &TuneReport) -> String {
    report
        .settings
        .first()
        .and_then(|s| s.values.first())
        .map_or("setting".to_string(), |v| v.field.clone())
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

fn draw_metrics<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &TuneReport,
) -> DrawResult<DB> {
    register_font();
    root.fill(&WHITE)?;
    let (title_area, body) = root.split_vertically(92);
    let names = series(report);
    draw_metrics_title(&title_area, report, &names)?;
    if report.settings.is_empty() {
        body.draw(&Text::new(
            "nothing to draw: the sweep has no setting (every combination was invalid or none was run)",
            (40, 200),
            font(20.0),
        ))?;
        return Ok(());
    }
    let raw: Vec<f64> = report
        .settings
        .iter()
        .enumerate()
        .map(|(i, s)| x_of(i, s))
        .collect();
    let axis = Axis::fit(&raw, true);
    let x = PanelX {
        plotted: raw.iter().map(|x| axis.to(*x)).collect(),
        raw,
        axis,
        field: x_field(report),
    };
    let panels = body.split_evenly((2, 4));
    for (panel, metric) in panels.iter().zip(METRICS.iter()) {
        draw_metric_panel(root, panel, report, &names, &x, metric)?;
    }
    Ok(())
}

/// The metrics panel's title, the marker legend and one colour per series.
fn draw_metrics_title<DB: DrawingBackend>(
    title_area: &DrawingArea<DB, Shift>,
    report: &TuneReport,
    names: &[String],
) -> DrawResult<DB> {
    title_area.draw(&Text::new(
        format!(
            "fencesim tune {} — seeds {} ({}); bands and bars: 95 % intervals",
            report.scenario,
            report.seeds,
            if report.seed_plan.adaptive {
                "first round; adaptive"
            } else {
                "fixed"
            }
        ),
        (20, 12),
        font(22.0),
    ))?;
    draw_marker_legend(title_area, 20, 42)?;
    let mut legend_x = 20;
    for (k, name) in names.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let colour = PALETTE[k % PALETTE.len()];
        title_area.draw(&Rectangle::new(
            [(legend_x, 74), (legend_x + 24, 80)],
            colour.filled(),
        ))?;
        title_area.draw(&Text::new(name.clone(), (legend_x + 30, 68), font(15.0)))?;
        legend_x += 40 + 8 * name.len() as i32;
    }
    Ok(())
}

/// The x axis every metric panel shares: each setting's first varied value, as given and as
/// plotted, and the field's name.
struct PanelX {
    raw: Vec<f64>,
    plotted: Vec<f64>,
    axis: Axis,
    field: String,
}

impl PanelX {
    /// One tick per distinct setting value, thinned to fit a panel `px_w` pixels wide.
    fn ticks(&self, px_w: u32) -> Vec<(f64, String)> {
        let mut sorted: Vec<(f64, String)> = self
            .plotted
            .iter()
            .zip(&self.raw)
            .map(|(x, raw)| (*x, number(*raw)))
            .collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        sorted.dedup_by(|a, b| a.0 == b.0);
        let px = (px_w as f64 - 100.0) / (self.axis.high - self.axis.low).max(1e-12);
        thin(sorted, px)
    }
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

/// A setting as one metric panel plots it: (setting, plotted x, value, low, high).
type MetricPoint = (usize, f64, f64, f64, f64);

/// One metric's panel: its title and what is not drawn, the axes, the target, each series'
/// band and line, every setting's marker, and the recommendation ringed.
fn draw_metric_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panel: &DrawingArea<DB, Shift>,
    report: &TuneReport,
    names: &[String],
    x: &PanelX,
    metric: &Metric,
) -> DrawResult<DB> {
    let points: Vec<MetricPoint> = report
        .settings
        .iter()
        .enumerate()
        .filter_map(|(i, s)| (metric.of)(s).map(|(v, lo, hi)| (i, x.plotted[i], v, lo, hi)))
        .collect();
    let target = (metric.title.starts_with("false expiries"))
        .then_some(report.targets.max_false_expiry_per_hour)
        .flatten();
    let mut ys: Vec<f64> = points.iter().flat_map(|p| [p.2, p.3, p.4]).collect();
    ys.extend(target);
    let y_axis = Axis::fit(&ys, true);
    let (px_w, px_h) = panel.dim_in_pixel();
    let x_ticks = x.ticks(px_w);
    let y_ticks = vertical_ticks(&y_axis, 5, px_h);
    // The title (and, under it, what is not drawn) above the plot, never over its ticks.
    let missing = report.settings.len() - points.len();
    let note = (missing > 0 && !metric.missing.is_empty() && !points.is_empty())
        .then(|| format!("{missing} setting(s) not drawn: {}", metric.missing));
    draw_panel_title(panel, metric.title, note.as_deref())?;
    let mut chart = ChartBuilder::on(panel)
        .margin(12)
        .margin_top(if note.is_some() { 52 } else { 36 })
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x.axis.low..x.axis.high, y_axis.low..y_axis.high)?;
    let x_desc = format!("{}{}", x.field, x.axis.suffix());
    let y_suffix = y_axis.suffix();
    chart
        .configure_mesh()
        .disable_mesh()
        .axis_style(INK)
        .label_style(font(13.0))
        .axis_desc_style(font(14.0))
        .x_desc(x_desc.as_str())
        .y_desc(y_suffix.trim())
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|_| String::new())
        .draw()?;
    draw_ticks(
        root,
        &mut chart,
        (&x.axis, &x_ticks),
        (&y_axis, &y_ticks),
        13.0,
    )?;
    if let Some(t) = target {
        dashed(&mut chart, &x.axis, y_axis.to(t), TARGET)?;
    }
    if points.is_empty() {
        return draw_no_value(&mut chart, &x.axis, &y_axis, metric);
    }
    draw_series_bands(&mut chart, report, names, &points, &y_axis)?;
    for p in &points {
        let st = status(&report.settings[p.0]);
        marker(&mut chart, (p.1, y_axis.to(p.2)), st, 5)?;
    }
    if let Some(t) = target {
        // Drawn after the data so its box is placed where it hides the least of it.
        draw_panel_target_label(root, &chart, &points, (&x.axis, &y_axis), t)?;
    }
    if let Some(r) = report.recommendation.setting {
        if let Some(p) = points.iter().find(|p| p.0 == r) {
            chart.draw_series(std::iter::once(Circle::new(
                (p.1, y_axis.to(p.2)),
                11,
                RECOMMENDED.stroke_width(3),
            )))?;
        }
    }
    Ok(())
}

/// A panel's title and, under it, the `note` on what is not drawn.
fn draw_panel_title<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    title: &str,
    note: Option<&str>,
) -> DrawResult<DB> {
    let px_w = panel.dim_in_pixel().0;
    panel.draw(&Text::new(
        title,
        (px_w as i32 / 2, 10),
        font(17.0).pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    if let Some(note) = note {
        panel.draw(&Text::new(
            note.to_string(),
            (px_w as i32 / 2, 32),
            font(13.0).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    Ok(())
}

/// A panel with no value in any setting says why.
fn draw_no_value<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    x_axis: &Axis,
    y_axis: &Axis,
    metric: &Metric,
) -> DrawResult<DB> {
    let why = if metric.missing.is_empty() {
        "no value".to_string()
    } else {
        format!("no sample in any setting: {}", metric.missing)
    };
    chart.draw_series(std::iter::once(Text::new(
        why,
        (
            x_axis.low + (x_axis.high - x_axis.low) * 0.05,
            (y_axis.low + y_axis.high) / 2.0,
        ),
        font(15.0),
    )))?;
    Ok(())
}

/// Each series' 95 % band and its line through the values, in the series' colour.
fn draw_series_bands<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    report: &TuneReport,
    names: &[String],
    points: &[MetricPoint],
    y_axis: &Axis,
) -> DrawResult<DB> {
    for (k, name) in names.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        let mine: Vec<(f64, f64, f64, f64)> = points
            .iter()
            .filter(|p| series_of(report, &report.settings[p.0]) == *name)
            .map(|p| (p.1, y_axis.to(p.2), y_axis.to(p.3), y_axis.to(p.4)))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut band: Vec<(f64, f64)> = mine.iter().map(|p| (p.0, p.3)).collect();
        band.extend(mine.iter().rev().map(|p| (p.0, p.2)));
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            colour.mix(0.15).filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            mine.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
            colour.stroke_width(2),
        )))?;
    }
    Ok(())
}

/// The target's label on a metric panel, boxed where it covers the fewest of the lines and
/// markers.
fn draw_panel_target_label<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    points: &[MetricPoint],
    (x_axis, y_axis): (&Axis, &Axis),
    target: f64,
) -> DrawResult<DB> {
    let mut obstacles = Vec::new();
    let pixel = |x: f64, y: f64| chart.backend_coord(&(x, y));
    let mut sorted: Vec<&MetricPoint> = points.iter().collect();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
    for pair in sorted.windows(2) {
        for (k, j) in [(2, 2), (3, 3), (4, 4)] {
            let at = |p: &MetricPoint, i: usize| pixel(p.1, y_axis.to([p.2, p.3, p.4][i - 2]));
            sample_segment(at(pair[0], k), at(pair[1], j), &mut obstacles);
        }
    }
    obstacles.extend(points.iter().map(|p| pixel(p.1, y_axis.to(p.2))));
    let (left, line_y) = pixel(x_axis.low, y_axis.to(target));
    let right = pixel(x_axis.high, y_axis.to(target)).0;
    boxed_label(
        root,
        &format!("target {}", number(target)),
        13.0,
        TARGET,
        line_y,
        left,
        right,
        &obstacles,
    )
}

/// An interval as plotted: (value, low, high).
type Interval = (f64, f64, f64);

/// A setting on the trade-off: (setting, ranking p99 interval, false expiries per hour
/// interval).
type TradeOff = (usize, Interval, Interval);

fn draw_pareto<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &TuneReport,
) -> DrawResult<DB> {
    register_font();
    root.fill(&WHITE)?;
    let ranking = report.ranking;
    let (title_area, body) = root.split_vertically(80);
    title_area.draw(&Text::new(
        format!(
            "{}: false expiries per hour of fault exposure vs {} — one point per setting, \
             95 % interval bars",
            report.scenario,
            ranking.short()
        ),
        (20, 12),
        font(20.0),
    ))?;
    draw_marker_legend(&title_area, 20, 44)?;
    let (body, footer) = body.split_vertically(PARETO_PX.1 as i32 - 80 - 60);
    let points = trade_off_points(report);
    draw_not_drawn(&footer, report, &points)?;
    if points.is_empty() {
        return draw_no_trade_off(&body, report);
    }
    let axes = trade_off_axes(report, &points);
    let (x_axis, y_axis) = (&axes.0, &axes.1);
    let mut chart = trade_off_chart(root, &body, report, axes)?;
    draw_interval_bars(&mut chart, report, &points, (x_axis, y_axis))?;
    // One pixel in plotted units.
    let (px_w, px_h) = body.dim_in_pixel();
    let pixel = (
        (x_axis.high - x_axis.low) / px_w.max(1) as f64,
        (y_axis.high - y_axis.low) / px_h.max(1) as f64,
    );
    let spots = marker_spots(&points, (x_axis, y_axis), pixel);
    draw_front(&mut chart, report, &points, &spots)?;
    for (&(i, _, _), &spot) in points.iter().zip(&spots) {
        marker(&mut chart, spot, status(&report.settings[i]), 7)?;
    }
    let mut obstacles = bar_obstacles(&chart, &points, &spots, (x_axis, y_axis));
    draw_point_labels(
        &mut chart,
        report,
        &points,
        &spots,
        (x_axis, pixel),
        &mut obstacles,
    )?;
    if let Some(r) = report.recommendation.setting {
        if let Some(k) = points.iter().position(|p| p.0 == r) {
            chart.draw_series(std::iter::once(Circle::new(
                spots[k],
                14,
                RECOMMENDED.stroke_width(3),
            )))?;
        }
    }
    if let Some(t) = report.targets.max_false_expiry_per_hour {
        let (left, line_y) = chart.backend_coord(&(x_axis.low, y_axis.to(t)));
        let right = chart.backend_coord(&(x_axis.high, y_axis.to(t))).0;
        boxed_label(
            root,
            &format!("target: {} false expiries per hour", number(t)),
            14.0,
            TARGET,
            line_y,
            left,
            right,
            &obstacles,
        )?;
    }
    let rec = report
        .recommendation
        .setting
        .map_or("recommended: none meets the targets".to_string(), |r| {
            format!("recommended: {}", report.settings[r].label())
        });
    footer.draw(&Text::new(rec, (20, 32), font(16.0).color(&RECOMMENDED)))?;
    Ok(())
}

/// Every setting with a sample of the ranking metric. x: the ranking p99 and its interval;
/// y: false expiries per hour and its interval.
fn trade_off_points(report: &TuneReport) -> Vec<TradeOff> {
    report
        .settings
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let x = q99(report.ranking.of(s))?;
            let r = &s.false_expiries;
            Some((i, x, (r.per_hour, r.low, r.high)))
        })
        .collect()
}

/// The trade-off's axes, fitted to every interval and the target.
fn trade_off_axes(report: &TuneReport, points: &[TradeOff]) -> (Axis, Axis) {
    let xs: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.1 .0, p.1 .1, p.1 .2])
        .collect();
    let mut ys: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.2 .0, p.2 .1, p.2 .2])
        .collect();
    ys.extend(report.targets.max_false_expiry_per_hour);
    (Axis::fit(&xs, true), Axis::fit(&ys, true))
}

/// The Pareto front (safe settings only, as `recommend` computes it), through the markers as
/// drawn.
fn draw_front<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    report: &TuneReport,
    points: &[TradeOff],
    spots: &[(f64, f64)],
) -> DrawResult<DB> {
    let mut front: Vec<(f64, f64)> = report
        .pareto
        .iter()
        .filter_map(|&i| points.iter().position(|p| p.0 == i).map(|k| spots[k]))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart.draw_series(std::iter::once(PathElement::new(
        front,
        MEETS.mix(0.6).stroke_width(2),
    )))?;
    Ok(())
}

/// The footer's list of the settings with no sample of the ranking metric.
fn draw_not_drawn<DB: DrawingBackend>(
    footer: &DrawingArea<DB, Shift>,
    report: &TuneReport,
    points: &[TradeOff],
) -> DrawResult<DB> {
    let not_drawn: Vec<String> = report
        .settings
        .iter()
        .enumerate()
        .filter(|(i, _)| !points.iter().any(|p| p.0 == *i))
        .map(|(_, s)| s.label())
        .collect();
    if !not_drawn.is_empty() {
        let shown: Vec<&str> = not_drawn.iter().take(6).map(String::as_str).collect();
        footer.draw(&Text::new(
            format!(
                "{} of {} settings not drawn: no sample of the {} (no crash or pause ended in a \
                 takeover): {}{}",
                not_drawn.len(),
                report.settings.len(),
                report.ranking.short(),
                shown.join("; "),
                if not_drawn.len() > shown.len() {
                    "; …"
                } else {
                    ""
                }
            ),
            (20, 8),
            font(15.0),
        ))?;
    }
    Ok(())
}

/// A trade-off with no point says why, and names the recommendation if there is one.
fn draw_no_trade_off<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    report: &TuneReport,
) -> DrawResult<DB> {
    body.draw(&Text::new(
        if report.settings.is_empty() {
            "nothing to draw: the sweep has no setting".to_string()
        } else {
            format!(
                "nothing to draw: no setting has a sample of the {}; the profile needs \
                 worker crashes or pauses that end in takeovers",
                report.ranking.short()
            )
        },
        (40, 200),
        font(20.0),
    ))?;
    if let Some(r) = report.recommendation.setting {
        body.draw(&Text::new(
            format!(
                "recommended (by the tie-break): {}",
                report.settings[r].label()
            ),
            (40, 240),
            font(18.0),
        ))?;
    }
    Ok(())
}

/// The trade-off's chart: axes with exact tick labels and the target line.
fn trade_off_chart<'a, DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    body: &'a DrawingArea<DB, Shift>,
    report: &TuneReport,
    (x_axis, y_axis): (Axis, Axis),
) -> Result<Chart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (px_w, px_h) = body.dim_in_pixel();
    let x_ticks: Vec<(f64, String)> = {
        let px = (px_w as f64 - 150.0) / (x_axis.high - x_axis.low).max(1e-12);
        let ticks: Vec<(f64, String)> = x_axis
            .ticks(6)
            .into_iter()
            .map(|x| (x, x_axis.label(x)))
            .collect();
        thin(ticks, px)
    };
    let y_ticks = vertical_ticks(&y_axis, 6, px_h);
    let mut chart = ChartBuilder::on(body)
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(90)
        .build_cartesian_2d(x_axis.low..x_axis.high, y_axis.low..y_axis.high)?;
    let x_desc = format!("{}{}", report.ranking.short(), x_axis.suffix());
    let y_desc = format!(
        "false expiries per hour of fault exposure{}",
        y_axis.suffix()
    );
    chart
        .configure_mesh()
        .disable_mesh()
        .axis_style(INK)
        .label_style(font(15.0))
        .axis_desc_style(font(17.0))
        .x_desc(x_desc.as_str())
        .y_desc(y_desc.as_str())
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|_| String::new())
        .draw()?;
    draw_ticks(
        root,
        &mut chart,
        (&x_axis, &x_ticks),
        (&y_axis, &y_ticks),
        15.0,
    )?;
    if let Some(t) = report.targets.max_false_expiry_per_hour {
        dashed(&mut chart, &x_axis, y_axis.to(t), TARGET)?;
    }
    Ok(chart)
}

/// Each point's interval bars on both axes, in its status colour, at the true value.
fn draw_interval_bars<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    report: &TuneReport,
    points: &[TradeOff],
    (x_axis, y_axis): (&Axis, &Axis),
) -> DrawResult<DB> {
    for &(i, x, y) in points {
        let c = status(&report.settings[i]).colour().mix(0.55);
        let (px, py) = (x_axis.to(x.0), y_axis.to(y.0));
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x_axis.to(x.1), py), (x_axis.to(x.2), py)],
            c.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(px, y_axis.to(y.1)), (px, y_axis.to(y.2))],
            c.stroke_width(2),
        )))?;
    }
    Ok(())
}

/// Where each point's marker goes (plotted units; `pixel` is one pixel's size on each axis):
/// where two settings land on the same spot (within 8 px), the later one is moved 16 px to
/// the right (the interval bars stay at the true value) so both show.
fn marker_spots(
    points: &[TradeOff],
    (x_axis, y_axis): (&Axis, &Axis),
    (w, h): (f64, f64),
) -> Vec<(f64, f64)> {
    let mut spots: Vec<(f64, f64)> = Vec::new();
    for &(_, x, y) in points {
        let (base, sy) = (x_axis.to(x.0), y_axis.to(y.0));
        let free = |sx: f64| {
            !spots
                .iter()
                .any(|(px, py)| ((sx - px) / w).abs() < 8.0 && ((sy - py) / h).abs() < 8.0)
        };
        let inside = |sx: f64| sx >= x_axis.low + 8.0 * w && sx <= x_axis.high - 8.0 * w;
        // Right, left, further right, further left …, staying inside the plot.
        let sx = (0..200)
            .map(|k| {
                base + 16.0
                    * w
                    * if k % 2 == 1 {
                        (k / 2 + 1) as f64
                    } else {
                        -((k / 2) as f64)
                    }
            })
            .find(|&sx| free(sx) && (inside(sx) || sx == base))
            .unwrap_or(base);
        spots.push((sx, sy));
    }
    spots
}

/// Pixel points along every interval bar and at every marker: what a label should not hide.
fn bar_obstacles<DB: DrawingBackend>(
    chart: &Chart<'_, DB>,
    points: &[TradeOff],
    spots: &[(f64, f64)],
    (x_axis, y_axis): (&Axis, &Axis),
) -> Vec<(i32, i32)> {
    let mut obstacles: Vec<(i32, i32)> = Vec::new();
    for (&(_, x, y), &spot) in points.iter().zip(spots) {
        let (px, py) = (x_axis.to(x.0), y_axis.to(y.0));
        let at = |a: f64, b: f64| chart.backend_coord(&(a, b));
        sample_segment(
            at(x_axis.to(x.1), py),
            at(x_axis.to(x.2), py),
            &mut obstacles,
        );
        sample_segment(
            at(px, y_axis.to(y.1)),
            at(px, y_axis.to(y.2)),
            &mut obstacles,
        );
        obstacles.push(at(spot.0, spot.1));
    }
    obstacles
}

/// Labels: exact values beside their marker, stacked (with a leader line) when they would
/// overlap; each label's extent joins `obstacles`.
fn draw_point_labels<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    report: &TuneReport,
    points: &[TradeOff],
    spots: &[(f64, f64)],
    (x_axis, (w, h)): (&Axis, (f64, f64)),
    obstacles: &mut Vec<(i32, i32)>,
) -> DrawResult<DB> {
    let mut placed: Vec<(f64, f64, f64)> = Vec::new();
    for (&(i, _, _), &spot) in points.iter().zip(spots) {
        let s = &report.settings[i];
        let label = s
            .values
            .iter()
            .filter(|v| !report.derived.contains(&v.field))
            .map(|v| v.value.clone())
            .collect::<Vec<_>>()
            .join("/");
        // Clear of the recommendation's ring (radius 14 px) when it is the recommended one.
        let gap = if report.recommendation.setting == Some(i) {
            19.0
        } else {
            10.0
        };
        let width = (label.len() as f64 * 8.0 + 6.0) * w;
        // Right of the marker, or left of it when that would leave the plot.
        let mut lx = spot.0 + gap * w;
        if lx + width > x_axis.high {
            lx = spot.0 - gap * w - width;
        }
        let mut ly = spot.1 + 8.0 * h;
        let mut moved = false;
        while placed
            .iter()
            .any(|(px, py, pw)| lx < px + pw && *px < lx + width && (ly - py).abs() < 17.0 * h)
            || spots.iter().any(|(px, py)| {
                *px > lx - 6.0 * w && *px < lx + width && (ly - 8.0 * h - py).abs() < 9.0 * h
            })
        {
            ly += 17.0 * h;
            moved = true;
        }
        placed.push((lx, ly, width));
        if moved {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![
                    spot,
                    (if lx > spot.0 { lx } else { lx + width }, ly - 14.0 * h),
                ],
                INK.mix(0.5).stroke_width(1),
            )))?;
        }
        chart.draw_series(std::iter::once(Text::new(label, (lx, ly), font(14.0))))?;
        let (a, b) = (
            chart.backend_coord(&(lx, ly)),
            chart.backend_coord(&(lx + width, ly)),
        );
        sample_segment((a.0, a.1 + 8), (b.0, b.1 + 8), obstacles);
    }
    Ok(())
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
            Which::Metrics => draw_metrics(root, report),
            Which::Pareto => draw_pareto(root, report),
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
