//! The regressions file (proptest's convention): seeds that once contradicted a scenario's
//! expectation, recorded next to the scenario (`foo.toml` → `foo.regressions`) by
//! `fencesim run --record-failures`, `check --record-failures`, `explore --record-failures`
//! and `fencesim soak`, committed, and re-run by `fencesim check` (each under the `--set`
//! overrides it was recorded with), whose verdict they are part of.
//!
//! One JSON object per line (`#` lines are comments):
//! `{"seed":17,"set":["lease.ttl_ms=8000"],"scenario_hash":"…","trace_hash":"…","violated":["I3","I4"]}`
//! — the seed, the `--set` overrides it ran under, the scenario's hash and the run's trace
//! hash then, and what it violated (`panic` / `runaway` for a seed that did not finish).
//! Every entry is validated when the file is read (`fencesim_verdict::recorded::Entry::validate`);
//! a malformed one is an error naming the file, the line and the field. At most
//! [`MAX_ENTRIES`] entries and [`MAX_BYTES`] per file; the file must be a regular file (a FIFO
//! or a device named `*.regressions` is refused, never opened).
//!
//! Recording never loses a seed to a concurrent recorder: [`record`] holds an exclusive lock
//! on `.NAME.regressions.lock` beside the file while it reads, merges and atomically replaces
//! it. It keeps at most a given number of seeds per failure signature (the overrides and what
//! was violated: [`Entry::signature`]), and says how many it left out and why.

use std::{
    io,
    path::{Path, PathBuf},
};

pub use fencesim_verdict::recorded::{compare, what_failed, Entry, Rerun, MAX_ENTRIES};

/// The largest regressions file read (bytes).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// How many seeds with one failure signature recording keeps by default (`--record-limit`).
pub const DEFAULT_PER_SIGNATURE: usize = 10;

/// The regressions file of the scenario file `scenario`: `foo.toml` → `foo.regressions`.
pub fn path_for(scenario: &Path) -> PathBuf {
    scenario.with_extension("regressions")
}

/// The regressions file recording may write for `scenario`: beside a scenario that is a
/// regular file, outside `/dev` and `/proc` (`run /dev/stdin --record-failures` would
/// otherwise create `/dev/stdin.regressions`). The error says what was expected.
pub fn path_for_recording(scenario: &Path) -> Result<PathBuf, String> {
    let refuse = |got: &str| {
        Err(format!(
            "--record-failures: expected a scenario file in a directory of its own (its \
             regressions file goes beside it), got {} ({got})",
            scenario.display()
        ))
    };
    let dir = match scenario.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    if dir.starts_with("/dev") || dir.starts_with("/proc") {
        return refuse(&format!("a file under {}", dir.display()));
    }
    match std::fs::metadata(scenario) {
        Ok(meta) if meta.is_file() => Ok(path_for(scenario)),
        Ok(_) => refuse("not a regular file"),
        Err(e) => refuse(&e.to_string()),
    }
}

/// Whether `path` exists as a regular file (following symlinks); anything else by that name
/// (a FIFO, a device, a directory) is an error and is never opened, so it cannot block.
fn exists_as_file(path: &Path) -> Result<bool, String> {
    use std::os::unix::fs::FileTypeExt as _;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(true),
        Ok(meta) => {
            let kind = meta.file_type();
            let what = if kind.is_fifo() {
                "a FIFO"
            } else if kind.is_char_device() {
                "a character device"
            } else if kind.is_block_device() {
                "a block device"
            } else if kind.is_dir() {
                "a directory"
            } else if kind.is_socket() {
                "a socket"
            } else {
                "a special file"
            };
            Err(format!(
                "{}: expected a regressions file (a regular file of recorded seeds), got {what}",
                path.display()
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // A dangling symlink is refused too: recording would write through it.
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(format!(
                    "{}: expected a regressions file or nothing, got a dangling symlink",
                    path.display()
                ));
            }
            Ok(false)
        }
        Err(e) => Err(format!("{}: cannot read: {e}", path.display())),
    }
}

/// Checks that `path` can be read (absent, or a regular file): what every command does
/// before its first seed, for each regressions file it will read or write.
pub fn check_path(path: &Path) -> Result<(), String> {
    exists_as_file(path).map(|_| ())
}

/// Reads the entries of `path`; a missing file has none. A malformed or invalid entry is an
/// error naming the file, the line, the field and what was expected.
pub fn load(path: &Path) -> Result<Vec<Entry>, String> {
    Ok(load_numbered(path)?
        .into_iter()
        .map(|(_, entry)| entry)
        .collect())
}

