//! `xtask bench`: what a seed costs, measured in one run against a bare-madsim baseline
//! (`fencesim_sim::baseline`) that sends the same messages over the same virtual time and
//! checks nothing. Writes DIR/bench.md and DIR/bench.json and prints whether each of its
//! targets is met.
//!
//! CPU time is the process's user + system time from /proc/self/stat (every thread, seed
//! threads included; clock ticks of 10 ms), so the timed sections run one seed at a time
//! except the `--jobs` comparison, which is timed by wall clock in alternating pairs (median
//! speedup). Peak RSS is read from /proc/self/status (`VmHWM`) by child processes
//! (`xtask bench --rss-child N`), one per seed count, since a process's peak never goes
//! down.

use std::{path::PathBuf, process::Command, sync::Arc, time::Duration};

use fencesim::{run_seed, Components};
use fencesim_scenario::{Override, Scenario, SeedRange};
use fencesim_sim::baseline::{run_baseline, BaselineSpec};
use serde_json::{json, Value};

use crate::shared::InputError;

/// The reference workload: 5 workers, 60 s of virtual time, GC pauses, loss, spikes,
/// partitions and held links, max-token fencing (the catalogue's acceptance scenario).
const REFERENCE: &str = include_str!("../../../scenarios/chaos-5-workers-max-token.toml");
const REFERENCE_FILE: &str = "scenarios/chaos-5-workers-max-token.toml";

/// Largest seed count an `--rss-child` may run (the full bench's largest is 100 000).
const MAX_RSS_SEEDS: u64 = 1_000_000;

#[derive(clap::Args)]
pub(crate) struct BenchArgs {
    /// A smaller bench for CI (under a minute): fewer seeds and repetitions, RSS up to
    /// 5 000 seeds only.
    #[arg(long)]
    quick: bool,
    /// Exit 1 when the harness's median CPU per message exceeds R times the bare-madsim
    /// baseline's (a regression guard for CI: `.ci/run` uses 1.2). The ratio is measured in
    /// one run, so machine noise mostly cancels.
    #[arg(long, value_name = "R")]
    max_ratio: Option<f64>,
    /// Output directory: DIR/bench.md and DIR/bench.json.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Internal: run N seeds of the short RSS scenario as `run` does, print the peak RSS.
    #[arg(long, hide = true)]
    rss_child: Option<u64>,
}

/// What one bench size runs.
struct Plan {
    reps: usize,
    ratio_seeds: u64,
    scale_seeds: u64,
    jobs_seeds: u64,
    rss_counts: &'static [u64],
}

const FULL: Plan = Plan {
    reps: 5,
    ratio_seeds: 100,
    scale_seeds: 16,
    jobs_seeds: 200,
    rss_counts: &[1_000, 5_000, 100_000],
};

const QUICK: Plan = Plan {
    reps: 3,
    ratio_seeds: 30,
    scale_seeds: 4,
    jobs_seeds: 40,
    rss_counts: &[1_000, 5_000],
};

