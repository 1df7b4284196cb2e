//! `fencesim check` and `fencesim merge` as CI runs them (the catalogue workflow), on a
//! small catalogue written to a temporary directory.

mod util;
#[path = "util/workflow.rs"]
mod workflow;

use std::{fs, path::Path};

use fencesim_testkit::Spec;
use util::*;

/// A GC pause of `pause_ms` on the first holder (worker-0, made first by a short partition
/// of worker-1) under `fencing`, expecting `expect`.
fn scenario(name: &str, fencing: &str, pause_ms: u64, expect: &str) -> String {
    let faults = format!(
        r#"
[[faults.schedule]]
at_ms = 0
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 500

[[faults.schedule]]
at_ms = 1_000
kind = "gc-pause"
node = "worker-0"
duration_ms = {pause_ms}
"#
    );
    Spec {
        name,
        description: &format!("a holder pauses {pause_ms} ms with a 3 s TTL under {fencing}"),
        duration_ms: 12_000,
        seeds: "0..7",
        ttl_ms: 3_000,
        fencing,
        work_ms: "{ dist = \"uniform\", min = 100, max = 300 }",
        workers: "writes_per_lease = 1_000",
        faults: &faults,
        expect,
        ..Spec::default()
    }
    .toml()
}

fn catalogue(dir: &Path) {
    let scenarios = dir.join("scenarios");
    fs::create_dir_all(&scenarios).unwrap();
    fs::write(
        scenarios.join("a-none.toml"),
        scenario("a-none", "none", 5_000, "violates = [\"I3\", \"I4\"]"),
    )
    .unwrap();
    fs::write(
        scenarios.join("b-max-token.toml"),
        scenario(
            "b-max-token",
            "max-token",
            5_000,
            "safe = true\ncoverage = [\"stale-write-rejected\"]",
        ),
    )
    .unwrap();
}

#[test]
fn catalogue_passes_and_writes_junit_json_and_matrix() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    let args = [
        "check",
        "scenarios",
        "--junit",
        "out/junit.xml",
        "--json",
        "out/check.json",
        "--matrix",
        "out",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("2 scenarios, 0 failed"), "{stdout}");

    let junit = fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).expect("JUnit output is well-formed XML");
    let cases: Vec<_> = xml
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 2, "one testcase per scenario");
    assert!(xml.descendants().all(|n| !n.has_tag_name("failure")));

    let matrix = fs::read_to_string(dir.path().join("out/matrix.md")).unwrap();
    assert!(
        matrix.contains("a-none") && matrix.contains("b-max-token"),
        "{matrix}"
    );
    // Regenerating gives no diff.
    let (code, _, _) = fencesim(&["check", "scenarios", "--matrix", "again"], dir.path());
    assert_eq!(code, 0);
    for file in ["matrix.md", "matrix.json"] {
        assert_eq!(
            fs::read(dir.path().join("out").join(file)).unwrap(),
            fs::read(dir.path().join("again").join(file)).unwrap(),
            "{file} is deterministic"
        );
    }
}

#[test]
fn a_changed_expectation_fails_naming_the_scenario_and_a_replay_command() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    fs::write(
        dir.path().join("scenarios/a-none.toml"),
        scenario(
            "a-none",
            "none",
            5_000,
            "safe = true\ncoverage = [\"takeover\"]",
        ),
    )
    .unwrap();
    let (code, stdout, _) = fencesim(&["check", "scenarios", "--junit", "junit.xml"], dir.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("a-none: "), "{stdout}");
    assert!(
        stdout.contains("replay: fencesim replay scenarios/a-none.toml --seed 0"),
        "{stdout}"
    );
    let junit = fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    let xml = roxmltree::Document::parse(&junit).unwrap();
    let failure = xml
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("one failure");
    let text: String = failure.descendants().filter_map(|n| n.text()).collect();
    assert!(
        text.contains("fencesim replay scenarios/a-none.toml --seed 0"),
        "{text}"
    );
}

#[test]
fn a_safe_scenario_whose_danger_never_happens_is_vacuous() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("scenarios")).unwrap();
    // A 50 ms pause against a 3 s TTL: no lease ever expires, nothing stale is ever written.
    fs::write(
        dir.path().join("scenarios/short.toml"),
        scenario(
            "short",
            "max-token",
            50,
            "safe = true\ncoverage = [\"stale-write-rejected\"]",
        ),
    )
    .unwrap();
    let (code, stdout, _) = fencesim(&["check", "scenarios"], dir.path());
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("VACUOUS"), "{stdout}");
    assert!(stdout.contains("vacuous"), "{stdout}");
}

