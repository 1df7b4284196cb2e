//! `tune.md` and the one-line texts the console shares with it: the recommendation and its
//! neighbours, margins, the rules of thumb and where they disagree, a table of every setting.

use super::*;

/// `2.04 [1.41, 2.85] (34 in 16.67 h)`.
pub fn rate_text(r: &Rate) -> String {
    if r.exposure_h <= 0.0 {
        return format!("{} in no fault exposure", r.count);
    }
    format!(
        "{} [{}, {}] ({} in {} h)",
        r.per_hour, r.low, r.high, r.count, r.exposure_h
    )
}

/// `p50 / p99 [low, high] (n)`, saying when there are too few samples for a bound.
pub fn quantiles_text(q: &Quantiles) -> String {
    match (q.p50, q.p99) {
        (Some(p50), Some(p99)) => {
            let bound = match (q.p99_low, q.p99_high) {
                (Some(l), Some(h)) => format!(" [{l}, {h}]"),
                (Some(l), None) => format!(" [{l}, too few samples for a p99 upper bound]"),
                _ => " [too few samples for a p99 bound]".to_string(),
            };
            format!("{p50} / {p99}{bound} (n={})", q.count)
        }
        _ => "no sample (n=0)".to_string(),
    }
}

fn decide_text(report: &TuneReport) -> &'static str {
    match report.targets.decide {
        DecideRule::UpperBound => {
            "a setting meets a target only when the upper end of its 95 % interval does"
        }
        DecideRule::Mean => {
            "--decide mean: the point estimate is compared with each target (intervals shown \
             but not used; the old rule)"
        }
    }
}

/// The Markdown report: the recommendation and its neighbours, margins, the rules of thumb
/// and where they disagree, then a table of every setting.
pub fn tune_markdown(report: &TuneReport) -> String {
    let mut out = format!("# Tuning `{}`\n\n", report.scenario);
    push_runs(&mut out, report);
    push_profile_and_targets(&mut out, report);
    push_recommendation(&mut out, report);
    push_rules_of_thumb(&mut out, report);
    push_settings(&mut out, report);
    out
}

/// The seeds and runs, the grid (`--vary`, `--set`) and the settings it skipped.
fn push_runs(out: &mut String, report: &TuneReport) {
    let sp = &report.seed_plan;
    let same = if report.varied.is_empty() {
        ""
    } else {
        " (one common-random-number sequence: every setting runs the same seeds and fault \
         plans, as far as it runs)"
    };
    out.push_str(&format!(
        "Seeds: {}{same}; {} simulation runs in {} round(s){}. Base scenario hash `{}`.\n",
        if sp.adaptive {
            format!(
                "adaptive, first round `{}`, at most {} per setting",
                sp.first_round, sp.max_seeds
            )
        } else {
            format!("fixed `{}`", sp.first_round)
        },
        sp.runs,
        sp.rounds,
        if sp.adaptive {
            " (more seeds for settings whose decision was open and for the settings either \
             side of the safety boundary)"
        } else {
            ""
        },
        report.base_hash
    ));
    for v in &report.varied {
        out.push_str(&format!("- `--vary {v}`\n"));
    }
    for o in &report.overrides {
        out.push_str(&format!("- `--set {o}`\n"));
    }
    if !report.skipped.is_empty() {
        out.push_str(&format!(
            "\n{} invalid setting(s) of the grid skipped:\n",
            report.skipped.len()
        ));
        for s in &report.skipped {
            out.push_str(&format!("- {s}\n"));
        }
    }
}

/// The fault profile as measured (nominal against realized), the targets and the ranking.
fn push_profile_and_targets(out: &mut String, report: &TuneReport) {
    let p = &report.profile;
    out.push_str(&format!(
        "\nFault profile over the first round's seeds: {} pauses (longest {} ms; longest stall \
         {} ms, a node's pauses back to back), {} worker crashes, longest outage {} ms, round \
         trip {} ms.\n",
        p.pauses,
        p.longest_pause_ms,
        p.longest_stall_ms,
        p.crashes,
        p.longest_outage_ms,
        p.round_trip_ms
    ));
    if !report.fault_counts.is_empty() {
        out.push_str(
            "\n| fault kind | nominal (profile) | realized (histories) |\n|---|---|---|\n",
        );
        for f in &report.fault_counts {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                f.kind,
                round(f.nominal),
                f.realized
            ));
        }
    }
    for a in &report.outage_added {
        out.push_str(&format!("\nAdded for `--survive-outage-ms`: {a}\n"));
    }
    let t = &report.targets;
    out.push_str(&format!(
        "\nTargets: safety (no I3/I4 violation, no panic, no runaway seed); false expiries per \
         hour of fault exposure ≤ {}; survive an outage of {}. Decisions: {}. Rates are per \
         hour of fault exposure (the fault window summed over seeds; the denominator is \
         printed) with exact Poisson (Garwood) 95 % intervals; shares of seeds with \
         Clopper–Pearson 95 % intervals; quantiles with distribution-free order-statistic \
         95 % intervals.\n\n",
        t.max_false_expiry_per_hour
            .map_or("(none)".to_string(), |x| x.to_string()),
        t.survive_outage_ms
            .map_or("(none)".to_string(), |x| format!("{x} ms")),
        decide_text(report),
    ));
    out.push_str(&format!(
        "Ranking: the lowest {}; {}.\n\n",
        report.ranking.name(),
        TIE_BREAK
    ));
}

