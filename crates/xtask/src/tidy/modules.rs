//! ARCHITECTURE.md's code map and the module graph of each crate: every module of every
//! crate is named (in backquotes) in its crate's section, the recipes are there, and no two
//! modules of a crate need each other, its root (`lib.rs`/`main.rs`) included: a module that
//! names an item defined in the root (`crate::Item`) depends on the root, and the root
//! depends on the modules its own code calls (its `mod` lines and `pub use` re-exports are
//! the crate's shape, not a dependency).

use std::{
    collections::{BTreeMap, BTreeSet},
    path::Path,
};

use super::{
    lex::{Kind, Token},
    Source,
};
use crate::shared::InputError;

/// The crate root's name in the graph.
const ROOT: &str = "(root)";

/// The recipes ARCHITECTURE.md must give, and what each must name.
const RECIPES: [(&str, &[&str]); 5] = [
    (
        "### A fault kind",
        &["crates/tune", "crates/live/src/plan.rs", "translate"],
    ),
    ("### A lease preset", &["presets.rs"]),
    ("### An invariant", &["is_safety"]),
    ("### A fencing mode", &["crates/fencing"]),
    ("### A tune target", &["crates/tune"]),
];

/// Crates allowed a module cycle through their root for now: (crate, why).
const ALLOWED_CYCLES: &[(&str, &str)] = &[];

/// The allow-list as printed by `xtask tidy`.
pub(crate) fn allow_list() -> String {
    let mut out = format!("module cycles allowed ({}):", ALLOWED_CYCLES.len());
    for (krate, why) in ALLOWED_CYCLES {
        out.push_str(&format!("\n  crates/{krate}: {why}"));
    }
    out
}

type Graph = BTreeMap<String, BTreeSet<String>>;

/// `crates/k/src/parse/mod.rs` → `parse`; `…/src/lib.rs` → [`ROOT`].
fn module_of(path: &str) -> String {
    let inner = path.splitn(4, '/').nth(3).unwrap_or_default();
    let stem = inner.strip_suffix(".rs").unwrap_or(inner);
    match stem {
        "lib" | "main" => ROOT.to_string(),
        _ => stem.strip_suffix("/mod").unwrap_or(stem).to_string(),
    }
}