pub(crate) fn bench(args: &BenchArgs) -> Result<bool, InputError> {
    if let Some(seeds) = args.rss_child {
        return rss_child(seeds);
    }
    if let Some(max) = args.max_ratio {
        if !(max.is_finite() && max > 0.0) {
            return Err(InputError(format!(
                "--max-ratio: expected a positive ratio, got {max}"
            )));
        }
    }
    let (md_path, json_path) = (args.out.join("bench.md"), args.out.join("bench.json"));
    fencesim::outputs::preflight(
        &[
            fencesim::outputs::Output::new("--out", &md_path),
            fencesim::outputs::Output::new("--out", &json_path),
        ],
        &[],
    )?;
    let plan = if args.quick { &QUICK } else { &FULL };
    let load_before = loadavg();
    println!(
        "fencesim bench{} (load average before: {load_before})",
        if args.quick { " --quick" } else { "" }
    );

    let reference = Arc::new(scenario(&[])?);
    let ratio = ratio(&reference, plan)?;
    let duration = scaling(
        "duration",
        plan,
        &[],
        &[Override::parse("duration_ms=600000").map_err(InputError)?],
    )?;
    let workers = scaling(
        "workers",
        plan,
        &[],
        &[Override::parse("workers.count=50").map_err(InputError)?],
    )?;
    let jobs = jobs_scaling(&reference, plan.jobs_seeds, plan.reps);
    let rss = rss(plan)?;
    let load_after = loadavg();

    let targets = targets(&ratio, &duration, &workers, &jobs, &rss);
    let report = json!({
        "mode": if args.quick { "quick" } else { "full" },
        "load_average_before": load_before,
        "load_average_after": load_after,
        "reference": REFERENCE_FILE,
        "harness_vs_baseline": ratio,
        "scaling_duration": duration,
        "scaling_workers": workers,
        "scaling_jobs": jobs,
        "peak_rss": rss,
        "targets": targets,
    });
    let markdown = markdown(&report);
    print!("{markdown}");
    let json_text = format!("{}\n", serde_json::to_string_pretty(&report).expect("json"));
    write_both(&[(&json_path, &json_text), (&md_path, &markdown)])?;
    match args.max_ratio {
        None => Ok(true),
        Some(max) => {
            let (met, line) = ratio_guard(ratio["ratio_median"].as_f64(), max);
            println!("{line}");
            Ok(met)
        }
    }
}

/// Writes the files as one set: both staged, then renamed together, so there is never a new
/// bench.json beside an old bench.md.
fn write_both(files: &[(&PathBuf, &String); 2]) -> Result<(), InputError> {
    let mut set = fencesim::fs::OutputSet::new();
    for (path, text) in files {
        set.add(path, text.as_bytes())
            .map_err(|e| InputError(format!("{}: cannot write: {e}", path.display())))?;
    }
    set.commit().map_err(|e| InputError(e.to_string()))?;
    println!(
        "written: {} and {}",
        files[1].0.display(),
        files[0].0.display()
    );
    Ok(())
}

/// Whether the median per-message ratio is within `max`, and the line saying so.
fn ratio_guard(median: Option<f64>, max: f64) -> (bool, String) {
    match median {
        Some(median) if median <= max => (
            true,
            format!("--max-ratio {max}: met (median {median:.3}x per message)"),
        ),
        Some(median) => (
            false,
            format!(
                "--max-ratio {max}: EXCEEDED: median {median:.3}x the bare-madsim baseline's CPU \
                 per message (a performance regression; bench.md has the repetitions)"
            ),
        ),
        None => (false, format!("--max-ratio {max}: no ratio was measured")),
    }
}

fn scenario(set: &[Override]) -> Result<Scenario, InputError> {
    Ok(fencesim_scenario::parse_str_with(
        REFERENCE,
        REFERENCE_FILE,
        set,
    )?)
}

/// Process CPU time (user + system, every thread) in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): state is field 3, utime 14,
    // stime 15.
    let rest = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |index: usize| fields.get(index).and_then(|f| f.parse::<u64>().ok());
    let (Some(user), Some(system)) = (ticks(11), ticks(12)) else {
        return 0.0;
    };
    // USER_HZ is 100 on every Linux ABI (the kernel's CLOCK_TICKS for /proc).
    (user + system) as f64 / 100.0
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}

/// A timed batch of seeds.
#[derive(Clone, Copy, Debug, Default)]
struct Batch {
    seeds: u64,
    cpu_s: f64,
    wall_s: f64,
    messages: u64,
    events: u64,
    virtual_s: f64,
}

impl Batch {
    fn json(&self) -> Value {
        json!({
            "seeds": self.seeds,
            "cpu_s": round(self.cpu_s, 3),
            "wall_s": round(self.wall_s, 3),
            "messages": self.messages,
            "events": self.events,
            "virtual_s": round(self.virtual_s, 3),
            "seeds_per_cpu_s": round(per(self.seeds as f64, self.cpu_s), 1),
            "messages_per_cpu_s": round(per(self.messages as f64, self.cpu_s), 0),
            "events_per_cpu_s": round(per(self.events as f64, self.cpu_s), 0),
            "virtual_s_per_wall_s": round(per(self.virtual_s, self.wall_s), 1),
            "cpu_us_per_message": round(per(self.cpu_s * 1e6, self.messages as f64), 3),
        })
    }
}

