//! What every CLI test shares: running the real `fencesim` binary, and the catalogue's files.

#![allow(dead_code)] // each test file uses its own subset

use std::{path::Path, process::Command};

/// Runs `fencesim ARGS` in `dir`: (exit code, stdout, stderr).
pub fn fencesim(args: &[&str], dir: &Path) -> (i32, String, String) {
    fencesim_env(args, dir, &[])
}

/// Runs `fencesim ARGS` in `dir` with the variables `env` set and the seed variables the
/// commands read (`FENCESIM_SEED`, `FENCESIM_SEEDS`, `MADSIM_TEST_SEED`, and `PROPTEST_CASES`,
/// `explore`'s default `--cases`) cleared otherwise, so a developer's exported seed or case
/// count cannot change a test: (exit code, stdout, stderr).
pub fn fencesim_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fencesim"));
    for name in [
        "FENCESIM_SEED",
        "FENCESIM_SEEDS",
        "MADSIM_TEST_SEED",
        "PROPTEST_CASES",
    ] {
        command.env_remove(name);
    }
    let output = command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The path of catalogue scenario `name` (`scenarios/<name>.toml`) as a command-line argument.
pub fn catalogue(name: &str) -> String {
    let path = fencesim_testkit::catalogue_path(name);
    path.to_str().unwrap().to_string()
}

/// The words of a POSIX shell command line as `fencesim` prints them: plain words and
/// single-quoted ones (`'\''` for a quote inside), nothing else.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for quoted in chars.by_ref() {
                    if quoted == '\'' {
                        break;
                    }
                    word.push(quoted);
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            ' ' if in_word => {
                words.push(std::mem::take(&mut word));
                in_word = false;
            }
            ' ' => {}
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Runs a printed `fencesim …` line (after `prefix`, e.g. `replay: `, to the end of its line)
/// found in `text`, in `dir`: (exit code, stdout, stderr).
pub fn run_printed_line(text: &str, prefix: &str, dir: &Path) -> (i32, String, String) {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no `{prefix}` in:\n{text}"))
        + prefix.len();
    let line = text[start..].lines().next().unwrap();
    let words = shell_words(line);
    assert_eq!(words[0], "fencesim", "{line}");
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    fencesim(&args, dir)
}
