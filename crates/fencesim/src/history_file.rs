//! Judging a history recorded outside the simulator (`fencesim check-history`): a JSON-lines
//! file in the trace format of `replay --trace` (reports/README.md), written by any system in
//! any language, read strictly and judged by the same checker as a simulated run
//! ([`fencesim_check::check`]). The format is `fencesim_model::history::wire`'s: an optional
//! header line naming the schema version (none: version 1), then one event per line.
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
    history::{
        wire::{self, Version},
        Event, EventKind, History,
    },
    Invariant,
};
use serde::{Deserialize as _, Serialize};

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
    let bytes = fencesim_scenario::input::read_limited(path, MAX_HISTORY_BYTES)
        .map_err(|e| whole(e.expected("a history file")))?;
    let text = fencesim_scenario::input::into_text(bytes).map_err(|at| HistoryError {
        line: at.line,
        ..whole(format!(
            "expected UTF-8 text, got invalid UTF-8 at column {} (byte {})",
            at.column, at.byte
        ))
    })?;
    parse_history(&file, &text)
}

/// Parses JSON lines into a history: an optional header line first (`{"schema":
/// "fencesim-history","version":1}`; without one the file is version 1), then one event
/// object per line (blank lines are skipped), `t_ns` never decreasing. Every field of the
/// event's kind must be present with its type, and no other field may appear (a misspelt
/// optional field would otherwise be ignored). A header of another schema or of a version
/// this build does not read is refused, naming its line and field.
pub fn parse_history(file: &str, text: &str) -> Result<History, HistoryError> {
    let mut history = History::default();
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(_, line)| !line.trim().is_empty())
        .peekable();
    let mut version = Version::V1;
    let mut header = false;
    if let Some(&(number, first)) = lines.peek() {
        match wire::header(first) {
            Ok(None) => {}
            Ok(Some(found)) => {
                version = found;
                header = true;
                lines.next();
            }
            Err(error) => {
                return Err(HistoryError {
                    file: file.to_string(),
                    line: number,
                    field: error.field,
                    message: error.message,
                })
            }
        }
    }
    for (number, line) in lines {
        let event = parse_line(file, number, version, line)?;
        if let Some(last) = history.events.last() {
            if event.t_ns < last.t_ns {
                return Err(HistoryError {
                    file: file.to_string(),
                    line: number,
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
        let got = if header {
            "a header line and no event"
        } else {
            "an empty or blank file"
        };
        return Err(HistoryError {
            file: file.to_string(),
            line: 0,
            field: "events".into(),
            message: format!("expected at least one event (one JSON object per line), got {got}"),
        });
    }
    Ok(history)
}

fn parse_line(
    file: &str,
    line: usize,
    version: Version,
    text: &str,
) -> Result<Event, HistoryError> {
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
    if fields.contains_key("schema") {
        return Err(error(
            "schema",
            "a header line (naming the schema and its version) may only be the file's first line"
                .into(),
        ));
    }
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
    let (event, kind_fields) = match version {
        Version::V1 => locate_event(fields).map_err(|(field, message)| error(&field, message))?,
    };
    // Fields the kind does not have: serde ignores them, a checker must not.
    if let Some(unknown) = fields
        .keys()
        .find(|key| !kind_fields.contains(key.as_str()))
    {
        let mut known: Vec<&str> = kind_fields.iter().map(String::as_str).collect();
        known.sort_unstable();
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

thread_local! {
    /// How many candidate events [`locate_event`] deserialized on this thread, and how many
    /// fields they held in all (a test hook: the work must stay linear in the line's size).
    static LOCATE_WORK: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

fn attempt(
    object: &serde_json::Map<String, serde_json::Value>,
) -> Result<wire::v1::Record, String> {
    LOCATE_WORK.with(|work| {
        let (parses, fields) = work.get();
        work.set((parses + 1, fields + object.len() as u64));
    });
    wire::v1::Record::deserialize(&serde_json::Value::Object(object.clone()))
        .map_err(|e| e.to_string())
}

/// The event of a version-1 line, and the field names of its kind; or the field at fault
/// and what is wrong. Built up from the common fields one field of the kind at a time, as serde asks for
/// them ("missing field `x`"): a type error is then in the field just added, and the
/// candidate objects stay as small as the kind, so a line with thousands of unknown keys
/// costs a few small parses, not one parse per key.
fn locate_event(
    fields: &serde_json::Map<String, serde_json::Value>,
) -> Result<(Event, std::collections::BTreeSet<String>), (String, String)> {
    let mut object: serde_json::Map<String, serde_json::Value> = ["t_ns", "node", "event"]
        .into_iter()
        .map(|key| (key.to_string(), fields[key].clone()))
        .collect();
    let mut added: Option<String> = None;
    // Each pass adds one field of the kind, and no kind has more than a few dozen fields.
    let required = loop {
        match attempt(&object) {
            Ok(event) => break event,
            Err(message) => {
                if let Some(missing) = message
                    .strip_prefix("missing field `")
                    .and_then(|rest| rest.split('`').next())
                {
                    match fields.get(missing) {
                        Some(value) if !object.contains_key(missing) => {
                            object.insert(missing.to_string(), value.clone());
                            added = Some(missing.to_string());
                            continue;
                        }
                        _ => return Err((missing.to_string(), message)),
                    }
                }
                let field = match &added {
                    Some(field) => field.clone(),
                    None if message.starts_with("unknown variant") => "event".to_string(),
                    None => String::new(),
                };
                return Err((field, message));
            }
        }
    };
    // Every field of the kind, optional ones included (they serialize as `null`).
    let back = serde_json::to_value(&required).expect("records serialize");
    let mut kind_fields: std::collections::BTreeSet<String> = back
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    // Optional fields left out when unknown (not written as `null`).
    let kind = fields["event"].as_str().unwrap_or_default();
    for (of, field) in SKIPPED_WHEN_UNKNOWN {
        if of == kind {
            kind_fields.insert(field.to_string());
        }
    }
    let optional: Vec<&String> = kind_fields
        .iter()
        .filter(|key| !object.contains_key(key.as_str()) && fields.contains_key(key.as_str()))
        .collect();
    if optional.is_empty() {
        return Ok((required.into(), kind_fields));
    }
    // The optional fields the line gives: each alone first, so a wrong type is named.
    for key in &optional {
        let mut with = object.clone();
        with.insert((*key).clone(), fields[key.as_str()].clone());
        if let Err(message) = attempt(&with) {
            return Err(((*key).clone(), message));
        }
    }
    for key in &optional {
        object.insert((*key).clone(), fields[key.as_str()].clone());
    }
    let record = attempt(&object).map_err(|message| (String::new(), message))?;
    Ok((record.into(), kind_fields))
}

/// Optional fields that are left out, not written as `null`, when a history does not give
/// them: `(event kind, field)`.
const SKIPPED_WHEN_UNKNOWN: [(&str, &str); 2] = [
    ("granted", "expires_mono_ms"),
    ("extended", "expires_mono_ms"),
];

/// Whether the history has the events an invariant needs; `Err` says what is missing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judged {
    /// Which invariants the history's events allow judging, and for the others why not.
    pub scope: Vec<InvariantScope>,
    /// Violations and metrics, as for a simulated run.
    pub checked: Checked,
    /// Metrics the history's events cannot support (left out of what is printed and of the
    /// JSON report's `metrics`), each with the events it needs.
    pub metrics_not_supported: Vec<UnsupportedMetric>,
}

/// A metric a recorded history cannot support.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnsupportedMetric {
    /// The metric's name in `metrics`.
    pub metric: &'static str,
    /// The events it is computed from, which the history lacks.
    pub needs: &'static str,
}

/// Metrics computed from the workers' own view (their beliefs): without `belief-started` /
/// `belief-ended` events they would read as "never served" (unavailability 1) or zero.
const BELIEF_METRICS: [&str; 5] = [
    "unavailability",
    "overlapping_beliefs",
    "overlapping_belief_ms",
    "stand_downs",
    "outage_stand_downs",
];

/// The metrics `history`'s events cannot support.
pub fn unsupported_metrics(history: &History) -> Vec<UnsupportedMetric> {
    let beliefs = history
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::BeliefStarted { .. }));
    if beliefs {
        return Vec::new();
    }
    BELIEF_METRICS
        .iter()
        .map(|&metric| UnsupportedMetric {
            metric,
            needs: "`belief-started` and `belief-ended` events (the workers' own view)",
        })
        .collect()
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
    let end_ns = if fencesim_planted::active(fencesim_planted::Mutant::CheckHistoryI5JudgedTooShort)
    {
        // Planted bug (`.ci/mutants`): a history too short for I5 is judged anyway.
        u64::MAX
    } else {
        end_ns
    };
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
        metrics_not_supported: unsupported_metrics(history),
    }
}

/// One violation with its proof: the evidence events themselves, not only their indices.
#[derive(Clone, Debug, PartialEq, Serialize)]
struct ViolationJson<'a> {
    #[serde(flatten)]
    violation: &'a Violation,
    /// The evidence events themselves, as a history file writes them (`evidence` holds their
    /// 0-based indices among the file's events, the header and blank lines not counted).
    proof: Vec<serde_json::Value>,
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
                .map(wire::event_value)
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
        "metrics": supported_metrics(judged),
        "metrics_not_supported": judged.metrics_not_supported,
    });
    let mut text = serde_json::to_string_pretty(&report).expect("report serializes");
    text.push('\n');
    text
}