fn per(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// Per-seed traffic of the harness, which the baseline reproduces.
#[derive(Clone, Copy)]
struct Traffic {
    seed: u64,
    messages: u64,
    virtual_ns: u64,
}

fn run_harness(scenario: &Arc<Scenario>, seeds: SeedRange) -> (Batch, Vec<Traffic>) {
    let mut traffic = Vec::new();
    let mut batch = Batch::default();
    let (cpu, wall) = (cpu_seconds(), crate::shared::wall_now());
    for seed in seeds.iter() {
        let result = run_seed(scenario, seed, &Components::default());
        let virtual_ns = result.history.events.last().map_or(0, |e| e.t_ns);
        batch.seeds += 1;
        batch.messages += result.messages;
        batch.events += result.outcome.events as u64;
        batch.virtual_s += virtual_ns as f64 / 1e9;
        traffic.push(Traffic {
            seed,
            messages: result.messages,
            virtual_ns,
        });
    }
    batch.cpu_s = cpu_seconds() - cpu;
    batch.wall_s = wall.elapsed().as_secs_f64();
    (batch, traffic)
}

fn run_bare(traffic: &[Traffic], clients: usize) -> Batch {
    let mut batch = Batch::default();
    let (cpu, wall) = (cpu_seconds(), crate::shared::wall_now());
    for t in traffic {
        let result = run_baseline(
            t.seed,
            BaselineSpec {
                clients,
                duration: Duration::from_nanos(t.virtual_ns),
                messages: t.messages,
                // The reference network's median 0.5 ms and p99 5 ms, as a uniform range.
                latency: Duration::from_micros(500)..Duration::from_millis(5),
            },
        );
        batch.seeds += 1;
        batch.messages += result.messages;
        batch.virtual_s += t.virtual_ns as f64 / 1e9;
    }
    batch.cpu_s = cpu_seconds() - cpu;
    batch.wall_s = wall.elapsed().as_secs_f64();
    batch
}

fn median(values: &[f64]) -> f64 {
    fencesim_stats::median(values).unwrap_or(0.0)
}

/// Harness vs baseline, alternating repetitions.
fn ratio(reference: &Arc<Scenario>, plan: &Plan) -> Result<Value, InputError> {
    let seeds = SeedRange {
        start: 0,
        end: plan.ratio_seeds,
    };
    let clients = reference.workers.count;
    let mut reps = Vec::new();
    let mut ratios = Vec::new();
    for rep in 0..plan.reps {
        let (harness, traffic) = run_harness(reference, seeds);
        let bare = run_bare(&traffic, clients);
        let ratio = per(
            per(harness.cpu_s, harness.messages as f64),
            per(bare.cpu_s, bare.messages as f64),
        );
        eprintln!(
            "  rep {}: harness {:.2} s CPU for {} messages, baseline {:.2} s for {}: {:.2}x per message",
            rep + 1,
            harness.cpu_s,
            harness.messages,
            bare.cpu_s,
            bare.messages,
            ratio
        );
        ratios.push(ratio);
        reps.push(json!({"harness": harness.json(), "baseline": bare.json(), "ratio_per_message": round(ratio, 3)}));
    }
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(0.0, f64::max);
    let med = median(&ratios);
    Ok(json!({
        "seeds_per_rep": plan.ratio_seeds,
        "reps": reps,
        "ratio_median": round(med, 3),
        "ratio_min": round(min, 3),
        "ratio_max": round(max, 3),
    }))
}

/// The reference against a changed copy (`set`), per seed and per virtual second.
fn scaling(
    what: &str,
    plan: &Plan,
    base: &[Override],
    changed: &[Override],
) -> Result<Value, InputError> {
    let seeds = SeedRange {
        start: 0,
        end: plan.scale_seeds,
    };
    let a = Arc::new(scenario(base)?);
    let b = Arc::new(scenario(changed)?);
    let (one, _) = run_harness(&a, seeds);
    let (other, _) = run_harness(&b, seeds);
    let time_ratio = per(other.cpu_s, one.cpu_s);
    let per_virtual = per(
        per(other.cpu_s, other.virtual_s),
        per(one.cpu_s, one.virtual_s),
    );
    eprintln!("  {what}: {time_ratio:.2}x CPU per seed, {per_virtual:.2}x per virtual second");
    Ok(json!({
        "base": one.json(),
        "changed": other.json(),
        "changed_set": changed.iter().map(Override::to_arg).collect::<Vec<_>>(),
        "cpu_ratio_per_seed": round(time_ratio, 3),
        "cpu_ratio_per_virtual_s": round(per_virtual, 3),
    }))
}

/// Throughput of `sweep` with 1 and 2 threads (wall clock), in `reps` alternating pairs
/// (1, 2, 1, 2, ...): the speedup is the median of the pairs' speedups, so one burst of
/// another process's load moves one pair, not the figure.
fn jobs_scaling(reference: &Arc<Scenario>, seeds: u64, reps: usize) -> Value {
    let mut pairs = Vec::new();
    for _ in 0..reps.max(1) {
        let mut walls = [0.0; 2];
        for (slot, jobs) in [1usize, 2].into_iter().enumerate() {
            let wall = crate::shared::wall_now();
            let outcomes = fencesim::sweep_all(reference, 0..seeds, jobs, &Components::default());
            assert_eq!(outcomes.len() as u64, seeds);
            walls[slot] = wall.elapsed().as_secs_f64();
        }
        let speedup = per(walls[0], walls[1]);
        eprintln!(
            "  --jobs 1 {:.2} s, --jobs 2 {:.2} s: {speedup:.2}x",
            walls[0], walls[1]
        );
        pairs.push((speedup, walls));
    }
    let speedups: Vec<f64> = pairs.iter().map(|(speedup, _)| *speedup).collect();
    let speedup = median(&speedups);
    let min = speedups.iter().copied().fold(f64::INFINITY, f64::min);
    let max = speedups.iter().copied().fold(0.0, f64::max);
    // The pair whose speedup is the median (the lower middle one for an even count).
    let (_, walls) = pairs
        .iter()
        .min_by(|a, b| (a.0 - speedup).abs().total_cmp(&(b.0 - speedup).abs()))
        .copied()
        .unwrap_or((0.0, [0.0, 0.0]));
    eprintln!(
        "  --jobs 2: {speedup:.2}x the throughput of --jobs 1 (median of {} pairs)",
        pairs.len()
    );
    json!({
        "seeds": seeds,
        "pairs": pairs.len(),
        "wall_s_jobs_1": round(walls[0], 3),
        "wall_s_jobs_2": round(walls[1], 3),
        "seeds_per_wall_s_jobs_1": round(per(seeds as f64, walls[0]), 1),
        "seeds_per_wall_s_jobs_2": round(per(seeds as f64, walls[1]), 1),
        "speedup": round(speedup, 3),
        "speedup_min": round(min, 3),
        "speedup_max": round(max, 3),
        "speedups": pairs.iter().map(|(speedup, _)| round(*speedup, 3)).collect::<Vec<_>>(),
    })
}

/// The short scenario of the RSS measurement: the reference with 2 workers, a 500 ms TTL
/// and 1 s of safety phase (what grows with seeds is what is kept per seed, not the run).
const RSS_SET: [&str; 3] = ["duration_ms=1000", "lease.ttl_ms=500", "workers.count=2"];

fn rss_scenario() -> Result<Scenario, InputError> {
    let set = RSS_SET
        .iter()
        .map(|arg| Override::parse(arg).map_err(InputError))
        .collect::<Result<Vec<_>, _>>()?;
    scenario(&set)
}

fn rss(plan: &Plan) -> Result<Value, InputError> {
    let exe = std::env::current_exe()
        .map_err(|e| InputError(format!("cannot find the fencesim binary: {e}")))?;
    let mut rows = Vec::new();
    for &seeds in plan.rss_counts {
        let wall = crate::shared::wall_now();
        let output = Command::new(&exe)
            .args(["bench", "--rss-child", &seeds.to_string()])
            .output()
            .map_err(|e| InputError(format!("cannot run {}: {e}", exe.display())))?;
        let text = String::from_utf8_lossy(&output.stdout);
        let kb: u64 = text
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM_kB "))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                InputError(format!(
                    "bench --rss-child {seeds} printed no VmHWM: {}",
                    String::from_utf8_lossy(&output.stderr)
                ))
            })?;
        let secs = wall.elapsed().as_secs_f64();
        eprintln!(
            "  peak RSS after {seeds} seeds: {:.1} MB ({secs:.1} s)",
            kb as f64 / 1024.0
        );
        rows.push(json!({"seeds": seeds, "peak_rss_mb": round(kb as f64 / 1024.0, 1), "wall_s": round(secs, 1)}));
    }
    Ok(json!({
        "scenario": format!("{REFERENCE_FILE} --set {}", RSS_SET.join(" --set ")),
        "jobs": 2,
        "rows": rows,
    }))
}

