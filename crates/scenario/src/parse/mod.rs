//! The TOML boundary: a scenario file's text → its raw shape (`raw`) → one resolution per
//! section (`resolve`) into a [`Scenario`], with small shared validators (`validate`) and
//! errors located at the line of the offending key (`locate`).

mod faults;
mod locate;
mod overrides;
mod raw;
mod resolve;
mod validate;

use std::path::Path;

use toml_edit::ImDocument;

use crate::spec::Scenario;

pub(crate) use locate::{join, Ctx};
pub use overrides::Override;
pub(crate) use raw::{RawRandom, RawScheduled};

/// Why a scenario file was rejected: where, which field, and what was expected instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file, as named by the caller.
    pub file: String,
    /// 1-based line, when the text locates the problem.
    pub line: Option<usize>,
    /// Dotted path of the offending field, e.g. `faults.schedule[2].duration_ms`;
    /// `(file)` for an unreadable file and `(syntax)` for text that is not TOML.
    pub field: String,
    /// What was expected and what was found.
    pub expected: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}: {}", self.field, self.expected)
    }
}

impl std::error::Error for ScenarioError {}

pub(crate) type Result<T> = std::result::Result<T, ScenarioError>;

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario> {
    load_with(path, &[])
}

/// Reads the scenario file at `path`, applies `overrides` (`--set`) to its TOML, then
/// validates the result exactly like a file. An error caused by an override names its field
/// and says it came from `--set`.
pub fn load_with(path: &Path, overrides: &[Override]) -> Result<Scenario> {
    let text = read_scenario_text(path)?;
    parse_str_with(&text, &path.display().to_string(), overrides)
}

/// The text of the scenario file at `path`, read with the one bounded reader
/// ([`crate::input::read_limited`]) at [`crate::limits::MAX_FILE_BYTES`]: `/dev/zero`, a
/// device, an endless pipe or a huge file is refused, never read until memory runs out.
pub fn read_scenario_text(path: &Path) -> Result<String> {
    let file = path.display().to_string();
    let error = |expected: String| ScenarioError {
        file: file.clone(),
        line: None,
        field: "(file)".to_string(),
        expected,
    };
    let bytes =
        crate::input::read_limited(path, crate::limits::MAX_FILE_BYTES).map_err(|e| match e {
            crate::input::ReadError::Unreadable(e) => {
                error(format!("expected a readable scenario file, got: {e}"))
            }
            other => error(other.expected("a scenario file")),
        })?;
    crate::input::into_text(bytes).map_err(|at| ScenarioError {
        line: Some(at.line),
        ..error(format!(
            "expected a UTF-8 scenario file, got invalid UTF-8 at column {} (byte {})",
            at.column, at.byte
        ))
    })
}

/// [`parse_str`] after applying `overrides` to the TOML document.
pub fn parse_str_with(text: &str, file: &str, overrides: &[Override]) -> Result<Scenario> {
    if overrides.is_empty() {
        return parse_str(text, file);
    }
    let changed = overrides::apply(text, file, overrides)?;
    parse_str(&changed, file).map_err(|mut error| {
        let culprit = overrides.iter().rev().find(|o| {
            error.field == o.field
                || error.field.starts_with(&format!("{}.", o.field))
                || error.field.starts_with(&format!("{}[", o.field))
                || o.field.starts_with(&format!("{}.", error.field))
        });
        match culprit {
            Some(o) => {
                error.field = o.field.clone();
                error.line = None;
                error.expected = format!("{} (from --set {})", error.expected, o.to_arg());
            }
            None => {
                let all: Vec<String> = overrides.iter().map(Override::to_arg).collect();
                error.expected = format!("{} (with --set {})", error.expected, all.join(", "));
            }
        }
        error
    })
}

/// Validates scenario `text`; `file` only names the source in errors.
pub fn parse_str(text: &str, file: &str) -> Result<Scenario> {
    let doc = ImDocument::parse(text).map_err(|error| ScenarioError {
        file: file.to_string(),
        line: error.span().map(|span| locate::line_at(text, span.start)),
        field: "(syntax)".to_string(),
        expected: format!("expected valid TOML: {}", error.message().trim()),
    })?;
    let ctx = Ctx { file, text, doc };
    let deserializer =
        toml_edit::de::Deserializer::parse(text).map_err(|error| ctx.serde_error("", &error))?;
    let raw: raw::RawScenario =
        serde_path_to_error::deserialize(deserializer).map_err(|error| {
            let path = locate::path_string(error.path());
            ctx.serde_error(&path, error.inner())
        })?;
    ctx.resolve(raw)
}
