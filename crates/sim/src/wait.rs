//! What simulated tasks wait with: the run's true time (`TrueTime`: read it, sleep on it
//! exactly), an `Alarm` that wakes a sleeper early, and a mutex lock that ignores poisoning.
//! A leaf: the world, the network and the nodes build on it.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Mutex, MutexGuard,
    },
    task::Poll,
};

use futures::{task::AtomicWaker, FutureExt};
use madsim::time::{Instant, TimeHandle};

/// Locks a mutex, ignoring poisoning: a panicking node is reported as a failed seed by the
/// runner, and the history recorded up to the panic is still wanted.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// True time: madsim's virtual time since the run began. Kept with the runtime's clock handle
/// so reading the time is not a thread-local lookup each time.
#[derive(Clone)]
pub(crate) struct TrueTime {
    time: TimeHandle,
    start: Instant,
}

impl TrueTime {
    /// The clock of the current runtime, starting now.
    pub fn new() -> Self {
        let time = TimeHandle::current();
        let start = time.now_instant();
        TrueTime { time, start }
    }

    /// True time since the run began, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        self.time
            .now_instant()
            .duration_since(self.start)
            .as_nanos() as u64
    }

    /// Sleeps exactly `duration` of true time (see [`sleep_exact`]), on this clock.
    pub async fn sleep_exact(&self, duration: std::time::Duration) {
        let deadline = self.time.now_instant() + duration;
        let sleep = self.time.sleep(duration);
        futures::pin_mut!(sleep);
        sleep.as_mut().reset(deadline);
        sleep.await;
    }
}

/// What a task that sleeps until its next deadline (the net carrier, an endpoint's timeout
/// task) waits on besides that deadline: rung when a new deadline is earlier than the one it
/// sleeps until. One alarm and one timer per sleeping task, never one per message.
#[derive(Default)]
pub(crate) struct Alarm {
    rung: AtomicBool,
    waker: AtomicWaker,
}

impl Alarm {
    /// Wakes the sleeper early.
    pub fn ring(&self) {
        self.rung.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Sleeps until true time `wake_ns` (`None`: no deadline) or until the alarm rings,
    /// whichever is first. `now` is the true time the caller read.
    pub async fn sleep_until(&self, time: &TrueTime, now: u64, wake_ns: Option<u64>) {
        let rung = futures::future::poll_fn(|cx| {
            self.waker.register(cx.waker());
            if self.rung.swap(false, Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .fuse();
        match wake_ns {
            Some(wake_ns) => {
                let sleep = time
                    .sleep_exact(std::time::Duration::from_nanos(wake_ns.saturating_sub(now)))
                    .fuse();
                futures::pin_mut!(sleep, rung);
                futures::select_biased! {
                    _ = sleep => {},
                    _ = rung => {},
                }
            }
            None => rung.await,
        }
    }
}

/// Sleeps exactly `duration` of true time. madsim's `sleep` rounds every wait up to at least
/// 1 ms (to mimic tokio), which would turn a 0.5 ms intra-DC hop into 1 ms; resetting the
/// deadline of its `Sleep` future has no such floor.
pub(crate) async fn sleep_exact(duration: std::time::Duration) {
    let deadline = virtual_now() + duration;
    let sleep = madsim::time::sleep(duration);
    futures::pin_mut!(sleep);
    sleep.as_mut().reset(deadline);
    sleep.await;
}

/// madsim's virtual time. (Under `--cfg madsim`, `Instant::now` is also virtual, but it is
/// banned workspace-wide so that real time cannot creep into simulated code unnoticed.)
fn virtual_now() -> Instant {
    TimeHandle::current().now_instant()
}
