//! The metrics panel: each metric against the first varied field, one line per value of the
//! other varied fields, its 95 % interval as a band (open to the panel's edge, dashed, where
//! a bound is missing), the targets as dashed lines (the false-expiry budget; the outage
//! target's 1 % limit on the share of seeds an outage made fail), every setting's marker
//! saying what decided it, and under each point the seeds it ran.

use super::*;

/// One metric as plotted: its title and per setting its value and interval.
struct Metric {
    title: &'static str,
    of: fn(&SettingResult) -> Option<Bounds>,
    /// Why a setting has no value.
    missing: &'static str,
}

fn closed(v: f64, low: f64, high: f64) -> Option<Bounds> {
    Some((v, Some(low), Some(high)))
}

fn rate(r: &crate::report::Rate) -> Option<Bounds> {
    if r.exposure_h > 0.0 {
        closed(r.per_hour, r.low, r.high)
    } else {
        None
    }
}

fn share(u: &crate::report::SeedShare) -> Option<Bounds> {
    if u.of > 0 {
        closed(u.seeds as f64 / u.of as f64, u.low, u.high)
    } else {
        None
    }
}

/// The outage judgement's worst form: the highest share of seeds an outage made fail (or
/// unsafe), then the highest upper bound.
fn outage_share(s: &SettingResult) -> Option<Bounds> {
    s.outage_runs
        .iter()
        .map(|o| {
            let mut u = o.failed_seeds.clone();
            u.seeds = u.seeds.max(o.unsafe_seeds);
            u
        })
        .max_by(|a, b| {
            (a.seeds * b.of)
                .cmp(&(b.seeds * a.of))
                .then(a.high.total_cmp(&b.high))
        })
        .and_then(|u| share(&u))
}

