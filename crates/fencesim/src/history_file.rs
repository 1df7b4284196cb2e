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
    history::{wire, EventKind, History},
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

/// Parses JSON lines into a history, strictly ([`wire::Strictness::Strict`]): an optional
/// header line first (`{"schema":"fencesim-history","version":1}`; without one the file is
/// version 1), then one event object per line (blank lines are skipped), `t_ns` never
/// decreasing. Every field of the event's kind must be present with its type, and no other
/// field may appear (a misspelt optional field would otherwise be ignored). A header of
/// another schema or of a version this build does not read is refused, naming its line and
/// field.
pub fn parse_history(file: &str, text: &str) -> Result<History, HistoryError> {
    wire::parse_jsonl(text, wire::Strictness::Strict).map_err(|e| HistoryError {
        file: file.to_string(),
        line: e.line,
        field: e.field,
        message: e.message,
    })
}

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
        liveness_missing(history),
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

/// What I5 needs that `history` lacks, if anything: `run-started` (its bound),
/// `faults-healed`, a run lasting the bound past the heal, and the workers' `write-sent`.
fn liveness_missing(history: &History) -> Option<String> {
    let sends = history
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::WriteSent { .. }));
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
    match (bound_ms, healed_ns) {
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
}
