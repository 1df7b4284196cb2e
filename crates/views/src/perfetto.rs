//! The run as a Chrome trace-event JSON file, for ui.perfetto.dev and chrome://tracing: one
//! process with one thread track per node, lease epochs and beliefs as async slices, pauses
//! and crashes as slices, every event and every violation as an instant with its fields.

use std::collections::BTreeMap;

use fencesim_check::{index::Index, Violation};
use fencesim_model::history::{Event, EventKind, History, PauseKind};
use serde_json::{json, Value};

use crate::timeline::{event_text, Category};

/// The Chrome trace-event JSON of `history` (`{"traceEvents": [...], "displayTimeUnit":
/// "ms"}`), timestamps in microseconds of true time.
///
/// Each node is a process (`pid` = its position in `nodes`, then nodes met in the history
/// in order of appearance) holding exactly one thread track named after the node, so
/// Perfetto shows one group per node. On it:
/// - every event as an instant (`ph: "i"`), named by its timeline text, its fields in `args`
///   (category: `lease`, `storage`, `worker`, `fault` or `run`);
/// - GC pauses, VM suspends and crashes as complete slices (`ph: "X"`, category `fault`);
/// - lease epochs as the service saw them (on the granting node's track, the coordinator's;
///   one async track per scope, category `lease`): from each grant to the end of its tenure
///   or the next grant on its scope, whichever comes first ([`Index::epoch_end`]), and what
///   each worker believed (one async track per scope, category `belief`), as async slices
///   (`ph: "b"`/`"e"`), which may overlap without breaking nesting;
/// - each violation as a global instant (`s: "g"`, category `violation`, a line across all
///   tracks) at its time, with its message and its evidence events (index, time, node, text).
pub fn perfetto_json(history: &History, violations: &[Violation], nodes: &[String]) -> String {
    let index = Index::new(history);
    let mut trace = Trace::new(history, nodes);
    trace.push_events(&index);
    for (number, violation) in violations.iter().enumerate() {
        trace.push_violation(history, number, violation);
    }
    let mut text = trace.out.text;
    text.push_str("]}\n");
    text
}

/// The trace being written: its tracks (one per node) and its trace events, in order.
struct Trace {
    tracks: Vec<String>,
    out: Out,
}

/// The file's text so far: each trace event is written out as it is made, not kept as a
/// JSON value (a runaway seed's million events as values took more than 6 GB; as text,
/// about its size). The same bytes as the whole document serialized at once, whose keys
/// `serde_json` sorts: `{"displayTimeUnit":"ms","traceEvents":[…]}`.
struct Out {
    text: String,
    /// Whether an event was written (the next one is preceded by a comma).
    any: bool,
}

impl Out {
    fn new() -> Out {
        Out {
            text: String::from(r#"{"displayTimeUnit":"ms","traceEvents":["#),
            any: false,
        }
    }

    fn push(&mut self, event: Value) {
        if self.any {
            self.text.push(',');
        }
        self.any = true;
        self.text
            .push_str(&serde_json::to_string(&event).expect("a trace event serializes"));
    }
}

/// Slices open while the events are read, closed by a later event or the run's end.
#[derive(Default)]
struct OpenSlices {
    /// GC pauses, VM suspends and crashes: (node, what) → start.
    faults: BTreeMap<(String, String), u64>,
    /// Beliefs: async track → slice name.
    beliefs: BTreeMap<String, String>,
}

impl Trace {
    /// The tracks of `nodes`, then of nodes met in `history`, with their metadata events.
    fn new(history: &History, nodes: &[String]) -> Trace {
        let mut tracks: Vec<String> = Vec::new();
        for node in nodes.iter().chain(history.events.iter().map(|e| &e.node)) {
            if !tracks.contains(node) {
                tracks.push(node.clone());
            }
        }
        let mut out = Out::new();
        for (index, node) in tracks.iter().enumerate() {
            let pid = index + 1;
            for (name, args) in [
                ("process_name", json!({ "name": node })),
                ("process_sort_index", json!({ "sort_index": index })),
                ("thread_name", json!({ "name": node })),
            ] {
                out.push(json!({ "ph": "M", "pid": pid, "tid": pid, "name": name, "args": args }));
            }
        }
        Trace { tracks, out }
    }

    fn pid_of(&self, node: &str) -> usize {
        self.tracks
            .iter()
            .position(|t| t == node)
            .map_or(0, |p| p + 1)
    }

    /// Begins async slice `name` (category `cat`) on `track`, on `node`'s track.
    fn async_begin(
        &mut self,
        node: &str,
        cat: &str,
        track: &str,
        name: String,
        t_ns: u64,
        args: Value,
    ) {
        let pid = self.pid_of(node);
        self.out.push(json!({
            "ph": "b", "pid": pid, "tid": pid, "cat": cat, "id": track_id(track), "name": name,
            "ts": micros(t_ns), "args": args,
        }));
    }

