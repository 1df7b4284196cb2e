//! Output files: a reader sees the old file or the whole new one, never half of one, and
//! an existing non-regular target is never replaced.
//!
//! Where a write goes is decided once, by [`destination`]: a regular file (or nothing yet) is
//! replaced atomically (a temp file `.NAME.PID.N.tmp` beside it, synced, then renamed over it);
//! a symlink to a regular file is written through (the file it points to is replaced, the link
//! stays); a character device (`/dev/null`), a FIFO or a descriptor reached through `/proc`
//! (`/dev/stdout`) is opened and written in place, as a shell's `>>` would; a socket, a block
//! device, a directory or a dangling symlink is refused. Renaming over `/dev/null` would replace
//! it for every process on the machine, and over a FIFO would leave its reader waiting forever.
//!
//! Temp files are registered while they exist, so a signal handler can remove them
//! ([`remove_pending_temps`]); a temp left by a process that was killed outright (SIGKILL,
//! power loss) is removed by the next write into the same directory once its PID is no
//! longer running (Linux: `/proc/PID` absent) and it has not changed for
//! [`STALE_TEMP_SECS`] (a writer in another PID namespace, a container sharing the volume,
//! has a PID this one cannot see). [`OutputSet`] writes a command's every temp first and
//! renames them all together, so a signal leaves the old set or the new one; then it syncs
//! each directory it renamed into, so the new names survive a power loss too.

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

/// Where a write of one output path goes (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// A regular file, or nothing yet: a temp beside this path (the link's target for a
    /// symlink), renamed over it.
    Replace(PathBuf),
    /// An existing character device, FIFO, or a descriptor reached through `/proc`: opened
    /// and appended to in place, never renamed over.
    InPlace(PathBuf),
}

/// Longest file name most file systems take (Linux `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// Longest path the kernel takes, its terminating NUL included (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Bytes a temp name adds to its file's name: `.` + `.PID.N.tmp` with a 10-digit PID and a
/// 20-digit counter.
const TEMP_NAME_EXTRA_BYTES: usize = 1 + 1 + 10 + 1 + 20 + 4;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Whether `dir`, with its symlinks resolved, is under `/proc` (a process's descriptors:
/// `/proc/self/fd/1`, which `/dev/stdout` and `/dev/fd/N` lead to).
fn under_proc(dir: &Path) -> bool {
    fs::canonicalize(dir).is_ok_and(|dir| dir.starts_with("/proc"))
}

fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where a write of `path` goes: follows its symlinks without writing anything. Refuses a path
/// that ends in `/`, a name or path too long to create (with its temp name), a dangling
/// symlink, a directory, a socket and a block device.
pub fn destination(path: &Path) -> io::Result<Destination> {
    use std::os::unix::{ffi::OsStrExt as _, fs::FileTypeExt as _};
    let raw = path.as_os_str().as_bytes();
    if raw.is_empty() || raw.ends_with(b"/") || path.file_name().is_none() {
        return Err(invalid(
            "expected a file path, got a directory path (it ends in `/` or has no file name)"
                .into(),
        ));
    }
    for part in path.components() {
        if part.as_os_str().len() > MAX_NAME_BYTES {
            return Err(invalid(format!(
                "expected every name in the path to be at most {MAX_NAME_BYTES} bytes, got one of {} bytes",
                part.as_os_str().len()
            )));
        }
    }
    let mut current = path.to_path_buf();
    for hop in 0..40 {
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound && hop == 0 => {
                return replace(current);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "expected a file or a symlink to one, got a dangling symlink (to {}, which does not exist)",
                        current.display()
                    ),
                ));
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let dir = dir_of(&current);
            if under_proc(&dir) {
                return Ok(Destination::InPlace(path.to_path_buf()));
            }
            let target = fs::read_link(&current)?;
            current = if target.is_absolute() {
                target
            } else {
                dir.join(target)
            };
        } else if kind.is_file() {
            if under_proc(&dir_of(&current)) {
                return Ok(Destination::InPlace(path.to_path_buf()));
            }
            return replace(current);
        } else if kind.is_char_device() || kind.is_fifo() {
            return Ok(Destination::InPlace(path.to_path_buf()));
        } else {
            let what = if kind.is_dir() {
                "a directory"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_block_device() {
                "a block device"
            } else {
                "a special file"
            };
            return Err(invalid(format!(
                "expected a file path, got {what}{}",
                if hop > 0 { " (through a symlink)" } else { "" }
            )));
        }
    }
    Err(invalid(
        "expected a file path, got a symlink loop (more than 40 links)".into(),
    ))
}

