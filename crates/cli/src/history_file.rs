//! Judging a history recorded outside the simulator (`fencesim check-history`): a JSON-lines
//! file in the trace format of `replay --trace` (reports/README.md), written by any system in
//! any language, read strictly and judged by the same checker as a simulated run
//! ([`fencesim_check::check`]).
//!
//! ```
//! let jsonl = concat!(
//!     r#"{"t_ns":0,"node":"lock","event":"granted","scope":"job","holder":"a","token":7,"expires_mono_ms":10000.0}"#, "\n",
//!     r#"{"t_ns":10000000000,"node":"lock","event":"expired","scope":"job","holder":"a","token":7}"#, "\n",
//!     r#"{"t_ns":10000000000,"node":"lock","event":"granted","scope":"job","holder":"b","token":8,"expires_mono_ms":20000.0}"#, "\n",
//!     r#"{"t_ns":15000000000,"node":"db","event":"write-accepted","op":1,"resource":"job","lease_scope":"job","writer":"a","token":7,"previous":null}"#, "\n",
//! );
//! let history = fencesim::parse_history("example.jsonl", jsonl).unwrap();
//! let judged = fencesim::judge_history(&history);
//! assert_eq!(judged.checked.violated(), vec![fencesim::Invariant::I4]);
//! ```

use std::{fmt, path::Path};

use fencesim_check::{check, Checked, Violation};
use fencesim_model::{
    history::{Event, EventKind, History},
    Invariant,
};
use serde::Serialize;

/// The largest history file `check-history` reads (bytes): 256 MiB.
pub const MAX_HISTORY_BYTES: u64 = 256 * 1024 * 1024;

/// A malformed history: the file, the line (1-based; 0 for the file as a whole), the field
/// (empty when the line as a whole is wrong) and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryError {
    /// The file as named by the caller.
    pub file: String,
    /// 1-based line number; 0 when the error is about the whole file.
    pub line: usize,
    /// The field at fault, if one is.
    pub field: String,
    /// What was expected, and what was found.
    pub message: String,
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.field.is_empty()) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (line, true) => write!(f, "{}:{line}: {}", self.file, self.message),
            (line, false) => write!(
                f,
                "{}:{line}: field `{}`: {}",
                self.file, self.field, self.message
            ),
        }
    }
}

impl std::error::Error for HistoryError {}

