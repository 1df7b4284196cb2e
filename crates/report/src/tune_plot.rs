//! Pictures of a tune sweep, drawn with plotters (SVG and PNG, embedded font):
//! - the metrics panel: each metric against the first varied field, one line per value of
//!   the other varied fields, with its 95 % interval as a band;
//! - the trade-off: false expiries + stand-downs per hour against takeover p99, the Pareto
//!   front joined, the recommendation ringed.

use plotters::{coord::Shift, prelude::*};

use crate::plot::{encode_png, font, register_font, INK};
use crate::tune::{MeanCi, Quantiles, SettingResult, TuneReport};

/// Size of the metrics panel picture.
pub const METRICS_PX: (u32, u32) = (1800, 960);
/// Size of the trade-off picture.
pub const PARETO_PX: (u32, u32) = (1200, 800);

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
];
const GRID: RGBColor = RGBColor(225, 225, 225);
const RECOMMENDED: RGBColor = RGBColor(0, 150, 70);

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// One point: x, value, interval.
type Point = (f64, f64, f64, f64);

/// A metric as plotted: its title and per setting its value and interval.
struct Metric {
    title: &'static str,
    of: fn(&SettingResult) -> Option<(f64, f64, f64)>,
}

fn mean(m: &MeanCi) -> Option<(f64, f64, f64)> {
    Some((m.mean, m.low, m.high))
}

fn p99(q: &Quantiles) -> Option<(f64, f64, f64)> {
    Some((q.p99?, q.p99_low?, q.p99_high?))
}

fn p50(q: &Quantiles) -> Option<(f64, f64, f64)> {
    Some((q.p50?, q.p50_low?, q.p50_high?))
}

const METRICS: [Metric; 8] = [
    Metric {
        title: "false expiries per hour",
        of: |s| mean(&s.false_expiries_per_hour),
    },
    Metric {
        title: "stand-downs per hour",
        of: |s| mean(&s.stand_downs_per_hour),
    },
    Metric {
        title: "recovery after crash p99 (ms)",
        of: |s| p99(&s.recovery_after_crash_ms),
    },
    Metric {
        title: "recovery after crash p50 (ms)",
        of: |s| p50(&s.recovery_after_crash_ms),
    },
    Metric {
        title: "recovery after stall p99 (ms)",
        of: |s| p99(&s.recovery_after_stall_ms),
    },
    Metric {
        title: "unsafe seeds (share, I3/I4)",
        of: |s| {
            let u = &s.unsafe_seeds;
            let share = if u.of == 0 {
                0.0
            } else {
                u.seeds as f64 / u.of as f64
            };
            Some((share, u.low, u.high))
        },
    },
    Metric {
        title: "unavailability (share of time)",
        of: |s| mean(&s.unavailability),
    },
    Metric {
        title: "renewals per lease per second",
        of: |s| mean(&s.renewals_per_lease_per_s),
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

fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        low = low.min(v);
        high = high.max(v);
    }
    if !low.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        low = low.min(0.0);
    }
    if high - low < 1e-9 {
        high = low + 1.0;
    }
    let pad = (high - low) * 0.06;
    (
        if from_zero && low >= 0.0 {
            low
        } else {
            low - pad
        },
        high + pad,
    )
}

