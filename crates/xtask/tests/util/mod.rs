//! What the xtask tests share: running the real `xtask` binary, and the catalogue's files.

#![allow(dead_code)] // each test file uses its own subset

use std::{path::Path, process::Command};

/// Runs `xtask ARGS` in `dir` with `FENCESIM_MUTANT` cleared: (exit code, stdout, stderr).
pub fn xtask(args: &[&str], dir: &Path) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .env_remove("FENCESIM_MUTANT")
        .args(args)
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
