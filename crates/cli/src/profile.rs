//! `fencesim profile`: glue between the arguments, `fencesim-profile` (parsing and fitting)
//! and the files. Prints the profile as scenario TOML on stdout, the fit summary and the
//! account of the input's lines on stderr, and writes the fit picture.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use fencesim_profile::{GcOptions, Measures, OutageTarget, Profile, MAX_INPUT_BYTES};

use crate::common::InputError;

/// `fencesim profile SOURCE FILE …`.
#[derive(Args)]
pub(crate) struct ProfileArgs {
    #[command(subcommand)]
    source: Source,
}

/// Where the picture goes.
#[derive(Args)]
struct Picture {
    /// Also draw the fit picture here (`.png` or `.svg`, by the name's extension): the data's
    /// cumulative distribution against draws from the profile, on a log time axis.
    #[arg(long)]
    picture: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Source {
    /// A JVM unified GC log (`-Xlog:gc` or `-Xlog:gc*`, any collector, a time decorator):
    /// stop-the-world pauses as `gc-pause` faults, full collections in their own entry.
    JvmGc {
        /// The log (at most 256 MiB).
        file: PathBuf,
        /// Workers the profile stands for, each a process like the one logged (1..=64): the
        /// rate written is the log's rate times this.
        #[arg(long, default_value_t = 1)]
        workers: u32,
        #[command(flatten)]
        picture: Picture,
    },
    /// Go's `GODEBUG=gctrace=1` output: each collection's two stop-the-world phases as
    /// `gc-pause` faults.
    GoGc {
        /// The trace (standard error of the program; at most 256 MiB).
        file: PathBuf,
        /// Workers the profile stands for (1..=64): the rate written is the trace's rate
        /// times this.
        #[arg(long, default_value_t = 1)]
        workers: u32,
        #[command(flatten)]
        picture: Picture,
    },
    /// A Prometheus text exposition holding a histogram (`<name>_bucket{le="…"}`): a latency
    /// distribution for `[network] latency_ms`, interpolated linearly within buckets.
    Prometheus {
        /// The scrape (at most 256 MiB).
        file: PathBuf,
        /// The histogram, when the file has several (`http_request_duration_seconds`).
        #[arg(long)]
        metric: Option<String>,
        /// Only the series with this label value (`grpc_method=LeaseGrant`); repeatable. The
        /// chosen series are summed, as `sum by (le)`.
        #[arg(long = "match", value_name = "LABEL=VALUE")]
        matches: Vec<String>,
        /// The unit of the bucket bounds; default: from the metric's name (`_seconds`, …).
        #[arg(long, value_enum)]
        unit: Option<Unit>,
        /// What the histogram measured: one-way delays, or request-to-reply times (halved
        /// per message).
        #[arg(long, value_enum)]
        measures: MeasuresArg,
        #[command(flatten)]
        picture: Picture,
    },
    /// A CSV of outage windows (`start,end`, RFC 3339 times with a zone or seconds): outage
    /// rate and lengths of the lease service (`coordinator-restart`) or a holder's link
    /// (`partition`).
    Outages {
        /// The record (at most 256 MiB).
        file: PathBuf,
        /// Whose outages: the lease service, or a holder's link to it.
        #[arg(long, value_enum)]
        target: TargetArg,
        /// The period the record covers, in hours (default: first start to last end, which
        /// overstates the rate).
        #[arg(long)]
        span_hours: Option<f64>,
        #[command(flatten)]
        picture: Picture,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Unit {
    S,
    Ms,
    Us,
}

#[derive(Clone, Copy, ValueEnum)]
enum MeasuresArg {
    OneWay,
    RoundTrip,
}

#[derive(Clone, Copy, ValueEnum)]
enum TargetArg {
    Service,
    Link,
}

pub(crate) fn profile(args: &ProfileArgs) -> Result<bool, InputError> {
    let (file, picture) = match &args.source {
        Source::JvmGc { file, picture, .. }
        | Source::GoGc { file, picture, .. }
        | Source::Prometheus { file, picture, .. }
        | Source::Outages { file, picture, .. } => (file, picture.picture.as_deref()),
    };
    let format = picture.map(picture_format).transpose()?;
    let outputs: Vec<_> = picture
        .map(|path| fencesim::outputs::Output::new("--picture", path))
        .into_iter()
        .collect();
    fencesim::outputs::preflight(&outputs, &[file.as_path()])?;
    let name = file.display().to_string();
    let reader = fencesim_profile::input::open(file)?;
    let max = MAX_INPUT_BYTES;
    let profile = match &args.source {
        Source::JvmGc { workers, .. } => {
            fencesim_profile::jvm_gc(reader, &name, max, GcOptions { workers: *workers })
        }
        Source::GoGc { workers, .. } => {
            fencesim_profile::go_gc(reader, &name, max, GcOptions { workers: *workers })
        }
        Source::Prometheus {
            metric,
            matches,
            unit,
            measures,
            ..
        } => fencesim_profile::prometheus(
            reader,
            &name,
            max,
            metric.as_deref(),
            &label_matches(matches)?,
            unit.map(|unit| match unit {
                Unit::S => 1e3,
                Unit::Ms => 1.0,
                Unit::Us => 1e-3,
            }),
            match measures {
                MeasuresArg::OneWay => Measures::OneWay,
                MeasuresArg::RoundTrip => Measures::RoundTrip,
            },
        ),
        Source::Outages {
            target, span_hours, ..
        } => fencesim_profile::outages(
            reader,
            &name,
            max,
            match target {
                TargetArg::Service => OutageTarget::Service,
                TargetArg::Link => OutageTarget::Link,
            },
            *span_hours,
        ),
    }?;
    if let Some((path, format)) = picture.zip(format) {
        write_picture(path, format, &profile)?;
    }
    print!("{}", profile.toml());
    eprintln!("{}", profile.report.describe(&name));
    for line in profile.fit_lines() {
        eprintln!("{line}");
    }
    if let Some(path) = picture {
        eprintln!("picture: {}", path.display());
    }
    Ok(true)
}

fn label_matches(args: &[String]) -> Result<Vec<(String, String)>, InputError> {
    args.iter()
        .map(|arg| match arg.split_once('=') {
            Some((label, value)) if !label.is_empty() => {
                Ok((label.to_string(), value.trim_matches('"').to_string()))
            }
            _ => Err(InputError(format!(
                "--match: expected LABEL=VALUE (grpc_method=LeaseGrant), got {arg:?}"
            ))),
        })
        .collect()
}

/// The picture's format, from its name: `.png` or `.svg`.
#[derive(Clone, Copy)]
enum Format {
    Png,
    Svg,
}

fn picture_format(path: &Path) -> Result<Format, InputError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("png") => Ok(Format::Png),
        Some(e) if e.eq_ignore_ascii_case("svg") => Ok(Format::Svg),
        _ => Err(InputError(format!(
            "--picture {}: expected a file name ending in .png or .svg (the format)",
            path.display()
        ))),
    }
}

fn write_picture(path: &Path, format: Format, profile: &Profile) -> Result<(), InputError> {
    let drawn = match format {
        Format::Png => fencesim_profile::picture::png(profile),
        Format::Svg => fencesim_profile::picture::svg(profile).map(String::into_bytes),
    };
    let bytes = drawn.map_err(|e| InputError(format!("{}: cannot draw: {e}", path.display())))?;
    fencesim::fs::write_atomic_bytes(path, &bytes)
        .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))
}