/// Reads `path` (at most [`MAX_HISTORY_BYTES`]) and parses it with [`parse_history`].
pub fn load_history(path: &Path) -> Result<History, HistoryError> {
    let file = path.display().to_string();
    let whole = |message: String| HistoryError {
        file: file.clone(),
        line: 0,
        field: String::new(),
        message,
    };
    let size = std::fs::metadata(path)
        .map_err(|e| whole(format!("cannot read: {e}")))?
        .len();
    if size > MAX_HISTORY_BYTES {
        return Err(whole(format!(
            "expected a history of at most {MAX_HISTORY_BYTES} bytes, got {size}"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| whole(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| whole(format!("expected UTF-8 text: {e}")))?;
    parse_history(&file, &text)
}

/// Parses JSON lines into a history: one event object per line (blank lines are skipped),
/// `t_ns` never decreasing. Every field of the event's kind must be present with its type,
/// and no other field may appear (a misspelt optional field would otherwise be ignored).
pub fn parse_history(file: &str, text: &str) -> Result<History, HistoryError> {
    let mut history = History::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event = parse_line(file, index + 1, line)?;
        if let Some(last) = history.events.last() {
            if event.t_ns < last.t_ns {
                return Err(HistoryError {
                    file: file.to_string(),
                    line: index + 1,
                    field: "t_ns".into(),
                    message: format!(
                        "expected events in time order (t_ns at least {} as on the line before), got {}",
                        last.t_ns, event.t_ns
                    ),
                });
            }
        }
        history.events.push(event);
    }
    // An empty or blank file holds nothing to judge: a verdict of "no violation" would be a
    // pass for a recorder that wrote nothing.
    if history.events.is_empty() {
        return Err(HistoryError {
            file: file.to_string(),
            line: 0,
            field: "events".into(),
            message:
                "expected at least one event (one JSON object per line), got an empty or blank file"
                    .into(),
        });
    }
    Ok(history)
}

fn parse_line(file: &str, line: usize, text: &str) -> Result<Event, HistoryError> {
    let error = |field: &str, message: String| HistoryError {
        file: file.to_string(),
        line,
        field: field.to_string(),
        message,
    };
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| error("", format!("expected one JSON object per line: {e}")))?;
    let serde_json::Value::Object(fields) = &value else {
        return Err(error("", "expected a JSON object".into()));
    };
    // The common fields first, so their errors name them.
    match fields.get("t_ns") {
        Some(t) if t.as_u64().is_some() => {}
        Some(t) => {
            return Err(error(
                "t_ns",
                format!("expected nanoseconds as an unsigned integer, got {t}"),
            ))
        }
        None => return Err(error("t_ns", "missing (true time in nanoseconds)".into())),
    }
    match fields.get("node") {
        Some(serde_json::Value::String(_)) => {}
        Some(other) => {
            return Err(error(
                "node",
                format!("expected a node name (string), got {other}"),
            ))
        }
        None => return Err(error("node", "missing (the node it happened on)".into())),
    }
    match fields.get("event") {
        Some(serde_json::Value::String(_)) => {}
        Some(other) => {
            return Err(error(
                "event",
                format!("expected an event kind (string), got {other}"),
            ))
        }
        None => {
            return Err(error(
                "event",
                "missing (the event kind, e.g. \"granted\")".into(),
            ))
        }
    }
    let event: Event = serde_json::from_value(value.clone()).map_err(|e| {
        let message = e.to_string();
        let field = culprit(&value, &message).unwrap_or_default();
        error(&field, message)
    })?;
    // Fields the kind does not have: serde ignores them, a checker must not.
    let back = serde_json::to_value(&event).expect("events serialize");
    if let Some(unknown) = fields.keys().find(|key| back.get(key.as_str()).is_none()) {
        let mut known: Vec<&String> = back
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        known.sort();
        let known: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
        return Err(error(
            unknown,
            format!(
                "not a field of a `{}` event (expected only {})",
                fields["event"].as_str().unwrap_or_default(),
                known.join(", ")
            ),
        ));
    }
    Ok(event)
}

/// The field a serde error is about: named in the message (`missing field`, `unknown
/// variant` of the kind), or found by replacing each field in turn with the same field of a
/// line that did parse.
fn culprit(value: &serde_json::Value, message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("missing field `") {
        return rest.split('`').next().map(str::to_string);
    }
    if message.starts_with("unknown variant") && message.contains("run-started") {
        return Some("event".into());
    }
    // A wrong type inside the kind: the field whose removal changes the error into "missing
    // field `that field`" (or makes the line parse, for an optional one) is the one at fault.
    let fields = value.as_object()?;
    for key in fields.keys() {
        if ["t_ns", "node", "event"].contains(&key.as_str()) {
            continue;
        }
        let mut without = fields.clone();
        without.remove(key);
        match serde_json::from_value::<Event>(serde_json::Value::Object(without)) {
            Ok(_) => return Some(key.clone()),
            Err(e) if e.to_string() == format!("missing field `{key}`") => {
                return Some(key.clone())
            }
            Err(_) => {}
        }
    }
    None
}

/// Whether the history has the events an invariant needs; `Err` says what is missing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judged {
    /// Which invariants the history's events allow judging, and for the others why not.
    pub scope: Vec<InvariantScope>,
    /// Violations and metrics, as for a simulated run.
    pub checked: Checked,
}

/// One invariant: judged, or not and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InvariantScope {
    /// The invariant.
    pub invariant: Invariant,
    /// Whether the events allow judging it.
    pub judged: bool,
    /// When not judged: the events it needs that the history lacks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// Judges a history with the checker, and says which invariants its events allow judging:
/// I1 and I2 need `granted` events, I3 `write-accepted`, I4 both, I5 `write-sent`,
/// `run-started` (its bound), `faults-healed`, and a run that lasts the bound past the heal.
pub fn judge_history(history: &History) -> Judged {
    let has = |pred: &dyn Fn(&EventKind) -> bool| history.events.iter().any(|e| pred(&e.kind));
    let grants = has(&|k| matches!(k, EventKind::Granted { .. }));
    let accepts = has(&|k| matches!(k, EventKind::WriteAccepted { .. }));
    let sends = has(&|k| matches!(k, EventKind::WriteSent { .. }));
    let bound_ms = history.events.iter().find_map(|e| match e.kind {
        EventKind::RunStarted {
            liveness_bound_ms, ..
        } => Some(liveness_bound_ms),
        _ => None,
    });
    let healed_ns = history
        .events
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::FaultsHealed))
        .map(|e| e.t_ns);
    let end_ns = history
        .events
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::RunEnded))
        .or(history.events.last())
        .map_or(0, |e| e.t_ns);
    let liveness = match (bound_ms, healed_ns) {
        (None, _) => Some("a `run-started` event (it carries `liveness_bound_ms`)".to_string()),
        (_, None) => Some("a `faults-healed` event (I5 counts from it)".to_string()),
        (Some(bound), Some(healed))
            if end_ns < healed.saturating_add(bound.saturating_mul(fencesim_model::NS_PER_MS)) =>
        {
            Some(format!(
                "a history lasting {bound} ms (the bound) past `faults-healed`"
            ))
        }
        // Without the workers' sends, a store that stopped accepting cannot be told from
        // workers that stopped writing.
        _ if !sends => Some(
            "`write-sent` events (without them a stalled store looks like idle workers)"
                .to_string(),
        ),
        _ => None,
    };
    let need = |ok: bool, what: &str| (!ok).then(|| what.to_string());
    let missing = [
        need(grants, "`granted` events"),
        need(grants, "`granted` events"),
        need(accepts, "`write-accepted` events"),
        match (grants, accepts) {
            (true, true) => None,
            (false, true) => Some("`granted` events".into()),
            (true, false) => Some("`write-accepted` events".into()),
            (false, false) => Some("`granted` and `write-accepted` events".into()),
        },
        liveness,
    ];
    let scope = Invariant::ALL
        .iter()
        .zip(missing)
        .map(|(&invariant, missing)| InvariantScope {
            invariant,
            judged: missing.is_none(),
            missing,
        })
        .collect();
    Judged {
        scope,
        checked: check(history),
    }
}