/// [`Destination::Replace`] of `path`, once its temp's name and path are known to fit.
fn replace(path: PathBuf) -> io::Result<Destination> {
    let name = path.file_name().map_or(0, |name| name.len());
    if name + TEMP_NAME_EXTRA_BYTES > MAX_NAME_BYTES {
        return Err(invalid(format!(
            "expected a file name of at most {} bytes (its temp file adds {TEMP_NAME_EXTRA_BYTES}), got {name}",
            MAX_NAME_BYTES - TEMP_NAME_EXTRA_BYTES
        )));
    }
    let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
    let length = absolute.as_os_str().len() + TEMP_NAME_EXTRA_BYTES;
    if length >= MAX_PATH_BYTES {
        return Err(invalid(format!(
            "expected a path of at most {} bytes (its temp file adds {TEMP_NAME_EXTRA_BYTES}), got {}",
            MAX_PATH_BYTES - 1 - TEMP_NAME_EXTRA_BYTES,
            absolute.as_os_str().len()
        )));
    }
    Ok(Destination::Replace(path))
}

/// A fresh temp path beside `target`: `.NAME.PID.N.tmp`.
fn temp_path_for(target: &Path) -> io::Result<PathBuf> {
    let file_name = target
        .file_name()
        .ok_or_else(|| invalid(format!("not a file path: {}", target.display())))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(file_name);
    temp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    Ok(dir_of(target).join(temp_name))
}

/// Creates `temp` (it must not exist) and registers it, under the registry's lock.
fn create_temp(temp: &Path) -> io::Result<fs::File> {
    let mut pending = pending();
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(temp)?;
    pending.insert(temp.to_path_buf());
    Ok(file)
}

/// Removes `temp` and unregisters it (best effort: the original error is the one to report).
fn discard_temp(temp: &Path) {
    let mut pending = pending();
    let _ = fs::remove_file(temp);
    pending.remove(temp);
}