#[test]
fn shards_merge_into_the_unsharded_report_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    let run = |args: &[&str]| {
        let (code, stdout, stderr) = fencesim(args, dir.path());
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
    };
    run(&[
        "check",
        "scenarios",
        "--json",
        "full.json",
        "--jobs",
        "2",
        "--matrix",
        "full",
        "--coverage",
        "full",
    ]);
    run(&[
        "check",
        "scenarios",
        "--shard",
        "1/2",
        "--json",
        "s1.json",
        "--jobs",
        "1",
    ]);
    run(&["check", "scenarios", "--shard", "2/2", "--json", "s2.json"]);
    run(&[
        "merge",
        "s2.json",
        "s1.json",
        "--json",
        "merged.json",
        "--matrix",
        "m",
        "--coverage",
        "m",
    ]);
    let full = fs::read(dir.path().join("full.json")).unwrap();
    let merged = fs::read(dir.path().join("merged.json")).unwrap();
    assert!(
        full == merged,
        "merged shards differ from the unsharded report"
    );
    for file in ["matrix.md", "matrix.json", "coverage.md", "coverage.json"] {
        assert!(
            fs::read(dir.path().join("full").join(file)).unwrap()
                == fs::read(dir.path().join("m").join(file)).unwrap(),
            "{file}: merged shards differ from the unsharded run"
        );
    }
    let part: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("s1.json")).unwrap()).unwrap();
    assert_eq!(part["shard"], "1/2");
    assert_eq!(
        part["scenarios"][0]["state"]["stats"]["runs"], 4,
        "seeds 0, 2, 4, 6 of 0..7"
    );
    // A shard may not be merged twice.
    let (code, _, stderr) = fencesim(&["merge", "s1.json", "s1.json"], dir.path());
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn bad_shard_and_bad_catalogue_exit_2_before_running() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    for shard in ["0/2", "3/2", "1", "a/b"] {
        let (code, _, stderr) = fencesim(&["check", "scenarios", "--shard", shard], dir.path());
        assert_eq!(code, 2, "{shard}");
        assert!(stderr.contains("--shard"), "{stderr}");
    }
    fs::write(
        dir.path().join("scenarios/c-broken.toml"),
        "name = \"broken\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) =
        fencesim(&["check", "scenarios", "--json", "out.json"], dir.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("c-broken.toml"), "{stderr}");
    assert!(!stdout.contains("a-none"), "nothing ran: {stdout}");
    assert!(!dir.path().join("out.json").exists());
}

/// The way each engine runs N copies: the same command line (`--shard auto`) everywhere, the
/// slice in the environment only. Merged, the parts are the unsharded report byte for byte.
#[test]
fn shard_processes_configured_by_their_engines_variables_merge_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    let (code, stdout, stderr) =
        fencesim(&["check", "scenarios", "--json", "full.json"], dir.path());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let full = fs::read(dir.path().join("full.json")).unwrap();
    let engines: [(&str, &str, u64); 3] = [
        ("JOB_COMPLETION_INDEX", "JOB_COMPLETIONS", 0), // Kubernetes Indexed Job
        ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),          // GitLab CI `parallel:`
        ("FENCESIM_SHARD_INDEX", "FENCESIM_SHARD_TOTAL", 1), // a GitHub Actions matrix
    ];
    for (index_var, total_var, base) in engines {
        let n = 3;
        let mut parts = Vec::new();
        let children: Vec<_> = (0..n)
            .map(|i| {
                let part = format!("{index_var}-{i}.json");
                parts.push(part.clone());
                let index = (i + base).to_string();
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    fencesim_env(
                        &[
                            "check",
                            "scenarios",
                            "--shard",
                            "auto",
                            "--json",
                            &part,
                            "--jobs",
                            "1",
                        ],
                        &dir,
                        &[(index_var, index.as_str()), (total_var, "3")],
                    )
                })
            })
            .collect();
        for child in children {
            let (code, stdout, stderr) = child.join().unwrap();
            assert_eq!(code, 0, "{stdout}{stderr}");
            assert!(stdout.contains(&format!("from {index_var}=")), "{stdout}");
        }
        let mut args = vec!["merge", "--json", "merged.json"];
        args.extend(parts.iter().map(String::as_str));
        let (code, stdout, stderr) = fencesim(&args, dir.path());
        assert_eq!(code, 0, "{stdout}{stderr}");
        let merged = fs::read(dir.path().join("merged.json")).unwrap();
        assert!(
            full == merged,
            "{index_var}: merged shards differ from the unsharded report"
        );
    }
}

