//! What every simulated process shares: guarded task spawning (a panic is recorded in the
//! history before it takes the run down) and a request/reply endpoint with timeouts measured
//! by the process's own clock.

use std::{
    collections::{BTreeMap, BTreeSet},
    future::Future,
    panic::AssertUnwindSafe,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};

use fencesim_model::{clock::NodeClock, history::EventKind, ms_to_ns};
use futures::{channel::oneshot, FutureExt, StreamExt};

use crate::{
    protocol::{Envelope, Msg},
    wait::{lock, Alarm},
    world::World,
};

/// Spawns `future` on the current node; if it panics, the panic is recorded on `node` and
/// the run is stopped, so the runner reports the seed as failed.
pub(crate) fn spawn_guarded<F>(world: &Arc<World>, node: &str, future: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    madsim::task::spawn(guarded(world.clone(), node.to_string(), future));
}

/// Runs `future`; if it panics, records the panic on `node` and stops the run with the
/// node's name prepended to the message (the runner reports the seed as panicked). The panic
/// goes no further: madsim would print a line with a build-machine path for it.
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
        world.stop(Some(format!("{node}: {message}")));
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
///
/// Timeouts cost no timer per request: every waiting call is listed with its deadline (by
/// the process's own monotonic clock), and one task per endpoint sleeps until the earliest
/// deadline and gives up the calls whose time has come (no task and no timer per
/// message where the harness does not need one).
pub(crate) struct Endpoint {
    pub world: Arc<World>,
    /// This process's name as the shared string messages carry (looked up once, not per
    /// message).
    me: Arc<str>,
    /// This process's clock (a copy: clocks are fixed for the run), so reading it is not a
    /// lookup by name.
    clock: NodeClock,
    pending: Mutex<Pending>,
    next_req: AtomicU64,
    /// Rung when a call's deadline is earlier than the one the timeout task sleeps until.
    alarm: Alarm,
}

/// The calls waiting for a reply.
#[derive(Default)]
struct Pending {
    /// Request id → where its reply goes.
    waiters: BTreeMap<u64, oneshot::Sender<Msg>>,
    /// (deadline on the process's monotonic clock in ns, request id), earliest first.
    deadlines: BTreeSet<(u64, u64)>,
    /// The deadline the timeout task sleeps until (`None`: it waits for a call).
    armed: Option<u64>,
}

impl Endpoint {
    /// Opens `name`'s mailbox and starts routing replies to their waiting callers, and the
    /// task that times them out.
    pub fn open(world: &Arc<World>, name: &str) -> Arc<Endpoint> {
        let mut mailbox = world.net.open_mailbox(name);
        let endpoint = Arc::new(Endpoint {
            world: world.clone(),
            me: world.name(name),
            clock: world.clock(name).clone(),
            pending: Mutex::new(Pending::default()),
            next_req: AtomicU64::new(1),
            alarm: Alarm::default(),
        });
        let router = endpoint.clone();
        spawn_guarded(world, name, async move {
            while let Some(envelope) = mailbox.next().await {
                if let Some(req) = envelope.msg.reply_to() {
                    let waiter = lock(&router.pending).waiters.remove(&req);
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(envelope.msg);
                    }
                }
            }
        });
        let timer = endpoint.clone();
        spawn_guarded(world, name, async move { timer.time_out_forever().await });
        endpoint
    }

    /// This process's monotonic clock now, in nanoseconds.
    pub fn mono_ns(&self) -> u64 {
        self.clock.mono_ns(self.world.now_ns())
    }

    /// Fire and forget.
    pub fn send(&self, to: &str, msg: Msg) {
        self.world.net.send(Envelope {
            from: self.me.clone(),
            to: self.world.name(to),
            msg,
        });
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
        let deadline = self.mono_ns() + ms_to_ns(timeout_ms as f64);
        {
            let mut pending = lock(&self.pending);
            pending.waiters.insert(req, sender);
            pending.deadlines.insert((deadline, req));
            if pending.armed.is_none_or(|armed| deadline < armed) {
                pending.armed = Some(deadline);
                drop(pending);
                self.alarm.ring();
            }
        }
        self.send(to, make(req));
        // The timeout task drops the sender at the deadline: `Canceled` is "no reply in time".
        let reply = receiver.await.ok();
        let mut pending = lock(&self.pending);
        pending.waiters.remove(&req);
        pending.deadlines.remove(&(deadline, req));
        reply
    }

    /// Gives up every call whose deadline has passed by this process's clock, then sleeps
    /// until the next deadline (re-checked after each wake-up, as `World::sleep_local` does,
    /// so a frozen or stepped clock moves it) or until a call with an earlier one arrives.
    async fn time_out_forever(&self) {
        let world = &self.world;
        let clock = &self.clock;
        loop {
            let now = world.now_ns();
            let mono = clock.mono_ns(now);
            let next = {
                let mut pending = lock(&self.pending);
                while let Some(&(deadline, req)) = pending.deadlines.first() {
                    if deadline > mono {
                        break;
                    }
                    pending.deadlines.pop_first();
                    // Dropping the sender wakes the call with `Canceled`.
                    pending.waiters.remove(&req);
                }
                let next = pending.deadlines.first().map(|&(deadline, _)| deadline);
                pending.armed = next;
                next
            };
            let wake_ns =
                next.map(|deadline| clock.true_time_until_mono(now, deadline).max(now + 1));
            self.alarm.sleep_until(world.time(), now, wake_ns).await;
        }
    }
}
