//! The plot kit every fencesim picture is drawn with (the timeline, the saturation curve, the
//! profile's fit, tune's plots): the embedded font and text colour (`font`), round tick steps
//! (`ticks`), placement of labels clear of each other (`labels`), and one way to render a
//! picture as SVG text or PNG bytes (`render`).
//!
//! Architecture invariant: no fencesim type and no I/O. A picture is a [`Draw`] that knows its
//! content; the kit only gives it pixels, text and bytes, so every picture looks and encodes
//! alike and none carries its own copy of these pieces.

#![warn(missing_docs)]

pub mod font;
pub mod labels;
pub mod render;
pub mod ticks;

pub use font::{font, register_font, INK};
pub use render::{encode_png, png, svg, Draw, DrawResult};