/// Checks, before any work, that `target` (a [`Destination::Replace`]) can be written later:
/// its own temp file is created and removed in its directory, which proves the name fits the
/// file system and the directory is writable. When that directory does not exist yet, a probe
/// is created in `existing_dir`, its nearest existing ancestor, instead; nothing is created
/// that outlives the check. The probe is registered like any temp, so a signal cannot leave it
/// behind, and one a SIGKILL left is removed as stale by a later write or check there.
pub fn probe_temp(target: &Path, existing_dir: &Path) -> io::Result<()> {
    let dir = dir_of(target);
    let probe = if dir.is_dir() {
        temp_path_for(target)?
    } else {
        existing_dir.join(format!(
            ".{PROBE_NAME}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ))
    };
    remove_stale_temps(
        &dir_of(&probe),
        target.file_name().and_then(|name| name.to_str()),
    );
    create_temp(&probe)?;
    let mut pending = pending();
    let removed = fs::remove_file(&probe);
    pending.remove(&probe);
    removed
}

/// Checks that files can be created in `dir` by creating and removing a probe temp file
/// (the probe is registered like any temp, so a signal cannot leave it behind).
pub fn probe_writable(dir: &Path) -> io::Result<()> {
    let probe = dir.join(format!(
        ".{PROBE_NAME}.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    remove_stale_temps(dir, None);
    create_temp(&probe)?;
    let mut pending = pending();
    let removed = fs::remove_file(&probe);
    pending.remove(&probe);
    removed
}

/// The name of the preflight's probe files: `.fencesim-probe.PID.N.tmp`.
const PROBE_NAME: &str = "fencesim-probe";

/// `.NAME.PID.N.tmp`: the PID of a temp of `file_name`, if `entry` is one.
fn temp_owner(entry: &str, file_name: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(file_name)?;
    let rest = rest.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (pid, counter) = rest.split_once('.')?;
    counter.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// How long a temp must be left unchanged before a write may remove it as stale (seconds):
/// an hour, far longer than any fill (a 600 MB Perfetto trace is written in seconds).
pub const STALE_TEMP_SECS: u64 = 3600;

/// Whether the file behind `meta` has not been modified for [`STALE_TEMP_SECS`].
fn untouched_for_long(meta: &fs::Metadata) -> bool {
    meta.modified()
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age.as_secs() >= STALE_TEMP_SECS)
}

/// Removes, in `dir`, temps of `file_name` and the preflight's probes whose writer is no
/// longer running and which have not changed for [`STALE_TEMP_SECS`]. Only where `/proc` shows processes (Linux); elsewhere stale temps stay
/// (they are hidden dot files).
fn remove_stale_temps(dir: &Path, file_name: Option<&str>) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some(pid) = file_name
            .and_then(|file_name| temp_owner(name, file_name))
            .or_else(|| temp_owner(name, PROBE_NAME))
        else {
            continue;
        };
        let regular = entry.file_type().is_ok_and(|kind| kind.is_file());
        let old = entry.metadata().is_ok_and(|meta| untouched_for_long(&meta));
        if regular
            && old
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `contents` to `path` (see the module docs for where it goes): creates missing
/// parent directories, writes a temp file in the same directory (so the rename stays on one
/// file system), syncs it, then renames it over `path`. On error the temp file is removed
/// and `path` is left as it was.
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
    fill: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut set = OutputSet::new();
    set.add_with(path, fill)?;
    set.commit().map_err(|failed| failed.error)
}

/// An output of an [`OutputSet`] that could not be written at commit.
#[derive(Debug)]
pub struct CommitError {
    /// The output path as given.
    pub path: PathBuf,
    /// Why.
    pub error: io::Error,
}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: cannot write: {}", self.path.display(), self.error)
    }
}

impl std::error::Error for CommitError {}

/// One staged output of an [`OutputSet`].
enum Staged {
    /// A written, synced temp file and the file it will be renamed over.
    Temp { temp: PathBuf, target: PathBuf },
    /// Bytes to append to a device, FIFO or descriptor at commit.
    InPlace { path: PathBuf, bytes: Vec<u8> },
}

/// A command's output files, written as one set: every file's temp is written first
/// ([`OutputSet::add`]), then [`OutputSet::commit`] renames them all at once under the temp
/// registry's lock, so a signal (whose handler takes that lock to remove temps) leaves either
/// every old file or every new one. Dropped uncommitted, it removes its temps.
#[derive(Default)]
pub struct OutputSet {
    staged: Vec<Staged>,
}

impl OutputSet {
    /// An empty set.
    pub fn new() -> OutputSet {
        OutputSet::default()
    }

    /// Stages `contents` for `path`.
    pub fn add(&mut self, path: &Path, contents: &[u8]) -> io::Result<()> {
        self.add_with(path, |writer| writer.write_all(contents))
    }

    /// Stages the output `fill` writes for `path`: a temp file beside it, or (for a device,
    /// FIFO or descriptor) the bytes, to be written at commit.
    pub fn add_with(
        &mut self,
        path: &Path,
        fill: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let target = match destination(path)? {
            Destination::InPlace(path) => {
                let mut bytes = Vec::new();
                fill(&mut bytes)?;
                self.staged.push(Staged::InPlace { path, bytes });
                return Ok(());
            }
            Destination::Replace(target) => target,
        };
        fs::create_dir_all(dir_of(&target))?;
        remove_stale_temps(
            &dir_of(&target),
            target.file_name().and_then(|name| name.to_str()),
        );
        let temp = temp_path_for(&target)?;
        if let Err(e) = fill_temp(&temp, fill) {
            discard_temp(&temp);
            return Err(e);
        }
        self.staged.push(Staged::Temp { temp, target });
        Ok(())
    }

    /// Writes the in-place outputs, then renames every temp over its file, all under one lock.
    /// On an error, the temps not yet renamed are removed.
    pub fn commit(mut self) -> Result<(), CommitError> {
        let pause = FILL_PAUSE_MS.load(Ordering::Relaxed);
        if pause > 0 && !self.staged.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
        let staged = std::mem::take(&mut self.staged);
        let (in_place, temps): (Vec<Staged>, Vec<Staged>) = staged
            .into_iter()
            .partition(|staged| matches!(staged, Staged::InPlace { .. }));
        let remove_all = |temps: &[Staged]| {
            for staged in temps {
                if let Staged::Temp { temp, .. } = staged {
                    discard_temp(temp);
                }
            }
        };
        // Outside the lock: a FIFO's write waits for its reader, and a signal must still
        // be able to remove the temps meanwhile.
        for staged in &in_place {
            if let Staged::InPlace { path, bytes } = staged {
                if let Err(error) = write_in_place(path, bytes) {
                    remove_all(&temps);
                    return Err(CommitError {
                        path: path.clone(),
                        error,
                    });
                }
            }
        }
        let mut pending = pending();
        for (index, staged) in temps.iter().enumerate() {
            if let Staged::Temp { temp, target } = staged {
                if let Err(error) = fs::rename(temp, target) {
                    drop(pending);
                    remove_all(&temps[index..]);
                    return Err(CommitError {
                        path: target.clone(),
                        error,
                    });
                }
                pending.remove(temp);
            }
        }
        drop(pending);
        sync_dirs(temps.iter().filter_map(|staged| match staged {
            Staged::Temp { target, .. } => Some(target.as_path()),
            Staged::InPlace { .. } => None,
        }));
        Ok(())
    }
}

/// Syncs the directory of each of `renamed` once, so the renames are on disk (a rename is
/// durable only once its directory is). Best effort: a file system that cannot sync a
/// directory (some network ones refuse) leaves the files written. The directories synced.
fn sync_dirs<'a>(renamed: impl Iterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = renamed.map(dir_of).collect();
    dirs.sort();
    dirs.dedup();
    for dir in &dirs {
        if let Ok(handle) = fs::File::open(dir) {
            let _ = handle.sync_all();
        }
    }
    dirs
}

