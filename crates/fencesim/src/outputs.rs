//! Every file a command writes, checked before its first simulation: nothing runs
//! for minutes and then fails to write, and a bad output path writes nothing at all.
//!
//! One check for every command (`run`, `replay`, `check`, `merge`, `shrink`, `explore`,
//! `tune`, `soak`, `bench`): each output's nearest existing ancestor is a directory and a
//! probe file can be created and removed in it, no output is a directory, no two outputs
//! share a path, and no output is one of the command's input files. A scenario's inputs are
//! the file and its regressions file (`NAME.regressions`, [`preflight_scenarios`]): no
//! `--json`, `-o` or `--trace` can overwrite it, a FIFO or device by that name is refused,
//! and recording (`--record-failures`, `soak`) makes it an output beside a regular scenario
//! file only. Paths are compared canonicalized, so `r.json` and `./dir/../r.json` are the
//! same path. The writes themselves are atomic (`crate::fs`), and the binary removes their
//! temp files on SIGINT/SIGTERM/SIGHUP.

use std::path::{Component, Path, PathBuf};

use crate::fs::Destination;

/// One file a command will write.
#[derive(Clone, Debug)]
pub struct Output {
    /// The option that names it (`--json`, `--out`, …), for the message.
    pub flag: &'static str,
    /// The path as given (or as derived from a given directory).
    pub path: PathBuf,
}

impl Output {
    /// The output `path` named by `flag` (as the message will name it).
    pub fn new(flag: &'static str, path: impl Into<PathBuf>) -> Output {
        Output {
            flag,
            path: path.into(),
        }
    }
}

/// `path`'s directory, `.` for a bare file name.
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The nearest ancestor of `path` that exists, and the components below it.
fn existing_ancestor(path: &Path) -> (PathBuf, Vec<std::ffi::OsString>) {
    let mut rest = Vec::new();
    let mut dir = parent_of(path);
    if let Some(name) = path.file_name() {
        rest.push(name.to_os_string());
    }
    while !dir.exists() {
        // The last component, `..` included (`sub/..` with no `sub` yet).
        match dir.components().next_back() {
            Some(last @ (Component::Normal(_) | Component::ParentDir | Component::CurDir)) => {
                rest.push(last.as_os_str().to_os_string());
            }
            _ => break,
        }
        dir = parent_of(&dir);
    }
    rest.reverse();
    (dir, rest)
}

/// The first directory on the way to `path` that is a symlink to nothing: the directory
/// could not be created there after the work.
fn dangling_directory(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .filter(|dir| !dir.as_os_str().is_empty())
        .find(|dir| {
            std::fs::symlink_metadata(dir).is_ok_and(|meta| meta.file_type().is_symlink())
                && !dir.exists()
        })
        .map(Path::to_path_buf)
}

/// `path` canonicalized: its nearest existing ancestor resolved (symlinks, `..`), the rest
/// appended with `.` and `..` applied lexically.
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(canonical) = path.canonicalize() {
        return canonical;
    }
    let (dir, rest) = existing_ancestor(path);
    let mut canonical = dir.canonicalize().unwrap_or(dir);
    for part in rest {
        match Path::new(&part).components().next() {
            Some(Component::ParentDir) => {
                canonical.pop();
            }
            Some(Component::CurDir) | None => {}
            _ => canonical.push(part),
        }
    }
    canonical
}