/// [`load`], each entry with its 1-based line number.
pub fn load_numbered(path: &Path) -> Result<Vec<(usize, Entry)>, String> {
    if !exists_as_file(path)? {
        return Ok(Vec::new());
    }
    let bytes = fencesim_scenario::input::read_limited(path, MAX_BYTES)
        .map_err(|e| format!("{}: {}", path.display(), e.expected("a regressions file")))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: expected UTF-8 text", path.display()))?;
    // A byte-order mark (an editor on Windows) is not part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut entries = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = format!("{}:{}", path.display(), k + 1);
        let entry: Entry = serde_json::from_str(line).map_err(|e| {
            format!(
                "{at}: expected a recorded seed as one JSON object \
                 {{\"seed\", \"set\", \"scenario_hash\", \"trace_hash\", \"violated\"}}: {e}"
            )
        })?;
        entry
            .validate()
            .map_err(|expected| format!("{at}: {expected}"))?;
        if let Some((first, _)) = entries
            .iter()
            .find(|(_, e): &&(usize, Entry)| e.seed == entry.seed && e.set == entry.set)
        {
            return Err(format!(
                "{at}: seed: expected each seed once per set of overrides, got seed {} again \
                 (first on line {first})",
                entry.seed
            ));
        }
        entries.push((k + 1, entry));
        if entries.len() > MAX_ENTRIES {
            return Err(format!(
                "{}: expected at most {MAX_ENTRIES} recorded seeds",
                path.display()
            ));
        }
    }
    Ok(entries)
}

/// What [`record`] did with the entries it was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Added to the file.
    pub added: usize,
    /// Already in it (the same seed under the same overrides).
    pub known: usize,
    /// Left out: the file already held the most seeds kept per failure signature.
    pub over_signature: usize,
    /// Left out: the file holds [`MAX_ENTRIES`] seeds.
    pub over_file: usize,
}

impl Recorded {
    /// Adds what another call recorded.
    pub fn add(&mut self, other: Recorded) {
        self.added += other.added;
        self.known += other.known;
        self.over_signature += other.over_signature;
        self.over_file += other.over_file;
    }

    /// `N newly recorded in FILE`, and what was left out and why (`per_signature` is the cap
    /// the recording used).
    pub fn describe(&self, path: &Path, per_signature: usize) -> String {
        let mut out = format!("{} newly recorded in {}", self.added, path.display());
        if self.over_signature > 0 {
            out.push_str(&format!(
                "; {} more not recorded: the file keeps the first {per_signature} seeds per \
                 failure (overrides and what was violated; --record-limit)",
                self.over_signature
            ));
        }
        if self.over_file > 0 {
            out.push_str(&format!(
                "; {} more not recorded: the file holds its maximum of {MAX_ENTRIES} seeds \
                 (fix or prune the recorded failures)",
                self.over_file
            ));
        }
        out
    }
}

/// The lock file of the regressions file `path`: `.NAME.regressions.lock` beside it.
pub fn lock_path(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(Default::default, |name| {
        let mut lock = std::ffi::OsString::from(".");
        lock.push(name);
        lock.push(".lock");
        lock
    });
    path.with_file_name(name)
}

