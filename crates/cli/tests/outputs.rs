//! Where outputs go when the target already exists and is not a regular file, and the output
//! paths the preflight must refuse before any work (hardening round 3). Devices are tested
//! only in a private mount namespace (`unshare -m`, a tmpfs over `/dev` with its own
//! `null` and `full` nodes), never on the host's `/dev`; FIFOs and symlinks in a temp dir.

mod util;

use std::{
    os::unix::fs::FileTypeExt as _,
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use util::fencesim;

/// A small history with one I4 violation (`check-history` exits 1 on it).
const HISTORY: &str = concat!(
    r#"{"t_ns":0,"node":"lock","event":"granted","scope":"job","holder":"a","token":7,"expires_mono_ms":10000.0}"#,
    "\n",
    r#"{"t_ns":10000000000,"node":"lock","event":"expired","scope":"job","holder":"a","token":7}"#,
    "\n",
    r#"{"t_ns":10000000000,"node":"lock","event":"granted","scope":"job","holder":"b","token":8,"expires_mono_ms":20000.0}"#,
    "\n",
    r#"{"t_ns":15000000000,"node":"db","event":"write-accepted","op":1,"resource":"job","lease_scope":"job","writer":"a","token":7,"previous":null}"#,
    "\n",
);

fn with_history() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.jsonl"), HISTORY).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Reads the FIFO at `path` to its end on a thread (a reader must be there for the writer).
fn read_fifo(path: &Path) -> std::thread::JoinHandle<String> {
    let path = path.to_path_buf();
    std::thread::spawn(move || std::fs::read_to_string(path).unwrap())
}

#[test]
fn an_existing_fifo_output_is_written_in_place_and_stays_a_fifo() {
    let dir = with_history();
    let fifo = dir.path().join("out.json");
    mkfifo(&fifo);
    let reader = read_fifo(&fifo);
    let (code, stdout, stderr) = fencesim(
        &["check-history", "h.jsonl", "--json", "out.json"],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let json = reader.join().unwrap();
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["verdict"], "violated", "{json}");
    // Renaming a temp file over it would have turned the FIFO into a regular file (and left
    // its reader waiting forever).
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "{kind:?}");
}

