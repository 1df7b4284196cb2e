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

/// What a timeline shows. The default shows every event, one line each (what [`render`] does).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimelineOptions {
    /// Only these nodes' events and columns (kept in the order of the `nodes` argument);
    /// `None`: every node.
    pub nodes: Option<Vec<String>>,
    /// Only events with `start_ns <= t_ns <= end_ns` (true time); `None`: the whole run.
    pub window_ns: Option<(u64, u64)>,
    /// Runs of routine events collapse into one line with a count: accepted writes with the
    /// same writer, resource and token (their sent, presented and accepted events), and
    /// renewals of the same lease. Any other event shown ends every open run, so the order of
    /// what matters is kept; events that are evidence of a violation never collapse. A write
    /// presented at the instant of its verdict is left out (the verdict line says it all).
    pub collapse: bool,
}

/// Renders `history` as a timeline with one column per node in `nodes` (in that order) and,
/// if any event happened elsewhere, a last "other" column whose cells name their node.
///
/// A node paused by a GC shows `:` (a suspended VM `|`) in its column until it resumes
/// (except on a line where another node's event text runs over that column).
/// Events that are evidence of a violation start with `!!`; after the violating event (the
/// last evidence) a line `!! I4 violated: <message>` follows, wrapped to the line limit.
/// Cells are truncated with `...` so no line exceeds [`MAX_LINE_CHARS`].
pub fn render(history: &History, violations: &[Violation], nodes: &[String]) -> String {
    render_with(history, violations, nodes, &TimelineOptions::default())
}

/// [`render`], filtered by node and time window and optionally collapsed (see
/// [`TimelineOptions`]). A violation is listed when its time is inside the window, after its
/// last evidence event that is shown (before every line if none is).
pub fn render_with(
    history: &History,
    violations: &[Violation],
    nodes: &[String],
    options: &TimelineOptions,
) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for node in nodes {
        let wanted = options
            .nodes
            .as_ref()
            .is_none_or(|filter| filter.contains(node));
        if wanted && !columns.contains(&node.as_str()) {
            columns.push(node);
        }
    }
    let evidence: BTreeSet<usize> = violations
        .iter()
        .flat_map(|v| v.evidence.iter().copied())
        .filter(|index| *index < history.events.len())
        .collect();
    let in_window = |t_ns: u64| {
        options
            .window_ns
            .is_none_or(|(start, end)| start <= t_ns && t_ns <= end)
    };
    let visible: Vec<bool> = history
        .events
        .iter()
        .map(|event| {
            in_window(event.t_ns)
                && options
                    .nodes
                    .as_ref()
                    .is_none_or(|filter| filter.contains(&event.node))
        })
        .collect();
    let shown = if options.collapse {
        collapse(history, &evidence, &visible)
    } else {
        visible.iter().map(|v| v.then_some(None)).collect()
    };
    let cells = cells(history, &columns, &evidence, &shown);
    let shown_cells: Vec<(usize, String)> = cells.iter().flatten().cloned().collect();

    let mut headers: Vec<&str> = columns.clone();
    if shown_cells
        .iter()
        .any(|(column, _)| *column == columns.len())
    {
        headers.push(OTHER_COLUMN);
    }
    let layout = Layout::new(&headers, &shown_cells);
    let anchored = anchor_violations(
        history,
        violations.iter().filter(|v| in_window(v.t_ns)),
        &cells,
    );

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
    push_events(&mut out, history, &columns, &cells, &anchored, &layout);
    out
}

/// `(column, text)` per shown event (`shown` as [`collapse`] gives it); `columns.len()` is
/// the "other" column, whose cells name their node.
fn cells(
    history: &History,
    columns: &[&str],
    evidence: &BTreeSet<usize>,
    shown: &[Option<Option<String>>],
) -> Vec<Option<(usize, String)>> {
    history
        .events
        .iter()
        .zip(shown)
        .enumerate()
        .map(|(index, (event, shown))| {
            let replacement = shown.as_ref()?;
            let mut text = String::new();
            if evidence.contains(&index) {
                text.push_str(VIOLATION_MARK);
                text.push(' ');
            }
            let column = columns
                .iter()
                .position(|c| *c == event.node)
                .unwrap_or_else(|| {
                    text.push_str(&event.node);
                    text.push_str(": ");
                    columns.len()
                });
            match replacement {
                Some(run) => text.push_str(run),
                None => text.push_str(&event_text(&event.kind)),
            }
            Some((column, one_line(&text)))
        })
        .collect()
}