const METRICS: [Metric; 9] = [
    Metric {
        title: "false expiries per hour of fault exposure",
        of: |s| rate(&s.false_expiries),
        missing: "no fault exposure",
    },
    Metric {
        title: "stand-downs per hour of fault exposure",
        of: |s| rate(&s.stand_downs),
        missing: "no fault exposure",
    },
    Metric {
        title: "seeds an outage made fail (share, worst form)",
        of: outage_share,
        missing: "no outage target (--survive-outage-ms)",
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
        of: |s| share(&s.unsafe_seeds),
        missing: "no seed run",
    },
    Metric {
        title: "unavailability (share of time)",
        of: |s| {
            let u = &s.unavailability;
            closed(u.mean, u.low, u.high)
        },
        missing: "",
    },
    Metric {
        title: "renewals per lease per second",
        of: |s| {
            let r = &s.renewals_per_lease_per_s;
            closed(r.mean, r.low, r.high)
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

pub(super) fn draw_metrics<DB: DrawingBackend>(
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
    let panels = body.split_evenly((3, 3));
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
            "fencesim tune {} — seeds {} ({}); bands: 95 % intervals (dashed to the edge: no \
             bound); grey numbers under the axis: seeds run",
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

/// A setting as one metric panel plots it: (setting, plotted x, value, low, high); a missing
/// end is open.
type MetricPoint = (usize, f64, f64, Option<f64>, Option<f64>);

/// The dashed line a metric panel draws and its label: the false-expiry budget; the outage
/// target's limit on the share of failed seeds.
fn panel_target(metric: &Metric, report: &TuneReport) -> Option<(f64, String)> {
    if metric.title.starts_with("false expiries") {
        let t = report.targets.max_false_expiry_per_hour?;
        return Some((t, format!("target {}", number(t))));
    }
    if metric.title.starts_with("seeds an outage") {
        let d = report.targets.survive_outage_ms?;
        let limit = crate::recommend::FAILURE_SHARE_TO_EXCLUDE;
        return Some((
            limit,
            format!(
                "survive {d} ms: none failed, upper bound ≤ {}",
                crate::report::percent(limit)
            ),
        ));
    }
    None
}

/// One metric's panel: its title and what is not drawn, the axes, the target, each series'
/// band and line, every setting's marker and seed count, and the recommendation ringed.
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
    let target = panel_target(metric, report);
    let mut ys: Vec<f64> = points
        .iter()
        .flat_map(|p| [Some(p.2), p.3, p.4])
        .flatten()
        .collect();
    ys.extend(target.as_ref().map(|t| t.0));
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
        .x_label_area_size(66)
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
    if let Some((t, _)) = &target {
        dashed(&mut chart, &x.axis, y_axis.to(*t), TARGET)?;
    }
    if points.is_empty() {
        return draw_no_value(&mut chart, &x.axis, &y_axis, metric);
    }
    draw_series_bands(&mut chart, report, names, &points, &y_axis)?;
    draw_seed_counts(root, &chart, report, &points, &y_axis)?;
    for p in &points {
        let st = status(&report.settings[p.0]);
        marker(&mut chart, (p.1, y_axis.to(p.2)), st, 5)?;
    }
    if let Some((t, label)) = &target {
        // Drawn after the data so its box is placed where it hides the least of it.
        draw_panel_target_label(root, &chart, &points, (&x.axis, &y_axis), (*t, label))?;
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

/// Under each x value's tick label, the seeds its settings ran (several settings at one x
/// with different counts: each, joined by `/`), in two rows so close ones do not overlap.
fn draw_seed_counts<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    report: &TuneReport,
    points: &[MetricPoint],
    y_axis: &Axis,
) -> DrawResult<DB> {
    let mut at: Vec<(f64, Vec<u64>)> = Vec::new();
    for p in points {
        let runs = report.settings[p.0].runs;
        match at.iter_mut().find(|(x, _)| *x == p.1) {
            Some((_, list)) if !list.contains(&runs) => list.push(runs),
            Some(_) => {}
            None => at.push((p.1, vec![runs])),
        }
    }
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    let labels: Vec<(f64, String)> = at
        .into_iter()
        .map(|(x, runs)| {
            let text: Vec<String> = runs.iter().map(u64::to_string).collect();
            (x, text.join("/"))
        })
        .collect();
    // Two rows: a count that would overlap the previous one in the first row goes to the
    // second, so close settings keep theirs.
    let mut rows: [Vec<(i32, i32)>; 2] = [Vec::new(), Vec::new()];
    for (x, text) in labels {
        let (px, py) = chart.backend_coord(&(x, y_axis.low));
        let half = 3 * text.len() as i32 + 3;
        let Some(row) = (0..2).find(|&r| rows[r].last().is_none_or(|&(_, end)| px - half > end))
        else {
            continue;
        };
        rows[row].push((px - half, px + half));
        root.draw(&Text::new(
            text,
            (px, py + 21 + 12 * row as i32),
            font(11.0)
                .color(&SEEDS)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
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
    } else if metric.missing.starts_with("no outage target") {
        format!("not asked: {}", metric.missing)
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

/// Each series' 95 % band and its line through the values, in the series' colour; a missing
/// bound opens the band to the panel's edge, marked by a dashed line and an arrowhead.
fn draw_series_bands<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    report: &TuneReport,
    names: &[String],
    points: &[MetricPoint],
    y_axis: &Axis,
) -> DrawResult<DB> {
    for (k, name) in names.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        let mine: Vec<&MetricPoint> = points
            .iter()
            .filter(|p| series_of(report, &report.settings[p.0]) == *name)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let low = |p: &MetricPoint| p.3.map_or(y_axis.low, |v| y_axis.to(v));
        let high = |p: &MetricPoint| p.4.map_or(y_axis.high, |v| y_axis.to(v));
        let mut band: Vec<(f64, f64)> = mine.iter().map(|p| (p.1, high(p))).collect();
        band.extend(mine.iter().rev().map(|p| (p.1, low(p))));
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            colour.mix(0.15).filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            mine.iter()
                .map(|p| (p.1, y_axis.to(p.2)))
                .collect::<Vec<_>>(),
            colour.stroke_width(2),
        )))?;
        for p in &mine {
            let y = y_axis.to(p.2);
            if p.4.is_none() {
                open_end(chart, (p.1, y), (p.1, y_axis.high), colour)?;
            }
            if p.3.is_none() {
                open_end(chart, (p.1, y), (p.1, y_axis.low), colour)?;
            }
        }
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
    (target, label): (f64, &str),
) -> DrawResult<DB> {
    let mut obstacles = Vec::new();
    let pixel = |x: f64, y: f64| chart.backend_coord(&(x, y));
    let mut sorted: Vec<&MetricPoint> = points.iter().collect();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
    let ends = |p: &MetricPoint| {
        [
            y_axis.to(p.2),
            p.3.map_or(y_axis.low, |v| y_axis.to(v)),
            p.4.map_or(y_axis.high, |v| y_axis.to(v)),
        ]
    };
    for pair in sorted.windows(2) {
        let (a, b) = (ends(pair[0]), ends(pair[1]));
        for k in 0..3 {
            sample_segment(
                pixel(pair[0].1, a[k]),
                pixel(pair[1].1, b[k]),
                &mut obstacles,
            );
        }
    }
    obstacles.extend(points.iter().map(|p| pixel(p.1, y_axis.to(p.2))));
    let (left, line_y) = pixel(x_axis.low, y_axis.to(target));
    let right = pixel(x_axis.high, y_axis.to(target)).0;
    boxed_label(root, label, 13.0, TARGET, line_y, left, right, &obstacles)
}
