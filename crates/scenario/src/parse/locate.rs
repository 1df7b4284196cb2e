//! Locating errors: a dotted field path (`faults.schedule[2].duration_ms`) → the line of the
//! file where that key (or, when it is missing, its enclosing table) is written. Reusable by
//! anything that reports on a TOML file's fields.

use std::ops::Range;

use toml_edit::{ImDocument, Item, Table, Value};

use super::ScenarioError;

pub(crate) fn path_string(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key }
            | serde_path_to_error::Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// 1-based line of byte `offset` in `text`.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1
}

enum PathSegment<'p> {
    Key(&'p str),
    Index(usize),
}

/// Splits `a.b[2].c` into segments; the inverse of `path_string`.
fn segments(path: &str) -> Vec<PathSegment<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(PathSegment::Key(key));
        }
        while let Some(close) = rest.find(']') {
            if let Ok(index) = rest[1..close].parse() {
                out.push(PathSegment::Index(index));
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

#[derive(Clone, Copy)]
enum At<'d> {
    Table(&'d Table),
    Item(&'d Item),
    Value(&'d Value),
}

impl<'d> At<'d> {
    fn key(self, key: &str) -> Option<(Option<Range<usize>>, At<'d>)> {
        let found = match self {
            At::Table(table) | At::Item(Item::Table(table)) => table.get_key_value(key),
            At::Item(Item::Value(Value::InlineTable(table)))
            | At::Value(Value::InlineTable(table)) => table.get_key_value(key),
            _ => None,
        }?;
        let (key, item) = found;
        Some((key.span().or_else(|| item.span()), At::Item(item)))
    }

    fn index(self, index: usize) -> Option<(Option<Range<usize>>, At<'d>)> {
        match self {
            At::Item(Item::ArrayOfTables(array)) => {
                let table = array.get(index)?;
                Some((table.span(), At::Table(table)))
            }
            At::Item(Item::Value(Value::Array(array))) | At::Value(Value::Array(array)) => {
                let value = array.get(index)?;
                Some((value.span(), At::Value(value)))
            }
            _ => None,
        }
    }
}

/// Everything `resolve` needs to report an error at the right line.
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
    pub(crate) doc: ImDocument<&'a str>,
}

impl Ctx<'_> {
    /// Line of the deepest part of dotted `path` present in the file: the key itself when
    /// written, else its nearest enclosing table (where a missing key belongs).
    fn line_of(&self, path: &str) -> Option<usize> {
        let mut at = At::Table(self.doc.as_table());
        let mut span = None;
        for segment in segments(path) {
            let next = match segment {
                PathSegment::Key(key) => at.key(key),
                PathSegment::Index(index) => at.index(index),
            };
            let Some((next_span, next_at)) = next else {
                break;
            };
            span = next_span.or(span);
            at = next_at;
        }
        span.map(|span| line_at(self.text, span.start))
    }

    /// An error on `field`, located by `line_of(field)`.
    pub(crate) fn error(&self, field: &str, expected: impl Into<String>) -> ScenarioError {
        self.error_at(field, field, expected)
    }

    /// An error on `field` located at `line_path` (for a missing key best shown next to the
    /// key that made it necessary).
    pub(crate) fn error_at(
        &self,
        field: &str,
        line_path: &str,
        expected: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: self.line_of(line_path),
            field: field.to_string(),
            expected: expected.into(),
        }
    }

    pub(crate) fn serde_error(&self, path: &str, error: &toml_edit::de::Error) -> ScenarioError {
        let message = error.message().trim();
        let span_line = error.span().map(|span| line_at(self.text, span.start));
        let field = if path.is_empty() {
            "(file)".to_string()
        } else {
            path.to_string()
        };
        // A TOML date or time reaches serde as a private table: say what it is.
        let is_datetime = error
            .span()
            .and_then(|span| self.text.get(span))
            .is_some_and(|value| value.trim().parse::<toml_edit::Datetime>().is_ok());
        let mut expected = user_message(message);
        if is_datetime {
            expected = expected.replace("invalid type: table", "invalid type: a date/time");
        }
        ScenarioError {
            file: self.file.to_string(),
            line: span_line.or_else(|| self.line_of(&field)),
            field,
            // serde's messages already say what was found and what was expected; only its
            // Rust type names are translated.
            expected,
        }
    }
}

// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// serde's words for TOML's words (no Rust type names in messages).

/// serde's message with its Rust type names (`struct RawLease with 15 elements`, `u64`,
/// `sequence`, `map`) replaced by the file's words (a table and its keys, an array).
pub(crate) fn user_message(message: &str) -> String {
    let mut text = message.to_string();
    // `invalid length 0, expected struct RawLease with 15 elements` (an array where a table
    // belongs) and `invalid type: integer `3`, expected struct RawLease`.
    while let Some(start) = text.find("struct Raw") {
        let name_end = text[start + 7..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .map_or(text.len(), |end| start + 7 + end);
        let name = &text[start + 7..name_end];
        let mut end = name_end;
        if let Some(rest) = text[end..].strip_prefix(" with ") {
            if let Some(elements) = rest.find(" elements") {
                if rest[..elements].chars().all(|c| c.is_ascii_digit()) {
                    end += " with ".len() + elements + " elements".len();
                }
            }
        }
        let table = match table_keys(name) {
            Some(keys) => format!("a table with keys {}", keys.join(", ")),
            None => "a table".to_string(),
        };
        text.replace_range(start..end, &table);
    }
    if let Some(rest) = text.strip_prefix("invalid length ") {
        if let Some((_, expected)) = rest.split_once(", expected a table") {
            text = format!("got an array, expected a table{expected}");
        }
    }
    for (rust, toml) in [
        ("wanted string or table", "expected a string or a table"),
        (
            "wanted exactly 1 element, more than 1 element",
            "expected one value, got an array of tables",
        ),
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("invalid type: sequence", "invalid type: array"),
        ("expected a map", "expected a table"),
        ("invalid type: map", "invalid type: table"),
        ("floating point", "number"),
    ] {
        text = text.replace(rust, toml);
    }
    text
}

/// The keys of the file's table read into `Raw<name>`, as the derived `Deserialize` names
/// them (so the list cannot drift from the struct).
fn table_keys(name: &str) -> Option<&'static [&'static str]> {
    use super::raw::*;
    use super::{RawRandom, RawScheduled};
    match name {
        "RawScenario" => fields_of::<RawScenario>(),
        "RawLease" => fields_of::<RawLease>(),
        "RawStorage" => fields_of::<RawStorage>(),
        "RawWorkers" => fields_of::<RawWorkers>(),
        "RawNetwork" => fields_of::<RawNetwork>(),
        "RawClocks" => fields_of::<RawClocks>(),
        "RawClock" => fields_of::<RawClock>(),
        "RawFaults" => fields_of::<RawFaults>(),
        "RawExpect" => fields_of::<RawExpect>(),
        "RawDistTable" => fields_of::<RawDistTable>(),
        "RawScheduled" => fields_of::<RawScheduled>(),
        "RawRandom" => fields_of::<RawRandom>(),
        _ => None,
    }
}

/// The field names a derived `Deserialize` passes to `deserialize_struct`.
fn fields_of<T: serde::de::DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut fields = None;
    let _ = T::deserialize(FieldRecorder(&mut fields));
    fields
}

/// A deserializer that records the fields it is asked for and fails.
struct FieldRecorder<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for FieldRecorder<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(serde::de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod message_tests {
    use super::user_message;

    #[test]
    fn rust_type_names_become_the_files_words() {
        let lease = user_message("invalid length 0, expected struct RawLease with 15 elements");
        assert!(
            lease.starts_with("got an array, expected a table with keys "),
            "{lease}"
        );
        assert!(lease.contains("ttl_ms"), "{lease}");
        let entry = user_message("invalid type: integer `1`, expected struct RawScheduled");
        assert!(
            entry.contains("a table with keys at_ms, kind, node"),
            "{entry}"
        );
        for message in [
            lease,
            entry,
            user_message("invalid type: integer `5`, expected a sequence"),
            user_message("invalid type: map, expected u64"),
            user_message("wanted string or table"),
        ] {
            for rust in ["Raw", "struct", "sequence", "map", "u64", "wanted"] {
                assert!(!message.contains(rust), "{rust} in {message}");
            }
        }
    }
}