/// `## Recommendation`: the pick, its neighbours, the safety boundary and the warnings.
fn push_recommendation(out: &mut String, report: &TuneReport) {
    out.push_str("## Recommendation\n\n");
    match report.recommendation.setting {
        Some(i) => out.push_str(&format!(
            "**{}** — {}\n\n",
            report.settings[i].label(),
            report.recommendation.reason
        )),
        None => out.push_str(&format!("None — {}\n\n", report.recommendation.reason)),
    }
    for u in &report.unjudged {
        out.push_str(&format!("> not judged: {u}\n\n"));
    }
    if !report.neighbours.is_empty() {
        out.push_str("Neighbours:\n");
        for &i in &report.neighbours {
            let s = &report.settings[i];
            out.push_str(&format!("- {}: {}\n", s.label(), s.verdict));
        }
        out.push('\n');
    }
    if !report.margins.is_empty() {
        out.push_str(
            "Safety boundary along each varied field (on the line through the recommendation):\n",
        );
        for m in &report.margins {
            out.push_str(&format!(
                "- {}: largest unsafe {}, smallest safe {}, recommended {}{}\n",
                m.field,
                m.largest_unsafe.as_deref().unwrap_or("(none in the grid)"),
                m.smallest_safe.as_deref().unwrap_or("(none)"),
                m.recommended.as_deref().unwrap_or("(none)"),
                m.distance
                    .map_or(String::new(), |d| format!(", {d} above the largest unsafe"))
            ));
        }
        out.push('\n');
    }
    for w in &report.warnings {
        out.push_str(&format!("> warning: {w}\n\n"));
    }
    push_ranked(out, report);
}

/// The settings meeting the targets as the ranking compared them: on the seeds they all ran.
fn push_ranked(out: &mut String, report: &TuneReport) {
    let ranked: Vec<(usize, &Ranked)> = report
        .settings
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.ranked.as_ref().map(|r| (i, r)))
        .collect();
    let Some(seeds) = ranked.first().map(|(_, r)| r.seeds) else {
        return;
    };
    out.push_str(&format!(
        "Ranked on the {seeds} seeds every setting meeting the targets ran ({}; ● the \
         recommendation, = tied within the evidence with the lowest p99):\n\n\
         | setting | {} p50 / p99 [95 % interval of the p99] | false expiries/h | false \
         expiries + stand-downs/h |\n|---|---|---|---|\n",
        report.ranking.name(),
        report.ranking.short()
    ));
    for (i, r) in ranked {
        let mark = if report.recommendation.setting == Some(i) {
            " ●"
        } else if report.tied.contains(&i) {
            " ="
        } else {
            ""
        };
        out.push_str(&format!(
            "| {}{mark} | {} | {} | {} |\n",
            report.settings[i].label(),
            quantiles_text(&r.quantiles),
            rate_text(&r.false_expiries),
            rate_text(&r.disruption)
        ));
    }
    out.push('\n');
}

/// `## Rules of thumb`: their pick and where the simulation disagrees with them.
fn push_rules_of_thumb(out: &mut String, report: &TuneReport) {
    out.push_str("## Rules of thumb\n\n");
    match report.rule_of_thumb.setting {
        Some(i) => out.push_str(&format!(
            "They pick **{}** — {}\n\n",
            report.settings[i].label(),
            report.rule_of_thumb.reason
        )),
        None => out.push_str(&format!(
            "They pick nothing — {}\n\n",
            report.rule_of_thumb.reason
        )),
    }
    if report.disagreements.is_empty() {
        out.push_str("The simulation agrees with the rules on every setting.\n\n");
    } else {
        out.push_str("Where the simulation disagrees with the rules:\n");
        for d in &report.disagreements {
            out.push_str(&format!("- {d}\n"));
        }
        out.push('\n');
    }
}

/// `## Settings`: one row per setting.
fn push_settings(out: &mut String, report: &TuneReport) {
    out.push_str("## Settings\n\n");
    out.push_str(
        "Rates per hour of fault exposure [95 % Garwood interval] (count in exposure); \
         unsafe seeds with the 95 % Clopper–Pearson interval on the share; latencies as \
         p50 / p99 [95 % interval of the p99] (n samples); takeovers counted by cause.\n\n",
    );
    out.push_str(
        "| setting | seeds | unsafe seeds | false expiries/h | stand-downs/h | takeovers | \
         crash recovery p50/p99 ms | stall recovery p50/p99 ms | takeover latency p50/p99 ms | \
         outage survival | unavailability | renewals/lease/s | verdict |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (i, s) in report.settings.iter().enumerate() {
        let mark = if report.recommendation.setting == Some(i) {
            " ★"
        } else {
            ""
        };
        let outage = if s.outage_runs.is_empty() {
            "–".to_string()
        } else {
            s.outage_runs
                .iter()
                .map(|o| format!("{}: failed {}", o.form, o.failed_seeds.text()))
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.push_str(&format!(
            "| {}{mark} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            s.label(),
            s.runs,
            s.unsafe_seeds.text(),
            rate_text(&s.false_expiries),
            rate_text(&s.stand_downs),
            s.takeovers.text(),
            quantiles_text(&s.recovery_after_crash_ms),
            quantiles_text(&s.recovery_after_stall_ms),
            quantiles_text(&s.takeover_ms),
            outage,
            s.unavailability.mean,
            s.renewals_per_lease_per_s.mean,
            s.verdict,
        ));
    }
}
