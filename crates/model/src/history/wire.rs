//! The history file format (JSON lines), versioned and kept apart from the internal
//! [`Event`]: histories recorded by other systems are written against this schema, so an
//! internal rename must not change it.
//!
//! A file is an optional header line, `{"schema":"fencesim-history","version":1}`, then one
//! event object per line. Every writer here emits the header; readers take a file without
//! one as version 1 (every history written before the format had a version). A header naming
//! another schema, or a version this build does not read, is refused.
//!
//! [`parse_jsonl`] is the one reader, lenient for files this build wrote and strict for a
//! history to be judged (`strict`: every field named, none unknown).
//!
//! Versioning rule: adding an optional field (one a reader may find absent) keeps the
//! version; renaming or removing a field, a kind or a tag, or changing a type, is a new
//! version, in a new module next to [`v1`], and readers keep reading the old ones.

mod strict;
pub mod v1;

use crate::history::{Event, History};

/// The `schema` of the header line.
pub const SCHEMA: &str = "fencesim-history";

/// A version of the file format this build reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// [`v1`]: the shape every history before the header had.
    V1,
}

impl Version {
    /// The version writers emit.
    pub const CURRENT: Version = Version::V1;

    /// Every version readers accept, oldest first.
    pub const READ: [Version; 1] = [Version::V1];

    /// The number in the header's `version`.
    pub fn number(self) -> u64 {
        match self {
            Version::V1 => 1,
        }
    }

    fn from_number(number: u64) -> Option<Version> {
        Version::READ.into_iter().find(|v| v.number() == number)
    }
}

/// The header line writers put first (without its newline).
pub fn header_line() -> String {
    format!(
        r#"{{"schema":"{SCHEMA}","version":{}}}"#,
        Version::CURRENT.number()
    )
}

/// What is wrong with a file's header: the field at fault and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderError {
    /// `schema`, `version`, or the unknown field's name.
    pub field: String,
    /// What was expected, and what was found.
    pub message: String,
}

/// Reads a file's first (non-blank) line: `Ok(Some(version))` when it is a header,
/// `Ok(None)` when it is not one (an event line, or not JSON at all: the event reader then
/// says what is wrong with it) and the file is read as version 1. A header is a JSON object
/// with a `schema` field, which no event has.
pub fn header(line: &str) -> Result<Option<Version>, HeaderError> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(line)
    else {
        return Ok(None);
    };
    let Some(schema) = fields.get("schema") else {
        return Ok(None);
    };
    let error = |field: &str, message: String| HeaderError {
        field: field.to_string(),
        message,
    };
    if let Some(twice) = repeated_key(line) {
        return Err(error(
            &twice,
            "given twice (expected each header field once)".into(),
        ));
    }
    if schema.as_str() != Some(SCHEMA) {
        return Err(error(
            "schema",
            format!("expected \"{SCHEMA}\" (a fencesim history file), got {schema}"),
        ));
    }
    let readable = Version::READ
        .iter()
        .map(|v| v.number().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let version = match fields.get("version") {
        None => {
            return Err(error(
                "version",
                format!("missing (the schema version; this fencesim reads {readable})"),
            ))
        }
        Some(number) => number
            .as_u64()
            .and_then(Version::from_number)
            .ok_or_else(|| {
                error(
                    "version",
                    format!(
                        "expected a schema version this fencesim reads ({readable}), got {number} \
                         (written by a newer fencesim?)"
                    ),
                )
            })?,
    };
    if let Some(other) = fields
        .keys()
        .find(|key| *key != "schema" && *key != "version")
    {
        return Err(error(
            other,
            "not a field of the header (expected only schema, version)".into(),
        ));
    }
    Ok(Some(version))
}

