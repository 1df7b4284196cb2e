//! Human-readable timelines of a run: one line per event, one column per node, like the
//! ASCII diagram in the seeds but drawn from the recorded history, violations marked `!!`.

use std::collections::{BTreeMap, BTreeSet};

use fencesim_check::Violation;
use fencesim_model::{
    history::{BeliefEnd, EffectVia, EventKind, History, PauseKind},
    lease::Denial,
    NodeName, NS_PER_MS,
};

/// No line of a timeline is longer than this (in characters), so it reads in a terminal or
/// a CI log. Only a history with more nodes than fit one character each can exceed it.
pub const MAX_LINE_CHARS: usize = 160;

/// Width of the time column: fits `9999999.999` (close to three hours).
const TIME_WIDTH: usize = 11;
const SEPARATOR: &str = "  ";
/// Marks an event that is evidence of a violation, and the line naming the violation.
const VIOLATION_MARK: &str = "!!";
/// Header of the column for events of nodes not listed (the network, the nemesis).
const OTHER_COLUMN: &str = "other";

/// Renders `history` as a timeline with one column per node in `nodes` (in that order) and,
/// if any event happened elsewhere, a last "other" column whose cells name their node.
///
/// A node paused by a GC shows `:` (a suspended VM `|`) in its column until it resumes
/// (except on a line where another node's event text runs over that column).
/// Events that are evidence of a violation start with `!!`; after the violating event (the
/// last evidence) a line `!! I4 violated: <message>` follows, wrapped to the line limit.
/// Cells are truncated with `...` so no line exceeds [`MAX_LINE_CHARS`].
pub fn render(history: &History, violations: &[Violation], nodes: &[String]) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for node in nodes {
        if !columns.contains(&node.as_str()) {
            columns.push(node);
        }
    }
    let column_of = |node: &str| columns.iter().position(|c| *c == node);
    let evidence: BTreeSet<usize> = violations
        .iter()
        .flat_map(|v| v.evidence.iter().copied())
        .filter(|index| *index < history.events.len())
        .collect();

    // (column, text) per event; `columns.len()` is the "other" column.
    let cells: Vec<(usize, String)> = history
        .events
        .iter()
        .enumerate()
        .map(|(index, event)| {
            let mut text = String::new();
            if evidence.contains(&index) {
                text.push_str(VIOLATION_MARK);
                text.push(' ');
            }
            let column = column_of(&event.node).unwrap_or_else(|| {
                text.push_str(&event.node);
                text.push_str(": ");
                columns.len()
            });
            text.push_str(&event_text(&event.kind));
            (column, one_line(&text))
        })
        .collect();

    let mut headers: Vec<&str> = columns.clone();
    if cells.iter().any(|(column, _)| *column == columns.len()) {
        headers.push(OTHER_COLUMN);
    }
    let layout = Layout::new(&headers, &cells);

    // Violations are listed after their last evidence event, or, without valid evidence,
    // after the last event at or before their time (`None`: before every event).
    let mut anchored: BTreeMap<Option<usize>, Vec<&Violation>> = BTreeMap::new();
    for violation in violations {
        let anchor = violation
            .evidence
            .iter()
            .copied()
            .filter(|index| *index < history.events.len())
            .max()
            .or_else(|| {
                history
                    .events
                    .iter()
                    .rposition(|event| event.t_ns <= violation.t_ns)
            });
        anchored.entry(anchor).or_default().push(violation);
    }

    let mut out = String::new();
    let header_cells: Vec<(usize, String)> = headers
        .iter()
        .enumerate()
        .map(|(c, h)| (c, fit(h, layout.column_width)))
        .collect();
    layout.push_row(&mut out, "t (ms)", &header_cells);
    let rules: Vec<(usize, String)> = (0..headers.len())
        .map(|c| (c, "-".repeat(layout.column_width)))
        .collect();
    layout.push_row(&mut out, &"-".repeat(TIME_WIDTH), &rules);
    for violation in anchored.get(&None).into_iter().flatten() {
        push_violation(&mut out, violation);
    }

    let mut paused: Vec<Option<PauseKind>> = vec![None; columns.len()];
    for (index, (event, (column, text))) in history.events.iter().zip(&cells).enumerate() {
        let node_column = (*column < columns.len()).then_some(*column);
        if let (Some(c), EventKind::Resumed { .. } | EventKind::Crashed | EventKind::Restarted) =
            (node_column, &event.kind)
        {
            paused[c] = None;
        }
        let mut row: Vec<(usize, String)> = paused
            .iter()
            .enumerate()
            .filter_map(|(c, pause)| match pause {
                _ if c == *column => None,
                Some(PauseKind::Gc) => Some((c, ":".to_string())),
                Some(PauseKind::VmSuspend) => Some((c, "|".to_string())),
                None => None,
            })
            .collect();
        row.push((*column, text.clone()));
        row.sort_by_key(|(c, _)| *c);
        layout.push_row(&mut out, &format_ns(event.t_ns), &row);
        if let (Some(c), EventKind::Paused { kind, .. }) = (node_column, &event.kind) {
            paused[c] = Some(*kind);
        }
        for violation in anchored.get(&Some(index)).into_iter().flatten() {
            push_violation(&mut out, violation);
        }
    }
    out
}

