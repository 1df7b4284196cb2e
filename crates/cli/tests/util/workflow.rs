//! A stand-in for GitHub Actions, enough to run docs/scale-out.md's workflow as written
//! (`check.rs`): the subset of YAML it uses, its jobs in order with their matrix, each `run:`
//! step in bash as the runner runs it, and the actions it uses stood in for (checkout,
//! artifacts without their execute bit, the JUnit report step); `cargo build` gives the
//! binary the tests were built with.

use std::{
    fs,
    path::{Path, PathBuf},
};

/// One step of a GitHub Actions job, as the recipe writes it.
#[derive(Default, Debug)]
pub struct Step {
    pub uses: Option<String>,
    pub run: Option<String>,
    pub always: bool,
    pub env: Vec<(String, String)>,
    pub with: Vec<(String, String)>,
}

/// A job: its name, its matrix values (`shard: [..]`; one run when none), whether it runs
/// when a job it needs failed, its steps.
#[derive(Default, Debug)]
pub struct Job {
    pub name: String,
    pub matrix: Vec<String>,
    pub always: bool,
    pub steps: Vec<Step>,
}

/// The workflow's jobs in order. The subset of YAML the recipe uses: `key: value`,
/// nested maps by indentation, `|` block scalars, `- ` step items.
pub fn parse_workflow(yaml: &str) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    let lines: Vec<&str> = yaml.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    // A `|` block: the lines indented deeper than its key, as deep as its first line.
    let block = |from: usize, key: usize| -> (String, usize) {
        let min = lines.get(from).map_or(key + 1, |l| indent(l).max(key + 1));
        let mut end = from;
        while end < lines.len() && (lines[end].trim().is_empty() || indent(lines[end]) >= min) {
            end += 1;
        }
        let text: Vec<&str> = lines[from..end]
            .iter()
            .map(|l| l.get(min..).unwrap_or(""))
            .collect();
        (text.join("\n").trim_end().to_string(), end)
    };
    let mut i = lines.iter().position(|l| *l == "jobs:").unwrap() + 1;
    let mut map: Option<(&'static str, usize)> = None;
    while i < lines.len() {
        let line = lines[i];
        let (depth, text) = (indent(line), line.trim());
        i += 1;
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let item = text.strip_prefix("- ");
        let text = item.unwrap_or(text);
        let (key, value) = text
            .split_once(':')
            .map_or((text, ""), |(k, v)| (k.trim(), v.trim()));
        let (value, next) = if value == "|" {
            block(i, depth)
        } else {
            (value.to_string(), i)
        };
        i = next;
        if depth == 2 {
            jobs.push(Job {
                name: key.to_string(),
                ..Job::default()
            });
            continue;
        }
        let job = jobs.last_mut().unwrap();
        if item.is_some() && depth == 6 {
            job.steps.push(Step::default());
            map = None;
        }
        match (depth, key) {
            (4, "if") => job.always = value == "always()",
            (8, "shard") => {
                job.matrix = value
                    .trim_matches(['[', ']'])
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .collect()
            }
            (6 | 8, "env") if job.steps.last().is_some() => map = Some(("env", 10)),
            (6 | 8, "with") if job.steps.last().is_some() => map = Some(("with", 10)),
            (6 | 8, _) if !job.steps.is_empty() => {
                map = None;
                let step = job.steps.last_mut().unwrap();
                match key {
                    "uses" => step.uses = Some(value),
                    "run" => step.run = Some(value),
                    "if" => step.always = value == "always()",
                    _ => {}
                }
            }
            (10, _) => {
                let (which, _) = map.unwrap_or_else(|| panic!("{line}: not in env or with"));
                let step = job.steps.last_mut().unwrap();
                let entry = (key.to_string(), value);
                if which == "env" {
                    step.env.push(entry)
                } else {
                    step.with.push(entry)
                }
            }
            _ => {}
        }
    }
    jobs
}

/// Copies `from` (a file or a directory) to `to`, files without their execute bit (as an
/// artifact's upload does).
fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::write(to, fs::read(from).unwrap()).unwrap();
    }
}

/// What running a workflow left: each job run's log and whether it succeeded, the JUnit
/// reports its reporting step read.
#[derive(Default)]
pub struct Ran {
    pub jobs: Vec<(String, bool, String)>,
    pub junit_reported: Vec<PathBuf>,
}

