//! The regressions file (proptest's convention): seeds that once contradicted a scenario's
//! expectation, recorded next to the scenario (`foo.toml` → `foo.regressions`) by
//! `fencesim run --record-failures` and `fencesim soak`, committed, and run first by
//! `fencesim check`, which says when a recorded seed no longer fails the same way.
//!
//! One JSON object per line (`#` lines are comments):
//! `{"seed":17,"set":["lease.ttl_ms=8000"],"scenario_hash":"…","trace_hash":"…","violated":["I3","I4"]}`
//! — the seed, the `--set` overrides it ran under (a recorded seed is re-run only under the
//! same overrides), the scenario's hash and the run's trace hash then, and what it violated
//! (`panic` / `runaway` for a seed that did not finish). At most [`MAX_ENTRIES`] entries and
//! [`MAX_BYTES`] per file.

use std::path::{Path, PathBuf};

use fencesim_check::SeedOutcome;
use serde::{Deserialize, Serialize};

/// The most entries a regressions file may hold (each is re-run by every `check`).
pub const MAX_ENTRIES: usize = 1_000;
/// The largest regressions file read (bytes).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// One recorded seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The seed.
    pub seed: u64,
    /// The `--set FIELD=VALUE` overrides it ran under, in order.
    #[serde(default)]
    pub set: Vec<String>,
    /// `Scenario::hash` then.
    pub scenario_hash: String,
    /// The run's trace hash then.
    pub trace_hash: String,
    /// What it violated (`I1`..`I5`), or `panic` / `runaway`.
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

/// The regressions file of the scenario file `scenario`: `foo.toml` → `foo.regressions`.
pub fn path_for(scenario: &Path) -> PathBuf {
    scenario.with_extension("regressions")
}

/// Reads the entries of `path`; a missing file has none. A malformed line is an error naming
/// the file, the line and what was expected.
pub fn load(path: &Path) -> Result<Vec<Entry>, String> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let bytes = fencesim_scenario::input::read_limited(path, MAX_BYTES)
        .map_err(|e| format!("{}: {}", path.display(), e.expected("a regressions file")))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: expected UTF-8 text", path.display()))?;
    let mut entries = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let entry: Entry = serde_json::from_str(line).map_err(|e| {
            format!(
                "{}:{}: expected a recorded seed as one JSON object \
                 {{\"seed\", \"set\", \"scenario_hash\", \"trace_hash\", \"violated\"}}: {e}",
                path.display(),
                k + 1
            )
        })?;
        entries.push(entry);
        if entries.len() > MAX_ENTRIES {
            return Err(format!(
                "{}: expected at most {MAX_ENTRIES} recorded seeds",
                path.display()
            ));
        }
    }
    Ok(entries)
}

/// Adds the `new` entries not already recorded (same seed and overrides) to `path`, writing
/// the whole file atomically; returns how many were added.
pub fn record(path: &Path, scenario_file: &str, new: &[Entry]) -> Result<usize, String> {
    let mut entries = load(path)?;
    let before = entries.len();
    for entry in new {
        if !entries
            .iter()
            .any(|e| e.seed == entry.seed && e.set == entry.set)
        {
            entries.push(entry.clone());
        }
    }
    let added = entries.len() - before;
    if added == 0 {
        return Ok(0);
    }
    if entries.len() > MAX_ENTRIES {
        return Err(format!(
            "{}: would hold {} recorded seeds, expected at most {MAX_ENTRIES}: fix or prune \
             the recorded failures first",
            path.display(),
            entries.len()
        ));
    }
    let mut text = format!(
        "# fencesim regressions of {scenario_file}: seeds that contradicted its expectation,\n\
         # run first by `fencesim check`. Commit this file. One JSON object per line.\n"
    );
    for entry in &entries {
        text.push_str(&serde_json::to_string(entry).expect("entries serialize"));
        text.push('\n');
    }
    crate::fs::write_atomic(path, &text)
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(added)
}

/// A recorded seed run again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rerun {
    /// It fails exactly as recorded (same violations, same trace hash).
    Same,
    /// It fails as recorded, but the run differs (the code changed the trace).
    SameFailureOtherTrace,
    /// It no longer fails.
    Passes,
    /// It fails differently: what it violates now.
    Differs(Vec<String>),
}

/// Compares a re-run `outcome` with the recorded `entry`.
pub fn compare(entry: &Entry, outcome: &SeedOutcome) -> Rerun {
    let now = what_failed(outcome);
    if now.is_empty() {
        Rerun::Passes
    } else if now != entry.violated {
        Rerun::Differs(now)
    } else if outcome.trace_hash == entry.trace_hash {
        Rerun::Same
    } else {
        Rerun::SameFailureOtherTrace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seed: u64) -> Entry {
        Entry {
            seed,
            set: vec![],
            scenario_hash: "h".into(),
            trace_hash: "t".into(),
            violated: vec!["I3".into()],
        }
    }

    #[test]
    fn record_adds_only_new_seeds_and_load_reads_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.regressions");
        assert_eq!(load(&path).unwrap(), vec![]);
        assert_eq!(record(&path, "s.toml", &[entry(3), entry(5)]).unwrap(), 2);
        assert_eq!(record(&path, "s.toml", &[entry(5), entry(7)]).unwrap(), 1);
        let mut other = entry(5);
        other.set = vec!["lease.ttl_ms=1".into()];
        assert_eq!(record(&path, "s.toml", &[other.clone()]).unwrap(), 1);
        let back = load(&path).unwrap();
        assert_eq!(back, vec![entry(3), entry(5), entry(7), other]);
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("# fencesim regressions"));
    }

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.regressions");
        std::fs::write(&path, "# c\n{\"seed\":1,\"scenario_hash\":\"h\",\"trace_hash\":\"t\",\"violated\":[]}\n{\"seed\":\"x\"}\n").unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("s.regressions:3:"), "{e}");
        assert_eq!(
            path_for(Path::new("a/b.toml")),
            PathBuf::from("a/b.regressions")
        );
    }
}
