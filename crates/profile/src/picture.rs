//! The fit picture: per block, the data's cumulative distribution (markers; a histogram's at
//! its bucket bounds) against that of draws from the profile (a line), on a log time axis,
//! with the one-line fit summaries above. PNG or SVG, drawn with the plot kit (`fencesim-plot`).

use fencesim_plot::{font, Draw, DrawResult, INK};
use plotters::prelude::*;

use crate::{fit, Data, Profile};

const SIZE: (u32, u32) = (1200, 760);
const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];
const GRID: RGBColor = RGBColor(225, 225, 225);

/// The picture as PNG bytes.
pub fn png(profile: &Profile) -> Result<Vec<u8>, String> {
    fencesim_plot::png(SIZE, &Fit(profile))
}

/// The picture as SVG text.
pub fn svg(profile: &Profile) -> Result<String, String> {
    fencesim_plot::svg(SIZE, &Fit(profile))
}

/// The picture of a profile's fit.
struct Fit<'a>(&'a Profile);

impl Draw for Fit<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let blocks = curves(self.0);
        let chart_area = draw_header(root, self.0, &blocks)?;
        let range = duration_range(self.0, &blocks);
        draw_curves(&chart_area, self.0, &blocks, range)
    }
}

/// The cumulative points of a block's data: `(ms, share)`. Samples sit at `i / (n − 1)`, the
/// levels at which the profile's table holds them (and at which the fit summary reads the
/// data's quantiles), so a line through them is the profile.
fn data_points(data: &Data) -> Vec<(f64, f64)> {
    match data {
        Data::Samples(sorted) => {
            let last = (sorted.len().max(2) - 1) as f64;
            sorted
                .iter()
                .enumerate()
                .map(|(i, &ms)| (ms, i as f64 / last))
                .collect()
        }
        Data::Cdf(points) => points.clone(),
    }
}

/// The draws' cumulative distribution at most 2 000 points.
fn draw_points(draws: &[f64]) -> Vec<(f64, f64)> {
    let n = draws.len();
    let step = (n / 2_000).max(1);
    let mut points: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (draws[i], (i + 1) as f64 / n as f64))
        .collect();
    if let Some(&last) = draws.last() {
        points.push((last, 1.0));
    }
    points
}

/// A log-axis tick without trailing zeros: `0.1`, `1`, `10`.
fn tick(ms: f64) -> String {
    let text = fit::short(ms);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Per block: its title, the data's points, the draws' points, the fit line.
type Curves = (String, Vec<(f64, f64)>, Vec<(f64, f64)>, String);

/// Each block's curves, from one set of draws per block.
fn curves(profile: &Profile) -> Vec<Curves> {
    profile
        .blocks
        .iter()
        .map(|block| {
            let draws = fit::draws(&block.dist, fit::FIT_DRAWS);
            let summary = fit::summary_line(&fit::compare(&block.data, &draws));
            (
                block.title.clone(),
                data_points(&block.data),
                draw_points(&draws),
                summary,
            )
        })
        .collect()
}

/// The header: the command (the input named by its file name), what was found, the notes
/// (interpolation, span), and one fit line per block in its colour. Returns the area left for
/// the chart.
fn draw_header<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    profile: &Profile,
    blocks: &[Curves],
) -> Result<DrawingArea<DB, plotters::coord::Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut lines: Vec<(String, TextStyle<'static>)> = vec![(profile.heading.clone(), font(16.0))];
    for note in &profile.notes {
        lines.push((format!("note: {note}"), font(14.0)));
    }
    for block in &profile.blocks {
        if let Some(fold) = &block.fold {
            let note = format!("note, {}: {}", block.title, fold.summary());
            lines.push((note, font(14.0)));
        }
    }
    for (index, (title, _, _, summary)) in blocks.iter().enumerate() {
        lines.push((
            format!("fit, {title}: {summary}"),
            font(16.0).color(&COLOURS[index % COLOURS.len()]),
        ));
    }
    let header = 48 + 22 * lines.len() as i32;
    let (top, chart_area) = root.split_vertically(header);
    let file_name = std::path::Path::new(&profile.file)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| profile.file.clone());
    top.draw(&Text::new(
        format!(
            "fencesim {}",
            profile.command.replace(&profile.file, &file_name)
        ),
        (20, 12),
        font(20.0),
    ))?;
    for (index, (text, style)) in lines.into_iter().enumerate() {
        top.draw(&Text::new(text, (20, 44 + 22 * index as i32), style))?;
    }
    Ok(chart_area)
}

/// The log axis' ends (ms): it needs positive ones, from the data's smallest positive value
/// or the draws' 0.1 % quantile, whichever is lower; a zero (a histogram's lower bound) sits
/// at the left edge.
fn duration_range(profile: &Profile, blocks: &[Curves]) -> (f64, f64) {
    let lowest_data = blocks
        .iter()
        .flat_map(|(_, data, _, _)| data.iter().map(|p| p.0))
        .filter(|ms| *ms > 0.0 && ms.is_finite())
        .fold(f64::MAX, f64::min);
    let lowest_drawn = profile
        .blocks
        .iter()
        .map(|block| fit::draws(&block.dist, fit::FIT_DRAWS))
        .map(|draws| fencesim_stats::quantile(&draws, 0.001))
        .filter(|ms| *ms > 0.0)
        .fold(f64::MAX, f64::min);
    let highest = blocks
        .iter()
        .flat_map(|(_, data, drawn, _)| data.iter().chain(drawn).map(|p| p.0))
        .filter(|ms| ms.is_finite())
        .fold(f64::MIN, f64::max);
    let low = lowest_data.min(lowest_drawn);
    if low <= highest && highest > 0.0 {
        (low / 1.5, highest * 1.5)
    } else {
        (0.001, 1.0)
    }
}

/// The chart: each block's draws as a line and its data as markers, and the legend.
fn draw_curves<DB: DrawingBackend>(
    chart_area: &DrawingArea<DB, plotters::coord::Shift>,
    profile: &Profile,
    blocks: &[Curves],
    (low, high): (f64, f64),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let clamp = |ms: f64| ms.max(low);
    let mut chart = ChartBuilder::on(chart_area)
        .margin(20)
        .x_label_area_size(56)
        .y_label_area_size(70)
        .build_cartesian_2d((low..high).log_scale(), 0.0..1.0)?;
    chart
        .configure_mesh()
        .max_light_lines(0)
        .bold_line_style(GRID)
        .axis_style(INK)
        .label_style(font(15.0))
        .axis_desc_style(font(17.0))
        .x_desc("duration (ms, log scale)")
        .y_desc("share at or below")
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| format!("{y:.1}"))
        .draw()?;
    for (index, (title, data, drawn, _)) in blocks.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        chart
            .draw_series(std::iter::once(PathElement::new(
                drawn
                    .iter()
                    .map(|&(ms, p)| (clamp(ms), p))
                    .collect::<Vec<_>>(),
                colour.stroke_width(2),
            )))?
            .label(format!("{title}: profile ({} draws)", fit::FIT_DRAWS))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2))
            });
        let marker = match profile.blocks[index].data {
            Data::Samples(_) => "data",
            Data::Cdf(_) => "data (bucket bounds)",
        };
        chart
            .draw_series(
                data.iter()
                    .map(|&(ms, p)| Circle::new((clamp(ms), p), 4, colour.stroke_width(1))),
            )?
            .label(format!("{title}: {marker}, {} points", data.len()))
            .legend(move |(x, y)| Circle::new((x + 12, y), 4, colour.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(INK)
        .label_font(font(15.0))
        .draw()?;
    Ok(())
}
