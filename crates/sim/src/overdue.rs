//! The order in which a node's local sleeps that fell due together end: the order they fell
//! due, never madsim's random pick among runnable tasks.
//!
//! A paused node (GC pause, VM suspend) runs none of its tasks; every sleep that fell due
//! during the pause ends at the resume, at one instant. A real process resumed with SIGCONT
//! finishes what each thread was doing in the order those things fell due: the main thread,
//! past its lease check and working when it was stopped, sends its write at once, while a
//! deadline that passed later in the pause is noticed after it (a ZooKeeper client's send
//! thread sees its read timeout, then its event thread delivers the event). madsim instead
//! picks the next runnable task at random, so the simulated worker sent or dropped its stale
//! write by a coin toss per seed. Here every `World::sleep_local` is listed with its node, its
//! target on the node's monotonic clock and the true time it is set to wake at; one that has
//! ended waits until no sleep of the same node that fell due before it (a smaller target, or
//! the same target registered earlier) is still unfinished. The live worker keeps the same
//! order (`crates/live/src/worker.rs`, `wait_turn`).

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    task::{Poll, Waker},
};

use crate::wait::lock;

/// A sleep's place in its node's order: (node, target on the node's monotonic clock in ns,
/// registration number). Keys of one node sort in the order their sleeps fall due.
type Key = (Arc<str>, u64, u64);

/// Every unfinished local sleep, by node.
#[derive(Default)]
pub(crate) struct Overdue {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Registration numbers, so equal targets keep the order they were registered in.
    next: u64,
    /// Each unfinished sleep → the true time (ns) it is set to wake at.
    sleeping: BTreeMap<Key, u64>,
    /// Sleeps that have ended and wait for an earlier one; woken whenever the list changes.
    waiting: Vec<Waker>,
}

impl Inner {
    fn changed(&mut self) {
        for waker in self.waiting.drain(..) {
            waker.wake();
        }
    }
}

impl Overdue {
    /// Lists a sleep of `node` until `target_mono_ns` by its clock, set to wake at true time
    /// `wake_ns`. Dropping the returned sleep (its task ended or was killed) unlists it.
    pub fn sleep(&self, node: Arc<str>, target_mono_ns: u64, wake_ns: u64) -> Sleep<'_> {
        let mut inner = lock(&self.inner);
        let key = (node, target_mono_ns, inner.next);
        inner.next += 1;
        inner.sleeping.insert(key.clone(), wake_ns);
        Sleep { overdue: self, key }
    }

    /// Unlists every sleep of `node` (it crashed: its tasks will never finish them).
    pub fn forget(&self, node: &str) {
        let mut inner = lock(&self.inner);
        inner.sleeping.retain(|key, _| &*key.0 != node);
        inner.changed();
    }
}

/// One listed sleep.
pub(crate) struct Sleep<'o> {
    overdue: &'o Overdue,
    key: Key,
}

impl Sleep<'_> {
    /// The sleep was set to wake at a later true time (the node's clock was frozen).
    pub fn reschedule(&self, wake_ns: u64) {
        let mut inner = lock(&self.overdue.inner);
        if let Some(wake) = inner.sleeping.get_mut(&self.key) {
            *wake = wake_ns;
        }
        inner.changed();
    }

    /// The sleep has ended at true time `now()`: waits until every sleep of the same node
    /// that fell due before it (and so is due by now) has finished, then unlists it.
    pub async fn finish(self, now: impl Fn() -> u64) {
        futures::future::poll_fn(|cx| {
            let mut inner = lock(&self.overdue.inner);
            let (node, _, _) = &self.key;
            let first = (node.clone(), 0, 0);
            let earlier_due = inner
                .sleeping
                .range(first..self.key.clone())
                .any(|(_, &wake_ns)| wake_ns <= now());
            if earlier_due {
                inner.waiting.push(cx.waker().clone());
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
        .await;
        // Dropping `self` unlists the sleep and lets the next one go.
    }
}

impl Drop for Sleep<'_> {
    fn drop(&mut self) {
        let mut inner = lock(&self.overdue.inner);
        inner.sleeping.remove(&self.key);
        inner.changed();
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    #[test]
    fn an_ended_sleep_waits_for_the_earlier_due_sleeps_of_its_node_only() {
        let overdue = Overdue::default();
        let worker: Arc<str> = Arc::from("worker-0");
        let now = || 13_000;
        // Both fell due during a pause that ended at 13 s: the write after the work at 3.4 s,
        // the deadline at 6 s. Another node's sleep fell due before both.
        let elsewhere = overdue.sleep(Arc::from("worker-1"), 1_000, 1_000);
        let write = overdue.sleep(worker.clone(), 3_400, 3_400);
        let deadline = overdue.sleep(worker.clone(), 6_000, 6_000);
        // The deadline's task ran first after the resume: it waits for the write, which goes.
        let mut deadline_turn = Box::pin(deadline.finish(now));
        assert!((&mut deadline_turn).now_or_never().is_none());
        assert!(write.finish(now).now_or_never().is_some());
        assert!(deadline_turn.now_or_never().is_some());
        drop(elsewhere);
        // An earlier sleep that is not yet due (its clock was frozen) holds nothing up.
        let frozen = overdue.sleep(worker.clone(), 500, 500);
        frozen.reschedule(20_000);
        assert!(overdue
            .sleep(worker.clone(), 900, 900)
            .finish(now)
            .now_or_never()
            .is_some());
        drop(frozen);
        // The same target: the sleep listed first goes first.
        let first = overdue.sleep(worker.clone(), 7_000, 7_000);
        let second = overdue.sleep(worker.clone(), 7_000, 7_000);
        let mut second_turn = Box::pin(second.finish(now));
        assert!((&mut second_turn).now_or_never().is_none());
        assert!(first.finish(now).now_or_never().is_some());
        assert!(second_turn.now_or_never().is_some());
        // A crashed node's sleeps hold up nothing.
        let _killed = overdue.sleep(worker.clone(), 100, 100);
        overdue.forget("worker-0");
        assert!(overdue
            .sleep(worker, 8_000, 8_000)
            .finish(now)
            .now_or_never()
            .is_some());
    }
}
