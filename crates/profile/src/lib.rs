//! Fault profiles from production data. Parsers of what production systems really print —
//! JVM unified GC logs (`jvm`), Go's gctrace (`go`), Prometheus histograms (`prometheus`) and
//! outage records (`outages`) — read through one bounded reader (`input`); `fit` turns their
//! values into an empirical distribution and compares data with draws from it; this module
//! assembles a [`Profile`]: ready `[[faults.random]]` blocks (or a latency distribution) with
//! their fit, and `picture` draws data against draws.
//!
//! No simulation here: a profile is a distribution and a rate, checked by the scenario
//! crate's own validation and sampled by its own sampler.

#![warn(missing_docs)]

pub mod fit;
pub mod fold;
pub mod go;
pub mod input;
pub mod jvm;
pub mod outages;
pub mod picture;
pub mod prometheus;
pub mod time;

use std::io::Read;

use fencesim_scenario::{limits::MAX_RATE_PER_MIN, Dist, FaultKind};

pub use fit::{Compared, Data};
pub use input::{InputError, LineReport, MAX_INPUT_BYTES};

/// What a block of the profile feeds.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A `[[faults.random]]` entry.
    Fault {
        /// The fault kind.
        kind: FaultKind,
        /// Events seen.
        count: usize,
        /// The span they were seen over (ms).
        span_ms: f64,
        /// Processes (workers) the entry stands for: the rate is per process times this.
        processes: u32,
    },
    /// `[network] latency_ms`.
    Latency,
}

/// One distribution of the profile, with the data it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// What it is, for people (`full collections`).
    pub title: String,
    /// Where it goes.
    pub target: Target,
    /// The data.
    pub data: Data,
    /// The empirical distribution built from it.
    pub dist: Dist,
    /// When the log's pauses were too frequent for one entry: how they were folded (`data`
    /// holds the folded pauses).
    pub fold: Option<fold::Fold>,
}

impl Block {
    /// Events per minute of one process (a fault block), to six significant digits.
    pub fn rate_per_min_each(&self) -> Option<f64> {
        self.rate(1)
    }

    /// The `rate_per_min` the block writes: per process times the processes, to six
    /// significant digits.
    pub fn rate_per_min(&self) -> Option<f64> {
        match self.target {
            Target::Fault { processes, .. } => self.rate(processes),
            Target::Latency => None,
        }
    }

    fn rate(&self, processes: u32) -> Option<f64> {
        match self.target {
            Target::Fault { count, span_ms, .. } => Some(fit::round_significant(
                count as f64 * f64::from(processes) / (span_ms / 60_000.0),
            )),
            Target::Latency => None,
        }
    }

    /// The fit: the data's p50/p90/p99/max against those of [`fit::FIT_DRAWS`] draws.
    pub fn fit(&self) -> Vec<Compared> {
        fit::compare(&self.data, &fit::draws(&self.dist, fit::FIT_DRAWS))
    }
}

/// A profile built from one input.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The input file, as named by the caller.
    pub file: String,
    /// The command that built it, for the printed header (`profile jvm-gc gc.log`).
    pub command: String,
    /// One line on what was found (`G1: 98 pauses over 120.3 s`).
    pub heading: String,
    /// Things the user must know (interpolation, merged windows, the span's definition).
    pub notes: Vec<String>,
    /// The distributions.
    pub blocks: Vec<Block>,
    /// The account of the input's lines.
    pub report: LineReport,
}

/// Options of the GC-log profiles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GcOptions {
    /// Workers the profile stands for (each a process like the one logged); the rate written
    /// is the log's rate times this. 1 to 64.
    pub workers: u32,
}

/// What a latency histogram measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measures {
    /// One-way delays: used as they are.
    OneWay,
    /// Request-to-reply times: each one-way message gets half (fencesim draws a latency per
    /// message), which keeps the quantiles of the round trip's sum only approximately.
    RoundTrip,
}

/// What an outage record describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutageTarget {
    /// The lease service down or restarting: `coordinator-restart`.
    Service,
    /// A holder's link to the lease service cut: `partition` (a random partition isolates the
    /// drawn worker from every other node).
    Link,
}

