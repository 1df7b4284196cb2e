//! The coordinator process: serves the lease service over the network, expires leases by
//! its own monotonic clock, and applies restart semantics when it comes back. When the
//! store checks writes against the lease state (`same-store-txn`) it hosts the store too.

use std::sync::Arc;

use fencesim_model::{
    history::EventKind,
    lease::{Acquire, Lease, RenewRefusal},
    nodes::COORDINATOR,
    rng::stream,
    Scope, Token, NS_PER_MS,
};
use futures::StreamExt;
use rand::Rng as _;

use crate::{
    expiry,
    node::spawn_guarded,
    protocol::{Envelope, Msg},
    storage,
    wait::lock,
    world::World,
};

pub(crate) async fn run(world: Arc<World>) {
    let me = COORDINATOR;
    let incarnation = world.start_incarnation(me);
    if incarnation > 0 {
        elect(&world, incarnation).await;
        restarted(&world);
    }
    set_check_phase(&world, incarnation);
    let mut mailbox = world.net.open_mailbox(me);
    let timer_world = world.clone();
    spawn_guarded(&world, me, async move { expiry_timer(timer_world).await });
    while let Some(envelope) = mailbox.next().await {
        handle(&world, envelope);
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// Where this process's expiry checks fall relative to the grants: etcd's revoke loop and
/// ZooKeeper's expiry buckets start with the process, so their phase is drawn per
/// incarnation (from its own stream), spreading revocations over the check interval.
fn set_check_phase(world: &Arc<World>, incarnation: u32) {
    let check_ns = lock(&world.lease).config().expiry_check_ns;
    if check_ns == 0 {
        return;
    }
    let mut rng = stream(
        world.seed,
        &format!("{COORDINATOR}/incarnation-{incarnation}/expiry-checks"),
    );
    let phase_ns = world.mono_ns(COORDINATOR) + rng.gen_range(0..check_ns);
    lock(&world.lease).set_check_phase(phase_ns);
}

/// A restarted raft member (etcd) serves only once it has won an election: it waits a
/// duration drawn from `[restart_election_ms, 2 × restart_election_ms)` (its own stream, per
/// incarnation) with its mailbox closed, so requests meanwhile are lost and time out, and its
/// leases are neither expired nor re-extended until it leads.
async fn elect(world: &Arc<World>, incarnation: u32) {
    let election_ms = world.scenario.lease.restart_election_ms;
    if election_ms == 0 {
        return;
    }
    let mut rng = stream(
        world.seed,
        &format!("{COORDINATOR}/incarnation-{incarnation}/election"),
    );
    let election_ns = fencesim_model::whole_ms_to_ns(election_ms);
    let wait_ns = election_ns + rng.gen_range(0..election_ns);
    world.sleep_local(COORDINATOR, wait_ns).await;
}

fn restarted(world: &Arc<World>) {
    let now = world.mono_ns(COORDINATOR);
    let effect = lock(&world.lease).restart(now);
    if effect.counters_lost {
        world.record(COORDINATOR, EventKind::CountersLost);
    }
    for lease in effect.dropped {
        world.record(
            COORDINATOR,
            EventKind::Dropped {
                scope: lease.scope,
                holder: lease.holder,
                token: lease.token,
            },
        );
    }
    for lease in effect.extended {
        world.record(
            COORDINATOR,
            EventKind::Extended {
                scope: lease.scope,
                holder: lease.holder,
                token: lease.token,
                expires_mono_ms: ms(lease.expires_ns),
            },
        );
    }
}

/// Wakes at the next revocation (expiry, rounded up to the next expiry check). New grants
/// always expire later than `now + ttl`, so when no lease exists, sleeping half a TTL never
/// oversleeps one.
async fn expiry_timer(world: Arc<World>) {
    let idle_ns = (lock(&world.lease).config().ttl_ns / 2).max(1_000);
    loop {
        let now = world.mono_ns(COORDINATOR);
        let next = lock(&world.lease).next_expiry_ns().unwrap_or(now + idle_ns);
        world
            .sleep_local(COORDINATOR, next.saturating_sub(now).max(1_000))
            .await;
        expiry::expire_due(&world);
    }
}

fn reply(world: &Arc<World>, to: &Arc<str>, msg: Msg) {
    world.net.send(Envelope {
        from: world.name(COORDINATOR),
        to: to.clone(),
        msg,
    });
}

fn granted(world: &Arc<World>, lease: Lease) -> u64 {
    world.record(
        COORDINATOR,
        EventKind::Granted {
            scope: lease.scope,
            holder: lease.holder,
            token: lease.token,
            expires_mono_ms: ms(lease.expires_ns),
        },
    );
    lease.token
}

fn handle(world: &Arc<World>, envelope: Envelope) {
    expiry::expire_due(world);
    let sender = envelope.from.clone();
    let from: &str = &sender;
    match envelope.msg {
        Msg::Acquire {
            req,
            scope,
            session,
            expected,
        } => {
            let token = acquire(world, from, scope, session, expected);
            reply(world, &sender, Msg::AcquireReply { req, token });
        }
        Msg::Get { req, scope } => {
            let record = lock(&world.lease).record(&scope);
            reply(world, &sender, Msg::GetReply { req, record });
        }
        Msg::Renew { req, scope, token } => {
            let (ok, reason) = renew(world, from, scope, token);
            reply(world, &sender, Msg::RenewReply { req, ok, reason });
        }
        Msg::Release { req, scope, token } => {
            let released = lock(&world.lease).release(&scope, from, token);
            if let Some(lease) = released {
                world.record(
                    COORDINATOR,
                    EventKind::Released {
                        scope,
                        holder: lease.holder,
                        token: lease.token,
                    },
                );
            }
            reply(world, &sender, Msg::ReleaseReply { req });
        }
        Msg::Check { req, scope, token } => {
            let holds = lock(&world.lease)
                .lease(&scope)
                .is_some_and(|lease| lease.holder == from && lease.token == token);
            reply(world, &sender, Msg::CheckReply { req, holds });
        }
        msg @ (Msg::Write { .. } | Msg::ReadToken { .. } | Msg::Fence { .. }) => {
            storage::handle(world, COORDINATOR, Envelope { msg, ..envelope });
        }
        other => panic!("coordinator received an unexpected message: {other:?}"),
    }
}

/// An acquire: the token granted (or the lease already held), `None` when denied.
fn acquire(
    world: &Arc<World>,
    from: &str,
    scope: Scope,
    session: u64,
    expected: Option<u64>,
) -> Option<Token> {
    let now = world.mono_ns(COORDINATOR);
    let wall_ms = world.wall_ms(COORDINATOR);
    let outcome = lock(&world.lease).acquire(&scope, from, session, expected, now, wall_ms);
    match outcome {
        Acquire::Granted(lease) => Some(granted(world, lease)),
        Acquire::TookOver { previous, lease } => {
            world.record(
                COORDINATOR,
                EventKind::TakenOver {
                    scope: previous.scope,
                    holder: previous.holder,
                    token: previous.token,
                    by: lease.holder.clone(),
                },
            );
            Some(granted(world, lease))
        }
        Acquire::AlreadyHeld(lease) => {
            world.record(
                COORDINATOR,
                EventKind::Renewed {
                    scope,
                    holder: lease.holder,
                    token: lease.token,
                },
            );
            Some(lease.token)
        }
        // Denials are not recorded: waiting workers retry often and the grant that
        // ends the wait is what matters.
        Acquire::Denied(_) => None,
    }
}

/// A renewal: whether it was accepted, and the refusal's reason.
fn renew(world: &Arc<World>, from: &str, scope: Scope, token: Token) -> (bool, String) {
    let now = world.mono_ns(COORDINATOR);
    let outcome = lock(&world.lease).renew(&scope, from, token, now);
    match outcome {
        Ok(_) => {
            world.record(
                COORDINATOR,
                EventKind::Renewed {
                    scope,
                    holder: from.to_string(),
                    token,
                },
            );
            (true, String::new())
        }
        Err(refusal) => {
            let reason = match refusal {
                RenewRefusal::NoLease => "no lease".to_string(),
                RenewRefusal::Superseded { holder, token } => {
                    format!("held by {holder} with token {token}")
                }
            };
            world.record(
                COORDINATOR,
                EventKind::Refused {
                    scope,
                    holder: from.to_string(),
                    token: Some(token),
                    reason: reason.clone(),
                },
            );
            (false, reason)
        }
    }
}