fn draw_metrics<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &TuneReport,
) -> DrawResult<DB> {
    register_font();
    root.fill(&WHITE)?;
    let (title_area, body) = root.split_vertically(60);
    title_area.draw(&Text::new(
        format!(
            "fencesim tune {} — seeds {} (same seeds and fault plans for every setting); bands: 95% intervals",
            report.scenario, report.seeds
        ),
        (20, 18),
        font(22.0),
    ))?;
    let names = series(report);
    let mut legend_x = 20;
    for (k, name) in names.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let colour = PALETTE[k % PALETTE.len()];
        title_area.draw(&Rectangle::new(
            [(legend_x, 46), (legend_x + 24, 52)],
            colour.filled(),
        ))?;
        title_area.draw(&Text::new(name.clone(), (legend_x + 30, 40), font(15.0)))?;
        legend_x += 40 + 8 * name.len() as i32;
    }
    let xs: Vec<f64> = report
        .settings
        .iter()
        .enumerate()
        .map(|(i, s)| x_of(i, s))
        .collect();
    let x_range = range(xs.iter().copied(), false);
    let field = x_field(report);
    let recommended = report.recommendation.setting;
    for (panel, metric) in body.split_evenly((2, 4)).iter().zip(METRICS.iter()) {
        let points: Vec<(usize, Point)> = report
            .settings
            .iter()
            .enumerate()
            .filter_map(|(i, s)| (metric.of)(s).map(|(v, lo, hi)| (i, (xs[i], v, lo, hi))))
            .collect();
        let y_range = range(points.iter().flat_map(|(_, p)| [p.1, p.2, p.3]), true);
        let mut chart = ChartBuilder::on(panel)
            .caption(metric.title, font(18.0))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .bold_line_style(GRID)
            .axis_style(INK)
            .x_labels(5)
            .y_labels(6)
            .label_style(font(13.0))
            .axis_desc_style(font(14.0))
            .x_desc(field.as_str())
            .x_label_formatter(&|x| short(*x))
            .y_label_formatter(&|y| short(*y))
            .draw()?;
        if points.is_empty() {
            chart.draw_series(std::iter::once(Text::new(
                "no samples",
                ((x_range.0 + x_range.1) / 2.0, (y_range.0 + y_range.1) / 2.0),
                font(16.0),
            )))?;
            continue;
        }
        for (k, name) in names.iter().enumerate() {
            let colour = PALETTE[k % PALETTE.len()];
            let mine: Vec<Point> = points
                .iter()
                .filter(|(i, _)| series_of(report, &report.settings[*i]) == *name)
                .map(|(_, p)| *p)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let mut band: Vec<(f64, f64)> = mine.iter().map(|p| (p.0, p.3)).collect();
            band.extend(mine.iter().rev().map(|p| (p.0, p.2)));
            chart.draw_series(std::iter::once(Polygon::new(
                band,
                colour.mix(0.18).filled(),
            )))?;
            chart.draw_series(std::iter::once(PathElement::new(
                mine.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(),
                colour.stroke_width(2),
            )))?;
            chart.draw_series(
                mine.iter()
                    .map(|p| Circle::new((p.0, p.1), 4, colour.filled())),
            )?;
        }
        if let Some(r) = recommended {
            if let Some((_, p)) = points.iter().find(|(i, _)| *i == r) {
                chart.draw_series(std::iter::once(Circle::new(
                    (p.0, p.1),
                    9,
                    RECOMMENDED.stroke_width(3),
                )))?;
            }
        }
    }
    Ok(())
}

/// A compact axis label: `12k`, `1.5k`, `0.25`.
fn short(x: f64) -> String {
    let a = x.abs();
    if a >= 10_000.0 {
        format!("{}k", (x / 1000.0).round())
    } else if a >= 1000.0 {
        format!("{}k", (x / 100.0).round() / 10.0)
    } else if a >= 10.0 || a == 0.0 {
        format!("{}", x.round())
    } else if a >= 1.0 {
        format!("{}", (x * 10.0).round() / 10.0)
    } else {
        format!("{}", (x * 1000.0).round() / 1000.0)
    }
}

/// The y of a setting on the trade-off picture: false expiries + stand-downs per hour.
fn disruption(s: &SettingResult) -> f64 {
    s.false_expiries_per_hour.mean + s.stand_downs_per_hour.mean
}

