//! `--set FIELD=VALUE`: overrides applied to the TOML document before it is validated, so an
//! overridden field passes exactly the checks a field written in the file does.

use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

use super::{Result, ScenarioError};

/// One override of a scenario field by its dotted name, e.g. `lease.ttl_ms=8000` or
/// `faults.random[0].rate_per_min=2.5`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Dotted path of the field (`lease.ttl_ms`, `network.latency_ms.median`,
    /// `faults.schedule[1].duration_ms`).
    pub field: String,
    /// The value as typed: parsed as a TOML value (`8000`, `0.5`, `true`, `"drop"`,
    /// `[1, 2]`, `{ dist = "const", value = 3 }`); a bare word that is not TOML is a string.
    pub value: String,
}

impl Override {
    /// Parses `FIELD=VALUE`; the error says what was expected.
    pub fn parse(text: &str) -> std::result::Result<Override, String> {
        let Some((field, value)) = text.split_once('=') else {
            return Err(format!("expected FIELD=VALUE, got `{text}`"));
        };
        let field = field.trim();
        if field.is_empty() || field.split('.').any(|part| part.trim().is_empty()) {
            return Err(format!(
                "expected a dotted field name like lease.ttl_ms before `=`, got `{field}`"
            ));
        }
        Ok(Override {
            field: field.to_string(),
            value: value.trim().to_string(),
        })
    }

    /// [`Override::parse`], and the value checked to be one TOML value or a bare word (what
    /// applying it checks anyway), so a command line fails before any work.
    pub fn parse_checked(text: &str) -> std::result::Result<Override, String> {
        let parsed = Override::parse(text)?;
        parsed
            .toml_value()
            .map_err(|expected| format!("{}: {expected}", parsed.field))?;
        Ok(parsed)
    }

    /// `FIELD=VALUE`, as it would be typed after `--set`.
    pub fn to_arg(&self) -> String {
        format!("{}={}", self.field, self.value)
    }

    /// The value as a TOML value: parsed when it is valid TOML, else the text as a string
    /// (a bare word: `drop`, `keep-and-extend`). Refused: more than one TOML value (`8000\n
    /// [storage] …`, which would silently keep the first), a number TOML cannot hold
    /// (`99999999999999999999`, `NaN`), and text that is neither TOML nor a bare word.
    fn toml_value(&self) -> std::result::Result<Value, String> {
        match format!("v = {}", self.value).parse::<DocumentMut>() {
            Ok(doc) => {
                if doc.as_table().len() != 1 {
                    return Err(format!(
                        "expected one TOML value, got more than one in `{}`",
                        self.value.escape_debug()
                    ));
                }
                let mut value = doc
                    .get("v")
                    .and_then(Item::as_value)
                    .cloned()
                    .ok_or_else(|| format!("expected a TOML value, got `{}`", self.value))?;
                value.decor_mut().clear();
                Ok(value)
            }
            Err(error) => {
                let text = self.value.as_str();
                let lower = text.to_ascii_lowercase();
                let unsigned = lower.trim_start_matches(['+', '-']);
                let numeric = unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.')
                    || ["nan", "inf", "infinity"].contains(&unsigned);
                if numeric {
                    return Err(format!(
                        "expected a number TOML can hold (an integer of at most 64 bits or a \
                         finite decimal), got `{text}`"
                    ));
                }
                let bare_word = !text.is_empty()
                    && text
                        .chars()
                        .all(|c| c.is_alphanumeric() || "-_./:@+%,".contains(c));
                if bare_word {
                    Ok(Value::from(text))
                } else {
                    Err(format!(
                        "expected one TOML value (a number, true or false, a quoted string, a \
                         list or an inline table) or a bare word, got `{}`: {}",
                        text.escape_debug(),
                        error.message().trim()
                    ))
                }
            }
        }
    }
}

enum Segment<'p> {
    Key(&'p str),
    Index(usize),
}

fn segments(field: &str) -> Option<Vec<Segment<'_>>> {
    let mut out = Vec::new();
    for part in field.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        if key.is_empty() {
            return None;
        }
        out.push(Segment::Key(key));
        while !rest.is_empty() {
            let close = rest.find(']')?;
            if !rest.starts_with('[') {
                return None;
            }
            out.push(Segment::Index(rest[1..close].parse().ok()?));
            rest = &rest[close + 1..];
        }
    }
    Some(out)
}

/// Applies `overrides` in order to `text`, returning the new TOML text. Errors name the
/// override's field and say it came from `--set`.
pub(crate) fn apply(text: &str, file: &str, overrides: &[Override]) -> Result<String> {
    let mut doc: DocumentMut =
        text.parse()
            .map_err(|error: toml_edit::TomlError| ScenarioError {
                file: file.to_string(),
                line: error
                    .span()
                    .map(|span| super::locate::line_at(text, span.start)),
                field: "(syntax)".to_string(),
                expected: format!("expected valid TOML: {}", error.message().trim()),
            })?;
    for o in overrides {
        let fail = |expected: String| ScenarioError {
            file: file.to_string(),
            line: None,
            field: o.field.clone(),
            expected: format!("{expected} (from --set {})", o.to_arg()),
        };
        let path = segments(&o.field)
            .ok_or_else(|| fail("expected a dotted field name like lease.ttl_ms".into()))?;
        let value = o.toml_value().map_err(&fail)?;
        set(doc.as_item_mut(), &path, value).map_err(fail)?;
    }
    Ok(doc.to_string())
}

fn set(at: &mut Item, path: &[Segment<'_>], value: Value) -> std::result::Result<(), String> {
    let (first, rest) = path.split_first().expect("paths are non-empty");
    match first {
        Segment::Key(key) => {
            let inline = matches!(at, Item::Value(Value::InlineTable(_)));
            let table = at
                .as_table_like_mut()
                .ok_or_else(|| format!("expected a table before `{key}`"))?;
            if rest.is_empty() {
                table.insert(key, Item::Value(value));
                return Ok(());
            }
            if table.get(key).is_none() {
                let empty = match rest[0] {
                    Segment::Index(_) => return Err(format!("no list `{key}` to index")),
                    Segment::Key(_) if inline => {
                        Item::Value(Value::InlineTable(InlineTable::new()))
                    }
                    Segment::Key(_) => {
                        let mut table = Table::new();
                        table.set_implicit(true);
                        Item::Table(table)
                    }
                };
                table.insert(key, empty);
            }
            set(table.get_mut(key).expect("just inserted"), rest, value)
        }
        Segment::Index(index) => {
            let index = *index;
            match at {
                Item::ArrayOfTables(array) => {
                    let len = array.len();
                    let table = array.get_mut(index).ok_or_else(|| {
                        format!("index {index} out of range (the list has {len})")
                    })?;
                    if rest.is_empty() {
                        return Err(
                            "expected a field inside the table, not the table itself".into()
                        );
                    }
                    let mut item = Item::Table(std::mem::take(table));
                    let result = set(&mut item, rest, value);
                    if let Item::Table(back) = item {
                        *table = back;
                    }
                    result
                }
                Item::Value(Value::Array(array)) => {
                    let len = array.len();
                    if index >= len {
                        return Err(format!("index {index} out of range (the list has {len})"));
                    }
                    if rest.is_empty() {
                        array.replace(index, value);
                        return Ok(());
                    }
                    let mut item = Item::Value(array.get(index).cloned().expect("in range"));
                    set(&mut item, rest, value)?;
                    if let Item::Value(back) = item {
                        array.replace(index, back);
                    }
                    Ok(())
                }
                _ => Err("expected a list before the index".into()),
            }
        }
    }
}