/// Runs `seeds` seeds as `fencesim run` does (sweep, then summary), prints `VmHWM_kB N`.
fn rss_child(seeds: u64) -> Result<bool, InputError> {
    if seeds == 0 || seeds > MAX_RSS_SEEDS {
        return Err(InputError(format!(
            "--rss-child: expected 1..={MAX_RSS_SEEDS} seeds, got {seeds}"
        )));
    }
    let scenario = Arc::new(rss_scenario()?);
    let range = SeedRange {
        start: 0,
        end: seeds,
    };
    let swept = fencesim::sweep_summarized(&scenario, range, 2, &Components::default(), &|_| {});
    let json = fencesim_verdict::to_json(&swept.summary);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or_else(|| InputError("/proc/self/status has no VmHWM".into()))?;
    println!("summary_bytes {}", json.len());
    println!("VmHWM_kB {kb}");
    Ok(true)
}

fn targets(ratio: &Value, duration: &Value, workers: &Value, jobs: &Value, rss: &Value) -> Value {
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let rows = rss["rows"].as_array().cloned().unwrap_or_default();
    let rss_at = |seeds: u64| {
        rows.iter()
            .find(|row| row["seeds"].as_u64() == Some(seeds))
            .map(|row| num(&row["peak_rss_mb"]))
    };
    let growth = match (rss_at(1_000), rss_at(100_000)) {
        (Some(a), Some(b)) => json!({"value": round(b - a, 1), "met": b - a <= 20.0}),
        _ => json!({"value": null, "met": null, "note": "100 000 seeds are not run by --quick"}),
    };
    let check = |value: f64, limit: f64, at_most: bool| json!({"value": round(value, 3), "met": if at_most { value <= limit } else { value >= limit }});
    json!([
        {"target": "harness CPU per message <= 1.0x the bare-madsim baseline (median)",
         "result": check(num(&ratio["ratio_median"]), 1.0, true)},
        {"target": "--jobs 2 >= 1.8x the throughput of --jobs 1",
         "result": check(num(&jobs["speedup"]), 1.8, false)},
        {"target": "peak RSS grows <= 20 MB from 1 000 to 100 000 seeds",
         "result": growth},
        {"target": "x10 virtual duration costs <= x11 CPU time",
         "result": check(num(&duration["cpu_ratio_per_seed"]), 11.0, true)},
        {"target": "50 workers cost <= 12x of 5 workers per virtual second",
         "result": check(num(&workers["cpu_ratio_per_virtual_s"]), 12.0, true)},
    ])
}

