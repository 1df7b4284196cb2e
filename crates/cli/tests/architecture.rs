//! ARCHITECTURE.md's code map stays true: every module of every crate (each `.rs` file
//! under `crates/<crate>/src`, and each directory module) is named, in backquotes, in its
//! crate's section (`### \`crates/<crate>\``), so a new module cannot arrive unmapped.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Module paths under `src` (`parse/locate`, `spec`), without lib/main and test modules.
fn modules(src: &Path, prefix: &str, out: &mut Vec<String>) {
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name == "tests" {
                continue;
            }
            modules(&path, &format!("{prefix}{name}/"), out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            match stem {
                "lib" | "main" | "tests" => {}
                "mod" => out.push(prefix.trim_end_matches('/').to_string()),
                _ => out.push(format!("{prefix}{stem}")),
            }
        }
    }
}

/// The text of `### \`crates/<name>\`` up to the next heading of the same or higher level.
fn section<'a>(doc: &'a str, name: &str) -> &'a str {
    let heading = format!("### `crates/{name}`");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no section {heading}"));
    let rest = &doc[start + heading.len()..];
    let end = rest
        .find("\n### ")
        .into_iter()
        .chain(rest.find("\n## "))
        .min()
        .unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn the_code_map_names_every_module_of_every_crate() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    let mut missing = Vec::new();
    for dir in &crates {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = section(&doc, &name);
        let mut list = Vec::new();
        modules(&dir.join("src"), "", &mut list);
        for module in list {
            let leaf = module.rsplit('/').next().unwrap();
            let named = [
                format!("`{module}`"),
                format!("`{leaf}`"),
                format!("`{module}/`"),
                format!("`{module}.rs`"),
                format!("`{leaf}.rs`"),
            ]
            .iter()
            .any(|form| text.contains(form.as_str()));
            if !named {
                missing.push(format!("crates/{name}: {module}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules missing from ARCHITECTURE.md's code map (name each in backquotes in its \
         crate's section):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_fault_kind_checklist_names_tune_and_live() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = doc.find("## Adding a fault kind").expect("the checklist");
    let rest = &doc[start..];
    let checklist = &rest[..rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3)];
    for must in ["crates/tune", "crates/live", "live_plan"] {
        assert!(
            checklist.contains(must),
            "the checklist does not name {must}"
        );
    }
}