fn no_data(file: &str, report: &LineReport, what: &str) -> InputError {
    InputError {
        file: file.to_string(),
        expected: format!("expected {what}, found none\n{}", report.describe(file)),
    }
}

fn check_workers(file: &str, workers: u32) -> Result<(), InputError> {
    if (1..=64).contains(&workers) {
        Ok(())
    } else {
        Err(InputError {
            file: file.to_string(),
            expected: format!("--workers: expected 1 to 64 workers, got {workers}"),
        })
    }
}

fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}

/// A `gc-pause` block of `values` (ms, in log order) over `span_ms`, folded when they are
/// more than one entry holds at `workers` processes ([`fold`]).
fn pause_block(title: &str, values: Vec<f64>, span_ms: f64, workers: u32) -> Block {
    let fits = MAX_RATE_PER_MIN * span_ms / 60_000.0 / f64::from(workers);
    let (values, fold) = match fold::fold(&values, fits.floor() as usize) {
        Some((folded, fold)) => (folded, Some(fold)),
        None => (values, None),
    };
    let values = sorted(values);
    Block {
        fold,
        title: title.to_string(),
        target: Target::Fault {
            kind: FaultKind::GcPause,
            count: values.len(),
            span_ms,
            processes: workers,
        },
        dist: fit::table_from_samples(&values),
        data: Data::Samples(values),
    }
}

/// The profile of a JVM unified GC log: its stop-the-world pauses as `gc-pause` faults, full
/// collections in a block of their own.
pub fn jvm_gc(
    reader: impl Read,
    file: &str,
    max_bytes: u64,
    options: GcOptions,
) -> Result<Profile, InputError> {
    check_workers(file, options.workers)?;
    let mut log = jvm::GcLog::default();
    input::for_each_line(reader, file, max_bytes, |number, line| {
        log.line(number, line)
    })?;
    if log.pauses.is_empty() {
        return Err(no_data(
            file,
            &log.report,
            "stop-the-world pause lines of a JVM unified GC log (`[0.123s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 5.123ms`)",
        ));
    }
    let span_ms = log.span_ms().ok_or_else(|| InputError {
        file: file.to_string(),
        expected: "expected timestamps on the log's lines (a time decorator such as uptime, \
                   `-Xlog:gc*:file=gc.log:uptime,level,tags`) to measure the pauses' rate, \
                   found lines over no span of time"
            .to_string(),
    })?;
    let (full, other): (Vec<&jvm::Pause>, Vec<&jvm::Pause>) =
        log.pauses.iter().partition(|pause| pause.full);
    let collector = log
        .collector
        .clone()
        .unwrap_or_else(|| "collector not named in the log".to_string());
    let mut blocks = Vec::new();
    if !other.is_empty() {
        blocks.push(pause_block(
            "pauses other than full collections",
            other.iter().map(|p| p.duration_ms).collect(),
            span_ms,
            options.workers,
        ));
    }
    if !full.is_empty() {
        blocks.push(pause_block(
            "full collections",
            full.iter().map(|p| p.duration_ms).collect(),
            span_ms,
            options.workers,
        ));
    }
    let mut names: Vec<String> = log
        .pauses
        .iter()
        .map(|p| p.name.split(" (").next().unwrap_or(&p.name).to_string())
        .collect();
    names.sort();
    names.dedup();
    checked(Profile {
        file: file.to_string(),
        command: format!("profile jvm-gc {file} --workers {}", options.workers),
        heading: format!(
            "{collector}: {} stop-the-world pauses ({} full) over {:.1} s ({})",
            log.pauses.len(),
            full.len(),
            span_ms / 1e3,
            names.join(", ")
        ),
        notes: vec!["span: from the log's first to its last timestamped line".to_string()],
        blocks,
        report: log.report,
    })
}

