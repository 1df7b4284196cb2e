//! Pauses too frequent for one `[[faults.random]]` entry, folded so the simulator can run
//! them. An allocation-heavy JVM pauses thousands of times a minute (young collections of a
//! few ms), past the 600 an entry holds (`fencesim_scenario::limits::MAX_RATE_PER_MIN`). The
//! longest pauses, the ones that can outlast a renewal or a TTL, are kept as they are; the
//! others are folded, in log order, a fixed number at a time into one pause of their summed
//! length. The time paused in all is kept and the rate fits; the short pauses become fewer,
//! longer ones (tens of ms for a JVM pausing 4,500 times a minute: still below a lease's
//! timings, and longer rather than shorter, so a verdict errs towards a longer TTL). The
//! printed block says so in a note.

/// What folding did to a block's pauses.
#[derive(Clone, Debug, PartialEq)]
pub struct Fold {
    /// Pauses in the log.
    pub logged: usize,
    /// The longest ones, kept as they are.
    pub kept: usize,
    /// The shortest pause kept (ms): the folded ones are at most this long.
    pub threshold_ms: f64,
    /// The other pauses were folded this many at a time.
    pub group: usize,
}

impl Fold {
    /// What was done, in one phrase: `498 pauses folded: the longest 13 (from 8.76 ms) kept,
    /// the other 485 summed 38 at a time`.
    pub fn summary(&self) -> String {
        format!(
            "{} pauses folded: the longest {} (from {} ms) kept, the other {} summed {} at a \
             time",
            self.logged,
            self.kept,
            self.threshold_ms,
            self.logged - self.kept,
            self.group
        )
    }
}

/// `pauses` (ms, in log order) as at most `max_count` pauses: the longest `max_count / 2`
/// as they are, the rest folded `group` at a time (the last group may be smaller). `None`
/// when they fit already, or when fewer than 2 fit (nothing could be kept beside a fold).
pub fn fold(pauses: &[f64], max_count: usize) -> Option<(Vec<f64>, Fold)> {
    if pauses.len() <= max_count || max_count < 2 {
        return None;
    }
    let kept = max_count / 2;
    let mut by_length: Vec<usize> = (0..pauses.len()).collect();
    by_length.sort_by(|&a, &b| pauses[b].total_cmp(&pauses[a]).then(a.cmp(&b)));
    let mut keep = vec![false; pauses.len()];
    for &index in &by_length[..kept] {
        keep[index] = true;
    }
    let group = (pauses.len() - kept).div_ceil(max_count - kept);
    let mut out = Vec::with_capacity(max_count);
    let (mut sum, mut members) = (0.0, 0);
    for (index, &ms) in pauses.iter().enumerate() {
        if keep[index] {
            out.push(ms);
            continue;
        }
        sum += ms;
        members += 1;
        if members == group {
            out.push(sum);
            (sum, members) = (0.0, 0);
        }
    }
    if members > 0 {
        out.push(sum);
    }
    let fold = Fold {
        logged: pauses.len(),
        kept,
        threshold_ms: pauses[by_length[kept - 1]],
        group,
    };
    Some((out, fold))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_are_kept_the_rest_folded_in_log_order_keeping_the_time_paused() {
        // 10 pauses into at most 4: the 2 longest kept, the other 8 folded 4 at a time.
        let pauses = [1.0, 50.0, 2.0, 3.0, 4.0, 40.0, 5.0, 6.0, 7.0, 8.0];
        let (folded, done) = fold(&pauses, 4).unwrap();
        assert_eq!(
            folded,
            vec![50.0, 1.0 + 2.0 + 3.0 + 4.0, 40.0, 5.0 + 6.0 + 7.0 + 8.0]
        );
        assert_eq!(
            done,
            Fold {
                logged: 10,
                kept: 2,
                threshold_ms: 40.0,
                group: 4
            }
        );
        assert_eq!(folded.iter().sum::<f64>(), pauses.iter().sum::<f64>());
        // The last group may be smaller: 10 short pauses into 3 slots, 4 at a time.
        let (folded, done) = fold(&[1.0; 12], 5).unwrap();
        assert_eq!((done.kept, done.group), (2, 4));
        assert_eq!(folded, vec![1.0, 1.0, 4.0, 4.0, 2.0]);
        // Nothing to fold, or too little room to fold into.
        assert_eq!(fold(&pauses, 10), None);
        assert_eq!(fold(&pauses, 1), None);
    }
}
