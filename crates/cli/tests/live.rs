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

#[test]
fn a_fault_only_a_later_runs_seed_draws_is_refused_before_anything_starts() {
    // Random partitions (a worker isolated from every node, the SQLite store too, which live
    // mode cannot cut): some seeds draw none in the run, others do.
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(scenario("gc-pause-textbook-etcd-none.toml")).unwrap();
    let at = base.find("[expect]").unwrap();
    let random = "[[faults.random]]\nkind = \"partition\"\nrate_per_min = 1.0\nduration_ms = { dist = \"uniform\", min = 100, max = 200 }\n\n";
    let text = format!("{}{random}{}", &base[..at], &base[at..]);
    let draws = tmp.path().join("draws.toml");
    std::fs::write(&draws, &text).unwrap();
    let loaded = fencesim_scenario::load(&draws).unwrap();
    let refused = |seed: u64| fencesim_live::live_plan(&loaded, seed).is_err();
    // An accepted seed followed, within 40 seeds, by a refused one.
    let start = (0..200)
        .find(|&seed| !refused(seed) && (seed + 1..seed + 40).any(refused))
        .expect("an accepted seed before a refused one");
    let later = (start + 1..).find(|&seed| refused(seed)).unwrap();
    let file = tmp.path().join("random-partitions.toml");
    std::fs::write(
        &file,
        text.replace(
            "seeds = \"0..40\"",
            &format!("seeds = \"{start}..{}\"", start + 100),
        ),
    )
    .unwrap();
    let runs = (later - start + 1).to_string();
    let run_dirs = tmp.path().join("runs");
    std::fs::create_dir(&run_dirs).unwrap();
    let before_ns = fencesim_live::record::now_unix_ns();
    let output = Command::new(BIN)
        .arg("live")
        .arg(&file)
        .args(["--runs", &runs])
        .env("TMPDIR", &run_dirs)
        .output()
        .unwrap();
    let took_ms = (fencesim_live::record::now_unix_ns() - before_ns) / 1_000_000;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    for expected in [
        "random-partitions.toml",
        &format!("(seed {later})"),
        "partition",
    ] {
        assert!(stderr.contains(expected), "{expected:?} in {stderr}");
    }
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("etcd Version"),
        "etcd was asked before the refusal"
    );
    assert!(took_ms < 2_000, "refused after {took_ms} ms");
    assert!(std::fs::read_dir(&run_dirs).unwrap().next().is_none());
    println!("refused in {took_ms} ms: {stderr}");
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
    let killed_ns = fencesim_live::record::now_unix_ns();
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
            println!(
                "nothing left {} ms after SIGKILL",
                (fencesim_live::record::now_unix_ns() - killed_ns) / 1_000_000
            );
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
    let mut child = Command::new(BIN)
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
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The live side's summary is the last line before the simulation starts.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("live takeover window") {
        line.clear();
        let read = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(read > 0, "the command ended before the simulation");
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "still simulating");
    let sent_ns = fencesim_live::record::now_unix_ns();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stopped = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let waited_ms = (fencesim_live::record::now_unix_ns() - sent_ns) / 1_000_000;
        if waited_ms > 3_000 {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("still simulating {waited_ms} ms after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    println!(
        "stopped {} ms after SIGINT",
        (fencesim_live::record::now_unix_ns() - sent_ns) / 1_000_000
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(stopped.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!report.exists(), "no report after an interrupt");
}

/// Network cuts need a private network namespace with nftables (root): `false`, with the
/// reason printed, when this machine cannot make one.
fn netns_or_skip() -> bool {
    match fencesim_live::netns::available() {
        Ok(()) => true,
        Err(error) => {
            println!("SKIPPED: {error}");
            false
        }
    }
}

/// worker-0 holds the lease (worker-1 starts 500 ms late), then is cut off etcd at 1.5 s for
/// 3 s while it still reaches the SQLite store. Short timeouts keep the run to about 30 s.
const HOLDER_CUT: &str = r#"
name = "live-holder-cut"
description = "worker-0, the holder, cut off etcd for 3 s: worker-1 takes over; sql fencing rejects worker-0's late writes."
duration_ms = 6_000
seeds = "0..1"

[lease]
preset = "etcd"
ttl_ms = 2_000

[storage]
fencing = "sql"

[workers]
count = 2
resources = ["job-1"]
work_ms = { dist = "uniform", min = 20, max = 60 }
writes_per_lease = 1_000
request_timeout_ms = 200
acquire_retry_ms = 20

[[faults.schedule]]
at_ms = 0
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 500

[[faults.schedule]]
at_ms = 1_500
kind = "partition"
nodes = ["worker-0"]
peers = ["coordinator"]
duration_ms = 3_000

[expect]
safe = true
coverage = ["takeover"]
"#;

/// Each event of a kept history as `(t_ms, node, event name, the whole line)`.
fn events(history: &str) -> Vec<(f64, String, String, serde_json::Value)> {
    history
        .lines()
        .skip(1)
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let text = |field: &str| value[field].as_str().unwrap_or("").to_string();
            (
                value["t_ns"].as_f64().unwrap() / 1e6,
                text("node"),
                text("event"),
                value,
            )
        })
        .collect()
}

