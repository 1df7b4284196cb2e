//! A lease service's process (etcd, ZooKeeper), the one way live mode runs one: spawned with
//! its output appended to a log file and registered with the run's guard, waited for until it
//! answers (its start-up failure quoted from the log), killed with SIGKILL and reaped (a
//! crash), started again on the same data, and killed when dropped.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    sync::Arc,
    time::Duration,
};

use crate::guard::Guard;

/// How often, and how many times, a starting service is asked whether it answers: 20 s.
const READY_POLL: Duration = Duration::from_millis(50);
const READY_POLLS: u32 = 400;

/// One service process, while it runs.
#[derive(Debug)]
pub(crate) struct ServiceProcess {
    /// What it is, for messages (`etcd`, `ZooKeeper`).
    name: &'static str,
    guard: Option<Arc<Guard>>,
    log: PathBuf,
    child: Option<Child>,
}

impl ServiceProcess {
    /// Not started yet: `name` for messages, its output to `log`, registered with `guard`.
    pub(crate) fn new(name: &'static str, log: PathBuf, guard: Option<Arc<Guard>>) -> Self {
        ServiceProcess {
            name,
            guard,
            log,
            child: None,
        }
    }

    /// Starts `command` (the program named `program` in a failure) with its output appended
    /// to the log, then waits until `ready` says it answers; an error quoting the end of the
    /// log when it exits first or does not answer within 20 s (and is killed).
    pub(crate) fn spawn(
        &mut self,
        mut command: Command,
        program: &str,
        ready: impl Fn() -> bool,
    ) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|error| format!("{}: {error}", self.log.display()))?;
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|error| error.to_string())?)
            .stderr(log);
        if let Some(guard) = &self.guard {
            guard.mark(&mut command);
        }
        let child = command
            .spawn()
            .map_err(|error| format!("cannot start {program}: {error}"))?;
        if let Some(guard) = &self.guard {
            guard.started(child.id());
        }
        self.child = Some(child);
        for _ in 0..READY_POLLS {
            if ready() {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                // The log lives in the run's temp directory, removed on the way out: quote it.
                return Err(format!(
                    "{} exited ({status}) during start-up; the end of its log:\n{}",
                    self.name,
                    self.log_tail()
                ));
            }
            std::thread::sleep(READY_POLL);
        }
        self.kill();
        Err(format!(
            "{} did not answer within 20 s; the end of its log:\n{}",
            self.name,
            self.log_tail()
        ))
    }

    /// The process id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last 20 lines of the log, indented.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..]
            .iter()
            .map(|line| format!("    {line}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// SIGKILL (a crash) and reap.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            if let Some(guard) = &self.guard {
                guard.reaped(child.id());
            }
            let _ = child.wait();
        }
    }
}

impl Drop for ServiceProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(dir: &tempfile::TempDir) -> ServiceProcess {
        ServiceProcess::new("sh", dir.path().join("sh.log"), None)
    }

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    #[test]
    fn a_service_that_exits_during_start_up_is_quoted_from_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let mut process = service(&dir);
        let error = process
            .spawn(sh("echo bad flag >&2; exit 3"), "sh", || false)
            .unwrap_err();
        assert!(
            error.starts_with("sh exited (exit status: 3) during start-up"),
            "{error}"
        );
        assert!(error.ends_with("\n    bad flag"), "{error}");
        assert_eq!(process.pid(), None);
    }

    #[test]
    fn a_ready_service_runs_until_killed_and_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let mut process = service(&dir);
        process.spawn(sh("sleep 30"), "sh", || true).unwrap();
        let first = process.pid().expect("running");
        assert!(std::path::Path::new(&format!("/proc/{first}")).exists());
        process.kill();
        assert_eq!(process.pid(), None);
        // Reaped: its /proc entry is gone.
        assert!(!std::path::Path::new(&format!("/proc/{first}")).exists());
        process.spawn(sh("sleep 30"), "sh", || true).unwrap();
        let second = process.pid().expect("running again");
        drop(process);
        assert!(!std::path::Path::new(&format!("/proc/{second}")).exists());
        let error = service(&dir)
            .spawn(Command::new("/no/such/program"), "/no/such/program", || {
                true
            })
            .unwrap_err();
        assert!(
            error.starts_with("cannot start /no/such/program: "),
            "{error}"
        );
    }
}