/// Where the columns start. Columns share one width so the grid reads like the seeds'
/// diagram. An event's text may run on to the right over the other columns, up to the line
/// limit: what happened matters more than a pause marker it hides on that one line, and long
/// events stay readable even when many nodes share the width.
struct Layout {
    column_width: usize,
}

impl Layout {
    fn new(headers: &[&str], cells: &[(usize, String)]) -> Layout {
        let widest_header = headers.iter().map(|h| h.chars().count()).max().unwrap_or(1);
        let widest_cell = cells
            .iter()
            .map(|(_, text)| text.chars().count())
            .max()
            .unwrap_or(1);
        let fair = MAX_LINE_CHARS.saturating_sub(TIME_WIDTH + SEPARATOR.len() * headers.len())
            / headers.len().max(1);
        let column_width = widest_cell.min(fair).max(widest_header.min(fair)).max(1);
        Layout { column_width }
    }

    fn column_start(&self, column: usize) -> usize {
        TIME_WIDTH + SEPARATOR.len() + column * (self.column_width + SEPARATOR.len())
    }

    /// One line: `time` right-aligned, then each `(column, text)` (ascending columns) at its
    /// column's start, cut at the line limit. A cell whose start an earlier cell's text has
    /// run over is left out.
    fn push_row(&self, out: &mut String, time: &str, cells: &[(usize, String)]) {
        let mut line = format!("{time:>TIME_WIDTH$}");
        let mut length = line.chars().count();
        for (column, text) in cells {
            let start = self.column_start(*column);
            if length + SEPARATOR.len() > start || start >= MAX_LINE_CHARS {
                continue;
            }
            line.push_str(&" ".repeat(start - length));
            let text = fit(text, MAX_LINE_CHARS - start);
            length = start + text.chars().count();
            line.push_str(&text);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// One violation on its own: its evidence events one per line (time, node, event), then the
/// invariant and the message.
pub fn render_violation(history: &History, v: &Violation) -> String {
    let rows: Vec<(String, String, String)> = v
        .evidence
        .iter()
        .map(|index| match history.events.get(*index) {
            Some(event) => (
                format!("{} ms", format_ns(event.t_ns)),
                event.node.clone(),
                one_line(&event_text(&event.kind)),
            ),
            None => (
                String::new(),
                String::new(),
                format!("(event #{index} is not in the history)"),
            ),
        })
        .collect();
    let time_width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let node_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (time, node, text) in &rows {
        let line = format!("  {time:>time_width$}  {node:<node_width$}  {text}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} violated ({}, scope {}): {}\n",
        v.invariant,
        v.invariant.title(),
        v.scope,
        one_line(&v.message)
    ));
    out
}

/// The text of one event as it appears in a timeline cell.
pub fn event_text(kind: &EventKind) -> String {
    match kind {
        EventKind::RunStarted { seed, liveness_bound_ms } => {
            format!("run started seed={seed}, liveness bound {liveness_bound_ms}ms")
        }
        EventKind::FaultsHealed => "all faults healed".to_string(),
        EventKind::RunEnded => "run ended".to_string(),
        EventKind::Granted { scope, holder, token, expires_mono_ms } => format!(
            "grant {scope} token={token} -> {holder}, expires mono {}ms",
            format_ms(*expires_mono_ms)
        ),
        EventKind::Renewed { scope, holder, token } => {
            format!("renew {scope} token={token} ({holder})")
        }
        EventKind::Refused { scope, holder, token, reason } => {
            format!("refuse {scope} token={} ({holder}): {reason}", optional_token(*token))
        }
        EventKind::Denied { scope, holder, denial } => match denial {
            Denial::Held { holder: owner, token } => {
                format!("deny {scope} to {holder}: held by {owner} token={token}")
            }
            Denial::LockDelay { until_ns } => {
                format!("deny {scope} to {holder}: lock-delay until {}ms", format_ns(*until_ns))
            }
            Denial::Conflict { version } => {
                format!("deny {scope} to {holder}: record changed (now version {version})")
            }
        },
        EventKind::Expired { scope, holder, token } => {
            format!("lease {scope} token={token} EXPIRED ({holder})")
        }
        EventKind::TakenOver { scope, holder, token, by } => {
            format!("lease {scope} token={token} TAKEN OVER by {by} ({holder})")
        }
        EventKind::Released { scope, holder, token } => {
            format!("release {scope} token={token} ({holder})")
        }
        EventKind::Dropped { scope, holder, token } => {
            format!("restart dropped {scope} token={token} ({holder})")
        }
        EventKind::Extended { scope, holder, token, expires_mono_ms } => format!(
            "restart kept {scope} token={token} ({holder}), expires mono {}ms",
            format_ms(*expires_mono_ms)
        ),
        EventKind::CountersLost => "token counters LOST".to_string(),
        EventKind::WritePresented { op, resource, writer, token, .. } => {
            format!("write op#{op} token={token} presented by {writer} on {resource}")
        }
        EventKind::WriteAccepted { op, resource, writer, token, previous, .. } => format!(
            "write op#{op} token={token} -> ACCEPTED by {writer} on {resource} (previous {})",
            optional_token(*previous)
        ),
        EventKind::WriteRejected { op, resource, writer, token, accepted, reason, .. } => format!(
            "write op#{op} token={token} -> REJECTED (accepted {}) by {writer} on {resource}: {reason}",
            optional_token(*accepted)
        ),
        EventKind::TokenRead { op, resource, writer, stored } => {
            format!("read op#{op} {resource} by {writer} -> stored token={}", optional_token(*stored))
        }
        EventKind::Fence { resource, writer, token, verdict } => match verdict {
            fencesim_model::fence::Verdict::Accepted { .. } => {
                format!("fence {resource} token={token} by {writer} -> ACCEPTED")
            }
            fencesim_model::fence::Verdict::Rejected { accepted, reason } => format!(
                "fence {resource} token={token} by {writer} -> REJECTED (accepted {}): {reason}",
                optional_token(*accepted)
            ),
        },
        EventKind::StorageStateLost => "volatile state LOST".to_string(),
        EventKind::BeliefStarted { scope, token, local_deadline_mono_ms } => format!(
            "acquire {scope} token={token} (deadline mono {}ms)",
            format_ms(*local_deadline_mono_ms)
        ),
        EventKind::BeliefEnded { scope, token, why, .. } => {
            format!("stop {scope} token={token}: {}", belief_end_text(why))
        }
        EventKind::WriteSent { op, resource, token } => {
            format!("write op#{op} token={token} sent ({resource})")
        }
        EventKind::WriteAbandoned { op, token, stored, .. } => {
            format!("write op#{op} token={token} abandoned: stored token={}", optional_token(*stored))
        }
        EventKind::RenewFailed { scope, token, reason } => {
            format!("renew {scope} token={token} FAILED: {reason}")
        }
        EventKind::SideEffect { op, resource, worker, token, via, .. } => {
            let via = match via {
                EffectVia::Direct => "direct",
                EffectVia::Outbox => "outbox",
            };
            format!("side effect op#{op} token={token} by {worker} on {resource} ({via})")
        }
        EventKind::Paused { kind: PauseKind::Gc, planned_ms } => {
            format!("GC pause {}ms", format_ms(*planned_ms))
        }
        EventKind::Paused { kind: PauseKind::VmSuspend, planned_ms } => {
            format!("VM suspend {}ms", format_ms(*planned_ms))
        }
        EventKind::Resumed { .. } => "resumed".to_string(),
        EventKind::ClockStepped { delta_ms, .. } => {
            let sign = if *delta_ms >= 0.0 { "+" } else { "" };
            format!("clock step {sign}{}ms", format_ms(*delta_ms))
        }
        EventKind::Crashed => "crash".to_string(),
        EventKind::Restarted => "restart".to_string(),
        EventKind::PartitionStarted { from, to, one_way } => {
            format!("partition {}", partition_text(from, to, *one_way))
        }
        EventKind::PartitionHealed { from, to, one_way } => {
            format!("heal partition {}", partition_text(from, to, *one_way))
        }
        EventKind::HoldStarted { from, to } => format!("hold {from} -> {to}"),
        EventKind::HoldReleased { from, to, released } => {
            format!("release held {from} -> {to} ({released} messages)")
        }
        EventKind::Panicked { message } => format!("PANIC: {message}"),
    }
}

fn belief_end_text(why: &BeliefEnd) -> &'static str {
    match why {
        BeliefEnd::Released => "released",
        BeliefEnd::RenewFailed => "renew failed",
        BeliefEnd::DeadlinePassed => "local deadline passed",
        BeliefEnd::CheckFailed => "lease check failed",
        BeliefEnd::WriteRejected => "write rejected",
        BeliefEnd::Crashed => "crashed",
    }
}

/// `a,b | *` (both directions, `*` for every other node) or `a -> b` (one way).
fn partition_text(from: &[NodeName], to: &[NodeName], one_way: bool) -> String {
    let side = |nodes: &[NodeName]| {
        if nodes.is_empty() {
            "*".to_string()
        } else {
            nodes.join(",")
        }
    };
    let arrow = if one_way { "->" } else { "|" };
    format!("{} {arrow} {}", side(from), side(to))
}

fn optional_token(token: Option<u64>) -> String {
    token.map_or_else(|| "none".to_string(), |t| t.to_string())
}

/// Nanoseconds as milliseconds with exactly 3 decimals, in integer arithmetic.
fn format_ns(t_ns: u64) -> String {
    format!("{}.{:03}", t_ns / NS_PER_MS, (t_ns % NS_PER_MS) / 1_000)
}

/// Milliseconds with at most 3 decimals, trailing zeros dropped: `15000`, `0.5`, `-128`.
fn format_ms(ms: f64) -> String {
    let text = format!("{ms:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// Control characters (newlines in panic messages) would break the grid.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` cut to `width` characters, ending in `...` when cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else if width <= 3 {
        text.chars().take(width).collect()
    } else {
        let mut out: String = text.chars().take(width - 3).collect();
        out.push_str("...");
        out
    }
}

/// `!! I4 violated: <message>`, wrapped at word boundaries to the line limit.
fn push_violation(out: &mut String, violation: &Violation) {
    let first = format!("{VIOLATION_MARK} {} violated: ", violation.invariant);
    let continuation = format!(
        "{VIOLATION_MARK}{}",
        " ".repeat(first.len() - VIOLATION_MARK.len())
    );
    let mut line = first.clone();
    let mut line_has_words = false;
    for word in one_line(&violation.message).split_whitespace() {
        let mut word = word.to_string();
        if line_has_words && line.chars().count() + 1 + word.chars().count() > MAX_LINE_CHARS {
            out.push_str(&line);
            out.push('\n');
            line = continuation.clone();
            line_has_words = false;
        }
        if line_has_words {
            line.push(' ');
        }
        // A single word longer than a whole line is cut rather than overflowing.
        let room = MAX_LINE_CHARS - line.chars().count();
        if word.chars().count() > room {
            word = fit(&word, room);
        }
        line.push_str(&word);
        line_has_words = true;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

#[cfg(test)]
mod tests;