/// The profile of Go gctrace lines: each collection's two stop-the-world phases as
/// `gc-pause` faults.
pub fn go_gc(
    reader: impl Read,
    file: &str,
    max_bytes: u64,
    options: GcOptions,
) -> Result<Profile, InputError> {
    check_workers(file, options.workers)?;
    let mut trace = go::GcTrace::default();
    input::for_each_line(reader, file, max_bytes, |number, line| {
        trace.line(number, line)
    })?;
    if trace.collections.is_empty() {
        return Err(no_data(
            file,
            &trace.report,
            "gctrace lines (`gc 7 @1.234s 2%: 0.011+1.2+0.003 ms clock, ...`, from GODEBUG=gctrace=1)",
        ));
    }
    let span_ms = trace.span_ms().ok_or_else(|| InputError {
        file: file.to_string(),
        expected: "expected collections at a positive time since the program started".into(),
    })?;
    let forced = trace.collections.iter().filter(|c| c.forced).count();
    checked(Profile {
        file: file.to_string(),
        command: format!("profile go-gc {file} --workers {}", options.workers),
        heading: format!(
            "Go: {} collections ({} forced), {} stop-the-world phases, over {:.1} s",
            trace.collections.len(),
            forced,
            2 * trace.collections.len(),
            span_ms / 1e3
        ),
        notes: vec![
            "each collection stops the world twice (sweep termination, mark termination); \
             each is a pause"
                .to_string(),
            "span: from the program's start (gctrace's @0s) to the end of its last collection"
                .to_string(),
        ],
        blocks: vec![pause_block(
            "stop-the-world phases",
            trace.pauses_ms(),
            span_ms,
            options.workers,
        )],
        report: trace.report,
    })
}

/// The unit of a histogram's bucket bounds.
pub fn unit_of(metric: &str) -> Option<f64> {
    if metric.ends_with("_seconds") {
        Some(1e3)
    } else if metric.ends_with("_milliseconds") || metric.ends_with("_ms") {
        Some(1.0)
    } else if metric.ends_with("_microseconds") || metric.ends_with("_us") {
        Some(1e-3)
    } else {
        None
    }
}

/// The profile of a Prometheus histogram: a latency distribution (`[network] latency_ms`).
/// `matches`: only the series carrying each `label=value`; `ms_per_unit`: the bounds' unit in
/// ms, or `None` to take it from the metric's name.
pub fn prometheus(
    reader: impl Read,
    file: &str,
    max_bytes: u64,
    metric: Option<&str>,
    matches: &[(String, String)],
    ms_per_unit: Option<f64>,
    measures: Measures,
) -> Result<Profile, InputError> {
    let mut exposition = prometheus::Exposition::default();
    input::for_each_line(reader, file, max_bytes, |number, line| {
        exposition.line(number, line)
    })?;
    let error = |expected: String| InputError {
        file: file.to_string(),
        expected,
    };
    let histogram = exposition
        .histogram(metric, matches)
        .map_err(|reason| error(format!("{reason}\n{}", exposition.report.describe(file))))?;
    let total = histogram.total();
    if total <= 0.0 {
        return Err(error(format!(
            "expected observations in {}, found its +Inf bucket at 0",
            histogram.metric
        )));
    }
    let unit = match ms_per_unit.or_else(|| unit_of(&histogram.metric)) {
        Some(unit) => unit,
        None => {
            return Err(error(format!(
                "expected the bounds' unit: {} does not end in _seconds, _milliseconds or \
                 _microseconds; pass --unit s|ms|us",
                histogram.metric
            )))
        }
    };
    let scale = match measures {
        Measures::OneWay => unit,
        Measures::RoundTrip => unit / 2.0,
    };
    let points = histogram.cdf_ms(scale);
    prometheus::check(file, &exposition, &histogram, scale, points.len())?;
    let finite_buckets = histogram.buckets.iter().filter(|b| b.0.is_finite()).count();
    let quantiles: Vec<[f64; 2]> = points
        .iter()
        .map(|&(ms, p)| [fit::round6(p), fit::round6(ms)])
        .collect();
    let notes = histogram_notes(&histogram, measures);
    let match_args: String = matches
        .iter()
        .map(|(key, value)| format!(" --match {key}={value}"))
        .collect();
    checked(Profile {
        file: file.to_string(),
        command: format!(
            "profile prometheus {file} --metric {}{match_args} --measures {}",
            histogram.metric,
            match measures {
                Measures::OneWay => "one-way",
                Measures::RoundTrip => "round-trip",
            }
        ),
        heading: format!(
            "{}: {total} observations in {finite_buckets} finite buckets, {} series summed",
            histogram.metric, histogram.series
        ),
        notes,
        blocks: vec![Block {
            title: format!("{} latency", histogram.metric),
            target: Target::Latency,
            dist: Dist::Empirical { quantiles },
            data: Data::Cdf(points),
            fold: None,
        }],
        report: exposition.report,
    })
}

