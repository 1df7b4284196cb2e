//! The one test fixture kit: the base scenario every crate's tests vary (`Spec`), the
//! catalogue's scenario files, hand-made seed outcomes and the textbook run.

use fencesim_check::{Checked, SeedOutcome, Violation};
use fencesim_model::{
    history::{BeliefEnd, EventKind, History, PauseKind},
    Invariant,
};
use fencesim_scenario::Scenario;
use std::path::{Path, PathBuf};

/// What varies between the test scenarios; every field left at its default is the base
/// scenario every crate's tests share (two workers on one job, a 10 s TTL, `max-token`):
///
/// ```toml
/// name = "gc-pause-textbook-max-token"
/// description = "000: a holder pauses past its TTL"
/// duration_ms = 60_000
/// seeds = "0..20"
///
/// [lease]
/// ttl_ms = 10_000
/// token_source = "durable-counter"
///
/// [storage]
/// fencing = "max-token"
///
/// [workers]
/// count = 2
/// resources = ["job-1"]
/// work_ms = { dist = "uniform", min = 200, max = 800 }
///
/// [expect]
/// safe = true
/// coverage = ["stale-write-rejected"]
/// ```
///
/// Numbers are written with `_` between thousands, as the catalogue writes them, so a test
/// may edit the text (`replacen("ttl_ms = 5_000", …)`) the way it reads.
pub struct Spec<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub duration_ms: u64,
    pub seeds: &'a str,
    pub ttl_ms: u64,
    /// Extra lines of `[lease]` after `ttl_ms`, e.g. `token_source = "durable-counter"`.
    pub lease: &'a str,
    pub fencing: &'a str,
    /// `[workers]` `count`.
    pub count: u32,
    /// `[workers]` `resources`, as TOML.
    pub resources: &'a str,
    /// `[workers]` `work_ms`, as TOML: a number or a distribution.
    pub work_ms: &'a str,
    /// Extra lines of `[workers]` after `work_ms`, e.g. `writes_per_lease = 100`.
    pub workers: &'a str,
    /// Whole tables appended after `[workers]`, before the faults: `[network]`, `[clocks]`.
    pub tables: &'a str,
    /// TOML appended after the tables: `[faults]` tables and fault arrays.
    pub faults: &'a str,
    /// The body of `[expect]`, the last table (so `faults` never lands inside it).
    pub expect: &'a str,
}

impl Default for Spec<'_> {
    fn default() -> Self {
        Spec {
            name: "gc-pause-textbook-max-token",
            description: "000: a holder pauses past its TTL",
            duration_ms: 60_000,
            seeds: "0..20",
            ttl_ms: 10_000,
            lease: "token_source = \"durable-counter\"",
            fencing: "max-token",
            count: 2,
            resources: "[\"job-1\"]",
            work_ms: "{ dist = \"uniform\", min = 200, max = 800 }",
            workers: "",
            tables: "",
            faults: "",
            expect: "safe = true\ncoverage = [\"stale-write-rejected\"]",
        }
    }
}

impl Spec<'_> {
    /// The scenario file's text.
    pub fn toml(&self) -> String {
        let mut text = format!(
            "name = {name:?}\n\
             description = {description:?}\n\
             duration_ms = {duration_ms}\n\
             seeds = {seeds:?}\n\
             \n\
             [lease]\n\
             ttl_ms = {ttl_ms}\n",
            name = self.name,
            description = self.description,
            duration_ms = grouped(self.duration_ms),
            seeds = self.seeds,
            ttl_ms = grouped(self.ttl_ms),
        );
        lines(&mut text, self.lease);
        text += &format!(
            "\n[storage]\nfencing = {fencing:?}\n\n\
             [workers]\ncount = {count}\nresources = {resources}\nwork_ms = {work_ms}\n",
            fencing = self.fencing,
            count = self.count,
            resources = self.resources,
            work_ms = self.work_ms,
        );
        lines(&mut text, self.workers);
        for more in [self.tables, self.faults] {
            if !more.trim().is_empty() {
                text.push('\n');
                lines(&mut text, more.trim_start_matches('\n'));
            }
        }
        text += "\n[expect]\n";
        lines(&mut text, self.expect);
        text
    }

    /// The scenario, through the real parser (file name `testing.toml`).
    pub fn scenario(&self) -> Scenario {
        let text = self.toml();
        fencesim_scenario::parse_str(&text, "testing.toml")
            .unwrap_or_else(|error| panic!("test scenario is valid: {error}\n{text}"))
    }
}

/// Appends `more` to `text` as whole lines (a final newline added if it lacks one).
fn lines(text: &mut String, more: &str) {
    if !more.is_empty() {
        text.push_str(more);
        if !more.ends_with('\n') {
            text.push('\n');
        }
    }
}

/// `n` with `_` between thousands: 60_000, 500, 1_000_000.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push('_');
        }
        out.push(digit);
    }
    out
}

/// A scenario through the real parser, so tests do not restate every spec field.
pub fn scenario(spec: Spec<'_>) -> Scenario {
    spec.scenario()
}