#[test]
fn a_holder_cut_off_etcd_for_real_loses_its_lease_and_its_renewals() {
    if !etcd_or_skip() || !netns_or_skip() {
        return;
    }
    holder_cut(HOLDER_CUT, "worker-0", "worker-1");
}

#[test]
fn a_holder_link_cut_cuts_the_worker_etcd_names_as_the_holder() {
    if !etcd_or_skip() || !netns_or_skip() {
        return;
    }
    // worker-1 holds the lease this time (worker-0 starts late), and the supervisor asks etcd
    // who holds it at 1.5 s: worker-1, not worker-0, whom the simulator cuts when none is held.
    let late = "nodes = [\"worker-1\"]\npeers = [\"coordinator\"]\nduration_ms = 500";
    let explicit = "kind = \"partition\"\nnodes = [\"worker-0\"]\npeers = [\"coordinator\"]\nduration_ms = 3_000";
    assert!(HOLDER_CUT.contains(late) && HOLDER_CUT.contains(explicit));
    let scenario = HOLDER_CUT
        .replace(explicit, "kind = \"holder-link-cut\"\nduration_ms = 3_000")
        .replace(late, &late.replace("worker-1", "worker-0"));
    holder_cut(&scenario, "worker-1", "worker-0");
}

/// Runs `scenario` (HOLDER_CUT or a variant) live once: `holder`, holding the lease, is cut
/// off etcd from 1.5 s to 4.5 s and `other` takes over.
fn holder_cut(scenario: &str, holder: &str, other: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("live-holder-cut.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = tmp.path().join("kept");
    let run_dirs = tmp.path().join("runs");
    std::fs::create_dir(&run_dirs).unwrap();
    let output = Command::new(BIN)
        .arg("live")
        .arg(&file)
        .args(["--runs", "1", "--out"])
        .arg(&out)
        .env("TMPDIR", &run_dirs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("takeover window"), "{stdout}");
    let history = std::fs::read_to_string(out.join("live-holder-cut/run-0/history.jsonl")).unwrap();
    let events = events(&history);
    let at = |name: &str| {
        events
            .iter()
            .find(|(_, _, event, _)| event == name)
            .map(|(t, ..)| *t)
            .unwrap_or_else(|| panic!("no {name} in {history}"))
    };
    let (cut, healed) = (at("partition-started"), at("partition-healed"));
    let started = events
        .iter()
        .find(|(_, _, event, _)| event == "partition-started")
        .map(|(.., value)| value.clone())
        .unwrap();
    assert_eq!(started["from"], serde_json::json!([holder]), "{started}");
    assert!(
        (1_400.0..1_700.0).contains(&cut) && (4_400.0..4_700.0).contains(&healed),
        "cut {cut} ms, healed {healed} ms"
    );
    // The real cut: etcd renews none of the holder's leases while it lasts (one request
    // timeout for the keepalive already on its way), and the holder sees its keepalives fail.
    let renewed_in_cut: Vec<f64> = events
        .iter()
        .filter(|(t, _, event, value)| {
            event == "renewed" && value["holder"] == holder && *t > cut + 200.0 && *t < healed
        })
        .map(|(t, ..)| *t)
        .collect();
    assert!(
        renewed_in_cut.is_empty(),
        "renewed through the cut at {renewed_in_cut:?} ms"
    );
    assert!(
        events.iter().any(|(t, node, event, _)| node == holder
            && event == "renew-failed"
            && (cut..healed).contains(t)),
        "{holder} saw no failed keepalive in the cut: {history}"
    );
    // etcd expires the holder's lease and grants the other worker while the holder is cut off.
    let takeover = events
        .iter()
        .find(|(t, _, event, value)| event == "granted" && value["holder"] == other && *t > cut)
        .map(|(t, ..)| *t)
        .unwrap_or_else(|| panic!("{other} is granted the lease after the cut: {history}"));
    assert!(
        takeover < healed,
        "takeover at {takeover} ms, after the heal at {healed} ms"
    );
    assert!(
        std::fs::read_dir(&run_dirs).unwrap().next().is_none(),
        "the run's temp directory is gone"
    );
}

/// The network namespace of `pid` (`net:[inode]`).
fn netns_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/ns/net"))
        .ok()
        .map(|link| link.display().to_string())
}

