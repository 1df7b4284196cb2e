//! The declared minimum Rust version is true: every crate of the workspace declares the
//! workspace's `rust-version`, and no locked dependency declares a newer one. (The code's own
//! needs, such as `u64::is_multiple_of` from 1.87, are checked by building with that toolchain
//! where CI has it: `.ci/run`.)

use std::process::Command;

fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

#[test]
fn rust_version_is_declared_by_every_crate_and_covers_every_locked_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let packages = metadata["packages"].as_array().unwrap();
    let declared = packages
        .iter()
        .find(|p| p["name"] == "fencesim")
        .and_then(|p| p["rust_version"].as_str())
        .expect("fencesim declares rust-version");
    let mut newest = ("", (0, 0, 0));
    for package in packages {
        let id = package["id"].as_str().unwrap();
        let name = package["name"].as_str().unwrap();
        let rust_version = package["rust_version"].as_str();
        if members.contains(&id) {
            assert_eq!(
                rust_version,
                Some(declared),
                "{name}: expected `rust-version.workspace = true`"
            );
        } else if let Some(needed) = rust_version {
            if version(needed) > newest.1 {
                newest = (name, version(needed));
            }
        }
    }
    assert!(
        version(declared) >= newest.1,
        "rust-version = {declared}, but {} needs {:?}",
        newest.0,
        newest.1
    );
}