/// Violations are listed after their last evidence event shown, or, without one, after
/// the last event shown at or before their time (`None`: before every event).
fn anchor_violations<'v>(
    history: &History,
    violations: impl Iterator<Item = &'v Violation>,
    cells: &[Option<(usize, String)>],
) -> BTreeMap<Option<usize>, Vec<&'v Violation>> {
    let mut anchored: BTreeMap<Option<usize>, Vec<&Violation>> = BTreeMap::new();
    for violation in violations {
        let anchor = violation
            .evidence
            .iter()
            .copied()
            .filter(|index| cells.get(*index).is_some_and(Option::is_some))
            .max()
            .or_else(|| {
                history
                    .events
                    .iter()
                    .zip(cells)
                    .rposition(|(event, cell)| cell.is_some() && event.t_ns <= violation.t_ns)
            });
        anchored.entry(anchor).or_default().push(violation);
    }
    anchored
}

/// One row per shown event, with the pause markers of the other columns, each followed by
/// the violations anchored to it.
fn push_events(
    out: &mut String,
    history: &History,
    columns: &[&str],
    cells: &[Option<(usize, String)>],
    anchored: &BTreeMap<Option<usize>, Vec<&Violation>>,
    layout: &Layout,
) {
    // Pauses are tracked over every event, shown or not, so the markers stay right.
    let mut paused: Vec<Option<PauseKind>> = vec![None; columns.len()];
    for (index, (event, cell)) in history.events.iter().zip(cells).enumerate() {
        let node_column = columns.iter().position(|c| *c == event.node);
        if let (Some(c), EventKind::Resumed { .. } | EventKind::Crashed | EventKind::Restarted) =
            (node_column, &event.kind)
        {
            paused[c] = None;
        }
        if let Some((column, text)) = cell {
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
            layout.push_row(out, &format_ns(event.t_ns), &row);
        }
        if let (Some(c), EventKind::Paused { kind, .. }) = (node_column, &event.kind) {
            paused[c] = Some(*kind);
        }
        for violation in anchored.get(&Some(index)).into_iter().flatten() {
            push_violation(out, violation);
        }
    }
}

/// What collapsing groups: accepted writes by writer, resource and token; renewals by
/// holder, scope and token.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum RunKey {
    Writes {
        writer: String,
        resource: String,
        token: u64,
    },
    Renewals {
        holder: String,
        scope: String,
        token: u64,
    },
}

/// One collapsed run: the ops (or renewals) it holds and the true time of its last event.
struct Run {
    key: RunKey,
    leader: usize,
    ops: Vec<u64>,
    renewals: u64,
    last_ns: u64,
}

