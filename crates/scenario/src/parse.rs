//! The TOML boundary: a scenario file's text → raw structs → one `resolve` into a [`Scenario`].

use std::{collections::BTreeMap, ops::Range, path::Path};

use fencesim_model::{
    lease::{OnRestart, TokenScope, TokenSource},
    nodes, Invariant,
};
use serde::{de, Deserialize};
use toml_edit::{ImDocument, Item, Table, Value};

use crate::spec::*;

/// Why a scenario file was rejected: where, which field, and what was expected instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
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

type Result<T> = std::result::Result<T, ScenarioError>;

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| ScenarioError {
        file: file.clone(),
        line: None,
        field: "(file)".to_string(),
        expected: format!("expected a readable scenario file, got: {error}"),
    })?;
    parse_str(&text, &file)
}

/// Validates scenario `text`; `file` only names the source in errors.
pub fn parse_str(text: &str, file: &str) -> Result<Scenario> {
    let doc = ImDocument::parse(text).map_err(|error| ScenarioError {
        file: file.to_string(),
        line: error.span().map(|span| line_at(text, span.start)),
        field: "(syntax)".to_string(),
        expected: format!("expected valid TOML: {}", error.message().trim()),
    })?;
    let ctx = Ctx { file, text, doc };
    let deserializer =
        toml_edit::de::Deserializer::parse(text).map_err(|error| ctx.serde_error("", &error))?;
    let raw: RawScenario = serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let path = path_string(error.path());
        ctx.serde_error(&path, error.inner())
    })?;
    ctx.resolve(raw)
}