fn verdict(result: &Value) -> &'static str {
    match result["met"].as_bool() {
        Some(true) => "met",
        Some(false) => "NOT MET",
        None => "not measured",
    }
}

fn markdown(report: &Value) -> String {
    let mut out = String::new();
    push_targets(&mut out, report);
    push_harness_vs_baseline(&mut out, &report["harness_vs_baseline"]);
    push_scaling(&mut out, report);
    push_peak_rss(&mut out, &report["peak_rss"]);
    out
}

/// A number as the report shows it; `-` for none.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// The title, how the run was made and every target's verdict.
fn push_targets(out: &mut String, report: &Value) {
    out.push_str("# fencesim bench\n\n");
    out.push_str(&format!(
        "Mode: {}. Load average (1, 5, 15 min) before: {}, after: {}. Reference: `{}`.\n\
         CPU time is the process's user + system time (10 ms ticks); every timed section \
         except `--jobs` runs one seed at a time. Regenerate with \
         `cargo run --release -p fencesim-xtask -- bench`.\n\n",
        report["mode"].as_str().unwrap_or(""),
        report["load_average_before"].as_str().unwrap_or(""),
        report["load_average_after"].as_str().unwrap_or(""),
        REFERENCE_FILE
    ));
    out.push_str("## Targets\n\n| target | value | result |\n|---|---|---|\n");
    for row in report["targets"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            row["target"].as_str().unwrap_or(""),
            cell(&row["result"]["value"]),
            verdict(&row["result"])
        ));
    }
}