/// Adds the `new` entries not already recorded (same seed and overrides) to `path`, at most
/// `per_signature` per failure signature counting those already there and at most
/// [`MAX_ENTRIES`] in all, in the order given. Holds an exclusive lock on [`lock_path`] while
/// it reads, merges and atomically replaces the file, so concurrent recorders (processes
/// too) lose nothing.
pub fn record(
    path: &Path,
    scenario_file: &str,
    new: &[Entry],
    per_signature: usize,
) -> Result<Recorded, String> {
    let mut done = Recorded::default();
    if new.is_empty() {
        return Ok(done);
    }
    let lock_file = lock_path(path);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_file)
        .map_err(|e| format!("{}: cannot create the lock file: {e}", lock_file.display()))?;
    lock.lock()
        .map_err(|e| format!("{}: cannot lock: {e}", lock_file.display()))?;
    let mut entries = load(path)?;
    for entry in new {
        if entries
            .iter()
            .any(|e| e.seed == entry.seed && e.set == entry.set)
        {
            done.known += 1;
        } else if entries.len() >= MAX_ENTRIES {
            done.over_file += 1;
        } else if entries
            .iter()
            .filter(|e| e.signature() == entry.signature())
            .count()
            >= per_signature
        {
            done.over_signature += 1;
        } else {
            entries.push(entry.clone());
            done.added += 1;
        }
    }
    if done.added > 0 {
        let mut text = format!(
            "# fencesim regressions of {scenario_file}: seeds that contradicted its expectation,\n\
             # re-run by `fencesim check`. Commit this file. One JSON object per line.\n"
        );
        for entry in &entries {
            text.push_str(&serde_json::to_string(entry).expect("entries serialize"));
            text.push('\n');
        }
        crate::fs::write_atomic(path, &text)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    drop(lock);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seed: u64) -> Entry {
        Entry {
            seed,
            set: vec![],
            scenario_hash: "0123456789abcdef".into(),
            trace_hash: "fedcba9876543210".into(),
            violated: vec!["I3".into()],
        }
    }

    #[test]
    fn record_adds_only_new_seeds_and_load_reads_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.regressions");
        assert_eq!(load(&path).unwrap(), vec![]);
        assert_eq!(
            record(&path, "s.toml", &[entry(3), entry(5)], 10)
                .unwrap()
                .added,
            2
        );
        let again = record(&path, "s.toml", &[entry(5), entry(7)], 10).unwrap();
        assert_eq!((again.added, again.known), (1, 1));
        let mut other = entry(5);
        other.set = vec!["lease.ttl_ms=1".into()];
        assert_eq!(
            record(&path, "s.toml", &[other.clone()], 10).unwrap().added,
            1
        );
        let back = load(&path).unwrap();
        assert_eq!(back, vec![entry(3), entry(5), entry(7), other]);
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("# fencesim regressions"));
        assert!(lock_path(&path).ends_with(".s.regressions.lock"));
    }

    #[test]
    fn a_byte_order_mark_before_the_first_entry_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.regressions");
        record(&path, "s.toml", &[entry(3)], 10).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let first_entry = text.lines().find(|l| !l.starts_with('#')).unwrap();
        std::fs::write(&path, format!("\u{feff}{first_entry}\n")).unwrap();
        assert_eq!(load(&path).unwrap(), vec![entry(3)]);
    }

    #[test]
    fn recording_keeps_the_first_seeds_of_each_signature_and_counts_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.regressions");
        let mut panics = entry(100);
        panics.violated = vec!["panic".into()];
        let mut batch: Vec<Entry> = (0..5).map(entry).collect();
        batch.push(panics);
        let done = record(&path, "s.toml", &batch, 3).unwrap();
        assert_eq!((done.added, done.over_signature), (4, 2));
        // The cap counts what the file already holds.
        let done = record(&path, "s.toml", &[entry(9)], 3).unwrap();
        assert_eq!((done.added, done.over_signature), (0, 1));
        let seeds: Vec<u64> = load(&path).unwrap().iter().map(|e| e.seed).collect();
        assert_eq!(seeds, [0, 1, 2, 100]);
        assert!(done
            .describe(&path, 3)
            .contains("1 more not recorded: the file keeps the first 3 seeds per failure"));
        // The file's own maximum: what fits is kept, the rest counted.
        let many: Vec<Entry> = (1000..1000 + MAX_ENTRIES as u64).map(entry).collect();
        let done = record(&path, "s.toml", &many, usize::MAX).unwrap();
        assert_eq!((done.added, done.over_file), (MAX_ENTRIES - 4, 4));
        assert_eq!(load(&path).unwrap().len(), MAX_ENTRIES);
    }

    #[test]
    fn a_malformed_or_invalid_line_names_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.regressions");
        let good = serde_json::to_string(&entry(1)).unwrap();
        for (line, expected) in [
            (
                "{\"seed\":\"x\"}".to_string(),
                "s.regressions:3: expected a recorded seed",
            ),
            (
                good.replace("\"I3\"", "\"I7\""),
                "s.regressions:3: violated: expected names",
            ),
            (
                good.replace("\"set\":[]", "\"set\":[\"oops\"]"),
                "s.regressions:3: set: ",
            ),
            (
                good.replace("0123456789abcdef", "0123"),
                "s.regressions:3: scenario_hash:",
            ),
            (
                good.clone(),
                "s.regressions:3: seed: expected each seed once",
            ),
        ] {
            std::fs::write(&path, format!("# c\n{good}\n{line}\n")).unwrap();
            let e = load(&path).unwrap_err();
            assert!(e.contains(expected), "{e}");
        }
        assert_eq!(
            path_for(Path::new("a/b.toml")),
            PathBuf::from("a/b.regressions")
        );
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("s.regressions");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opening a FIFO with no writer would block: the error comes back at once.
        let e = load(&fifo).unwrap_err();
        assert!(e.contains("got a FIFO"), "{e}");
        assert!(record(&fifo, "s.toml", &[entry(1)], 10)
            .unwrap_err()
            .contains("got a FIFO"));
        assert!(check_path(Path::new("/dev/null"))
            .unwrap_err()
            .contains("a character device"));
        let e = path_for_recording(Path::new("/dev/stdin")).unwrap_err();
        assert!(e.contains("expected a scenario file in a directory"), "{e}");
    }
}