#[test]
fn k_selects_scenarios_and_fail_fast_stops_at_the_first_failure() {
    let dir = tempfile::tempdir().unwrap();
    catalogue(dir.path());
    fs::write(
        dir.path().join("scenarios/c-none.toml"),
        scenario("c-none", "none", 5_000, "violates = [\"I3\", \"I4\"]"),
    )
    .unwrap();
    let (code, stdout, stderr) = fencesim(
        &["check", "scenarios", "-k", "max-token", "--json", "k.json"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("-k max-token: 1 of 3 scenarios selected"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("k.json")).unwrap()).unwrap();
    let names: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["scenario"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b-max-token"]);
    let (code, _, stderr) = fencesim(&["check", "scenarios", "-k", "no-such"], dir.path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("-k no-such"), "{stderr}");

    // Fencing off: a-none still violates as expected, b-max-token fails, c-none is not run.
    let args = [
        "check",
        "scenarios",
        "--set",
        "storage.fencing=none",
        "--fail-fast",
        "--junit",
        "ff.xml",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir.path());
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("b-max-token"), "{stdout}");
    assert!(!stdout.contains("c-none  "), "{stdout}");
    assert!(stdout.contains("1 scenarios not run"), "{stdout}");
    assert!(
        stdout.contains("2 scenarios, 1 failed, 1 not run (--fail-fast)"),
        "{stdout}"
    );
    // JUnit counts the scenario not run as skipped, by name, so CI's test count stays 3.
    let xml = fs::read_to_string(dir.path().join("ff.xml")).unwrap();
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""),
        "{xml}"
    );
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let skipped: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("skipped"))
        .map(|n| n.parent().unwrap().attribute("name").unwrap())
        .collect();
    assert_eq!(skipped, ["c-none"], "{xml}");
}

// ---------------------------------------------------------------------------------------
// docs/scale-out.md's recipes, run as written (issue 31 item 6).

/// The body of the first fenced block of `lang` after the line `heading` in
/// docs/scale-out.md, or (`nth` > 0) the nth such block after it.
fn recipe_block(heading: &str, lang: &str, nth: usize) -> String {
    let doc =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scale-out.md"))
            .unwrap();
    let mut rest = &doc[doc
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"))..];
    let fence = format!("```{lang}\n");
    for _ in 0..nth {
        rest = &rest[rest.find(&fence).unwrap() + fence.len()..];
    }
    let start = rest.find(&fence).unwrap() + fence.len();
    let end = start + rest[start..].find("```\n").unwrap();
    rest[start..end].to_string()
}

/// A catalogue in `dir/scenarios` with a planted failing sweep seed (`a.toml`: unfenced,
/// claimed safe: every seed violates) and a planted failing recorded seed (`b.toml`: fenced,
/// its sweep passes, but seed 40 is recorded under `--set storage.fencing=none`).
fn planted_catalogue(dir: &Path) {
    let scenarios = dir.join("scenarios");
    fs::create_dir_all(&scenarios).unwrap();
    let safe = "safe = true\ncoverage = [\"stale-write-rejected\"]";
    fs::write(
        scenarios.join("a.toml"),
        scenario("a", "none", 5_000, "safe = true\ncoverage = [\"takeover\"]"),
    )
    .unwrap();
    fs::write(
        scenarios.join("b.toml"),
        scenario("b", "max-token", 5_000, safe),
    )
    .unwrap();
    let args = [
        "run",
        "scenarios/b.toml",
        "--seeds",
        "40..41",
        "--set",
        "storage.fencing=none",
        "--record-failures",
        "--out",
        "../out",
    ];
    let (code, stdout, stderr) = fencesim(&args, dir);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("1 newly recorded"), "{stdout}");
}

/// The merged result is red: `merge` exited 1 printing both reproduce lines, JUnit has both
/// failures, `check.json` says `all_met: false`.
#[track_caller]
fn assert_red(code: i32, output: &str, junit: &Path, check: &Path) {
    assert_eq!(code, 1, "merge: {output}");
    for line in [
        "a.toml --seed 0\n",
        "b.toml --seed 40 --set storage.fencing=none\n",
    ] {
        assert!(
            output.contains(line),
            "no reproduce line {line:?} in {output}"
        );
    }
    let junit = fs::read_to_string(junit).unwrap();
    let xml = roxmltree::Document::parse(&junit).unwrap();
    let failures: Vec<&str> = xml
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(failures.len(), 2, "{junit}");
    assert!(
        failures
            .iter()
            .any(|t| t.contains("--seed 40 --set storage.fencing=none")),
        "{junit}"
    );
    let check: serde_json::Value = serde_json::from_slice(&fs::read(check).unwrap()).unwrap();
    assert_eq!(check["all_met"], false);
}