fn draw_pareto<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &TuneReport,
) -> DrawResult<DB> {
    register_font();
    root.fill(&WHITE)?;
    let points: Vec<(usize, f64, f64)> = report
        .settings
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.takeover_p99_ms().map(|x| (i, x, disruption(s))))
        .collect();
    let x_range = range(points.iter().map(|p| p.1), true);
    let y_range = range(points.iter().map(|p| p.2), true);
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "{}: disruption vs takeover latency (each point one setting; seeds {})",
                report.scenario, report.seeds
            ),
            font(22.0),
        )
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)?;
    chart
        .configure_mesh()
        .max_light_lines(0)
        .bold_line_style(GRID)
        .axis_style(INK)
        .label_style(font(15.0))
        .axis_desc_style(font(17.0))
        .x_desc("takeover p99 (ms): recovery after crash, else after stall")
        .y_desc("false expiries + stand-downs per hour")
        .x_label_formatter(&|x| short(*x))
        .y_label_formatter(&|y| short(*y))
        .draw()?;
    let mut front: Vec<(f64, f64)> = report
        .pareto
        .iter()
        .filter_map(|&i| points.iter().find(|p| p.0 == i).map(|p| (p.1, p.2)))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(std::iter::once(PathElement::new(
            front.clone(),
            PALETTE[0].stroke_width(2),
        )))?
        .label("Pareto front")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], PALETTE[0].stroke_width(2)));
    for (meets, colour, label) in [
        (true, PALETTE[0], "meets the targets"),
        (false, PALETTE[1], "fails a target"),
    ] {
        let mine: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| report.settings[p.0].meets_targets == meets)
            .map(|p| (p.1, p.2))
            .collect();
        if mine.is_empty() {
            continue;
        }
        chart
            .draw_series(mine.into_iter().map(|p| Circle::new(p, 5, colour.filled())))?
            .label(label)
            .legend(move |(x, y)| Circle::new((x + 12, y), 5, colour.filled()));
    }
    let dx = (x_range.1 - x_range.0) * 0.008;
    let dy = (y_range.1 - y_range.0) * 0.02;
    chart.draw_series(points.iter().enumerate().map(|(n, &(i, x, y))| {
        let s = &report.settings[i];
        // Points at the same place get their labels stacked instead of overprinted.
        let same = points[..n]
            .iter()
            .filter(|p| (p.1 - x).abs() <= dx && (p.2 - y).abs() <= dy)
            .count() as f64;
        let label = s
            .values
            .iter()
            .map(|v| short(v.value.parse::<f64>().unwrap_or(f64::NAN)))
            .collect::<Vec<_>>()
            .join("/");
        Text::new(label, (x + dx, y + dy + same * 2.0 * dy), font(14.0))
    }))?;
    if let Some(r) = report.recommendation.setting {
        if let Some(&(_, x, y)) = points.iter().find(|p| p.0 == r) {
            chart
                .draw_series(std::iter::once(Circle::new(
                    (x, y),
                    12,
                    RECOMMENDED.stroke_width(3),
                )))?
                .label(format!("recommended: {}", report.settings[r].label()))
                .legend(|(x, y)| Circle::new((x + 12, y), 7, RECOMMENDED.stroke_width(3)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .label_font(font(15.0))
        .background_style(WHITE.mix(0.9))
        .border_style(INK)
        .draw()?;
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
    use crate::tune::{FieldValue, Pick, SeedShare};

    fn report() -> TuneReport {
        let settings = (0..4)
            .map(|k| {
                let ttl = 2_000 * (k + 1);
                let q = |base: f64| Quantiles {
                    count: 10,
                    p50: Some(base),
                    p50_low: Some(base * 0.9),
                    p50_high: Some(base * 1.1),
                    p99: Some(base * 1.2),
                    p99_low: Some(base),
                    p99_high: Some(base * 1.4),
                };
                SettingResult {
                    values: vec![FieldValue {
                        field: "lease.ttl_ms".into(),
                        value: ttl.to_string(),
                    }],
                    ttl_ms: ttl,
                    runs: 10,
                    unsafe_seeds: SeedShare {
                        seeds: 0,
                        of: 10,
                        low: 0.0,
                        high: 0.28,
                    },
                    false_expiries_per_hour: MeanCi {
                        mean: 4.0 / (k + 1) as f64,
                        low: 2.0 / (k + 1) as f64,
                        high: 6.0 / (k + 1) as f64,
                    },
                    recovery_after_crash_ms: q(ttl as f64),
                    meets_targets: k > 0,
                    ..SettingResult::default()
                }
            })
            .collect();
        TuneReport {
            scenario: "plot-test".into(),
            seeds: "0..10".into(),
            settings,
            pareto: vec![0, 1, 2, 3],
            recommendation: Pick {
                setting: Some(1),
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
            assert!(svg.contains("lease.ttl_ms"));
        }
        for (png, size) in [
            (tune_metrics_png(&report).unwrap(), METRICS_PX),
            (tune_pareto_png(&report).unwrap(), PARETO_PX),
        ] {
            let decoder = png::Decoder::new(png.as_slice());
            let reader = decoder.read_info().expect("a PNG");
            assert_eq!((reader.info().width, reader.info().height), size);
        }
        // Deterministic: the same report draws the same bytes.
        assert_eq!(
            tune_pareto_png(&report).unwrap(),
            tune_pareto_png(&report).unwrap()
        );
    }

    #[test]
    fn an_empty_report_still_draws() {
        let report = TuneReport::default();
        assert!(tune_metrics_png(&report).is_ok());
        assert!(tune_pareto_svg(&report).is_ok());
    }
}
