//! The trade-off: false expiries per hour of fault exposure against the ranking metric's
//! p99, interval bars on both axes (dashed to the edge where a bound is missing; solid to the
//! edge with an arrowhead where a bound lies beyond the axis, which is fitted to the points
//! so that close settings stay apart), the target line, the Pareto front through the
//! settings that meet every target, and the recommendation ringed. Settings meeting every
//! target are drawn at the figures the ranking compared (over the seeds they all ran); each
//! label gives the setting and the seeds its point stands for.

use super::*;

/// A setting on the trade-off: (setting, ranking p99 interval, false expiries per hour
/// interval, seeds).
type TradeOff = (usize, Bounds, Bounds, u64);

pub(super) fn draw_pareto<DB: DrawingBackend>(
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
             95 % interval bars (dashed to the edge: no bound)",
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
    for (&(i, ..), &spot) in points.iter().zip(&spots) {
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
            &target_label(t),
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
/// y: false expiries per hour and its interval — for a setting meeting the targets, over the
/// seeds the ranking compared (`SettingResult::ranked`), else over its own seeds.
fn trade_off_points(report: &TuneReport) -> Vec<TradeOff> {
    report
        .settings
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let (q, r, seeds) = match &s.ranked {
                Some(ranked) => (&ranked.quantiles, &ranked.false_expiries, ranked.seeds),
                None => (report.ranking.of(s), &s.false_expiries, s.runs),
            };
            let x = q99(q)?;
            Some((i, x, (r.per_hour, Some(r.low), Some(r.high)), seeds))
        })
        .collect()
}

/// The false-expiry target's label: "target: at most 2 false expiries per hour".
fn target_label(per_hour: f64) -> String {
    let noun = if per_hour == 1.0 {
        "expiry"
    } else {
        "expiries"
    };
    format!("target: at most {} false {noun} per hour", number(per_hour))
}

/// An axis fitted to `values` and to the interval ends that lie near them: an end further
/// than the values' span (or a tenth of the largest value) beyond them is left outside, its
/// bar drawn to the edge.
fn fit_near(values: &[f64], ends: &[f64], extra: Option<f64>) -> Axis {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let reach = (hi - lo).max(0.1 * hi.abs()).max(1e-9);
    let mut all = finite.clone();
    all.extend(
        ends.iter()
            .copied()
            .filter(|e| e.is_finite() && *e >= lo - reach && *e <= hi + reach),
    );
    all.extend(extra);
    Axis::fit(&all, true)
}

/// The trade-off's axes: fitted to the points, the interval ends near them, and the target.
fn trade_off_axes(report: &TuneReport, points: &[TradeOff]) -> (Axis, Axis) {
    let ends = |f: fn(&TradeOff) -> Bounds| -> (Vec<f64>, Vec<f64>) {
        let values = points.iter().map(|p| f(p).0).collect();
        let ends = points
            .iter()
            .flat_map(|p| [f(p).1, f(p).2])
            .flatten()
            .collect();
        (values, ends)
    };
    let (xv, xe) = ends(|p| p.1);
    let (yv, ye) = ends(|p| p.2);
    (
        fit_near(&xv, &xe, None),
        fit_near(&yv, &ye, report.targets.max_false_expiry_per_hour),
    )
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

/// Each point's interval bars on both axes, in its status colour, at the true value: a
/// missing bound dashed to the edge, a bound beyond the axis solid to the edge, each with an
/// arrowhead there.
fn draw_interval_bars<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    report: &TuneReport,
    points: &[TradeOff],
    (x_axis, y_axis): (&Axis, &Axis),
) -> DrawResult<DB> {
    for &(i, x, y, _) in points {
        let colour = lighten(status(&report.settings[i]).colour(), 0.55);
        let (px, py) = (x_axis.to(x.0), y_axis.to(y.0));
        let along_x = |v: f64| (v, py);
        let along_y = |v: f64| (px, v);
        bar(chart, (x_axis, x), (px, along_x), colour)?;
        bar(chart, (y_axis, y), (py, along_y), colour)?;
    }
    Ok(())
}

/// How an interval's end is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    /// At the bound (plotted units).
    Closed(f64),
    /// No such bound (too few samples): dashed to the edge, an arrowhead there.
    Open,
    /// A bound beyond the axis: solid to the edge, an arrowhead there.
    Clipped,
}

