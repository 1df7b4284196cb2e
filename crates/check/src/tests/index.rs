//! The index's public queries, on hand-written histories: what the views read.

use super::h;
use crate::index::{Epoch, Index};

#[test]
fn grants_tenures_and_their_ends_per_scope() {
    let history = h()
        .at(0)
        .grant("b", "w0", 1) // 0
        .grant("a", "w1", 2) // 1
        .at(5)
        .expire("a", "w1", 2) // 2
        .grant("a", "w0", 3) // 3
        .release("b", "w0", 1) // 4
        .build();
    let index = Index::new(&history);
    assert_eq!(index.scopes().collect::<Vec<_>>(), ["a", "b"]);
    let a: Vec<usize> = index.grants("a").iter().map(|g| g.index).collect();
    assert_eq!(a, [1, 3]);
    assert!(index.grants("c").is_empty());
    assert_eq!(index.newest_grant("a", 3).map(|g| g.token), Some(2));
    assert_eq!(index.newest_grant("a", 4).map(|g| g.token), Some(3));
    assert_eq!(index.newest_grant("a", 1), None);

    let ends: Vec<(usize, Option<usize>)> =
        index.tenures().iter().map(|t| (t.grant, t.end)).collect();
    assert_eq!(ends, [(0, Some(4)), (1, Some(2)), (3, None)]);
    assert_eq!(index.tenure_ended_by(2).map(|t| t.grant), Some(1));
    assert_eq!(index.tenure_ended_by(4).map(|t| t.token), Some(1));
    assert!(index.tenure_ended_by(3).is_none());

    // An epoch ends with its tenure, or lasts to the end of the run.
    assert_eq!(index.epoch_end(1), Some(2));
    assert_eq!(index.epoch_end(0), Some(4));
    assert_eq!(index.epoch_end(3), None);
    assert_eq!(index.epoch_end(2), None, "not a grant");
    assert_eq!(index.end_ns(), 5_000_000);
}

#[test]
fn a_double_grant_cuts_the_open_epoch_but_not_its_tenure() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .grant("job", "w1", 2) // 1: w0's lease is still open (I2)
        .at(2)
        .expire("job", "w1", 2) // 2
        .at(3)
        .expire("job", "w0", 1) // 3
        .build();
    let index = Index::new(&history);
    assert_eq!(index.double_grants().len(), 1);
    // Epochs of one scope never overlap: the first ends at the second grant...
    assert_eq!(index.epoch_end(0), Some(1));
    assert_eq!(index.epoch_end(1), Some(2));
    // ...while the service's tenures are matched by holder and token.
    assert_eq!(index.tenure_ended_by(2).map(|t| t.grant), Some(1));
    assert_eq!(index.tenure_ended_by(3).map(|t| t.grant), Some(0));
    assert_eq!(
        index.epoch("job", "w0", 1, 2),
        Epoch::Superseded {
            grant: 0,
            superseded_by: 1
        }
    );
}

/// The queries' bounds, which the index's users rely on: "before event k" excludes k itself,
/// "after event k" excludes k, "between" excludes both ends.
#[test]
fn before_after_and_between_exclude_the_event_named() {
    let history = h()
        .at(0)
        .grant("job", "w0", 1) // 0
        .at(1)
        .fence("job", "w0", 1) // 1
        .at(2)
        .expire("job", "w0", 1) // 2
        .grant("job", "w1", 2) // 3
        .at(3)
        .grant("job", "w2", 3) // 4
        .build();
    let index = Index::new(&history);
    let first = &index.tenures()[0];
    assert!(!first.open_before(0), "not held before its own grant");
    assert!(first.open_before(1));
    assert!(first.open_before(2), "held until its end event");
    assert!(!first.open_before(3));

    assert_eq!(
        index.epoch("job", "w1", 2, 3),
        Epoch::NeverGranted,
        "a grant is not issued before itself"
    );
    assert_eq!(index.epoch("job", "w1", 2, 4), Epoch::Current { grant: 3 });
    assert_eq!(
        index.epoch("job", "w1", 2, 5),
        Epoch::Superseded {
            grant: 3,
            superseded_by: 4
        }
    );

    let between = |after, before| -> Vec<usize> {
        index
            .grants_between("job", after, before)
            .iter()
            .map(|g| g.index)
            .collect()
    };
    assert_eq!(between(0, 4), [3], "neither end is between");
    assert_eq!(between(3, 4), Vec::<usize>::new());
    assert_eq!(between(2, 5), [3, 4]);

    assert_eq!(index.first_fence_by("w0", 1, 0), Some(1));
    assert_eq!(index.first_fence_by("w0", 1, 1), None, "not after itself");
}
