use super::*;
use crate::rng::stream;

const MS: u64 = 1_000_000;

fn service(source: TokenSource, scope: TokenScope, on_restart: OnRestart) -> LeaseService {
    LeaseService::new(
        LeaseConfig {
            ttl_ns: 100 * MS,
            lock_delay_ns: 0,
            election_timeout_ns: 10 * MS,
            token_source: source,
            token_scope: scope,
            on_restart,
            expiry_check_ns: 0,
            expired_by: ExpiredBy::Service,
            identity: HolderIdentity::Session,
            acquire: AcquireRule::CreateIfAbsent,
        },
        stream(1, "coordinator"),
    )
}

fn granted(outcome: Acquire) -> Lease {
    match outcome {
        Acquire::Granted(lease) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}

#[test]
fn single_holder_until_expiry_then_larger_token() {
    let mut s = service(
        TokenSource::DurableCounter,
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    let a = granted(s.acquire("job", "a", 0, None, 0, 0));
    assert_eq!(a.token, 1);
    assert!(matches!(
        s.acquire("job", "b", 0, None, 50 * MS, 0),
        Acquire::Denied(Denial::Held { .. })
    ));
    assert!(s.expire_due(99 * MS).is_empty());
    assert_eq!(s.expire_due(100 * MS).len(), 1);
    let b = granted(s.acquire("job", "b", 0, None, 100 * MS, 0));
    assert_eq!(b.token, 2);
    assert_eq!(
        s.renew("job", "a", 1, 101 * MS),
        Err(RenewRefusal::Superseded {
            holder: "b".into(),
            token: 2
        })
    );
}

#[test]
fn renew_moves_the_expiry() {
    let mut s = service(
        TokenSource::DurableCounter,
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    granted(s.acquire("job", "a", 0, None, 0, 0));
    let renewed = s.renew("job", "a", 1, 80 * MS).expect("the holder renews");
    assert_eq!(renewed.expires_ns, 180 * MS);
    assert!(
        s.expire_due(150 * MS).is_empty(),
        "renewed at 80 ms: held until 180 ms"
    );
    assert!(matches!(
        s.acquire("job", "b", 0, None, 150 * MS, 0),
        Acquire::Denied(Denial::Held { .. })
    ));
    assert_eq!(s.expire_due(180 * MS).len(), 1);
}

#[test]
fn an_overwriting_acquire_replaces_a_live_lease_and_a_create_is_refused() {
    let [mut create, mut overwrite] =
        [AcquireRule::CreateIfAbsent, AcquireRule::Overwrite].map(|rule| {
            let mut s = service(
                TokenSource::DurableCounter,
                TokenScope::PerResource,
                OnRestart::Drop,
            );
            s.config.acquire = rule;
            s
        });
    for s in [&mut create, &mut overwrite] {
        granted(s.acquire("job", "a", 0, None, 0, 0));
    }
    assert!(matches!(
        create.acquire("job", "b", 0, None, 10 * MS, 0),
        Acquire::Denied(Denial::Held { .. })
    ));
    let b = granted(overwrite.acquire("job", "b", 0, None, 10 * MS, 0));
    assert_eq!((b.holder.as_str(), b.token), ("b", 2));
    // The holder itself still re-acquires its own lease; only a contested acquire writes.
    assert!(matches!(
        overwrite.acquire("job", "b", 0, None, 20 * MS, 0),
        Acquire::AlreadyHeld(_)
    ));
}

#[test]
fn retried_acquire_by_holder_keeps_token() {
    let mut s = service(
        TokenSource::DurableCounter,
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    granted(s.acquire("job", "a", 0, None, 0, 0));
    match s.acquire("job", "a", 0, None, 10 * MS, 0) {
        Acquire::AlreadyHeld(lease) => {
            assert_eq!((lease.token, lease.expires_ns), (1, 110 * MS))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn volatile_counter_restarts_from_one() {
    let mut s = service(
        TokenSource::VolatileCounter,
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    granted(s.acquire("job", "a", 0, None, 0, 0));
    let effect = s.restart(5 * MS);
    assert!(effect.counters_lost);
    assert_eq!(effect.dropped.len(), 1);
    assert_eq!(granted(s.acquire("job", "b", 0, None, 6 * MS, 0)).token, 1);
}

#[test]
fn durable_counter_survives_restart_and_keep_extends() {
    let mut s = service(
        TokenSource::DurableCounter,
        TokenScope::PerResource,
        OnRestart::KeepAndExtend,
    );
    granted(s.acquire("job", "a", 0, None, 0, 0));
    let effect = s.restart(50 * MS);
    assert_eq!(effect.extended[0].expires_ns, 160 * MS);
    assert!(s.expire_due(159 * MS).is_empty());
    s.expire_due(160 * MS);
    assert_eq!(
        granted(s.acquire("job", "b", 0, None, 160 * MS, 0)).token,
        2
    );
}

#[test]
fn global_scope_shares_one_counter() {
    let mut s = service(
        TokenSource::DurableCounter,
        TokenScope::Global,
        OnRestart::Drop,
    );
    assert_eq!(granted(s.acquire("x", "a", 0, None, 0, 0)).token, 1);
    assert_eq!(granted(s.acquire("y", "b", 0, None, 0, 0)).token, 2);
}

#[test]
fn wrapping_counter_wraps_to_zero() {
    let mut s = service(
        TokenSource::WrappingCounter { bits: 2 },
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    let mut tokens = Vec::new();
    for i in 0..5 {
        let lease = granted(s.acquire("job", "a", 0, None, i * 200 * MS, 0));
        tokens.push(lease.token);
        s.release("job", "a", lease.token);
    }
    assert_eq!(tokens, vec![1, 2, 3, 0, 1]);
}

#[test]
fn wall_clock_tokens_follow_the_clock() {
    let mut s = service(
        TokenSource::WallClock,
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    let first = granted(s.acquire("job", "a", 0, None, 0, 5_000));
    s.release("job", "a", first.token);
    assert_eq!(
        granted(s.acquire("job", "a", 0, None, 1, 4_000)).token,
        4_000
    );
}

#[test]
fn lock_delay_blocks_reacquire_after_expiry() {
    let mut s = service(
        TokenSource::DurableCounter,
        TokenScope::PerResource,
        OnRestart::Drop,
    );
    s.config.lock_delay_ns = 15 * MS;
    granted(s.acquire("job", "a", 0, None, 0, 0));
    s.expire_due(100 * MS);
    assert_eq!(
        s.acquire("job", "b", 0, None, 110 * MS, 0),
        Acquire::Denied(Denial::LockDelay { until_ns: 115 * MS })
    );
    granted(s.acquire("job", "b", 0, None, 115 * MS, 0));
}

/// The default test service with `config` changed before it is built (the token source
/// is chosen at construction).
fn with(config: impl FnOnce(&mut LeaseConfig)) -> LeaseService {
    let mut c = service(
        TokenSource::DurableCounter,
        TokenScope::PerResource,
        OnRestart::KeepAndExtend,
    )
    .config;
    config(&mut c);
    LeaseService::new(c, stream(1, "coordinator"))
}

#[test]
fn expiry_checks_revoke_at_the_first_tick_after_expiry() {
    // etcd: a 100 ms lease, checks every 30 ms from phase 7 ms: ticks 7, 37, 67, 97, 127.
    let mut s = with(|c| c.expiry_check_ns = 30 * MS);
    s.set_check_phase(7 * MS);
    granted(s.acquire("job", "a", 0, None, 0, 0));
    assert_eq!(s.next_expiry_ns(), Some(127 * MS));
    // Expired but not yet revoked: nobody may renew it, nobody else may take it.
    assert_eq!(s.renew("job", "a", 1, 100 * MS), Err(RenewRefusal::NoLease));
    assert!(s.expire_due(126 * MS).is_empty());
    assert!(matches!(
        s.acquire("job", "b", 0, None, 126 * MS, 0),
        Acquire::Denied(Denial::Held { .. })
    ));
    assert_eq!(s.expire_due(127 * MS).len(), 1);
    granted(s.acquire("job", "b", 0, None, 127 * MS, 0));
}

#[test]
fn revision_tokens_count_deletes_too() {
    let mut s = with(|c| {
        c.token_source = TokenSource::Revision;
        c.token_scope = TokenScope::Global;
    });
    let a = granted(s.acquire("job", "a", 0, None, 0, 0));
    s.expire_due(100 * MS);
    let b = granted(s.acquire("job", "b", 0, None, 100 * MS, 0));
    s.release("job", "b", b.token);
    let c = granted(s.acquire("other", "c", 0, None, 100 * MS, 0));
    assert_eq!((a.token, b.token, c.token), (1, 3, 5));
}

#[test]
fn data_puts_move_a_store_wide_revision_only() {
    let mut s = with(|c| {
        c.token_source = TokenSource::Revision;
        c.token_scope = TokenScope::Global;
    });
    let a = granted(s.acquire("job", "a", 0, None, 0, 0));
    s.data_put();
    s.data_put();
    s.expire_due(100 * MS);
    let b = granted(s.acquire("job", "b", 0, None, 100 * MS, 0));
    assert_eq!((a.token, b.token), (1, 5));
    // A per-resource counter (ZooKeeper's sequence numbers) does not see data writes.
    let mut s = with(|c| c.token_source = TokenSource::Revision);
    granted(s.acquire("job", "a", 0, None, 0, 0));
    s.data_put();
    s.expire_due(100 * MS);
    assert_eq!(
        granted(s.acquire("job", "b", 0, None, 100 * MS, 0)).token,
        3
    );
}

#[test]
fn lost_attempts_move_a_lock_directorys_cversion_only() {
    // ZooKeeper (per-resource revision): each lost attempt creates and deletes a child.
    let mut s = with(|c| c.token_source = TokenSource::Revision);
    let a = granted(s.acquire("job", "a", 0, None, 0, 0));
    for at in [10, 20, 30] {
        assert!(matches!(
            s.acquire("job", "b", 0, None, at * MS, 0),
            Acquire::Denied(Denial::Held { .. })
        ));
    }
    // Another scope's directory is not touched.
    let other = granted(s.acquire("other", "c", 0, None, 40 * MS, 0));
    s.expire_due(100 * MS);
    let b = granted(s.acquire("job", "b", 0, None, 100 * MS, 0));
    // 1, then three attempts (+2 each), the expiry's delete (+1), the grant (+1).
    assert_eq!((a.token, other.token, b.token), (1, 1, 9));
    // etcd (store-wide revision): a lost campaign is a failed compare and writes nothing.
    let mut s = with(|c| {
        c.token_source = TokenSource::Revision;
        c.token_scope = TokenScope::Global;
    });
    granted(s.acquire("job", "a", 0, None, 0, 0));
    assert!(matches!(
        s.acquire("job", "b", 0, None, 10 * MS, 0),
        Acquire::Denied(Denial::Held { .. })
    ));
    s.expire_due(100 * MS);
    assert_eq!(
        granted(s.acquire("job", "b", 0, None, 100 * MS, 0)).token,
        3
    );
}

#[test]
fn a_new_session_of_the_same_holder_waits_for_the_old_lease() {
    let mut s = with(|_| {});
    granted(s.acquire("job", "a", 0, None, 0, 0));
    assert!(matches!(
        s.acquire("job", "a", 1, None, 10 * MS, 0),
        Acquire::Denied(Denial::Held { .. })
    ));
    s.expire_due(100 * MS);
    assert_eq!(
        granted(s.acquire("job", "a", 1, None, 100 * MS, 0)).token,
        2
    );
}

#[test]
fn a_named_holder_resumes_its_record_after_a_restart() {
    let mut s = with(|c| c.identity = HolderIdentity::Name);
    granted(s.acquire("job", "a", 0, None, 0, 0));
    match s.acquire("job", "a", 1, None, 10 * MS, 0) {
        Acquire::AlreadyHeld(lease) => assert_eq!((lease.token, lease.session), (1, 1)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn candidates_take_over_by_compare_and_swap_and_the_server_never_expires() {
    let mut s = with(|c| {
        c.expired_by = ExpiredBy::Candidate;
        c.identity = HolderIdentity::Name;
    });
    assert_eq!(
        s.acquire("job", "a", 0, Some(1), 0, 0),
        Acquire::Denied(Denial::Conflict { version: 0 })
    );
    granted(s.acquire("job", "a", 0, Some(0), 0, 0));
    assert!(s.expire_due(10_000 * MS).is_empty());
    assert_eq!(s.next_expiry_ns(), None);
    // Renewal long after the nominal expiry still works: nobody took over.
    assert!(s.renew("job", "a", 1, 5_000 * MS).is_ok());
    let seen = s.record("job");
    assert_eq!((seen.holder.as_deref(), seen.version), (Some("a"), 2));
    match s.acquire("job", "b", 0, Some(2), 6_000 * MS, 0) {
        Acquire::TookOver { previous, lease } => {
            assert_eq!((previous.holder.as_str(), previous.token), ("a", 1));
            assert_eq!((lease.holder.as_str(), lease.token), ("b", 2));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.renew("job", "a", 1, 6_001 * MS),
        Err(RenewRefusal::Superseded { .. })
    ));
}

#[test]
fn a_candidate_waits_a_lease_duration_by_its_own_clock_since_the_last_change() {
    let record = |holder: Option<&str>, version| RecordView {
        holder: holder.map(str::to_string),
        version,
    };
    let mut seen = None;
    let d = 15 * MS;
    assert!(Observation::may_acquire(
        &mut seen,
        &record(None, 0),
        "b",
        0,
        d
    ));
    assert!(!Observation::may_acquire(
        &mut seen,
        &record(Some("a"), 1),
        "b",
        MS,
        d
    ));
    assert!(!Observation::may_acquire(
        &mut seen,
        &record(Some("a"), 1),
        "b",
        15 * MS,
        d
    ));
    // A renewal (new version) restarts the wait.
    assert!(!Observation::may_acquire(
        &mut seen,
        &record(Some("a"), 2),
        "b",
        10 * MS,
        d
    ));
    assert!(!Observation::may_acquire(
        &mut seen,
        &record(Some("a"), 2),
        "b",
        24 * MS,
        d
    ));
    assert!(Observation::may_acquire(
        &mut seen,
        &record(Some("a"), 2),
        "b",
        25 * MS,
        d
    ));
    // Its own record (same identity, e.g. after a restart) is its to renew at once.
    let mut fresh = None;
    assert!(Observation::may_acquire(
        &mut fresh,
        &record(Some("b"), 9),
        "b",
        0,
        d
    ));
}
