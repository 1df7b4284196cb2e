//! The storage process: presents each write to the configured [`Fence`] and records what it
//! decided. Hosted on the `storage` node, or on the coordinator when the fence checks the
//! lease state itself.
//!
//! [`Fence`]: fencesim_model::fence::Fence

use std::sync::Arc;

use fencesim_model::{
    fence::{Verdict, WriteRequest},
    history::{EffectVia, EventKind},
    lease::LeaseView,
    nodes::{COORDINATOR, STORAGE},
};
use fencesim_scenario::Durability;
use futures::StreamExt;

use crate::{
    expiry,
    protocol::{Envelope, Msg},
    wait::lock,
    world::World,
};

pub(crate) async fn run(world: Arc<World>) {
    if world.start_incarnation(STORAGE) > 0 {
        lock(&world.store).restart();
        if world.scenario.storage.max_token == Durability::Volatile {
            world.record(STORAGE, EventKind::StorageStateLost);
        }
    }
    let mut mailbox = world.net.open_mailbox(STORAGE);
    while let Some(envelope) = mailbox.next().await {
        handle(&world, STORAGE, envelope);
    }
}

/// Handles a storage request on `host` (the storage node, or the coordinator).
pub(crate) fn handle(world: &Arc<World>, host: &str, envelope: Envelope) {
    let from = envelope.from;
    let answer = match envelope.msg {
        Msg::Write {
            req,
            request,
            outbox,
        } => write(world, host, req, request, outbox),
        Msg::ReadToken { req, op, resource } => {
            let stored = lock(&world.store).read_token(&resource);
            world.record(
                host,
                EventKind::TokenRead {
                    op,
                    resource,
                    writer: from.to_string(),
                    stored,
                },
            );
            Msg::ReadTokenReply { req, stored }
        }
        Msg::Fence {
            req,
            resource,
            token,
        } => {
            let verdict = lock(&world.store).raise_fence(&resource, token);
            world.record(
                host,
                EventKind::Fence {
                    resource,
                    writer: from.to_string(),
                    token,
                    verdict: verdict.clone(),
                },
            );
            Msg::FenceReply { req, verdict }
        }
        other => panic!("storage received an unexpected message: {other:?}"),
    };
    world.net.send(Envelope {
        from: world.name(host),
        to: from,
        msg: answer,
    });
}

/// A write: recorded as presented, judged by the store (with the lease state, for a store
/// that checks it), recorded with its verdict and, for an outbox write, its side effect.
fn write(world: &Arc<World>, host: &str, req: u64, request: WriteRequest, outbox: bool) -> Msg {
    world.record(
        host,
        EventKind::WritePresented {
            op: request.op,
            resource: request.resource.clone(),
            lease_scope: request.lease_scope.clone(),
            writer: request.writer.clone(),
            token: request.token,
        },
    );
    let verdict = judge(world, host, &request);
    world.record(host, verdict_event(&request, &verdict));
    if outbox && verdict.is_accepted() {
        // The effect was committed with the write; the relay delivers it from here.
        world.record(
            host,
            EventKind::SideEffect {
                op: request.op,
                resource: request.resource,
                lease_scope: request.lease_scope,
                worker: request.writer,
                token: request.token,
                via: EffectVia::Outbox,
            },
        );
    }
    Msg::WriteReply { req, verdict }
}

/// The store's verdict on a write.
fn judge(world: &Arc<World>, host: &str, request: &WriteRequest) -> Verdict {
    let mut store = lock(&world.store);
    if store.checks_lease_state() {
        assert_eq!(
            host, COORDINATOR,
            "a lease-checking store must live with the lease service"
        );
        expiry::expire_due(world);
        let mut lease = lock(&world.lease);
        let verdict = store.write(request, Some(&*lease as &dyn LeaseView));
        if verdict.is_accepted() {
            lease.data_put();
        }
        verdict
    } else {
        store.write(request, None)
    }
}

/// The history event that records `verdict` on `request`.
fn verdict_event(request: &WriteRequest, verdict: &Verdict) -> EventKind {
    match verdict {
        Verdict::Accepted { previous } => EventKind::WriteAccepted {
            op: request.op,
            resource: request.resource.clone(),
            lease_scope: request.lease_scope.clone(),
            writer: request.writer.clone(),
            token: request.token,
            previous: *previous,
        },
        Verdict::Rejected { accepted, reason } => EventKind::WriteRejected {
            op: request.op,
            resource: request.resource.clone(),
            lease_scope: request.lease_scope.clone(),
            writer: request.writer.clone(),
            token: request.token,
            accepted: *accepted,
            reason: reason.clone(),
        },
    }
}