    /// Ends async slice `name` (category `cat`) on `track`, on `node`'s track.
    fn async_end(&mut self, node: &str, cat: &str, track: &str, name: String, t_ns: u64) {
        let pid = self.pid_of(node);
        self.out.push(json!({
            "ph": "e", "pid": pid, "tid": pid, "cat": cat, "id": track_id(track), "name": name,
            "ts": micros(t_ns),
        }));
    }

    /// A complete slice on `node`'s track.
    fn complete(&mut self, node: &str, name: &str, start: u64, end: u64) {
        let pid = self.pid_of(node);
        self.out.push(json!({
            "ph": "X", "pid": pid, "tid": pid, "cat": "fault", "name": name,
            "ts": micros(start), "dur": micros(end.saturating_sub(start)),
        }));
    }

    /// Every event as an instant, with the slices it begins or ends before it; then whatever
    /// is still open, ended at the run's last event.
    fn push_events(&mut self, index: &Index<'_>) {
        let events = index.events();
        let run_end_ns = events.last().map_or(0, |e| e.t_ns);
        // Per event, the grant whose epoch it ends; and the epochs open at the end.
        let mut epoch_ends: BTreeMap<usize, usize> = BTreeMap::new();
        let mut open_epochs: BTreeMap<String, String> = BTreeMap::new();
        for tenure in index.tenures() {
            match index.epoch_end(tenure.grant) {
                Some(end) => {
                    epoch_ends.insert(end, tenure.grant);
                }
                None => {
                    let (_, track, name, _) = epoch_slice(index, tenure.grant);
                    open_epochs.insert(track, name);
                }
            }
        }
        let mut open = OpenSlices::default();
        for (k, event) in events.iter().enumerate() {
            if let Some(&grant) = epoch_ends.get(&k) {
                let (node, track, name, _) = epoch_slice(index, grant);
                self.async_end(node, "lease", &track, name, event.t_ns);
            }
            if let EventKind::Granted { .. } = &event.kind {
                let (node, track, name, args) = epoch_slice(index, k);
                self.async_begin(node, "lease", &track, name, event.t_ns, args);
            }
            self.push_belief_or_fault(&mut open, event);
            self.push_instant(event);
        }
        // Whatever is still open lasts to the end of the run.
        for ((node, name), start) in open.faults {
            self.complete(&node, &name, start, run_end_ns);
        }
        for (track, name) in open_epochs {
            self.async_end(track_node(&track), "lease", &track, name, run_end_ns);
        }
        for (track, name) in open.beliefs {
            self.async_end(track_node(&track), "belief", &track, name, run_end_ns);
        }
    }

    /// The belief, pause or crash slices `event` begins or ends.
    fn push_belief_or_fault(&mut self, open: &mut OpenSlices, event: &Event) {
        let node = event.node.as_str();
        let t = event.t_ns;
        let mut end_fault = |trace: &mut Trace, name: &str| {
            if let Some(start) = open.faults.remove(&(node.to_string(), name.to_string())) {
                trace.complete(node, name, start, t);
            }
        };
        match &event.kind {
            EventKind::BeliefStarted { scope, token, .. } => {
                let track = belief_track(node, scope);
                if let Some(name) = open.beliefs.remove(&track) {
                    self.async_end(node, "belief", &track, name, t);
                }
                let name = format!("believes {scope} token {token}");
                let args = json!({ "scope": scope, "token": token });
                self.async_begin(node, "belief", &track, name.clone(), t, args);
                open.beliefs.insert(track, name);
            }
            EventKind::BeliefEnded { scope, .. } => {
                let track = belief_track(node, scope);
                if let Some(name) = open.beliefs.remove(&track) {
                    self.async_end(node, "belief", &track, name, t);
                }
            }
            EventKind::Paused { kind, .. } => {
                open.faults
                    .insert((node.to_string(), pause_name(*kind).to_string()), t);
            }
            EventKind::Resumed { kind } => end_fault(self, pause_name(*kind)),
            EventKind::Crashed => {
                // A crash ends a pause in progress.
                for kind in [PauseKind::Gc, PauseKind::VmSuspend] {
                    end_fault(self, pause_name(kind));
                }
                open.faults
                    .insert((node.to_string(), CRASHED.to_string()), t);
            }
            EventKind::Restarted => end_fault(self, CRASHED),
            _ => {}
        }
    }

