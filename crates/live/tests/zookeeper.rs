//! The ZooKeeper client against a real ZooKeeper (skipped, with a printed line, when Debian's
//! `zookeeper` package and java are missing: `apt-get install zookeeper`).

use std::time::Duration;

use fencesim_live::zk::{self, Server, Session, EPHEMERAL_SEQUENTIAL, NO_NODE};

fn zookeeper_or_skip() -> bool {
    match zk::zookeeper_version() {
        Ok(_) => true,
        Err(error) => {
            println!("SKIPPED: no ZooKeeper ({error}); install zookeeper to run this test");
            false
        }
    }
}

#[test]
fn sessions_ephemeral_sequential_nodes_and_their_end() {
    if !zookeeper_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), 2_000, None).expect("ZooKeeper starts");
    let io = Duration::from_secs(2);
    let mut a = Session::connect(server.addr(), 4_000, io).unwrap();
    let mut b = Session::connect(server.addr(), 60_000, io).unwrap();
    // The server clamps the timeout to [2, 20] x tickTime.
    assert_eq!(a.timeout_ms, 4_000);
    assert_eq!(b.timeout_ms, 40_000);
    zk::ensure_path(&mut a, &zk::lock_dir("job-1")).unwrap();
    zk::ensure_path(&mut b, &zk::lock_dir("job-1")).unwrap();
    let dir_path = zk::lock_dir("job-1");
    let first = a
        .create(
            &format!("{dir_path}/lock-"),
            b"worker-0",
            EPHEMERAL_SEQUENTIAL,
        )
        .unwrap()
        .unwrap();
    let second = b
        .create(
            &format!("{dir_path}/lock-"),
            b"worker-1",
            EPHEMERAL_SEQUENTIAL,
        )
        .unwrap()
        .unwrap();
    let (s1, s2) = (
        zk::sequence(&first).unwrap(),
        zk::sequence(&second).unwrap(),
    );
    assert!(s2 > s1, "{first} {second}");
    let (children, _) = b.children(&dir_path).unwrap().unwrap();
    assert_eq!(children.len(), 2);
    let (data, stat) = b.get(&first).unwrap().unwrap();
    assert_eq!(data, b"worker-0");
    assert_eq!(stat.ephemeral_owner, a.id);
    a.ping().unwrap();
    // Closing a session deletes its ephemeral node at once.
    a.close().unwrap();
    assert_eq!(b.get(&first).unwrap(), Err(NO_NODE));
    b.delete(&second).unwrap().unwrap();
    assert!(b.children(&dir_path).unwrap().unwrap().0.is_empty());
    // A resumed live session is still alive; after a close it is not.
    assert!(b.resume().unwrap());
    b.ping().unwrap();
    b.close().unwrap();
    assert!(!b.resume().unwrap());
}
