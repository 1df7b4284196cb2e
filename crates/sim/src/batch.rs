//! The one batch engine: every sweep (`runner`'s `sweep`, `sweep_in_seed_order`, `sweep_all`),
//! explore's guided and exhaustive batches, the search bench and live mode's runs and
//! comparison run their jobs through it. A job is whatever a caller's `work` takes (a seed, a
//! candidate scenario and its seed, a schedule); `work` runs each job's seed with `run_seed`
//! (a fresh thread and runtime per seed) and reduces it on the pool's thread.
//!
//! Jobs run on [`threads`] threads (the one clamping rule) and each exactly once; results come
//! back in the jobs' order (or, for a caller that keeps nothing, as they finish), so what a
//! caller sees never depends on `jobs`.

use std::{
    collections::BTreeMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Mutex,
    },
};

use fencesim_scenario::limits::MAX_JOBS;

use crate::wait::lock;

/// The threads a batch of `count` jobs runs on when `jobs` are asked for: 1 to
/// [`MAX_JOBS`] (the range of every command's `--jobs` and the library's), and no more than
/// there are jobs.
pub fn threads(jobs: usize, count: usize) -> usize {
    jobs.clamp(1, MAX_JOBS).min(count.max(1))
}

/// `work` on every job of `items` on [`threads`] threads, handing each result to `done` with
/// the job's index as soon as it is ready (in any order), keeping nothing: the one thread pool.
pub fn run_unordered<T: Sync, R>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    done: &(dyn Fn(usize, R) + Sync),
) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads(jobs, items.len()) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else {
                    break;
                };
                done(index, work(item));
            });
        }
    });
}

/// `work` on every job of `items` as [`run_unordered`] does, handing the results to `consume`
/// in the jobs' order, each as soon as every earlier one has been handed on: only the results
/// waiting for an earlier job are kept (about `jobs` of them).
pub fn run_in_order<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
    consume: impl FnMut(R) + Send,
) {
    let state = Mutex::new(InOrder {
        next: 0,
        waiting: BTreeMap::new(),
        consume,
    });
    run_unordered(items, jobs, work, &|index, result| {
        lock(&state).add(index, result);
    });
    let state = state
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    debug_assert!(state.waiting.is_empty(), "every result was handed on");
}

/// Every job's result, in the jobs' order (see [`run_in_order`]).
pub fn run_batch<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let mut results = Vec::with_capacity(items.len());
    run_in_order(items, jobs, work, |result| results.push(result));
    results
}

/// Results finishing in any order, handed on in the jobs' order.
struct InOrder<R, F: FnMut(R)> {
    /// The index of the next result to hand on.
    next: usize,
    /// Finished results waiting for an earlier job.
    waiting: BTreeMap<usize, R>,
    consume: F,
}

impl<R, F: FnMut(R)> InOrder<R, F> {
    fn add(&mut self, index: usize, result: R) {
        self.waiting.insert(index, result);
        while let Some(result) = self.waiting.remove(&self.next) {
            (self.consume)(result);
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_whatever_the_threads() {
        // Later jobs finish first (they sleep less), so any order but the input's shows.
        let items: Vec<u64> = (0..37).collect();
        for jobs in [0, 1, 2, 5, 64, usize::MAX] {
            let squares = run_batch(&items, jobs, |x| {
                std::thread::sleep(std::time::Duration::from_micros(40 - x));
                x * x
            });
            assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(run_batch(&[] as &[u64], 4, |x| *x).is_empty());
    }

    #[test]
    fn every_job_runs_once_and_repeated_jobs_keep_their_places() {
        let items = [3_u64, 3, 1, 3];
        let runs = AtomicUsize::new(0);
        let out = run_batch(&items, 3, |x| {
            runs.fetch_add(1, Ordering::Relaxed);
            x + 1
        });
        assert_eq!(out, [4, 4, 2, 4]);
        assert_eq!(runs.into_inner(), items.len());
        let seen = Mutex::new(Vec::new());
        run_unordered(&items, 2, |x| *x, &|index, x| lock(&seen).push((index, x)));
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, [(0, 3), (1, 3), (2, 1), (3, 3)]);
    }

    #[test]
    fn jobs_are_clamped_once_to_one_through_max_jobs_and_the_batch() {
        assert_eq!(threads(0, 10), 1);
        assert_eq!(threads(4, 10), 4);
        assert_eq!(threads(4, 2), 2);
        assert_eq!(threads(4, 0), 1);
        assert_eq!(threads(usize::MAX, usize::MAX), MAX_JOBS);
        // The pool runs on no more threads than that: each names itself.
        for (jobs, count, want) in [(3, 40, 3), (8, 2, 2), (0, 5, 1)] {
            let items: Vec<u32> = (0..count).collect();
            let names = Mutex::new(std::collections::BTreeSet::new());
            run_unordered(
                &items,
                jobs,
                |_| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    lock(&names).insert(format!("{:?}", std::thread::current().id()));
                },
                &|_, ()| {},
            );
            let used = lock(&names).len();
            assert!(
                (1..=want).contains(&used),
                "jobs {jobs}, {count} items: {used}"
            );
        }
    }
}