// ---------------------------------------------------------------------------------------
// Raw structs: the file's shape. Every field is optional here so that a missing field is
// reported by `resolve` with its full dotted path, like every other semantic error.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    duration_ms: Option<i64>,
    seeds: Option<String>,
    lease: Option<RawLease>,
    storage: Option<RawStorage>,
    workers: Option<RawWorkers>,
    network: Option<RawNetwork>,
    clocks: Option<RawClocks>,
    faults: Option<RawFaults>,
    expect: Option<RawExpect>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum RawTokenSource {
    DurableCounter,
    VolatileCounter,
    WallClock,
    RandomId,
    WrappingCounter,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLease {
    ttl_ms: Option<i64>,
    min_ttl_ms: Option<i64>,
    lock_delay_ms: Option<i64>,
    election_timeout_ms: Option<i64>,
    token_source: Option<RawTokenSource>,
    token_bits: Option<i64>,
    token_scope: Option<TokenScope>,
    on_restart: Option<OnRestart>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStorage {
    fencing: Option<FencingMode>,
    max_token: Option<Durability>,
    compare_scope: Option<CompareScope>,
    proxy_bypass: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkers {
    count: Option<i64>,
    resources: Option<Vec<String>>,
    shared_lease: Option<String>,
    work_ms: Option<RawDist>,
    writes_per_lease: Option<i64>,
    renew_every_ms: Option<i64>,
    renew_deadline_ms: Option<i64>,
    stop_on_renew_failure: Option<bool>,
    check_lease_before_write: Option<bool>,
    recheck_deadline_before_write: Option<bool>,
    deadline_from: Option<DeadlineFrom>,
    request_timeout_ms: Option<i64>,
    acquire_retry_ms: Option<i64>,
    side_effects: Option<SideEffects>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    latency_ms: Option<RawDist>,
    spike_probability: Option<f64>,
    spikes_ms: Option<Vec<f64>>,
    loss: Option<f64>,
    duplicate: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClocks {
    random_drift_ppm: Option<f64>,
    random_offset_ms: Option<f64>,
    nodes: Option<BTreeMap<String, RawClock>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClock {
    offset_ms: Option<f64>,
    drift_ppm: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFaults {
    swarm: Option<bool>,
    schedule: Option<Vec<RawScheduled>>,
    random: Option<Vec<RawRandom>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScheduled {
    at_ms: Option<f64>,
    kind: Option<FaultKind>,
    node: Option<String>,
    duration_ms: Option<f64>,
    delta_ms: Option<f64>,
    nodes: Option<Vec<String>>,
    peers: Option<Vec<String>>,
    one_way: Option<bool>,
    from: Option<String>,
    to: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRandom {
    kind: Option<FaultKind>,
    rate_per_min: Option<f64>,
    duration_ms: Option<RawDist>,
    nodes: Option<Vec<String>>,
    one_way_probability: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    safe: Option<bool>,
    violates: Option<Vec<Invariant>>,
    coverage: Option<Vec<String>>,
}

/// A distribution as written: a bare number (constant) or an inline table tagged by `dist`.
enum RawDist {
    Number(f64),
    Table(RawDistTable),
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum RawDistKind {
    Const,
    Uniform,
    Lognormal,
    Exponential,
}

// One flat table rather than a serde-tagged enum: serde buffers tagged enums, which loses
// the field path and span that errors need. Keys foreign to the `dist` are rejected in
// `resolve`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDistTable {
    dist: Option<RawDistKind>,
    value: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    median: Option<f64>,
    p99: Option<f64>,
    mean: Option<f64>,
}

impl<'de> Deserialize<'de> for RawDist {
    fn deserialize<D: de::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = RawDist;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of milliseconds or a table like { dist = \"uniform\", min = 1, max = 5 }")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<RawDist, E> {
                Ok(RawDist::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<RawDist, E> {
                Ok(RawDist::Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<RawDist, E> {
                Ok(RawDist::Number(v))
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<RawDist, A::Error> {
                RawDistTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawDist::Table)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

// ---------------------------------------------------------------------------------------
// Locating errors.

fn path_string(path: &serde_path_to_error::Path) -> String {
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

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_at(text: &str, offset: usize) -> usize {
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
struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    doc: ImDocument<&'a str>,
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
    fn error(&self, field: &str, expected: impl Into<String>) -> ScenarioError {
        self.error_at(field, field, expected)
    }

    /// An error on `field` located at `line_path` (for a missing key best shown next to the
    /// key that made it necessary).
    fn error_at(&self, field: &str, line_path: &str, expected: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: self.line_of(line_path),
            field: field.to_string(),
            expected: expected.into(),
        }
    }

    fn serde_error(&self, path: &str, error: &toml_edit::de::Error) -> ScenarioError {
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
// Resolution: the one place raw values become spec values, defaults included.

/// Every node name for `workers` workers, in `Scenario::node_names` order.
fn node_names(workers: usize) -> Vec<String> {
    let mut names = vec![nodes::COORDINATOR.to_string(), nodes::STORAGE.to_string()];
    names.extend((0..workers).map(nodes::worker));
    names
}

fn worker_range(workers: usize) -> String {
    match workers {
        1 => "worker-0".to_string(),
        n => format!("worker-0..worker-{}", n - 1),
    }
}

/// The name a value has in scenario files (its serde kebab-case form).
fn file_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        other => format!("{other:?}"),
    }
}

const MAX_DRIFT_PPM: f64 = 1e6;

impl Ctx<'_> {
    fn required<T>(&self, field: &str, value: Option<T>) -> Result<T> {
        value.ok_or_else(|| self.error(field, "expected a value: this field is required"))
    }

    fn positive_ms(&self, field: &str, value: i64) -> Result<u64> {
        u64::try_from(value)
            .ok()
            .filter(|&ms| ms > 0)
            .ok_or_else(|| {
                self.error(
                    field,
                    format!("expected a positive number of milliseconds, got {value}"),
                )
            })
    }

    fn non_negative_ms(&self, field: &str, value: i64) -> Result<u64> {
        u64::try_from(value).map_err(|_| {
            self.error(
                field,
                format!("expected a non-negative number of milliseconds, got {value}"),
            )
        })
    }

    fn finite(&self, field: &str, value: f64) -> Result<f64> {
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.error(field, format!("expected a finite number, got {value}")))
        }
    }

    fn positive_f64(&self, field: &str, value: f64, unit: &str) -> Result<f64> {
        if self.finite(field, value)? > 0.0 {
            Ok(value)
        } else {
            Err(self.error(
                field,
                format!("expected a positive number of {unit}, got {value}"),
            ))
        }
    }

    fn non_negative_f64(&self, field: &str, value: f64, unit: &str) -> Result<f64> {
        if self.finite(field, value)? >= 0.0 {
            Ok(value)
        } else {
            Err(self.error(
                field,
                format!("expected a non-negative number of {unit}, got {value}"),
            ))
        }
    }

    /// A probability in [0, 1], or [0, 1) when `one_allowed` is false.
    fn probability(&self, field: &str, value: f64, one_allowed: bool) -> Result<f64> {
        let ok = value >= 0.0 && (value < 1.0 || (one_allowed && value == 1.0));
        if ok {
            Ok(value)
        } else {
            let range = if one_allowed { "[0, 1]" } else { "[0, 1)" };
            Err(self.error(
                field,
                format!("expected a probability in {range}, got {value}"),
            ))
        }
    }

    fn node(&self, field: &str, name: &str, names: &[String]) -> Result<String> {
        if names.iter().any(|known| known == name) {
            Ok(name.to_string())
        } else {
            let workers = names.len() - 2;
            Err(self.error(
                field,
                format!(
                    "expected a node name (coordinator, storage, {}), got {name:?}",
                    worker_range(workers)
                ),
            ))
        }
    }

    fn worker(&self, field: &str, name: &str, workers: usize) -> Result<String> {
        if (0..workers).any(|index| nodes::worker(index) == name) {
            Ok(name.to_string())
        } else {
            Err(self.error(
                field,
                format!(
                    "expected a worker name ({}), got {name:?}",
                    worker_range(workers)
                ),
            ))
        }
    }

    /// Rejects keys present in a table but meaningless for its variant (`what`), so a typo'd
    /// combination is an error rather than silently ignored.
    fn only_keys(
        &self,
        path: &str,
        what: &str,
        allowed: &[&str],
        present: &[(&str, bool)],
    ) -> Result<()> {
        for &(key, is_present) in present {
            if is_present && !allowed.contains(&key) {
                return Err(self.error(
                    &join(path, key),
                    format!(
                        "expected no `{key}` with {what} (it takes: {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn resolve(&self, raw: RawScenario) -> Result<Scenario> {
        let name = self.required("name", raw.name)?;
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
        if !name_ok {
            return Err(self.error(
                "name",
                format!("expected a name made of [a-z0-9-]+, got {name:?}"),
            ));
        }
        let description = self.required("description", raw.description)?;
        if description.trim().is_empty() {
            return Err(self.error("description", "expected a non-empty description, got \"\""));
        }
        let duration_ms = self.positive_ms(
            "duration_ms",
            self.required("duration_ms", raw.duration_ms)?,
        )?;
        let seeds = self.seeds(&self.required("seeds", raw.seeds)?)?;
        let lease = self.lease(self.required("lease", raw.lease)?)?;
        let workers = self.workers(self.required("workers", raw.workers)?, &lease)?;
        let names = node_names(workers.count);
        let storage = self.storage(self.required("storage", raw.storage)?, workers.count)?;
        let network = self.network(raw.network.unwrap_or_default())?;
        let clocks = self.clocks(raw.clocks.unwrap_or_default(), &names)?;
        let faults = self.faults(
            raw.faults.unwrap_or_default(),
            duration_ms,
            &names,
            workers.count,
        )?;
        let expect = self.expect(self.required("expect", raw.expect)?)?;
        Ok(Scenario {
            name,
            description,
            duration_ms,
            seeds,
            lease,
            storage,
            workers,
            network,
            clocks,
            faults,
            expect,
        })
    }

    fn seeds(&self, text: &str) -> Result<SeedRange> {
        // Digits only: `u64::from_str` would also take "+5", which is not a seed range.
        let number = |part: &str| {
            let digits = !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
            digits.then(|| part.parse::<u64>().ok()).flatten()
        };
        let bounds = text
            .split_once("..")
            .map(|(start, end)| (number(start), number(end)));
        match bounds {
            Some((Some(start), Some(end))) if start < end => Ok(SeedRange { start, end }),
            Some((Some(_), Some(_))) => Err(self.error(
                "seeds",
                format!("expected a non-empty half-open range \"A..B\" with A < B, got {text:?}"),
            )),
            _ => Err(self.error(
                "seeds",
                format!("expected a half-open range of seeds like \"0..200\", got {text:?}"),
            )),
        }
    }

    fn lease(&self, raw: RawLease) -> Result<LeaseSpec> {
        let ttl_ms =
            self.positive_ms("lease.ttl_ms", self.required("lease.ttl_ms", raw.ttl_ms)?)?;
        let min_ttl_ms = self.non_negative_ms("lease.min_ttl_ms", raw.min_ttl_ms.unwrap_or(0))?;
        let lock_delay_ms =
            self.non_negative_ms("lease.lock_delay_ms", raw.lock_delay_ms.unwrap_or(0))?;
        let election_timeout_ms = self.non_negative_ms(
            "lease.election_timeout_ms",
            raw.election_timeout_ms.unwrap_or(1_000),
        )?;
        let source = self.required("lease.token_source", raw.token_source)?;
        let token_source = match (source, raw.token_bits) {
            (RawTokenSource::WrappingCounter, Some(bits)) => match u8::try_from(bits) {
                Ok(bits) if (1..=63).contains(&bits) => TokenSource::WrappingCounter { bits },
                _ => {
                    return Err(self.error(
                        "lease.token_bits",
                        format!("expected a counter width from 1 to 63 bits, got {bits}"),
                    ))
                }
            },
            (RawTokenSource::WrappingCounter, None) => {
                return Err(self.error_at(
                    "lease.token_bits",
                    "lease.token_source",
                    "expected a counter width (1..=63 bits): required with token_source = \"wrapping-counter\", got none",
                ))
            }
            (_, Some(bits)) => {
                return Err(self.error(
                    "lease.token_bits",
                    format!("expected no token_bits: only allowed with token_source = \"wrapping-counter\", got {bits}"),
                ))
            }
            (RawTokenSource::DurableCounter, None) => TokenSource::DurableCounter,
            (RawTokenSource::VolatileCounter, None) => TokenSource::VolatileCounter,
            (RawTokenSource::WallClock, None) => TokenSource::WallClock,
            (RawTokenSource::RandomId, None) => TokenSource::RandomId,
        };
        Ok(LeaseSpec {
            ttl_ms,
            min_ttl_ms,
            lock_delay_ms,
            election_timeout_ms,
            token_source,
            token_scope: raw.token_scope.unwrap_or(TokenScope::PerResource),
            on_restart: raw.on_restart.unwrap_or(OnRestart::KeepAndExtend),
        })
    }

    fn workers(&self, raw: RawWorkers, lease: &LeaseSpec) -> Result<WorkerSpec> {
        let count = self.required("workers.count", raw.count)?;
        let count = match usize::try_from(count) {
            Ok(count) if (1..=64).contains(&count) => count,
            _ => {
                return Err(self.error(
                    "workers.count",
                    format!("expected 1 to 64 workers, got {count}"),
                ))
            }
        };
        let resources = self.required("workers.resources", raw.resources)?;
        if resources.is_empty() {
            return Err(self.error(
                "workers.resources",
                "expected at least one resource name, got []",
            ));
        }
        for (index, resource) in resources.iter().enumerate() {
            let field = format!("workers.resources[{index}]");
            if resource.is_empty() {
                return Err(self.error(&field, "expected a non-empty resource name, got \"\""));
            }
            if resources[..index].contains(resource) {
                return Err(self.error(
                    &field,
                    format!("expected distinct resource names, got {resource:?} twice"),
                ));
            }
        }
        let lease_scope = match raw.shared_lease {
            Some(name) if name.is_empty() => {
                return Err(self.error(
                    "workers.shared_lease",
                    "expected a non-empty lease name, got \"\"",
                ))
            }
            Some(name) => LeaseScopeSpec::Single(name),
            None => LeaseScopeSpec::PerResource,
        };
        let work_ms = self.dist(
            "workers.work_ms",
            self.required("workers.work_ms", raw.work_ms)?,
        )?;
        let writes_per_lease = raw.writes_per_lease.unwrap_or(1);
        let writes_per_lease = u32::try_from(writes_per_lease)
            .ok()
            .filter(|&writes| writes >= 1)
            .ok_or_else(|| {
                self.error(
                    "workers.writes_per_lease",
                    format!("expected at least 1 write per lease, got {writes_per_lease}"),
                )
            })?;
        let ttl_ms = lease.effective_ttl_ms();
        let renew_every_ms = match raw.renew_every_ms {
            Some(renew) => {
                let renew = self.positive_ms("workers.renew_every_ms", renew)?;
                if renew >= ttl_ms {
                    return Err(self.error(
                        "workers.renew_every_ms",
                        format!("expected an interval shorter than the effective TTL ({ttl_ms} ms), got {renew}"),
                    ));
                }
                renew
            }
            None if ttl_ms / 3 == 0 => {
                return Err(self.error_at(
                    "workers.renew_every_ms",
                    "lease.ttl_ms",
                    format!("expected a positive default interval, but effective TTL {ttl_ms} ms / 3 is 0: set it"),
                ))
            }
            None => ttl_ms / 3,
        };
        let renew_deadline_ms = match raw.renew_deadline_ms {
            Some(deadline) => self.positive_ms("workers.renew_deadline_ms", deadline)?,
            None => ttl_ms,
        };
        let request_timeout_ms = match raw.request_timeout_ms {
            Some(timeout) => self.positive_ms("workers.request_timeout_ms", timeout)?,
            None if ttl_ms / 2 == 0 => {
                return Err(self.error_at(
                    "workers.request_timeout_ms",
                    "lease.ttl_ms",
                    format!("expected a positive default timeout, but effective TTL {ttl_ms} ms / 2 is 0: set it"),
                ))
            }
            None => (ttl_ms / 2).min(1_000),
        };
        let acquire_retry_ms = self.positive_ms(
            "workers.acquire_retry_ms",
            raw.acquire_retry_ms.unwrap_or(100),
        )?;
        Ok(WorkerSpec {
            count,
            resources,
            lease_scope,
            work_ms,
            writes_per_lease,
            renew_every_ms,
            renew_deadline_ms,
            stop_on_renew_failure: raw.stop_on_renew_failure.unwrap_or(true),
            check_lease_before_write: raw.check_lease_before_write.unwrap_or(false),
            recheck_deadline_before_write: raw.recheck_deadline_before_write.unwrap_or(false),
            deadline_from: raw.deadline_from.unwrap_or(DeadlineFrom::RequestSent),
            request_timeout_ms,
            acquire_retry_ms,
            side_effects: raw.side_effects.unwrap_or(SideEffects::None),
        })
    }

    fn storage(&self, raw: RawStorage, workers: usize) -> Result<StorageSpec> {
        let fencing = self.required("storage.fencing", raw.fencing)?;
        let proxy_bypass = raw.proxy_bypass.unwrap_or_default();
        if !proxy_bypass.is_empty() && fencing != FencingMode::Proxy {
            return Err(self.error(
                "storage.proxy_bypass",
                format!(
                    "expected no bypassing workers: only allowed with fencing = \"proxy\", got fencing = {:?}",
                    file_name(&fencing)
                ),
            ));
        }
        for (index, name) in proxy_bypass.iter().enumerate() {
            self.worker(&format!("storage.proxy_bypass[{index}]"), name, workers)?;
        }
        Ok(StorageSpec {
            fencing,
            max_token: raw.max_token.unwrap_or(Durability::Durable),
            compare_scope: raw.compare_scope.unwrap_or(CompareScope::PerResource),
            proxy_bypass,
        })
    }

    fn network(&self, raw: RawNetwork) -> Result<NetworkSpec> {
        let base = match raw.latency_ms {
            Some(dist) => self.dist("network.latency_ms", dist)?,
            None => Dist::Lognormal {
                median: 0.5,
                p99: 5.0,
            },
        };
        let spike_probability = self.probability(
            "network.spike_probability",
            raw.spike_probability.unwrap_or(0.0),
            true,
        )?;
        let spikes_ms = raw.spikes_ms.unwrap_or_else(|| vec![200.0, 400.0, 800.0]);
        for (index, &spike) in spikes_ms.iter().enumerate() {
            self.positive_f64(
                &format!("network.spikes_ms[{index}]"),
                spike,
                "milliseconds",
            )?;
        }
        if spike_probability > 0.0 && spikes_ms.is_empty() {
            return Err(self.error(
                "network.spikes_ms",
                "expected at least one spike size when spike_probability > 0, got []",
            ));
        }
        Ok(NetworkSpec {
            latency: LatencySpec {
                base,
                spike_probability,
                spikes_ms,
            },
            loss: self.probability("network.loss", raw.loss.unwrap_or(0.0), false)?,
            duplicate: self.probability("network.duplicate", raw.duplicate.unwrap_or(0.0), true)?,
        })
    }

    fn drift(&self, field: &str, drift_ppm: f64) -> Result<f64> {
        if self.finite(field, drift_ppm)?.abs() < MAX_DRIFT_PPM {
            Ok(drift_ppm)
        } else {
            Err(self.error(
                field,
                format!("expected a drift with |ppm| < 1000000, got {drift_ppm}"),
            ))
        }
    }

    fn clocks(&self, raw: RawClocks, names: &[String]) -> Result<ClocksSpec> {
        let random_drift_ppm = self.non_negative_f64(
            "clocks.random_drift_ppm",
            raw.random_drift_ppm.unwrap_or(0.0),
            "ppm",
        )?;
        self.drift("clocks.random_drift_ppm", random_drift_ppm)?;
        let random_offset_ms = self.non_negative_f64(
            "clocks.random_offset_ms",
            raw.random_offset_ms.unwrap_or(0.0),
            "milliseconds",
        )?;
        let mut nodes = BTreeMap::new();
        for (name, clock) in raw.nodes.unwrap_or_default() {
            let path = format!("clocks.nodes.{name}");
            self.node(&path, &name, names)?;
            let offset_ms =
                self.finite(&join(&path, "offset_ms"), clock.offset_ms.unwrap_or(0.0))?;
            let drift_ppm =
                self.drift(&join(&path, "drift_ppm"), clock.drift_ppm.unwrap_or(0.0))?;
            nodes.insert(
                name,
                ClockSpec {
                    offset_ms,
                    drift_ppm,
                },
            );
        }
        Ok(ClocksSpec {
            random_drift_ppm,
            random_offset_ms,
            nodes,
        })
    }

    fn faults(
        &self,
        raw: RawFaults,
        duration_ms: u64,
        names: &[String],
        workers: usize,
    ) -> Result<FaultSpec> {
        let schedule = raw
            .schedule
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(index, fault)| {
                self.scheduled(
                    &format!("faults.schedule[{index}]"),
                    fault,
                    duration_ms,
                    names,
                    workers,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        self.check_overlaps(&schedule)?;
        let random = raw
            .random
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(index, fault)| {
                self.random(&format!("faults.random[{index}]"), fault, names, workers)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(FaultSpec {
            schedule,
            random,
            swarm: raw.swarm.unwrap_or(false),
        })
    }

    fn scheduled(
        &self,
        path: &str,
        raw: RawScheduled,
        duration_ms: u64,
        names: &[String],
        workers: usize,
    ) -> Result<TimedFault> {
        let field = |key: &str| join(path, key);
        let at_ms = self.finite(&field("at_ms"), self.required(&field("at_ms"), raw.at_ms)?)?;
        if !(0.0..duration_ms as f64).contains(&at_ms) {
            return Err(self.error(
                &field("at_ms"),
                format!(
                    "expected a time inside the safety phase [0, {duration_ms}) ms, got {at_ms}"
                ),
            ));
        }
        let kind = self.required(&field("kind"), raw.kind)?;
        let allowed: &[&str] = match kind {
            FaultKind::GcPause | FaultKind::VmSuspend | FaultKind::WorkerCrash => {
                &["node", "duration_ms"]
            }
            FaultKind::ClockStep => &["node", "delta_ms"],
            FaultKind::Panic => &["node"],
            FaultKind::Partition => &["nodes", "peers", "one_way", "duration_ms"],
            FaultKind::HoldRelease => &["from", "to", "duration_ms"],
            FaultKind::CoordinatorRestart | FaultKind::StorageRestart => &["duration_ms"],
        };
        self.only_keys(
            path,
            &format!("kind = \"{kind}\""),
            allowed,
            &[
                ("node", raw.node.is_some()),
                ("duration_ms", raw.duration_ms.is_some()),
                ("delta_ms", raw.delta_ms.is_some()),
                ("nodes", raw.nodes.is_some()),
                ("peers", raw.peers.is_some()),
                ("one_way", raw.one_way.is_some()),
                ("from", raw.from.is_some()),
                ("to", raw.to.is_some()),
            ],
        )?;
        let node = || -> Result<String> {
            let name = self.required(&field("node"), raw.node.clone())?;
            self.node(&field("node"), &name, names)
        };
        let duration = || -> Result<f64> {
            let duration_ms = self.required(&field("duration_ms"), raw.duration_ms)?;
            self.positive_f64(&field("duration_ms"), duration_ms, "milliseconds")
        };
        let fault = match kind {
            FaultKind::GcPause => Fault::GcPause {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::VmSuspend => Fault::VmSuspend {
                node: node()?,
                duration_ms: duration()?,
            },
            FaultKind::WorkerCrash => {
                let name = self.required(&field("node"), raw.node.clone())?;
                let node = self.worker(&field("node"), &name, workers)?;
                Fault::WorkerCrash {
                    node,
                    duration_ms: duration()?,
                }
            }
            FaultKind::ClockStep => {
                let node = node()?;
                let delta_ms = self.finite(
                    &field("delta_ms"),
                    self.required(&field("delta_ms"), raw.delta_ms)?,
                )?;
                if delta_ms == 0.0 {
                    return Err(self.error(
                        &field("delta_ms"),
                        "expected a non-zero step in milliseconds, got 0",
                    ));
                }
                Fault::ClockStep { node, delta_ms }
            }
            FaultKind::Panic => Fault::Panic { node: node()? },
            FaultKind::Partition => {
                let nodes = self.required(&field("nodes"), raw.nodes.clone())?;
                if nodes.is_empty() {
                    return Err(self.error(
                        &field("nodes"),
                        "expected at least one node to isolate, got []",
                    ));
                }
                let peers = raw.peers.clone().unwrap_or_default();
                for (index, name) in nodes.iter().enumerate() {
                    let item = format!("{}[{index}]", field("nodes"));
                    self.node(&item, name, names)?;
                    if nodes[..index].contains(name) {
                        return Err(self.error(
                            &item,
                            format!("expected distinct nodes, got {name:?} twice"),
                        ));
                    }
                }
                for (index, name) in peers.iter().enumerate() {
                    let item = format!("{}[{index}]", field("peers"));
                    self.node(&item, name, names)?;
                    if nodes.contains(name) {
                        return Err(self.error(
                            &item,
                            format!("expected a node not in `nodes`, got {name:?}"),
                        ));
                    }
                }
                Fault::Partition {
                    nodes,
                    peers,
                    one_way: raw.one_way.unwrap_or(false),
                    duration_ms: duration()?,
                }
            }
            FaultKind::HoldRelease => {
                let from = self.required(&field("from"), raw.from.clone())?;
                let from = self.node(&field("from"), &from, names)?;
                let to = self.required(&field("to"), raw.to.clone())?;
                let to = self.node(&field("to"), &to, names)?;
                if from == to {
                    return Err(self.error(
                        &field("to"),
                        format!("expected a node other than `from`, got {to:?}"),
                    ));
                }
                Fault::HoldRelease {
                    from,
                    to,
                    duration_ms: duration()?,
                }
            }
            FaultKind::CoordinatorRestart => Fault::CoordinatorRestart {
                duration_ms: duration()?,
            },
            FaultKind::StorageRestart => Fault::StorageRestart {
                duration_ms: duration()?,
            },
        };
        Ok(TimedFault { at_ms, fault })
    }

    /// A node cannot be paused, suspended or crashed twice at once: the simulator would have
    /// to invent which one ends first.
    fn check_overlaps(&self, schedule: &[TimedFault]) -> Result<()> {
        for (later_index, later) in schedule.iter().enumerate() {
            let Some(node) = later.fault.stopped_node() else {
                continue;
            };
            let later_end = later.at_ms + later.fault.duration_ms();
            for (earlier_index, earlier) in schedule[..later_index].iter().enumerate() {
                let earlier_end = earlier.at_ms + earlier.fault.duration_ms();
                let overlaps = later.at_ms < earlier_end && earlier.at_ms < later_end;
                if earlier.fault.stopped_node() == Some(node) && overlaps {
                    return Err(self.error(
                        &format!("faults.schedule[{later_index}]"),
                        format!(
                            "expected no overlap with faults.schedule[{earlier_index}] ({} on {node} over {}..{} ms), got {} over {}..{} ms",
                            earlier.fault.kind(),
                            earlier.at_ms,
                            earlier_end,
                            later.fault.kind(),
                            later.at_ms,
                            later_end
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn random(
        &self,
        path: &str,
        raw: RawRandom,
        names: &[String],
        workers: usize,
    ) -> Result<RandomFault> {
        let field = |key: &str| join(path, key);
        let kind = self.required(&field("kind"), raw.kind)?;
        if kind == FaultKind::Panic {
            return Err(self.error(
                &field("kind"),
                "expected a random fault kind other than \"panic\" (schedule a panic explicitly), got \"panic\"",
            ));
        }
        let rate_per_min = self.required(&field("rate_per_min"), raw.rate_per_min)?;
        let rate_per_min = self.positive_f64(
            &field("rate_per_min"),
            rate_per_min,
            "occurrences per minute",
        )?;
        let duration_ms = self.dist(
            &field("duration_ms"),
            self.required(&field("duration_ms"), raw.duration_ms)?,
        )?;
        let nodes = raw.nodes.unwrap_or_default();
        for (index, name) in nodes.iter().enumerate() {
            let item = format!("{}[{index}]", field("nodes"));
            // A crash or a held write needs a worker; other kinds may hit any node.
            match kind {
                FaultKind::WorkerCrash | FaultKind::HoldRelease => {
                    self.worker(&item, name, workers)?
                }
                _ => self.node(&item, name, names)?,
            };
        }
        let one_way_probability = match raw.one_way_probability {
            Some(probability) if kind != FaultKind::Partition => {
                return Err(self.error(
                    &field("one_way_probability"),
                    format!("expected no one_way_probability with kind = \"{kind}\" (partition only), got {probability}"),
                ))
            }
            Some(probability) => self.probability(&field("one_way_probability"), probability, true)?,
            None => 0.0,
        };
        Ok(RandomFault {
            kind,
            rate_per_min,
            duration_ms,
            nodes,
            one_way_probability,
        })
    }

    fn expect(&self, raw: RawExpect) -> Result<Expect> {
        let outcome = match (raw.safe, raw.violates) {
            (Some(true), Some(_)) => {
                return Err(self.error(
                    "expect.violates",
                    "expected either `safe = true` or `violates = [...]`, got both",
                ))
            }
            (Some(true), None) => Outcome::Safe,
            (Some(false), None) => {
                return Err(self.error(
                    "expect.safe",
                    "expected `safe = true` (or `violates = [...]` instead), got false",
                ))
            }
            (_, Some(violates)) => {
                if violates.is_empty() {
                    return Err(self.error(
                        "expect.violates",
                        "expected at least one invariant (I1..I5), got [] (use `safe = true`)",
                    ));
                }
                for (index, invariant) in violates.iter().enumerate() {
                    if violates[..index].contains(invariant) {
                        return Err(self.error(
                            &format!("expect.violates[{index}]"),
                            format!("expected distinct invariants, got {invariant} twice"),
                        ));
                    }
                }
                Outcome::Violates(violates)
            }
            (None, None) => {
                return Err(self.error(
                    "expect",
                    "expected `safe = true` or `violates = [...]`, got neither",
                ))
            }
        };
        let coverage = raw.coverage.unwrap_or_default();
        let known: Vec<&str> = fencesim_model::COVERAGE
            .iter()
            .map(|(name, _)| *name)
            .collect();
        for (index, name) in coverage.iter().enumerate() {
            if !known.contains(&name.as_str()) {
                return Err(self.error(
                    &format!("expect.coverage[{index}]"),
                    format!("expected one of {}, got `{name}`", known.join(", ")),
                ));
            }
            if coverage[..index].contains(name) {
                return Err(self.error(
                    &format!("expect.coverage[{index}]"),
                    format!("expected distinct conditions, got `{name}` twice"),
                ));
            }
        }
        // No vacuous passes: a safe expectation must say what danger it survived.
        if outcome == Outcome::Safe && coverage.is_empty() {
            return Err(self.error(
                "expect.coverage",
                "expected at least one coverage condition with `safe = true` (what danger must \
                 happen for \"safe\" to mean something, e.g. [\"stale-write-rejected\"])",
            ));
        }
        Ok(Expect { outcome, coverage })
    }

    fn dist(&self, path: &str, raw: RawDist) -> Result<Dist> {
        let table = match raw {
            RawDist::Number(value) => {
                return self
                    .non_negative_f64(path, value, "milliseconds")
                    .map(|value| Dist::Const { value })
            }
            RawDist::Table(table) => table,
        };
        let field = |key: &str| join(path, key);
        let kind = self.required(&field("dist"), table.dist)?;
        let (name, allowed): (&str, &[&str]) = match kind {
            RawDistKind::Const => ("const", &["value"]),
            RawDistKind::Uniform => ("uniform", &["min", "max"]),
            RawDistKind::Lognormal => ("lognormal", &["median", "p99"]),
            RawDistKind::Exponential => ("exponential", &["mean"]),
        };
        self.only_keys(
            path,
            &format!("dist = \"{name}\""),
            allowed,
            &[
                ("value", table.value.is_some()),
                ("min", table.min.is_some()),
                ("max", table.max.is_some()),
                ("median", table.median.is_some()),
                ("p99", table.p99.is_some()),
                ("mean", table.mean.is_some()),
            ],
        )?;
        let get = |key: &str, value: Option<f64>| -> Result<f64> {
            self.finite(&field(key), self.required(&field(key), value)?)
        };
        match kind {
            RawDistKind::Const => {
                let value = self.non_negative_f64(
                    &field("value"),
                    get("value", table.value)?,
                    "milliseconds",
                )?;
                Ok(Dist::Const { value })
            }
            RawDistKind::Uniform => {
                let min =
                    self.non_negative_f64(&field("min"), get("min", table.min)?, "milliseconds")?;
                let max = get("max", table.max)?;
                if max < min {
                    return Err(self.error(
                        &field("max"),
                        format!("expected max >= min ({min}), got {max}"),
                    ));
                }
                Ok(Dist::Uniform { min, max })
            }
            RawDistKind::Lognormal => {
                let median = self.positive_f64(
                    &field("median"),
                    get("median", table.median)?,
                    "milliseconds",
                )?;
                let p99 = get("p99", table.p99)?;
                if p99 < median {
                    return Err(self.error(
                        &field("p99"),
                        format!("expected p99 >= median ({median}), got {p99}"),
                    ));
                }
                Ok(Dist::Lognormal { median, p99 })
            }
            RawDistKind::Exponential => {
                let mean =
                    self.positive_f64(&field("mean"), get("mean", table.mean)?, "milliseconds")?;
                Ok(Dist::Exponential { mean })
            }
        }
    }
}
