//! Stamps the madsim version in the lock file into the build (`fencesim_model::version`):
//! every output names the fencesim and madsim that produced it, since a trace hash is only
//! comparable between runs of the same simulator.

use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let lock = Path::new(&manifest).join("../../Cargo.lock");
    let madsim = std::fs::read_to_string(&lock)
        .ok()
        .and_then(|lock| {
            let key = "name = \"madsim\"\nversion = \"";
            let rest = &lock[lock.find(key)? + key.len()..];
            Some(rest[..rest.find('"')?].to_string())
        })
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=FENCESIM_MADSIM={madsim}");
    if lock.exists() {
        println!("cargo:rerun-if-changed={}", lock.display());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
