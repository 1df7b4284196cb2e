//! `fencesim live` end to end: Ctrl-C (SIGINT) mid-run leaves no etcd, no worker process and
//! no temp directory behind; a scenario live mode cannot run is refused before anything
//! starts. Skipped, with a printed line, when no etcd can be run (`apt-get install
//! etcd-server`).

use std::{
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

const BIN: &str = env!("CARGO_BIN_EXE_fencesim");

fn etcd_or_skip() -> bool {
    match fencesim_live::etcd::etcd_version() {
        Ok(_) => true,
        Err(error) => {
            println!("SKIPPED: no etcd ({error}); install etcd-server to run this test");
            false
        }
    }
}

/// The path of catalogue file `name` (`gc-pause-textbook-etcd-none.toml`).
fn scenario(name: &str) -> String {
    let path = fencesim_testkit::catalogue_dir().join(name);
    path.to_str().unwrap().to_string()
}

/// Every process's `(pid, ppid, command name)` from /proc.
fn processes() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ..." — comm may contain spaces, so split at the last ')'.
        let Some((head, tail)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map_or("", |(_, c)| c).to_string();
        let fields: Vec<&str> = tail.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue; // a zombie is dead
        }
        if let Some(ppid) = fields.get(1).and_then(|p| p.parse().ok()) {
            out.push((pid, ppid, comm));
        }
    }
    out
}

fn descendants(root: u32) -> Vec<(u32, String)> {
    let all = processes();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, ppid, comm) in &all {
            if *ppid == parent {
                found.push((*pid, comm.clone()));
                frontier.push(*pid);
            }
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    processes().iter().any(|(p, _, _)| *p == pid)
}

