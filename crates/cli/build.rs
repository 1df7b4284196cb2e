//! Stamps the build for `fencesim --version`: the commit it was built from (with `-dirty`
//! when the work tree differed from it); the madsim version comes from
//! `fencesim_model::version`. A trace hash is only comparable between runs of the same build,
//! so a bug report names both.

use std::{path::Path, process::Command};

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let root = Path::new(&manifest).join("../..");
    let commit = git(&[
        "-C",
        &root.display().to_string(),
        "rev-parse",
        "--short=12",
        "HEAD",
    ])
    .filter(|c| !c.is_empty())
    .map(|c| {
        let dirty = git(&[
            "-C",
            &root.display().to_string(),
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .is_some_and(|s| !s.is_empty());
        if dirty {
            format!("{c}-dirty")
        } else {
            c
        }
    })
    .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=FENCESIM_COMMIT={commit}");
    for watched in [".git/HEAD", ".git/index"] {
        let path = root.join(watched);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
