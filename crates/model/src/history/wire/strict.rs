//! One event line read strictly ([`super::Strictness::Strict`]): every field of the event's
//! kind present with its type and no other field, each error naming the field at fault.

use std::collections::BTreeSet;

use serde::Deserialize as _;
use serde_json::{Map, Value};

use super::{v1, Version};
use crate::history::Event;

/// The field at fault (empty when the line as a whole is wrong) and what is wrong with it.
pub(super) type FieldError = (String, String);

/// Reads one event line of `version` strictly.
pub(super) fn event(version: Version, text: &str) -> Result<Event, FieldError> {
    let error = |field: &str, message: String| (field.to_string(), message);
    let value: Value = serde_json::from_str(text)
        .map_err(|e| error("", format!("expected one JSON object per line: {e}")))?;
    let Value::Object(fields) = &value else {
        return Err(error("", "expected a JSON object".into()));
    };
    if fields.contains_key("schema") {
        return Err(error(
            "schema",
            "a header line (naming the schema and its version) may only be the file's first line"
                .into(),
        ));
    }
    common_fields(fields)?;
    let (event, kind_fields) = match version {
        Version::V1 => locate_event(fields)?,
    };
    // Fields the kind does not have: serde ignores them, a checker must not.
    if let Some(unknown) = fields.keys().find(|key| !kind_fields.contains(*key)) {
        let known: Vec<&str> = kind_fields.iter().map(String::as_str).collect();
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

/// `t_ns`, `node` and `event`, checked first so their errors name them.
fn common_fields(fields: &Map<String, Value>) -> Result<(), FieldError> {
    let expect =
        |field: &str, ok: fn(&Value) -> bool, what: &str, missing: &str| match fields.get(field) {
            Some(value) if ok(value) => Ok(()),
            Some(value) => Err((field.to_string(), format!("expected {what}, got {value}"))),
            None => Err((field.to_string(), format!("missing ({missing})"))),
        };
    expect(
        "t_ns",
        |v| v.as_u64().is_some(),
        "nanoseconds as an unsigned integer",
        "true time in nanoseconds",
    )?;
    expect(
        "node",
        Value::is_string,
        "a node name (string)",
        "the node it happened on",
    )?;
    expect(
        "event",
        Value::is_string,
        "an event kind (string)",
        "the event kind, e.g. \"granted\"",
    )
}

#[cfg(test)]
thread_local! {
    /// How many candidate events [`locate_event`] deserialized on this thread, and how many
    /// fields they held in all: the work must stay linear in the line's size.
    static LOCATE_WORK: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

fn attempt(object: &Map<String, Value>) -> Result<v1::Record, String> {
    #[cfg(test)]
    LOCATE_WORK.with(|work| {
        let (parses, fields) = work.get();
        work.set((parses + 1, fields + object.len() as u64));
    });
    v1::Record::deserialize(&Value::Object(object.clone())).map_err(|e| e.to_string())
}

/// The event of a version-1 line, and the field names of its kind; or the field at fault
/// and what is wrong. Built up from the common fields one field of the kind at a time, as
/// serde asks for them ("missing field `x`"): a type error is then in the field just added,
/// and the candidate objects stay as small as the kind, so a line with thousands of unknown
/// keys costs a few small parses, not one parse per key.
fn locate_event(fields: &Map<String, Value>) -> Result<(Event, BTreeSet<String>), FieldError> {
    let mut object: Map<String, Value> = ["t_ns", "node", "event"]
        .into_iter()
        .map(|key| (key.to_string(), fields[key].clone()))
        .collect();
    let mut added: Option<String> = None;
    // Each pass adds one field of the kind, and no kind has more than a few dozen fields.
    let required = loop {
        let message = match attempt(&object) {
            Ok(event) => break event,
            Err(message) => message,
        };
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
    };
    let kind_fields = kind_fields(&required, fields);
    let optional: Vec<&String> = kind_fields
        .iter()
        .filter(|key| !object.contains_key(*key) && fields.contains_key(*key))
        .collect();
    if optional.is_empty() {
        return Ok((required.into(), kind_fields));
    }
    // The optional fields the line gives: each alone first, so a wrong type is named.
    for key in &optional {
        let mut with = object.clone();
        with.insert((*key).clone(), fields[key.as_str()].clone());
        attempt(&with).map_err(|message| ((*key).clone(), message))?;
    }
    for key in &optional {
        object.insert((*key).clone(), fields[key.as_str()].clone());
    }
    let record = attempt(&object).map_err(|message| (String::new(), message))?;
    Ok((record.into(), kind_fields))
}

/// Every field of `record`'s kind, optional ones included (they serialize as `null`, or are
/// left out when unknown: [`SKIPPED_WHEN_UNKNOWN`]).
fn kind_fields(record: &v1::Record, fields: &Map<String, Value>) -> BTreeSet<String> {
    let back = serde_json::to_value(record).expect("records serialize");
    let mut kind_fields: BTreeSet<String> = back
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let kind = fields["event"].as_str().unwrap_or_default();
    for (of, field) in SKIPPED_WHEN_UNKNOWN {
        if of == kind {
            kind_fields.insert(field.to_string());
        }
    }
    kind_fields
}

/// Optional fields that are left out, not written as `null`, when a history does not give
/// them: `(event kind, field)`.
const SKIPPED_WHEN_UNKNOWN: [(&str, &str); 2] = [
    ("granted", "expires_mono_ms"),
    ("extended", "expires_mono_ms"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `line` strictly and returns the error and the locator's work (parses, fields).
    fn judge(line: &str) -> (FieldError, (u64, u64)) {
        LOCATE_WORK.with(|work| work.set((0, 0)));
        let error = event(Version::V1, line).unwrap_err();
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
        let ((field, message), (parses, fields)) = judge(&line);
        assert_eq!(field, "token", "{message}");
        assert!(message.contains("invalid type"), "{message}");
        assert!(parses <= 10, "{parses} parses");
        assert!(fields <= 100, "{fields} fields parsed in all");

        // The same line with the type fixed: the first unknown key is named, just as cheaply.
        let ((field, message), (parses, fields)) =
            judge(&line.replace(r#""token":"2""#, r#""token":2"#));
        assert_eq!(field, "extra_00000", "{message}");
        assert!(
            message.starts_with("not a field of a `granted` event"),
            "{message}"
        );
        assert!(
            parses <= 10 && fields <= 100,
            "{parses} parses, {fields} fields"
        );
    }

    #[test]
    fn a_wrong_optional_field_is_named() {
        let line = r#"{"t_ns":1,"node":"db","event":"write-accepted","op":1,"resource":"r","lease_scope":"r","writer":"a","token":7,"previous":"x"}"#;
        let ((field, _), _) = judge(line);
        assert_eq!(field, "previous");
    }

    #[test]
    fn the_common_fields_are_named_first() {
        for (line, field, says) in [
            (
                r#"{"node":"db","event":"crashed"}"#,
                "t_ns",
                "missing (true time",
            ),
            (
                r#"{"t_ns":-1,"node":"db","event":"crashed"}"#,
                "t_ns",
                "expected nanoseconds",
            ),
            (
                r#"{"t_ns":1,"node":2,"event":"crashed"}"#,
                "node",
                "expected a node name",
            ),
            (
                r#"{"t_ns":1,"node":"db"}"#,
                "event",
                "missing (the event kind",
            ),
            (
                r#"{"t_ns":1,"node":"db","event":"crash"}"#,
                "event",
                "unknown variant",
            ),
            ("[1]", "", "expected a JSON object"),
        ] {
            let (got, message) = event(Version::V1, line).unwrap_err();
            assert_eq!(got, field, "{line}: {message}");
            assert!(message.contains(says), "{line}: {message}");
        }
    }
}