#[test]
fn a_symlink_to_a_regular_file_is_written_through_and_stays_a_symlink() {
    let dir = with_history();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/report.json"), "old").unwrap();
    std::os::unix::fs::symlink("real/report.json", dir.path().join("link.json")).unwrap();
    let (code, stdout, stderr) = fencesim(
        &["check-history", "h.jsonl", "--json", "link.json"],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let link = std::fs::symlink_metadata(dir.path().join("link.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the symlink was replaced");
    let text = std::fs::read_to_string(dir.path().join("real/report.json")).unwrap();
    assert!(text.contains("\"verdict\": \"violated\""), "{text}");
    // No temp file left beside either.
    for sub in ["", "real"] {
        let names: Vec<String> = std::fs::read_dir(dir.path().join(sub))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }
}

#[test]
fn a_symlink_into_proc_self_fd_is_written_in_place() {
    // `out.json` → /proc/self/fd/1, like /dev/stdout, but in a temp dir: the writer's own
    // stdout (a pipe here) receives the report, and the link stays.
    let dir = with_history();
    std::os::unix::fs::symlink("/proc/self/fd/1", dir.path().join("out.json")).unwrap();
    let (code, stdout, stderr) = fencesim(
        &["check-history", "h.jsonl", "--json", "out.json"],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let json_start = stdout.find("{\n").expect("the report on stdout");
    let report: serde_json::Value = serde_json::from_str(
        stdout[json_start..]
            .split("JSON report written")
            .next()
            .unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(report["verdict"], "violated");
    let link = std::fs::symlink_metadata(dir.path().join("out.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the symlink was replaced");
}

#[test]
fn replay_writes_every_picture_and_trace_into_fifos_in_place() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        std::fs::read_to_string(util::catalogue("gc-pause-textbook-none")).unwrap(),
    )
    .unwrap();
    let mut readers = Vec::new();
    for name in ["p.svg", "p.png", "t.perfetto.json", "t.jsonl"] {
        let fifo = dir.path().join(name);
        mkfifo(&fifo);
        readers.push((fifo.clone(), read_fifo_bytes(&fifo)));
    }
    let (code, stdout, stderr) = fencesim(
        &[
            "replay",
            "s.toml",
            "--seed",
            "0",
            "--svg",
            "p.svg",
            "--png",
            "p.png",
            "--perfetto",
            "t.perfetto.json",
            "--trace",
            "t.jsonl",
        ],
        dir.path(),
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    for (fifo, reader) in readers {
        let bytes = reader.join().unwrap();
        assert!(
            bytes.len() > 100,
            "{}: {} bytes",
            fifo.display(),
            bytes.len()
        );
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{}: {kind:?}", fifo.display());
    }
}

fn read_fifo_bytes(path: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    let path = path.to_path_buf();
    std::thread::spawn(move || std::fs::read(path).unwrap())
}

/// Runs `script` with `sh` in a private mount namespace whose `/dev` is a fresh tmpfs with
/// its own `null` (1,3) and `full` (1,7) device nodes: the host's `/dev` is never written.
/// `None` where that namespace cannot be made (no `unshare`, not root).
fn in_private_dev(dir: &Path, script: &str) -> Option<String> {
    let setup = "mount -t tmpfs fencesim-dev /dev && mknod -m 666 /dev/null c 1 3 && \
                 mknod -m 666 /dev/full c 1 7 || exit 99";
    let output = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(format!("{setup}\n{script}"))
        .env("BIN", env!("CARGO_BIN_EXE_fencesim"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if output.status.code() == Some(99) || !output.status.success() {
        eprintln!(
            "no private mount namespace here ({}); the device cases are not run",
            String::from_utf8_lossy(&output.stderr)
        );
        return None;
    }
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn dev_null_is_written_in_place_and_dev_full_exits_2_in_a_private_namespace() {
    let dir = with_history();
    let Some(out) = in_private_dev(
        dir.path(),
        r#"
        "$BIN" check-history h.jsonl --json /dev/null >/dev/null 2>&1; echo "null rc=$?"
        test -c /dev/null && echo "null is still a character device"
        "$BIN" check-history h.jsonl --json /dev/full >/dev/null 2>err.txt; echo "full rc=$?"
        test -c /dev/full && echo "full is still a character device"
        cat err.txt
        ls -a /dev | tr '\n' ' '; echo
        "#,
    ) else {
        return;
    };
    assert!(out.contains("null rc=1"), "{out}");
    assert!(out.contains("null is still a character device"), "{out}");
    assert!(out.contains("full rc=2"), "{out}");
    assert!(out.contains("full is still a character device"), "{out}");
    assert!(
        out.contains("/dev/full: cannot write") && out.contains("No space left on device"),
        "{out}"
    );
    // Nothing else appeared in /dev (no temp file).
    assert!(
        out.lines().any(|line| line.trim() == ". .. full null"),
        "{out}"
    );
}

/// `fencesim run` on the textbook scenario with `--out` given: exit 2, nothing run (the
/// header is printed only after the preflight), the message names `--out`.
fn run_out(dir: &Path, out: &str) -> String {
    let (code, stdout, stderr) = fencesim(&["run", "s.toml", "--seeds", "0..1", "--out", out], dir);
    assert_eq!(code, 2, "--out {out}: {stdout}{stderr}");
    assert!(
        stdout.is_empty(),
        "--out {out}: ran before refusing: {stdout}"
    );
    assert!(stderr.contains("--out "), "{stderr}");
    stderr
}

fn textbook_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        std::fs::read_to_string(util::catalogue("gc-pause-textbook-none")).unwrap(),
    )
    .unwrap();
    dir
}

#[test]
fn output_paths_the_write_would_fail_on_are_refused_before_any_work() {
    let dir = textbook_dir();
    let root = dir.path();
    // The scenario's name is gc-pause-textbook-none: `--out D` writes D/<name>/summary.json.
    let name = "gc-pause-textbook-none";

    // A file name its temp file cannot be made for (the temp adds 37 bytes to it), and one
    // over the file system's 255 bytes.
    std::fs::write(root.join("h.jsonl"), HISTORY).unwrap();
    for length in [240, 300] {
        let long = format!("{}.json", "n".repeat(length));
        let (code, stdout, stderr) = fencesim(&["check-history", "h.jsonl", "--json", &long], root);
        assert_eq!(code, 2, "{stdout}{stderr}");
        assert!(stdout.is_empty(), "judged before refusing: {stdout}");
        assert!(stderr.contains("bytes"), "{stderr}");
    }

    // A path over PATH_MAX.
    let deep = "d/".repeat(2100);
    let error = run_out(root, &deep);
    assert!(error.contains("long") || error.contains("bytes"), "{error}");

    // A dangling symlink where the summary goes.
    std::fs::create_dir_all(root.join("o").join(name)).unwrap();
    std::os::unix::fs::symlink(
        "missing/x.json",
        root.join("o").join(name).join("summary.json"),
    )
    .unwrap();
    let error = run_out(root, "o");
    assert!(error.contains("dangling symlink"), "{error}");

    // A dangling symlink where the output directory goes (`--out link`, the link to a
    // directory that does not exist): creating the directory would fail after the work.
    std::os::unix::fs::symlink("gone/away", root.join("link")).unwrap();
    let error = run_out(root, "link");
    assert!(
        error.contains("link") && error.contains("does not exist"),
        "{error}"
    );
    let error = run_out(root, "link/deeper");
    assert!(error.contains("does not exist"), "{error}");

    // A socket where the summary goes.
    std::fs::create_dir_all(root.join("s").join(name)).unwrap();
    let _listener =
        std::os::unix::net::UnixListener::bind(root.join("s").join(name).join("summary.json"))
            .unwrap();
    let error = run_out(root, "s");
    assert!(error.contains("socket"), "{error}");

    // A trailing `/` on a file output (`--json r.json/`).
    let (code, stdout, stderr) = fencesim(&["check-history", "h.jsonl", "--json", "r.json/"], root);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("ends in `/`"), "{stderr}");

    // Nothing was written by any of them, and no probe or temp file stayed.
    let mut left = Vec::new();
    for entry in walk(root) {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tmp") || name == "summary.json" && entry.is_file() {
            left.push(entry);
        }
    }
    assert!(left.is_empty(), "{left:?}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn a_catalogue_directory_reads_regular_files_only_and_outputs_may_not_join_it() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("cat");
    std::fs::create_dir(&cat).unwrap();
    std::fs::write(
        cat.join("a.toml"),
        std::fs::read_to_string(util::catalogue("gc-pause-textbook-none"))
            .unwrap()
            .replace("seeds = \"0..50\"", "seeds = \"0..2\""),
    )
    .unwrap();
    // A FIFO named *.toml: reading it would wait for a writer forever.
    mkfifo(&cat.join("fifo.toml"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(["check", "cat"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut status = None;
    for _ in 0..1200 {
        if let Some(done) = child.try_wait().unwrap() {
            status = Some(done);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if status.is_none() {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("`check cat` blocked on the FIFO named fifo.toml");
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("1 scenarios, 0 failed"), "{stdout}");

    // A report written into the catalogue as *.toml would be read as a scenario next time.
    let (code, stdout, stderr) = fencesim(&["check", "cat", "--json", "cat/r.toml"], dir.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("--json cat/r.toml"), "{stderr}");
    assert!(!cat.join("r.toml").exists());
}

#[test]
fn a_signal_before_the_renames_leaves_the_whole_old_set() {
    // `check --json r.json --junit j.xml` over old copies of both: every temp is written
    // first, then all are renamed together, so a signal in between leaves both old files
    // (before, r.json was renamed into place while j.xml's temp was still open: a mix).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cat")).unwrap();
    std::fs::write(
        dir.path().join("cat/a.toml"),
        std::fs::read_to_string(util::catalogue("gc-pause-textbook-none"))
            .unwrap()
            .replace("seeds = \"0..50\"", "seeds = \"0..2\""),
    )
    .unwrap();
    std::fs::write(dir.path().join("r.json"), "old json").unwrap();
    std::fs::write(dir.path().join("j.xml"), "old xml").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(["check", "cat", "--json", "r.json", "--junit", "j.xml"])
        .env("FENCESIM_TEST_WRITE_PAUSE_MS", "60000")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until both temps exist: the set is staged and the renames are held back.
    let temps = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|entry| {
                let name = entry.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".tmp")
            })
            .count()
    };
    let mut staged = false;
    for _ in 0..1200 {
        if temps(dir.path()) == 2 {
            staged = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let kill = Command::new("kill")
        .args(["-s", "TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert!(staged, "both temps never existed at once");
    assert_eq!(status.code(), Some(143));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.json")).unwrap(),
        "old json"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("j.xml")).unwrap(),
        "old xml"
    );
    assert_eq!(temps(dir.path()), 0);
}

#[test]
fn a_replay_window_far_past_the_run_is_clamped_to_it() {
    // `--window 0..1e14` sized the picture by the window and grew without bound (hundreds
    // of MB in 30 s, never finishing); clamped to the run it draws the run.
    let dir = textbook_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args([
            "replay", "s.toml", "--seed", "0", "--window", "0..1e14", "--svg", "w.svg",
        ])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = None;
    for _ in 0..1800 {
        if let Some(done) = child.try_wait().unwrap() {
            status = Some(done);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if status.is_none() {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("replay --window 0..1e14 did not finish in 3 minutes");
    }
    assert_eq!(status.unwrap().code(), Some(1));
    let svg = std::fs::read_to_string(dir.path().join("w.svg")).unwrap();
    // The axis names the window drawn: it ends where the run ends (tens of seconds), not at
    // 1e11 s.
    assert!(svg.contains("window 0"), "no window label");
    assert!(!svg.contains("100000000000"), "the window was not clamped");
}

/// Issue 31: a FIFO named like a scenario's regressions file is refused at once, never
/// opened (before: `check` blocked forever on it), by every command that reads or records
/// one; and recording beside `/dev/stdin` is refused (before: `/dev/stdin.regressions`).
#[test]
fn a_fifo_regressions_file_and_recording_beside_dev_stdin_are_refused() {
    let dir = textbook_dir();
    mkfifo(&dir.path().join("s.regressions"));
    let commands: [&[&str]; 4] = [
        &["check", "s.toml"],
        &["run", "s.toml", "--seeds", "0..1", "--record-failures"],
        &["soak", "s.toml", "--budget-s", "1", "--base-seed", "0"],
        &["replay", "s.toml", "--seed", "0"],
    ];
    for args in commands {
        // Under `timeout`: a command that opened the FIFO would block (exit 124).
        let out = Command::new("timeout")
            .arg("60")
            .arg(env!("CARGO_BIN_EXE_fencesim"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let (code, stdout, stderr) = (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("s.regressions: expected a regressions file (a regular file of recorded seeds), got a FIFO"),
            "{args:?}: {stderr}"
        );
    }
    std::fs::remove_file(dir.path().join("s.regressions")).unwrap();
    let scenario = std::fs::read(dir.path().join("s.toml")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(["run", "/dev/stdin", "--seeds", "0..1", "--record-failures"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&scenario).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--record-failures: expected a scenario file in a directory of its own"),
        "{stderr}"
    );
    assert!(!Path::new("/dev/stdin.regressions").exists());
}