/// The first key a JSON object line names twice (a JSON parser keeps the last silently).
fn repeated_key(line: &str) -> Option<String> {
    struct Keys(Option<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Keys, A::Error> {
                    let mut seen = std::collections::BTreeSet::new();
                    while let Some(key) = map.next_key::<String>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        if !seen.insert(key.clone()) {
                            return Ok(Keys(Some(key)));
                        }
                    }
                    Ok(Keys(None))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    serde_json::from_str::<Keys>(line)
        .ok()
        .and_then(|keys| keys.0)
}

/// One event as a line of the current version (no newline).
pub fn event_line(event: &Event) -> String {
    serde_json::to_string(&v1::Record::from(event)).expect("records serialize")
}

/// One event as a JSON object of the current version (for reports that embed events).
pub fn event_value(event: &Event) -> serde_json::Value {
    serde_json::to_value(v1::Record::from(event)).expect("records serialize")
}

/// Reads one event line of `version`.
pub fn parse_event(version: Version, line: &str) -> Result<Event, serde_json::Error> {
    match version {
        Version::V1 => serde_json::from_str::<v1::Record>(line).map(Event::from),
    }
}

/// How strictly [`parse_jsonl`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// Fields a kind does not have are ignored: files this build wrote (traces, reports).
    Lenient,
    /// A file from another system, to be judged (`fencesim check-history`): every field of
    /// the event's kind present with its type and no other field (a misspelt optional field
    /// would otherwise be ignored), each error naming its field; `t_ns` never decreasing; at
    /// least one event (an empty file would pass for a recorder that wrote nothing).
    Strict,
}

/// A line [`parse_jsonl`] could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number; 0 when the error is about the whole file.
    pub line: usize,
    /// The field at fault, if known (empty otherwise).
    pub field: String,
    /// What was expected.
    pub message: String,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.field.as_str()) {
            (0, _) => write!(f, "{}", self.message),
            (line, "") => write!(f, "line {line}: {}", self.message),
            (line, field) => write!(f, "line {line}: field `{field}`: {}", self.message),
        }
    }
}

impl std::error::Error for LineError {}

/// Reads a history file, the one reader of the format: an optional header first, then one
/// event per line (blank lines skipped), as strictly as `strictness` says.
pub fn parse_jsonl(text: &str, strictness: Strictness) -> Result<History, LineError> {
    let error = |line: usize, field: &str, message: String| LineError {
        line,
        field: field.to_string(),
        message,
    };
    // A byte-order mark (an editor on Windows) is not part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(_, line)| !line.trim().is_empty())
        .peekable();
    let mut version = None;
    if let Some(&(number, first)) = lines.peek() {
        version = header(first).map_err(|e| error(number, &e.field, e.message))?;
        if version.is_some() {
            lines.next();
        }
    }
    let mut history = History::default();
    for (number, line) in lines {
        let event = match strictness {
            Strictness::Lenient => parse_event(version.unwrap_or(Version::V1), line)
                .map_err(|e| error(number, "", e.to_string()))?,
            Strictness::Strict => strict::event(version.unwrap_or(Version::V1), line)
                .map_err(|(field, message)| error(number, &field, message))?,
        };
        let last_ns = history.events.last().map_or(0, |e| e.t_ns);
        if strictness == Strictness::Strict && event.t_ns < last_ns {
            return Err(error(
                number,
                "t_ns",
                format!(
                    "expected events in time order (t_ns at least {last_ns} as on the line before), got {}",
                    event.t_ns
                ),
            ));
        }
        history.events.push(event);
    }
    if strictness == Strictness::Strict && history.events.is_empty() {
        let got = match version {
            Some(_) => "a header line and no event",
            None => "an empty or blank file",
        };
        return Err(error(
            0,
            "events",
            format!("expected at least one event (one JSON object per line), got {got}"),
        ));
    }
    Ok(history)
}

impl History {
    /// The history file: the header line, then one event per line, in order.
    pub fn to_jsonl(&self) -> String {
        let mut out = header_line();
        out.push('\n');
        for event in &self.events {
            out.push_str(&event_line(event));
            out.push('\n');
        }
        out
    }
}
