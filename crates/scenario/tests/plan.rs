//! Fault plans: reproducible per seed, independent per stream, and respecting their limits.

use fencesim_scenario::*;
use fencesim_testkit::Spec;

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

/// The shared base scenario with three workers, 100 ms of work and seeds 0..10, plus `extra`
/// (appended as-is: `[faults]`/`[clocks]` tables and fault arrays).
fn text(extra: &str) -> String {
    Spec {
        name: "plan",
        description: "fault plan tests",
        seeds: "0..10",
        count: 3,
        work_ms: "100",
        faults: extra,
        ..Spec::default()
    }
    .toml()
}

fn scenario(extra: &str) -> Scenario {
    let text = text(extra);
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

/// A drawn fault that stops a process waits for its node instead of being dropped: the
/// crashes drawn with pauses present are the crashes drawn without them, each begun at its
/// drawn time or, queued, when its node was free.
#[test]
fn a_drawn_stop_queues_behind_another_on_its_node_and_none_is_dropped() {
    const CRASHES: &str = r#"
[[faults.random]]
kind = "worker-crash"
rate_per_min = 10
duration_ms = 4_000
nodes = ["worker-0"]
"#;
    const PAUSES: &str = r#"
[[faults.random]]
kind = "gc-pause"
rate_per_min = 30
duration_ms = { dist = "uniform", min = 500, max = 3_000 }
nodes = ["worker-0"]
"#;
    let alone = scenario(CRASHES);
    let with_pauses = scenario(&format!("{CRASHES}{PAUSES}"));
    let mut queued_crashes = 0;
    for seed in 0..30 {
        let a = plan(&alone, seed);
        let b = plan(&with_pauses, seed);
        let crashes = |p: &FaultPlan| {
            of_kind(p, FaultKind::WorkerCrash).len()
                + p.skipped
                    .iter()
                    .filter(|s| s.kind == FaultKind::WorkerCrash)
                    .count()
        };
        assert_eq!(crashes(&a), crashes(&b), "seed {seed}");
        for queued in &b.queued {
            assert!(queued.at_ms > queued.drawn_at_ms, "seed {seed}: {queued:?}");
            assert!(b
                .faults
                .iter()
                .any(|t| t.at_ms == queued.at_ms && t.fault == queued.fault));
            // Its node was stopped by another fault at the drawn time.
            assert!(
                b.faults
                    .iter()
                    .any(|t| t.fault.stopped_node() == Some("worker-0")
                        && t.at_ms <= queued.drawn_at_ms
                        && queued.drawn_at_ms < t.end_ms()),
                "seed {seed}: {queued:?}"
            );
            if queued.fault.kind() == FaultKind::WorkerCrash {
                queued_crashes += 1;
            }
        }
        for skipped in &b.skipped {
            assert!(skipped.reason.contains("safety phase"), "{skipped:?}");
        }
        assert!(b.render().contains("queued") || b.queued.is_empty());
    }
    assert!(
        queued_crashes > 10,
        "{queued_crashes} crashes queued in 30 seeds"
    );
}

#[test]
fn a_drawn_stop_with_no_room_left_is_skipped_and_listed() {
    let s = scenario(
        r#"
[[faults.schedule]]
at_ms = 0
kind = "coordinator-restart"
duration_ms = 59_000
"#,
    );
    let fits = with_outage(&s, OutageForm::ServiceDown, 1_000.0).unwrap();
    let p = plan(&fits, 3);
    assert_eq!(of_kind(&p, FaultKind::CoordinatorRestart).len(), 2);
    assert_eq!(p.queued.len(), 1);
    assert_eq!(p.queued[0].at_ms, 59_000.0);
    let mut full = s.clone();
    full.faults.schedule[0].fault = Fault::CoordinatorRestart {
        duration_ms: 59_999.5,
    };
    let p = plan(
        &with_outage(&full, OutageForm::ServiceDown, 1_000.0).unwrap(),
        3,
    );
    assert_eq!(
        of_kind(&p, FaultKind::CoordinatorRestart).len(),
        2,
        "begins at 59999.5"
    );
    full.faults.schedule[0].fault = Fault::CoordinatorRestart {
        duration_ms: 60_000.0,
    };
    let p = plan(
        &with_outage(&full, OutageForm::ServiceDown, 1_000.0).unwrap(),
        3,
    );
    assert_eq!(of_kind(&p, FaultKind::CoordinatorRestart).len(), 1);
    assert_eq!(p.skipped.len(), 1);
    assert_eq!(p.skipped[0].kind, FaultKind::CoordinatorRestart);
    assert!(p.render().contains("skipped (1)"), "{}", p.render());
}

#[test]
fn an_injected_outage_adds_exactly_one_outage_inside_the_fault_window() {
    let base = scenario(&format!("{GC_PAUSES}{PARTITIONS}"));
    for form in OutageForm::ALL {
        let with = with_outage(&base, form, 20_000.0).unwrap();
        for seed in 0..50 {
            let before = plan(&base, seed);
            let after = plan(&with, seed);
            let added: Vec<&TimedFault> = after
                .faults
                .iter()
                .filter(|t| !before.faults.contains(t))
                .collect();
            assert_eq!(added.len(), 1, "seed {seed}: {added:?}");
            assert_eq!(after.faults.len(), before.faults.len() + 1);
            assert_eq!(added[0].fault.kind(), form.kind());
            assert_eq!(added[0].fault.duration_ms(), 20_000.0);
            assert!(
                (10_000.0..=40_000.0).contains(&added[0].at_ms),
                "seed {seed}: {}",
                added[0].at_ms
            );
        }
    }
    // Both forms begin at the same drawn time in a seed; seeds differ.
    let times = |form| -> Vec<f64> {
        let with = with_outage(&base, form, 20_000.0).unwrap();
        (0..20)
            .map(|seed| {
                plan(&with, seed)
                    .faults
                    .iter()
                    .find(|t| t.fault.kind() == form.kind())
                    .unwrap()
                    .at_ms
            })
            .collect()
    };
    let service = times(OutageForm::ServiceDown);
    assert_eq!(service, times(OutageForm::HolderLinkCut));
    assert!(service.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn with_outage_refuses_lengths_that_do_not_fit() {
    let base = scenario("");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 60_000.0, 90_000.0] {
        let error = with_outage(&base, OutageForm::ServiceDown, bad).unwrap_err();
        assert!(
            error.contains("expected an outage length"),
            "{bad}: {error}"
        );
    }
    let once = with_outage(&base, OutageForm::HolderLinkCut, 1_000.0).unwrap();
    let error = with_outage(&once, OutageForm::ServiceDown, 1_000.0).unwrap_err();
    assert!(error.contains("[faults.outage]"), "{error}");
}

#[test]
fn faults_outage_parses_validates_and_renders() {
    let s = scenario("[faults.outage]\nform = \"holder-link-cut\"\nduration_ms = 30_000\n");
    assert_eq!(
        s.faults.outage,
        Some(InjectedOutage {
            form: OutageForm::HolderLinkCut,
            duration_ms: 30_000.0
        })
    );
    let back = parse_str(&scenario_toml(&s), "back.toml").unwrap();
    assert_eq!(back, s);
    assert_ne!(s.hash(), scenario("").hash());
    for (extra, field) in [
        (
            "[faults.outage]\nduration_ms = 30_000\n",
            "faults.outage.form",
        ),
        (
            "[faults.outage]\nform = \"service-down\"\n",
            "faults.outage.duration_ms",
        ),
        (
            "[faults.outage]\nform = \"service-down\"\nduration_ms = 60_000\n",
            "faults.outage.duration_ms",
        ),
        (
            "[faults.outage]\nform = \"service-down\"\nduration_ms = 0\n",
            "faults.outage.duration_ms",
        ),
    ] {
        let error = parse_str(&text(extra), "bad.toml").unwrap_err();
        assert_eq!(error.field, field, "{extra}: {error}");
    }
    let error = parse_str(
        &text("[faults.outage]\nform = \"meteor\"\nduration_ms = 5\n"),
        "bad.toml",
    )
    .unwrap_err();
    assert!(error.to_string().contains("faults"), "{error}");
}

#[test]
fn the_longest_outage_is_read_from_the_plans() {
    let none = scenario(GC_PAUSES);
    assert_eq!(longest_outage_ms(&none, 0..10), 0.0);
    let restart = scenario(
        "[[faults.schedule]]\nat_ms = 1_000\nkind = \"coordinator-restart\"\nduration_ms = 7_000\n",
    );
    assert_eq!(longest_outage_ms(&restart, 0..3), 7_000.0);
    // A partition of a worker from the coordinator, touching a hold between them: one outage.
    let cut = scenario(
        r#"
[[faults.schedule]]
at_ms = 1_000
kind = "partition"
nodes = ["worker-1"]
peers = ["coordinator"]
duration_ms = 2_000

[[faults.schedule]]
at_ms = 3_000
kind = "hold-release"
from = "coordinator"
to = "worker-1"
duration_ms = 500

[[faults.schedule]]
at_ms = 10_000
kind = "partition"
nodes = ["worker-0"]
peers = ["storage"]
duration_ms = 9_000
"#,
    );
    assert_eq!(longest_outage_ms(&cut, 0..1), 2_500.0);
    let injected = with_outage(&cut, OutageForm::HolderLinkCut, 25_000.0).unwrap();
    assert_eq!(longest_outage_ms(&injected, 0..5), 25_000.0);
}

#[test]
fn nominal_counts_are_rate_times_the_safety_phase() {
    let s = scenario(STOPS);
    let nominal = nominal_fault_counts(&s);
    assert_eq!(
        nominal,
        vec![
            (FaultKind::GcPause, 1.0),
            (FaultKind::VmSuspend, 10.0),
            (FaultKind::WorkerCrash, 10.0),
        ]
    );
    let with = with_outage(&s, OutageForm::ServiceDown, 5_000.0).unwrap();
    assert!(nominal_fault_counts(&with).contains(&(FaultKind::CoordinatorRestart, 1.0)));
    let mut swarm = s.clone();
    swarm.faults.swarm = true;
    assert!(nominal_fault_counts(&swarm).contains(&(FaultKind::VmSuspend, 10.0 * 5.0 / 16.0)));
}