/// The catalogue's directory, `scenarios/` at the repository's root.
pub fn catalogue_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// The path of catalogue scenario `name` (`scenarios/<name>.toml`; `name` may name a
/// subdirectory: `tune/jvm-gc`).
pub fn catalogue_path(name: &str) -> PathBuf {
    catalogue_dir().join(format!("{name}.toml"))
}

/// Every scenario file directly in `scenarios/<subdirectory>` (`""`: the catalogue's top),
/// in name order.
pub fn catalogue_files(subdirectory: &str) -> Vec<PathBuf> {
    let dir = catalogue_dir().join(subdirectory);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    files.sort();
    files
}

/// Catalogue scenario `name`, loaded as `fencesim` loads it.
pub fn catalogue(name: &str) -> Scenario {
    let path = catalogue_path(name);
    fencesim_scenario::load(&path).unwrap_or_else(|error| panic!("{error}"))
}

/// A seed outcome violating `violated` (one violation each), optionally panicked, whose
/// metrics hit `stale-write-rejected` in every third seed and hold floats that do not
/// survive a careless JSON round trip, and whose run visited the abstract states `start`,
/// `kind-<seed % 4>` and, in seeds divisible by 9, `nine`, with the transitions from
/// `start` to each.
pub fn outcome(seed: u64, violated: &[Invariant], panic: Option<&str>) -> SeedOutcome {
    let mut checked = Checked {
        violations: violated
            .iter()
            .map(|invariant| Violation {
                invariant: *invariant,
                scope: "job-1".into(),
                t_ns: 1_000 + seed,
                message: format!("{invariant} broken in seed {seed}"),
                evidence: vec![0],
            })
            .collect(),
        metrics: Default::default(),
        visited: visited(seed),
    };
    let metrics = &mut checked.metrics;
    metrics.acquisitions = seed % 5 + 1;
    metrics.stale_write_rejections = [1, 0, 0][(seed % 3) as usize];
    metrics.lease_age_ms_mean = 0.1 + 0.2 * seed as f64 / 3.0;
    metrics.lease_age_ms_max = 1.0 / 3.0 + seed as f64 * 1e-9;
    metrics.takeover_latency_ms =
        vec![2.0_f64.sqrt() * seed as f64, 5e-324, 1.7976931348623157e308];
    SeedOutcome {
        seed,
        trace_hash: format!("{:016x}", seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        events: 10 + seed as usize,
        checked,
        panic: panic.map(str::to_string),
        runaway: false,
    }
}

/// The abstract states and transitions of [`outcome`]'s run: `start` is the state before the
/// first grant, `kind-K` and `nine` are real state texts (a merge refuses made-up ones).
fn visited(seed: u64) -> fencesim_check::abstract_state::Visited {
    const KINDS: [&str; 4] = [
        "[lease=held store=empty inflight=none: holder(running)]",
        "[lease=held store=equal inflight=current: holder(running)]",
        "[lease=free store=equal inflight=none: expired-holder(gc-paused)]",
        "[lease=held store=below inflight=stale: holder(running), stale-holder(vm-suspended)]",
    ];
    let start = "no lease granted".to_string();
    let mut states = vec![start.clone(), KINDS[(seed % 4) as usize].to_string()];
    if seed.is_multiple_of(9) {
        states.push("[lease=double store=equal inflight=none: holder(cut-off)]".to_string());
    }
    let transitions = states[1..]
        .iter()
        .map(|to| (start.clone(), to.clone()))
        .collect();
    fencesim_check::abstract_state::Visited {
        states: states.into_iter().collect(),
        transitions,
    }
}

/// Seed 000's story as a hand-built history of a 30 s run with storage fencing `none`:
/// worker-0 gets token 1, writes twice, GC-pauses for 15 s; the service expires its lease
/// and grants token 2 to worker-1, which writes every ~450 ms and renews every 3.3 s;
/// worker-0 resumes at 16 s and its stale write op 3 is accepted (I3 and I4). The checker
/// is the real one, so the violations and their evidence are what a real run would give.
pub fn textbook_run() -> (History, Checked) {
    let mut h = History::default();
    first_tenure(&mut h);
    takeover(&mut h);
    second_tenure(&mut h);
    h.push(30_000 * MS, "nemesis", EventKind::RunEnded);
    let checked = fencesim_check::check(&h);
    (h, checked)
}

const MS: u64 = fencesim_model::NS_PER_MS;

/// `writer`'s write `op` with `token` at `t_ms`: sent, then presented to and accepted by the
/// storage 0.3 ms later over the token `prev` (0: none before it).
fn write(h: &mut History, t_ms: u64, op: u64, writer: &str, token: u64, prev: u64) {
    h.push(
        t_ms * MS,
        writer,
        EventKind::WriteSent {
            op,
            resource: "job-1".into(),
            token,
        },
    );
    let common = (op, "job-1".to_string(), writer.to_string(), token);
    h.push(
        t_ms * MS + 300_000,
        "storage",
        EventKind::WritePresented {
            op: common.0,
            resource: common.1.clone(),
            lease_scope: common.1.clone(),
            writer: common.2.clone(),
            token,
        },
    );
    h.push(
        t_ms * MS + 300_000,
        "storage",
        EventKind::WriteAccepted {
            op,
            resource: common.1.clone(),
            lease_scope: common.1,
            writer: common.2,
            token: common.3,
            previous: (prev > 0).then_some(prev),
        },
    );
}

/// The run starts; worker-0 gets token 1, writes twice and GC-pauses at 1 s.
fn first_tenure(h: &mut History) {
    h.push(
        0,
        "nemesis",
        EventKind::RunStarted {
            seed: 0,
            liveness_bound_ms: 30_000,
        },
    );
    h.push(
        184_000,
        "coordinator",
        EventKind::Granted {
            scope: "job-1".into(),
            holder: "worker-0".into(),
            token: 1,
            expires_mono_ms: 10_000.184,
        },
    );
    h.push(
        340_000,
        "worker-0",
        EventKind::BeliefStarted {
            scope: "job-1".into(),
            token: 1,
            local_deadline_mono_ms: 10_000.0,
        },
    );
    write(h, 725, 1, "worker-0", 1, 0);
    write(h, 968, 2, "worker-0", 1, 1);
    h.push(
        1_000 * MS,
        "worker-0",
        EventKind::Paused {
            kind: PauseKind::Gc,
            planned_ms: 15_000.0,
        },
    );
}

/// The service expires worker-0's lease at 10 s and grants token 2 to worker-1.
fn takeover(h: &mut History) {
    h.push(
        10_000 * MS,
        "coordinator",
        EventKind::Expired {
            scope: "job-1".into(),
            holder: "worker-0".into(),
            token: 1,
        },
    );
    h.push(
        10_064 * MS,
        "coordinator",
        EventKind::Granted {
            scope: "job-1".into(),
            holder: "worker-1".into(),
            token: 2,
            expires_mono_ms: 20_064.0,
        },
    );
    h.push(
        10_065 * MS,
        "worker-1",
        EventKind::BeliefStarted {
            scope: "job-1".into(),
            token: 2,
            local_deadline_mono_ms: 20_064.0,
        },
    );
}

/// worker-1 writes every ~450 ms and renews every 3.3 s; worker-0 resumes at 16 s and its
/// write op 3, held since the pause, arrives and is accepted.
fn second_tenure(h: &mut History) {
    let mut op = 4;
    let mut renew_ms = 13_400;
    let mut t_ms = 10_300;
    let mut previous = 1;
    while t_ms < 30_000 {
        if t_ms > 16_000 && op < 100 {
            // worker-0 resumes and its write, held since the pause, arrives.
            h.push(
                16_000 * MS,
                "worker-0",
                EventKind::Resumed {
                    kind: PauseKind::Gc,
                },
            );
            write(h, 16_000, 3, "worker-0", 1, 2);
            h.push(
                16_001 * MS,
                "worker-0",
                EventKind::BeliefEnded {
                    scope: "job-1".into(),
                    token: 1,
                    why: BeliefEnd::DeadlinePassed,
                    local_mono_ms: 16_001.0,
                },
            );
            op = 100;
        }
        if t_ms > renew_ms {
            h.push(
                renew_ms * MS,
                "coordinator",
                EventKind::Renewed {
                    scope: "job-1".into(),
                    holder: "worker-1".into(),
                    token: 2,
                },
            );
            renew_ms += 3_333;
        }
        write(h, t_ms, op, "worker-1", 2, previous);
        previous = 2;
        op += 1;
        t_ms += 450;
    }
}

/// The nodes of [`textbook_run`], in `Scenario::node_names` order, and the nemesis.
pub fn textbook_nodes() -> Vec<String> {
    ["coordinator", "storage", "worker-0", "worker-1", "nemesis"]
        .map(String::from)
        .to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        let cases = [(0, "0"), (500, "500"), (1_000, "1_000"), (60_000, "60_000")];
        for (n, text) in cases {
            assert_eq!(grouped(n), text);
        }
        assert_eq!(grouped(1_234_567), "1_234_567");
    }

    #[test]
    fn every_part_lands_in_its_table_and_expect_stays_last() {
        let spec = Spec {
            workers: "writes_per_lease = 100",
            tables: "[network]\nloss = 0.25",
            faults: "\n[[faults.schedule]]\nat_ms = 0\nkind = \"panic\"\nnode = \"worker-1\"\n",
            ..Spec::default()
        };
        let scenario = spec.scenario();
        assert_eq!(scenario.workers.writes_per_lease, 100);
        assert_eq!(scenario.network.loss, 0.25);
        assert_eq!(scenario.faults.schedule.len(), 1);
        assert_eq!(scenario.expect.coverage.len(), 1);
        let text = spec.toml();
        assert!(
            text.contains("\n[lease]\nttl_ms = 10_000\ntoken_source"),
            "{text}"
        );
        assert!(text.ends_with("[expect]\nsafe = true\ncoverage = [\"stale-write-rejected\"]\n"));
    }
}