/// The harness against bare madsim, per repetition, and the reference throughput.
fn push_harness_vs_baseline(out: &mut String, ratio: &Value) {
    out.push_str(&format!(
        "\n## Harness vs bare madsim (same messages, same virtual time)\n\n\
         Per message, harness CPU / baseline CPU: median {}, min {}, max {} over {} alternating \
         repetitions of {} seeds.\n\n\
         | rep | harness msgs | harness CPU s | harness µs/msg | baseline msgs | baseline CPU s | baseline µs/msg | ratio |\n\
         |---|---|---|---|---|---|---|---|\n",
        cell(&ratio["ratio_median"]),
        cell(&ratio["ratio_min"]),
        cell(&ratio["ratio_max"]),
        ratio["reps"].as_array().map_or(0, Vec::len),
        cell(&ratio["seeds_per_rep"]),
    ));
    for (index, rep) in ratio["reps"].as_array().into_iter().flatten().enumerate() {
        let (h, b) = (&rep["harness"], &rep["baseline"]);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            index + 1,
            cell(&h["messages"]),
            cell(&h["cpu_s"]),
            cell(&h["cpu_us_per_message"]),
            cell(&b["messages"]),
            cell(&b["cpu_s"]),
            cell(&b["cpu_us_per_message"]),
            cell(&rep["ratio_per_message"])
        ));
    }
    if let Some(first) = ratio["reps"].as_array().and_then(|r| r.first()) {
        let h = &first["harness"];
        out.push_str(&format!(
            "\nReference throughput (rep 1): {} seeds/CPU s, {} events/CPU s, {} messages/CPU s, \
             {} virtual s per wall s.\n",
            cell(&h["seeds_per_cpu_s"]),
            cell(&h["events_per_cpu_s"]),
            cell(&h["messages_per_cpu_s"]),
            cell(&h["virtual_s_per_wall_s"])
        ));
    }
}

