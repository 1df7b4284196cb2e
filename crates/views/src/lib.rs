//! Views of one run, for people: the per-node timeline, the short replay text, the timeline
//! picture (SVG and PNG, drawn with the plot kit, `fencesim-plot`) and the Perfetto trace. Each is a pure
//! function of the run's history and the checker's verdict on it.
//!
//! Architecture invariant: no I/O and no verdict logic: a view shows what the checker
//! decided, with its evidence on top, and returns bytes or text for the caller to write.

#![warn(missing_docs)]

pub mod perfetto;
#[cfg(feature = "pictures")]
pub mod picture;
pub mod replay_text;
#[cfg(feature = "pictures")]
pub mod saturation;
pub mod timeline;

pub use perfetto::perfetto_json;
#[cfg(feature = "pictures")]
pub use picture::{picture_png, picture_svg, picture_window_ns, PictureError, PictureOptions};
pub use replay_text::{
    compact_metrics, compact_metrics_except, replay_text, ReplayInput, ReplayTextOptions,
};
pub use timeline::{
    event_text, render, render_violation, render_with, TimelineOptions, MAX_LINE_CHARS,
};
