//! Shared plotting pieces: the embedded font (no system font lookup) and PNG encoding of an
//! RGB buffer, used by the timeline picture and the tuning plots.

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

/// PNG bytes (8-bit RGB) of a `width` × `height` RGB buffer.
pub fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut png_bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut png_bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(png_bytes)
}
