//! The etcd gateway client against a real etcd (skipped, with a printed line, when no etcd
//! binary can be run: `apt-get install etcd-server`).

use std::sync::{
    atomic::{AtomicBool, Ordering},
    Arc, Mutex,
};

use fencesim_live::etcd::{self, Campaign, Server};

fn etcd_or_skip() -> bool {
    match etcd::etcd_version() {
        Ok(_) => true,
        Err(error) => {
            println!("SKIPPED: no etcd ({error}); install etcd-server to run this test");
            false
        }
    }
}

#[test]
fn campaign_keepalive_guarded_write_revoke_and_watch() {
    if !etcd_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), None).expect("etcd starts");
    let client = server.client();

    let deletes = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (deletes, stop) = (deletes.clone(), stop.clone());
        std::thread::spawn(move || {
            let _ = client.watch_locks(1, |event| {
                if event.get("type").and_then(|t| t.as_str()) == Some("DELETE") {
                    let prev = event.get("prev_kv").cloned().unwrap_or_default();
                    deletes.lock().unwrap().push((
                        etcd::text(&prev, "value"),
                        etcd::int(&prev, "create_revision"),
                    ));
                }
                !stop.load(Ordering::SeqCst)
            });
        })
    };

    // A 1 s TTL is raised to etcd's minimum silently.
    let (lease_a, ttl) = client.grant(1).unwrap();
    assert!(ttl >= 1, "granted TTL {ttl}");
    let Campaign::Won { revision: token_a } =
        client.campaign("job-1", "worker-0", lease_a).unwrap()
    else {
        panic!("a free key must be won")
    };
    // check-lease-before-write: held under its own token, not under another.
    assert!(client.holds("job-1", token_a).unwrap());
    assert!(!client.holds("job-1", token_a + 1).unwrap());
    assert!(!client.holds("job-2", token_a).unwrap());
    let (lease_b, _) = client.grant(2).unwrap();
    match client.campaign("job-1", "worker-1", lease_b).unwrap() {
        Campaign::Lost { holder } => assert_eq!(holder, "worker-0"),
        other => panic!("a held key must be lost, got {other:?}"),
    }
    assert!(client.keepalive(lease_a).unwrap() > 0);

    // The guarded write lands while the token's key exists, and is refused with another token.
    assert_eq!(
        client
            .guarded_put("job-1", "job-1", token_a, &format!("{token_a} a"))
            .unwrap(),
        Ok(None)
    );
    assert_eq!(
        client.guarded_put("job-1", "job-1", token_a, "x").unwrap(),
        Ok(Some(token_a))
    );
    assert_eq!(
        client
            .guarded_put("job-1", "job-1", token_a + 100, "y")
            .unwrap(),
        Err(Some(token_a))
    );

    // Revoking deletes the key: the next campaign wins with a higher revision, the old token's
    // guarded write fails, and the revoked lease's keepalive reports TTL 0.
    let revoked_at = client.revoke(lease_a).unwrap();
    assert!(
        !client.holds("job-1", token_a).unwrap(),
        "a revoked lease holds nothing"
    );
    let Campaign::Won { revision: token_b } =
        client.campaign("job-1", "worker-1", lease_b).unwrap()
    else {
        panic!("the released key must be won")
    };
    assert!(token_b > revoked_at && revoked_at > token_a);
    assert_eq!(
        client
            .guarded_put("job-1", "job-1", token_a, "stale")
            .unwrap(),
        Err(Some(token_b))
    );
    assert!(client.keepalive(lease_a).unwrap() <= 0);

    // The watch saw the delete, with the holder and its token.
    for _ in 0..100 {
        if !deletes.lock().unwrap().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        deletes.lock().unwrap()[0],
        ("worker-0".to_string(), token_a)
    );
    stop.store(true, Ordering::SeqCst);
    server.kill();
    watcher.join().unwrap();
}
