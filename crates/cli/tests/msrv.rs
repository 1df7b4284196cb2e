//! The declared minimum Rust version is true: every crate of the workspace declares the
//! workspace's `rust-version`, and no locked dependency the build fetched declares a newer one.
//! (The code's own needs, such as `u64::is_multiple_of` from 1.87, are checked by building with
//! that toolchain where CI has it: `.ci/run`.)
//!
//! It asks cargo nothing: `cargo metadata` wants the manifest of every package in the lock file,
//! Windows- and wasm-only ones included, and fails offline on a fresh machine whose registry
//! holds only what the build downloaded. It reads `Cargo.lock` and the manifests of the locked
//! packages present in the cargo home's registry; a locked package absent there was not built
//! on this machine (cargo downloads what it compiles), so it cannot raise this build's minimum.

use std::path::{Path, PathBuf};

fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The value of `key = "…"` on a line of `text` before its first table other than `[package]`.
fn package_value(text: &str, key: &str) -> Option<String> {
    let mut in_package = true;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]" || line == "[workspace.package]";
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some(rest) = line.strip_prefix(key) {
            let rest = rest.trim_start();
            if let Some(value) = rest.strip_prefix('=') {
                return Some(value.trim().trim_matches('"').to_string());
            }
        }
    }
    None
}

/// `(name, version)` of every registry package in `Cargo.lock`.
fn locked_registry_packages() -> Vec<(String, String)> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
    let mut out = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|line| {
                line.strip_prefix(key)
                    .and_then(|rest| rest.trim_start().strip_prefix('='))
                    .map(|v| v.trim().trim_matches('"').to_string())
            })
        };
        let source = field("source").unwrap_or_default();
        if source.starts_with("registry+") || source.starts_with("sparse+") {
            out.push((field("name").unwrap(), field("version").unwrap()));
        }
    }
    out
}

/// The registry source directories of the cargo home (`$CARGO_HOME`, else `~/.cargo`).
fn registry_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME is set");
    let Ok(entries) = std::fs::read_dir(home.join("registry/src")) else {
        return Vec::new();
    };
    entries.filter_map(|e| e.ok().map(|e| e.path())).collect()
}

#[test]
fn every_workspace_crate_inherits_the_workspace_rust_version() {
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let declared =
        package_value(&workspace, "rust-version").expect("[workspace.package] rust-version");
    let mut members = 0;
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let manifest = entry.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        members += 1;
        assert!(
            text.lines()
                .any(|l| l.trim().replace(' ', "") == "rust-version.workspace=true"),
            "{}: expected `rust-version.workspace = true` (the workspace declares {declared})",
            manifest.display()
        );
    }
    assert!(members >= 10, "found only {members} workspace crates");
}

#[test]
fn no_locked_dependency_the_build_fetched_needs_a_newer_rust_than_declared() {
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let declared = package_value(&workspace, "rust-version").unwrap();
    let registries = registry_dirs();
    let locked = locked_registry_packages();
    let (mut checked, mut absent) = (0, 0);
    let mut newest = (String::new(), (0, 0, 0));
    for (name, version_text) in &locked {
        let Some(manifest) = registries
            .iter()
            .map(|r| r.join(format!("{name}-{version_text}/Cargo.toml")))
            .find(|m| m.is_file())
        else {
            absent += 1;
            continue;
        };
        checked += 1;
        let text = std::fs::read_to_string(&manifest).unwrap();
        if let Some(needed) = package_value(&text, "rust-version") {
            if version(&needed) > newest.1 {
                newest = (format!("{name} {version_text}"), version(&needed));
            }
        }
    }
    // The test binary's own build fetched well over a hundred of them (madsim, serde, clap, …):
    // finding few means the registry was not found, not that there is nothing to check.
    assert!(
        checked >= 100,
        "only {checked} of {} locked packages found in {registries:?} ({absent} absent)",
        locked.len()
    );
    assert!(
        version(&declared) >= newest.1,
        "rust-version = {declared}, but {} needs {:?}",
        newest.0,
        newest.1
    );
}

#[test]
fn the_manifest_reader_finds_the_package_value_only() {
    let text =
        "[package]\nname = \"x\"\nrust-version = \"1.70\"\n[dependencies]\nrust-version = \"9\"\n";
    assert_eq!(package_value(text, "rust-version").as_deref(), Some("1.70"));
    assert_eq!(
        package_value("[dependencies]\nrust-version = \"9\"\n", "rust-version"),
        None
    );
    assert!(version("1.89") > version("1.88.5"));
}
