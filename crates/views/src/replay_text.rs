//! The text of `fencesim replay`: what one seed did, short enough to read — fault plan,
//! collapsed timeline, each violation with its proof, non-zero metrics, trace hash.

use std::fmt::Write as _;

use fencesim_check::Checked;
use fencesim_model::{history::History, NS_PER_MS};
use fencesim_scenario::{plan::FaultPlan, Scenario};

use crate::timeline::{render_violation, render_with, TimelineOptions};

/// Everything one replayed seed produced, as the CLI has it after running it.
#[derive(Clone, Copy, Debug)]
pub struct ReplayInput<'a> {
    /// The scenario as resolved.
    pub scenario: &'a Scenario,
    /// The seed replayed.
    pub seed: u64,
    /// The seed's fault plan.
    pub plan: &'a FaultPlan,
    /// Everything that happened.
    pub history: &'a History,
    /// The checker's verdict on the history: violations and metrics.
    pub checked: &'a Checked,
    /// The panic message if a node panicked.
    pub panic: Option<&'a str>,
    /// The history's trace hash.
    pub trace_hash: &'a str,
    /// The command line that reproduces this run, printed as is.
    pub replay_command: &'a str,
}

/// What the replay text shows beyond its default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayTextOptions {
    /// Also print every resolved option of the scenario (as a scenario file, with the
    /// effective values after the lease service's clamps as comments).
    pub resolved: bool,
    /// Timeline: only these nodes (`--nodes`); `None`: every node.
    pub nodes: Option<Vec<String>>,
    /// Timeline: only events in `[start_ns, end_ns]` of true time (`--window`).
    pub window_ns: Option<(u64, u64)>,
}

/// Metrics are packed on lines of at most this many characters.
const METRICS_LINE_CHARS: usize = 140;

/// The replay text. The first violation is named in the third line and again, with the
/// events that prove it, first in the violations section; the timeline marks its evidence
/// with `!!`. Runs of routine accepted writes and renewals are collapsed (see
/// [`TimelineOptions::collapse`]); `--trace` has every event.
pub fn replay_text(input: &ReplayInput<'_>, options: &ReplayTextOptions) -> String {
    let scenario = input.scenario;
    let violations = &input.checked.violations;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "== scenario {} (hash {}), seed {}",
        scenario.name,
        scenario.hash(),
        input.seed
    );
    let _ = writeln!(out, "== reproduce: {}", input.replay_command);
    let verdict = match (violations.first(), input.panic) {
        (_, Some(panic)) => format!("PANIC: {}", first_line(panic)),
        (None, None) => "no violation".to_string(),
        (Some(first), None) => {
            let names: Vec<String> = input
                .checked
                .violated()
                .iter()
                .map(|i| i.to_string())
                .collect();
            format!(
                "violates {} ({} violations); first: {} at {} ms",
                names.join(", "),
                violations.len(),
                first.invariant,
                format_ns(first.t_ns)
            )
        }
    };
    let _ = writeln!(out, "== result: {verdict}");

    if options.resolved {
        // A scenario file a user can paste: every resolved value explicit, and as comments
        // what the service makes of them (a preset's clamps), which the file cannot say.
        out.push_str("== resolved options (a scenario file: every default explicit)\n");
        for note in effective_notes(&scenario.lease) {
            let _ = writeln!(out, "# {note}");
        }
        for warning in scenario.preset_warnings() {
            let _ = writeln!(out, "# warning: {warning}");
        }
        out.push_str(&fencesim_scenario::scenario_toml(scenario));
    }
    // The plan's own first line ("fault plan for seed N: ...") is the section's heading.
    out.push_str("== ");
    out.push_str(&compact_plan(input.plan));

    let mut nodes = scenario.node_names();
    nodes.push("nemesis".to_string());
    let mut heading =
        "== timeline (true time, ms; routine writes and renewals collapsed".to_string();
    if let Some((start, end)) = options.window_ns {
        let _ = write!(heading, "; window {}..{}", format_ns(start), format_ns(end));
    }
    if let Some(filter) = &options.nodes {
        let _ = write!(heading, "; nodes {}", filter.join(","));
    }
    heading.push(')');
    let _ = writeln!(out, "{heading}");
    out.push_str(&render_with(
        input.history,
        violations,
        &nodes,
        &TimelineOptions {
            nodes: options.nodes.clone(),
            window_ns: options.window_ns,
            collapse: true,
        },
    ));

    let _ = writeln!(out, "== violations ({})", violations.len());
    if violations.is_empty() {
        out.push_str("none\n");
    }
    // No blank line between violations: each ends with its "violated" sentence.
    for violation in violations {
        out.push_str(&render_violation(input.history, violation));
    }
    if let Some(panic) = input.panic {
        let _ = writeln!(out, "== PANIC: {panic}");
    }
    out.push_str("== metrics (non-zero)\n");
    out.push_str(&compact_metrics(input.checked));
    let _ = writeln!(
        out,
        "== trace hash {} ({} events)",
        input.trace_hash,
        input.history.events.len()
    );
    out
}

