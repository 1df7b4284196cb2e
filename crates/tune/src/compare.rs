//! Adaptive seeds against a fixed sweep (`fencesim tune --compare-fixed N`): whether the
//! adaptive sweep decided what the fixed one decides, and at what share of its cost.
//!
//! Decisions are equal, per setting, when both sweeps agree on whether it meets the targets
//! and on each target's decision — except for a setting the adaptive sweep retired because it
//! failed a target (it stops measuring a setting that cannot meet them): there every target
//! it found failed must fail in the fixed sweep too, and its other targets, not measured
//! further, are not compared. The recommendations must be the same setting.

use crate::report::{Decision, SettingResult, TuneReport};

/// The share of the fixed sweep's CPU the adaptive one may use (issue target: 20 %).
pub const CPU_SHARE_TARGET: f64 = 0.20;

/// One setting in both sweeps.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The setting's label.
    pub label: String,
    /// Seeds the adaptive sweep ran for it.
    pub adaptive_seeds: u64,
    /// The adaptive sweep's decisions, in words.
    pub adaptive: String,
    /// The fixed sweep's decisions, in words.
    pub fixed: String,
    /// Whether they are the same decisions (see the module docs).
    pub equal: bool,
}

/// Both sweeps' decisions, setting by setting, and their recommendations.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Per setting.
    pub rows: Vec<Row>,
    /// The adaptive recommendation's label, or `none`.
    pub adaptive_pick: String,
    /// The fixed recommendation's label, or `none`.
    pub fixed_pick: String,
    /// Every row equal and the same recommendation.
    pub equal: bool,
}

fn decisions(s: &SettingResult) -> [Decision; 3] {
    [s.safety, s.false_expiry, s.outage]
}

fn text(s: &SettingResult, retired: bool) -> String {
    let d = decisions(s);
    format!(
        "safety {:?}, false expiries {:?}, outage {:?} => {}{}",
        d[0],
        d[1],
        d[2],
        if s.meets_targets {
            "meets"
        } else {
            "does not meet"
        },
        if retired {
            " (retired after failing a target)"
        } else {
            ""
        }
    )
}

/// Compares `adaptive` with `fixed`, two reports of the same settings.
pub fn compare(adaptive: &TuneReport, fixed: &TuneReport) -> Comparison {
    let mut rows = Vec::new();
    for (a, f) in adaptive.settings.iter().zip(&fixed.settings) {
        let (da, df) = (decisions(a), decisions(f));
        let retired = da.contains(&Decision::Fails) && a.runs < f.runs;
        let equal = if retired {
            !f.meets_targets
                && da
                    .iter()
                    .zip(&df)
                    .all(|(x, y)| *x != Decision::Fails || *y == Decision::Fails)
        } else {
            da == df && a.meets_targets == f.meets_targets
        };
        rows.push(Row {
            label: a.label(),
            adaptive_seeds: a.runs,
            adaptive: text(a, retired),
            fixed: text(f, false),
            equal,
        });
    }
    let pick = |r: &TuneReport| {
        r.recommendation
            .setting
            .map_or("none".to_string(), |i| r.settings[i].label())
    };
    let same_pick = adaptive.recommendation.setting == fixed.recommendation.setting;
    Comparison {
        equal: same_pick
            && rows.iter().all(|r| r.equal)
            && adaptive.settings.len() == fixed.settings.len(),
        rows,
        adaptive_pick: pick(adaptive),
        fixed_pick: pick(fixed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{FieldValue, Pick};

    fn setting(runs: u64, d: [Decision; 3]) -> SettingResult {
        SettingResult {
            values: vec![FieldValue {
                field: "lease.ttl_ms".into(),
                value: runs.to_string(),
            }],
            runs,
            safety: d[0],
            false_expiry: d[1],
            outage: d[2],
            meets_targets: d
                .iter()
                .all(|x| matches!(x, Decision::Meets | Decision::NotAsked)),
            ..SettingResult::default()
        }
    }

    fn report(settings: Vec<SettingResult>, pick: Option<usize>) -> TuneReport {
        TuneReport {
            settings,
            recommendation: Pick {
                setting: pick,
                reason: String::new(),
            },
            ..TuneReport::default()
        }
    }

    use Decision::{Fails, Meets, NotAsked, Open};

    #[test]
    fn a_retired_setting_needs_only_its_failures_confirmed() {
        // Retired at 200 seeds on an unsafe seed, its false-expiry target still open; the
        // fixed sweep decides that target, and the setting still fails safety.
        let a = report(vec![setting(200, [Fails, Open, NotAsked])], None);
        let f = report(vec![setting(2000, [Fails, Meets, NotAsked])], None);
        let c = compare(&a, &f);
        assert!(c.equal, "{c:?}");
        assert!(c.rows[0].adaptive.contains("retired"));
        // A failure the fixed sweep does not confirm is a different decision.
        let f = report(vec![setting(2000, [Meets, Fails, NotAsked])], None);
        assert!(!compare(&a, &f).equal);
    }

    #[test]
    fn any_other_difference_or_another_pick_is_not_equal() {
        let a = report(
            vec![
                setting(200, [Meets, Meets, NotAsked]),
                setting(2000, [Meets, Open, NotAsked]),
            ],
            Some(0),
        );
        let f = report(
            vec![
                setting(2000, [Meets, Meets, NotAsked]),
                setting(2000, [Meets, Open, NotAsked]),
            ],
            Some(0),
        );
        assert!(compare(&a, &f).equal);
        let mut other_pick = f.clone();
        other_pick.recommendation.setting = Some(1);
        let c = compare(&a, &other_pick);
        assert!(!c.equal);
        assert_eq!(c.adaptive_pick, "lease.ttl_ms=200");
        // Open where the fixed sweep decided: not equal (the setting was not retired).
        let mut decided = f.clone();
        decided.settings[1] = setting(2000, [Meets, Meets, NotAsked]);
        assert!(!compare(&a, &decided).rows[1].equal);
    }
}
