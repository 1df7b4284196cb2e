//! Dependencies through the root `[workspace.dependencies]`: an external crate used by two
//! or more crates is declared there once (one version for the workspace), every crate that
//! names a dependency declared there takes it with `workspace = true`, a workspace crate is
//! depended on only through it, and every entry there is used.

use std::{collections::BTreeMap, path::Path};

use toml_edit::{DocumentMut, Item};

use crate::shared::InputError;

/// One dependency as a crate's manifest names it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Use {
    /// The crate whose manifest names it.
    krate: String,
    /// `dependencies`, `dev-dependencies`, ...
    section: String,
    /// `workspace = true`.
    workspace: bool,
    /// `path = …` (a workspace crate named directly).
    path: bool,
}

fn read(path: &Path) -> Result<DocumentMut, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    text.parse()
        .map_err(|e| InputError(format!("{}: {e}", path.display())))
}

/// The dependency tables of a manifest: `(section, table)`, target-specific ones included.
fn sections(doc: &DocumentMut) -> Vec<(String, &dyn toml_edit::TableLike)> {
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut out = Vec::new();
    for kind in kinds {
        if let Some(table) = doc.get(kind).and_then(Item::as_table_like) {
            out.push((kind.to_string(), table));
        }
    }
    if let Some(targets) = doc.get("target").and_then(Item::as_table_like) {
        for (target, item) in targets.iter() {
            for kind in kinds {
                if let Some(table) = item.get(kind).and_then(Item::as_table_like) {
                    out.push((format!("target.{target}.{kind}"), table));
                }
            }
        }
    }
    out
}

/// Every dependency named by each manifest: name → its uses.
fn uses(manifests: &[(String, DocumentMut)]) -> BTreeMap<String, Vec<Use>> {
    let mut out: BTreeMap<String, Vec<Use>> = BTreeMap::new();
    for (krate, doc) in manifests {
        for (section, table) in sections(doc) {
            for (name, item) in table.iter() {
                let field = |key: &str| item.as_table_like().and_then(|t| t.get(key));
                out.entry(name.to_string()).or_default().push(Use {
                    krate: krate.clone(),
                    section: section.clone(),
                    workspace: field("workspace").and_then(Item::as_bool) == Some(true),
                    path: field("path").is_some(),
                });
            }
        }
    }
    out
}

/// The problems of a workspace whose root manifest is `root` and whose crates' manifests are
/// `manifests` (crate directory name, manifest).
fn problems(root: &DocumentMut, manifests: &[(String, DocumentMut)]) -> Vec<String> {
    let declared: Vec<String> = root
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(name, _)| name.to_string()).collect())
        .unwrap_or_default();
    let uses = uses(manifests);
    let mut out = Vec::new();
    for (name, uses) in &uses {
        let mut crates: Vec<&str> = uses.iter().map(|u| u.krate.as_str()).collect();
        crates.dedup();
        let in_workspace = declared.contains(name);
        let shared = crates.len() >= 2 && !in_workspace;
        let internal = uses.iter().any(|u| u.path) && !in_workspace;
        if shared || internal {
            out.push(format!(
                "dependency `{name}` ({}used by {}): declare it once in the root Cargo.toml's \
                 [workspace.dependencies] and take it with `{name}.workspace = true`",
                if internal { "a workspace crate, " } else { "" },
                crates.join(", ")
            ));
            continue;
        }
        for u in uses.iter().filter(|u| in_workspace && !u.workspace) {
            out.push(format!(
                "crates/{}/Cargo.toml [{}]: `{name}` is declared in [workspace.dependencies]: \
                 take it with `{name}.workspace = true` (features and `optional` may be added)",
                u.krate, u.section
            ));
        }
    }
    for name in declared.iter().filter(|name| !uses.contains_key(*name)) {
        out.push(format!(
            "[workspace.dependencies] `{name}` is used by no crate: remove it"
        ));
    }
    out
}

/// Reads the root manifest and every crate's, and checks them.
pub(crate) fn check(root: &Path) -> Result<Vec<String>, InputError> {
    let workspace = read(&root.join("Cargo.toml"))?;
    let mut manifests = Vec::new();
    for dir in super::crate_dirs(root)? {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        manifests.push((name, read(&dir.join("Cargo.toml"))?));
    }
    Ok(problems(&workspace, &manifests))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(root: &str, crates: &[(&str, &str)]) -> Vec<String> {
        let manifests: Vec<(String, DocumentMut)> = crates
            .iter()
            .map(|(name, text)| (name.to_string(), text.parse().unwrap()))
            .collect();
        problems(&root.parse().unwrap(), &manifests)
    }

    const ROOT: &str =
        "[workspace.dependencies]\nserde = \"1\"\nfencesim-model = { path = \"crates/model\" }\n";

    #[test]
    fn workspace_dependencies_pass() {
        let crates = [
            ("a", "[dependencies]\nserde.workspace = true\nfencesim-model.workspace = true\nonly-here = \"1\"\n"),
            ("b", "[dev-dependencies]\nserde = { workspace = true, features = [\"rc\"] }\n"),
        ];
        assert_eq!(check(ROOT, &crates), Vec::<String>::new());
    }

    #[test]
    fn a_shared_versioned_dependency_fails() {
        let crates = [
            ("a", "[dependencies]\nserde.workspace = true\nfencesim-model.workspace = true\npng = \"0.17\"\n"),
            ("b", "[target.'cfg(unix)'.dev-dependencies]\npng = { version = \"0.17\", optional = true }\n"),
        ];
        let found = check(ROOT, &crates);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("dependency `png` (used by a, b)"),
            "{found:?}"
        );
    }

    #[test]
    fn a_declared_dependency_taken_with_its_own_version_or_path_fails() {
        let crates = [
            (
                "a",
                "[dependencies]\nserde = \"1\"\nfencesim-model = { path = \"../model\" }\n",
            ),
            (
                "b",
                "[dependencies]\nfencesim-stats = { path = \"../stats\" }\n",
            ),
        ];
        let found = check(ROOT, &crates);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found[0].contains("[dependencies]: `fencesim-model` is declared"),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("dependency `fencesim-stats` (a workspace crate, used by b)"),
            "{found:?}"
        );
        assert!(found[2].contains("`serde` is declared"), "{found:?}");
        let unused = check(ROOT, &[]);
        assert_eq!(unused.len(), 2, "{unused:?}");
        assert!(
            unused[0].contains("`serde` is used by no crate"),
            "{unused:?}"
        );
    }
}
