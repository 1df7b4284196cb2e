//! The embedded font and the text colour: no system font is looked up (a fresh machine or CI
//! has none), so a picture is the same bytes everywhere.
//!
//! Every text size a picture uses is an even number of pixels: plotters' ab_glyph renderer
//! places each glyph at `(size / 2 + its top) as i32`, which rounds a half pixel one way for
//! tall glyphs and the other for low ones, so at an odd size a decimal point sits a pixel above
//! the digits' baseline ("35000·436" in a PNG). At an even size nothing is rounded.

use std::sync::Once;

use plotters::style::{FontStyle, IntoFont, RGBColor, TextStyle};

/// The embedded font. DejaVu fonts 2.37 (https://dejavu-fonts.github.io/), unmodified;
/// Bitstream Vera licence, DejaVu changes public domain: `assets/LICENSE-DejaVu.txt`.
const FONT: &[u8] = include_bytes!("../assets/DejaVuSansCondensed.ttf");
const FONT_FAMILY: &str = "sans-serif";

/// Text colour.
pub const INK: RGBColor = RGBColor(30, 30, 30);

/// Registers the embedded font under the family every plot uses; idempotent.
pub fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        if plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT).is_err() {
            panic!("the embedded font is a valid TrueType font");
        }
    });
}

/// The embedded font at `size` pixels, in [`INK`].
pub fn font(size: f64) -> TextStyle<'static> {
    (FONT_FAMILY, size).into_font().color(&INK)
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;

    use super::*;

    /// The lowest inked row of each run of inked columns of `text` drawn at `size` px on a
    /// PNG canvas, left to right (a glyph per run for `0 . 0`).
    fn glyph_bottoms(text: &str, size: f64) -> Vec<usize> {
        register_font();
        let (width, height) = (80usize, 40usize);
        let mut rgb = vec![255u8; width * height * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (width as u32, height as u32))
                .into_drawing_area();
            root.draw(&Text::new(text.to_string(), (4, 8), font(size)))
                .unwrap();
            root.present().unwrap();
        }
        let inked = |x: usize, y: usize| rgb[(y * width + x) * 3] < 128;
        let mut bottoms = Vec::new();
        let mut run_bottom: Option<usize> = None;
        for x in 0..width {
            let bottom = (0..height).rev().find(|&y| inked(x, y));
            match (bottom, run_bottom) {
                (Some(b), Some(r)) => run_bottom = Some(r.max(b)),
                (Some(b), None) => run_bottom = Some(b),
                (None, Some(r)) => {
                    bottoms.push(r);
                    run_bottom = None;
                }
                (None, None) => {}
            }
        }
        bottoms.extend(run_bottom);
        bottoms
    }

    #[test]
    fn a_decimal_point_sits_on_the_digits_baseline_at_every_even_size() {
        for size in [10.0, 12.0, 14.0, 16.0, 22.0] {
            let bottoms = glyph_bottoms("0 . 0", size);
            assert_eq!(bottoms.len(), 3, "{size}: {bottoms:?}");
            assert_eq!(
                bottoms[1], bottoms[0],
                "size {size}: the point is raised: {bottoms:?}"
            );
        }
        // What the even sizes avoid: at an odd size the point is drawn above the baseline.
        let odd = glyph_bottoms("0 . 0", 15.0);
        assert!(odd[1] < odd[0], "{odd:?}");
    }
}