/// Per event: `None` hidden, `Some(None)` shown as itself, `Some(Some(text))` shown as the
/// line of the run it leads.
fn collapse(
    history: &History,
    evidence: &BTreeSet<usize>,
    visible: &[bool],
) -> Vec<Option<Option<String>>> {
    let op_key = routine_ops(history, evidence);
    let routine_op = |kind: &EventKind| -> Option<(u64, RunKey)> {
        let op = match kind {
            EventKind::WriteSent { op, .. }
            | EventKind::WritePresented { op, .. }
            | EventKind::WriteAccepted { op, .. } => *op,
            _ => return None,
        };
        op_key.get(&op).map(|key| (op, key.clone()))
    };
    // A write presented at the very instant of its verdict says nothing the verdict does not.
    let verdict_at: BTreeSet<(u64, u64)> = history
        .events
        .iter()
        .filter_map(|event| match &event.kind {
            EventKind::WriteAccepted { op, .. } | EventKind::WriteRejected { op, .. } => {
                Some((*op, event.t_ns))
            }
            _ => None,
        })
        .collect();

    let mut shown: Vec<Option<Option<String>>> = vec![None; history.events.len()];
    let mut runs: Vec<Run> = Vec::new();
    // Open runs by key, and which run each routine op joined.
    let mut open: BTreeMap<RunKey, usize> = BTreeMap::new();
    let mut run_of_op: BTreeMap<u64, usize> = BTreeMap::new();
    for (index, event) in history.events.iter().enumerate() {
        if !visible[index] {
            continue;
        }
        let routine = match &event.kind {
            _ if evidence.contains(&index) => None,
            EventKind::Renewed {
                scope,
                holder,
                token,
            } => Some((
                None,
                RunKey::Renewals {
                    holder: holder.clone(),
                    scope: scope.clone(),
                    token: *token,
                },
            )),
            kind => routine_op(kind).map(|(op, key)| (Some(op), key)),
        };
        let Some((op, key)) = routine else {
            let implied = match &event.kind {
                EventKind::WritePresented { op, .. } => {
                    !evidence.contains(&index) && verdict_at.contains(&(*op, event.t_ns))
                }
                _ => false,
            };
            if !implied {
                open.clear();
                shown[index] = Some(None);
            }
            continue;
        };
        let joined = op.and_then(|op| run_of_op.get(&op).copied());
        let run = match joined.or_else(|| open.get(&key).copied()) {
            Some(run) => run,
            None => {
                runs.push(Run {
                    key: key.clone(),
                    leader: index,
                    ops: Vec::new(),
                    renewals: 0,
                    last_ns: event.t_ns,
                });
                open.insert(key, runs.len() - 1);
                runs.len() - 1
            }
        };
        let entry = &mut runs[run];
        entry.last_ns = entry.last_ns.max(event.t_ns);
        match op {
            Some(op) => {
                if run_of_op.insert(op, run).is_none() {
                    entry.ops.push(op);
                }
            }
            None => entry.renewals += 1,
        }
    }
    for run in &runs {
        shown[run.leader] = Some(run.text());
    }
    shown
}

/// The routine ops and the run each belongs in: an op is routine when it was accepted,
/// nothing else happened to it (a rejection, a read, a side effect) and none of its events is
/// evidence.
fn routine_ops(history: &History, evidence: &BTreeSet<usize>) -> BTreeMap<u64, RunKey> {
    let mut accepted_as: BTreeMap<u64, RunKey> = BTreeMap::new();
    let mut notable: BTreeSet<u64> = BTreeSet::new();
    for (index, event) in history.events.iter().enumerate() {
        let op = match &event.kind {
            EventKind::WriteAccepted {
                op,
                resource,
                writer,
                token,
                ..
            } => {
                accepted_as.insert(
                    *op,
                    RunKey::Writes {
                        writer: writer.clone(),
                        resource: resource.clone(),
                        token: *token,
                    },
                );
                *op
            }
            EventKind::WriteSent { op, .. } | EventKind::WritePresented { op, .. } => *op,
            EventKind::WriteRejected { op, .. }
            | EventKind::TokenRead { op, .. }
            | EventKind::WriteAbandoned { op, .. }
            | EventKind::SideEffect { op, .. } => {
                notable.insert(*op);
                *op
            }
            _ => continue,
        };
        if evidence.contains(&index) {
            notable.insert(op);
        }
    }
    accepted_as
        .into_iter()
        .filter(|(op, _)| !notable.contains(op))
        .collect()
}