#[test]
fn sigkill_of_a_supervisor_in_its_network_namespace_leaves_no_process_or_namespace() {
    if !etcd_or_skip() || !netns_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("live-holder-cut.toml");
    std::fs::write(&file, HOLDER_CUT).unwrap();
    let run_dirs = tmp.path().join("runs");
    std::fs::create_dir(&run_dirs).unwrap();
    let mut child = Command::new(BIN)
        .arg("live")
        .arg(&file)
        .args(["--runs", "1"])
        .env("TMPDIR", &run_dirs)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until etcd, the guard and both workers run (worker-1 from 0.5 s), then into the cut.
    let mut started = Vec::new();
    for _ in 0..300 {
        started = descendants(child.id());
        if started.iter().any(|(_, c)| c == "etcd")
            && started.iter().filter(|(_, c)| c == "fencesim").count() >= 3
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let etcd = started
        .iter()
        .find(|(_, c)| c == "etcd")
        .map(|(pid, _)| *pid)
        .unwrap_or_else(|| panic!("etcd runs: {started:?}"));
    let namespace = netns_of(etcd).unwrap();
    assert_ne!(
        Some(&namespace),
        netns_of(std::process::id()).as_ref(),
        "etcd runs in a namespace of its own"
    );
    assert_eq!(
        netns_of(child.id()).as_ref(),
        Some(&namespace),
        "and the supervisor with it"
    );
    std::thread::sleep(Duration::from_millis(2_000));
    started = descendants(child.id());
    assert!(started.iter().filter(|(_, c)| c == "fencesim").count() >= 3);

    let killed_ns = fencesim_live::record::now_unix_ns();
    let elapsed_ms = || (fencesim_live::record::now_unix_ns() - killed_ns) / 1_000_000;
    Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    loop {
        let left: Vec<_> = started.iter().filter(|(pid, _)| alive(*pid)).collect();
        let in_namespace: Vec<u32> = processes()
            .iter()
            .map(|(pid, ..)| *pid)
            .filter(|pid| netns_of(*pid).as_ref() == Some(&namespace))
            .collect();
        let dir_left = std::fs::read_dir(&run_dirs).unwrap().next().is_some();
        if left.is_empty() && in_namespace.is_empty() && !dir_left {
            println!("nothing left {} ms after SIGKILL", elapsed_ms());
            return;
        }
        assert!(
            elapsed_ms() < 5_000,
            "5 s after SIGKILL: processes {left:?}, in {namespace}: {in_namespace:?}, a directory left: {dir_left}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_guard_kills_a_marked_process_never_registered_and_spares_other_runs() {
    // A supervisor SIGKILLed between starting a process and telling its guard: the guard
    // finds it by the run's mark in its environment.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fencesim-live-run");
    std::fs::create_dir(&dir).unwrap();
    let other = tmp.path().join("fencesim-live-other-run");
    let sleeper = |mark: &Path| {
        Command::new("sleep")
            .arg("60")
            .env(fencesim_live::guard::RUN_MARK, mark)
            .spawn()
            .unwrap()
    };
    let mut unregistered = sleeper(&dir);
    let mut registered = sleeper(Path::new("/elsewhere"));
    let mut spared = sleeper(&other);
    let mut guard = Command::new(BIN)
        .arg("live-guard")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = guard.stdin.take().unwrap();
        std::io::Write::write_all(
            &mut stdin,
            format!("dir {}\npid {}\n", dir.display(), registered.id()).as_bytes(),
        )
        .unwrap();
    } // the pipe closes: the supervisor is gone
    assert!(guard.wait().unwrap().success());
    for (name, child) in [
        ("the unregistered process", &mut unregistered),
        ("the registered process", &mut registered),
    ] {
        let status = child.try_wait().unwrap();
        assert!(
            status.is_some_and(|s| !s.success()),
            "{name} survived: {status:?}"
        );
    }
    assert!(!dir.exists(), "the run's directory is gone");
    assert!(
        spared.try_wait().unwrap().is_none(),
        "another run's process was killed"
    );
    spared.kill().unwrap();
    spared.wait().unwrap();
}
