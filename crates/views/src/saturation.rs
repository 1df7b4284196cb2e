//! The saturation curve of a sweep as a picture: distinct abstract states and transitions
//! reached against the seeds run (`fencesim run --saturation FILE.png`). It takes the curve
//! as plain points, so it needs nothing of the verdict that computed them.

use fencesim_plot::{font, Draw, DrawResult, INK};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Picture size in pixels.
const SIZE_PX: (u32, u32) = (900, 520);
const STATES: RGBColor = RGBColor(31, 119, 180);
const TRANSITIONS: RGBColor = RGBColor(214, 96, 39);

/// One point of the curve: after `seeds` seeds, this many distinct states and transitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SaturationPoint {
    /// Seeds run so far.
    pub seeds: u64,
    /// Distinct abstract states reached so far.
    pub states: u64,
    /// Distinct transitions reached so far.
    pub transitions: u64,
}

/// The curve as PNG bytes (8-bit RGB), titled `title`; `note` (e.g. truncation) under it.
pub fn saturation_png(
    title: &str,
    note: Option<&str>,
    points: &[SaturationPoint],
) -> Result<Vec<u8>, String> {
    fencesim_plot::png(
        SIZE_PX,
        &Curve {
            title,
            note,
            points,
        },
    )
}

/// The picture: the title (and note) above a chart of both curves.
struct Curve<'a> {
    title: &'a str,
    note: Option<&'a str>,
    points: &'a [SaturationPoint],
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordu64, plotters::coord::types::RangedCoordu64>,
>;

impl Draw for Curve<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let centre = Pos::new(HPos::Center, VPos::Top);
        root.draw(&Text::new(
            self.title.to_string(),
            (SIZE_PX.0 as i32 / 2, 10),
            font(18.0).pos(centre),
        ))?;
        if let Some(note) = self.note {
            root.draw(&Text::new(
                note.to_string(),
                (SIZE_PX.0 as i32 / 2, 34),
                font(13.0).pos(centre),
            ))?;
        }
        let mut chart = self.chart(root)?;
        for (name, colour, pick) in [
            (
                "abstract states",
                STATES,
                (|p: &SaturationPoint| p.states) as fn(&SaturationPoint) -> u64,
            ),
            ("transitions", TRANSITIONS, |p: &SaturationPoint| {
                p.transitions
            }),
        ] {
            self.series(&mut chart, name, colour, pick)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(font(13.0))
            .background_style(WHITE.mix(0.9))
            .border_style(INK)
            .draw()?;
        Ok(())
    }
}

impl Curve<'_> {
    /// The axes, from the origin to the most seeds and (with headroom) the most reached.
    fn chart<'a, DB: DrawingBackend>(
        &self,
        root: &'a DrawingArea<DB, Shift>,
    ) -> Result<Chart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
        let x_max = self
            .points
            .iter()
            .map(|p| p.seeds)
            .max()
            .unwrap_or(1)
            .max(1);
        let y_max = self
            .points
            .iter()
            .map(|p| p.states.max(p.transitions))
            .max()
            .unwrap_or(1)
            .max(1);
        // Headroom above the highest point, so the legend never covers it.
        let y_top = y_max + y_max / 4 + 1;
        let mut chart = ChartBuilder::on(root)
            .margin(16)
            .margin_top(if self.note.is_some() { 60 } else { 44 })
            .margin_right(30)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(0u64..x_max, 0u64..y_top)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(236, 236, 236))
            .bold_line_style(RGBColor(220, 220, 220))
            .axis_style(INK)
            .label_style(font(13.0))
            .axis_desc_style(font(14.0))
            .x_desc("seeds run")
            .y_desc("distinct reached")
            .x_labels(8)
            .y_labels(6)
            .draw()?;
        Ok(chart)
    }

    /// One curve, from the origin (no seed, nothing reached), with a dot per point.
    fn series<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        name: &str,
        colour: RGBColor,
        pick: fn(&SaturationPoint) -> u64,
    ) -> DrawResult<DB> {
        let line: Vec<(u64, u64)> = std::iter::once((0, 0))
            .chain(self.points.iter().map(|p| (p.seeds, pick(p))))
            .collect();
        chart
            .draw_series(std::iter::once(PathElement::new(
                line.clone(),
                colour.stroke_width(2),
            )))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart.draw_series(
            line.into_iter()
                .skip(1)
                .map(|point| Circle::new(point, 3, colour.filled())),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points() -> Vec<SaturationPoint> {
        [
            (20, 266, 500),
            (40, 326, 640),
            (60, 384, 760),
            (300, 636, 1270),
        ]
        .into_iter()
        .map(|(seeds, states, transitions)| SaturationPoint {
            seeds,
            states,
            transitions,
        })
        .collect()
    }

    #[test]
    fn a_decodable_png_of_the_stated_size_and_the_same_bytes_every_time() {
        let png = saturation_png("chaos: abstract states over seeds", None, &points()).unwrap();
        let decoder = png::Decoder::new(png.as_slice());
        let reader = decoder.read_info().expect("a PNG");
        assert_eq!(
            (reader.info().width, reader.info().height),
            SIZE_PX,
            "the stated size"
        );
        let again = saturation_png("chaos: abstract states over seeds", None, &points()).unwrap();
        assert_eq!(png, again);
        // Another curve is another picture.
        let other = saturation_png("chaos: abstract states over seeds", None, &points()[..2]);
        assert_ne!(other.unwrap(), png);
    }

    #[test]
    fn no_points_still_draw() {
        assert!(saturation_png("empty", Some("no seed run"), &[]).is_ok());
    }
}
