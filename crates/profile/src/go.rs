//! Go's `GODEBUG=gctrace=1` lines (`gc 7 @1.234s 2%: 0.011+1.2+0.003 ms clock, … 4 P`): each
//! collection stops the world twice, for sweep termination (the first wall-clock phase) and
//! mark termination (the third); the second phase is concurrent marking and is not a pause.
//! Go prints the time since the program started, so the span is from 0 to the end of the last
//! collection (a program that ran long after its last collection has a lower rate than this).

use crate::input::{Line, LineReport};

/// One collection's stop-the-world phases.
#[derive(Clone, Debug, PartialEq)]
pub struct Collection {
    /// 1-based line number.
    pub line: usize,
    /// Go's collection number.
    pub number: u64,
    /// Start, since the program started (ms).
    pub at_ms: f64,
    /// Sweep termination, stop-the-world (ms).
    pub sweep_termination_ms: f64,
    /// Concurrent mark and scan (ms), not a pause.
    pub concurrent_ms: f64,
    /// Mark termination, stop-the-world (ms).
    pub mark_termination_ms: f64,
    /// Forced by `runtime.GC()` or the two-minute timer.
    pub forced: bool,
}

/// What a gctrace log holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GcTrace {
    /// Every collection, in log order.
    pub collections: Vec<Collection>,
    /// The account of every line.
    pub report: LineReport,
}

impl GcTrace {
    /// From the program's start to the end of its last collection (ms).
    pub fn span_ms(&self) -> Option<f64> {
        self.collections
            .iter()
            .map(|c| c.at_ms + c.sweep_termination_ms + c.concurrent_ms + c.mark_termination_ms)
            .fold(None, |max: Option<f64>, end| {
                Some(max.map_or(end, |m| m.max(end)))
            })
            .filter(|span| *span > 0.0)
    }

    /// Every stop-the-world phase (ms), two per collection, in log order.
    pub fn pauses_ms(&self) -> Vec<f64> {
        self.collections
            .iter()
            .flat_map(|c| [c.sweep_termination_ms, c.mark_termination_ms])
            .collect()
    }

    /// Reads one line into the trace.
    pub fn line(&mut self, number: usize, line: Line<'_>) {
        self.report.lines += 1;
        let text = match line {
            Line::Text(text) => text,
            Line::Unreadable(reason) => {
                self.report.unusable(number, reason, "");
                return;
            }
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            self.report.skipped += 1;
            return;
        }
        // The runtime's other trace lines: a forced collection's announcement and the
        // scavenger's lines (older Go prints these with gctrace).
        if trimmed == "GC forced" || trimmed.starts_with("scvg") {
            self.report.skipped += 1;
            return;
        }
        if !trimmed.starts_with("gc ") {
            self.report
                .unusable(number, "not a gctrace line (gc N @Ts P%: ...)", text);
            return;
        }
        match collection(trimmed) {
            Ok(mut collection) => {
                collection.line = number;
                self.report.used += 1;
                self.collections.push(collection);
            }
            Err(reason) => self.report.unusable(number, reason, text),
        }
    }
}

fn collection(text: &str) -> Result<Collection, &'static str> {
    const CUT: &str = "a gctrace line cut short or malformed";
    let mut words = text.split_whitespace();
    words.next(); // "gc"
    let number = words
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or("expected a collection number after `gc`")?;
    let at_s = words
        .next()
        .and_then(|at| at.strip_prefix('@'))
        .and_then(|at| at.strip_suffix('s'))
        .and_then(|at| at.parse::<f64>().ok())
        .filter(|at| at.is_finite() && *at >= 0.0)
        .ok_or("expected `@<seconds>s` after the collection number")?;
    words
        .next()
        .filter(|share| share.ends_with("%:"))
        .ok_or(CUT)?;
    let clock = words.next().ok_or(CUT)?;
    let (ms, unit) = (words.next(), words.next());
    if ms != Some("ms") || unit != Some("clock,") {
        return Err(CUT);
    }
    let phases: Vec<f64> = clock
        .split('+')
        .map(|phase| {
            phase
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
        })
        .collect::<Option<Vec<f64>>>()
        .ok_or("expected three wall-clock phases `a+b+c ms clock`")?;
    let &[sweep_termination_ms, concurrent_ms, mark_termination_ms] = phases.as_slice() else {
        return Err("expected three wall-clock phases `a+b+c ms clock`");
    };
    let max = fencesim_scenario::limits::MAX_DURATION_MS as f64;
    if sweep_termination_ms > max || mark_termination_ms > max {
        return Err("a pause longer than 7 days");
    }
    // A complete line ends with the processor count: `4 P` or `4 P (forced)`.
    let rest: Vec<&str> = words.collect();
    let forced = rest.last() == Some(&"(forced)");
    let tail = if forced {
        &rest[..rest.len() - 1]
    } else {
        &rest[..]
    };
    if tail.last() != Some(&"P") {
        return Err(CUT);
    }
    Ok(Collection {
        line: 0,
        number,
        at_ms: at_s * 1e3,
        sweep_termination_ms,
        concurrent_ms,
        mark_termination_ms,
        forced,
    })
}
