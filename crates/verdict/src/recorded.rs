//! Recorded seeds (a scenario's regressions file, proptest's convention) and what re-running
//! one means: the entry as recorded ([`Entry`], which `fencesim::regressions` reads and
//! writes), its validation, and the judged re-run ([`RecordedRun`]) that is part of a
//! scenario's verdict (`check_report`): a recorded seed that still contradicts the
//! expectation fails the scenario, one that passes now is reported and fails nothing.

use fencesim_check::SeedOutcome;
use fencesim_model::Invariant;
use fencesim_scenario::Scenario;
use serde::{Deserialize, Serialize};

/// The most entries a regressions file may hold (each is re-run by every `check`).
pub const MAX_ENTRIES: usize = 1_000;

/// One recorded seed, as a regressions file holds it (one JSON object per line).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The seed.
    pub seed: u64,
    /// The `--set FIELD=VALUE` overrides it ran under, in order; it is re-run under them.
    #[serde(default)]
    pub set: Vec<String>,
    /// `Scenario::hash` of the scenario it ran (with `set` applied).
    pub scenario_hash: String,
    /// The run's trace hash then.
    pub trace_hash: String,
    /// What it violated (`I1`..`I5`), or `panic` / `runaway`; empty when it contradicted the
    /// expectation only by a `never` condition.
    pub violated: Vec<String>,
}

impl Entry {
    /// The entry for `outcome` of the scenario with hash `scenario_hash` under `set`.
    pub fn of(outcome: &SeedOutcome, scenario_hash: &str, set: &[String]) -> Entry {
        Entry {
            seed: outcome.seed,
            set: set.to_vec(),
            scenario_hash: scenario_hash.to_string(),
            trace_hash: outcome.trace_hash.clone(),
            violated: what_failed(outcome),
        }
    }

    /// What makes two recorded seeds "the same failure" for the per-signature cap: the
    /// overrides they ran under and what they violated.
    pub fn signature(&self) -> (&[String], &[String]) {
        (&self.set, &self.violated)
    }

    /// Checks what a hand edit could break: a seed that can be replayed (`--seeds S..S+1`),
    /// the hashes' shape (16 lowercase hex digits), known failure names, each override
    /// written `FIELD=VALUE`. The error names the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        if self.seed == u64::MAX {
            return Err(format!(
                "seed: expected a seed below {} (so `--seeds S..S+1` can replay it), got {}",
                u64::MAX,
                self.seed
            ));
        }
        for (field, hash) in [
            ("scenario_hash", &self.scenario_hash),
            ("trace_hash", &self.trace_hash),
        ] {
            let hex =
                hash.len() == 16 && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !hex {
                return Err(format!(
                    "{field}: expected 16 lowercase hex digits (as fencesim writes it), got {hash:?}"
                ));
            }
        }
        let known: Vec<String> = Invariant::ALL
            .iter()
            .map(ToString::to_string)
            .chain(["panic".to_string(), "runaway".to_string()])
            .collect();
        if let Some(unknown) = self.violated.iter().find(|name| !known.contains(name)) {
            return Err(format!(
                "violated: expected names among {}, got {unknown:?}",
                known.join(", ")
            ));
        }
        for (k, name) in self.violated.iter().enumerate() {
            if self.violated[..k].contains(name) {
                return Err(format!(
                    "violated: expected each name once, got {name:?} twice"
                ));
            }
        }
        for text in &self.set {
            fencesim_scenario::Override::parse_checked(text)
                .map_err(|expected| format!("set: {expected}"))?;
        }
        Ok(())
    }
}

/// What `outcome` shows as failing: its violated invariants, `panic`, `runaway`.
pub fn what_failed(outcome: &SeedOutcome) -> Vec<String> {
    let mut out: Vec<String> = outcome
        .checked
        .violated()
        .iter()
        .map(|i| i.to_string())
        .collect();
    if outcome.panic.is_some() {
        out.push("panic".into());
    }
    if outcome.runaway {
        out.push("runaway".into());
    }
    out
}

