//! Fault plans: reproducible per seed, independent per stream, and respecting their limits.

use fencesim_scenario::*;

const BASE: &str = r#"name = "plan"
description = "fault plan tests"
duration_ms = 60_000
seeds = "0..10"

[lease]
ttl_ms = 10_000
token_source = "durable-counter"

[storage]
fencing = "max-token"

[workers]
count = 3
resources = ["job-1"]
work_ms = 100

[expect]
safe = true
coverage = ["stale-write-rejected"]
"#;

const GC_PAUSES: &str = r#"
[[faults.random]]
kind = "gc-pause"
rate_per_min = 6
duration_ms = { dist = "lognormal", median = 2_000, p99 = 20_000 }
"#;

const PARTITIONS: &str = r#"
[[faults.random]]
kind = "partition"
rate_per_min = 3
duration_ms = { dist = "uniform", min = 1_000, max = 5_000 }
one_way_probability = 0.5
"#;

const STOPS: &str = r#"
[[faults.schedule]]
at_ms = 5_000
kind = "gc-pause"
node = "worker-0"
duration_ms = 15_000

[[faults.random]]
kind = "vm-suspend"
rate_per_min = 10
duration_ms = { dist = "exponential", mean = 3_000 }

[[faults.random]]
kind = "worker-crash"
rate_per_min = 10
duration_ms = 4_000
nodes = ["worker-0", "worker-1"]
"#;

/// `BASE` plus `extra` (appended as-is: `[faults]`/`[clocks]` tables and fault arrays).
fn scenario(extra: &str) -> Scenario {
    let text = format!("{BASE}{extra}");
    parse_str(&text, "plan.toml").unwrap_or_else(|error| panic!("{error}\n{text}"))
}

fn of_kind(plan: &FaultPlan, kind: FaultKind) -> Vec<TimedFault> {
    plan.faults
        .iter()
        .filter(|timed| timed.fault.kind() == kind)
        .cloned()
        .collect()
}

#[test]
fn same_seed_same_plan_and_seeds_differ() {
    let scenario = scenario(&format!("{GC_PAUSES}{PARTITIONS}"));
    for seed in 0..20 {
        assert_eq!(plan(&scenario, seed), plan(&scenario, seed));
        assert_eq!(
            plan(&scenario, seed).render(),
            plan(&scenario, seed).render()
        );
        assert_ne!(
            plan(&scenario, seed).faults,
            plan(&scenario, seed + 1).faults,
            "seed {seed}"
        );
    }
}

#[test]
fn adding_a_random_entry_leaves_the_others_draws_unchanged() {
    let alone = scenario(GC_PAUSES);
    let with_partitions = scenario(&format!("{GC_PAUSES}{PARTITIONS}"));
    for seed in 0..20 {
        let before = plan(&alone, seed);
        let after = plan(&with_partitions, seed);
        assert!(
            !of_kind(&before, FaultKind::GcPause).is_empty(),
            "seed {seed} draws no pause"
        );
        assert_eq!(
            of_kind(&before, FaultKind::GcPause),
            of_kind(&after, FaultKind::GcPause),
            "seed {seed}"
        );
        assert!(
            !of_kind(&after, FaultKind::Partition).is_empty(),
            "seed {seed} draws no partition"
        );
    }
}

#[test]
fn stopping_faults_never_overlap_on_a_node() {
    let scenario = scenario(&format!("{GC_PAUSES}{STOPS}"));
    for seed in 0..50 {
        let plan = plan(&scenario, seed);
        let stops: Vec<_> = plan
            .faults
            .iter()
            .filter(|timed| timed.fault.stopped_node().is_some())
            .collect();
        assert!(
            stops.len() > 3,
            "seed {seed} draws too few stops to test anything"
        );
        for (index, a) in stops.iter().enumerate() {
            for b in &stops[index + 1..] {
                let same_node = a.fault.stopped_node() == b.fault.stopped_node();
                let overlap = a.at_ms < b.at_ms + b.fault.duration_ms()
                    && b.at_ms < a.at_ms + a.fault.duration_ms();
                assert!(!(same_node && overlap), "seed {seed}: {a:?} overlaps {b:?}");
            }
        }
    }
}

#[test]
fn faults_start_inside_the_safety_phase_in_order() {
    let scenario = scenario(&format!("{GC_PAUSES}{PARTITIONS}{STOPS}"));
    for seed in 0..50 {
        let plan = plan(&scenario, seed);
        assert!(
            plan.faults
                .iter()
                .all(|timed| (0.0..60_000.0).contains(&timed.at_ms)),
            "seed {seed}"
        );
        assert!(
            plan.faults
                .windows(2)
                .all(|pair| pair[0].at_ms <= pair[1].at_ms),
            "seed {seed}"
        );
        let heal = plan
            .faults
            .iter()
            .map(|timed| timed.at_ms + timed.fault.duration_ms())
            .fold(0.0, f64::max);
        assert_eq!(plan.heal_ms(), heal);
    }
}

