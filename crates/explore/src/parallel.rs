//! Running a batch of candidates on `jobs` threads with the results in the batch's order, so
//! that a search built a batch at a time (guided, exhaustive) never depends on `jobs`.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Mutex,
};

/// `run` over `items` on up to `jobs` threads (each item once); the results in `items`' order.
pub(crate) fn in_order<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    run: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        let threads = jobs
            .clamp(1, fencesim_scenario::limits::MAX_JOBS)
            .min(items.len());
        for _ in 0..threads {
            scope.spawn(|| loop {
                let slot = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(slot) else {
                    break;
                };
                let result = run(item);
                *results[slot].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            });
        }
    });
    results
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .expect("every item ran")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_order_whatever_the_threads() {
        let items: Vec<u64> = (0..37).collect();
        for jobs in [1, 2, 5, 64] {
            let squares = super::in_order(&items, jobs, |x| x * x);
            assert_eq!(squares, items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(super::in_order(&[] as &[u64], 4, |x| *x).is_empty());
    }
}