    /// `event` as an instant on its node's track, its fields as a history file writes them.
    fn push_instant(&mut self, event: &Event) {
        let pid = self.pid_of(&event.node);
        let mut args = fencesim_model::history::wire::event_value(event);
        if let Value::Object(fields) = &mut args {
            fields.remove("t_ns");
            fields.remove("node");
        }
        let cat = Category::of(&event.kind).name();
        self.out.push(json!({
            "ph": "i", "s": "t", "pid": pid, "tid": pid, "cat": cat,
            "name": event_text(&event.kind), "ts": micros(event.t_ns), "args": args,
        }));
    }

    /// Violation `number` as a global instant, with flow arrows to its evidence.
    fn push_violation(&mut self, history: &History, number: usize, violation: &Violation) {
        let last = violation
            .evidence
            .last()
            .and_then(|i| history.events.get(*i));
        let pid = last.map_or(1, |e| self.pid_of(&e.node));
        let evidence: Vec<Value> = violation
            .evidence
            .iter()
            .filter_map(|i| {
                let event = history.events.get(*i)?;
                Some(json!({
                    "index": i, "t_ms": event.t_ns as f64 / 1e6, "node": event.node,
                    "event": event_text(&event.kind),
                }))
            })
            .collect();
        self.out.push(json!({
            "ph": "i", "s": "g", "pid": pid, "tid": pid, "cat": "violation",
            "name": format!("{} violated ({})", violation.invariant, violation.invariant.title()),
            "ts": micros(violation.t_ns),
            "args": {
                "invariant": violation.invariant.to_string(), "scope": violation.scope,
                "message": violation.message, "evidence": evidence,
            },
        }));
        // Flow arrows from the violation to each evidence event: a zero-length slice on the
        // violating node's track to start them (a global instant is on no track, and a flow
        // binds to a slice), each ending on its evidence event's instant (`bp: "e"`: bound
        // to the enclosing slice, which an instant is).
        let name = format!("{} evidence", violation.invariant);
        self.out.push(json!({
            "ph": "X", "pid": pid, "tid": pid, "cat": "violation",
            "name": format!("{} violated", violation.invariant),
            "ts": micros(violation.t_ns), "dur": 0,
        }));
        for (k, index) in violation.evidence.iter().enumerate() {
            let Some(event) = history.events.get(*index) else {
                continue;
            };
            let id = flow_id(number, k);
            let to = self.pid_of(&event.node);
            self.out.push(json!({
                "ph": "s", "pid": pid, "tid": pid, "cat": "violation", "name": name,
                "id": id, "ts": micros(violation.t_ns),
            }));
            self.out.push(json!({
                "ph": "f", "bp": "e", "pid": to, "tid": to, "cat": "violation", "name": name,
                "id": id, "ts": micros(event.t_ns),
            }));
        }
    }
}

/// The slice name of a crash (until the node restarts).
const CRASHED: &str = "down (crashed)";

/// The node, async track, slice name and args of the lease epoch begun by `Granted` event
/// `grant`. Async tracks are identified per node and scope, so they never collide across nodes.
fn epoch_slice<'h>(index: &Index<'h>, grant: usize) -> (&'h str, String, String, Value) {
    let event = &index.events()[grant];
    let EventKind::Granted {
        scope,
        holder,
        token,
        ..
    } = &event.kind
    else {
        unreachable!("epochs begin with grants")
    };
    (
        &event.node,
        format!("{}/lease/{scope}", event.node),
        format!("{scope}: token {token} \u{2192} {holder}"),
        json!({ "scope": scope, "token": token, "holder": holder }),
    )
}

fn belief_track(node: &str, scope: &str) -> String {
    format!("{node}/belief/{scope}")
}

/// The node whose track an async track is on.
fn track_node(track: &str) -> &str {
    track.split('/').next().unwrap_or_default()
}

/// The id of the flow from violation `violation` to its `evidence`-th event: unique in the
/// trace (a violation's evidence is a handful of events; 2^20 per violation is far beyond).
fn flow_id(violation: usize, evidence: usize) -> u64 {
    ((violation as u64) << 20) | evidence as u64
}

fn pause_name(kind: PauseKind) -> &'static str {
    match kind {
        PauseKind::Gc => "GC pause",
        PauseKind::VmSuspend => "VM suspend",
    }
}

/// A numeric id for an async track (FNV-1a of its name, cut to 53 bits so JavaScript reads
/// it exactly): importers read a string id as a hexadecimal number, which ours are not.
fn track_id(track: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in track.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash & ((1 << 53) - 1)
}

/// Nanoseconds as microseconds (the trace format's unit), exact to the nanosecond.
fn micros(t_ns: u64) -> f64 {
    t_ns as f64 / 1_000.0
}

#[cfg(test)]
mod tests;
