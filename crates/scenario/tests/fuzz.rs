//! Fuzzing the scenario loader with proptest: cargo-fuzz needs a nightly
//! toolchain, which this project does not use, so the generator is a proptest strategy and the
//! target runs under `cargo test`.
//!
//! Inputs: the catalogue's own files mutated (lines deleted, duplicated or swapped, values
//! replaced by other types and extreme numbers, truncation, random bytes inserted), and
//! arbitrary text. The property, for every input: `parse_str` never panics; it returns either
//! a scenario (whose fault plan for its first seed can be drawn, and which renders back to a
//! file that parses to the same scenario) or an error naming the file, with a line for text
//! that is not TOML.
//!
//! `cargo test -p fencesim-scenario --test fuzz` runs 256 cases per target with a fixed seed
//! (seconds, in CI). The long, nightly-style run: `FENCESIM_FUZZ_CASES=200000 cargo test
//! --release -p fencesim-scenario --test fuzz` (`FENCESIM_FUZZ_SEED=N` for another stream).
//! Every input in `tests/fuzz-corpus/` is checked the same way on every run: put a crash
//! found by a long run there (the failure message prints the shrunk input).

use std::{
    panic::{catch_unwind, AssertUnwindSafe},
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

use fencesim_scenario::{parse_str, plan, scenario_toml, ScenarioError};
use proptest::{
    prelude::*,
    test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner},
};

const FILE: &str = "fuzz.toml";

fn catalogue() -> Vec<String> {
    fencesim_testkit::catalogue_files("")
        .iter()
        .map(|path| std::fs::read_to_string(path).expect("a catalogue file"))
        .collect()
}

/// Values of every type and the extremes the limits must reject.
const VALUES: &[&str] = &[
    "\"text\"",
    "\"\"",
    "-1",
    "0",
    "1",
    "-0.0",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "864000000",
    "true",
    "[]",
    "[1, \"a\"]",
    "[\"worker-99\"]",
    "{}",
    "{ dist = \"lognormal\", median = 1e-300, p99 = 1e300 }",
    "{ dist = \"uniform\", min = 5, max = 1 }",
    "{ dist = \"fixed\", value = 0 }",
    "{ dist = \"nope\" }",
    "\"0..18446744073709551615\"",
    "\"5..1\"",
    "\"worker-0\"",
    "1979-05-27T07:32:00Z",
    "'''\nmulti\n'''",
];

#[derive(Clone, Debug)]
enum Op {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    ReplaceValue(usize, usize),
    ExtremeNumber(usize, usize),
    Truncate(usize),
    InsertBytes(usize, Vec<u8>),
    AppendFrom(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<usize>().prop_map(Op::DeleteLine),
        any::<usize>().prop_map(Op::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::SwapLines(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::ReplaceValue(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::ExtremeNumber(a, b)),
        any::<usize>().prop_map(Op::Truncate),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(a, b)| Op::InsertBytes(a, b)),
        any::<usize>().prop_map(Op::AppendFrom),
    ]
}

fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &str, op: &Op, files: &[String]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match op {
        Op::DeleteLine(i) => {
            if !lines.is_empty() {
                lines.remove(i % n);
            }
        }
        Op::DuplicateLine(i) => {
            if let Some(line) = lines.get(i % n).cloned() {
                lines.insert(i % n, line);
            }
        }
        Op::SwapLines(a, b) => {
            if !lines.is_empty() {
                lines.swap(a % n, b % n);
            }
        }
        Op::ReplaceValue(i, v) => {
            let with_value: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].contains(" = ") && !lines[k].starts_with('#'))
                .collect();
            if !with_value.is_empty() {
                let k = with_value[i % with_value.len()];
                let key = lines[k].split(" = ").next().unwrap_or("").to_string();
                lines[k] = format!("{key} = {}", VALUES[v % VALUES.len()]);
            }
        }
        Op::ExtremeNumber(i, v) => {
            let extremes = [
                "0",
                "-1",
                "18446744073709551615",
                "9223372036854775807",
                "1e300",
            ];
            let numbered: Vec<usize> = (0..lines.len())
                .filter(|&k| lines[k].chars().any(|c| c.is_ascii_digit()))
                .collect();
            if !numbered.is_empty() {
                let k = numbered[i % numbered.len()];
                let line = &lines[k];
                let start = line.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
                let end = line[start..]
                    .find(|c: char| !(c.is_ascii_digit() || c == '_'))
                    .map_or(line.len(), |e| start + e);
                lines[k] = format!(
                    "{}{}{}",
                    &line[..start],
                    extremes[v % extremes.len()],
                    &line[end..]
                );
            }
        }
        Op::Truncate(at) => {
            let joined = lines.join("\n");
            let cut = floor_char(&joined, at % (joined.len() + 1));
            return joined[..cut].to_string();
        }
        Op::InsertBytes(at, bytes) => {
            let joined = lines.join("\n");
            let cut = floor_char(&joined, at % (joined.len() + 1));
            let inserted = String::from_utf8_lossy(bytes);
            return format!("{}{inserted}{}", &joined[..cut], &joined[cut..]);
        }
        Op::AppendFrom(f) => {
            let other = &files[f % files.len()];
            let tail = other.find("[[faults").or_else(|| other.find("[workers]"));
            if let Some(at) = tail {
                lines.push(other[at..].to_string());
            }
        }
    }
    lines.join("\n")
}

