//! `--vary FIELD=VALUES` and the grid of settings they span.
//!
//! VALUES is a comma-separated list whose items are numbers (`2000,5000`), ranges with a
//! count (`2000..20000:10`, both ends included, evenly spaced, integers when both ends are),
//! other TOML words (`true`, `"drop"`), or a ratio of another varied field
//! (`lease.ttl_ms/3`, `lease.ttl_ms*0.5`), evaluated per setting. Several `--vary` form a
//! grid: every combination of their non-ratio items, in `--vary` order (the last varies
//! fastest).
//!
//! Only the lease service's and the workers' timings ([`TIMING_FIELDS`]) are varied, each by
//! `--vary` or `--set`, never both; values are written without a sign or spaces. A setting's
//! values reach the scenario loader as overrides, and its errors are blamed on the `--vary`
//! the user typed ([`blame`]), not on a `--set` they never gave.

use fencesim_scenario::{Override, ScenarioError};

/// One item of a `--vary` list.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A value as typed (parsed by the scenario loader like `--set`).
    Literal(String),
    /// `field / divisor` or `field * factor` of another varied field in the same setting.
    Ratio {
        /// The varied field it is a ratio of.
        of: String,
        /// The factor (a divisor `d` is stored as `1/d`).
        factor: f64,
        /// How it was written, for reports.
        text: String,
    },
}

/// One `--vary FIELD=VALUES`.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// Dotted field name.
    pub field: String,
    /// The items, ranges expanded.
    pub items: Vec<Item>,
}

/// Parses `FIELD=VALUES`; the error says what was expected. Whitespace anywhere and a
/// leading `+` on any number are refused, as shard numbers are (digits only).
pub fn parse_vary(text: &str) -> Result<Vary, String> {
    let parsed = Override::parse(text).map_err(|e| format!("--vary: {e}"))?;
    let field = parsed.field;
    let signed = text
        .split_once('=')
        .map_or("", |(_, value)| value)
        .split([',', '.', ':', '/', '*'])
        .any(|number| number.starts_with('+'));
    if signed || text.chars().any(char::is_whitespace) {
        return Err(format!(
            "--vary {field}: expected values without spaces or a `+` sign (2000,5000 or \
             2000..20000:10), got `{}`",
            text.escape_debug()
        ));
    }
    let mut items = Vec::new();
    for part in parsed.value.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!(
                "--vary {field}: expected a value between commas, got an empty one"
            ));
        }
        if let Some((range, count)) = part.split_once(':') {
            items.extend(range_items(&field, range, count)?);
        } else if let Some(item) = ratio_item(part) {
            items.push(item);
        } else if part.contains("..") {
            return Err(format!(
                "--vary {field}: expected a range with a count like 2000..20000:10, got `{part}`"
            ));
        } else {
            items.push(Item::Literal(part.to_string()));
        }
    }
    if items.is_empty() {
        return Err(format!("--vary {field}: expected at least one value"));
    }
    Ok(Vary { field, items })
}

