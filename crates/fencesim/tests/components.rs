//! One way to run seeds: a user's worker policy and token source reach shrink, explore and
//! tune exactly where the built-ins run (`Components`), not only `Simulation::run`.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use fencesim::{
    builtin_policy, explore::ShrinkOptions, Components, Gate, Invariant, LeaseState, RenewFailure,
    Scenario, TokenIssuer, TokenRequest, WorkerPolicy,
};
use fencesim_testkit::{catalogue, catalogue_path};

/// A counter that restarts from 1 every 3 grants: I1 breaks as soon as a 4th grant happens.
struct Forgetful(u64);
impl TokenIssuer for Forgetful {
    fn name(&self) -> String {
        "forgetful".into()
    }
    fn issue(&mut self, _: &TokenRequest<'_>) -> u64 {
        self.0 = self.0 % 3 + 1;
        self.0
    }
}

/// The built-in policy renewing `speedup` times as often, counting its decisions.
struct Eager {
    inner: Arc<dyn WorkerPolicy>,
    speedup: u64,
    calls: Arc<AtomicUsize>,
}
impl WorkerPolicy for Eager {
    fn name(&self) -> String {
        "eager".into()
    }
    fn renew_every_ms(&self) -> u64 {
        self.calls.fetch_add(1, Ordering::Relaxed);
        (self.inner.renew_every_ms() / self.speedup).max(1)
    }
    fn local_deadline_ms(&self) -> Option<u64> {
        self.inner.local_deadline_ms()
    }
    fn ends_at_deadline(&self) -> bool {
        self.inner.ends_at_deadline()
    }
    fn before_work(&self, state: &LeaseState) -> Gate {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.inner.before_work(state)
    }
    fn before_write(&self, state: &LeaseState) -> Gate {
        self.inner.before_write(state)
    }
    fn on_renew_failure(&self, cause: fencesim::RenewFailureCause) -> RenewFailure {
        self.inner.on_renew_failure(cause)
    }
}

fn forgetful() -> Components {
    Components {
        tokens: Arc::new(|_: &Scenario, _| Box::new(Forgetful(0)) as Box<dyn TokenIssuer>),
        ..Components::default()
    }
}

fn eager(speedup: u64, calls: &Arc<AtomicUsize>) -> Components {
    let calls = calls.clone();
    Components {
        policy: Arc::new(move |s: &Scenario, w: &str| {
            Arc::new(Eager {
                inner: builtin_policy(s, w),
                speedup,
                calls: calls.clone(),
            }) as Arc<dyn WorkerPolicy>
        }),
        ..Components::default()
    }
}

#[test]
fn shrink_runs_a_users_token_source() {
    // Safe with the built-ins; I1 with the user's tokens.
    let scenario = catalogue("swarm-all-faults-same-store-txn");
    let seed = scenario.seeds.start;
    let with = |components: Components| ShrinkOptions {
        components,
        max_runs: 60,
        ..ShrinkOptions::default()
    };
    let shrunk = fencesim::explore::shrink(&scenario, seed, &with(forgetful()), &mut |_| {})
        .expect("the user's tokens violate I1 on this seed");
    assert!(
        shrunk.violated.contains(&Invariant::I1),
        "{:?}",
        shrunk.violated
    );
    assert!(
        fencesim::explore::shrink(&scenario, seed, &with(Components::default()), &mut |_| {})
            .is_err(),
        "with the built-in tokens the seed is safe, so there is nothing to shrink"
    );
}

#[test]
fn explore_runs_a_users_token_source() {
    let scenario = catalogue("swarm-all-faults-same-store-txn");
    let options = fencesim::explore::ExploreOptions {
        cases: 8,
        shrink: ShrinkOptions {
            components: forgetful(),
            max_runs: 40,
            ..ShrinkOptions::default()
        },
        ..fencesim::explore::ExploreOptions::default()
    };
    let explored = fencesim::explore::explore(&scenario, &options, &mut |_| {});
    let (_, shrunk) = explored
        .found
        .expect("a violation found with the user's tokens");
    assert!(shrunk.violated.contains(&Invariant::I1));
    let sweep = fencesim::explore::seeds_to_first_violation(&scenario, 3, &forgetful());
    assert_eq!(sweep.first_violation, Some(scenario.seeds.start));
}

#[test]
fn tune_runs_a_users_worker_policy() {
    let text = std::fs::read_to_string(catalogue_path("tune/jvm-gc")).unwrap();
    let vary = fencesim::tune::parse_vary("lease.ttl_ms=6000").unwrap();
    let sweep = fencesim::tune::prepare(
        &text,
        "jvm-gc.toml",
        &[],
        &[("lease.ttl_ms=6000".into(), vary)],
        Some(fencesim::SeedRange { start: 0, end: 3 }),
        Some(3),
        fencesim::tune::report::Targets::default(),
    )
    .unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let builtin = fencesim::tune::run(&sweep, 1, &Components::default(), &|_, _| {});
    let user = fencesim::tune::run(&sweep, 1, &eager(2, &calls), &|_, _| {});
    assert!(
        calls.load(Ordering::Relaxed) > 0,
        "the user's policy was asked"
    );
    let rate = |r: &fencesim::tune::report::TuneReport| r.settings[0].renewals_per_lease_per_s.mean;
    assert!(
        rate(&user) > 1.6 * rate(&builtin),
        "renewing twice as often shows in tune's renewal load: {} vs {}",
        rate(&user),
        rate(&builtin)
    );
}
