//! The run as a Chrome trace-event JSON file, for ui.perfetto.dev and chrome://tracing: one
//! process with one thread track per node, lease epochs and beliefs as async slices, pauses
//! and crashes as slices, every event and every violation as an instant with its fields.

use std::collections::BTreeMap;

use fencesim_check::Violation;
use fencesim_model::history::{EventKind, History, PauseKind};
use serde_json::{json, Value};

use crate::timeline::event_text;

/// The Chrome trace-event JSON of `history` (`{"traceEvents": [...], "displayTimeUnit":
/// "ms"}`), timestamps in microseconds of true time.
///
/// Each node is a process (`pid` = its position in `nodes`, then nodes met in the history
/// in order of appearance) holding exactly one thread track named after the node, so
/// Perfetto shows one group per node. On it:
/// - every event as an instant (`ph: "i"`), named by its timeline text, its fields in `args`
///   (category: `lease`, `storage`, `worker`, `fault` or `run`);
/// - GC pauses, VM suspends and crashes as complete slices (`ph: "X"`, category `fault`);
/// - lease epochs as the service saw them (coordinator; one async track per scope, category
///   `lease`) and what each worker believed (one async track per scope, category `belief`),
///   as async slices (`ph: "b"`/`"e"`), which may overlap without breaking nesting;
/// - each violation as a global instant (`s: "g"`, category `violation`, a line across all
///   tracks) at its time, with its message and its evidence events (index, time, node, text).
pub fn perfetto_json(history: &History, violations: &[Violation], nodes: &[String]) -> String {
    let mut tracks: Vec<String> = Vec::new();
    for node in nodes.iter().chain(history.events.iter().map(|e| &e.node)) {
        if !tracks.contains(node) {
            tracks.push(node.clone());
        }
    }
    let pid_of = |node: &str| tracks.iter().position(|t| t == node).map_or(0, |p| p + 1);
    let mut out: Vec<Value> = Vec::new();
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

    let run_end_ns = history.events.last().map_or(0, |e| e.t_ns);
    // Open slices: (node, what) -> start.
    let mut open: BTreeMap<(String, String), u64> = BTreeMap::new();
    let async_begin = |out: &mut Vec<Value>,
                       pid: usize,
                       cat: &str,
                       track: &str,
                       name: String,
                       t_ns: u64,
                       args: Value| {
        out.push(json!({
            "ph": "b", "pid": pid, "tid": pid, "cat": cat, "id": track_id(track), "name": name,
            "ts": micros(t_ns), "args": args,
        }));
    };
    let async_end =
        |out: &mut Vec<Value>, pid: usize, cat: &str, track: &str, name: String, t_ns: u64| {
            out.push(json!({
                "ph": "e", "pid": pid, "tid": pid, "cat": cat, "id": track_id(track), "name": name,
                "ts": micros(t_ns),
            }));
        };
    let complete = |out: &mut Vec<Value>, pid: usize, name: &str, start: u64, end: u64| {
        out.push(json!({
            "ph": "X", "pid": pid, "tid": pid, "cat": "fault", "name": name,
            "ts": micros(start), "dur": micros(end.saturating_sub(start)),
        }));
    };
    // Async tracks are identified per node and scope, so they never collide across nodes.
    let epoch_track = |node: &str, scope: &str| format!("{node}/lease/{scope}");
    let belief_track = |node: &str, scope: &str| format!("{node}/belief/{scope}");
    let mut epoch_names: BTreeMap<String, String> = BTreeMap::new();
    let mut belief_names: BTreeMap<String, String> = BTreeMap::new();

    for event in &history.events {
        let pid = pid_of(&event.node);
        let node = event.node.as_str();
        let t = event.t_ns;
        match &event.kind {
            EventKind::Granted {
                scope,
                holder,
                token,
                ..
            } => {
                let track = epoch_track(node, scope);
                // A grant while the scope's epoch is still open (an I2 violation) ends it
                // here, so slices on the track stay well formed.
                if let Some(name) = epoch_names.remove(&track) {
                    async_end(&mut out, pid, "lease", &track, name, t);
                }
                let name = format!("{scope}: token {token} \u{2192} {holder}");
                async_begin(
                    &mut out,
                    pid,
                    "lease",
                    &track,
                    name.clone(),
                    t,
                    json!({ "scope": scope, "token": token, "holder": holder }),
                );
                epoch_names.insert(track, name);
            }
            EventKind::Expired { scope, .. }
            | EventKind::TakenOver { scope, .. }
            | EventKind::Released { scope, .. }
            | EventKind::Dropped { scope, .. } => {
                let track = epoch_track(node, scope);
                if let Some(name) = epoch_names.remove(&track) {
                    async_end(&mut out, pid, "lease", &track, name, t);
                }
            }
            EventKind::BeliefStarted { scope, token, .. } => {
                let track = belief_track(node, scope);
                if let Some(name) = belief_names.remove(&track) {
                    async_end(&mut out, pid, "belief", &track, name, t);
                }
                let name = format!("believes {scope} token {token}");
                async_begin(
                    &mut out,
                    pid,
                    "belief",
                    &track,
                    name.clone(),
                    t,
                    json!({ "scope": scope, "token": token }),
                );
                belief_names.insert(track, name);
            }
            EventKind::BeliefEnded { scope, .. } => {
                let track = belief_track(node, scope);
                if let Some(name) = belief_names.remove(&track) {
                    async_end(&mut out, pid, "belief", &track, name, t);
                }
            }
            EventKind::Paused { kind, .. } => {
                open.insert((node.to_string(), pause_name(*kind).to_string()), t);
            }
            EventKind::Resumed { kind } => {
                if let Some(start) = open.remove(&(node.to_string(), pause_name(*kind).to_string()))
                {
                    complete(&mut out, pid, pause_name(*kind), start, t);
                }
            }
            EventKind::Crashed => {
                // A crash ends a pause in progress.
                for kind in [PauseKind::Gc, PauseKind::VmSuspend] {
                    if let Some(start) =
                        open.remove(&(node.to_string(), pause_name(kind).to_string()))
                    {
                        complete(&mut out, pid, pause_name(kind), start, t);
                    }
                }
                open.insert((node.to_string(), "down (crashed)".to_string()), t);
            }
            EventKind::Restarted => {
                if let Some(start) = open.remove(&(node.to_string(), "down (crashed)".to_string()))
                {
                    complete(&mut out, pid, "down (crashed)", start, t);
                }
            }
            _ => {}
        }
        // The event's fields as a history file writes them.
        let mut args = fencesim_model::history::wire::event_value(event);
        if let Value::Object(fields) = &mut args {
            fields.remove("t_ns");
            fields.remove("node");
        }
        out.push(json!({
            "ph": "i", "s": "t", "pid": pid, "tid": pid, "cat": category(&event.kind),
            "name": event_text(&event.kind), "ts": micros(t), "args": args,
        }));
    }
    // Whatever is still open lasts to the end of the run.
    for ((node, name), start) in open {
        complete(&mut out, pid_of(&node), &name, start, run_end_ns);
    }
    for (track, name) in epoch_names {
        let node = track.split('/').next().unwrap_or_default();
        async_end(&mut out, pid_of(node), "lease", &track, name, run_end_ns);
    }
    for (track, name) in belief_names {
        let node = track.split('/').next().unwrap_or_default();
        async_end(&mut out, pid_of(node), "belief", &track, name, run_end_ns);
    }

    for (number, violation) in violations.iter().enumerate() {
        let last = violation
            .evidence
            .last()
            .and_then(|i| history.events.get(*i));
        let pid = last.map_or(1, |e| pid_of(&e.node));
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
        out.push(json!({
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
        out.push(json!({
            "ph": "X", "pid": pid, "tid": pid, "cat": "violation",
            "name": format!("{} violated", violation.invariant),
            "ts": micros(violation.t_ns), "dur": 0,
        }));
        for (k, index) in violation.evidence.iter().enumerate() {
            let Some(event) = history.events.get(*index) else {
                continue;
            };
            let id = flow_id(number, k);
            let to = pid_of(&event.node);
            out.push(json!({
                "ph": "s", "pid": pid, "tid": pid, "cat": "violation", "name": name,
                "id": id, "ts": micros(violation.t_ns),
            }));
            out.push(json!({
                "ph": "f", "bp": "e", "pid": to, "tid": to, "cat": "violation", "name": name,
                "id": id, "ts": micros(event.t_ns),
            }));
        }
    }

    let trace = json!({ "traceEvents": out, "displayTimeUnit": "ms" });
    let mut text = serde_json::to_string(&trace).expect("the trace serializes");
    text.push('\n');
    text
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

fn category(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::RunStarted { .. } | EventKind::FaultsHealed | EventKind::RunEnded => "run",
        EventKind::Granted { .. }
        | EventKind::Renewed { .. }
        | EventKind::Refused { .. }
        | EventKind::Denied { .. }
        | EventKind::Expired { .. }
        | EventKind::TakenOver { .. }
        | EventKind::Released { .. }
        | EventKind::Dropped { .. }
        | EventKind::Extended { .. }
        | EventKind::CountersLost => "lease",
        EventKind::WritePresented { .. }
        | EventKind::WriteAccepted { .. }
        | EventKind::WriteRejected { .. }
        | EventKind::TokenRead { .. }
        | EventKind::Fence { .. }
        | EventKind::StorageStateLost => "storage",
        EventKind::BeliefStarted { .. }
        | EventKind::BeliefEnded { .. }
        | EventKind::WriteSent { .. }
        | EventKind::WriteAbandoned { .. }
        | EventKind::RenewFailed { .. }
        | EventKind::SideEffect { .. } => "worker",
        EventKind::Paused { .. }
        | EventKind::Resumed { .. }
        | EventKind::ClockStepped { .. }
        | EventKind::Crashed
        | EventKind::Restarted
        | EventKind::PartitionStarted { .. }
        | EventKind::PartitionHealed { .. }
        | EventKind::HoldStarted { .. }
        | EventKind::HoldReleased { .. }
        | EventKind::Panicked { .. } => "fault",
    }
}

#[cfg(test)]
mod tests;
