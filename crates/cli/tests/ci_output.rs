//! What CI users meet every day: an interrupted `check` shows what finished;
//! colour is off when piped unless `--color always`, and `NO_COLOR` / `--color never` are
//! honoured; the help documents both. (Progress bars are drawn only on a terminal: their
//! decisions are unit tests in `src/progress.rs`; a piped run's stdout is unchanged.)
//! A closed stdout (`check … | head -1`) ends a command quietly with 141 and a full one
//! (`> /dev/full`) with `error: stdout: …` and 2, never a panic.

mod util;

use std::{
    io::{BufRead, BufReader, Read},
    path::Path,
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use util::{catalogue, fencesim, fencesim_env};

/// Catalogue scenario `name` with its seeds replaced by `seeds`, written as `dir/file`.
fn put(dir: &Path, file: &str, name: &str, seeds: &str) {
    let text = std::fs::read_to_string(catalogue(name)).unwrap();
    let seeds_line = text
        .lines()
        .find(|line| line.starts_with("seeds = "))
        .unwrap()
        .to_string();
    std::fs::write(
        dir.join(file),
        text.replacen(&seeds_line, &format!("seeds = \"{seeds}\""), 1),
    )
    .unwrap();
}

#[test]
fn an_interrupted_check_prints_what_finished_and_what_was_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let catalogue_dir = dir.path().join("cat");
    std::fs::create_dir(&catalogue_dir).unwrap();
    put(
        &catalogue_dir,
        "a.toml",
        "gc-pause-textbook-max-token",
        "0..2",
    );
    put(&catalogue_dir, "b.toml", "gc-pause-textbook-none", "0..2");
    // Far more seeds than the test waits for: it is running when the signal lands.
    put(
        &catalogue_dir,
        "c.toml",
        "chaos-5-workers-max-token",
        "0..1000000",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_fencesim"))
        .args(["check", "cat", "--jobs", "1"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stdout line by line on a thread; signal once both fast rows are printed.
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines_tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|l: &String| l.starts_with("gc-pause-textbook-none "))
    {
        let line = lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("no second row within 2 minutes ({e}): {seen:?}"));
        seen.push(line);
    }
    std::thread::sleep(Duration::from_millis(300)); // into the third scenario's seeds
    let status = Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    reader.join().unwrap();
    seen.extend(lines.try_iter());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let stdout = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted by SIGINT; "), "{stderr}");
    // The table comes after the rows already printed.
    let table = stdout
        .find("interrupted by SIGINT: 2 of 3 scenarios finished, 2 passed, 0 failed")
        .unwrap_or_else(|| panic!("{stdout}"));
    let rows = stdout.find("gc-pause-textbook-none ").unwrap();
    assert!(rows < table, "{stdout}");
    let after: Vec<&str> = stdout[table..].lines().skip(1).collect();
    assert!(
        after[0].starts_with("  gc-pause-textbook-max-token ") && after[0].ends_with(" ok"),
        "{stdout}"
    );
    assert!(
        after[1].starts_with("  gc-pause-textbook-none ") && after[1].ends_with(" ok"),
        "{stdout}"
    );
    assert!(
        after[2].starts_with("  chaos-5-workers-max-token ")
            && after[2].contains(" interrupted (")
            && after[2].contains(" of 1000000 seeds done)"),
        "{stdout}"
    );
    assert_eq!(after.len(), 3, "nothing after the table: {stdout}");
    assert!(!stdout.contains('\x1b'), "piped: no colour: {stdout}");
}

/// The table's rows and `run`'s summary, piped, with the colour flags and NO_COLOR.
#[test]
fn colour_only_when_asked_for_on_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.toml", "gc-pause-textbook-none", "0..1");
    let plain = fencesim(&["check", "a.toml"], dir.path());
    assert_eq!(plain.0, 0, "{}{}", plain.1, plain.2);
    assert!(!plain.1.contains('\x1b'), "{}", plain.1);
    let row = plain
        .1
        .lines()
        .find(|l| l.starts_with("gc-pause-textbook-none "))
        .unwrap()
        .to_string();

    let always = fencesim_env(
        &["check", "a.toml", "--color", "always"],
        dir.path(),
        &[("NO_COLOR", "1")],
    );
    assert_eq!(always.0, 0);
    let coloured = always
        .1
        .lines()
        .find(|l| l.starts_with("gc-pause-textbook-none "))
        .unwrap();
    assert!(coloured.contains("\x1b[1;32mok\x1b[0m"), "{coloured:?}");
    // The same row once the escapes are taken out: the columns still line up.
    assert_eq!(
        coloured.replace("\x1b[1;32m", "").replace("\x1b[0m", ""),
        row
    );
    // `never` and piped `auto` are the plain bytes (wall times aside).
    let strip_walls = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.rsplit_once(' ').map_or(l, |(head, _)| head).to_string())
            .collect()
    };
    let never = fencesim(&["--color", "never", "check", "a.toml"], dir.path());
    assert_eq!(strip_walls(&never.1), strip_walls(&plain.1));

    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["run", "a.toml", "--out", "out"];
        all.extend_from_slice(args);
        fencesim_env(&all, dir.path(), env).1
    };
    let expectation = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("  expectation "))
            .unwrap()
            .to_string()
    };
    let run_plain = run(&[], &[]);
    assert!(!run_plain.contains('\x1b'), "{run_plain}");
    // stderr piped too: no bar, the plain count line.
    let (_, _, run_stderr) = fencesim(&["run", "a.toml", "--out", "out"], dir.path());
    assert!(run_stderr.contains("  1/1 seeds"), "{run_stderr}");
    assert!(!run_stderr.contains("seeds/s"), "{run_stderr}");
    let run_always = run(&["--color", "always"], &[]);
    assert_eq!(
        expectation(&run_always),
        expectation(&run_plain).replacen(": MET — ", ": \x1b[1;32mMET\x1b[0m — ", 1)
    );
    assert!(!run(&["--color", "never"], &[]).contains('\x1b'));
    assert!(!run(&["--color", "auto"], &[("NO_COLOR", "1")]).contains('\x1b'));
}