#[test]
fn random_faults_target_what_their_kind_says() {
    let scenario = scenario(&format!("{PARTITIONS}{STOPS}"));
    let mut one_way = [0, 0];
    for seed in 0..50 {
        for timed in plan(&scenario, seed).faults {
            match timed.fault {
                Fault::Partition {
                    nodes,
                    peers,
                    one_way: is_one_way,
                    ..
                } => {
                    assert_eq!(nodes.len(), 1);
                    assert!(peers.is_empty());
                    one_way[usize::from(is_one_way)] += 1;
                }
                Fault::WorkerCrash { node, .. } => {
                    assert!(node == "worker-0" || node == "worker-1", "{node}")
                }
                Fault::VmSuspend { node, .. } | Fault::GcPause { node, .. } => {
                    assert!(node.starts_with("worker-"))
                }
                other => panic!("unexpected fault {other:?}"),
            }
        }
    }
    assert!(
        one_way[0] > 0 && one_way[1] > 0,
        "one_way_probability 0.5 gave {one_way:?}"
    );
}

#[test]
fn poisson_rate_matches_rate_per_min() {
    // Partitions never overlap-skip, so their count is the process's: 3/min over 1 min.
    let scenario = scenario(PARTITIONS);
    let seeds = 400;
    let total: usize = (0..seeds)
        .map(|seed| plan(&scenario, seed).faults.len())
        .sum();
    let mean = total as f64 / seeds as f64;
    assert!(
        (2.7..3.3).contains(&mean),
        "mean {mean} partitions per seed, expected about 3"
    );
}

#[test]
fn swarm_choices_are_drawn_and_printed() {
    let scenario = scenario(&format!("[faults]\nswarm = true\n{GC_PAUSES}{PARTITIONS}"));
    let mut enabled = [0, 0];
    for seed in 0..40 {
        let plan = plan(&scenario, seed);
        let kinds: Vec<_> = plan.swarm.iter().map(|choice| choice.kind).collect();
        assert_eq!(kinds, [FaultKind::GcPause, FaultKind::Partition]);
        let render = plan.render();
        assert!(render.contains("swarm:\n"), "{render}");
        for choice in &plan.swarm {
            assert!((0.25..=1.0).contains(&choice.rate_scale));
            enabled[usize::from(choice.enabled)] += 1;
            let line = if choice.enabled {
                format!(
                    "{:<20} on   rate x{:.3}",
                    choice.kind.name(),
                    choice.rate_scale
                )
            } else {
                assert!(
                    of_kind(&plan, choice.kind).is_empty(),
                    "disabled {} still drawn",
                    choice.kind
                );
                format!("{:<20} off", choice.kind.name())
            };
            assert!(render.contains(&line), "{line:?} not in\n{render}");
        }
    }
    assert!(
        enabled[0] > 0 && enabled[1] > 0,
        "swarm never varied: {enabled:?}"
    );
    // Without swarm there are no choices and every entry runs.
    assert!(plan(&self::scenario(GC_PAUSES), 0).swarm.is_empty());
}

#[test]
fn clocks_cover_every_node_and_keep_pinned_ones() {
    let scenario = scenario("[clocks]\nrandom_drift_ppm = 20\nrandom_offset_ms = 5\n[clocks.nodes.worker-1]\noffset_ms = -7\ndrift_ppm = 500\n");
    let unpinned = self::scenario("[clocks]\nrandom_drift_ppm = 20\nrandom_offset_ms = 5\n");
    for seed in 0..20 {
        let plan = plan(&scenario, seed);
        let names: Vec<_> = plan.clocks.keys().cloned().collect();
        let mut expected = scenario.node_names();
        expected.sort();
        assert_eq!(names, expected);
        assert_eq!(
            plan.clocks["worker-1"],
            ClockSpec {
                offset_ms: -7.0,
                drift_ppm: 500.0
            }
        );
        for (node, clock) in &plan.clocks {
            if node != "worker-1" {
                assert!(
                    clock.drift_ppm.abs() <= 20.0 && clock.offset_ms.abs() <= 5.0,
                    "{node}: {clock:?}"
                );
                // Pinning worker-1 moved no other node's draw.
                assert_eq!(
                    clock,
                    &fencesim_scenario::plan(&unpinned, seed).clocks[node]
                );
            }
        }
    }
    let fixed = plan(&self::scenario(""), 3);
    assert!(fixed.clocks.values().all(|clock| *clock
        == ClockSpec {
            offset_ms: 0.0,
            drift_ppm: 0.0
        }));
}

#[test]
fn render_lists_each_fault_on_its_own_line() {
    let scenario = scenario(
        "[[faults.schedule]]\nat_ms = 5_000\nkind = \"gc-pause\"\nnode = \"worker-0\"\nduration_ms = 15_000\n\
         [[faults.schedule]]\nat_ms = 5_000\nkind = \"clock-step\"\nnode = \"coordinator\"\ndelta_ms = -128\n\
         [[faults.schedule]]\nat_ms = 100\nkind = \"hold-release\"\nfrom = \"worker-1\"\nto = \"storage\"\nduration_ms = 50\n",
    );
    let plan = plan(&scenario, 9);
    assert_eq!(plan.heal_ms(), 20_000.0);
    let render = plan.render();
    let faults: Vec<_> = render
        .lines()
        .skip_while(|line| *line != "faults:")
        .skip(1)
        .collect();
    assert_eq!(
        faults,
        [
            "   100.000 ms  hold-release worker-1 -> storage for 50.000 ms",
            "  5000.000 ms  gc-pause worker-0 for 15000.000 ms",
            "  5000.000 ms  clock-step coordinator by -128.000 ms",
        ]
    );
    assert!(
        render.starts_with("fault plan for seed 9: 3 faults, all healed by 20000.000 ms\n"),
        "{render}"
    );
    assert!(
        render.contains("  worker-2     offset       +0.000 ms  drift     +0.000 ppm\n"),
        "{render}"
    );
}
