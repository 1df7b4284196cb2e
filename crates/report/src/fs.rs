//! Atomic file output: a reader sees the old file or the whole new one, never half of one.
//!
//! Temp files (`.NAME.PID.N.tmp` beside the target) are registered while they exist, so a
//! signal handler can remove them ([`remove_pending_temps`]); a temp left by a process that
//! was killed outright (SIGKILL, power loss) is removed by the next write of the same file
//! once its PID is no longer running (Linux: `/proc/PID` absent).

use std::{
    collections::BTreeSet,
    fs,
    io::{self, Write as _},
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex, MutexGuard, PoisonError,
    },
};

/// Distinguishes temp files of concurrent writers in one process (seeds run in parallel).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Temp files that exist right now. A temp is created and registered, and renamed and
/// unregistered, under this lock, so whoever holds it sees every temp on disk.
static PENDING: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Milliseconds to pause between writing a temp and renaming it (a test hook: the interrupt
/// tests need a
/// write window wide enough to signal into). 0: no pause.
static FILL_PAUSE_MS: AtomicU64 = AtomicU64::new(0);

fn pending() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes every temp file this process is writing and keeps the registry locked for good,
/// so no temp is created or renamed afterwards: call it only right before exiting (from a
/// signal handler thread). Returns how many temps were removed.
pub fn remove_pending_temps() -> usize {
    let guard = pending();
    let mut removed = 0;
    for temp in guard.iter() {
        if fs::remove_file(temp).is_ok() {
            removed += 1;
        }
    }
    // Never unlocked: a writer blocked on it can no longer rename a temp into place.
    std::mem::forget(guard);
    removed
}

/// Pauses every later write for `ms` milliseconds before its rename (a test hook: the
/// interrupt tests need a write window wide enough to signal into).
pub fn set_write_pause_ms(ms: u64) {
    FILL_PAUSE_MS.store(ms, Ordering::Relaxed);
}

/// Checks that files can be created in `dir` by creating and removing a probe temp file
/// (the probe is registered like any temp, so a signal cannot leave it behind).
pub fn probe_writable(dir: &Path) -> io::Result<()> {
    let probe = dir.join(format!(
        ".fencesim-probe.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    {
        let mut pending = pending();
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)?;
        pending.insert(probe.clone());
    }
    let mut pending = pending();
    let removed = fs::remove_file(&probe);
    pending.remove(&probe);
    removed
}

/// `.NAME.PID.N.tmp`: the PID of a temp of `file_name`, if `entry` is one.
fn temp_owner(entry: &str, file_name: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(file_name)?;
    let rest = rest.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (pid, counter) = rest.split_once('.')?;
    counter.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Removes temps of `file_name` in `dir` whose writer is no longer running. Only where
/// `/proc` shows processes (Linux); elsewhere stale temps stay (they are hidden dot files).
fn remove_stale_temps(dir: &Path, file_name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| temp_owner(name, file_name)) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `contents` to `path`: creates missing parent directories, writes a temp file in the
/// same directory (so the rename stays on one file system), syncs it, then renames it over
/// `path`. On error the temp file is removed and `path` is left as it was.
pub fn write_atomic(path: &Path, contents: &str) -> io::Result<()> {
    write_atomic_bytes(path, contents.as_bytes())
}

/// [`write_atomic`] for bytes (pictures).
pub fn write_atomic_bytes(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |file| file.write_all(contents))
}

/// Like [`write_atomic`], but `fill` writes the contents (for output produced piecewise).
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut io::BufWriter<fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    let file_name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a file path: {}", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;

    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let temp_path = dir.join(temp_name);
    if let Some(file_name) = file_name.to_str() {
        remove_stale_temps(&dir, file_name);
    }

    let created = {
        let mut pending = pending();
        let created = fs::File::create(&temp_path);
        if created.is_ok() {
            pending.insert(temp_path.clone());
        }
        created
    };
    let result = (|| {
        let mut writer = io::BufWriter::new(created?);
        fill(&mut writer)?;
        let pause = FILL_PAUSE_MS.load(Ordering::Relaxed);
        if pause > 0 {
            writer.flush()?;
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
        let file = writer
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        let mut pending = pending();
        let renamed = fs::rename(&temp_path, path);
        if renamed.is_ok() {
            pending.remove(&temp_path);
        }
        renamed
    })();
    if result.is_err() {
        // Best effort: the original error is the one worth reporting.
        let mut pending = pending();
        let _ = fs::remove_file(&temp_path);
        pending.remove(&temp_path);
    }
    result
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh, empty directory under the system temp dir, removed on drop.
    pub(crate) struct TempDir(pub(crate) PathBuf);

    impl TempDir {
        pub(crate) fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "fencesim-report-{tag}-{}-{}",
                std::process::id(),
                TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn creates_parents_and_leaves_no_temp_file() {
        let tmp = TempDir::new("fs");
        let path = tmp.0.join("a/b/summary.json");
        write_atomic(&path, "one\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "one\n");
        write_atomic(&path, "two\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two\n");
        assert_eq!(
            entries(&tmp.0.join("a/b")),
            vec!["summary.json".to_string()]
        );
    }

    #[test]
    fn failed_fill_keeps_old_file_and_removes_temp() {
        let tmp = TempDir::new("fs-fail");
        let path = tmp.0.join("out.txt");
        write_atomic(&path, "old").unwrap();
        let err = write_atomic_with(&path, |writer| {
            writer.write_all(b"half")?;
            Err(io::Error::other("boom"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "boom");
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(entries(&tmp.0), vec!["out.txt".to_string()]);
    }

    #[test]
    fn rejects_a_path_without_file_name() {
        let err = write_atomic(Path::new("/"), "x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn temp_names_give_their_writer() {
        assert_eq!(temp_owner(".r.json.42.7.tmp", "r.json"), Some(42));
        assert_eq!(temp_owner(".r.json.42.tmp", "r.json"), None);
        assert_eq!(temp_owner(".r.json.x.7.tmp", "r.json"), None);
        assert_eq!(temp_owner(".other.json.42.7.tmp", "r.json"), None);
        assert_eq!(temp_owner("r.json", "r.json"), None);
    }

    #[test]
    fn a_dead_writers_temp_is_removed_by_the_next_write_a_live_ones_is_kept() {
        if !Path::new("/proc/self").exists() {
            return; // Stale temps are only recognised where /proc shows processes.
        }
        let tmp = TempDir::new("stale");
        // PIDs are below 2^22 on Linux, so u32::MAX - 1 is never running.
        let dead = format!(".out.txt.{}.0.tmp", u32::MAX - 1);
        let live = format!(".out.txt.{}.0.tmp", 1);
        let unrelated = format!(".other.txt.{}.0.tmp", u32::MAX - 1);
        for name in [&dead, &live, &unrelated] {
            fs::write(tmp.0.join(name), "half").unwrap();
        }
        write_atomic(&tmp.0.join("out.txt"), "whole").unwrap();
        assert_eq!(
            entries(&tmp.0),
            vec![unrelated, live, "out.txt".to_string()]
        );
    }

    #[test]
    fn probe_leaves_nothing_and_fails_in_a_missing_directory() {
        let tmp = TempDir::new("probe");
        probe_writable(&tmp.0).unwrap();
        assert!(entries(&tmp.0).is_empty());
        assert!(probe_writable(&tmp.0.join("missing")).is_err());
    }
}