/// On a terminal (a pty from util-linux `script`; skipped without it): the bar is drawn with
/// its rate and ETA, a bounded number of times, and the verdicts are coloured unless
/// `NO_COLOR` is set.
#[test]
fn on_a_terminal_the_bar_is_drawn_and_the_verdicts_coloured() {
    if Command::new("script").arg("--version").output().is_err() {
        println!("SKIPPED: no `script` (util-linux) to run the binary on a terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    put(
        dir.path(),
        "a.toml",
        "gc-pause-textbook-max-token",
        "0..200",
    );
    let on_a_terminal = |no_color: Option<&str>| -> String {
        let line = format!("{} check a.toml --jobs 2", env!("CARGO_BIN_EXE_fencesim"));
        let mut command = Command::new("script");
        command
            .args(["-q", "-e", "-c", &line, "/dev/null"])
            .current_dir(dir.path())
            .env("TERM", "xterm")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        if let Some(value) = no_color {
            command.env("NO_COLOR", value);
        }
        let output = command.output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_eq!(output.status.code(), Some(0), "{text}");
        text
    };
    let text = on_a_terminal(None);
    assert!(
        text.contains("scenario 1 of 1: gc-pause-textbook-max-token"),
        "{text}"
    );
    assert!(text.contains("seeds/s") && text.contains("ETA"), "{text}");
    assert!(text.contains("\x1b[1;32mok\x1b[0m"), "{text}");
    // At most 20 + 10 a second after the first (indicatif's burst, then the rate), not one
    // per seed.
    let draws = text.matches("scenario 1 of 1:").count();
    assert!((1..100).contains(&draws), "{draws} draws for 200 seeds");
    let plain = on_a_terminal(Some("1"));
    assert!(!plain.contains("\x1b[1;32m"), "{plain}");
    assert!(
        plain.contains("seeds/s"),
        "the bar does not depend on NO_COLOR: {plain}"
    );
}

#[test]
fn the_help_documents_colour_and_no_color() {
    let (code, out, _) = fencesim(&["--help"], Path::new("."));
    assert_eq!(code, 0);
    for text in ["--color", "auto|always|never", "NO_COLOR", "129"] {
        assert!(out.contains(text), "{text}: {out}");
    }
    let (code, _, err) = fencesim(&["--color", "sometimes", "check", "x"], Path::new("."));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--color"), "{err}");
}

/// Every printing command, its stdout closed before it writes (EPIPE) and then `/dev/full`
/// (ENOSPC): 141 and nothing on stderr, then 2 and `error: stdout: …`; never exit 101 or a
/// panic message.
#[test]
fn a_closed_or_full_stdout_ends_every_command_without_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = catalogue("gc-pause-textbook-none");
    let commands: [&[&str]; 4] = [
        &["completions", "bash"],
        &["run", &scenario, "--seeds", "0..2"],
        &["check", &scenario],
        &["replay", &scenario, "--seed", "0"],
    ];
    for args in commands {
        // The reader is gone before the command starts: its first write fails (a reader
        // dropped after the spawn races a script that fits the pipe's 64 KiB buffer).
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_fencesim"))
            .args(args)
            .current_dir(dir.path())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");

        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_fencesim"))
            .args(args)
            .current_dir(dir.path())
            .stdout(full)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error: stdout: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?} left files"
        );
    }
}

