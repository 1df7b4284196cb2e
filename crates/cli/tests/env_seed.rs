//! `FENCESIM_SEED` / `FENCESIM_SEEDS` / `FENCESIM_JOBS` (madsim's `MADSIM_TEST_SEED` for
//! fencesim): a failure prints its seed, and setting the variable to it reproduces the same
//! failure with the same trace hash. This file is its own test process, and its one test is
//! the only code here that touches the environment.

use fencesim::{Fence, FenceVerdict, LeaseView, Simulation, WriteRequest};

struct Trusting;

impl Fence for Trusting {
    fn name(&self) -> String {
        "trusting".into()
    }
    fn write(&mut self, _: &WriteRequest, _: Option<&dyn LeaseView>) -> FenceVerdict {
        FenceVerdict::Accepted { previous: None }
    }
    fn restart(&mut self) {}
}

fn failure_message(sim: &Simulation) -> String {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sim.assert_expectation();
    }));
    let payload = result.expect_err("the expectation fails");
    payload
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted panic message")
}

/// The value after `prefix` up to the next space, comma or parenthesis.
fn after<'a>(text: &'a str, prefix: &str) -> &'a str {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix} in {text}"))
        + prefix.len();
    text[start..].split([' ', ',', ')', '\n']).next().unwrap()
}

#[test]
fn the_printed_seed_reproduces_the_failure_and_its_trace_hash() {
    // The chaos scenario expects I4 in some seeds; a store that trusts every write also
    // violates I3, in only some seeds: the failing seed is not simply the first one.
    let sim = Simulation::load(fencesim_testkit::catalogue_path(
        "chaos-5-workers-max-token",
    ))
    .unwrap()
    .store(|_| Box::new(Trusting) as Box<dyn Fence>)
    .seeds(0..30);

    let first = failure_message(&sim);
    let seed: u64 = after(&first, "failing seed ").parse().unwrap();
    let hash = after(&first, "trace hash ").to_string();
    let line = after(&first, "reproduce: ").to_string();
    assert_eq!(line, format!("FENCESIM_SEED={seed}"), "{first}");
    assert!(
        first.contains(&format!(
            "FENCESIM_SEED={seed} cargo test -p fencesim-cli the_printed_seed_reproduces_the_failure_and_its_trace_hash -- --exact"
        )),
        "{first}"
    );

    std::env::set_var("FENCESIM_SEED", seed.to_string());
    let again = failure_message(&sim);
    assert!(
        again.contains(&format!("seeds {seed}..{}", seed + 1)),
        "{again}"
    );
    assert_eq!(after(&again, "failing seed ").parse::<u64>().unwrap(), seed);
    assert_eq!(after(&again, "trace hash "), hash);
    // The violation and its proof are the same text.
    let proof =
        |m: &str| m[m.find("first violation").unwrap()..m.find("reproduce:").unwrap()].to_string();
    assert_eq!(proof(&again), proof(&first));

    // FENCESIM_SEEDS and FENCESIM_JOBS; both seed variables at once is an error.
    std::env::remove_var("FENCESIM_SEED");
    std::env::set_var("FENCESIM_SEEDS", format!("{seed}..{}", seed + 2));
    std::env::set_var("FENCESIM_JOBS", "1");
    assert_eq!(sim.resolved_seeds().unwrap().0.iter(), seed..seed + 2);
    assert_eq!(sim.resolved_seeds().unwrap().1, 1);
    std::env::set_var("FENCESIM_SEED", "3");
    assert!(sim
        .resolved_seeds()
        .unwrap_err()
        .to_string()
        .contains("FENCESIM_SEED and FENCESIM_SEEDS are both set"));
    std::env::remove_var("FENCESIM_SEEDS");
    std::env::set_var("FENCESIM_JOBS", "0");
    assert!(sim
        .resolved_seeds()
        .unwrap_err()
        .to_string()
        .contains("FENCESIM_JOBS: expected a number of threads from 1 to 1024, got `0`"));
    std::env::remove_var("FENCESIM_JOBS");
    std::env::remove_var("FENCESIM_SEED");
}
