//! The guard: a small process per live run (`fencesim live-guard`, the binary itself) that
//! outlives a SIGKILLed supervisor just long enough to clean up after it.
//!
//! The supervisor holds the write end of the guard's stdin and tells it, line by line, every
//! process it starts (`pid N`), every one it has stopped and reaped itself (`done N`), and the
//! run's temp directory (`dir PATH`). When that pipe closes — the supervisor finished, or was
//! killed, even by SIGKILL, which no handler sees — the guard SIGKILLs every process still
//! registered (a SIGSTOPped worker too, which could watch nothing itself; etcd, which cannot
//! watch a pipe) and removes the directory. The workspace forbids `unsafe`, so there is no
//! parent-death signal; a pipe's end of file needs none.
//!
//! A process started but not yet registered when the supervisor dies (SIGKILL between
//! `spawn` and the `pid` line) is found all the same: every process of a run carries
//! [`RUN_MARK`]`=DIR` in its environment ([`Guard::mark`]), and the guard kills every
//! process whose environment names its directory, twice, 50 ms apart (one may still be
//! between fork and exec the first time).

use std::{
    collections::BTreeSet,
    io::{BufRead, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    sync::Mutex,
};

/// The environment variable naming the run's directory in every process of the run.
pub const RUN_MARK: &str = "FENCESIM_LIVE_RUN";

/// The supervisor's side: the pipe to its guard.
#[derive(Debug)]
pub struct Guard {
    stdin: Mutex<Option<ChildStdin>>,
    child: Mutex<Option<Child>>,
    dir: PathBuf,
}

impl Guard {
    /// Starts `exe live-guard` guarding `dir`.
    pub fn start(exe: &Path, dir: &Path) -> Result<Guard, String> {
        let mut child = Command::new(exe)
            .arg("live-guard")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("cannot start the guard {}: {error}", exe.display()))?;
        let stdin = child.stdin.take();
        let guard = Guard {
            stdin: Mutex::new(stdin),
            child: Mutex::new(Some(child)),
            dir: dir.to_path_buf(),
        };
        guard.tell(&format!("dir {}", dir.display()));
        Ok(guard)
    }

    fn tell(&self, line: &str) {
        let mut stdin = self
            .stdin
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(pipe) = stdin.as_mut() {
            // A guard that died early cannot be told; the supervisor still cleans up itself.
            let _ = writeln!(pipe, "{line}").and_then(|()| pipe.flush());
        }
    }

    /// Marks a process about to be started as one of this run's ([`RUN_MARK`]), so the guard
    /// finds it even if the supervisor dies before it is [`Guard::started`].
    pub fn mark(&self, command: &mut Command) {
        command.env(RUN_MARK, &self.dir);
    }

    /// A process the guard must kill if the supervisor dies.
    pub fn started(&self, pid: u32) {
        self.tell(&format!("pid {pid}"));
    }

    /// A process the supervisor has killed and is about to reap: forget it (its number may be
    /// reused once reaped).
    pub fn reaped(&self, pid: u32) {
        self.tell(&format!("done {pid}"));
    }

    /// Closes the pipe and waits for the guard to finish (it kills whatever is still
    /// registered and removes the directory).
    pub fn finish(&self) {
        drop(
            self.stdin
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(),
        );
        if let Some(mut child) = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            let _ = child.wait();
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The guard role: reads the supervisor's lines until end of file, then kills what is still
/// registered and removes the directory. SIGINT and SIGTERM are caught and ignored (a Ctrl-C
/// reaches the whole process group; the supervisor handles it and then closes the pipe).
pub fn run() -> Result<(), String> {
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let ignored = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        signal_hook::flag::register(signal, ignored)
            .map_err(|error| format!("cannot catch signal {signal}: {error}"))?;
    }
    let mut pids = BTreeSet::new();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            break;
        };
        match line.split_once(' ') {
            Some(("pid", pid)) => {
                if let Ok(pid) = pid.parse::<u32>() {
                    pids.insert(pid);
                }
            }
            Some(("done", pid)) => {
                if let Ok(pid) = pid.parse::<u32>() {
                    pids.remove(&pid);
                }
            }
            Some(("dir", dir)) => dirs.push(PathBuf::from(dir)),
            _ => {}
        }
    }
    kill(&pids.iter().copied().chain(marked(&dirs)).collect());
    // One started between fork and exec may carry its mark only now.
    std::thread::sleep(std::time::Duration::from_millis(50));
    kill(&marked(&dirs));
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(())
}

/// SIGKILLs `pids` and waits (at most 2 s) until they are gone.
fn kill(pids: &BTreeSet<u32>) {
    if pids.is_empty() {
        return;
    }
    // `kill` the command: the guard is not these processes' parent, and the workspace
    // forbids the unsafe `libc::kill`.
    let _ = Command::new("kill")
        .arg("-KILL")
        .args(pids.iter().map(u32::to_string))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    // SIGKILL is asynchronous: wait until they are gone, so the directory is not written
    // after its removal and the ports are free when the guard exits.
    for _ in 0..200 {
        if pids.iter().all(|pid| !running(*pid)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Every live process (but this one) whose environment marks it as a process of a run in
/// one of `dirs` ([`RUN_MARK`]).
fn marked(dirs: &[PathBuf]) -> BTreeSet<u32> {
    let marks: Vec<Vec<u8>> = dirs
        .iter()
        .map(|dir| format!("{RUN_MARK}={}", dir.display()).into_bytes())
        .collect();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != std::process::id() && running(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|&byte| byte == 0)
                    .any(|entry| marks.iter().any(|mark| entry == mark.as_slice()))
            })
        })
        .collect()
}

/// Whether `pid` exists and is not a zombie.
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X") | None)
}