/// The fault plan's own rendering, without the clock lines of nodes whose clock is exact
/// (most of them in most scenarios); one line says so instead.
fn compact_plan(plan: &FaultPlan) -> String {
    let exact: Vec<&String> = plan
        .clocks
        .iter()
        .filter(|(_, clock)| clock.offset_ms == 0.0 && clock.drift_ppm == 0.0)
        .map(|(node, _)| node)
        .collect();
    let mut out = String::new();
    for line in plan.render().lines() {
        let exact_clock_line = exact
            .iter()
            .any(|node| line.starts_with(&format!("  {node:<12} offset")));
        if exact_clock_line {
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line == "clocks:" && !exact.is_empty() {
            let names: Vec<&str> = exact.iter().map(|n| n.as_str()).collect();
            let _ = writeln!(out, "  exact (no offset, no drift): {}", names.join(", "));
        }
    }
    out
}

/// `name=value` for every metric that is not zero (or empty), packed on short lines, in the
/// order of the metrics' JSON.
pub fn compact_metrics(checked: &Checked) -> String {
    compact_metrics_except(checked, &[])
}

/// [`compact_metrics`] without the metrics named in `left_out` (those a recorded history's
/// events cannot support).
pub fn compact_metrics_except(checked: &Checked, left_out: &[&str]) -> String {
    let value = serde_json::to_value(&checked.metrics).expect("metrics serialize");
    let mut items: Vec<String> = Vec::new();
    if let serde_json::Value::Object(fields) = value {
        for (name, value) in fields {
            if left_out.contains(&name.as_str()) {
                continue;
            }
            let text = match &value {
                serde_json::Value::Number(n) if n.as_f64() == Some(0.0) => continue,
                serde_json::Value::Number(n) => match n.as_u64() {
                    Some(whole) => whole.to_string(),
                    None => format_ms(n.as_f64().unwrap_or_default()),
                },
                serde_json::Value::Array(list) if list.is_empty() => continue,
                serde_json::Value::Array(list) => {
                    let shown: Vec<String> = list
                        .iter()
                        .take(5)
                        .map(|v| format_ms(v.as_f64().unwrap_or_default()))
                        .collect();
                    let more = if list.len() > 5 {
                        format!(", ... {} in all", list.len())
                    } else {
                        String::new()
                    };
                    format!("[{}{more}]", shown.join(", "))
                }
                other => other.to_string(),
            };
            items.push(format!("{name}={text}"));
        }
    }
    if items.is_empty() {
        return "  (all zero)\n".to_string();
    }
    let mut out = String::new();
    let mut line = String::from(" ");
    for item in items {
        if line.len() > 1 && line.len() + 1 + item.len() > METRICS_LINE_CHARS {
            out.push_str(&line);
            out.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line.push_str(&item);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn format_ns(t_ns: u64) -> String {
    format!("{}.{:03}", t_ns / NS_PER_MS, (t_ns % NS_PER_MS) / 1_000)
}

/// At most 3 decimals, trailing zeros dropped.
fn format_ms(ms: f64) -> String {
    let text = format!("{ms:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests;

/// What the lease service makes of the resolved values, when that differs from what the file
/// says: a TTL raised to the minimum or lowered to the maximum the service enforces, an
/// expiry timer running at a multiple of it, expiry found only at periodic checks.
pub fn effective_notes(lease: &fencesim_scenario::LeaseSpec) -> Vec<String> {
    let preset = lease
        .preset
        .map(|preset| {
            let name = serde_json::to_value(preset).expect("preset serializes");
            format!(" under preset {}", name.as_str().unwrap_or("?"))
        })
        .unwrap_or_default();
    let mut notes = Vec::new();
    let effective = lease.effective_ttl_ms();
    if effective > lease.ttl_ms {
        notes.push(format!(
            "effective: lease.ttl_ms = {} runs as {effective}{preset}: the service raises a TTL \
             below its min_ttl_ms = {}",
            lease.ttl_ms, lease.min_ttl_ms
        ));
    } else if effective < lease.ttl_ms {
        notes.push(format!(
            "effective: lease.ttl_ms = {} runs as {effective}{preset}: the service lowers a TTL \
             above its max_ttl_ms = {}",
            lease.ttl_ms, lease.max_ttl_ms
        ));
    }
    if lease.expiry_factor != 1 {
        notes.push(format!(
            "effective: the service's expiry timer fires {} ms after a grant or renewal \
             (TTL {effective} x expiry_factor {})",
            lease.server_ttl_ms(),
            lease.expiry_factor
        ));
    }
    if lease.expiry_check_ms > 0 {
        notes.push(format!(
            "effective: expiry is found at checks every expiry_check_ms = {} ms, so a lease \
             can outlive its timer by up to that much",
            lease.expiry_check_ms
        ));
    }
    notes
}
