//! `xtask tidy`: the recipes ARCHITECTURE.md gives, checked on the source text (as
//! rust-analyzer's tidy does), so they cannot drift: no catch-all arm in a match over a fault
//! kind, an invariant, a fencing mode or a preset (`wildcards`); every planted site where the
//! catalogue says and a branch of its own (`planted`); dependencies through
//! `[workspace.dependencies]` (`deps`); file and function lengths (`ratchet`); no cycle between
//! the modules of a crate, its root included, and a code map naming every module (`modules`).
//! `cargo test` runs it (`crates/xtask/tests/tidy.rs`); each check's cases on small source
//! texts are its module's tests. It reads text only, so it takes well under a second.

mod deps;
mod items;
mod lex;
mod modules;
mod planted;
mod ratchet;
mod wildcards;

use std::path::{Path, PathBuf};

use crate::shared::InputError;

/// One Rust source file of a crate's `src`, read once for every check.
pub(crate) struct Source {
    /// The path from the workspace root, with `/` (`crates/model/src/lease.rs`).
    pub path: String,
    /// The crate's directory name (`model`).
    pub krate: String,
    /// Its non-test tokens (`#[cfg(test)]` items left out).
    pub tokens: Vec<lex::Token>,
    /// Its functions with a body, from `tokens`.
    pub functions: Vec<items::Function>,
    /// Lines outside `#[cfg(test)]` items.
    pub lines: usize,
}

impl Source {
    pub(crate) fn parse(path: &str, krate: &str, text: &str) -> Source {
        let (tokens, test_lines) = lex::without_tests(lex::tokens(text));
        let functions = items::functions(&tokens);
        Source {
            path: path.to_string(),
            krate: krate.to_string(),
            tokens,
            functions,
            lines: text.lines().count() - test_lines,
        }
    }

    /// Whether it is a test file (`tests.rs`, or under a `tests` directory).
    fn is_test_file(path: &str) -> bool {
        path.ends_with("/tests.rs") || path.split('/').skip(3).any(|part| part == "tests")
    }
}

/// Every crate directory under `crates/` with a `src`, in name order.
pub(crate) fn crate_dirs(root: &Path) -> Result<Vec<PathBuf>, InputError> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .map_err(|e| InputError(format!("{}: {e}", root.join("crates").display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    Ok(crates)
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| InputError(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rs_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The non-test sources of every crate.
fn sources(root: &Path) -> Result<Vec<Source>, InputError> {
    let mut out = Vec::new();
    for dir in crate_dirs(root)? {
        let krate = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mut files = Vec::new();
        rs_files(&dir.join("src"), &mut files)?;
        for file in files {
            let path = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            if Source::is_test_file(&path) {
                continue;
            }
            let text = std::fs::read_to_string(&file)
                .map_err(|e| InputError(format!("{}: {e}", file.display())))?;
            out.push(Source::parse(&path, &krate, &text));
        }
    }
    Ok(out)
}

/// The workspace this xtask was built in.
pub(crate) fn default_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs every check on the workspace at `root`: prints the allow-lists, then each problem;
/// `Ok(true)` when there is none.
pub(crate) fn tidy(root: &Path) -> Result<bool, InputError> {
    if !root.join("Cargo.toml").is_file() {
        return Err(InputError(format!(
            "{}: expected the workspace root (a directory with Cargo.toml and crates/)",
            root.display()
        )));
    }
    let sources = sources(root)?;
    println!("{}", wildcards::allow_list());
    println!("{}", ratchet::allow_list());
    println!("{}", modules::allow_list());
    let mut problems = Vec::new();
    problems.extend(wildcards::check(&sources));
    problems.extend(planted::check(&sources, crate::planted::ALL));
    problems.extend(deps::check(root)?);
    problems.extend(ratchet::check(&sources));
    problems.extend(modules::check(root, &sources)?);
    if problems.is_empty() {
        println!("tidy: ok ({} source files)", sources.len());
        return Ok(true);
    }
    for problem in &problems {
        println!("{problem}");
    }
    println!("tidy: {} problems", problems.len());
    Ok(false)
}