/// The Kubernetes recipe: the clear Job, the Indexed Job's pods (`JOB_COMPLETION_INDEX`
/// 0..completions, `JOB_COMPLETIONS` from the manifest), the merge Job, each its `args`
/// script run by `sh -c` with `/parts` and `/catalogue` moved into a temp dir and `fencesim`
/// on the PATH; a stale part from an earlier run waits in `/parts`.
#[test]
fn the_kubernetes_recipe_runs_as_written_and_a_failure_turns_it_red() {
    let dir = tempfile::tempdir().unwrap();
    let (catalogue, parts) = (dir.path().join("catalogue"), dir.path().join("parts"));
    planted_catalogue(&catalogue);
    fs::create_dir_all(&parts).unwrap();
    fs::write(
        parts.join("check-9.json"),
        "{\"left\": \"by an earlier run\"}",
    )
    .unwrap();
    let manifests = recipe_block("## Kubernetes: clear the parts", "yaml", 0);
    let jobs: Vec<&str> = manifests.split("\n---\n").collect();
    assert_eq!(jobs.len(), 3, "clear, check, merge");
    let field = |job: &str, key: &str| -> String {
        let at = job.find(key).unwrap_or_else(|| panic!("no {key} in {job}")) + key.len();
        job[at..]
            .lines()
            .next()
            .unwrap()
            .split('#')
            .next()
            .unwrap()
            .trim()
            .trim_matches('"')
            .to_string()
    };
    let completions: u64 = field(jobs[1], "completions: ").parse().unwrap();
    assert_eq!(
        field(jobs[1], "- name: JOB_COMPLETIONS\n              value: "),
        completions.to_string()
    );
    let bin = Path::new(env!("CARGO_BIN_EXE_fencesim")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pod = |job: &str, env: &[(&str, String)]| {
        let script = args_script(job)
            .replace("/parts", parts.to_str().unwrap())
            .replace("/catalogue", catalogue.to_str().unwrap());
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .env("PATH", &path)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), text)
    };
    let (code, text) = pod(jobs[0], &[]);
    assert_eq!(code, 0, "clear: {text}");
    for index in 0..completions {
        let env = [
            ("JOB_COMPLETION_INDEX", index.to_string()),
            ("JOB_COMPLETIONS", completions.to_string()),
        ];
        let (code, text) = pod(jobs[1], &env);
        assert_eq!(
            code, 0,
            "pod {index} (a found failure must not fail the pod): {text}"
        );
    }
    let (code, text) = pod(jobs[2], &[]);
    assert_red(
        code,
        &text,
        &parts.join("junit.xml"),
        &parts.join("check.json"),
    );
}

/// The script of a Job's `args: - |` block.
fn args_script(job: &str) -> String {
    let at = job.find("args:\n").unwrap() + "args:\n".len();
    let mut lines = job[at..].lines();
    let first = lines.next().unwrap();
    assert_eq!(first.trim(), "- |", "{job}");
    let indent = first.find('-').unwrap() + 2;
    lines
        .take_while(|line| line.len() > indent && line[..indent].trim().is_empty())
        .map(|line| &line[indent..])
        .collect::<Vec<_>>()
        .join("\n")
}

/// The GitHub Actions recipe: one build job, the matrix of shards, the merge job with its
/// JUnit report, each step as written (the actions stood in for), a stale part waiting in the
/// merge job's workspace.
#[test]
fn the_github_actions_recipe_runs_as_written_and_a_failure_turns_it_red() {
    let root = tempfile::tempdir().unwrap();
    planted_catalogue(&root.path().join("repo"));
    let jobs = workflow::parse_workflow(&recipe_block("## GitHub Actions:", "yaml", 0));
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["build", "shard", "merge"]);
    let builds = jobs
        .iter()
        .flat_map(|j| &j.steps)
        .filter(|s| {
            s.run
                .as_deref()
                .is_some_and(|r| r.starts_with("cargo build"))
        })
        .count();
    assert_eq!(builds, 1, "the binary is built once");
    let ran = workflow::run_workflow(&jobs, root.path(), &[("merge", "parts/check-9.json")]);
    let log = |name: &str| {
        ran.jobs
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("{name} did not run"))
    };
    assert!(log("build-").1, "build: {}", log("build-").2);
    let shards = jobs[1].matrix.len();
    for k in 1..=shards {
        // A shard holding a failure fails its job, and still uploads its part.
        assert!(
            root.path()
                .join(format!("artifacts/check-{k}/check-{k}.json"))
                .exists(),
            "shard {k}: {}",
            log(&format!("shard-{k}")).2
        );
    }
    let (_, ok, merge_log) = log("merge-");
    assert!(!ok, "the merge job fails: {merge_log}");
    let ws = root.path().join("ws/merge-");
    assert_red(1, merge_log, &ws.join("junit.xml"), &ws.join("check.json"));
    assert_eq!(
        ran.junit_reported,
        [ws.join("junit.xml")],
        "JUnit is published"
    );
    assert!(root
        .path()
        .join("artifacts/fencesim-report/junit.xml")
        .exists());
}