/// How `bound` is drawn on `axis`.
fn end(axis: &Axis, bound: Option<f64>) -> End {
    match bound.map(|b| axis.to(b)) {
        None => End::Open,
        Some(b) if b < axis.low || b > axis.high => End::Clipped,
        Some(b) => End::Closed(b),
    }
}

/// One interval bar along `axis` from the point (plotted `at`), each end as [`end`] says.
fn bar<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    (axis, (_, low, high)): (&Axis, Bounds),
    (at, place): (f64, impl Fn(f64) -> (f64, f64)),
    colour: RGBColor,
) -> DrawResult<DB> {
    for (bound, edge) in [(low, axis.low), (high, axis.high)] {
        match end(axis, bound) {
            End::Open => open_end(chart, place(at), place(edge), colour)?,
            End::Clipped => {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![place(at), place(edge)],
                    colour.stroke_width(2),
                )))?;
                arrowhead(chart, place(at), place(edge), colour)?;
            }
            End::Closed(e) => {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![place(at), place(e)],
                    colour.stroke_width(2),
                )))?;
            }
        }
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
    for &(_, x, y, _) in points {
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
    for (&(_, x, y, _), &spot) in points.iter().zip(spots) {
        let (px, py) = (x_axis.to(x.0), y_axis.to(y.0));
        let at = |a: f64, b: f64| chart.backend_coord(&(a, b));
        let end = |axis: &Axis, e: Option<f64>, edge: f64| {
            e.map_or(edge, |e| axis.to(e).clamp(axis.low, axis.high))
        };
        sample_segment(
            at(end(x_axis, x.1, x_axis.low), py),
            at(end(x_axis, x.2, x_axis.high), py),
            &mut obstacles,
        );
        sample_segment(
            at(px, end(y_axis, y.1, y_axis.low)),
            at(px, end(y_axis, y.2, y_axis.high)),
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
    for (&(i, _, _, seeds), &spot) in points.iter().zip(spots) {
        let s = &report.settings[i];
        let values = s
            .values
            .iter()
            .filter(|v| !report.derived.contains(&v.field))
            .map(|v| v.value.clone())
            .collect::<Vec<_>>()
            .join("/");
        let label = format!("{values} ({seeds} seeds)");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Quantiles, Ranked, Rate};

    #[test]
    fn a_missing_bound_is_drawn_open_and_a_far_one_clipped_never_closed_at_the_point() {
        let axis = Axis::fit(&[1000.0, 2000.0], true);
        assert_eq!(end(&axis, None), End::Open);
        assert_eq!(end(&axis, Some(1500.0)), End::Closed(1500.0));
        assert_eq!(end(&axis, Some(1e9)), End::Clipped);
        // A p99 under 368 samples has no upper bound: its bar is open, not closed at the p99.
        let q = Quantiles {
            count: 100,
            p99: Some(1800.0),
            p99_low: Some(1200.0),
            p99_high: None,
            ..Quantiles::default()
        };
        let (_, low, high) = q99(&q).unwrap();
        assert_eq!(
            (end(&axis, low), end(&axis, high)),
            (End::Closed(1200.0), End::Open)
        );
    }

    #[test]
    fn settings_meeting_the_targets_are_drawn_on_the_seeds_they_were_compared_on() {
        let mut report = TuneReport::default();
        let own = Quantiles {
            count: 800,
            p99: Some(900.0),
            ..Quantiles::default()
        };
        let compared = Quantiles {
            count: 200,
            p99: Some(3000.0),
            ..Quantiles::default()
        };
        let mut s = SettingResult {
            runs: 800,
            recovery_after_crash_ms: own,
            ..SettingResult::default()
        };
        s.ranked = Some(Ranked {
            seeds: 200,
            quantiles: compared,
            false_expiries: Rate::default(),
            disruption: Rate::default(),
        });
        let mut other = s.clone();
        other.ranked = None;
        report.settings = vec![s, other];
        let points = trade_off_points(&report);
        assert_eq!((points[0].1 .0, points[0].3), (3000.0, 200));
        assert_eq!((points[1].1 .0, points[1].3), (900.0, 800));
    }
}
