//! `--vary FIELD=VALUES` and the grid of settings they span.
//!
//! VALUES is a comma-separated list whose items are numbers (`2000,5000`), ranges with a
//! count (`2000..20000:10`, both ends included, evenly spaced, integers when both ends are),
//! other TOML words (`true`, `"drop"`), or a ratio of another varied field
//! (`lease.ttl_ms/3`, `lease.ttl_ms*0.5`), evaluated per setting. Several `--vary` form a
//! grid: every combination of their non-ratio items, in `--vary` order (the last varies
//! fastest).

use fencesim_scenario::Override;

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

/// Parses `FIELD=VALUES`; the error says what was expected.
pub fn parse_vary(text: &str) -> Result<Vary, String> {
    let parsed = Override::parse(text).map_err(|e| format!("--vary: {e}"))?;
    let field = parsed.field;
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
