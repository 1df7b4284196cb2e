//! ARCHITECTURE.md's code map stays true: every module of every crate (each `.rs` file
//! under `crates/<crate>/src`, and each directory module) is named, in backquotes, in its
//! crate's section (`### \`crates/<crate>\``), so a new module cannot arrive unmapped.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every crate directory under `crates/` (one with a `src`), in name order.
fn crate_dirs() -> Vec<PathBuf> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    crates
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
    let crates = crate_dirs();
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

/// The top-level modules of `crate_dir/src` that each module's non-test code names through
/// `crate::…` (or `super::…` from a top-level file): an edge `from → to` per reference.
fn module_edges(
    crate_dir: &Path,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let src = crate_dir.join("src");
    let mut files = Vec::new();
    modules(&src, "", &mut files);
    let tops: std::collections::BTreeSet<String> = files
        .iter()
        .map(|m| m.split('/').next().unwrap().to_string())
        .collect();
    let mut edges = std::collections::BTreeMap::new();
    for module in &files {
        let top = module.split('/').next().unwrap().to_string();
        let path = [
            src.join(format!("{module}.rs")),
            src.join(module).join("mod.rs"),
        ]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        // Test code may reach anywhere: everything from the test module on is left out.
        let code = text.split("#[cfg(test)]").next().unwrap();
        let nested = module.contains('/');
        let mut named = referenced(code, "crate::");
        if !nested {
            named.extend(referenced(code, "super::"));
        }
        let entry: &mut std::collections::BTreeSet<String> = edges.entry(top.clone()).or_default();
        entry.extend(named.into_iter().filter(|n| *n != top && tops.contains(n)));
    }
    edges
}

/// The first path segment after each `prefix` in `code`, each name of a `prefix{a, b::c}`
/// group included.
fn referenced(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut item_start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(&group[item_start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(&group[item_start..i]));
                        item_start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

/// A cycle through `edges`, as a path that ends where it began, if there is one.
fn find_cycle(
    edges: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    edges
        .keys()
        .find_map(|start| visit(start, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_a_cycle_between_its_modules() {
    let crates = crate_dirs();
    let cycles: Vec<String> = crates
        .iter()
        .filter_map(|dir| {
            find_cycle(&module_edges(dir)).map(|cycle| {
                format!(
                    "{}: {}",
                    dir.file_name().unwrap().to_string_lossy(),
                    cycle.join(" → ")
                )
            })
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "module cycles (a module that needs another's types both ways: move the shared \
         piece into a leaf both use):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_reads_use_groups() {
    let names = referenced(
        "use crate::{\n    wait::{lock, Alarm},\n    world::World,\n};\nlet x = crate::net::send;",
        "crate::",
    );
    assert_eq!(names, ["wait", "world", "net"]);
    let mut edges = std::collections::BTreeMap::new();
    let edge =
        |edges: &mut std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
         a: &str,
         b: &str| {
            edges
                .entry(a.to_string())
                .or_default()
                .insert(b.to_string());
        };
    edge(&mut edges, "runner", "world");
    edge(&mut edges, "world", "net");
    assert_eq!(find_cycle(&edges), None);
    edge(&mut edges, "net", "world");
    assert_eq!(
        find_cycle(&edges),
        Some(vec![
            "net".to_string(),
            "world".to_string(),
            "net".to_string()
        ])
    );
}
