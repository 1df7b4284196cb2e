//! `merge` verifies what it can of each shard instead of trusting it: a hand-edited report is
//! refused with exit 2 (hardening round 3), and the unedited shards still merge.

mod util;

use std::path::Path;

use serde_json::Value;
use util::fencesim;

/// Shards 1/2 and 2/2 of the textbook scenario over seeds 0..4 (every seed violates I3, I4),
/// from the real binary, as JSON values.
fn shards(dir: &Path) -> (Value, Value) {
    let text = std::fs::read_to_string(util::catalogue("gc-pause-textbook-none"))
        .unwrap()
        .replace("seeds = \"0..50\"", "seeds = \"0..4\"");
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let mut out = Vec::new();
    for (shard, file) in [("1/2", "a.json"), ("2/2", "b.json")] {
        let (code, stdout, stderr) =
            fencesim(&["check", "s.toml", "--shard", shard, "--json", file], dir);
        assert_eq!(code, 0, "{stdout}{stderr}");
        out.push(serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap());
    }
    let b = out.pop().unwrap();
    (out.pop().unwrap(), b)
}

fn merge(dir: &Path, a: &Value, b: &Value) -> (i32, String) {
    std::fs::write(dir.join("a.json"), serde_json::to_string(a).unwrap()).unwrap();
    std::fs::write(dir.join("b.json"), serde_json::to_string(b).unwrap()).unwrap();
    let (code, _, stderr) = fencesim(&["merge", "a.json", "b.json", "--json", "m.json"], dir);
    (code, stderr)
}

#[test]
fn hand_edited_shards_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = shards(dir.path());
    let (code, stderr) = merge(dir.path(), &a, &b);
    assert_eq!(code, 0, "the unedited shards merge: {stderr}");
    std::fs::remove_file(dir.path().join("m.json")).unwrap();

    type Edit = fn(&mut Value);
    let edits: [(&str, Edit, &str); 9] = [
        (
            "a coverage count above the runs",
            |r| r["scenarios"][0]["state"]["stats"]["coverage"]["takeover"] = 9.into(),
            "expected at most runs (2) seeds, got 9",
        ),
        (
            "a seed listed twice",
            |r| {
                r["scenarios"][0]["state"]["stats"]["violating"]["I3"] =
                    serde_json::json!([0, 0, 2])
            },
            "each once",
        ),
        (
            "a violating seed left out of failing",
            |r| r["scenarios"][0]["state"]["stats"]["failing"] = serde_json::json!([0]),
            "state.stats.failing",
        ),
        (
            "failures emptied while the counts list violating seeds",
            |r| r["scenarios"][0]["failures"] = serde_json::json!([]),
            "expected the outcome of seed 0 in full",
        ),
        (
            "a shard label that does not match its seeds",
            |r| r["shard"] = "2/2".into(),
            "expected only the seeds of shard 2/2",
        ),
        (
            "an expectation edited in one shard",
            |r| {
                r["scenarios"][0]["scenario"]["expect"]["outcome"] =
                    serde_json::json!({"violates": ["I3"]})
            },
            "was the report edited?",
        ),
        (
            "an abstract state no run can reach (a made-up name)",
            |r| {
                r["scenarios"][0]["state"]["state_space"]["states"]
                    ["[lease=seized store=below inflight=none]"] =
                    serde_json::json!({"seeds": 1, "first_seed": 0})
            },
            "lease=seized",
        ),
        (
            "a transition to a state the shard does not list",
            |r| {
                let transitions = &mut r["scenarios"][0]["state"]["state_space"]["transitions"];
                let (key, reach) = transitions
                    .as_object()
                    .unwrap()
                    .iter()
                    .next()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .unwrap();
                let edited = format!("{}>0123456789abcdef", key.split('>').next().unwrap());
                transitions[edited.as_str()] = reach;
            },
            "states the report lists",
        ),
        (
            "a seed outside the range of 64-bit seeds",
            |r| r["scenarios"][0]["state"]["seeds"][0]["first"] = serde_json::json!(1e20),
            "a.json",
        ),
    ];
    let mut failures = Vec::new();
    for (what, edit, expected) in edits {
        let mut edited = a.clone();
        edit(&mut edited);
        assert_ne!(edited, a, "{what}: the edit changed nothing");
        let (code, stderr) = merge(dir.path(), &edited, &b);
        if code != 2 || !stderr.contains(expected) {
            failures.push(format!("{what}: exit {code}, stderr {stderr}"));
        }
        assert!(!dir.path().join("m.json").exists(), "{what}: wrote m.json");
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Issue 31 item 7: `merge` refuses shards of different schema versions, naming both files
/// and versions, and a report from before check reports had one.
#[test]
fn shards_of_another_schema_version_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let (a, mut b) = shards(dir.path());
    assert_eq!(a["schema_version"], 1);
    assert_eq!(
        a["producer"].as_str().unwrap(),
        fencesim_model::version::PRODUCER
    );
    b["schema_version"] = 2.into();
    let (code, stderr) = merge(dir.path(), &a, &b);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "the reports have different schema versions: a.json has schema_version 1 (fencesim "
        ) && stderr.contains("b.json has schema_version 2"),
        "{stderr}"
    );
    b.as_object_mut().unwrap().remove("schema_version");
    let (code, stderr) = merge(dir.path(), &a, &b);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("b.json has no schema_version"), "{stderr}");
    assert!(!dir.path().join("m.json").exists());
}
