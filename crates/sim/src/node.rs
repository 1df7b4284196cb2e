//! What every simulated process shares: guarded task spawning (a panic is recorded in the
//! history before it takes the run down) and a request/reply endpoint with timeouts measured
//! by the process's own clock.

use std::{
    collections::BTreeMap,
    future::Future,
    panic::AssertUnwindSafe,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};

use fencesim_model::{history::EventKind, ms_to_ns};
use futures::{channel::oneshot, FutureExt, StreamExt};

use crate::{
    net,
    protocol::{Envelope, Msg},
    world::{lock, World},
};

/// Spawns `future` on the current node; if it panics, the panic is recorded on `node` and
/// re-raised, so the runner reports the seed as failed.
pub(crate) fn spawn_guarded<F>(world: &Arc<World>, node: &str, future: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    madsim::task::spawn(guarded(world.clone(), node.to_string(), future));
}

/// Runs `future`; if it panics, records the panic on `node` and re-raises it with the node's
/// name prepended.
pub(crate) async fn guarded<F>(world: Arc<World>, node: String, future: F)
where
    F: Future<Output = ()>,
{
    if let Err(payload) = AssertUnwindSafe(future).catch_unwind().await {
        let message = panic_message(&*payload);
        world.record(
            &node,
            EventKind::Panicked {
                message: message.clone(),
            },
        );
        std::panic::resume_unwind(Box::new(format!("{node}: {message}")));
    }
}

pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// A process's network endpoint for request/reply exchanges.
pub(crate) struct Endpoint {
    pub name: String,
    pub world: Arc<World>,
    pending: Mutex<BTreeMap<u64, oneshot::Sender<Msg>>>,
    next_req: AtomicU64,
}

impl Endpoint {
    /// Opens `name`'s mailbox and starts routing replies to their waiting callers.
    pub fn open(world: &Arc<World>, name: &str) -> Arc<Endpoint> {
        let mut mailbox = world.net.open_mailbox(name);
        let endpoint = Arc::new(Endpoint {
            name: name.to_string(),
            world: world.clone(),
            pending: Mutex::new(BTreeMap::new()),
            next_req: AtomicU64::new(1),
        });
        let router = endpoint.clone();
        spawn_guarded(world, name, async move {
            while let Some(envelope) = mailbox.next().await {
                if let Some(req) = envelope.msg.reply_to() {
                    if let Some(waiter) = lock(&router.pending).remove(&req) {
                        let _ = waiter.send(envelope.msg);
                    }
                }
            }
        });
        endpoint
    }

    /// Fire and forget.
    pub fn send(&self, to: &str, msg: Msg) {
        net::send(
            &self.world,
            Envelope {
                from: self.world.name(&self.name),
                to: self.world.name(to),
                msg,
            },
        );
    }

    /// Sends a request built from a fresh request id and waits for its reply, giving up after
    /// `timeout_ms` by this process's clock (`None`: no reply in time).
    pub async fn call(
        &self,
        to: &str,
        make: impl FnOnce(u64) -> Msg,
        timeout_ms: u64,
    ) -> Option<Msg> {
        let req = self.next_req.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        lock(&self.pending).insert(req, sender);
        self.send(to, make(req));
        let timeout = self
            .world
            .sleep_local(&self.name, ms_to_ns(timeout_ms as f64));
        futures::pin_mut!(timeout);
        let reply = futures::select_biased! {
            reply = receiver.fuse() => reply.ok(),
            _ = timeout.fuse() => None,
        };
        lock(&self.pending).remove(&req);
        reply
    }
}
