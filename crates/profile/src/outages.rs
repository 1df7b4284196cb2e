//! A CSV of outage windows, one per line: `start,end[,note]`. Times are RFC 3339 with a zone
//! (`2024-03-01T12:00:00Z`) or plain numbers of seconds (e.g. since the Unix epoch; both ends
//! in the same form). A header line (`start,end,…`) and `#` comments are skipped. Overlapping
//! windows are merged into one outage (and counted), since the lease service was out once.
//! Every row must use one form: a record mixing them is refused by the profile (its rows
//! would sit on two time lines, decades apart).

use crate::input::{Line, LineReport};

/// One outage window (ms on the file's time line).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// 1-based line number.
    pub line: usize,
    /// Start (ms).
    pub start_ms: f64,
    /// End (ms), after the start.
    pub end_ms: f64,
}

/// What an outage record holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// Windows as read, in file order.
    pub windows: Vec<Window>,
    /// The account of every line.
    pub report: LineReport,
    /// The first used row written in seconds (`[0]`) and in RFC 3339 times (`[1]`): a record
    /// holding both mixes two time lines (seconds since 1970 against dates), and is refused.
    pub first_in_form: [Option<usize>; 2],
    header_seen: bool,
}

impl Record {
    /// Reads one line.
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
        if trimmed.is_empty() || trimmed.starts_with('#') {
            self.report.skipped += 1;
            return;
        }
        let fields: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        let first = fields[0].trim_matches('"').to_ascii_lowercase();
        if !self.header_seen && self.windows.is_empty() && first.starts_with("start") {
            self.header_seen = true;
            self.report.skipped += 1;
            return;
        }
        if fields.len() < 2 {
            self.report
                .unusable(number, "expected `start,end` (two times)", text);
            return;
        }
        let (Some((start_ms, start_wall)), Some((end_ms, end_wall))) =
            (time(fields[0]), time(fields[1]))
        else {
            self.report.unusable(
                number,
                "expected RFC 3339 times with a zone (2024-03-01T12:00:00Z) or seconds",
                text,
            );
            return;
        };
        if start_wall != end_wall {
            self.report.unusable(
                number,
                "start and end must be written in the same form",
                text,
            );
            return;
        }
        if end_ms <= start_ms {
            self.report
                .unusable(number, "expected the end after the start", text);
            return;
        }
        if end_ms - start_ms > fencesim_scenario::limits::MAX_DURATION_MS as f64 {
            self.report
                .unusable(number, "an outage longer than 7 days", text);
            return;
        }
        self.first_in_form[usize::from(start_wall)].get_or_insert(number);
        self.report.used += 1;
        self.windows.push(Window {
            line: number,
            start_ms,
            end_ms,
        });
    }

    /// The outages: windows sorted by start, overlapping ones merged; and how many merges.
    pub fn outages(&self) -> (Vec<Window>, usize) {
        let mut sorted = self.windows.clone();
        sorted.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
        let mut merged: Vec<Window> = Vec::with_capacity(sorted.len());
        let mut merges = 0;
        for window in sorted {
            match merged.last_mut() {
                Some(last) if window.start_ms <= last.end_ms => {
                    last.end_ms = last.end_ms.max(window.end_ms);
                    merges += 1;
                }
                _ => merged.push(window),
            }
        }
        (merged, merges)
    }
}

/// A time as the record writes it: (ms, whether it is an RFC 3339 time) — RFC 3339 with a
/// zone, or a plain number of seconds (digits and a point, nothing else).
fn time(field: &str) -> Option<(f64, bool)> {
    let field = field.trim_matches('"');
    if let Some(ms) = crate::time::rfc3339_ms(field) {
        return Some((ms, true));
    }
    let plain = !field.is_empty()
        && field.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && field.bytes().next().is_some_and(|b| b.is_ascii_digit());
    plain
        .then(|| field.parse::<f64>().ok())
        .flatten()
        .filter(|s| s.is_finite())
        .map(|seconds| (seconds * 1e3, false))
}