/// Runs one step in `ws`; false when it failed.
fn run_step(
    step: &Step,
    ws: &Path,
    env: &[(String, String)],
    root: &Path,
    ran: &mut Ran,
    log: &mut String,
) -> bool {
    let with = |key: &str| {
        step.with
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let artifacts = root.join("artifacts");
    match step.uses.as_deref().map(|u| u.split('@').next().unwrap()) {
        Some("actions/checkout") => copy_tree(&root.join("repo"), ws),
        Some("dtolnay/rust-toolchain" | "Swatinem/rust-cache") => {}
        Some("actions/upload-artifact") => {
            let name = with("name").unwrap();
            for path in with("path")
                .unwrap()
                .lines()
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                let from = ws.join(path.trim_end_matches('/'));
                if from.exists() {
                    copy_tree(
                        &from,
                        &artifacts.join(&name).join(from.file_name().unwrap()),
                    );
                }
            }
        }
        Some("actions/download-artifact") => {
            let to = ws.join(with("path").unwrap_or_default());
            let names: Vec<String> = match (with("name"), with("pattern")) {
                (Some(name), _) => vec![name],
                (None, Some(pattern)) => fs::read_dir(&artifacts)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .filter(|n| n.starts_with(pattern.trim_end_matches('*')))
                    .collect(),
                _ => panic!("download-artifact without name or pattern"),
            };
            assert!(names.len() == 1 || with("merge-multiple").as_deref() == Some("true"));
            for name in names {
                copy_tree(&artifacts.join(name), &to);
            }
        }
        Some("mikepenz/action-junit-report") => {
            ran.junit_reported
                .push(ws.join(with("report_paths").unwrap()));
        }
        Some(other) => panic!("the recipe uses {other}, which this test does not stand in for"),
        None => {
            let out = std::process::Command::new("bash")
                .args([
                    "--noprofile",
                    "--norc",
                    "-eo",
                    "pipefail",
                    "-c",
                    step.run.as_deref().unwrap(),
                ])
                .envs(env.iter().cloned())
                .current_dir(ws)
                .output()
                .unwrap();
            log.push_str(&String::from_utf8_lossy(&out.stdout));
            log.push_str(&String::from_utf8_lossy(&out.stderr));
            return out.status.success();
        }
    }
    true
}

/// Runs `jobs` in order (each needing those before it): each matrix value in a fresh
/// workspace under `root` (`root/repo` is the repository), `${{ matrix.shard }}` and
/// `${{ strategy.job-total }}` substituted, `cargo` standing for the build of the test's own
/// binary, artifacts kept in `root/artifacts`. `stale` files are put in a job's workspace
/// before it starts (a self-hosted runner's leftovers).
pub fn run_workflow(jobs: &[Job], root: &Path, stale: &[(&str, &str)]) -> Ran {
    let stub = root.join("stub");
    fs::create_dir_all(&stub).unwrap();
    // `cargo build --release --locked -p fencesim-cli` gives the binary this test was built with.
    let cargo = format!(
        "#!/bin/sh\n[ \"$*\" = \"build --release --locked -p fencesim-cli\" ] || {{ echo \"cargo $*: not the recipe's build\" >&2; exit 3; }}\nmkdir -p target/release && cp {} target/release/fencesim\n",
        env!("CARGO_BIN_EXE_fencesim")
    );
    fs::write(stub.join("cargo"), cargo).unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    fs::set_permissions(stub.join("cargo"), executable).unwrap();
    let path = format!(
        "{}:{}",
        stub.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = Ran::default();
    let mut failed_before = false;
    for job in jobs {
        if failed_before && !job.always {
            continue;
        }
        let values = if job.matrix.is_empty() {
            vec![String::new()]
        } else {
            job.matrix.clone()
        };
        for value in &values {
            let ws = root.join("ws").join(format!("{}-{value}", job.name));
            fs::create_dir_all(&ws).unwrap();
            for (_, file) in stale.iter().filter(|(name, _)| *name == job.name) {
                fs::create_dir_all(ws.join(file).parent().unwrap()).unwrap();
                fs::write(ws.join(file), "left by an earlier run").unwrap();
            }
            let expand = |text: &str| {
                let text = text
                    .replace("${{ matrix.shard }}", value)
                    .replace("${{ strategy.job-total }}", &values.len().to_string());
                assert!(
                    !text.contains("${{"),
                    "an expression this test does not know: {text}"
                );
                text
            };
            let (mut ok, mut log) = (true, String::new());
            for step in &job.steps {
                if !ok && !step.always {
                    continue;
                }
                let step = Step {
                    uses: step.uses.clone(),
                    run: step.run.as_deref().map(expand),
                    always: step.always,
                    env: step
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), expand(v)))
                        .collect(),
                    with: step
                        .with
                        .iter()
                        .map(|(k, v)| (k.clone(), expand(v)))
                        .collect(),
                };
                let mut env = step.env.clone();
                env.push(("PATH".into(), path.clone()));
                ok &= run_step(&step, &ws, &env, root, &mut ran, &mut log);
            }
            failed_before |= !ok;
            ran.jobs.push((format!("{}-{value}", job.name), ok, log));
        }
    }
    ran
}
