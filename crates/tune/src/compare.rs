//! Adaptive seeds against a fixed sweep (`fencesim tune --compare-fixed N`): whether the
//! adaptive sweep decided what the fixed one decides, and at what share of its cost.
//!
//! Decisions are equal, per setting, when both sweeps agree on whether it meets the targets
//! and on each target's decision — except for a setting the adaptive sweep retired because it
//! failed a target (it stops measuring a setting that cannot meet them): there every target
//! it found failed must fail in the fixed sweep too, and its other targets, not measured
//! further, are not compared. The recommendations must be the same setting.

use fencesim_scenario::SeedRange;
use fencesim_sim::runner::Components;

use crate::report::{Decision, SettingResult, TuneReport};
use crate::Sweep;

/// The share of the fixed sweep's CPU the adaptive one may use (issue target: 20 %).
pub const CPU_SHARE_TARGET: f64 = 0.20;

/// The most seeds a [`verify`] or a [`compare_fixed`] may run per setting.
pub const MAX_COMPARE_SEEDS: u64 = 100_000;

impl Sweep {
    /// The same sweep with a fixed first round of `n` seeds from the same start.
    pub fn clone_with_seeds(&self, n: u64) -> Sweep {
        let mut out = self.clone();
        out.seeds.first = SeedRange {
            start: self.seeds.first.start,
            end: self.seeds.first.start.saturating_add(n.max(1)),
        };
        out.seeds.max_seeds = n.max(1);
        out
    }

    /// The sweep of setting `i` alone (with its outage re-runs).
    pub fn only_setting(&self, i: usize) -> Sweep {
        let mut out = self.clone();
        out.settings = vec![self.settings[i].clone()];
        for o in &mut out.outages {
            o.scenarios = vec![o.scenarios[i].clone()];
        }
        out
    }
}

/// A fixed sweep of `n` seeds per setting (`--compare-fixed N`): its report, and its
/// decisions next to the `adaptive` sweep's ([`compare`]). `on_done` as for [`crate::run`].
pub fn compare_fixed(
    sweep: &Sweep,
    adaptive: &TuneReport,
    n: u64,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> (TuneReport, Comparison) {
    let mut fixed = sweep.clone_with_seeds(n);
    fixed.seeds.adaptive = false;
    let report = crate::run(&fixed, jobs, components, on_done);
    let comparison = compare(adaptive, &report);
    (report, comparison)
}

/// Whether the adaptive sweep met its target: the same decisions as the fixed sweep at
/// most [`CPU_SHARE_TARGET`] of its cost (`share`: adaptive over fixed, CPU or runs).
pub fn target_met(comparison: &Comparison, share: f64) -> bool {
    comparison.equal && share <= CPU_SHARE_TARGET
}

/// The recommendation re-run over more seeds (`--verify`).
#[derive(Clone, Debug)]
pub struct Verification {
    /// The recommended setting's index in the sweep.
    pub setting: usize,
    /// Seeds it ran: 10× the first round's, at most [`MAX_COMPARE_SEEDS`].
    pub seeds: u64,
    /// The re-run's report: one setting.
    pub report: TuneReport,
}

impl Verification {
    /// Whether the recommendation still meets the targets over the verification's seeds.
    pub fn holds(&self) -> bool {
        self.report.settings[0].meets_targets
    }
}

/// Runs `report`'s recommendation over 10× the first round's seeds (fixed); `None` when there
/// is no recommendation. `on_done` as for [`crate::run`].
pub fn verify(
    sweep: &Sweep,
    report: &TuneReport,
    jobs: usize,
    components: &Components,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Option<Verification> {
    let setting = report.recommendation.setting?;
    let seeds = (sweep.seeds.first.len() * 10).min(MAX_COMPARE_SEEDS);
    let mut one = sweep.only_setting(setting).clone_with_seeds(seeds);
    one.seeds.adaptive = false;
    Some(Verification {
        setting,
        seeds,
        report: crate::run(&one, jobs, components, on_done),
    })
}

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

    #[test]
    fn the_target_needs_equal_decisions_at_no_more_than_the_cpu_share() {
        let a = report(vec![setting(200, [Meets, Meets, NotAsked])], Some(0));
        let f = report(vec![setting(2000, [Meets, Meets, NotAsked])], Some(0));
        let equal = compare(&a, &f);
        assert!(target_met(&equal, CPU_SHARE_TARGET));
        assert!(!target_met(&equal, CPU_SHARE_TARGET + 0.01));
        let other = report(vec![setting(2000, [Meets, Meets, NotAsked])], None);
        assert!(!target_met(&compare(&a, &other), 0.01));
    }
}