/// CPU time as the duration, the workers and `--jobs` change.
fn push_scaling(out: &mut String, report: &Value) {
    out.push_str("\n## Scaling\n\n| change | base CPU s | changed CPU s | per seed | per virtual s |\n|---|---|---|---|---|\n");
    for key in ["scaling_duration", "scaling_workers"] {
        let s = &report[key];
        out.push_str(&format!(
            "| `--set {}` ({} seeds) | {} | {} | {}x | {}x |\n",
            s["changed_set"][0].as_str().unwrap_or(""),
            cell(&s["base"]["seeds"]),
            cell(&s["base"]["cpu_s"]),
            cell(&s["changed"]["cpu_s"]),
            cell(&s["cpu_ratio_per_seed"]),
            cell(&s["cpu_ratio_per_virtual_s"])
        ));
    }
    let jobs = &report["scaling_jobs"];
    out.push_str(&format!(
        "\n`--jobs 1` vs `--jobs 2` over {} seeds, {} alternating pairs: speedup {}x (median; \
         min {}, max {}). The median pair: {} s vs {} s wall ({} vs {} seeds/s).\n",
        cell(&jobs["seeds"]),
        cell(&jobs["pairs"]),
        cell(&jobs["speedup"]),
        cell(&jobs["speedup_min"]),
        cell(&jobs["speedup_max"]),
        cell(&jobs["wall_s_jobs_1"]),
        cell(&jobs["wall_s_jobs_2"]),
        cell(&jobs["seeds_per_wall_s_jobs_1"]),
        cell(&jobs["seeds_per_wall_s_jobs_2"])
    ));
}

/// Peak RSS per seed count.
fn push_peak_rss(out: &mut String, rss: &Value) {
    out.push_str(&format!(
        "\n## Peak RSS\n\nOne child process per seed count (`{}`, `--jobs {}`, sweep + summary as \
         `fencesim run`), `VmHWM` from /proc/self/status.\n\n| seeds | peak RSS MB | wall s |\n|---|---|---|\n",
        rss["scenario"].as_str().unwrap_or(""),
        cell(&rss["jobs"])
    ));
    for row in rss["rows"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            cell(&row["seeds"]),
            cell(&row["peak_rss_mb"]),
            cell(&row["wall_s"])
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(
        ratio: f64,
        speedup: f64,
        rss: &[(u64, f64)],
        dur: f64,
        workers: f64,
    ) -> Vec<Value> {
        let rows: Vec<Value> = rss
            .iter()
            .map(|(seeds, mb)| json!({"seeds": seeds, "peak_rss_mb": mb}))
            .collect();
        let targets = targets(
            &json!({"ratio_median": ratio}),
            &json!({"cpu_ratio_per_seed": dur}),
            &json!({"cpu_ratio_per_virtual_s": workers}),
            &json!({"speedup": speedup}),
            &json!({"rows": rows}),
        );
        targets
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["result"]["met"].clone())
            .collect()
    }

    #[test]
    fn targets_are_judged_at_their_limits() {
        let met = verdicts(1.0, 1.8, &[(1_000, 10.0), (100_000, 30.0)], 11.0, 12.0);
        assert_eq!(met, vec![json!(true); 5]);
        let missed = verdicts(1.01, 1.79, &[(1_000, 10.0), (100_000, 30.1)], 11.01, 12.01);
        assert_eq!(missed, vec![json!(false); 5]);
        // --quick runs no 100 000 seeds: not measured, not "met".
        let quick = verdicts(0.9, 2.0, &[(1_000, 10.0), (5_000, 11.0)], 10.0, 10.0);
        assert_eq!(quick[2], Value::Null);
    }

    #[test]
    fn markdown_names_every_target_and_its_verdict() {
        let report = json!({
            "mode": "quick",
            "targets": [
                {"target": "a", "result": {"value": 1.0, "met": true}},
                {"target": "b", "result": {"value": 2.0, "met": false}},
                {"target": "c", "result": {"value": null, "met": null}},
            ],
        });
        let text = markdown(&report);
        assert!(text.contains("| a | 1.0 | met |"), "{text}");
        assert!(text.contains("| b | 2.0 | NOT MET |"), "{text}");
        assert!(text.contains("| c | - | not measured |"), "{text}");
    }
}

#[cfg(test)]
mod guard_tests {
    use super::ratio_guard;

    #[test]
    fn the_ratio_guard_fails_above_its_limit_only() {
        assert!(ratio_guard(Some(0.9), 1.2).0);
        assert!(ratio_guard(Some(1.2), 1.2).0);
        let (met, line) = ratio_guard(Some(1.25), 1.2);
        assert!(!met && line.contains("EXCEEDED"), "{line}");
        assert!(!ratio_guard(None, 1.2).0);
    }
}