/// The names a `use` tree from `at` (after `use`) brings in, each with its first segment:
/// `a::{B, c::D as E}` → `[(a, B), (a, E)]`.
fn use_tree(
    tokens: &[Token],
    at: usize,
    first: Option<&str>,
    out: &mut Vec<(String, String)>,
) -> usize {
    let mut i = at;
    let mut first = first.map(str::to_string);
    let mut last = String::new();
    while i < tokens.len() {
        let t = &tokens[i];
        match t.text.as_str() {
            "{" => {
                i += 1;
                while i < tokens.len() && !tokens[i].is("}") {
                    i = use_tree(tokens, i, first.as_deref(), out);
                    if tokens.get(i).is_some_and(|t| t.is(",")) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "," | ";" | "}" => break,
            "as" => {
                last = tokens
                    .get(i + 1)
                    .map(|t| t.text.clone())
                    .unwrap_or_default();
                i += 1;
            }
            "::" => {}
            _ if t.kind == Kind::Ident && !matches!(t.text.as_str(), "crate" | "self") => {
                first.get_or_insert_with(|| t.text.clone());
                last.clone_from(&t.text);
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(first) = first {
        if !last.is_empty() && last != "*" {
            out.push((first, last));
        }
    }
    i
}

/// What a crate root's `pub use` lines re-export: name → the first segment of its path
/// (a module, or another crate); and the token ranges of its `mod x;` and `pub use` lines.
fn root_exports(tokens: &[Token]) -> (BTreeMap<String, String>, Vec<(usize, usize)>) {
    let mut exports = BTreeMap::new();
    let mut skip = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        let item = match token.text.as_str() {
            "pub" if tokens.get(at + 1).is_some_and(|t| t.is("(")) => {
                super::lex::closing(tokens, at + 1) + 1
            }
            "pub" => at + 1,
            "mod" => at,
            _ => continue,
        };
        match tokens.get(item).map(|t| t.text.as_str()) {
            Some("mod") if tokens.get(item + 2).is_some_and(|t| t.is(";")) => {
                skip.push((at, item + 2));
            }
            Some("use") if token.is("pub") => {
                let mut names = Vec::new();
                let end = use_tree(tokens, item + 1, None, &mut names);
                skip.push((at, end));
                exports.extend(names.into_iter().map(|(first, name)| (name, first)));
            }
            _ => {}
        }
    }
    (exports, skip)
}

/// The first segment after `prefix::` at `at`: one name, or each of a `{…}` group's.
fn first_segments(tokens: &[Token], at: usize, out: &mut Vec<String>) {
    let Some(next) = tokens.get(at) else { return };
    if !next.is("{") {
        out.push(next.text.clone());
        return;
    }
    let close = super::lex::closing(tokens, at);
    let mut depth = 0;
    for i in at..close {
        let t = &tokens[i];
        depth += i32::from(t.is("{")) - i32::from(t.is("}"));
        let starts = tokens[i - 1].is("{") || tokens[i - 1].is(",");
        if depth == 1 && i > at && starts && t.kind == Kind::Ident {
            out.push(t.text.clone());
        }
    }
}

/// The first segments each `crate::`, `self::` (root only) or `super::` (top-level files)
/// path of `tokens` names, and in the root every path starting with a module's name (its
/// `mod` lines and re-exports left out).
fn referenced(tokens: &[Token], module: &str, tops: &BTreeSet<String>) -> Vec<String> {
    let nested = module.contains('/');
    let root = module == ROOT;
    let skip = if root {
        root_exports(tokens).1
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        if skip.iter().any(|&(from, to)| (from..=to).contains(&at)) {
            continue;
        }
        let prefix =
            token.is("crate") || (token.is("super") && !nested) || (token.is("self") && root);
        let path = tokens.get(at + 1).is_some_and(|t| t.is("::"));
        let first = at == 0 || !tokens[at - 1].is("::");
        if prefix && path {
            first_segments(tokens, at + 2, &mut out);
        } else if root && path && first && tops.contains(&token.text) {
            out.push(token.text.clone());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The module graph of one crate: top-level modules and the root.
fn graph(sources: &[&Source]) -> Graph {
    let modules: Vec<String> = sources.iter().map(|s| module_of(&s.path)).collect();
    let tops: BTreeSet<String> = modules
        .iter()
        .filter(|m| *m != ROOT)
        .map(|m| m.split('/').next().unwrap_or_default().to_string())
        .collect();
    let exports = sources
        .iter()
        .zip(&modules)
        .find(|(_, m)| *m == ROOT)
        .map(|(s, _)| root_exports(&s.tokens).0)
        .unwrap_or_default();
    let mut edges = Graph::new();
    for (source, module) in sources.iter().zip(&modules) {
        let top = module.split('/').next().unwrap_or_default().to_string();
        let entry = edges.entry(top.clone()).or_default();
        for name in referenced(&source.tokens, module, &tops) {
            let to = if tops.contains(&name) {
                name
            } else if let Some(from) = exports.get(&name) {
                from.clone()
            } else {
                ROOT.to_string()
            };
            if to != top && (to == ROOT || tops.contains(&to)) {
                entry.insert(to);
            }
        }
    }
    edges
}

/// A cycle through `edges`, as a path that ends where it began, if there is one.
fn find_cycle(edges: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
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
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|start| visit(start, edges, &mut Vec::new(), &mut done))
}

/// The text of `### \`crates/<name>\`` up to the next heading of the same or higher level.
fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let start = doc.find(heading)?;
    let rest = &doc[start + heading.len()..];
    let end = [rest.find("\n### "), rest.find("\n## ")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Modules missing from the code map, recipes missing from the document.
fn code_map(doc: &str, sources: &[Source]) -> Vec<String> {
    let mut problems = Vec::new();
    for source in sources {
        let module = module_of(&source.path);
        if module == ROOT {
            continue;
        }
        let heading = format!("### `crates/{}`", source.krate);
        let Some(text) = section(doc, &heading) else {
            problems.push(format!(
                "ARCHITECTURE.md has no section {heading} (for {})",
                source.path
            ));
            continue;
        };
        let leaf = module.rsplit('/').next().unwrap_or_default();
        let forms = [
            format!("`{module}`"),
            format!("`{leaf}`"),
            format!("`{module}/`"),
            format!("`{module}.rs`"),
            format!("`{leaf}.rs`"),
        ];
        if !forms.iter().any(|form| text.contains(form.as_str())) {
            problems.push(format!(
                "{}: module `{module}` is missing from ARCHITECTURE.md's code map (name it in \
                 backquotes in the section {heading})",
                source.path
            ));
        }
    }
    for (heading, names) in RECIPES {
        match section(doc, heading) {
            None => problems.push(format!("ARCHITECTURE.md has no recipe `{heading}`")),
            Some(text) => {
                for name in names.iter().filter(|name| !text.contains(*name)) {
                    problems.push(format!(
                        "ARCHITECTURE.md's recipe `{heading}` does not name {name}"
                    ));
                }
            }
        }
    }
    problems
}

/// The code map, the recipes and every crate's module cycles.
pub(crate) fn check(root: &Path, sources: &[Source]) -> Result<Vec<String>, InputError> {
    let doc_path = root.join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&doc_path)
        .map_err(|e| InputError(format!("{}: {e}", doc_path.display())))?;
    let mut problems = code_map(&doc, sources);
    let mut crates: BTreeMap<&str, Vec<&Source>> = BTreeMap::new();
    for source in sources {
        crates
            .entry(source.krate.as_str())
            .or_default()
            .push(source);
    }
    for (krate, sources) in crates {
        let cycle = find_cycle(&graph(&sources));
        let allowed = ALLOWED_CYCLES.iter().any(|(k, _)| *k == krate);
        match cycle {
            Some(cycle) if !allowed => problems.push(format!(
                "crates/{krate}: a module cycle {} (a module that needs another's items both \
                 ways: move the shared piece into a leaf both use)",
                cycle.join(" → ")
            )),
            None if allowed => problems.push(format!(
                "crates/{krate}: no module cycle any more: remove its entry from \
                 crates/xtask/src/tidy/modules.rs"
            )),
            _ => {}
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_graph(files: &[(&str, &str)]) -> Graph {
        let sources: Vec<Source> = files
            .iter()
            .map(|(path, code)| Source::parse(&format!("crates/k/src/{path}"), "k", code))
            .collect();
        graph(&sources.iter().collect::<Vec<_>>())
    }

    #[test]
    fn paths_and_use_groups_are_edges() {
        let g = crate_graph(&[
            ("lib.rs", "mod net; mod wait; mod world;"),
            ("net.rs", "use crate::{\n wait::{lock, Alarm},\n world::World,\n};\nfn f() { crate::world::x(); }"),
            ("wait.rs", "pub struct Alarm;"),
            ("world/mod.rs", "use super::wait::Alarm; fn f() {}"),
            ("world/inner.rs", "use super::helper; use crate::wait::x;"),
        ]);
        assert_eq!(
            g["net"],
            BTreeSet::from(["wait".to_string(), "world".to_string()])
        );
        assert_eq!(g["world"], BTreeSet::from(["wait".to_string()]));
        assert!(g[ROOT].is_empty(), "{g:?}");
        assert_eq!(find_cycle(&g), None);
    }

    #[test]
    fn a_cycle_through_the_root_is_found_and_re_exports_are_not_edges() {
        let files = [
            ("lib.rs", "mod a; mod b; pub use a::Thing; pub use other_crate::Far;\npub struct Config;\nfn helper() { b::run(); }"),
            ("a.rs", "use crate::Far; pub struct Thing;"),
            ("b.rs", "use crate::Thing; fn run() {}"),
        ];
        let g = crate_graph(&files);
        assert_eq!(g["b"], BTreeSet::from(["a".to_string()]), "{g:?}");
        assert!(g["a"].is_empty(), "{g:?}");
        assert_eq!(find_cycle(&g), None);
        let mut files = files;
        files[2].1 = "fn run() -> crate::Config { todo!() }";
        let g = crate_graph(&files);
        assert_eq!(
            find_cycle(&g),
            Some(vec![ROOT.to_string(), "b".to_string(), ROOT.to_string()])
        );
    }

    #[test]
    fn the_code_map_names_every_module() {
        let doc = "### `crates/k`\nThe `net` module and `world/`.\n## Next";
        let sources = [
            Source::parse("crates/k/src/lib.rs", "k", ""),
            Source::parse("crates/k/src/net.rs", "k", ""),
            Source::parse("crates/k/src/world/mod.rs", "k", ""),
            Source::parse("crates/k/src/wait.rs", "k", ""),
        ];
        let found: Vec<String> = code_map(doc, &sources)
            .into_iter()
            .filter(|p| !p.contains("recipe"))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("crates/k/src/wait.rs: module `wait` is missing"),
            "{found:?}"
        );
    }
}