/// docs/Dockerfile, the Kubernetes Jobs' image: built with the workspace's minimum toolchain
/// and the workflow's build command, it holds `fencesim` on the PATH and the catalogue where
/// the manifests read it, and its smoke commands run. (The image itself is not built here:
/// this machine has no container engine.)
#[test]
fn the_kubernetes_image_recipe_holds_what_the_jobs_run() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = fs::read_to_string(repo.join("docs/Dockerfile")).unwrap();
    let instructions: Vec<(&str, &str)> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once(' ').unwrap())
        .collect();
    let msrv = fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let msrv = msrv
        .split("rust-version = \"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        instructions[0],
        ("FROM", format!("rust:{msrv}-bookworm AS build").as_str())
    );
    let workflow = recipe_block("## GitHub Actions:", "yaml", 0);
    let mut workdir = "";
    let mut runs = Vec::new();
    for (op, args) in &instructions {
        match *op {
            "WORKDIR" => workdir = args,
            "COPY" if !args.starts_with("--from") => {
                let source = args.split(' ').next().unwrap();
                assert!(
                    repo.join(source).exists(),
                    "COPY {source}: not in the repository"
                );
            }
            "COPY" => assert_eq!(
                *args,
                format!("--from=build {workdir}/target/release/fencesim /usr/local/bin/fencesim")
            ),
            "RUN" => runs.push(*args),
            _ => {}
        }
    }
    assert!(
        workflow.contains(&format!("- run: {}\n", runs[0])),
        "one build command: {}",
        runs[0]
    );
    assert!(instructions.contains(&("COPY", "scenarios /catalogue/scenarios")));
    let manifests = recipe_block("## Kubernetes: clear the parts", "yaml", 0);
    assert!(
        manifests.contains("fencesim check /catalogue/scenarios "),
        "{manifests}"
    );
    // The smoke test, on this machine: /catalogue is the repository.
    let bin = Path::new(env!("CARGO_BIN_EXE_fencesim")).parent().unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", &runs[1].replace("/catalogue", repo.to_str().unwrap())])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(fs::read_to_string(repo.join(".dockerignore"))
        .unwrap()
        .lines()
        .any(|l| l == "target"));
}

/// `--set` is validated against the scenarios `-k` selects: a client-go file that a short
/// `lease.ttl_ms` does not fit (RenewDeadline above it) stops a check of the textbook pause
/// only when it is selected.
#[test]
fn k_validates_set_only_against_the_scenarios_it_selects() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dir.path().join("cat");
    fs::create_dir(&cat).unwrap();
    for name in [
        "gc-pause-textbook-none",
        "k8s-client-go-clock-skew-within-ratio",
    ] {
        let text = fs::read_to_string(util::catalogue(name)).unwrap();
        fs::write(cat.join(format!("{name}.toml")), text).unwrap();
    }
    let set = ["--set", "lease.ttl_ms=2000"];
    let args = |k: &'static str| -> Vec<&str> { [&["check", "cat", "-k", k][..], &set].concat() };
    let (code, stdout, stderr) = fencesim(&args("textbook"), dir.path());
    assert!(code <= 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("-k textbook: 1 of 2 scenarios selected"),
        "{stdout}"
    );
    let (code, stdout, stderr) = fencesim(&args("k8s"), dir.path());
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("k8s-client-go-clock-skew-within-ratio.toml")
            && stderr.contains("RenewDeadline"),
        "{stderr}"
    );
    // Without -k every file must take the overrides.
    let (code, _, stderr) = fencesim(&["check", "cat", "--set", "lease.ttl_ms=2000"], dir.path());
    assert_eq!(code, 2, "{stderr}");
}