/// A scenario name longer than the table's 45 columns (and an expectation longer than 20)
/// widens its column for every row, so `check` and `merge` stay aligned.
#[test]
fn long_scenario_names_keep_the_check_table_aligned() {
    let dir = tempfile::tempdir().unwrap();
    put(dir.path(), "a.toml", "gc-pause-textbook-none", "0..2");
    put(dir.path(), "b.toml", "gc-pause-textbook-max-token", "0..2");
    let long = "a-scenario-name-well-past-the-forty-five-columns-of-the-table";
    let text = std::fs::read_to_string(dir.path().join("b.toml")).unwrap();
    let name_line = text.lines().find(|l| l.starts_with("name = ")).unwrap();
    let text = text.replacen(name_line, &format!("name = \"{long}\""), 1);
    std::fs::write(dir.path().join("b.toml"), text).unwrap();
    let (code, stdout, stderr) = fencesim(
        &[
            "check", "a.toml", "b.toml", "--json", "c.json", "--color", "never",
        ],
        dir.path(),
    );
    assert!(code <= 1, "{stdout}{stderr}");
    let merged = fencesim(&["merge", "c.json", "--color", "never"], dir.path());
    for out in [&stdout, &merged.1] {
        let lines: Vec<&str> = out.lines().collect();
        let header = lines.iter().find(|l| l.starts_with("scenario ")).unwrap();
        let rows: Vec<&&str> = lines
            .iter()
            .filter(|l| l.starts_with("gc-pause-") || l.starts_with(long))
            .collect();
        assert_eq!(rows.len(), 2, "{out}");
        // Left-aligned columns start where their header does; `runs` ends where it does.
        for row in &rows {
            let bytes = row.as_bytes();
            for column in ["expectation", "result"] {
                let at = header.find(column).unwrap();
                assert!(at > long.len(), "{header}");
                let starts = bytes[at - 1] == b' ' && bytes[at] != b' ';
                assert!(starts, "{column} misaligned:\n{out}");
            }
            let end = header.find("runs").unwrap() + 3;
            let ends = bytes[end] != b' ' && bytes[end + 1] == b' ';
            assert!(ends, "runs misaligned:\n{out}");
        }
    }
}
