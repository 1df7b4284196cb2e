//! `xtask tidy` on the repository (every problem fails `cargo test`), and on copies of it
//! with one recipe broken on purpose, so the check is shown to fail when it must.

mod util;

use std::path::{Path, PathBuf};

use util::xtask;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Copies what tidy reads (the root manifest, ARCHITECTURE.md, each crate's manifest and
/// `src`) into a temp dir.
fn copy_of_the_repository() -> tempfile::TempDir {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_dir(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let root = root();
    for file in ["Cargo.toml", "ARCHITECTURE.md"] {
        std::fs::copy(root.join(file), dir.path().join(file)).unwrap();
    }
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let krate = entry.unwrap().path();
        let to = dir.path().join("crates").join(krate.file_name().unwrap());
        copy_dir(&krate.join("src"), &to.join("src"));
        std::fs::copy(krate.join("Cargo.toml"), to.join("Cargo.toml")).unwrap();
    }
    dir
}

/// Replaces the one occurrence of `old` in `file` (under `dir`) with `new`.
fn edit(dir: &Path, file: &str, old: &str, new: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches(old).count(), 1, "{file}: {old}");
    std::fs::write(&path, text.replace(old, new)).unwrap();
}

fn tidy(root: &Path) -> (i32, String) {
    let (code, out, err) = xtask(&["tidy", "--root", root.to_str().unwrap()], root);
    (code, format!("{out}{err}"))
}

#[test]
fn the_repository_is_tidy() {
    let (code, out) = tidy(&root());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("tidy: ok"), "{out}");
}

/// How many problems tidy reports in `out` (0 for `tidy: ok`).
fn problems(out: &str) -> usize {
    out.lines()
        .find_map(|line| line.strip_prefix("tidy: ")?.strip_suffix(" problems"))
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn an_unchanged_copy_reads_as_the_repository() {
    let dir = copy_of_the_repository();
    let (_, copy) = tidy(dir.path());
    let (_, repository) = tidy(&root());
    assert_eq!(problems(&copy), problems(&repository), "{copy}");
}

#[test]
fn a_catch_all_over_fault_kind_fails() {
    let dir = copy_of_the_repository();
    edit(
        dir.path(),
        "crates/scenario/src/fault.rs",
        "    pub fn named_nodes(&self) -> Vec<&str> {",
        "    pub fn is_pause(kind: FaultKind) -> bool {\n        match kind {\n            \
         FaultKind::GcPause => true,\n            _ => false,\n        }\n    }\n\n    \
         pub fn named_nodes(&self) -> Vec<&str> {",
    );
    let (code, out) = tidy(dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("a catch-all arm in a match over `FaultKind` (in `Fault::is_pause`)"),
        "{out}"
    );
    let (_, unchanged) = tidy(&root());
    assert_eq!(problems(&out), problems(&unchanged) + 1, "{out}");
}

#[test]
fn a_moved_planted_site_fails() {
    let dir = copy_of_the_repository();
    edit(
        dir.path(),
        "crates/fencing/src/max_token.rs",
        "fn admit(",
        "fn admit_moved(",
    );
    let (code, out) = tidy(dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("names its site `fencing/src/max_token.rs: HighestTokens::admit`"),
        "{out}"
    );
}

#[test]
fn a_fault_kind_recipe_without_the_live_plan_fails() {
    let dir = copy_of_the_repository();
    let doc = dir.path().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let start = text.find("### A fault kind").unwrap();
    let end = start + text[start..].find("\n### ").unwrap();
    let recipe = text[start..end].replace("translate", "turn");
    std::fs::write(&doc, format!("{}{recipe}{}", &text[..start], &text[end..])).unwrap();
    let (code, out) = tidy(dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("recipe `### A fault kind` does not name translate"),
        "{out}"
    );
}