fn range_items(field: &str, range: &str, count: &str) -> Result<Vec<Item>, String> {
    let bad = || {
        format!("--vary {field}: expected a range with a count like 2000..20000:10, got `{range}:{count}`")
    };
    let (start, end) = range.split_once("..").ok_or_else(bad)?;
    let (start_text, end_text) = (start.trim(), end.trim());
    let start: f64 = start_text.parse().map_err(|_| bad())?;
    let end: f64 = end_text.parse().map_err(|_| bad())?;
    let count: usize = count.trim().parse().map_err(|_| bad())?;
    if count == 0 || count > 1000 || !start.is_finite() || !end.is_finite() {
        return Err(format!(
            "--vary {field}: expected a count in 1..=1000 and finite ends, got `{range}:{count}`"
        ));
    }
    let integers = !start_text.contains(['.', 'e', 'E']) && !end_text.contains(['.', 'e', 'E']);
    let mut out: Vec<Item> = Vec::new();
    for k in 0..count {
        let x = if count == 1 {
            start
        } else {
            start + (end - start) * k as f64 / (count - 1) as f64
        };
        let item = Item::Literal(number(x, integers));
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(out)
}

fn ratio_item(part: &str) -> Option<Item> {
    let at = part.find(['/', '*'])?;
    let (of, rest) = (part[..at].trim(), &part[at + 1..]);
    if of.is_empty() || !of.chars().next()?.is_ascii_alphabetic() {
        return None;
    }
    let x: f64 = rest.trim().parse().ok()?;
    if !x.is_finite() || x <= 0.0 {
        return None;
    }
    let factor = if part.as_bytes()[at] == b'/' {
        1.0 / x
    } else {
        x
    };
    Some(Item::Ratio {
        of: of.to_string(),
        factor,
        text: part.to_string(),
    })
}

/// `x` as a value: an integer when asked (rounded), else the shortest float text.
fn number(x: f64, integer: bool) -> String {
    if integer {
        format!("{}", x.round() as i64)
    } else {
        let text = format!("{x}");
        if text.contains(['.', 'e']) {
            text
        } else {
            format!("{text}.0")
        }
    }
}

/// One setting: the value of every varied field, in `--vary` order.
pub type Setting = Vec<(String, String)>;

/// The most settings one sweep may have: the product of the `--vary` lists' lengths is
/// checked against it before anything is built.
pub const MAX_SETTINGS: u64 = 100_000;

/// The number of settings `varies` span (before removing duplicates), saturating.
pub fn grid_size(varies: &[Vary]) -> u64 {
    varies
        .iter()
        .fold(1u64, |n, v| n.saturating_mul(v.items.len() as u64))
}

/// Every setting of the grid, in time linear in its size. Errors: more than
/// [`MAX_SETTINGS`] settings, a field varied twice, a ratio of a field that is not varied
/// (or is itself a ratio), a ratio of a non-number.
pub fn grid(varies: &[Vary]) -> Result<Vec<Setting>, String> {
    let size = grid_size(varies);
    if size > MAX_SETTINGS {
        let counts: Vec<String> = varies.iter().map(|v| v.items.len().to_string()).collect();
        return Err(format!(
            "expected at most {MAX_SETTINGS} settings (the cap on a tune grid), got {size} \
             ({}); split the sweep or use fewer values",
            counts.join(" × ")
        ));
    }
    for (i, v) in varies.iter().enumerate() {
        if varies[..i].iter().any(|w| w.field == v.field) {
            return Err(format!("--vary {}: the field is varied twice", v.field));
        }
        for item in &v.items {
            if let Item::Ratio { of, text, .. } = item {
                let base = varies.iter().find(|w| &w.field == of);
                let ok = base.is_some_and(|w| {
                    w.field != v.field && w.items.iter().all(|i| matches!(i, Item::Literal(_)))
                });
                if !ok {
                    return Err(format!(
                        "--vary {}: `{text}` must be a ratio of another varied field whose values are numbers",
                        v.field
                    ));
                }
            }
        }
    }
    let mut settings: Vec<Vec<(String, Item)>> = vec![Vec::new()];
    for v in varies {
        let mut next = Vec::new();
        for partial in &settings {
            for item in &v.items {
                let mut s = partial.clone();
                s.push((v.field.clone(), item.clone()));
                next.push(s);
            }
        }
        settings = next;
    }
    let mut out = Vec::with_capacity(settings.len());
    let mut seen = std::collections::BTreeSet::new();
    for s in settings {
        let mut resolved: Setting = Vec::new();
        for (field, item) in &s {
            let value = match item {
                Item::Literal(text) => text.clone(),
                Item::Ratio { of, factor, text } => {
                    let base = s
                        .iter()
                        .find_map(|(f, i)| match i {
                            Item::Literal(t) if f == of => Some(t.as_str()),
                            _ => None,
                        })
                        .expect("checked above");
                    let x: f64 = base.parse().map_err(|_| {
                        format!("--vary {field}: `{text}` needs a number in {of}, got `{base}`")
                    })?;
                    number(x * factor, !base.contains(['.', 'e', 'E']))
                }
            };
            resolved.push((field.clone(), value));
        }
        if seen.insert(resolved.clone()) {
            out.push(resolved);
        }
    }
    Ok(out)
}

/// Fields a `--vary` may not touch: they change the fault profile (what `plan` draws, the
/// network's behaviour, the clocks, the run's length), so the settings would not share
/// fault plans.
pub const PROFILE_FIELDS: [&str; 6] = [
    "faults",
    "network",
    "clocks",
    "duration_ms",
    "workers.count",
    "seeds",
];

/// The fields `--vary` varies: the lease service's and the workers' timings, and the jitter
/// of the workers' acquire retries. Anything else (the name, an expectation, the fencing
/// mode, a preset, a switch) is one choice, given once with `--set`; fault-profile fields
/// ([`PROFILE_FIELDS`]) would also break the shared fault plans.
pub const TIMING_FIELDS: [&str; 12] = [
    "lease.ttl_ms",
    "lease.min_ttl_ms",
    "lease.max_ttl_ms",
    "lease.expiry_check_ms",
    "lease.lock_delay_ms",
    "lease.election_timeout_ms",
    "lease.restart_election_ms",
    "workers.renew_every_ms",
    "workers.renew_deadline_ms",
    "workers.request_timeout_ms",
    "workers.acquire_retry_ms",
    "workers.acquire_retry_jitter",
];

/// Checks every `--vary` field before a setting is built: not a fault-profile field, one of
/// [`TIMING_FIELDS`], and not also given to `--set` (which would win is not for the user to
/// guess). The error is what was expected (without the word), for `--vary`'s error.
pub fn check_fields(varies: &[Vary], overrides: &[Override]) -> Result<(), String> {
    let within = |field: &str, of: &str| {
        field == of || field.starts_with(&format!("{of}.")) || field.starts_with(&format!("{of}["))
    };
    for v in varies {
        if PROFILE_FIELDS.iter().any(|p| within(&v.field, p)) {
            return Err(format!(
                "a lease or worker timing field; `{}` is part of the fault profile, so the \
                 settings would not share fault plans (tune one profile at a time: run tune \
                 once per value with --set {}=…)",
                v.field, v.field
            ));
        }
        if !TIMING_FIELDS.contains(&v.field.as_str()) {
            return Err(format!(
                "a lease or worker timing field ({}), got `{}`; give any other field once \
                 with --set",
                TIMING_FIELDS.join(", "),
                v.field
            ));
        }
        if let Some(set) = overrides
            .iter()
            .find(|o| within(&o.field, &v.field) || within(&v.field, &o.field))
        {
            return Err(format!(
                "each field in --vary or in --set, not both; got --vary {} and --set {}",
                v.field,
                set.to_arg()
            ));
        }
    }
    Ok(())
}

/// `error`, from the scenario of `setting` (`overrides`, then the setting's values, all
/// given to the loader as overrides), blamed on what the user typed: the loader's
/// `(from --set F=V)` of a varied field becomes `(from --vary TYPED)` — with the setting's
/// value when a range or ratio made it — and its `(with --set …)` lists `--set` and `--vary`
/// apart.
pub fn blame(
    mut error: ScenarioError,
    setting: &Setting,
    overrides: &[Override],
    varies: &[(String, Vary)],
) -> ScenarioError {
    let origin = |field: &str, value: &str| {
        let typed = varies
            .iter()
            .find(|(_, v)| v.field == field)
            .map_or("", |(text, _)| text.as_str());
        if typed == format!("{field}={value}") {
            format!("--vary {typed}")
        } else {
            format!("--vary {typed}, the setting {field}={value}")
        }
    };
    for (field, value) in setting {
        let loader = format!(" (from --set {field}={value})");
        if let Some(head) = error.expected.strip_suffix(&loader) {
            error.expected = format!("{head} (from {})", origin(field, value));
            return error;
        }
    }
    let all: Vec<String> = overrides
        .iter()
        .map(Override::to_arg)
        .chain(
            setting
                .iter()
                .map(|(field, value)| format!("{field}={value}")),
        )
        .collect();
    let loader = format!(" (with --set {})", all.join(", "));
    if let Some(head) = error.expected.strip_suffix(&loader) {
        let given: Vec<String> = overrides
            .iter()
            .map(|o| format!("--set {}", o.to_arg()))
            .chain(setting.iter().map(|(field, value)| origin(field, value)))
            .collect();
        error.expected = format!("{head} (with {})", given.join("; "));
    }
    error
}
