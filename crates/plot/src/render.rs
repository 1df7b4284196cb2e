//! One way to turn a picture into bytes: a [`Draw`] drawn on plotters' SVG backend (text) or
//! its bitmap backend (8-bit RGB, encoded as PNG here, without the `image` crate), with the
//! embedded font registered first.

use plotters::{coord::Shift, prelude::*};

use crate::font::register_font;

/// What drawing on a backend `DB` returns.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A picture that can draw itself on any plotters backend, so its SVG and PNG are the same
/// picture.
pub trait Draw {
    /// Draws the whole picture on `root` (which it fills first).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// `picture` as an SVG document of `size` pixels.
pub fn svg(size: (u32, u32), picture: &impl Draw) -> Result<String, String> {
    register_font();
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        picture.draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(text)
}

/// `picture` as PNG bytes (8-bit RGB) of `size` pixels.
pub fn png(size: (u32, u32), picture: &impl Draw) -> Result<Vec<u8>, String> {
    register_font();
    let (width, height) = size;
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        picture.draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    encode_png(&rgb, width, height)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::font::font;

    struct Square(RGBColor);

    impl Draw for Square {
        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
            root.fill(&WHITE)?;
            root.draw(&Rectangle::new([(2, 2), (8, 8)], self.0.filled()))?;
            root.draw(&Text::new("0.5".to_string(), (10, 2), font(12.0)))
        }
    }

    #[test]
    fn png_and_svg_draw_the_same_picture_at_the_stated_size() {
        let red = png((40, 20), &Square(RED)).unwrap();
        let reader = png::Decoder::new(red.as_slice()).read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (40, 20));
        assert_eq!(red, png((40, 20), &Square(RED)).unwrap(), "deterministic");
        assert_ne!(
            red,
            png((40, 20), &Square(BLUE)).unwrap(),
            "the content shows"
        );
        let text = svg((40, 20), &Square(RED)).unwrap();
        assert!(
            text.contains("width=\"40\"") && text.contains("0.5"),
            "{text}"
        );
        assert!(text.contains("#FF0000"), "{text}");
    }
}
