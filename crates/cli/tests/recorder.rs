//! docs/recorder/etcd_recorder.py runs: against a real etcd, two workers record a history
//! (worker-A stops itself with SIGSTOP in the middle of its work, past its lease's TTL;
//! worker-B takes the lock and writes; worker-A resumes and writes with its old token), and
//! `fencesim check-history` judges it: with an unfenced store the stale write is accepted
//! (I3 and I4, exit 1); with the txn-fenced store it is rejected (no violation, exit 0).
//! Skipped, with a printed line, when etcd or python3 cannot be run (as the live tests).

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

use fencesim_live::etcd::{etcd_version, Server};

const BIN: &str = env!("CARGO_BIN_EXE_fencesim");

fn recorder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/recorder/etcd_recorder.py")
}

fn tools_or_skip() -> bool {
    if let Err(error) = etcd_version() {
        println!("SKIPPED: no etcd ({error}); install etcd-server to run this test");
        return false;
    }
    match Command::new("python3").arg("--version").output() {
        Ok(output) if output.status.success() => true,
        _ => {
            println!("SKIPPED: no python3 to run docs/recorder/etcd_recorder.py");
            false
        }
    }
}

fn python(args: &[&str]) -> Command {
    let mut command = Command::new("python3");
    command.arg(recorder()).args(args);
    command
}

/// Waits up to 60 s for `done`, panicking with `what` after.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..600 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("not within 60 s: {what}");
}

fn contains(file: &Path, text: &str) -> bool {
    std::fs::read_to_string(file).is_ok_and(|content| content.contains(text))
}

/// The process state letter from /proc (`T`: stopped).
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args(["-s", name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {name}");
}

fn wait_ok(child: &mut Child, what: &str) {
    let status = child.wait().unwrap();
    assert!(status.success(), "{what} exited {status}");
}

/// Records the two-worker history on `endpoint` with `fencing` (`none` or `txn`) into `dir`
/// and returns `fencesim check-history`'s (exit code, stdout).
fn record_and_check(dir: &Path, endpoint: &str, fencing: &str) -> (i32, String) {
    let scope = format!("job-{fencing}");
    let (watch_out, a_out, b_out) = (
        dir.join("etcd.jsonl"),
        dir.join("a.jsonl"),
        dir.join("b.jsonl"),
    );
    let mut watcher = python(&["watch", "--endpoint", endpoint, "--out"])
        .arg(&watch_out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The watch is in place before anyone takes the lock.
    let mut ready = String::new();
    BufReader::new(watcher.stderr.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert!(ready.starts_with("watching from revision"), "{ready:?}");
    let worker = |name: &str, out: &Path, extra: &[&str]| {
        python(&[
            "worker",
            "--endpoint",
            endpoint,
            "--scope",
            &scope,
            "--name",
            name,
            "--fencing",
            fencing,
            "--ttl",
            "2",
            "--work",
            "0.3",
        ])
        .args(extra)
        .arg("--out")
        .arg(out)
        .spawn()
        .unwrap()
    };
    let mut a = worker(
        "worker-A",
        &a_out,
        &["--writes", "4", "--stop-after-writes", "1"],
    );
    wait_until("worker-A holds the lock", || {
        contains(&a_out, "belief-started")
    });
    let mut b = worker("worker-B", &b_out, &["--writes", "3"]);
    wait_until("worker-A stopped itself", || state(a.id()) == Some('T'));
    // B gets the lock only once A's lease has expired, writes, and releases.
    wait_ok(&mut b, "worker-B");
    wait_until("the watch saw worker-B's release", || {
        contains(&watch_out, "\"released\"")
    });
    signal(&a, "CONT");
    wait_ok(&mut a, "worker-A");
    signal(&watcher, "TERM");
    let _ = watcher.wait();
    let merged = python(&["merge"])
        .args([&watch_out, &a_out, &b_out])
        .output()
        .unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let history = dir.join("history.jsonl");
    std::fs::write(&history, &merged.stdout).unwrap();
    let text = String::from_utf8(merged.stdout).unwrap();
    // What the watch and the workers saw, in the merged order.
    for expected in [
        "\"event\": \"granted\", \"scope\": \"SCOPE\", \"holder\": \"worker-A\"",
        "\"event\": \"expired\", \"scope\": \"SCOPE\", \"holder\": \"worker-A\"",
        "\"event\": \"granted\", \"scope\": \"SCOPE\", \"holder\": \"worker-B\"",
        "\"event\": \"released\", \"scope\": \"SCOPE\", \"holder\": \"worker-B\"",
    ] {
        let expected = expected.replace("SCOPE", &scope);
        assert!(text.contains(&expected), "{expected} in\n{text}");
    }
    let output = Command::new(BIN)
        .arg("check-history")
        .arg(&history)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (
        output.status.code().unwrap_or(-1),
        format!("{stdout}\n--- history\n{text}"),
    )
}

#[test]
fn the_etcd_recorder_records_a_history_check_history_judges() {
    if !tools_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), None).unwrap();
    let endpoint = format!("http://{}", server.client().addr);

    let unfenced = dir.path().join("none");
    std::fs::create_dir(&unfenced).unwrap();
    let (code, out) = record_and_check(&unfenced, &endpoint, "none");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("verdict: VIOLATED I3, I4"), "{out}");
    for judged in ["I1 judged", "I2 judged", "I3 judged", "I4 judged"] {
        assert!(out.contains(judged), "{judged}: {out}");
    }

    let fenced = dir.path().join("txn");
    std::fs::create_dir(&fenced).unwrap();
    let (code, out) = record_and_check(&fenced, &endpoint, "txn");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("verdict: no violation of the invariants judged"),
        "{out}"
    );
    assert!(out.contains("\"event\": \"write-rejected\""), "{out}");
    drop(server);
}