/// One violation with its proof: the evidence events themselves, not only their indices.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct ViolationJson<'a> {
    #[serde(flatten)]
    violation: &'a Violation,
    /// The evidence events themselves (`evidence` holds their 0-based indices among the
    /// file's events, blank lines not counted).
    proof: Vec<&'a Event>,
}

/// The `--json` report of `check-history`: `{file, events, trace_hash, verdict, invariants,
/// violations (each with its proof events), metrics}` (reports/README.md).
pub fn history_report_json(file: &str, history: &History, judged: &Judged) -> String {
    let violations: Vec<ViolationJson<'_>> = judged
        .checked
        .violations
        .iter()
        .map(|violation| ViolationJson {
            violation,
            proof: violation
                .evidence
                .iter()
                .filter_map(|&i| history.events.get(i))
                .collect(),
        })
        .collect();
    let report = serde_json::json!({
        "file": file,
        "events": history.events.len(),
        "trace_hash": history.trace_hash(),
        "verdict": if judged.checked.violations.is_empty() { "ok" } else { "violated" },
        "violated": judged.checked.violated(),
        "invariants": judged.scope,
        "violations": violations,
        "metrics": judged.checked.metrics,
    });
    let mut text = serde_json::to_string_pretty(&report).expect("report serializes");
    text.push('\n');
    text
}