#[test]
fn ctrl_c_mid_run_leaves_no_process_and_no_temp_directory() {
    if !etcd_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let child = Command::new(BIN)
        .args([
            "live",
            &scenario("gc-pause-textbook-etcd-none.toml"),
            "--runs",
            "1",
        ])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until etcd and both workers run (worker-1 starts at 0.5 s).
    let mut started = Vec::new();
    for _ in 0..300 {
        started = descendants(child.id());
        let etcd = started.iter().any(|(_, c)| c == "etcd");
        let workers = started.iter().filter(|(_, c)| c == "fencesim").count();
        if etcd && workers >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        started.iter().any(|(_, c)| c == "etcd")
            && started.iter().filter(|(_, c)| c == "fencesim").count() >= 2,
        "etcd and two workers should be running, found {started:?}"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "one run directory"
    );
    std::thread::sleep(Duration::from_millis(1_500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted"));
    for (pid, comm) in &started {
        assert!(!alive(*pid), "{comm} (pid {pid}) survived the interrupt");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_scenario_live_mode_cannot_run_is_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let textbook = "gc-pause-textbook-etcd-none.toml";
    // (file, --set overrides, what the message must name). Every row exits 2 before etcd or
    // a worker starts and before a temp directory is made; crates/live/tests/refuse.rs
    // covers every option at the library level.
    let rows: &[(&str, &[&str], &str)] = &[
        ("gc-pause-textbook-none.toml", &[], "`lease.preset`"),
        (
            "preset-etcd-takeover-after-pause.toml",
            &[],
            "`storage.fencing",
        ),
        (textbook, &["lease.ttl_ms=2500"], "`lease.ttl_ms = 2500`"),
        (
            textbook,
            &["lease.ttl_ms=1000", "lease.min_ttl_ms=0"],
            "`lease.ttl_ms = 1000`",
        ),
        (textbook, &["lease.on_restart=drop"], "`lease.on_restart"),
        (
            textbook,
            &["lease.expiry_check_ms=100"],
            "`lease.expiry_check_ms = 100`",
        ),
        (textbook, &["network.loss=0.1"], "`network.loss = 0.1`"),
        (
            textbook,
            &["clocks.random_offset_ms=10"],
            "`clocks.random_offset_ms = 10`",
        ),
        (
            textbook,
            &["faults.schedule[1].node=coordinator"],
            "not the coordinator",
        ),
        (
            textbook,
            &["workers.side_effects=outbox"],
            "`workers.side_effects",
        ),
    ];
    for (file, set, expected) in rows {
        let mut command = Command::new(BIN);
        command.args(["live", &scenario(file), "--runs", "2"]);
        for s in *set {
            command.args(["--set", s]);
        }
        let output = command.env("TMPDIR", tmp.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{file} {set:?}: {stderr}");
        assert!(
            stderr.contains(expected) && stderr.contains(file),
            "{file} {set:?}: {stderr}"
        );
        assert!(
            !String::from_utf8_lossy(&output.stdout).contains("etcd Version"),
            "{file} {set:?}: etcd was asked before the refusal"
        );
    }
    // A bad --sim-seeds fails before any live run, too.
    let output = Command::new(BIN)
        .args([
            "live",
            &scenario(textbook),
            "--compare",
            "--report",
            &tmp.path().join("r.md").display().to_string(),
            "--sim-seeds",
            "5..2",
        ])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--sim-seeds"), "{stderr}");
    for jobs in ["0", "9"] {
        let output = Command::new(BIN)
            .args(["live", &scenario(textbook), "--jobs", jobs])
            .env("TMPDIR", tmp.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "--jobs {jobs}: {stderr}");
        assert!(stderr.contains("--jobs"), "{stderr}");
    }
    assert!(Path::new(tmp.path()).read_dir().unwrap().next().is_none());
}

/// A process's state letter (`R`, `S`, `T` for stopped, ...).
fn state(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, tail) = stat.rsplit_once(')')?;
    tail.split_whitespace().next().map(str::to_string)
}

#[test]
fn sigkill_of_the_supervisor_leaves_no_process_port_or_temp_directory() {
    if !etcd_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args([
            "live",
            &scenario("gc-pause-textbook-etcd-none.toml"),
            "--runs",
            "1",
        ])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until worker-0 is SIGSTOPped (its pause begins at 3 s), the case a watcher inside
    // the worker could never handle: etcd, the guard and two workers run.
    let mut started = Vec::new();
    let mut paused = false;
    for _ in 0..300 {
        started = descendants(child.id());
        paused = started
            .iter()
            .any(|(pid, c)| c == "fencesim" && state(*pid).as_deref() == Some("T"));
        if paused {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(paused, "no paused worker among {started:?}");
    let etcd = started
        .iter()
        .find(|(_, c)| c == "etcd")
        .map(|(pid, _)| *pid)
        .expect("etcd runs");
    assert!(
        started.iter().filter(|(_, c)| c == "fencesim").count() >= 3,
        "two workers and the guard: {started:?}"
    );
    let cmdline = std::fs::read_to_string(format!("/proc/{etcd}/cmdline")).unwrap();
    let port: u16 = cmdline
        .split('\0')
        .find_map(|arg| arg.strip_prefix("--listen-client-urls=http://127.0.0.1:"))
        .and_then(|port| port.parse().ok())
        .expect("etcd's client port");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);

    let status = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait().unwrap();
    let mut left = Vec::new();
    for _ in 0..100 {
        left = started
            .iter()
            .filter(|(pid, _)| alive(*pid))
            .cloned()
            .collect::<Vec<_>>();
        let dir_left = std::fs::read_dir(tmp.path()).unwrap().next().is_some();
        let port_open = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        if left.is_empty() && !dir_left && !port_open {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dirs: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    panic!(
        "5 s after SIGKILL of the supervisor: processes {left:?}, directories {dirs:?}, etcd port {port} open: {}",
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    );
}

#[test]
fn ctrl_c_during_the_compare_simulation_stops_it() {
    if !etcd_or_skip() {
        return;
    }
    // A kept (empty) live history stands in for the live runs, so the simulation starts at
    // once; 100 000 seeds would take minutes.
    let tmp = tempfile::tempdir().unwrap();
    let kept = tmp.path().join("kept");
    let run = kept.join("gc-pause-textbook-etcd-none").join("run-0");
    std::fs::create_dir_all(&run).unwrap();
    // One event: enough to load (an empty history is refused), nothing to judge.
    std::fs::write(
        run.join("history.jsonl"),
        "{\"t_ns\":0,\"node\":\"coordinator\",\"event\":\"granted\",\"scope\":\"job-1\",\"holder\":\"worker-0\",\"token\":1,\"expires_mono_ms\":4000.0}\n",
    )
    .unwrap();
    let report = tmp.path().join("fidelity.md");
    let child = Command::new(BIN)
        .args([
            "live",
            &scenario("gc-pause-textbook-etcd-none.toml"),
            "--runs",
            "1",
            "--compare",
            "--sim-seeds",
            "0..100000",
        ])
        .arg("--from-kept")
        .arg(&kept)
        .arg("--report")
        .arg(&report)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1_500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!report.exists(), "no report after an interrupt");
}