/// What a failing seed did, in one line (`None` for a seed that did not fail): its panic's
/// first line, its runaway, or the invariants it violated with the first proof's message.
pub fn failure_text(scenario: &Scenario, outcome: &SeedOutcome) -> Option<String> {
    if let Some(panic) = &outcome.panic {
        return Some(format!(
            "panicked: {}",
            panic.lines().next().unwrap_or(panic)
        ));
    }
    if outcome.runaway {
        return Some(format!(
            "runaway: exceeded its event budget of {} events and was stopped",
            scenario.event_budget()
        ));
    }
    let first = outcome.checked.violations.first()?;
    Some(format!(
        "violates {} — {}",
        what_failed(outcome).join(", "),
        first.message
    ))
}

/// A recorded seed run again, against its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rerun {
    /// It fails exactly as recorded (same violations, same trace hash).
    Same,
    /// It fails as recorded, but the run differs (the code changed the trace).
    SameFailureOtherTrace,
    /// It no longer fails.
    Passes,
    /// It fails differently (see [`RecordedRun::now`]).
    Differs,
}

/// Compares a re-run `outcome` with the recorded `entry`.
pub fn compare(entry: &Entry, outcome: &SeedOutcome) -> Rerun {
    let now = what_failed(outcome);
    if now.is_empty() {
        Rerun::Passes
    } else if now != entry.violated {
        Rerun::Differs
    } else if outcome.trace_hash == entry.trace_hash {
        Rerun::Same
    } else {
        Rerun::SameFailureOtherTrace
    }
}

/// One recorded seed as `check` re-ran it: part of its scenario's result (and of `--json`),
/// so a shard's re-runs reach `merge`. Field order is the JSON field order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRun {
    /// Its position among the regressions file's entries (0-based): shard K of N re-runs
    /// those whose index is K-1 modulo N.
    pub index: usize,
    /// The seed.
    pub seed: u64,
    /// The overrides it was recorded, and re-run, under.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set: Vec<String>,
    /// What it violated when recorded.
    pub recorded: Vec<String>,
    /// What it violates now.
    pub now: Vec<String>,
    /// How the re-run compares with the record.
    pub rerun: Rerun,
    /// Whether it was recorded under another version of the scenario (another hash).
    pub scenario_changed: bool,
    /// Whether it contradicts the expectation now: its scenario fails while one does.
    pub contradicts: bool,
    /// What failed, in one line; empty when it passes.
    pub detail: String,
}

impl RecordedRun {
    /// `entry` (the `index`-th of its file) re-run as `outcome` of `scenario`, the scenario
    /// loaded with `entry.set`.
    pub fn judge(
        index: usize,
        entry: &Entry,
        scenario: &Scenario,
        outcome: &SeedOutcome,
    ) -> RecordedRun {
        RecordedRun {
            index,
            seed: entry.seed,
            set: entry.set.clone(),
            recorded: entry.violated.clone(),
            now: what_failed(outcome),
            rerun: compare(entry, outcome),
            scenario_changed: entry.scenario_hash != scenario.hash(),
            contradicts: crate::contradicts(&scenario.expect, outcome),
            detail: failure_text(scenario, outcome).unwrap_or_default(),
        }
    }

    /// The command replaying it: the scenario `file` with its overrides.
    pub fn replay_command(&self, file: &str) -> String {
        fencesim_scenario::replay_command_with(file, self.seed, &self.set)
    }

    /// ` (under --set A --set B)`, or nothing when it ran without overrides.
    pub fn under(&self) -> String {
        if self.set.is_empty() {
            String::new()
        } else {
            let sets: Vec<String> = self.set.iter().map(|s| format!("--set {s}")).collect();
            format!(" (under {})", sets.join(" "))
        }
    }