/// What a reader of a profile from `histogram` should know: the interpolation, the
/// round-trip approximation, observations above the last finite bucket, a `_count` that
/// differs from the buckets.
fn histogram_notes(histogram: &prometheus::Histogram, measures: Measures) -> Vec<String> {
    let total = histogram.total();
    let mut notes = vec![
        "within each bucket the values are interpolated linearly (as Prometheus' \
         histogram_quantile does); the first bucket starts at 0"
            .to_string(),
    ];
    if measures == Measures::RoundTrip {
        notes.push(
            "--measures round-trip: each one-way message gets half of a request's time (an \
             approximation: fencesim draws each direction independently)"
                .to_string(),
        );
    }
    let above = histogram.above_finite();
    if above > 0.0 {
        notes.push(format!(
            "{above} of {total} observations ({:.2} %) are above the highest finite bucket; \
             their values are unknown and are placed at that bound",
            100.0 * above / total
        ));
    }
    if let Some(count) = histogram.count {
        if count != total {
            notes.push(format!(
                "the _count ({count}) differs from the +Inf bucket ({total}): a scrape taken \
                 mid-update; the buckets are used"
            ));
        }
    }
    notes
}

/// The profile of an outage record: outages of the lease service or of a holder's link.
/// `span_hours`: the period the record covers, or `None` for first start to last end.
pub fn outages(
    reader: impl Read,
    file: &str,
    max_bytes: u64,
    target: OutageTarget,
    span_hours: Option<f64>,
) -> Result<Profile, InputError> {
    let mut record = outages::Record::default();
    input::for_each_line(reader, file, max_bytes, |number, line| {
        record.line(number, line)
    })?;
    let (windows, merges) = record.outages();
    if windows.is_empty() {
        return Err(no_data(
            file,
            &record.report,
            "outage windows (`start,end`, RFC 3339 times with a zone or seconds)",
        ));
    }
    let (span_ms, span_note) = span(file, &record, &windows, span_hours)?;
    let lengths: Vec<f64> = windows.iter().map(|w| w.end_ms - w.start_ms).collect();
    let (kind, what) = match target {
        OutageTarget::Service => (FaultKind::CoordinatorRestart, "lease-service outages"),
        OutageTarget::Link => (FaultKind::Partition, "outages of a holder's link"),
    };
    let mut notes = vec![span_note];
    if merges > 0 {
        notes.push(format!(
            "{merges} overlapping windows merged into the outage they overlap"
        ));
    }
    if target == OutageTarget::Link {
        notes
            .push("a random partition isolates the drawn worker from every other node".to_string());
    }
    let values = sorted(lengths);
    checked(Profile {
        file: file.to_string(),
        command: format!(
            "profile outages {file} --target {}{}",
            match target {
                OutageTarget::Service => "service",
                OutageTarget::Link => "link",
            },
            span_hours.map_or(String::new(), |hours| format!(" --span-hours {hours}"))
        ),
        heading: format!(
            "{} {what} over {:.2} h",
            windows.len(),
            span_ms / 3_600_000.0
        ),
        notes,
        blocks: vec![Block {
            title: what.to_string(),
            target: Target::Fault {
                kind,
                count: values.len(),
                span_ms,
                processes: 1,
            },
            dist: fit::table_from_samples(&values),
            data: Data::Samples(values),
            fold: None,
        }],
        report: record.report,
    })
}

/// The most time a profile's input may cover, in hours (10 years): an outage record's
/// `--span-hours` and the span of its outages, and a GC log's span.
pub const MAX_SPAN_HOURS: f64 = 87_600.0;