/// Checks `outputs` against each other and against `inputs`, and probes that each can be
/// written, before anything runs. Creates nothing that outlives the check.
pub fn preflight(outputs: &[Output], inputs: &[&Path]) -> Result<(), String> {
    let inputs: Vec<PathBuf> = inputs.iter().map(|input| canonical(input)).collect();
    let mut seen: Vec<(PathBuf, &Output)> = Vec::new();
    let mut probed: Vec<PathBuf> = Vec::new();
    for output in outputs {
        let shown = format!("{} {}", output.flag, output.path.display());
        if output.path.file_name().is_none() || output.path.is_dir() {
            return Err(format!("{shown}: expected a file path, got a directory"));
        }
        if let Some(link) = dangling_directory(&output.path) {
            return Err(format!(
                "{shown}: expected a directory (or nothing) at {}, got a symlink to {}, which \
                 does not exist",
                link.display(),
                std::fs::read_link(&link).unwrap_or_default().display()
            ));
        }
        let (dir, _) = existing_ancestor(&output.path);
        if !dir.is_dir() {
            return Err(format!(
                "{shown}: expected a path inside a directory, but {} is not a directory",
                dir.display()
            ));
        }
        let target = match crate::fs::destination(&output.path) {
            Err(e) => return Err(format!("{shown}: {e}")),
            // A device, FIFO or descriptor is written in place, never replaced; writing
            // the same one twice (`--json /dev/null --junit /dev/null`) is fine.
            Ok(Destination::InPlace(_)) => continue,
            Ok(Destination::Replace(target)) => target,
        };
        if !probed.contains(&target) {
            crate::fs::probe_temp(&target, &dir).map_err(|e| {
                format!(
                    "{shown}: expected a writable directory, but a file cannot be created beside the output: {e}"
                )
            })?;
            probed.push(target.clone());
        }
        let path = canonical(&target);
        if inputs.contains(&path) {
            let regressions = path.extension().is_some_and(|ext| ext == "regressions");
            return Err(format!(
                "{shown}: expected an output path that is not an input file{}",
                if regressions {
                    ", got a scenario's regressions file (its recorded seeds)"
                } else {
                    ""
                }
            ));
        }
        if let Some((_, first)) = seen.iter().find(|(earlier, _)| *earlier == path) {
            return Err(format!(
                "{shown}: expected each output on its own path, got the same path as {} {}",
                first.flag,
                first.path.display()
            ));
        }
        seen.push((path, output));
    }
    Ok(())
}

/// [`preflight`] for a command that reads the scenario files `scenarios`: each one's
/// regressions file is an input too (checked to be a regular file or absent), or, with
/// `record` (the option that records, `--record-failures`), an output beside a regular
/// scenario file.
pub fn preflight_scenarios(
    outputs: &[Output],
    scenarios: &[&Path],
    record: Option<&'static str>,
) -> Result<(), String> {
    let mut planned: Vec<Output> = outputs.to_vec();
    let mut inputs: Vec<PathBuf> = Vec::with_capacity(2 * scenarios.len());
    for scenario in scenarios {
        inputs.push(scenario.to_path_buf());
        let regressions = crate::regressions::path_for(scenario);
        crate::regressions::check_path(&regressions)?;
        match record {
            Some(flag) => planned.push(Output::new(
                flag,
                crate::regressions::path_for_recording(scenario)?,
            )),
            None => inputs.push(regressions),
        }
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    preflight(&planned, &inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_of_missing_files_apply_dot_and_dot_dot() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        assert_eq!(
            canonical(&dir.path().join("a/../b/./r.json")),
            base.join("b/r.json")
        );
        std::fs::write(dir.path().join("x"), "").unwrap();
        assert_eq!(canonical(&dir.path().join("./x")), base.join("x"));
    }

    #[test]
    fn a_missing_parent_is_fine_when_its_existing_ancestor_is_writable() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = [Output::new("--out", dir.path().join("a/b/summary.json"))];
        preflight(&outputs, &[]).unwrap();
        assert!(
            !dir.path().join("a").exists(),
            "the check created a directory"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_same_file_twice_is_named_with_both_flags() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = [
            Output::new("--json", dir.path().join("r")),
            Output::new("--junit", dir.path().join("sub/../r")),
        ];
        let message = preflight(&outputs, &[]).unwrap_err();
        assert!(message.starts_with("--junit "), "{message}");
        assert!(message.contains("the same path as --json"), "{message}");
    }

    #[test]
    fn a_scenarios_regressions_file_is_an_input_unless_recording() {
        let dir = tempfile::tempdir().unwrap();
        let scenario = dir.path().join("s.toml");
        std::fs::write(&scenario, "").unwrap();
        let over = [Output::new("--json", dir.path().join("s.regressions"))];
        let message = preflight_scenarios(&over, &[&scenario], None).unwrap_err();
        assert!(
            message.contains("a scenario's regressions file"),
            "{message}"
        );
        preflight_scenarios(&[], &[&scenario], Some("--record-failures")).unwrap();
        let message =
            preflight_scenarios(&over, &[&scenario], Some("--record-failures")).unwrap_err();
        assert!(message.contains("the same path as --json"), "{message}");
    }
}
