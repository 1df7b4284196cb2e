//! JVM unified GC logs (`-Xlog:gc`, `-Xlog:gc*`, any decorators with a time): the
//! stop-the-world pause lines (`GC(n) Pause … 12.345ms`) of G1, Parallel, Serial, ZGC and
//! Shenandoah, split into full collections (`Pause Full`, Shenandoah's `Pause Degenerated`)
//! and the rest, over the log's span (first to last timestamped line).

use crate::input::{Line, LineReport};

/// One stop-the-world pause.
#[derive(Clone, Debug, PartialEq)]
pub struct Pause {
    /// 1-based line number.
    pub line: usize,
    /// What the JVM calls it, e.g. `Pause Young (Normal) (G1 Evacuation Pause)`.
    pub name: String,
    /// Its duration (ms).
    pub duration_ms: f64,
    /// A full (or degenerated) collection.
    pub full: bool,
}

/// What a GC log holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GcLog {
    /// The collector, from the `Using …` line when the log has one.
    pub collector: Option<String>,
    /// Every pause, in log order.
    pub pauses: Vec<Pause>,
    /// Earliest and latest time of any decorated line (ms; uptime since the JVM started, or
    /// wall time since the Unix epoch, whichever the decorators give).
    pub first_ms: Option<f64>,
    /// See `first_ms`.
    pub last_ms: Option<f64>,
    /// The account of every line.
    pub report: LineReport,
}

impl GcLog {
    /// The log's span (ms): from its first to its last timestamped line.
    pub fn span_ms(&self) -> Option<f64> {
        Some(self.last_ms? - self.first_ms?).filter(|span| *span > 0.0)
    }

    /// Reads one line into the log.
    pub fn line(&mut self, number: usize, line: Line<'_>) {
        self.report.lines += 1;
        let text = match line {
            Line::Text(text) => text,
            Line::Unreadable(reason) => {
                self.report.unusable(number, reason, "");
                return;
            }
        };
        if text.trim().is_empty() {
            self.report.skipped += 1;
            return;
        }
        let Some((decorations, message)) = decorations(text) else {
            self.report.unusable(
                number,
                "not a unified-logging line ([time][level][tags] message)",
                text,
            );
            return;
        };
        let mut time_ms = None;
        let mut tags = None;
        for decoration in &decorations {
            match classify(decoration) {
                Decoration::Uptime(ms) => time_ms = Some(ms),
                Decoration::Wall(ms) => time_ms = time_ms.or(Some(ms)),
                Decoration::Tags => tags = Some(decoration.as_str()),
                Decoration::Other => {}
            }
        }
        if let Some(ms) = time_ms {
            self.first_ms = Some(self.first_ms.map_or(ms, |first| first.min(ms)));
            self.last_ms = Some(self.last_ms.map_or(ms, |last| last.max(ms)));
        }
        if let Some(collector) = message.strip_prefix("Using ") {
            self.collector
                .get_or_insert_with(|| collector.trim().to_string());
        }
        match pause(message, tags) {
            PauseLine::Pause { name, duration_ms } => {
                self.report.used += 1;
                let full = name.starts_with("Pause Full") || name.starts_with("Pause Degenerated");
                self.pauses.push(Pause {
                    line: number,
                    name,
                    duration_ms,
                    full,
                });
            }
            PauseLine::NotAPause => self.report.skipped += 1,
            PauseLine::Malformed(reason) => self.report.unusable(number, reason, text),
        }
    }
}

/// The bracketed decorations at the start of `text` and the message after them.
fn decorations(text: &str) -> Option<(Vec<String>, &str)> {
    let mut rest = text;
    let mut found = Vec::new();
    while let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']')?;
        found.push(inner[..close].trim().to_string());
        rest = &inner[close + 1..];
    }
    if found.is_empty() {
        return None;
    }
    Some((found, rest.trim()))
}

enum Decoration {
    /// `0.012s`, `12ms`, `12345ns` (uptime; `timemillis` reads the same and works alike).
    Uptime(f64),
    /// `2024-03-01T12:00:00.123+0000` (`time`, `utctime`).
    Wall(f64),
    /// `gc,start` and the like.
    Tags,
    /// The level, pid, tid, hostname.
    Other,
}

fn classify(decoration: &str) -> Decoration {
    let number = |digits: &str, scale: f64| {
        let plain = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && digits.bytes().next().is_some_and(|b| b.is_ascii_digit());
        plain
            .then(|| digits.parse::<f64>().ok())
            .flatten()
            .filter(|value| value.is_finite())
            .map(|value| value * scale)
    };
    if let Some(ms) = decoration
        .strip_suffix("ns")
        .and_then(|d| number(d, 1e-6))
        .or_else(|| decoration.strip_suffix("ms").and_then(|d| number(d, 1.0)))
        .or_else(|| decoration.strip_suffix('s').and_then(|d| number(d, 1e3)))
    {
        return Decoration::Uptime(ms);
    }
    if let Some(ms) = crate::time::rfc3339_ms(decoration) {
        return Decoration::Wall(ms);
    }
    const LEVELS: [&str; 6] = ["trace", "debug", "info", "warning", "error", "off"];
    if LEVELS.contains(&decoration) {
        return Decoration::Other;
    }
    let tag_like = decoration.starts_with("gc")
        || decoration
            .split(',')
            .all(|tag| !tag.is_empty() && tag.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    if tag_like && decoration.bytes().any(|b| b.is_ascii_lowercase()) {
        Decoration::Tags
    } else {
        Decoration::Other
    }
}

enum PauseLine {
    Pause { name: String, duration_ms: f64 },
    NotAPause,
    Malformed(&'static str),
}

/// `GC(12) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 5.123ms` → the pause.
fn pause(message: &str, tags: Option<&str>) -> PauseLine {
    let Some(after) = message.strip_prefix("GC(") else {
        return PauseLine::NotAPause;
    };
    let Some((id, body)) = after.split_once(')') else {
        return PauseLine::NotAPause;
    };
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return PauseLine::NotAPause;
    }
    let body = body.trim();
    if !body.starts_with("Pause ") {
        return PauseLine::NotAPause;
    }
    let last = body.rsplit(' ').next().unwrap_or("");
    let duration = last
        .strip_suffix("ms")
        .filter(|digits| {
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
        .and_then(|digits| digits.parse::<f64>().ok());
    match duration {
        Some(ms) if ms.is_finite() && ms <= fencesim_scenario::limits::MAX_DURATION_MS as f64 => {
            let name_end = body.rfind(' ').map(|at| &body[..at]).unwrap_or(body).trim();
            // Drop the heap transition (`24M->3M(256M)`) from the name.
            let name = match name_end.rsplit_once(' ') {
                Some((head, tail)) if tail.contains("->") => head,
                _ => name_end,
            };
            PauseLine::Pause {
                name: name.to_string(),
                duration_ms: ms,
            }
        }
        Some(_) => PauseLine::Malformed("a pause longer than 7 days"),
        // `-Xlog:gc*` announces each pause on a `gc,start` line before it ends.
        None if tags.is_some_and(|tags| tags.split(',').any(|tag| tag == "start")) => {
            PauseLine::NotAPause
        }
        // Without a tags decorator a start line still reads `Pause Young (…) (…)`; a line
        // cut short ends mid-way (`24M->3M(2`), or has a heap transition and no duration.
        None if tags.is_none() && body.ends_with(')') && !body.contains("->") => {
            PauseLine::NotAPause
        }
        None => PauseLine::Malformed("a pause line without its duration (cut short?)"),
    }
}