/// The property: no panic; Ok(scenario) plans and round-trips; Err names the file (and a line
/// for text that is not TOML).
fn check(text: &str) -> Result<(), String> {
    let result = catch_unwind(AssertUnwindSafe(|| parse_str(text, FILE)))
        .map_err(|_| "parse_str panicked".to_string())?;
    match result {
        Err(error) => check_error(text, &error),
        Ok(scenario) => {
            catch_unwind(AssertUnwindSafe(|| plan(&scenario, scenario.seeds.start)))
                .map_err(|_| "plan panicked on a validated scenario".to_string())?;
            let rendered = catch_unwind(AssertUnwindSafe(|| scenario_toml(&scenario)))
                .map_err(|_| "scenario_toml panicked on a validated scenario".to_string())?;
            match parse_str(&rendered, FILE) {
                Ok(back) if back == scenario => Ok(()),
                Ok(_) => Err(format!("rendered scenario parses differently:\n{rendered}")),
                Err(e) => Err(format!("rendered scenario fails: {e}\n{rendered}")),
            }
        }
    }
}

fn check_error(text: &str, error: &ScenarioError) -> Result<(), String> {
    let shown = error.to_string();
    if error.file != FILE || !shown.starts_with(FILE) {
        return Err(format!("the error does not name the file: {shown}"));
    }
    if error.expected.trim().is_empty() || error.field.trim().is_empty() {
        return Err(format!(
            "the error names no field or expectation: {shown:?}"
        ));
    }
    if toml_edit::ImDocument::parse(text).is_err() && error.line.is_none() {
        return Err(format!("a TOML syntax error without a line: {shown}"));
    }
    if shown.contains("panicked") || shown.contains("Raw") || shown.contains("struct ") {
        return Err(format!("an internal message reached the user: {shown}"));
    }
    Ok(())
}

fn runner(salt: &[u8; 8]) -> TestRunner {
    let cases = std::env::var("FENCESIM_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256);
    let seed: u64 = std::env::var("FENCESIM_FUZZ_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(salt);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key))
}

#[test]
fn mutated_catalogue_files_load_or_fail_cleanly() {
    let files = catalogue();
    let strategy = (0..files.len(), proptest::collection::vec(op(), 1..4));
    let (loaded, rejected) = (AtomicU64::new(0), AtomicU64::new(0));
    let result = runner(b"mutated!").run(&strategy, |(file, ops)| {
        let mut text = files[file].clone();
        for op in &ops {
            text = apply(&text, op, &files);
        }
        let counter = if parse_str(&text, FILE).is_ok() {
            &loaded
        } else {
            &rejected
        };
        counter.fetch_add(1, Ordering::Relaxed);
        check(&text).map_err(|why| TestCaseError::fail(format!("{why}\n--- input ---\n{text}")))
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    // Near-valid means both outcomes occur: a generator producing only garbage (or only
    // valid files) would test one path.
    let (loaded, rejected) = (loaded.into_inner(), rejected.into_inner());
    println!("mutated catalogue files: {loaded} loaded, {rejected} rejected cleanly");
    assert!(
        loaded > 0 && rejected > 0,
        "{loaded} loaded, {rejected} rejected"
    );
}

#[test]
fn arbitrary_text_loads_or_fails_cleanly() {
    let strategy = prop_oneof![
        ".{0,400}",
        "[a-z_\\[\\]\\.=\" 0-9\n{},-]{0,400}",
        proptest::collection::vec(any::<u8>(), 0..400)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ];
    let result = runner(b"arbitrar").run(&strategy, |text| {
        check(&text).map_err(|why| TestCaseError::fail(format!("{why}\n--- input ---\n{text}")))
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}

#[test]
fn every_catalogue_file_passes_the_property() {
    for text in catalogue() {
        check(&text).unwrap_or_else(|why| panic!("{why}"));
    }
}

#[test]
fn the_committed_corpus_loads_or_fails_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fuzz-corpus")
        .map(|entry| entry.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus is committed");
    for path in files {
        let bytes = std::fs::read(&path).expect("a corpus file");
        let text = String::from_utf8_lossy(&bytes);
        check(&text).unwrap_or_else(|why| panic!("{}: {why}", path.display()));
    }
}