impl Run {
    /// The line the run's leader is shown as (`None`: as itself).
    fn text(&self) -> Option<String> {
        match (&self.key, self.ops.as_slice()) {
            // A single renewal reads best as itself.
            (RunKey::Renewals { .. }, _) if self.renewals == 1 => None,
            (
                RunKey::Renewals {
                    holder,
                    scope,
                    token,
                },
                _,
            ) => Some(format!(
                "renew {scope} token={token} ({holder}) x{} to {}",
                self.renewals,
                format_ns(self.last_ns)
            )),
            // The writer is the column (or named by the "other" cell); the text stays short
            // enough to read where five workers share the width.
            (
                RunKey::Writes {
                    resource, token, ..
                },
                [op],
            ) => Some(format!(
                "write op#{op} {resource} token={token} ACCEPTED at {}",
                format_ns(self.last_ns)
            )),
            (
                RunKey::Writes {
                    resource, token, ..
                },
                ops,
            ) => Some(format!(
                "op#{}..#{} x{} {resource} token={token} ACCEPTED to {}",
                ops.first().copied().unwrap_or_default(),
                ops.last().copied().unwrap_or_default(),
                ops.len(),
                format_ns(self.last_ns)
            )),
        }
    }
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
    match Category::of(kind) {
        Category::Run => run_text(kind),
        Category::Lease => lease_text(kind),
        Category::Storage => storage_text(kind),
        Category::Worker => worker_text(kind),
        Category::Fault => fault_text(kind),
    }
}

/// Whose event it is: the run's, the lease service's, the storage's, a worker's or a fault's.
/// [`event_text`] is written per category, and the Perfetto trace's event categories are these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    Run,
    Lease,
    Storage,
    Worker,
    Fault,
}

impl Category {
    /// Every kind named, no wildcard: a new event kind does not compile until it has one (and
    /// so a text).
    pub(crate) fn of(kind: &EventKind) -> Category {
        match kind {
            EventKind::RunStarted { .. } | EventKind::FaultsHealed | EventKind::RunEnded => {
                Category::Run
            }
            EventKind::Granted { .. }
            | EventKind::Renewed { .. }
            | EventKind::Refused { .. }
            | EventKind::Denied { .. }
            | EventKind::Expired { .. }
            | EventKind::TakenOver { .. }
            | EventKind::Released { .. }
            | EventKind::Dropped { .. }
            | EventKind::Extended { .. }
            | EventKind::CountersLost => Category::Lease,
            EventKind::WritePresented { .. }
            | EventKind::WriteAccepted { .. }
            | EventKind::WriteRejected { .. }
            | EventKind::TokenRead { .. }
            | EventKind::Fence { .. }
            | EventKind::StorageStateLost => Category::Storage,
            EventKind::BeliefStarted { .. }
            | EventKind::BeliefEnded { .. }
            | EventKind::WriteSent { .. }
            | EventKind::WriteAbandoned { .. }
            | EventKind::RenewFailed { .. }
            | EventKind::SideEffect { .. } => Category::Worker,
            EventKind::Paused { .. }
            | EventKind::Resumed { .. }
            | EventKind::ClockStepped { .. }
            | EventKind::Crashed
            | EventKind::Restarted
            | EventKind::PartitionStarted { .. }
            | EventKind::PartitionHealed { .. }
            | EventKind::HoldStarted { .. }
            | EventKind::HoldReleased { .. }
            | EventKind::Panicked { .. } => Category::Fault,
        }
    }

    /// `run`, `lease`, `storage`, `worker` or `fault`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Category::Run => "run",
            Category::Lease => "lease",
            Category::Storage => "storage",
            Category::Worker => "worker",
            Category::Fault => "fault",
        }
    }
}

/// [`event_text`] of the run's own events (no other kind reaches it).
fn run_text(kind: &EventKind) -> String {
    match kind {
        EventKind::RunStarted {
            seed,
            liveness_bound_ms,
        } => {
            format!("run started seed={seed}, liveness bound {liveness_bound_ms}ms")
        }
        EventKind::FaultsHealed => "all faults healed".to_string(),
        EventKind::RunEnded => "run ended".to_string(),
        _ => unreachable!("{kind:?} is not a run event"),
    }
}

