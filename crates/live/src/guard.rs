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

use std::{
    collections::BTreeSet,
    io::{BufRead, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    sync::Mutex,
};

/// The supervisor's side: the pipe to its guard.
#[derive(Debug)]
pub struct Guard {
    stdin: Mutex<Option<ChildStdin>>,
    child: Mutex<Option<Child>>,
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
    if !pids.is_empty() {
        // `kill` the command: the guard is not these processes' parent, and the workspace
        // forbids the unsafe `libc::kill`.
        let _ = Command::new("kill")
            .arg("-KILL")
            .args(pids.iter().map(u32::to_string))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // SIGKILL is asynchronous: wait (at most 2 s) until they are gone, so the directory
        // is not written after its removal and the ports are free when the guard exits.
        for _ in 0..200 {
            if pids.iter().all(|pid| !running(*pid)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(())
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