/// The period an outage record's rate is over (ms) and its note: `--span-hours` when given
/// (at least the outages' own span, at most [`MAX_SPAN_HOURS`]), else the first outage's
/// start to the last one's end. A record mixing RFC 3339 rows and rows of seconds is
/// refused, naming a row of each.
fn span(
    file: &str,
    record: &outages::Record,
    windows: &[outages::Window],
    span_hours: Option<f64>,
) -> Result<(f64, String), InputError> {
    let error = |expected: String| InputError {
        file: file.to_string(),
        expected,
    };
    if let [Some(seconds), Some(dates)] = record.first_in_form {
        return Err(error(format!(
            "line {}: expected every row in the form of line {} ({}), got {}: the two are \
             decades apart on one time line",
            seconds.max(dates),
            seconds.min(dates),
            if dates < seconds {
                "RFC 3339 times"
            } else {
                "seconds"
            },
            if dates < seconds {
                "seconds"
            } else {
                "RFC 3339 times"
            },
        )));
    }
    let first = windows[0].start_ms;
    let last = windows.iter().map(|w| w.end_ms).fold(f64::MIN, f64::max);
    let covered_hours = (last - first) / 3_600_000.0;
    if covered_hours > MAX_SPAN_HOURS {
        return Err(error(format!(
            "expected outages within {MAX_SPAN_HOURS} h (10 years), got outages spread over \
             {covered_hours:.1} h (line {} to line {})",
            windows[0].line,
            windows
                .iter()
                .max_by(|a, b| a.end_ms.total_cmp(&b.end_ms))
                .map_or(0, |w| w.line)
        )));
    }
    let Some(hours) = span_hours else {
        return Ok((
            last - first,
            "span: from the first outage's start to the last one's end; pass --span-hours \
             with the period the record covers, or the rate is overstated"
                .to_string(),
        ));
    };
    if !(hours.is_finite() && hours >= covered_hours && hours > 0.0 && hours <= MAX_SPAN_HOURS) {
        return Err(error(format!(
            "--span-hours: expected a period at least as long as the record's outages span \
             ({covered_hours:.3} h) and at most {MAX_SPAN_HOURS} h (10 years), got {}",
            fit::plain(hours)
        )));
    }
    Ok((hours * 3_600_000.0, format!("span: {hours} h, as given")))
}

/// The profile, if every block can be pasted as printed: a fault block's span at most
/// [`MAX_SPAN_HOURS`] (a log of uptimes in the billions of seconds is not a rate), its rate at most the
/// format's [`MAX_RATE_PER_MIN`] (pauses are folded to fit it, [`fold`]; when even that
/// cannot help, the error says how the rate came about and what would), and the whole of [`Profile::toml`] pasted into
/// [`fencesim_scenario::MINIMAL_TOML`] accepted by the scenario loader, so no command prints
/// a block that `run` refuses.
fn checked(profile: Profile) -> Result<Profile, InputError> {
    let error = |expected: String| InputError {
        file: profile.file.clone(),
        expected,
    };
    for block in &profile.blocks {
        let Target::Fault {
            kind,
            count,
            span_ms,
            processes,
        } = block.target
        else {
            continue;
        };
        let hours = span_ms / 3_600_000.0;
        if hours > MAX_SPAN_HOURS {
            return Err(error(format!(
                "{}: expected events within {MAX_SPAN_HOURS} h (10 years), got {count} over \
                 {} h: check the input's timestamps",
                block.title,
                fit::plain(hours)
            )));
        }
        let rate = block.rate_per_min().unwrap_or(0.0);
        if rate <= MAX_RATE_PER_MIN {
            continue;
        }
        let help = if kind == FaultKind::GcPause {
            "a log this short cannot be folded into one entry (at least 2 pauses must fit at \
             that rate): log a longer stretch"
        } else {
            "pass --span-hours with the whole period the record covers"
        };
        return Err(error(format!(
            "{}: rate_per_min: expected at most {MAX_RATE_PER_MIN} per minute (the most one \
             [[faults.random]] entry holds), got {} ({count} over {} s, x {processes}); {help}",
            block.title,
            fit::plain(rate),
            fit::short(span_ms / 1e3)
        )));
    }
    let pasted = format!("{}\n{}", fencesim_scenario::MINIMAL_TOML, profile.toml());
    fencesim_scenario::parse_str(&pasted, "the printed profile").map_err(|e| {
        error(format!(
            "expected a profile the scenario loader accepts; pasted into the minimal scenario \
             it gives: {}: {}",
            e.field, e.expected
        ))
    })?;
    Ok(profile)
}

