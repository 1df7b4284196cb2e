//! The `fencesim` library as a user calls it with their own store: the same replay (text,
//! pictures, Perfetto, determinism check) as the CLI gives a built-in one.

use std::{path::Path, sync::Arc};

use fencesim::{check_determinism, replay, Determinism, StoreFactory};
use fencesim_model::{
    fence::{Fence, Verdict, WriteRequest},
    lease::LeaseView,
};
use fencesim_report::{PictureOptions, ReplayTextOptions};
use fencesim_scenario::Scenario;

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
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/gc-pause-textbook-max-token.toml");
    Arc::new(fencesim_scenario::load(&path).unwrap())
}

#[test]
fn a_users_store_gets_the_same_replay_as_a_builtin() {
    let factory: StoreFactory = Arc::new(|_: &Scenario| Box::new(Trusting) as Box<dyn Fence>);
    let replayed = replay(&textbook(), 0, &factory);
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
        check_determinism(&replayed, &factory),
        Determinism::Same { .. }
    ));

    // The built-in max-token store on the same seed: safe, and the same machinery.
    let builtin: StoreFactory = Arc::new(fencesim::builtin_store);
    let safe = replay(&textbook(), 0, &builtin);
    assert!(!safe.failed());
    assert!(safe
        .text(&ReplayTextOptions::default(), "x")
        .contains("REJECTED"));
}
