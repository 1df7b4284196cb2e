//! The way back from a scenario to a file: every catalogue scenario renders to a file that
//! parses to the same scenario, and a seed's plan saved as an explicit schedule plans the same.

use std::path::PathBuf;

use fencesim_scenario::*;
use fencesim_testkit::catalogue_dir;

fn catalogue() -> Vec<(PathBuf, Scenario)> {
    let files = fencesim_testkit::catalogue_files("");
    assert!(
        files.len() >= 30,
        "catalogue found at {}",
        catalogue_dir().display()
    );
    files
        .into_iter()
        .map(|file| {
            let scenario = load(&file).unwrap_or_else(|error| panic!("{error}"));
            (file, scenario)
        })
        .collect()
}

fn reparse(scenario: &Scenario, what: &str) -> Scenario {
    let text = scenario_toml(scenario);
    parse_str(&text, what).unwrap_or_else(|error| panic!("{error}\n{text}"))
}

#[test]
fn every_catalogue_scenario_renders_back_to_itself() {
    for (file, scenario) in catalogue() {
        let back = reparse(&scenario, &file.display().to_string());
        assert_eq!(back, scenario, "{}", file.display());
        assert_eq!(back.hash(), scenario.hash());
    }
}

#[test]
fn seed_plans_saved_as_explicit_schedules_plan_the_same() {
    for (file, scenario) in catalogue() {
        for seed in [0, 1, 7] {
            let original = plan(&scenario, seed);
            let explicit = reparse(&original.to_explicit(&scenario), "explicit.toml");
            assert!(explicit.faults.random.is_empty() && !explicit.faults.swarm);
            assert_eq!(
                explicit.seeds,
                SeedRange {
                    start: seed,
                    end: seed + 1
                }
            );
            let again = plan(&explicit, seed);
            assert_eq!(
                again.faults,
                original.faults,
                "{} seed {seed}",
                file.display()
            );
            assert_eq!(
                again.clocks,
                original.clocks,
                "{} seed {seed}",
                file.display()
            );
            assert!(again.swarm.is_empty());
        }
    }
}

#[test]
fn every_fault_kind_round_trips_through_a_schedule_entry() {
    let mut scenario = catalogue()[0].1.clone();
    scenario.workers.count = scenario.workers.count.max(2);
    // Room for one kind every 10 s, however many kinds there are.
    scenario.duration_ms = 10_000 * (FaultKind::ALL.len() as u64 + 1);
    scenario.faults.random.clear();
    scenario.faults.schedule = FaultKind::ALL
        .into_iter()
        .enumerate()
        .map(|(index, kind)| TimedFault {
            // Awkward fractions: the rendering must keep every bit of a float.
            at_ms: 10_000.0 * index as f64 + 0.1 + 0.2,
            fault: kind.example(),
        })
        .collect();
    for timed in &scenario.faults.schedule {
        assert_eq!(timed.fault.kind().example(), timed.fault);
    }
    assert_eq!(reparse(&scenario, "kinds.toml"), scenario);
}
