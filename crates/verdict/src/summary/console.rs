//! The console's summary of a scenario's seeds (`run`, and JUnit's text): the failing
//! seeds, the invariants' counts, the metrics as two aligned tables, the coverage, the state
//! space and the expectation's verdict. Everything is in the JSON; this is what a person reads.

use serde_json::Value;

use super::{dedup_in_order, one_line, plural, state_space, Summary};

/// Key metrics shown in the console summary (all metrics are in the JSON).
const CONSOLE_METRICS: [&str; 10] = [
    "acquisitions",
    "takeovers",
    "renewal_failures",
    "accepted_writes",
    "stale_write_rejections",
    "false_expiries",
    "superseded_side_effects",
    "overlapping_beliefs",
    "takeover_latency_ms",
    "fence_window_ms",
];

/// A short human-readable rendering of a summary for the console.
pub fn render_summary(summary: &Summary) -> String {
    let mut out = String::new();
    let failing: Vec<String> = summary
        .failing_seeds
        .iter()
        .take(20)
        .map(u64::to_string)
        .collect();
    let more = summary.failing_seeds.len().saturating_sub(failing.len());
    out.push_str(&format!(
        "{}: {} runs, {} failing seeds{}{}\n",
        summary.scenario,
        summary.runs,
        summary.failing_seeds.len(),
        if failing.is_empty() {
            String::new()
        } else {
            format!(" [{}", failing.join(", "))
        },
        if failing.is_empty() {
            String::new()
        } else if more > 0 {
            format!(", … {more} more]")
        } else {
            "]".to_string()
        },
    ));
    out.push_str("  seeds violating:");
    for (invariant, count) in &summary.violations {
        out.push_str(&format!(" {invariant}={count}"));
    }
    out.push('\n');
    render_metrics(&mut out, &summary.metrics);
    out.push_str("  coverage:");
    if summary.coverage_required.is_empty() {
        out.push_str(" none required");
    }
    for condition in dedup_in_order(&summary.coverage_required) {
        let seeds = summary.coverage.get(&condition).copied().unwrap_or(0);
        out.push_str(&format!(" {condition}={seeds}"));
    }
    if summary.vacuous {
        out.push_str(" VACUOUS");
    }
    out.push('\n');
    render_state_space(&mut out, &summary.state_space);
    // The detail starts "Met: …" for the JSON reader; the line has said MET already.
    let detail = &summary.expectation_detail;
    out.push_str(&format!(
        "  expectation {}: {} — {}",
        summary.expectation,
        summary.verdict().word(),
        detail.strip_prefix("Met: ").unwrap_or(detail)
    ));
    out
}

/// The console's metrics as two aligned tables: the counters (total over the seeds and the
/// most in one seed), then the timings (count, p50, p99, max in ms; `-` without a sample).
fn render_metrics(out: &mut String, metrics: &Value) {
    let cell = |value: Option<&Value>| match value {
        Some(Value::Number(n)) => n.to_string(),
        _ => "-".to_string(),
    };
    let (mut counters, mut timings) = (Vec::new(), Vec::new());
    for key in CONSOLE_METRICS {
        match metrics.get(key) {
            Some(value) if value.get("count").is_some() => timings.push((key, value)),
            Some(value) => counters.push((key, value)),
            None => {}
        }
    }
    if !counters.is_empty() {
        out.push_str(&format!(
            "  {:<26}{:>10}{:>10}\n",
            "counter", "total", "max/seed"
        ));
        for (key, value) in counters {
            let (total, max) = (cell(value.get("total")), cell(value.get("max_per_seed")));
            out.push_str(&format!("  {key:<26}{total:>10}{max:>10}\n"));
        }
    }
    if !timings.is_empty() {
        out.push_str(&format!(
            "  {:<26}{:>10}{:>10}{:>10}{:>10}\n",
            "timing (ms)", "samples", "p50", "p99", "max"
        ));
        for (key, value) in timings {
            let [count, p50, p99, max] = ["count", "p50", "p99", "max"].map(|f| cell(value.get(f)));
            out.push_str(&format!(
                "  {key:<26}{count:>10}{p50:>10}{p99:>10}{max:>10}\n"
            ));
        }
    }
}

/// Rare states listed on the console (all are in the JSON).
const CONSOLE_RARE_STATES: usize = 5;

/// The state-space lines of the console summary: counts, the saturation curve, rare states.
fn render_state_space(out: &mut String, space: &state_space::StateSpace) {
    if space.states == 0 {
        return;
    }
    let at_least = if space.truncated { "at least " } else { "" };
    let curve: Vec<String> = space
        .saturation
        .iter()
        .map(|b| b.new_states.to_string())
        .collect();
    out.push_str(&format!(
        "  state space: {at_least}{} abstract states, {at_least}{} transitions; new states per {}: {}\n",
        space.states,
        space.transitions,
        plural(space.block_seeds, "seed"),
        curve.join(" ")
    ));
    if space.rare.is_empty() {
        return;
    }
    let more = space.rare.len().saturating_sub(CONSOLE_RARE_STATES);
    out.push_str(&format!(
        "  rare states (< {} % of seeds): {}{}\n",
        state_space::RARE_PERCENT,
        space.rare.len(),
        if more > 0 {
            format!(", the {CONSOLE_RARE_STATES} rarest:")
        } else {
            ":".to_string()
        }
    ));
    for rare in space.rare.iter().take(CONSOLE_RARE_STATES) {
        out.push_str(&format!(
            "    {} (first seed {}): {}\n",
            plural(rare.seeds, "seed"),
            rare.first_seed,
            one_line(&rare.state, 300)
        ));
    }
}