impl Drop for OutputSet {
    fn drop(&mut self) {
        for staged in &self.staged {
            if let Staged::Temp { temp, .. } = staged {
                discard_temp(temp);
            }
        }
    }
}

/// Creates `temp`, lets `fill` write it, and syncs it.
fn fill_temp(
    temp: &Path,
    fill: impl FnOnce(&mut dyn io::Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut writer = io::BufWriter::new(create_temp(temp)?);
    fill(&mut writer)?;
    let file = writer
        .into_inner()
        .map_err(io::IntoInnerError::into_error)?;
    file.sync_all()
}

/// Appends `bytes` to an existing device, FIFO or descriptor (never creates or truncates).
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    // What the command printed so far comes first when the output is its own stdout.
    let _ = io::stdout().flush();
    let mut file = fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh, empty directory under the system temp dir, removed on drop.
    pub(crate) struct TempDir(pub(crate) PathBuf);

    impl TempDir {
        pub(crate) fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!(
                "fencesim-fs-{tag}-{}-{}",
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
        // A dead writer's temp written a moment ago may be a live writer's in another PID
        // namespace (a container sharing the volume): kept until it is an hour old.
        let recent = format!(".out.txt.{}.1.tmp", u32::MAX - 1);
        let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        for name in [&dead, &live, &unrelated, &recent] {
            let file = fs::File::create(tmp.0.join(name)).unwrap();
            if name != &recent {
                file.set_modified(long_ago).unwrap();
            }
        }
        write_atomic(&tmp.0.join("out.txt"), "whole").unwrap();
        assert_eq!(
            entries(&tmp.0),
            vec![unrelated, live, recent, "out.txt".to_string()]
        );
    }

    #[test]
    fn a_commit_syncs_each_directory_it_renamed_into_once() {
        let tmp = TempDir::new("dirsync");
        let (a, b) = (tmp.0.join("a"), tmp.0.join("b"));
        let targets = [a.join("x"), a.join("y"), b.join("z")];
        for target in &targets {
            fs::create_dir_all(dir_of(target)).unwrap();
        }
        assert_eq!(
            sync_dirs(targets.iter().map(PathBuf::as_path)),
            vec![a, b],
            "each directory once"
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
