//! The `fencesim` library as a user calls it with their own store: the same replay (text,
//! pictures, Perfetto, determinism check) as the CLI gives a built-in one.

use std::sync::Arc;

use fencesim::views::{PictureOptions, ReplayTextOptions};
use fencesim::{replay, Components, Determinism, StoreFactory};
use fencesim_model::{
    fence::{Fence, Verdict, WriteRequest},
    lease::LeaseView,
};
use fencesim_scenario::Scenario;
use fencesim_testkit::{catalogue, catalogue_path};

/// A user's store that forgets to compare tokens: every write is accepted.
struct Trusting;

impl Fence for Trusting {
    fn name(&self) -> String {
        "trusting".into()
    }
    fn write(&mut self, _: &WriteRequest, _: Option<&dyn LeaseView>) -> Verdict {
        Verdict::Accepted { previous: None }
    }
    fn restart(&mut self) {}
}

fn textbook() -> Arc<Scenario> {
    Arc::new(catalogue("gc-pause-textbook-max-token"))
}

#[test]
fn a_users_store_gets_the_same_replay_as_a_builtin() {
    let factory: StoreFactory = Arc::new(|_: &Scenario| Box::new(Trusting) as Box<dyn Fence>);
    let replayed = replay(&textbook(), 0, &Components::with_store(&factory));
    assert!(replayed.failed(), "a store that checks nothing is caught");
    let text = replayed.text(&ReplayTextOptions::default(), "replay-it");
    assert!(text.contains("I4 violated"), "{text}");
    assert!(text.contains("replay-it"), "{text}");
    let svg = replayed.picture_svg(&PictureOptions::default()).unwrap();
    assert!(svg.contains("I4 violated"));
    assert!(replayed
        .picture_png(&PictureOptions::default())
        .unwrap()
        .starts_with(b"\x89PNG"));
    assert!(replayed.perfetto().contains("traceEvents"));
    assert!(matches!(
        replayed.check_determinism(),
        Determinism::Same { .. }
    ));

    // The built-in max-token store on the same seed: safe, and the same machinery.
    let safe = replay(&textbook(), 0, &Components::default());
    assert!(!safe.failed());
    assert!(safe
        .text(&ReplayTextOptions::default(), "x")
        .contains("REJECTED"));
}

/// A user's policy and token source that delegate to the built-ins give the built-ins'
/// traces byte for byte: the plug-in points add nothing to a run.
#[test]
fn delegating_user_components_give_the_builtin_traces() {
    use fencesim::{
        builtin_policy, builtin_tokens, Gate, LeaseState, RenewFailure, Simulation, TokenIssuer,
        TokenRequest, WorkerPolicy,
    };

    struct Delegate(Arc<dyn WorkerPolicy>);
    impl WorkerPolicy for Delegate {
        fn name(&self) -> String {
            "delegate".into()
        }
        fn renew_every_ms(&self) -> u64 {
            self.0.renew_every_ms()
        }
        fn local_deadline_ms(&self) -> Option<u64> {
            self.0.local_deadline_ms()
        }
        fn ends_at_deadline(&self) -> bool {
            self.0.ends_at_deadline()
        }
        fn before_work(&self, state: &LeaseState) -> Gate {
            self.0.before_work(state)
        }
        fn before_write(&self, state: &LeaseState) -> Gate {
            self.0.before_write(state)
        }
        fn on_renew_failure(&self, cause: fencesim::RenewFailureCause) -> RenewFailure {
            self.0.on_renew_failure(cause)
        }
    }
    struct Tokens(Box<dyn TokenIssuer>);
    impl TokenIssuer for Tokens {
        fn name(&self) -> String {
            "delegate".into()
        }
        fn issue(&mut self, request: &TokenRequest<'_>) -> u64 {
            self.0.issue(request)
        }
        fn deleted(&mut self, counter: &str) {
            self.0.deleted(counter)
        }
        fn restart(&mut self) -> bool {
            self.0.restart()
        }
    }

    // Renewal failures, deadlines, checks before writes, volatile counters, random ids.
    for name in [
        "gc-pause-textbook-max-token",
        "check-lease-before-write-held-write-none",
        "volatile-counter-restart",
        "random-id-tokens-max-token",
        "k8s-client-go-clock-skew",
        "preset-zookeeper-session-clamp-and-suspect",
    ] {
        let builtin = Simulation::load(catalogue_path(name)).unwrap().seeds(0..3);
        let user = builtin
            .clone()
            .policy(|s, w| Arc::new(Delegate(builtin_policy(s, w))) as Arc<dyn WorkerPolicy>)
            .tokens(|s, seed| Box::new(Tokens(builtin_tokens(s, seed))) as Box<dyn TokenIssuer>);
        let (a, b) = (builtin.run(), user.run());
        let hashes = |s: &fencesim::Sweep| -> Vec<String> {
            s.outcomes.iter().map(|o| o.trace_hash.clone()).collect()
        };
        assert_eq!(hashes(&a), hashes(&b), "{name}");
    }
}

/// A user's token source that hands out the same token twice is caught by I1, and its
/// replay (text, trace, determinism) works like a built-in's.
#[test]
fn a_users_token_source_is_judged_and_replayed() {
    use fencesim::{Invariant, Simulation, TokenIssuer, TokenRequest};

    /// A counter that restarts from 1 every 3 grants (a sequence with a bad cache).
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
    let sim = Simulation::load(catalogue_path("chaos-5-workers-max-token"))
        .unwrap()
        .tokens(|_, _| Box::new(Forgetful(0)) as Box<dyn TokenIssuer>)
        .seeds(0..4);
    let failure = sim.clone().expect_safe().check().unwrap_err();
    assert!(failure.to_string().contains("I1 violated"), "{failure}");
    assert!(
        !failure.to_string().contains("fencesim replay"),
        "{failure}"
    );
    let seed = failure.seed.unwrap();
    let replayed = sim.replay(seed);
    assert!(replayed
        .run
        .outcome
        .checked
        .violated()
        .contains(&Invariant::I1));
    assert_eq!(
        Some(replayed.run.outcome.trace_hash.clone()),
        failure.trace_hash
    );
    let text = replayed.text(&ReplayTextOptions::default(), "again");
    assert!(text.contains("I1 violated"), "{text}");
    assert!(matches!(
        replayed.check_determinism(),
        Determinism::Same { .. }
    ));
    assert_eq!(
        fencesim::judge_history(&fencesim::parse_history("t", &replayed.trace()).unwrap()).checked,
        replayed.run.outcome.checked
    );
}

/// A failed expectation's panic names the user's test, not fencesim's source
/// (`#[track_caller]` on `assert_expectation`), as `assert!` would.
#[test]
fn a_failed_expectation_panics_at_the_callers_line() {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let record = seen.clone();
    let test = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == test {
            *record.lock().unwrap() = info.location().map(|l| (l.file().to_string(), l.line()));
        }
    }));
    let line = line!() + 5; // the `.assert_expectation()` line below
    let result = std::panic::catch_unwind(|| {
        fencesim::Simulation::new(textbook().as_ref().clone())
            .store(|_| Box::new(Trusting))
            .seeds(0..2)
            .assert_expectation()
    });
    let _ = std::panic::take_hook();
    std::panic::set_hook(previous);
    assert!(
        result.is_err(),
        "a store that checks nothing fails the expectation"
    );
    let (file, at) = seen.lock().unwrap().clone().expect("the panic was seen");
    assert!(file.ends_with("tests/library.rs"), "{file}:{at}");
    assert_eq!(at, line, "{file}:{at}");
}