/// The metrics as JSON, without those the history cannot support.
fn supported_metrics(judged: &Judged) -> serde_json::Value {
    let mut value = serde_json::to_value(&judged.checked.metrics).expect("metrics serialize");
    if let serde_json::Value::Object(fields) = &mut value {
        for unsupported in &judged.metrics_not_supported {
            fields.remove(unsupported.metric);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `line` as line 1 and returns the error and the locator's work (parses, fields).
    fn judge(line: &str) -> (HistoryError, (u64, u64)) {
        LOCATE_WORK.with(|work| work.set((0, 0)));
        let error = parse_history("h.jsonl", line).unwrap_err();
        (error, LOCATE_WORK.with(std::cell::Cell::get))
    }

    #[test]
    fn a_line_with_thousands_of_keys_is_located_with_a_few_small_parses() {
        // A wrong type among 8000 unknown keys: the old locator re-parsed the whole object
        // once per key (8000 parses of 8000 fields: a minute).
        let mut line = String::from(
            r#"{"t_ns":1,"node":"c","event":"granted","scope":"j","holder":"a","token":"2","expires_mono_ms":1.0"#,
        );
        for i in 0..8000 {
            line.push_str(&format!(r#","extra_{i:05}":0"#));
        }
        line.push('}');
        assert!(line.len() > 100_000);
        let (error, (parses, fields)) = judge(&line);
        assert_eq!(error.field, "token", "{error}");
        assert!(error.message.contains("invalid type"), "{error}");
        assert!(parses <= 10, "{parses} parses");
        assert!(fields <= 100, "{fields} fields parsed in all");

        // The same line with the type fixed: the first unknown key is named, just as cheaply.
        let (error, (parses, fields)) = judge(&line.replace(r#""token":"2""#, r#""token":2"#));
        assert_eq!(error.field, "extra_00000", "{error}");
        assert!(
            error
                .message
                .starts_with("not a field of a `granted` event"),
            "{error}"
        );
        assert!(
            parses <= 10 && fields <= 100,
            "{parses} parses, {fields} fields"
        );
    }

    /// I5 needs the history to run on for the liveness bound after `faults-healed`: a history
    /// that ends sooner cannot show a stall, so I5 is "not judged" and says why.
    #[test]
    fn i5_is_judged_only_when_the_history_lasts_the_bound_past_the_heal() {
        let history = |end_s: u64| {
            let lines = [
                r#"{"t_ns":0,"node":"nemesis","event":"run-started","seed":0,"liveness_bound_ms":10000}"#.to_string(),
                r#"{"t_ns":1000000,"node":"lock","event":"granted","scope":"job","holder":"a","token":7,"expires_mono_ms":10000.0}"#.to_string(),
                r#"{"t_ns":2000000,"node":"a","event":"write-sent","op":1,"resource":"job","token":7}"#.to_string(),
                r#"{"t_ns":3000000,"node":"db","event":"write-accepted","op":1,"resource":"job","lease_scope":"job","writer":"a","token":7,"previous":null}"#.to_string(),
                r#"{"t_ns":5000000000,"node":"nemesis","event":"faults-healed"}"#.to_string(),
                format!(r#"{{"t_ns":{},"node":"nemesis","event":"run-ended"}}"#, end_s * 1_000_000_000),
            ];
            parse_history("h.jsonl", &lines.join("\n")).unwrap()
        };
        let i5 = |judged: &Judged| {
            judged
                .scope
                .iter()
                .find(|scope| scope.invariant == Invariant::I5)
                .cloned()
                .unwrap()
        };
        // Healed at 5 s with a 10 s bound: ending at 14 s is too short, at 15 s just enough.
        let short = i5(&judge_history(&history(14)));
        assert!(!short.judged, "{short:?}");
        assert!(
            short
                .missing
                .as_deref()
                .unwrap_or("")
                .contains("10000 ms (the bound) past"),
            "{short:?}"
        );
        let long = i5(&judge_history(&history(15)));
        assert!(long.judged && long.missing.is_none(), "{long:?}");
    }

    const CRASH: &str = r#"{"t_ns":1,"node":"db","event":"crashed"}"#;

    #[test]
    fn a_version_1_header_is_read_and_not_counted_as_an_event() {
        let header = wire::header_line();
        let with = parse_history("h.jsonl", &format!("\n{header}\n{CRASH}\n")).unwrap();
        let without = parse_history("h.jsonl", &format!("{CRASH}\n")).unwrap();
        assert_eq!(with, without);
        assert_eq!(with.events.len(), 1);
    }

    #[test]
    fn header_errors_name_the_line_and_field() {
        let check = |text: String, line: usize, field: &str, says: &str| {
            let error = parse_history("h.jsonl", &text).unwrap_err();
            assert_eq!((error.line, error.field.as_str()), (line, field), "{error}");
            assert!(error.to_string().contains(says), "{error}");
        };
        check(
            format!("{{\"schema\":\"fencesim-history\",\"version\":7}}\n{CRASH}\n"),
            1,
            "version",
            "h.jsonl:1: field `version`: expected a schema version this fencesim reads (1), got 7",
        );
        check(
            format!("{{\"schema\":\"x\",\"version\":1}}\n{CRASH}\n"),
            1,
            "schema",
            "expected \"fencesim-history\" (a fencesim history file), got \"x\"",
        );
        check(
            format!("{CRASH}\n{}\n", wire::header_line()),
            2,
            "schema",
            "may only be the file's first line",
        );
        check(
            format!("{}\n\n", wire::header_line()),
            0,
            "events",
            "got a header line and no event",
        );
    }

    #[test]
    fn a_wrong_optional_field_is_named() {
        let line = r#"{"t_ns":1,"node":"db","event":"write-accepted","op":1,"resource":"r","lease_scope":"r","writer":"a","token":7,"previous":"x"}"#;
        let (error, _) = judge(line);
        assert_eq!(error.field, "previous", "{error}");
    }
}