/// The comment line saying how a block's pauses were folded.
fn fold_note(fold: &fold::Fold, span_ms: f64, processes: u32) -> String {
    let logged =
        fit::round_significant(fold.logged as f64 * f64::from(processes) / (span_ms / 60_000.0));
    format!(
        "# note: the log's {} pauses, {logged} a minute for {processes} workers, are more than \
         the {MAX_RATE_PER_MIN} a minute one entry holds: the longest {} (from {} ms) are kept \
         as they are, the other {} folded {} at a time, in log order, into one pause of their \
         summed length (the time paused in all is kept)\n",
        fold.logged,
        fold.kept,
        fold.threshold_ms,
        fold.logged - fold.kept,
        fold.group
    )
}

/// The quantile pairs, four to a line, as a TOML array.
fn quantiles_toml(quantiles: &[[f64; 2]]) -> String {
    let mut out = String::from("quantiles = [\n");
    for row in quantiles.chunks(4) {
        let pairs: Vec<String> = row.iter().map(|[p, ms]| format!("[{p}, {ms}]")).collect();
        out.push_str(&format!("  {},\n", pairs.join(", ")));
    }
    out.push_str("]\n");
    out
}

impl Profile {
    /// The profile as scenario TOML to paste: a commented header, then per block a
    /// `[[faults.random]]` entry (or `[network.latency_ms]`) with its empirical table.
    pub fn toml(&self) -> String {
        let mut out = format!("# fencesim {}\n# {}\n", self.command, self.heading);
        for note in &self.notes {
            out.push_str(&format!("# note: {note}\n"));
        }
        for block in &self.blocks {
            let Dist::Empirical { quantiles } = &block.dist else {
                continue;
            };
            out.push('\n');
            match block.target {
                Target::Fault {
                    kind,
                    count,
                    span_ms,
                    processes,
                } => {
                    let each = block.rate_per_min_each().unwrap_or(0.0);
                    let rate = block.rate_per_min().unwrap_or(0.0);
                    let per = if kind == FaultKind::GcPause {
                        format!("{each} per minute per process, x {processes} workers")
                    } else {
                        format!("{each} per minute")
                    };
                    out.push_str(&format!(
                        "# {}: {count} over {:.1} s = {per}\n",
                        block.title,
                        span_ms / 1e3,
                    ));
                    if let Some(fold) = &block.fold {
                        out.push_str(&fold_note(fold, span_ms, processes));
                    }
                    out.push_str(&format!(
                        "[[faults.random]]\nkind = \"{kind}\"\nrate_per_min = {rate}\n"
                    ));
                    out.push_str("[faults.random.duration_ms]\ndist = \"empirical\"\n");
                }
                Target::Latency => {
                    out.push_str(&format!("# {}\n", block.title));
                    out.push_str("[network.latency_ms]\ndist = \"empirical\"\n");
                }
            }
            out.push_str(&quantiles_toml(quantiles));
        }
        out
    }

    /// One fit line per block: `title: p50 d/p ms, … (data/profile)`.
    pub fn fit_lines(&self) -> Vec<String> {
        self.blocks
            .iter()
            .map(|block| {
                format!(
                    "fit, {}: {}, {} draws",
                    block.title,
                    fit::summary_line(&block.fit()),
                    fit::FIT_DRAWS
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(quantiles: Vec<[f64; 2]>) -> Profile {
        Profile {
            file: "case".to_string(),
            command: "profile prometheus case".to_string(),
            heading: "made by hand".to_string(),
            notes: Vec::new(),
            blocks: vec![Block {
                title: "latency".to_string(),
                target: Target::Latency,
                data: Data::Cdf(vec![(0.0, 0.0), (1.0, 1.0)]),
                dist: Dist::Empirical { quantiles },
                fold: None,
            }],
            report: LineReport::default(),
        }
    }

    /// The last guard: a profile whose printed TOML the loader refuses is an input error
    /// naming the loader's field, whatever let it through the checks before.
    #[test]
    fn a_profile_the_loader_refuses_is_not_printed() {
        assert!(checked(latency(vec![[0.0, 1.0], [1.0, 2.0]])).is_ok());
        let error = checked(latency(vec![[0.0, 5.0], [1.0, 2.0]])).unwrap_err();
        assert_eq!(error.file, "case");
        assert!(
            error.expected.contains("network.latency_ms.quantiles[1]")
                && error.expected.contains("non-decreasing"),
            "{error}"
        );
    }
}