    /// How it compares with its record, in words (the console's and JUnit's).
    pub fn how(&self) -> String {
        match self.rerun {
            Rerun::Same => "still fails the same way (same trace)".to_string(),
            Rerun::SameFailureOtherTrace => {
                "still fails the same way (its trace changed)".to_string()
            }
            Rerun::Passes => "NO LONGER FAILS: passes now (remove it from the file once the \
                              fix is intended)"
                .to_string(),
            Rerun::Differs => format!(
                "NO LONGER FAILS THE SAME WAY: recorded {}, now {}",
                names(&self.recorded),
                names(&self.now)
            ),
        }
    }
}

/// `I3, I4`, or `nothing` for none.
fn names(list: &[String]) -> String {
    if list.is_empty() {
        "nothing".to_string()
    } else {
        list.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use fencesim_model::Invariant::{I3, I4};
    use fencesim_testkit::{outcome, scenario, Spec};

    use super::*;

    fn entry(seed: u64) -> Entry {
        Entry {
            seed,
            set: vec![],
            scenario_hash: "0123456789abcdef".into(),
            trace_hash: "fedcba9876543210".into(),
            violated: vec!["I3".into()],
        }
    }

    #[test]
    fn validation_names_the_field_and_what_was_expected() {
        assert_eq!(entry(3).validate(), Ok(()));
        type Edit = fn(&mut Entry);
        let cases: [(Edit, &str); 6] = [
            (|e| e.seed = u64::MAX, "seed: expected a seed below"),
            (
                |e| e.scenario_hash = "xyz".into(),
                "scenario_hash: expected 16 lowercase hex",
            ),
            (
                |e| e.trace_hash = "0123456789ABCDEF".into(),
                "trace_hash: expected 16 lowercase hex",
            ),
            (
                |e| e.violated = vec!["I9".into()],
                "violated: expected names among I1",
            ),
            (
                |e| e.violated = vec!["I3".into(), "I3".into()],
                "violated: expected each name once",
            ),
            (|e| e.set = vec!["lease.ttl_ms".into()], "set: "),
        ];
        for (edit, expected) in cases {
            let mut bad = entry(3);
            edit(&mut bad);
            let error = bad.validate().unwrap_err();
            assert!(error.starts_with(expected), "{error}");
        }
    }

    #[test]
    fn a_rerun_is_judged_against_the_record_and_the_expectation() {
        let safe = scenario(Spec::default());
        let recorded = entry(3);
        let still = RecordedRun::judge(0, &recorded, &safe, &outcome(3, &[I3], None));
        assert!(still.contradicts);
        assert_eq!(still.rerun, Rerun::SameFailureOtherTrace);
        assert!(still.scenario_changed);
        assert!(still.detail.starts_with("violates I3"), "{}", still.detail);
        let passes = RecordedRun::judge(1, &recorded, &safe, &outcome(3, &[], None));
        assert!(!passes.contradicts);
        assert_eq!(passes.rerun, Rerun::Passes);
        assert!(passes.how().starts_with("NO LONGER FAILS: passes now"));
        // Violating what the expectation allows is no contradiction, however it differs.
        let allows = scenario(Spec {
            fencing: "none",
            expect: "violates = [\"I3\", \"I4\"]",
            ..Spec::default()
        });
        let differs = RecordedRun::judge(2, &recorded, &allows, &outcome(3, &[I3, I4], None));
        assert!(!differs.contradicts);
        assert_eq!(differs.rerun, Rerun::Differs);
        assert_eq!(
            differs.how(),
            "NO LONGER FAILS THE SAME WAY: recorded I3, now I3, I4"
        );
        let mut under = recorded.clone();
        under.set = vec!["storage.fencing=none".into()];
        let run = RecordedRun::judge(0, &under, &safe, &outcome(3, &[I3], None));
        assert_eq!(run.under(), " (under --set storage.fencing=none)");
        assert_eq!(
            run.replay_command("s.toml"),
            "fencesim replay s.toml --seed 3 --set storage.fencing=none"
        );
    }
}