/// [`event_text`] of a lease service's event (no other kind reaches it).
fn lease_text(kind: &EventKind) -> String {
    match kind {
        EventKind::Granted {
            scope,
            holder,
            token,
            expires_mono_ms,
        } => format!(
            "grant {scope} token={token} -> {holder}{}",
            expiry_text(*expires_mono_ms)
        ),
        EventKind::Renewed {
            scope,
            holder,
            token,
        } => {
            format!("renew {scope} token={token} ({holder})")
        }
        EventKind::Refused {
            scope,
            holder,
            token,
            reason,
        } => {
            format!(
                "refuse {scope} token={} ({holder}): {reason}",
                optional_token(*token)
            )
        }
        EventKind::Denied {
            scope,
            holder,
            denial,
        } => match denial {
            Denial::Held {
                holder: owner,
                token,
            } => {
                format!("deny {scope} to {holder}: held by {owner} token={token}")
            }
            Denial::LockDelay { until_ns } => {
                format!(
                    "deny {scope} to {holder}: lock-delay until {}ms",
                    format_ns(*until_ns)
                )
            }
            Denial::Conflict { version } => {
                format!("deny {scope} to {holder}: record changed (now version {version})")
            }
        },
        EventKind::Expired {
            scope,
            holder,
            token,
        } => {
            format!("lease {scope} token={token} EXPIRED ({holder})")
        }
        EventKind::TakenOver {
            scope,
            holder,
            token,
            by,
        } => {
            format!("lease {scope} token={token} TAKEN OVER by {by} ({holder})")
        }
        EventKind::Released {
            scope,
            holder,
            token,
        } => {
            format!("release {scope} token={token} ({holder})")
        }
        EventKind::Dropped {
            scope,
            holder,
            token,
        } => {
            format!("restart dropped {scope} token={token} ({holder})")
        }
        EventKind::Extended {
            scope,
            holder,
            token,
            expires_mono_ms,
        } => format!(
            "restart kept {scope} token={token} ({holder}){}",
            expiry_text(*expires_mono_ms)
        ),
        EventKind::CountersLost => "token counters LOST".to_string(),
        _ => unreachable!("{kind:?} is not a lease event"),
    }
}

/// [`event_text`] of a storage event (no other kind reaches it).
fn storage_text(kind: &EventKind) -> String {
    match kind {
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
        _ => unreachable!("{kind:?} is not a storage event"),
    }
}

/// [`event_text`] of a worker's event (no other kind reaches it).
fn worker_text(kind: &EventKind) -> String {
    match kind {
        EventKind::BeliefStarted {
            scope,
            token,
            local_deadline_mono_ms,
        } => format!(
            "acquire {scope} token={token} (deadline mono {}ms)",
            format_ms(*local_deadline_mono_ms)
        ),
        EventKind::BeliefEnded {
            scope, token, why, ..
        } => {
            format!("stop {scope} token={token}: {}", belief_end_text(why))
        }
        EventKind::WriteSent {
            op,
            resource,
            token,
        } => {
            format!("write op#{op} token={token} sent ({resource})")
        }
        EventKind::WriteAbandoned {
            op, token, stored, ..
        } => {
            format!(
                "write op#{op} token={token} abandoned: stored token={}",
                optional_token(*stored)
            )
        }
        EventKind::RenewFailed {
            scope,
            token,
            reason,
        } => {
            format!("renew {scope} token={token} FAILED: {reason}")
        }
        EventKind::SideEffect {
            op,
            resource,
            worker,
            token,
            via,
            ..
        } => {
            let via = match via {
                EffectVia::Direct => "direct",
                EffectVia::Outbox => "outbox",
            };
            format!("side effect op#{op} token={token} by {worker} on {resource} ({via})")
        }
        _ => unreachable!("{kind:?} is not a worker event"),
    }
}

/// [`event_text`] of a fault's event (no other kind reaches it).
fn fault_text(kind: &EventKind) -> String {
    match kind {
        EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms,
        } => {
            format!("GC pause {}ms", format_ms(*planned_ms))
        }
        EventKind::Paused {
            kind: PauseKind::VmSuspend,
            planned_ms,
        } => {
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
        _ => unreachable!("{kind:?} is not a fault event"),
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
/// `, expires mono Xms`, or nothing when the history did not give the expiry.
fn expiry_text(expires_mono_ms: f64) -> String {
    if expires_mono_ms.is_nan() {
        String::new()
    } else {
        format!(", expires mono {}ms", format_ms(expires_mono_ms))
    }
}

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
