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
        ScenarioError {
            file: self.file.to_string(),
            line: span_line.or_else(|| self.line_of(&field)),
            field,
            // serde's messages already say what was found and what was expected; only its
            // Rust type names are translated.
            expected: message
                .replace("expected i64", "expected an integer")
                .replace("expected f64", "expected a number"),
        }
    }
}

// ---------------------------------------------------------------------------------------
